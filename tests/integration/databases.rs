//! Inside PostgreSQL on the run's timeline, against the real server: a pgbench run's
//! stored observations hold the statistics views under postgres_exporter's names, and a
//! `CHECKPOINT` a timeline step forces mid-run is a `checkpoint` event placed where it
//! ran, from the throwaway cluster's log or, for a `dsn`, from the view's counters.

use crate::common::servers::{self, Postgres};
use crate::common::{Scratch, text};

/// A pgbench run of 7 s with a `CHECKPOINT` at 4 s, through the DSN the step is given.
const FORCED: &str = "name: forced\n\
     workloads:\n\
     \x20 w: {driver: pgbench, scale: 1, clients: 2, duration: 7s}\n\
     timeline:\n\
     \x20 - start: w\n\
     \x20   async: true\n\
     \x20 - exec: psql -X -q -d \"$FATHOM_DSN_W\" -c CHECKPOINT\n\
     \x20   at: 4s\n\
     \x20 - wait_for: w\n";

/// The `exec` event and the `checkpoint` events of the last run.
fn exec_and_checkpoints(show: &serde_json::Value) -> (serde_json::Value, Vec<serde_json::Value>) {
    let events = show["events"].as_array().unwrap();
    let exec = events.iter().find(|e| e["kind"] == "exec").unwrap().clone();
    assert_eq!(exec["status"], 0, "{exec}");
    let checkpoints = events.iter().filter(|e| e["kind"] == "checkpoint").cloned().collect();
    (exec, checkpoints)
}

/// A counter's values rose over the run and never fell.
fn rising(values: &[(i64, f64)]) -> bool {
    values.windows(2).all(|w| w[1].1 >= w[0].1) && values.last().unwrap().1 > values[0].1
}

