//! `driver: sysbench` against the real sysbench (Debian's 1.0.20), PostgreSQL and MariaDB:
//! a throwaway server fathom starts itself, and a server the test starts on loopback.
//! fathom's figures are checked against sysbench's own closing report and the
//! per-transaction log fathom's Lua timer wrote, read here independently.

use crate::common::servers::{self, Mariadb, Postgres};
use crate::common::{Scratch, ops, text};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The end (Unix µs) of every transaction the timer logged for workload `name`.
fn logged_ends(run_dir: &Path, name: &str) -> Vec<i64> {
    let mut ends = Vec::new();
    for entry in std::fs::read_dir(run_dir.join(format!("{name}.sysbench-log"))).unwrap().flatten() {
        for line in std::fs::read_to_string(entry.path()).unwrap().lines() {
            let f: Vec<i64> = line.split_whitespace().map(|w| w.parse().unwrap()).collect();
            assert_eq!(f.len(), 7, "{line}");
            ends.push(f[4] * 1_000_000 + f[5]);
        }
    }
    ends
}

/// sysbench's own count of transactions (`transactions: N (R per sec.)`).
fn sysbench_transactions(run_dir: &Path, name: &str) -> u64 {
    let out = std::fs::read_to_string(run_dir.join(format!("{name}.sysbench.out"))).unwrap();
    let line = out.lines().find_map(|l| l.trim().strip_prefix("transactions:")).unwrap_or_else(|| panic!("{out}"));
    line.split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn a_throwaway_cluster_s_transactions_are_the_ones_sysbench_counted() {
    let s = Scratch::new("sysbench-throwaway");
    let path = s.scenario(
        "name: sb\n\
         workloads:\n\
         \x20 oltp:\n\
         \x20   driver: sysbench\n\
         \x20   tables: 2\n\
         \x20   table_size: 2000\n\
         \x20   threads: 2\n\
         \x20   duration: 3s\n",
    );
    let out = s.run(&["run", path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(stdout.lines().any(|l| l.starts_with("workload  op") && l.contains("TPS")), "{stdout}");
    assert!(stdout.contains("txn: sysbench transactions (depth: its threads)"), "{stdout}");
    let show = s.show_json();
    let run_dir = s.dir.join(format!("results/runs/{}", show["run"]["id"]));
    // every transaction sysbench counted was timed once
    let ends = logged_ends(&run_dir, "oltp");
    assert_eq!(ends.len() as u64, sysbench_transactions(&run_dir, "oltp"));
    // fathom's are those that ended in the measured window
    let txn = ops(&show, "oltp").iter().find(|o| o["op"] == "txn").unwrap_or_else(|| panic!("{show}"));
    let w = show["workloads"].as_array().unwrap().iter().find(|w| w["name"] == "oltp").unwrap();
    let (from, to) = (w["measure_t"].as_i64().unwrap(), w["end_t"].as_i64().unwrap());
    let clock_us: i64 =
        s.db().query_row("SELECT clock_start_unix_ms FROM runs WHERE id = 1", [], |r| r.get(0)).unwrap();
    let inside = ends.iter().filter(|e| (*e - clock_us * 1000).div_euclid(1_000_000) >= from).count();
    let inside_to = ends.iter().filter(|e| (*e - clock_us * 1000).div_euclid(1_000_000) >= to).count();
    assert_eq!(txn["ops"].as_u64().unwrap(), (inside - inside_to) as u64, "{txn}");
    assert_eq!(txn["unit"], "tps");
    assert!(txn["latency"]["p99_us"].as_f64().unwrap() > 0.0, "{txn}");
    assert_eq!(w["workers"], 2);
    // sysbench's own seconds: its queries, errors and reconnects
    let observed = s.observations();
    let qps = &observed[&("sysbench:oltp".to_string(), "qps".to_string())];
    let report = std::fs::read_to_string(run_dir.join("oltp.sysbench.out")).unwrap();
    let reported: Vec<f64> = report
        .lines()
        .filter(|l| l.starts_with("[ "))
        .map(|l| l.split_whitespace().skip_while(|w| *w != "qps:").nth(1).unwrap().parse().unwrap())
        .collect();
    // each stored second is one of sysbench's report lines, and most of them are stored
    assert!(qps.iter().all(|(_, v)| reported.contains(v)), "{qps:?} of {reported:?}");
    assert!(qps.len() >= 2 && qps.iter().map(|(_, v)| v).sum::<f64>() > 0.0, "{qps:?} of {reported:?}");
    assert!(observed.contains_key(&("sysbench:oltp".to_string(), "reconnects".to_string())));
    // the cluster is gone, and nothing of it runs
    assert!(servers::running(&run_dir.display().to_string()).is_empty());
}

#[test]
fn a_dsn_s_tables_are_prepared_once_and_reused() {
    let s = Scratch::new("sysbench-dsn");
    let pg = Postgres::start(&s.dir.join("pg"), servers::free_port());
    let path = s.scenario(
        "name: sb\n\
         workloads:\n\
         \x20 points:\n\
         \x20   driver: sysbench\n\
         \x20   test: oltp_point_select\n\
         \x20   tables: 3\n\
         \x20   table_size: 1500\n\
         \x20   reuse: true\n\
         \x20   duration: 2s\n",
    );
    let dsn = format!("dsn={}", pg.dsn("postgres"));
    let first = s.run(&["run", path.to_str().unwrap(), "--set", &dsn]);
    assert!(first.status.success(), "{}", text(&first));
    assert!(text(&first).contains("preparing 3 tables of 1500 rows"), "{}", text(&first));
    let rows = std::process::Command::new("psql")
        .args(["-X", "-A", "-t", "-d", &pg.dsn("postgres"), "-c", "SELECT count(*) FROM sbtest3"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&rows.stdout).trim(), "1500");
    let second = s.run(&["run", path.to_str().unwrap(), "--set", &dsn]);
    assert!(second.status.success(), "{}", text(&second));
    assert!(text(&second).contains("reusing 3 sysbench tables of 1500 rows"), "{}", text(&second));
    let show = s.show_json();
    let txn = ops(&show, "points").iter().find(|o| o["op"] == "txn").unwrap();
    assert!(txn["ops"].as_u64().unwrap() > 0, "{txn}");
}

#[test]
fn a_test_sysbench_lacks_is_refused_at_its_line() {
    let s = Scratch::new("sysbench-bad");
    let path =
        s.scenario("name: sb\nworkloads:\n  w:\n    driver: sysbench\n    test: oltp_everything\n    duration: 2s\n");
    let out = s.run(&["run", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(said.contains(":5") && said.contains("test") && said.contains("oltp_read_write"), "{said}");
    assert!(!s.dir.join("results/fathom.db").exists(), "a refused scenario made a store");
}

/// A throwaway MariaDB: sysbench's transactions counted as sysbench counts them; while it
/// runs, its socket's directory is private, it listens on no TCP port, and its accounts
/// are fathom's OS user by the socket's peer credentials (and MariaDB's own
/// `mariadb.sys`, which cannot log in); after it, nothing of it runs or is left.
#[test]
fn a_throwaway_mariadb_admits_fathom_alone_and_leaves_nothing() {
    use std::os::unix::fs::PermissionsExt;
    let s = Scratch::new("sysbench-mariadb");
    let target = s.dir.join("storage");
    std::fs::create_dir_all(&target).unwrap();
    let path = s.scenario(&format!(
        "name: sb\nworkloads:\n  oltp:\n    driver: sysbench\n    dbms: mariadb\n    target: {}\n    tables: 2\n    \
         table_size: 2000\n    threads: 2\n    duration: 4s\n",
        target.display()
    ));
    let child =
        s.fathom(&["run", path.to_str().unwrap()]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let started = Instant::now();
    let server = loop {
        let found = servers::running(&target.display().to_string());
        if let Some(server) = found.into_iter().find(|c| c.contains("mariadbd") && c.contains("--socket=")) {
            break server;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "no mariadbd under {}", target.display());
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(server.contains("--skip-networking"), "{server}");
    let socket = server.split_whitespace().find_map(|a| a.strip_prefix("--socket=")).unwrap().to_string();
    let socket_dir = Path::new(&socket).parent().unwrap();
    assert_eq!(std::fs::metadata(socket_dir).unwrap().permissions().mode() & 0o777, 0o700);
    let accounts = loop {
        let out = Command::new("mariadb")
            .args(["--no-defaults", &format!("--socket={socket}"), "-N", "-B", "-e"])
            .arg(
                "SELECT user, JSON_VALUE(priv, '$.account_locked'), JSON_VALUE(priv, '$.authentication_string'), \
                 JSON_VALUE(priv, '$.auth_or[1].plugin') FROM mysql.global_priv ORDER BY user",
            )
            .output()
            .unwrap();
        if out.status.success() {
            break String::from_utf8_lossy(&out.stdout).to_string();
        }
        assert!(started.elapsed() < Duration::from_secs(60), "{}", String::from_utf8_lossy(&out.stderr));
        std::thread::sleep(Duration::from_millis(100));
    };
    let me = String::from_utf8(Command::new("id").arg("-un").output().unwrap().stdout).unwrap();
    // fathom's user: by the socket's peer credentials, or a password none can give
    // ("invalid" is no password's hash); MariaDB's own account is locked
    let mut want = vec![format!("{}\tNULL\tinvalid\tunix_socket", me.trim()), "mariadb.sys\t1\t\tNULL".to_string()];
    want.sort();
    assert_eq!(accounts.lines().collect::<Vec<_>>(), want);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let show = s.show_json();
    let run_dir = s.dir.join(format!("results/runs/{}", show["run"]["id"]));
    assert_eq!(logged_ends(&run_dir, "oltp").len() as u64, sysbench_transactions(&run_dir, "oltp"));
    let txn = ops(&show, "oltp").iter().find(|o| o["op"] == "txn").unwrap_or_else(|| panic!("{show}"));
    assert!(txn["tps"].as_f64().unwrap() > 0.0, "{txn}");
    assert!(servers::running(&target.display().to_string()).is_empty());
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0, "left in {}", target.display());
}

#[test]
fn a_mariadb_dsn_s_tables_are_prepared_once_and_reused() {
    let s = Scratch::new("sysbench-mariadb-dsn");
    let db = Mariadb::start(servers::free_port());
    db.ask("CREATE DATABASE shop");
    let path = s.scenario(
        "name: sb\nworkloads:\n  points:\n    driver: sysbench\n    dbms: mariadb\n    test: oltp_point_select\n    \
         tables: 2\n    table_size: 1200\n    reuse: true\n    duration: 2s\n",
    );
    let dsn = format!("dsn={}", db.dsn("shop"));
    let first = s.run(&["run", path.to_str().unwrap(), "--set", &dsn]);
    assert!(first.status.success(), "{}", text(&first));
    assert!(text(&first).contains("preparing 2 tables of 1200 rows"), "{}", text(&first));
    assert_eq!(db.ask("SELECT count(*) FROM shop.sbtest2"), "1200");
    let second = s.run(&["run", path.to_str().unwrap(), "--set", &dsn]);
    assert!(second.status.success(), "{}", text(&second));
    assert!(text(&second).contains("reusing 2 sysbench tables of 1200 rows"), "{}", text(&second));
    let txn = ops(&s.show_json(), "points").iter().find(|o| o["op"] == "txn").cloned().unwrap();
    assert!(txn["ops"].as_u64().unwrap() > 0, "{txn}");
    // a password in the dsn is refused, and never echoed
    let secret = s.run(&["run", path.to_str().unwrap(), "--set", "dsn=mysql://tester:hunter2@127.0.0.1/shop"]);
    assert_eq!(secret.status.code(), Some(2), "{}", text(&secret));
    assert!(text(&secret).contains("MYSQL_PWD") && !text(&secret).contains("hunter2"), "{}", text(&secret));
}

#[test]
fn a_setting_mariadb_refuses_fails_the_run_in_its_words() {
    let s = Scratch::new("sysbench-mariadb-bad");
    let path = s.scenario(
        "name: sb\nworkloads:\n  w:\n    driver: sysbench\n    dbms: mariadb\n    duration: 2s\n    \
         settings: {innodb_no_such_thing: 1}\n",
    );
    let out = s.run(&["run", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("unknown variable 'innodb_no_such_thing=1'"), "{}", text(&out));
    assert!(servers::running(&s.dir.display().to_string()).is_empty());
}

/// A MariaDB server is observed each second under mysqld_exporter's names: every series
/// fathom stored is one the real exporter (Debian's) publishes of the same server, with
/// the same labels, and a counter read after the run is at least what fathom last read;
/// the series served live on `/metrics` pass `promtool check metrics`.
#[test]
fn a_mariadb_server_is_observed_under_mysqld_exporter_s_names() {
    let s = Scratch::new("sysbench-mariadb-observed");
    let db = Mariadb::start(servers::free_port());
    db.ask("CREATE DATABASE sbtest");
    let path = s.scenario(
        "name: sb\nworkloads:\n  w:\n    driver: sysbench\n    dbms: mariadb\n    tables: 1\n    table_size: 1000\n    \
         duration: 3s\n",
    );
    let (dsn, live) = (format!("dsn={}", db.dsn("sbtest")), servers::free_port());
    let args = ["run", path.to_str().unwrap(), "--set", &dsn, "--prometheus", &format!("127.0.0.1:{live}")];
    let mut child = crate::interrupt::spawn_job(&s, &args);
    let mut served = String::new();
    crate::interrupt::wait_for(&s, &mut child, "MariaDB's series on /metrics", || {
        served = servers::get(live, "/metrics").unwrap_or_default();
        served.contains("\nmysql_global_status_commands_total{")
    });
    let (out, _) = crate::interrupt::wait_exit(&s, child, Duration::from_secs(60));
    assert!(out.status.success(), "{}", text(&out));
    // served live, each family with its help and type, as Prometheus's check wants them
    servers::promtool_check(&served);
    let mut observed = s.observations();
    observed.retain(|(source, _), _| source == "mariadb:w");
    assert!(observed.len() >= 35, "{:?}", observed.keys().collect::<Vec<_>>());
    let metrics = observed.keys().filter(|(_, n)| n.starts_with("mysql_info_schema_innodb_metrics_")).count();
    assert!(metrics >= 8, "{:?}", observed.keys().collect::<Vec<_>>());
    let port = servers::free_port();
    let exporter = db.exporter(port);
    let scrape = servers::get(port, "/metrics").unwrap();
    drop(exporter);
    let value = |name: &str| scrape.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse::<f64>().ok());
    for ((_, name), values) in &observed {
        let theirs = value(name).unwrap_or_else(|| panic!("{name} is not in mysqld_exporter's scrape"));
        if name.starts_with("mysql_global_status_commands_total") {
            let ours = values.last().unwrap().1;
            assert!(theirs >= ours, "{name}: the exporter's {theirs} after fathom's {ours}");
        }
    }
    // the commits fathom saw rise are sysbench's transactions
    let commits = &observed.iter().find(|((_, n), _)| n.contains("command=\"commit\"")).unwrap().1;
    assert!(commits.last().unwrap().1 > commits[0].1, "{commits:?}");
}

/// Ctrl-C while sysbench runs on a throwaway MariaDB: the run is aborted with the
/// seconds measured so far, sysbench and mariadbd are gone, and so is the server's
/// directory.
#[test]
fn ctrl_c_during_a_mariadb_run_keeps_its_seconds_and_leaves_nothing() {
    let s = Scratch::new("sysbench-mariadb-ctrl-c");
    let target = s.dir.join("storage");
    std::fs::create_dir_all(&target).unwrap();
    let path = s.scenario(&format!(
        "name: sb\nworkloads:\n  w:\n    driver: sysbench\n    dbms: mariadb\n    target: {}\n    tables: 1\n    \
         table_size: 1000\n    duration: 60s\n",
        target.display()
    ));
    let mut child = crate::interrupt::spawn_job(&s, &["run", path.to_str().unwrap()]);
    let measured = || {
        let logs = std::fs::read_dir(s.dir.join("results/runs/1/w.sysbench-log")).into_iter().flatten().flatten();
        logs.map(|f| std::fs::read_to_string(f.path()).unwrap_or_default().lines().count()).sum::<usize>() > 100
    };
    crate::interrupt::wait_for(&s, &mut child, "sysbench's transactions", measured);
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: kill(2) of the process group we started, as a terminal's Ctrl-C.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) };
    let (out, took) = crate::interrupt::wait_exit(&s, child, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(130), "{}", text(&out));
    assert!(took < Duration::from_secs(10), "stopping took {took:?}");
    let status: String = s.db().query_row("SELECT status FROM runs WHERE id = 1", [], |r| r.get(0)).unwrap();
    assert_eq!(status, "aborted");
    let samples: i64 = s.db().query_row("SELECT count(*) FROM samples", [], |r| r.get(0)).unwrap();
    assert!(samples > 0, "no second kept");
    let left = servers::running(&target.display().to_string());
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0, "left in {}", target.display());
}
