//! `driver: tpcc` with `engine: hammerdb` against the real HammerDB CLI (built by
//! `scripts/install-deps.sh test`, which fathom finds where that script puts it) and
//! the real PostgreSQL: one warehouse, two virtual users, a run of 12 s (HammerDB times
//! in steps of 6 s). Its stored run is read back beside a `driver: tpcc` run of pgbench's.

use crate::common::servers;
use crate::common::{Scratch, ops, text};
use std::collections::BTreeSet;

/// The keys of a JSON object, sorted.
fn keys(v: &serde_json::Value) -> BTreeSet<String> {
    v.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default()
}

/// The names of the observations of source `tpcc:oltp` in `show --json`, with their means.
fn observed(show: &serde_json::Value) -> Vec<(String, f64)> {
    let all = show["observed"].as_array().unwrap().iter().filter(|o| o["source"] == "tpcc:oltp");
    all.map(|o| (o["name"].as_str().unwrap().to_string(), o["mean"].as_f64().unwrap())).collect()
}

/// A HammerDB run's line ("System achieved N NOPM from M DBMS TPM") and fathom's figures
/// of it: stored under the names pgbench's runs use, HammerDB's NOPM and TPM as printed,
/// and fathom's two counts over its window in agreement, the new-order calls counted
/// each second from the server (rolled-back ones too, about 1%) and the database's new
/// orders. HammerDB's own line times its window from its monitor, which a busy machine
/// starts seconds apart from its virtual users: it is only near them.
fn hammerdbs_line_and_fathoms_counts_agree(stdout: &str, show: &serde_json::Value, dbms: &str) {
    let line = stdout.split("System achieved ").nth(1).unwrap_or_else(|| panic!("{stdout}"));
    let f: Vec<&str> = line.split_whitespace().collect();
    assert_eq!((f[1], f[2], f[4], f[5]), ("NOPM", "from", dbms, "TPM"), "{stdout}");
    let (nopm, tpm): (f64, f64) = (f[0].parse().unwrap(), f[3].parse().unwrap());
    assert!(nopm > 0.0 && tpm > nopm, "{stdout}");
    let figures = observed(show);
    let value = |name: &str| figures.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("{figures:?}")).1;
    assert_eq!((value("nopm"), value("tpm"), value("consistent")), (nopm, tpm, 1.0));
    let detail = stdout.split("the database ").nth(1).unwrap_or_else(|| panic!("{stdout}"));
    let database: f64 = detail.split_whitespace().next().unwrap().parse().unwrap();
    assert!((value("log_nopm") - database).abs() < 0.05 * database, "{database}: {figures:?}");
    assert!(nopm > 0.2 * database && nopm < 5.0 * database, "{database}: {figures:?}");
}

/// A HammerDB run's ops: its five transaction types in their order, in HammerDB's mix
/// (new-order as often as payment, ten times delivery).
fn its_ops_are_hammerdbs_mix(show: &serde_json::Value) {
    let by_op: Vec<(String, u64)> =
        ops(show, "oltp").iter().map(|o| (o["op"].as_str().unwrap().to_string(), o["ops"].as_u64().unwrap())).collect();
    let names: Vec<&str> = by_op.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["new-order", "payment", "delivery", "order-status", "stock-level"]);
    let (new_orders, delivery) = (by_op[0].1 as f64, by_op[2].1 as f64);
    assert!(new_orders > 5.0 * delivery && delivery > 0.0, "{by_op:?}");
}

