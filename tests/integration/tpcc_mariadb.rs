//! `driver: tpcc` with `dbms: mariadb` against a real MariaDB (Debian's 10.11) and the
//! real sysbench: the load as clause 4.3.3.1 asks, the transactions counted three ways
//! (the database's rows, the per-transaction log, fathom's figures), the consistency
//! conditions, a database that is not fathom's refused, and a throwaway server.

use crate::common::servers::{self, Mariadb};
use crate::common::{Scratch, ops, text};
use std::path::Path;

/// Transactions per type (the log's script number) in the log directory `dir`, every
/// line, each a completed transaction.
fn logged(dir: &Path) -> [i64; 5] {
    let mut per = [0; 5];
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        for line in std::fs::read_to_string(entry.path()).unwrap().lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(f.len(), 7, "{line}");
            assert!(f[2].parse::<u64>().is_ok(), "a transaction that did not complete: {line}");
            per[f[3].parse::<usize>().unwrap()] += 1;
        }
    }
    per
}

/// sysbench's own count of transactions (`transactions: N (R per sec.)`).
fn sysbench_transactions(run_dir: &Path, name: &str) -> i64 {
    let out = std::fs::read_to_string(run_dir.join(format!("{name}.sysbench.out"))).unwrap();
    let line = out.lines().find_map(|l| l.trim().strip_prefix("transactions:")).unwrap_or_else(|| panic!("{out}"));
    line.split_whitespace().next().unwrap().parse().unwrap()
}

/// An observation's mean over the run.
fn observed(show: &serde_json::Value, source: &str, name: &str) -> f64 {
    let o = show["observed"].as_array().unwrap().iter().find(|o| o["source"] == source && o["name"] == name);
    o.unwrap_or_else(|| panic!("no {name}: {}", show["observed"]))["mean"].as_f64().unwrap()
}

#[test]
fn a_mariadb_warehouse_is_loaded_run_and_consistent() {
    let s = Scratch::new("tpcc-mariadb-dsn");
    let db = Mariadb::start(servers::free_port());
    db.ask("CREATE DATABASE shop; CREATE TABLE shop.mine (x integer)");
    let path = s.scenario(
        "name: oltp\nworkloads:\n  w1: {driver: tpcc, dbms: mariadb, warehouses: 1, clients: 2, mix: spec, \
         reuse: true, duration: 4s}\n",
    );
    let dsn = format!("dsn={}", db.dsn("shop"));
    // a database holding a table that is not fathom's is someone else's
    let refused = s.run(&["run", path.to_str().unwrap(), "--set", &dsn]);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(text(&refused).contains("holds tables that are not TPC-C's (mine)"), "{}", text(&refused));
    assert_eq!(db.ask("SELECT COUNT(*) FROM shop.mine"), "0");
    db.ask("DROP TABLE shop.mine");

    let out = s.run(&["run", path.to_str().unwrap(), "--set", &dsn]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("MariaDB TPM") && stdout.contains("consistency conditions 1-4 hold"), "{stdout}");
    let count = |sql: &str| -> i64 { db.ask(&format!("USE shop; {sql}")).parse().unwrap() };
    // what the transactions never change is as clause 4.3.3.1 loads it
    for (table, rows) in
        [("item", 100_000), ("warehouse", 1), ("district", 10), ("customer", 30_000), ("stock", 100_000)]
    {
        assert_eq!(count(&format!("SELECT COUNT(*) FROM {table}")), rows, "{table}");
    }
    assert_eq!(count("SELECT COUNT(DISTINCT c_last) FROM customer"), 1000);
    let bc = count("SELECT COUNT(*) FROM customer WHERE c_credit = 'BC'");
    assert!((2_400..3_600).contains(&bc), "{bc} of 30000 customers have bad credit, not about 10%");
    let original = count("SELECT COUNT(*) FROM item WHERE i_data LIKE '%ORIGINAL%'");
    assert!((8_500..11_500).contains(&original), "{original} of 100000 items are ORIGINAL, not about 10%");
    // every payment added a history row, every committed new-order an order and its
    // lines; the log holds every transaction sysbench counted, the run having no ramp
    let show = s.show_json();
    let run_dir = s.dir.join(format!("results/runs/{}", show["run"]["id"]));
    let per = logged(&run_dir.join("w1.sysbench-log"));
    assert_eq!(per.iter().sum::<i64>(), sysbench_transactions(&run_dir, "w1"));
    assert_eq!(count("SELECT COUNT(*) FROM history"), 30_000 + per[1]);
    let committed = count("SELECT SUM(d_next_o_id) - 30010 FROM district");
    assert_eq!(count("SELECT COUNT(*) FROM orders"), 30_000 + committed);
    assert_eq!(count("SELECT SUM(o_ol_cnt) FROM orders"), count("SELECT COUNT(*) FROM order_line"));
    let rolled_back = per[0] - committed;
    assert!(committed > 0 && rolled_back >= 0 && rolled_back <= per[0] / 10 + 2, "{per:?}, {committed} committed");
    // NOPM is the database's new orders per minute of the 4 s
    assert!((observed(&show, "tpcc:w1", "nopm") * 4.0 / 60.0 - committed as f64).abs() < 0.01, "{show}");
    assert_eq!(observed(&show, "tpcc:w1", "consistent"), 1.0);
    let names: Vec<&str> = ops(&show, "w1").iter().map(|o| o["op"].as_str().unwrap()).collect();
    assert_eq!(names, ["new-order", "payment", "delivery", "order-status", "stock-level"]);

    // loaded once: the next run reuses it, and a database that breaks a condition is refused
    let again = s.run(&["run", path.to_str().unwrap(), "--set", &dsn]);
    assert!(again.status.success(), "{}", text(&again));
    assert!(text(&again).contains("reusing the TPC-C database of 1 warehouse"), "{}", text(&again));
    db.ask("UPDATE shop.warehouse SET w_ytd = w_ytd + 1");
    let broken = s.run(&["run", path.to_str().unwrap(), "--set", &dsn]);
    assert!(!broken.status.success(), "{}", text(&broken));
    assert!(
        text(&broken)
            .contains("TPC-C consistency condition 1 (W_YTD = sum(D_YTD)): 1 warehouse differs after the load"),
        "{}",
        text(&broken)
    );
}

