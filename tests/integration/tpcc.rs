//! `driver: tpcc` against the real PostgreSQL and pgbench: a server the test starts on
//! loopback, loaded at one warehouse and run for a few seconds. The database is read
//! here independently of fathom: its rows after the run, TPC-C's consistency
//! conditions 1 to 4, and its new orders against pgbench's own transaction log.

use crate::common::servers::{self, Postgres};
use crate::common::{Scratch, ops, text};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// One value of `sql` against `dsn`.
fn query(dsn: &str, sql: &str) -> String {
    let out = std::process::Command::new("psql").args(["-X", "-q", "-A", "-t", "-d", dsn, "-c", sql]).output().unwrap();
    assert!(out.status.success(), "{sql}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A server of the test's own with an empty database `tpcc`, and that database's dsn.
fn empty_database(s: &Scratch) -> (Postgres, String) {
    let pg = Postgres::start(&s.dir.join("pg"), servers::free_port());
    query(&pg.dsn("postgres"), "CREATE DATABASE tpcc");
    let dsn = pg.dsn("tpcc");
    (pg, dsn)
}

fn count(dsn: &str, sql: &str) -> i64 {
    query(dsn, sql).parse().unwrap()
}

/// Transactions per script number in the pgbench log directory `dir`, every line.
fn logged(dir: &Path) -> [i64; 5] {
    let mut per = [0; 5];
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        for line in std::fs::read_to_string(entry.path()).unwrap().lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            assert!(f[2].parse::<u64>().is_ok(), "a transaction that did not complete: {line}");
            per[f[3].parse::<usize>().unwrap()] += 1;
        }
    }
    per
}

/// TPC-C's consistency conditions 1 to 4, each a count of what breaks it.
fn conditions(dsn: &str) -> [i64; 4] {
    [
        "SELECT count(*) FROM warehouse WHERE w_ytd <> (SELECT sum(d_ytd) FROM district WHERE d_w_id = w_id)",
        "SELECT count(*) FROM district WHERE d_next_o_id - 1 <> (SELECT max(o_id) FROM orders WHERE o_w_id = d_w_id \
         AND o_d_id = d_id) OR d_next_o_id - 1 <> (SELECT max(no_o_id) FROM new_order WHERE no_w_id = d_w_id AND \
         no_d_id = d_id)",
        "SELECT count(*) FROM (SELECT 1 FROM new_order GROUP BY no_w_id, no_d_id \
         HAVING max(no_o_id) - min(no_o_id) + 1 <> count(*)) broken",
        "SELECT (SELECT sum(o_ol_cnt) FROM orders) - (SELECT count(*) FROM order_line)",
    ]
    .map(|sql| count(dsn, sql))
}