#[test]
fn hammerdb_runs_tpcc_and_its_run_reads_like_pgbenchs() {
    let s = Scratch::new("hammerdb");
    // a fifth of a minute, which HammerDB times as exactly as a whole one
    let path = s.scenario(
        "name: oltp\nworkloads:\n  oltp: {driver: tpcc, engine: hammerdb, warehouses: 1, clients: 2, duration: 12s}\n",
    );
    let out = s.run(&["run", path.to_str().unwrap()]);
    assert!(out.status.success(), "(is HammerDB built? scripts/install-deps.sh test) {}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let hammerdb = s.show_json();
    let w = &hammerdb["workloads"][0];
    assert_eq!(w["engine"], "hammerdb");
    hammerdbs_line_and_fathoms_counts_agree(&stdout, &hammerdb, "PostgreSQL");
    // its server is observed as every PostgreSQL workload's is: HammerDB's database
    // commits throughout its seconds, one sample a second
    let observations = s.observations();
    let commits = observations
        .iter()
        .find(|((src, n), _)| {
            src == "postgres:oltp" && n.starts_with("pg_stat_database_xact_commit{datname=\"hammerdb")
        })
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("no commits: {:?}", observations.keys().collect::<Vec<_>>()));
    assert!(commits.len() >= 11 && commits.last().unwrap().1 > commits[0].1, "{commits:?}");
    // the per-second samples: every second of the run has transactions, and the mix
    // is HammerDB's (new-order as often as payment, ten times delivery)
    let per_second: Vec<(i64, i64)> = s
        .db()
        .prepare("SELECT t, sum(ops) FROM samples GROUP BY t ORDER BY t")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    // (its virtual users may take some seconds to start on a busy machine, 8 of the 12
    // seen; from the first second with transactions on, every second but the last, which
    // the end may cut, has them)
    let started = per_second.iter().skip_while(|(_, n)| *n == 0).collect::<Vec<_>>();
    assert!(per_second.len() >= 12 && started.len() >= 3, "{per_second:?}");
    assert!(started[..started.len() - 1].iter().all(|(_, n)| *n > 0), "{per_second:?}");
    its_ops_are_hammerdbs_mix(&hammerdb);
    // HammerDB's time profile per transaction type
    let event = hammerdb["events"].as_array().unwrap().iter().find(|e| e["kind"] == "tpcc").unwrap();
    let detail = event["detail"].as_str().unwrap();
    assert!(detail.contains("HammerDB's time profile in ms") && detail.contains("; payment "), "{detail}");
    assert!(detail.contains("fathom's readings: the database") && detail.contains("conditions 1-4 hold"), "{detail}");
    // a run of pgbench's stores the same keys
    let out = s.run(&["run", path.to_str().unwrap(), "--set", "oltp.engine=pgbench", "--set", "oltp.duration=1s"]);
    assert!(out.status.success(), "{}", text(&out));
    let pgbench = s.show_json();
    assert_eq!(pgbench["workloads"][0]["engine"], "tpcc");
    assert_eq!(keys(&hammerdb), keys(&pgbench));
    assert_eq!(keys(w), keys(&pgbench["workloads"][0]));
    assert_eq!(keys(&w["profile"]), keys(&pgbench["workloads"][0]["profile"]));
    assert_eq!(keys(&ops(&hammerdb, "oltp")[0]), keys(&ops(&pgbench, "oltp")[0]));
    let names = |show| observed(show).into_iter().map(|(n, _)| n).collect::<Vec<_>>();
    assert_eq!(names(&hammerdb), names(&pgbench));
}

#[test]
fn hammerdb_absent_is_refused_with_how_to_get_it() {
    let s = Scratch::new("hammerdb-absent");
    let empty = s.dir.join("no-hammerdb");
    std::fs::create_dir_all(&empty).unwrap();
    let path = s.scenario("name: oltp\nworkloads:\n  oltp: {driver: tpcc, engine: hammerdb, duration: 1m}\n");
    let out = s.fathom(&["run", path.to_str().unwrap()]).env("FATHOM_HAMMERDB", &empty).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("runs HammerDB's CLI, which is not in") && err.contains("FATHOM_HAMMERDB"), "{err}");
    assert!(err.contains("scripts/install-deps.sh test"), "{err}");
    // refused before anything was started or recorded
    assert!(!err.contains("throwaway PostgreSQL"), "{err}");
    assert!(!s.dir.join("results/runs").exists());
}

/// HammerDB's own MariaDB workload (its `mariatcl` binding is Debian's mysqltcl under
/// HammerDB's names, written by scripts/install-deps.sh) on a throwaway MariaDB: its line
/// and fathom's readings, its per-second samples from the server's performance schema.
#[test]
fn hammerdb_runs_tpcc_on_mariadb_and_its_run_reads_like_pgbenchs() {
    let s = Scratch::new("hammerdb-mariadb");
    let path = s.scenario(
        "name: oltp\nworkloads:\n  oltp: {driver: tpcc, engine: hammerdb, dbms: mariadb, warehouses: 1, clients: 2, \
         home: all, duration: 12s}\n",
    );
    let out = s.run(&["run", path.to_str().unwrap()]);
    assert!(out.status.success(), "(is HammerDB built? scripts/install-deps.sh test) {}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let show = s.show_json();
    hammerdbs_line_and_fathoms_counts_agree(&stdout, &show, "MariaDB");
    // HammerDB's calls are counted, not timed: no latency is shown for them, never 0,
    // and the report draws no latency chart (it drew two empty ones)
    assert!(!text(&out).contains("0.00 ns"), "{}", text(&out));
    let html = s.dir.join("report.html");
    let report = s.run(&["report", "-o", html.to_str().unwrap()]);
    assert!(report.status.success(), "{}", text(&report));
    let html = std::fs::read_to_string(html).unwrap();
    assert!(html.contains("id=\"ts-iops\"") && !html.contains("id=\"ts-latency\""), "{}", text(&report));
    // the server is observed as fathom's own MariaDB runs' are
    let observations = s.observations();
    let commits = observations
        .iter()
        .find(|((src, n), _)| src == "mariadb:oltp" && n == "mysql_global_status_commands_total{command=\"commit\"}")
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("no commits: {:?}", observations.keys().collect::<Vec<_>>()));
    assert!(commits.len() >= 11 && commits.last().unwrap().1 > commits[0].1, "{commits:?}");
    // per-second samples of each procedure's calls, in HammerDB's mix
    its_ops_are_hammerdbs_mix(&show);
    assert!(servers::running(&s.dir.display().to_string()).is_empty());
}