#[test]
fn a_run_stores_pg_stat_series_and_a_forced_checkpoint_is_on_its_timeline() {
    let s = Scratch::new("databases-forced");
    let path = s.scenario(FORCED);
    let out = s.run(&["run", path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let obs = s.observations();
    let series = |name: &str| obs.get(&("postgres:w".to_string(), name.to_string()));
    // pgbench's database commits throughout, one sample a second
    let commits = obs
        .iter()
        .find(|((src, n), _)| src == "postgres:w" && n.starts_with("pg_stat_database_xact_commit{datname=\"pgbench"))
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("no commits: {:?}", obs.keys().collect::<Vec<_>>()));
    assert!(commits.len() >= 5 && rising(commits), "{commits:?}");
    // one CHECKPOINT was asked for; WAL was written; every wait type is counted
    let req = series("pg_stat_bgwriter_checkpoints_req_total").unwrap();
    assert!(req.last().unwrap().1 - req[0].1 >= 1.0, "{req:?}");
    assert!(rising(series("pg_stat_wal_wal_bytes").unwrap()));
    assert!(series("pg_stat_bgwriter_buffers_checkpoint_total").is_some());
    assert!(series("pg_stat_database_blk_read_time{datname=\"postgres\"}").is_some());
    assert!(series("pg_stat_activity_wait_event_type_count{wait_event_type=\"LWLock\"}").is_some());

    // the forced checkpoint, read from the server's log, began and ended while the
    // command that forced it ran (CHECKPOINT waits for it): to the millisecond on the
    // run clock, well within a second of when it ran
    let show = s.show_json();
    let (exec, checkpoints) = exec_and_checkpoints(&show);
    let (at, took) = (exec["at_ms"].as_i64().unwrap(), exec["took_ms"].as_i64().unwrap());
    let forced: Vec<_> =
        checkpoints.iter().filter(|c| c["detail"].as_str().unwrap().starts_with("immediate force wait")).collect();
    assert_eq!(forced.len(), 1, "{checkpoints:?}");
    let c = forced[0];
    assert_eq!(c["label"], "w");
    let (c_at, c_took) = (c["at_ms"].as_i64().unwrap(), c["took_ms"].as_i64().unwrap());
    assert!(at <= c_at && c_at + c_took <= at + took, "checkpoint {c} in exec {exec}");
    assert!(c["detail"].as_str().unwrap().contains("buffers") && c["detail"].as_str().unwrap().contains("sync="));

    // the report draws it on the run's charts, beside PostgreSQL's own
    let page = s.dir.join("report.html");
    let out = s.run(&["report", "-o", page.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    for id in ["obs-pg-w-xact", "obs-pg-w-buffers", "obs-pg-w-wal", "obs-pg-w-waits"] {
        assert!(html.contains(&format!("id=\"{id}\"")), "no chart {id}");
    }
    assert!(html.contains(">checkpoint<"), "no checkpoint mark");
}

#[test]
fn a_dsns_checkpoints_are_read_from_its_counters() {
    let s = Scratch::new("databases-dsn");
    let pg = Postgres::start(&s.dir.join("pg"), servers::free_port());
    let path = s.scenario(FORCED);
    let out = s.run(&["run", path.to_str().unwrap(), "--set", &format!("w.dsn={}", pg.dsn("postgres"))]);
    assert!(out.status.success(), "{}", text(&out));
    let show = s.show_json();
    let (exec, checkpoints) = exec_and_checkpoints(&show);
    let (at, took) = (exec["at_ms"].as_i64().unwrap(), exec["took_ms"].as_i64().unwrap());
    // the counters rise as it ends, seen at the next whole second: its end is placed
    // after the command began and a second after it ended (a sample that came late,
    // on a busy machine, is left out: the second after that sees it)
    let ended: Vec<i64> = checkpoints
        .iter()
        .filter(|c| c["detail"].as_str().unwrap().starts_with("from the counters"))
        .map(|c| c["at_ms"].as_i64().unwrap() + c["took_ms"].as_i64().unwrap())
        .collect();
    assert!(ended.iter().any(|&e| at < e && e <= at + took + 3000), "{checkpoints:?} {exec}");
    assert!(ended.iter().all(|e| e % 1000 == 0), "placed on the second it was seen: {ended:?}");
    let obs = s.observations();
    assert!(obs.contains_key(&("postgres:w".to_string(), "pg_stat_bgwriter_checkpoints_req_total".to_string())));
}

/// A role that is neither a superuser nor a member of `pg_checkpoint`, as a managed
/// server (RDS, Cloud SQL) gives: tpch's and tpcc's loads through its `dsn` succeed,
/// each saying that their `CHECKPOINT` was skipped and why.
#[test]
fn loads_by_a_role_that_may_not_checkpoint_succeed_and_say_it_was_skipped() {
    let s = Scratch::new("db-unprivileged");
    let pg = Postgres::start(&s.dir.join("pg"), servers::free_port());
    let admin = pg.dsn("postgres");
    let sql = |dsn: &str, sql: &str| {
        let out = std::process::Command::new("psql").args(["-X", "-q", "-d", dsn, "-c", sql]).output().unwrap();
        assert!(out.status.success(), "{sql}: {}", String::from_utf8_lossy(&out.stderr));
    };
    sql(&admin, "CREATE ROLE plain LOGIN");
    for db in ["tpch", "tpcc"] {
        sql(&admin, &format!("CREATE DATABASE {db} OWNER plain"));
    }
    let dsn = |db: &str| format!("host=127.0.0.1 port={} user=plain dbname={db}", pg.port);
    for (db, workload) in [
        ("tpch", "{driver: tproch, scale: 0.01, duration: 300s}"),
        ("tpcc", "{driver: tpcc, warehouses: 1, duration: 3s}"),
    ] {
        let path = s.scenario(&format!("name: {db}\nworkloads:\n  w: {workload}\n"));
        let out = s.run(&["run", path.to_str().unwrap(), "--set", &format!("dsn={}", dsn(db))]);
        assert!(out.status.success(), "{db}: {}", text(&out));
        assert!(
            text(&out)
                .contains("CHECKPOINT skipped: the role plain is neither a superuser nor a member of pg_checkpoint"),
            "{db}: {}",
            text(&out)
        );
    }
}

/// The observer's own statements are commits of the database it sits in: it sits in
/// `postgres`, so the measured database's commits (and a TPM read from them) are the
/// workload's alone; and its counters read as rises, never as a running total's mean.
#[test]
fn the_observer_sits_outside_the_measured_database_and_counters_read_as_rates() {
    let s = Scratch::new("databases-observer");
    let path = s.scenario(
        "name: where\nworkloads:\n  w: {driver: pgbench, scale: 1, clients: 1, duration: 5s}\ntimeline:\n  \
         - start: w\n    async: true\n  - exec: psql -X -A -t -d \"$FATHOM_DSN_W\" -c \"SELECT 'in:' || datname FROM \
         pg_stat_activity WHERE application_name = 'fathom-observe'\"\n    at: 3s\n  - wait_for: w\n",
    );
    let out = s.run(&["run", path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let show = s.show_json();
    let exec = show["events"].as_array().unwrap().iter().find(|e| e["kind"] == "exec").unwrap().clone();
    assert_eq!(exec["detail"].as_str().map(str::trim), Some("in:postgres"), "{exec}");
    let observed = show["observed"].as_array().unwrap();
    let commits = observed
        .iter()
        .find(|o| {
            o["source"] == "postgres:w"
                && o["name"].as_str().unwrap().starts_with("pg_stat_database_xact_commit{datname=\"pgbench")
        })
        .unwrap_or_else(|| panic!("no commits: {observed:?}"));
    let (rate, delta) = (commits["mean"].as_f64().unwrap(), commits["delta"].as_f64().unwrap());
    let seconds = commits["seconds"].as_f64().unwrap();
    // a rise per second over the seconds between its first sample and its last, not
    // the mean of a running total
    let span = delta / rate;
    assert!(delta > 0.0 && span >= seconds - 1.0 - 1e-9 && span < 30.0, "{commits}");
    let backends =
        observed.iter().find(|o| o["name"].as_str().unwrap().starts_with("pg_stat_database_numbackends")).unwrap();
    assert!(backends.get("delta").is_none(), "a gauge: {backends}");
}