/// A TPC-C run is read by its NOPM first (`nopm`): its headline and the run list's; and
/// its rate over time is a line per transaction type, never their sum (IO's reads and
/// writes, the report's own test, share one).
fn read_in_its_own_terms(s: &Scratch, show: &serde_json::Value, nopm: f64) {
    // the run is read by its NOPM first: its headline, and the run list's
    let head = &show["headline"];
    assert_eq!((head["label"].as_str(), head["value"].as_f64()), (Some("NOPM"), Some(nopm)), "{head}");
    let runs = String::from_utf8_lossy(&s.run(&["runs"]).stdout).to_string();
    assert!(runs.contains(" NOPM from ") && runs.contains(" TPM (w1)"), "{runs}");
    let page = s.dir.join("tpcc.html");
    let out = s.run(&["report", "1", "-o", page.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    let at = html.find("<svg id=\"ts-iops\"").unwrap();
    let rate = &html[at..at + html[at..].find("</svg>").unwrap()];
    for op in ["new-order", "payment", "delivery", "order-status", "stock-level"] {
        assert!(rate.contains(&format!("data-name=\"w1 {op}\"")), "{op}: {rate}");
    }
    assert!(!rate.contains("data-name=\"w1\""), "a line summing the types: {rate}");
}

/// Two TPC-C runs compared in TPC-C's terms: NOPM against NOPM (one figure a run, said
/// so), each transaction type's rate in TPS, no MB/s rows, a chart line per type.
fn compared_in_its_own_terms(s: &Scratch) {
    let out = s.run(&["compare", "1", "2", "--json"]);
    assert!(out.status.success(), "{}", text(&out));
    let cmp: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = cmp["rows"].as_array().unwrap();
    let metrics: std::collections::BTreeSet<&str> = rows.iter().map(|r| r["metric"].as_str().unwrap()).collect();
    assert_eq!(metrics.into_iter().collect::<Vec<_>>(), ["p50_us", "p99_9_us", "p99_us", "tps"], "{cmp}");
    let table = String::from_utf8_lossy(&s.run(&["compare", "1", "2"]).stdout).to_string();
    assert!(table.contains("run 2 against run 1: w1 ") && table.contains(" NOPM -> "), "{table}");
    assert!(table.contains("no noise to judge it by") && !table.contains("IOPS"), "{table}");
    let page = s.dir.join("compare.html");
    assert!(s.run(&["compare", "1", "2", "-o", page.to_str().unwrap()]).status.success());
    let html = std::fs::read_to_string(&page).unwrap();
    for op in ["new-order", "payment", "delivery", "order-status", "stock-level"] {
        assert!(html.contains(&format!("data-name=\"run 2: w1 {op}\"")), "{op}");
    }
    // its rate chart is of transactions
    assert!(html.contains("TPS: the whole run") && !html.contains("IOPS"), "a transaction's rate called IOPS");
}

/// The loaded warehouse of `dsn` run again with `reuse`, which says so and loads nothing,
/// under `isolation: serializable`: 4 clients with `home: random` on one warehouse meet on
/// its district rows, so serialization failures are retried and counted per transaction
/// type, and every client runs to the end.
fn reused_serializable(s: &Scratch, path: &Path, dsn: &str) {
    let dsn = format!("dsn={dsn}");
    let sets = [&dsn, "w1.reuse=true", "w1.clients=4", "w1.home=random", "w1.isolation=serializable", "w1.duration=5s"];
    let mut args = vec!["run", path.to_str().unwrap()];
    args.extend(sets.iter().flat_map(|set| ["--set", set]));
    let again = s.run(&args);
    assert!(again.status.success(), "{}", text(&again));
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(said.contains("reusing the TPC-C database of 1 warehouse") && !said.contains("1 warehouses"), "{said}");
    let show = s.show_json();
    let events = show["events"].as_array().unwrap();
    let tpcc = events.iter().find(|e| e["kind"] == "tpcc").unwrap_or_else(|| panic!("{events:?}"));
    let detail = tpcc["detail"].as_str().unwrap();
    let retries: u64 = detail.split("; retries ").nth(1).and_then(|r| r.split(',').next()).unwrap().parse().unwrap();
    assert!(retries > 0, "no serialization failure among 4 clients on one warehouse: {detail}");
    // each type with retries says its own count
    assert!(detail.contains(" retries, ") && detail.contains(" failed)"), "{detail}");
    // pgbench ran every client to the end: no client aborted; the timeline names tpcc,
    // not the pgbench that drives it
    assert!(events.iter().all(|e| e["kind"] != "pgbench"), "{events:?}");
    let run = show["run"]["id"].as_i64().unwrap();
    let stderr = std::fs::read_to_string(s.dir.join(format!("results/runs/{run}/w1.pgbench.stderr"))).unwrap();
    assert!(!stderr.contains("aborted"), "{stderr}");
}

#[test]
fn a_warehouse_is_loaded_run_and_consistent() {
    let s = Scratch::new("tpcc-dsn");
    let (_pg, dsn) = empty_database(&s);
    let path = s.scenario(
        "name: oltp\ndescription: one warehouse\n\
         workloads:\n  w1: {driver: tpcc, warehouses: 1, clients: 2, mix: spec, rate: 200, duration: 4s}\n",
    );
    let out = s.run(&["run", path.to_str().unwrap(), "--set", &format!("dsn={dsn}")]);
    assert!(out.status.success(), "{}", text(&out));
    // the user's own server is never called a throwaway one
    let said = text(&out);
    assert!(said.contains("oltp: one warehouse (on the server its `dsn` gives)"), "{said}");
    assert!(!said.contains("throwaway"), "{said}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("System achieved ") && stdout.contains("consistency conditions 1-4 hold"), "{stdout}");
    // what the transactions never change is as clause 4.3.3.1 loads it
    for (table, rows) in
        [("item", 100_000), ("warehouse", 1), ("district", 10), ("customer", 30_000), ("stock", 100_000)]
    {
        assert_eq!(count(&dsn, &format!("SELECT count(*) FROM {table}")), rows, "{table}");
    }
    assert_eq!(count(&dsn, "SELECT count(DISTINCT c_last) FROM customer"), 1000);
    let bc = count(&dsn, "SELECT count(*) FROM customer WHERE c_credit = 'BC'");
    assert!((2_400..3_600).contains(&bc), "{bc} of 30000 customers have bad credit, not about 10%");
    let original = count(&dsn, "SELECT count(*) FROM item WHERE i_data LIKE '%ORIGINAL%'");
    assert!((8_500..11_500).contains(&original), "{original} of 100000 items are ORIGINAL, not about 10%");
    // a-strings (clause 4.3.2.2) of random hexadecimal digits, each as long as asked; the
    // long ones (C_DATA of the customers no payment rewrote) never repeat their first 32
    let astrings = "SELECT (SELECT count(*) FROM item WHERE i_name !~ '^[0-9a-f]{14,24}$' \
                    OR replace(i_data, 'ORIGINAL', '') !~ '^[0-9a-f]{18,50}$' OR length(i_data) NOT BETWEEN 26 AND 50) \
                    + (SELECT count(*) FROM stock WHERE s_dist_01 !~ '^[0-9a-f]{24}$' OR s_dist_10 !~ '^[0-9a-f]{24}$') \
                    + (SELECT count(*) FROM customer WHERE c_credit = 'GC' AND (c_data !~ '^[0-9a-f]+$' \
                    OR length(c_data) NOT BETWEEN 300 AND 500 OR position(left(c_data, 32) IN substr(c_data, 2)) > 0))";
    assert_eq!(count(&dsn, astrings), 0);
    let mean = count(&dsn, "SELECT avg(length(c_data))::integer FROM customer WHERE c_credit = 'GC'");
    assert!((390..=410).contains(&mean), "C_DATA of {mean} characters on average, not about 400");
    assert_eq!(conditions(&dsn), [0; 4], "consistency conditions 1 to 4 after the run");
    // and two that fathom checks only after the load, which hold after a run too: 8
    // (W_YTD = sum(H_AMOUNT)) and 12 (C_BALANCE + C_YTD_PAYMENT = what was delivered)
    let ytd = "SELECT count(*) FROM warehouse WHERE w_ytd <> (SELECT sum(h_amount) FROM history WHERE h_w_id = w_id)";
    assert_eq!(count(&dsn, ytd), 0);
    let balance = "SELECT count(*) FROM customer WHERE c_balance + c_ytd_payment <> coalesce((SELECT sum(ol_amount) \
                   FROM orders JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id \
                   WHERE o_w_id = c_w_id AND o_d_id = c_d_id AND o_c_id = c_id AND ol_delivery_d IS NOT NULL), 0)";
    assert_eq!(count(&dsn, balance), 0);
    // every payment added a history row, every committed new-order an order; the log
    // holds every transaction pgbench ran, the run having no ramp
    let per = logged(&s.dir.join("results/runs/1/w1.pgbench-log"));
    assert_eq!(count(&dsn, "SELECT count(*) FROM history"), 30_000 + per[1]);
    let committed = count(&dsn, "SELECT sum(d_next_o_id) - 30010 FROM district");
    assert_eq!(count(&dsn, "SELECT count(*) FROM orders"), 30_000 + committed);
    let rolled_back = per[0] - committed;
    assert!(committed > 0 && rolled_back >= 0 && rolled_back <= per[0] / 10 + 2, "{per:?}, {committed} committed");
    // NOPM is the database's new orders per minute of the 4 s
    let show = s.show_json();
    let observed = |name: &str| {
        let o = show["observed"].as_array().unwrap().iter().find(|o| o["source"] == "tpcc:w1" && o["name"] == name);
        o.unwrap_or_else(|| panic!("no {name}: {}", show["observed"]))["mean"].as_f64().unwrap()
    };
    assert!((observed("nopm") * 4.0 / 60.0 - committed as f64).abs() < 0.01, "{}", observed("nopm"));
    assert_eq!(observed("consistent"), 1.0);
    read_in_its_own_terms(&s, &show, observed("nopm"));
    let names: Vec<&str> = ops(&show, "w1").iter().map(|o| o["op"].as_str().unwrap()).collect();
    assert_eq!(names, ["new-order", "payment", "delivery", "order-status", "stock-level"]);
    // 4000 new-orders in one transaction, rolled back: each returns 0 when its order held
    // the unused item, 1% of them (binomial: 40 expected, standard deviation 6.3)
    let unused = count(
        &dsn,
        "BEGIN; SELECT count(*) FILTER (WHERE tpcc_new_order(1, 1, 5, 7) = 0) FROM generate_series(1, 4000); ROLLBACK;",
    );
    assert!((15..=65).contains(&unused), "{unused} of 4000 new-orders had an unused item, not about 1%");
    // `reuse` keeps the loaded tables as the run left them: no load, more orders
    reused_serializable(&s, &path, &dsn);
    compared_in_its_own_terms(&s);
    assert!(count(&dsn, "SELECT sum(d_next_o_id) - 30010 FROM district") > committed);
    // a warehouse's year-to-date figure changed behind the transactions' back: condition
    // 1 does not hold, so the run fails, its figures invalid, the condition named
    let broken = s.dir.join("broken.yaml");
    let update = format!("psql -X -q -d '{dsn}' -c 'UPDATE warehouse SET w_ytd = w_ytd + 1'");
    std::fs::write(
        &broken,
        format!(
            "name: broken\nworkloads:\n  w1: {{driver: tpcc, reuse: true, duration: 3s, dsn: '{dsn}'}}\n\
             timeline:\n  - start: w1\n    async: true\n  - exec: \"{update}\"\n    at: 2s\n  - wait_for: w1\n"
        ),
    )
    .unwrap();
    let out = s.run(&["run", broken.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("condition 1 (W_YTD = sum(D_YTD)): 1 warehouse differs") && said.contains("invalid"),
        "{said}"
    );
    assert!(said.contains("System achieved ") && said.contains("INVALID"), "{said}");
}

#[test]
fn bad_warehouses_and_a_database_of_others_are_refused() {
    let s = Scratch::new("tpcc-bad");
    let pg = Postgres::start(&s.dir.join("pg"), servers::free_port());
    let dsn = pg.dsn("postgres");
    query(&dsn, "CREATE TABLE accounts (id int); INSERT INTO accounts VALUES (7)");
    let path = s.scenario("name: bad\nworkloads:\n  w: {driver: tprocc, duration: 2s}\n");
    let path = path.to_str().unwrap();
    for (set, says) in [("w.warehouses=0", "0 warehouses: give between 1"), ("w.warehouses=-1", "-1 warehouses")] {
        let out = s.run(&["run", path, "--set", set]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says) && err.contains("warehouses"), "{err}");
    }
    // more warehouses than the storage holds: refused with the room they need, before loading
    let out = s.run(&["run", path, "--set", "w.warehouses=100000"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("100000 warehouses need about 19.1 TiB") && err.contains("free"), "{err}");
    assert!(!err.contains("loading"), "{err}");
    let out = s.run(&["run", path, "--set", &format!("dsn={dsn}")]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("public.accounts") && err.contains("never drops"), "{err}");
    // the database is as it was; the only run recorded is the one out of room (a
    // throwaway cluster had started for it), never the refused database's
    assert_eq!(query(&dsn, "SELECT id FROM accounts"), "7");
    assert_eq!(count(&dsn, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'warehouse'"), 0);
    let runs = s.runs();
    assert!(runs.len() == 1 && runs[0].1.as_deref().unwrap_or("").contains("warehouses need about"), "{runs:?}");
}

/// One TPC-C database, its cluster and clients, on each of two hosts (local agents):
/// each host's NOPM is its own database's, and the cluster's is their sum.
#[test]
fn two_hosts_each_run_their_own_cluster_and_the_total_is_their_sum() {
    let s = Scratch::new("tpcc-hosts");
    let hosts = s.local_inventory(&["n1", "n2"]);
    let path = s.scenario(
        "name: nodes\nworkloads:\n  oltp: {driver: tpcc, warehouses: 1, clients: 1, rate: 100, duration: 3s}\n",
    );
    let out = s.run(&["run", path.to_str().unwrap(), "--hosts", &hosts, "-q"]);
    assert!(out.status.success(), "{}", text(&out));
    let show = s.show_json();
    let figure = |source: &str, name: &str| {
        let o = show["observed"].as_array().unwrap().iter().find(|o| o["source"] == source && o["name"] == name);
        o.unwrap_or_else(|| panic!("no {source} {name}: {}", show["observed"]))["mean"].as_f64().unwrap()
    };
    let (n1, n2) = (figure("tpcc:oltp@n1", "nopm"), figure("tpcc:oltp@n2", "nopm"));
    assert!(n1 > 0.0 && n2 > 0.0, "{n1} {n2}");
    assert!((figure("tpcc:oltp", "nopm") - (n1 + n2)).abs() < 0.01, "{}", show["observed"]);
    let tpm = figure("tpcc:oltp@n1", "tpm") + figure("tpcc:oltp@n2", "tpm");
    assert!((figure("tpcc:oltp", "tpm") - tpm).abs() < 0.01 && figure("tpcc:oltp", "nodes") == 2.0);
    // each node's figures, and the cluster's line, as events
    let events = show["events"].as_array().unwrap();
    let detail = |label: &str| {
        let e = events.iter().find(|e| e["kind"] == "tpcc" && e["label"] == label);
        e.unwrap_or_else(|| panic!("no tpcc {label}: {events:?}"))["detail"].as_str().unwrap().to_string()
    };
    assert!(detail("oltp@n1").starts_with("System achieved ") && detail("oltp@n1").contains("conditions 1-4 hold"));
    let cluster = detail("oltp");
    assert!(cluster.starts_with(&format!("Cluster of 2 nodes achieved {:.0} NOPM", n1 + n2)), "{cluster}");
    // each host's transactions are its own workers'
    let on: Vec<&str> =
        show["workloads"][0]["hosts"].as_array().unwrap().iter().map(|h| h["host"].as_str().unwrap()).collect();
    assert_eq!(on, ["n1", "n2"]);
    // each cluster was in its host's target, and is gone
    for h in ["n1", "n2"] {
        let left: Vec<_> = std::fs::read_dir(s.dir.join(format!("host-{h}"))).unwrap().collect();
        assert!(left.is_empty(), "{h}: {left:?}");
        assert!(servers::running(&format!("host-{h}/fathom-postgres")).is_empty(), "{h}: a server left running");
    }
}

/// The server dies while the clients run: the run ends failed, the seconds it measured
/// kept.
#[test]
fn a_server_that_dies_mid_run_fails_the_run_and_keeps_its_seconds() {
    let s = Scratch::new("tpcc-crash");
    let (mut pg, dsn) = empty_database(&s);
    let path = s.scenario(&format!(
        "name: crash\nworkloads:\n  w: {{driver: tpcc, clients: 2, rate: 200, duration: 30s, dsn: '{dsn}'}}\n"
    ));
    let child = s.fathom(&["run", path.to_str().unwrap(), "-q"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn();
    let child = child.unwrap();
    let started = Instant::now();
    // the store is there once the run is recorded
    let samples = || {
        let read_only = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY;
        let db = rusqlite::Connection::open_with_flags(s.dir.join("results/fathom.db"), read_only);
        db.and_then(|db| db.query_row("SELECT count(*) FROM samples", [], |r| r.get::<_, i64>(0))).unwrap_or(0)
    };
    while samples() < 2 {
        assert!(started.elapsed() < Duration::from_secs(120), "no seconds measured");
        std::thread::sleep(Duration::from_millis(200));
    }
    pg.crash();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let runs = s.runs();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].0, "failed", "{runs:?}");
    assert!(samples() >= 2, "its seconds were not kept");
    assert!(!text(&out).contains("panicked"), "{}", text(&out));
}

/// Ctrl-C (SIGINT) while fathom loads a `dsn`'s database: the load stops, no loading
/// session is left, and the tables it had made are dropped (a partial database is
/// nobody's).
#[test]
fn ctrl_c_during_a_dsn_load_removes_the_partial_tables() {
    let s = Scratch::new("tpcc-load-int");
    let (pg, dsn) = empty_database(&s);
    let path = s.scenario(&format!(
        "name: int\nworkloads:\n  w: {{driver: tpcc, warehouses: 4, duration: 60s, dsn: '{dsn}'}}\n"
    ));
    let child = s.fathom(&["run", path.to_str().unwrap(), "-q"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn();
    let child = child.unwrap();
    let loading = "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT tpcc_load_%'";
    let started = Instant::now();
    while count(&pg.dsn("postgres"), loading) == 0 {
        assert!(started.elapsed() < Duration::from_secs(120), "the load never started");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: kill(2) of fathom alone.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out));
    assert_eq!(count(&pg.dsn("postgres"), loading), 0, "a loading session left running");
    let tables = "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'";
    assert_eq!(count(&dsn, tables), 0, "the partial load's tables were left");
    let functions = "SELECT count(*) FROM pg_proc WHERE proname LIKE 'tpcc\\_%'";
    assert_eq!(count(&dsn, functions), 0, "the partial load's functions were left");
}

/// The one directory fathom made in `dir` whose name begins with `prefix`.
fn made_in(dir: &Path, prefix: &str) -> Option<std::path::PathBuf> {
    let entries = std::fs::read_dir(dir).ok()?;
    entries.flatten().map(|e| e.path()).find(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
}

/// What the throwaway cluster in `data` (fathom's `target`) says of `sql` in the
/// workload's database, reached by its socket as fathom's OS user; None until it answers.
fn ask_throwaway(data: &Path, sql: &str) -> Option<String> {
    let pid = std::fs::read_to_string(made_in(data, "fathom-postgres-run")?.join("data/postmaster.pid")).ok()?;
    let lines: Vec<&str> = pid.lines().collect();
    let dsn = format!("host={} port={} user=fathom dbname=tpcc_0", lines.get(4)?, lines.get(3)?);
    let out = std::process::Command::new("psql").args(["-X", "-q", "-A", "-t", "-d", &dsn, "-c", sql]).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// `table_targets`: the tables of a throwaway cluster dealt over two directories, one
/// tablespace each, largest first (stock on the first, customer on the second), each
/// index with its table; the WAL stays with the data; both are emptied with the cluster,
/// and each is a recorded target. Where the tables cannot go there, the key is refused.
#[test]
fn table_targets_deal_the_tables_over_a_tablespace_in_each_directory() {
    let s = Scratch::new("tpcc-table-targets");
    let (t1, t2) = (s.dir.join("t1"), s.dir.join("t2"));
    for d in [&s.data(), &t1, &t2] {
        std::fs::create_dir_all(d).unwrap();
    }
    let scenario = |more: &str| {
        s.scenario(&format!("name: spread\nworkloads:\n  db: {{driver: tpcc, warehouses: 1, duration: 3s{more}}}\n"))
    };
    let path = scenario(&format!(", target: TARGET, table_targets: [{}, {}]", t1.display(), t2.display()));
    let mut child = crate::interrupt::spawn_job(&s, &["run", path.to_str().unwrap(), "-q"]);
    let sql = "SELECT string_agg(c.relname || ':' || coalesce(t.spcname, 'default'), ' ' ORDER BY c.relname) \
               FROM pg_class c LEFT JOIN pg_tablespace t ON t.oid = c.reltablespace \
               WHERE c.relname IN ('stock', 'stock_pkey', 'customer', 'customer_i2', 'tpcc_load')";
    let mut placed = String::new();
    crate::interrupt::wait_for(&s, &mut child, "the workload's database", || {
        placed = ask_throwaway(&s.data(), sql).unwrap_or_default();
        !placed.is_empty()
    });
    // the five tables and indexes dealt: stock, customer, ..., tpcc_load (the tenth) on the second
    let want = "customer:fathom_tables_2 customer_i2:fathom_tables_2 stock:fathom_tables_1 \
                stock_pkey:fathom_tables_1 tpcc_load:fathom_tables_2";
    assert_eq!(placed, want);
    for t in [&t1, &t2] {
        // PostgreSQL's layout: LOCATION/PG_15_CATALOG/DATABASE/RELFILENODE
        let made = made_in(t, "fathom-postgres-tables-run").unwrap_or_else(|| panic!("nothing in {}", t.display()));
        let version = made_in(&made, "PG_").unwrap();
        let files: usize =
            std::fs::read_dir(&version).unwrap().flatten().map(|db| db.path().read_dir().unwrap().count()).sum();
        assert!(files > 0, "no table files in {}", version.display());
    }
    let cluster = made_in(&s.data(), "fathom-postgres-run").unwrap();
    assert!(cluster.join("data/pg_wal").is_dir() && cluster.join("data/pg_wal").read_dir().unwrap().count() > 0);
    assert_eq!(cluster.join("data/pg_tblspc").read_dir().unwrap().count(), 2);
    let (out, _) = crate::interrupt::wait_exit(&s, child, Duration::from_secs(120));
    assert!(matches!(out.status.code(), Some(0 | 3)), "{}", std::fs::read_to_string(s.dir.join("stderr")).unwrap());
    for dir in [&s.data(), &t1, &t2] {
        assert_eq!(std::fs::read_dir(dir).unwrap().count(), 0, "{} left", dir.display());
    }
    let show = s.show_json();
    let targets = show["run"]["environment"]["targets"].as_array().unwrap();
    for t in [&t1, &t2] {
        let target = targets.iter().find(|x| x["path"] == t.to_str().unwrap());
        assert!(target.is_some_and(|x| x["device"].is_string()), "{} is no target: {targets:?}", t.display());
    }
    // where the tables cannot go: the server is given, the directory is the data's, or missing
    let missing = s.dir.join("missing");
    for (more, says) in [
        (format!(", dsn: 'dbname=x', table_targets: [{}]", t1.display()), "with a `dsn` the server is elsewhere"),
        (format!(", target: TARGET, table_targets: [{}]", s.data().display()), "is `target` itself"),
        (format!(", table_targets: [{}, {}]", t1.display(), missing.display()), "give an existing directory"),
    ] {
        let out = s.run(&["run", scenario(&more).to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains("scenario.yaml:3: workloads.db.table_targets") && said.contains(says), "{said}");
    }
}
