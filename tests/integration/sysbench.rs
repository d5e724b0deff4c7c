//! `driver: sysbench` against the real sysbench (Debian's 1.0.20) and PostgreSQL: a
//! throwaway cluster fathom starts itself, and a server the test starts on loopback.
//! fathom's figures are checked against sysbench's own closing report and the
//! per-transaction log fathom's Lua timer wrote, read here independently.

use crate::common::servers::{self, Postgres};
use crate::common::{Scratch, ops, text};
use std::path::Path;

/// The end (Unix µs) of every transaction the timer logged for workload `name`.
fn logged_ends(run_dir: &Path, name: &str) -> Vec<i64> {
    let mut ends = Vec::new();
    for entry in std::fs::read_dir(run_dir.join(format!("{name}.sysbench-log"))).unwrap().flatten() {
        for line in std::fs::read_to_string(entry.path()).unwrap().lines() {
            let f: Vec<i64> = line.split_whitespace().map(|w| w.parse().unwrap()).collect();
            assert_eq!(f.len(), 6, "{line}");
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
    assert!(qps.len() >= 3 && qps.iter().all(|(_, v)| *v > 0.0), "{qps:?}");
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