#[test]
fn a_throwaway_mariadb_runs_each_transaction_type_and_leaves_nothing() {
    let s = Scratch::new("tpcc-mariadb");
    let target = s.dir.join("storage");
    std::fs::create_dir_all(&target).unwrap();
    // w2, a sysbench run on a server of its own after it, sees w1's server stopped
    let path = s.scenario(&format!(
        "name: oltp\nworkloads:\n  w1: {{driver: tpcc, dbms: mariadb, target: {0}, warehouses: 2, clients: 2, \
         home: all, duration: 5s, ramp: 1s, settings: {{innodb_log_file_size: 4M}}}}\n  \
         w2: {{driver: sysbench, dbms: mariadb, target: {0}, tables: 1, table_size: 1000, duration: 1s}}\n\
         timeline:\n  - start: w1\n  - start: w2\n",
        target.display()
    ));
    let out = s.run(&["run", path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("on a throwaway MariaDB"), "{}", text(&out));
    let retired = "w1: its throwaway MariaDB stopped (its workloads are over), idle while w2 runs";
    assert!(text(&out).contains(retired), "{}", text(&out));
    let show = s.show_json();
    for op in ops(&show, "w1") {
        assert!(op["ops"].as_u64().unwrap() > 0, "{op}");
    }
    let (nopm, log_nopm) = (observed(&show, "tpcc:w1", "nopm"), observed(&show, "tpcc:w1", "log_nopm"));
    assert!(nopm > 0.0 && (nopm - log_nopm).abs() <= 0.1 * nopm, "NOPM {nopm}, the log's {log_nopm}");
    // a redo log of 4 MB fills within seconds: InnoDB flushes under its pressure, a
    // checkpoint of the server on the timeline
    let events = show["events"].as_array().unwrap();
    let pressure = events.iter().find(|e| e["kind"] == "checkpoint" && e["label"] == "w1");
    let pressure = pressure.unwrap_or_else(|| panic!("no checkpoint event: {events:?}"));
    assert!(pressure["detail"].as_str().unwrap().starts_with("InnoDB flushed under redo pressure"), "{pressure}");
    let observed_max = |name: &str| {
        let o = show["observed"].as_array().unwrap().iter().find(|o| o["source"] == "mariadb:w1" && o["name"] == name);
        o.unwrap_or_else(|| panic!("no {name}"))["max"].as_f64().unwrap()
    };
    let (age, max) = (
        observed_max("mysql_global_status_innodb_checkpoint_age"),
        observed_max("mysql_global_status_innodb_checkpoint_max_age"),
    );
    assert!(age >= 0.875 * max, "the age reached {age} of {max}, yet a pressure event: {pressure}");
    assert!(servers::running(&target.display().to_string()).is_empty());
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0, "left in {}", target.display());
}
