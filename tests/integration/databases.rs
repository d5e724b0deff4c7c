//! Inside PostgreSQL on the run's timeline, against the real server: a pgbench run's
//! stored observations hold the statistics views under postgres_exporter's names, and a
//! `CHECKPOINT` a timeline step forces mid-run is a `checkpoint` event placed where it
//! ran, from the throwaway cluster's log or, for a `dsn`, from the view's counters.

use crate::common::servers::{self, Postgres};
use crate::common::{Scratch, chromium, text};
use crate::interrupt::{spawn_job, wait_exit, wait_for};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// A pgbench run of 7 s at 200 TPS with a `CHECKPOINT` at 4 s, through the DSN the step
/// is given.
const FORCED: &str = "name: forced\n\
     workloads:\n\
     \x20 w: {driver: pgbench, scale: 1, clients: 2, rate: 200, duration: 7s}\n\
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
    assert!(rising(series("fathom_pg_stat_wal_bytes_total").unwrap()));
    assert!(series("pg_stat_bgwriter_buffers_checkpoint_total").is_some());
    let read_time = "pg_stat_database_blk_read_time{datname=\"postgres\",datid=\"";
    assert!(obs.keys().any(|(src, n)| src == "postgres:w" && n.starts_with(read_time)), "{:?}", obs.keys());
    assert!(series("fathom_pg_stat_activity_backends{wait_event_type=\"LWLock\"}").is_some());

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
        ("tpcc", "{driver: tpcc, warehouses: 1, rate: 100, duration: 3s}"),
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
        "name: where\nworkloads:\n  w: {driver: pgbench, scale: 1, clients: 1, rate: 100, duration: 5s}\ntimeline:\n  \
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

/// The samples of a scrape by series: name and labels, fathom's own labels (`run`, and
/// the `server` both give in their own ways) aside.
type Scrape = BTreeMap<(String, Vec<(String, String)>), f64>;

fn by_series(text: &str) -> Scrape {
    let ours = |k: &String| k != "run" && k != "server";
    servers::samples(text)
        .into_iter()
        .map(|(name, labels, v)| ((name, labels.into_iter().filter(|(k, _)| ours(k)).collect()), v))
        .collect()
}

/// A database run's scrape passes Prometheus's check, and every `pg_*` family fathom
/// serves is one the real postgres_exporter (Debian's) serves of the same server, with
/// the same label names and, for the measured database and the server-wide views, a
/// value between fathom's readings before and after the exporter's, give or take the
/// series' busiest second of the run. The run measures pgbench for 3 s, then waits
/// while the test compares (its observer still sampling, its endpoint serving); the real
/// Prometheus scrapes it throughout, and answers every query of the Grafana dashboard's
/// PostgreSQL row with data, which scripts/dashboard-preview.py draws: a series in each
/// of the row's panels, on a page headless Chromium takes a screenshot of.
#[test]
fn a_database_run_s_scrape_passes_promtool_and_its_pg_families_are_postgres_exporter_s() {
    let s = Scratch::new("databases-exporter");
    let (address, done) = (s.dir.join("address"), s.dir.join("done"));
    let path = s.scenario(&format!(
        "name: parity\nworkloads:\n  w: {{driver: pgbench, scale: 1, clients: 2, rate: 200, duration: 3s}}\ntimeline:\n  \
         - start: w\n    async: true\n  - wait_for: w\n  - exec: echo \"$FATHOM_DSN_W\" > {}\n  \
         - wait_until: {{command: test -f {}, timeout: 60s}}\n",
        address.display(),
        done.display()
    ));
    let (port, prom_port) = (servers::free_port(), servers::free_port());
    let (prom, scraped) =
        (servers::prometheus(&s.dir, prom_port, "fathom", &[format!("127.0.0.1:{port}")]), Instant::now());
    let mut child = spawn_job(&s, &["run", path.to_str().unwrap(), "--prometheus", &format!("127.0.0.1:{port}")]);
    let read = || std::fs::read_to_string(&address).unwrap_or_default().trim().to_string();
    wait_for(&s, &mut child, "the server's address", || read().contains("dbname="));
    let dsn = read();
    let (server, database) = dsn.rsplit_once(" dbname=").unwrap();
    let exporter_port = servers::free_port();
    let exporter = servers::postgres_exporter(exporter_port, &format!("{server} dbname=postgres"));
    let before = servers::get(port, "/metrics").unwrap();
    let theirs = servers::get(exporter_port, "/metrics").unwrap();
    // the observer's next samples were taken after the exporter's
    std::thread::sleep(Duration::from_millis(2500));
    let after = servers::get(port, "/metrics").unwrap();
    drop(exporter);
    let queries = servers::dashboard_queries("PostgreSQL");
    servers::assert_answered(prom_port, &queries);
    let page = s.dir.join("dashboard.html");
    let drawn = servers::dashboard_preview(prom_port, scraped.elapsed(), &page);
    drop(prom);
    std::fs::write(&done, "").unwrap();
    let (out, _) = wait_exit(&s, child, Duration::from_secs(60));
    assert!(out.status.success(), "{}", text(&out));

    // each panel of the row drew a series, and the page draws in a browser
    for (title, _) in &queries {
        assert!(drawn.get(title).is_some_and(|&n| n > 0), "panel {title} drew nothing: {drawn:?}");
    }
    let png = s.dir.join("dashboard.png");
    let shot = chromium(&page, &["--window-size=1440,1960", &format!("--screenshot={}", png.display())]);
    assert!(shot.status.success(), "{}", text(&shot));
    assert!(std::fs::metadata(&png).unwrap().len() > 50_000, "the screenshot is nearly empty");

    servers::promtool_check(&before);
    let (ours, theirs, after) = (by_series(&before), by_series(&theirs), by_series(&after));
    let (mine, exporter_s) = (label_names(&ours), label_names(&theirs));
    let pg: Vec<&String> = mine.keys().filter(|n| n.starts_with("pg_")).collect();
    assert!(pg.len() >= 15, "{pg:?}");
    for name in &pg {
        let labels = exporter_s.get(*name).unwrap_or_else(|| panic!("{name} is not postgres_exporter's"));
        assert_eq!(&mine[*name], labels, "{name}'s labels");
    }
    let compared = values_agree(&s, [&ours, &theirs, &after], database);
    assert!(compared >= 15, "{compared} series compared");
}

/// Each family's label names (each set of them its series have).
fn label_names(scrape: &Scrape) -> BTreeMap<String, Vec<Vec<String>>> {
    let mut families: BTreeMap<String, Vec<Vec<String>>> = BTreeMap::new();
    for (name, labels) in scrape.keys() {
        let names: Vec<String> = labels.iter().map(|l| l.0.clone()).collect();
        let seen = families.entry(name.clone()).or_default();
        if !seen.contains(&names) {
            seen.push(names);
        }
    }
    families
}

/// Checks that the exporter's value of each `pg_*` series fathom served (those of
/// `database` and of the whole server) lies between fathom's before and after, give or
/// take the series' busiest second of the run as stored; how many it compared.
fn values_agree(s: &Scratch, [ours, theirs, after]: [&Scrape; 3], database: &str) -> usize {
    // the stored series by name and labels, read as a scrape's are
    let stored: BTreeMap<_, Vec<(i64, f64)>> = s
        .observations()
        .into_iter()
        .filter(|((source, _), _)| source == "postgres:w")
        .filter_map(|((_, name), values)| Some((by_series(&format!("{name} 0")).into_keys().next()?, values)))
        .collect();
    let mut compared = 0;
    for ((name, labels), &value) in ours.iter().filter(|((n, _), _)| n.starts_with("pg_")) {
        if labels.iter().any(|(k, v)| k == "datname" && v != database) {
            continue;
        }
        let key = (name.clone(), labels.clone());
        let (exporter_value, later) = (theirs[&key], after[&key]);
        let values = stored.get(&key).unwrap_or_else(|| panic!("{key:?} is not stored"));
        let busiest = values.windows(2).map(|w| (w[1].1 - w[0].1).abs() / (w[1].0 - w[0].0) as f64).fold(0.0, f64::max);
        let (low, high) = (value.min(later) - busiest, value.max(later) + busiest);
        assert!(
            (low..=high).contains(&exporter_value),
            "{key:?}: the exporter's {exporter_value}, fathom's {value} before and {later} after, busiest second {busiest}"
        );
        compared += 1;
    }
    compared
}
