//! `fathom export`: a run's figures as CSV and JSON, per workload and per second, and
//! the per-second rows add up to the summary.

use crate::common::{Scratch, text};

#[test]
fn summaries_and_seconds_export_and_agree() {
    let s = Scratch::new("export");
    let scenario =
        s.scenario("name: ex\nworkloads:\n  mix: {target: TARGET, size: 16m, rw: randrw, iodepth: 2, duration: 3s}\n");
    let out = s.run(&["run", scenario.to_str().unwrap(), "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    let out = s.run(&["export"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let csv = String::from_utf8_lossy(&out.stdout).to_string();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "run,workload,phase,t,measured,seconds,rw,bs,depth,jobs,op,unit,ops,bytes,iops,tps,mb_per_s,gbit_per_s,\
         mean_us,p50_us,p99_us,p99_9_us,max_us"
    );
    assert_eq!(lines.len(), 3, "read and write: {csv}");
    let ops = |line: &str| line.split(',').nth(12).unwrap().parse::<u64>().unwrap();
    let summary_ops: u64 = lines[1..].iter().map(|l| ops(l)).sum();

    let file = s.dir.join("seconds.json");
    let out = s.run(&["export", "last", "--samples", "--format", "json", "-o", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let rows: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 6, "3 seconds x 2 ops");
    assert!(rows.iter().all(|r| r["phase"] == "mix" && r["seconds"] == 1.0 && r["p99_us"].as_f64().unwrap() > 0.0));
    let second_ops: u64 = rows.iter().map(|r| r["ops"].as_u64().unwrap()).sum();
    assert_eq!(second_ops, summary_ops);

    let out = s.run(&["export", "99"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

/// A text field holding a carriage return is quoted (like one holding a line feed, a
/// quote or a comma: see `export::csv`'s tests), so a CSV reader gets the row back
/// whole. A scenario cannot name a workload so (names are one line), but a store can
/// hold one (written by another tool, or edited by hand).
#[test]
fn csv_quotes_a_field_with_a_carriage_return() {
    let s = Scratch::new("export-quoting");
    let scenario = s.scenario("name: ex\nworkloads:\n  mix: {target: TARGET, size: 16m, rw: randread, duration: 1s}\n");
    let out = s.run(&["run", scenario.to_str().unwrap(), "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let name = "mi\rx";
    s.db().execute("UPDATE workloads SET name = ?1", [name]).unwrap();

    let out = s.run(&["export"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let csv = String::from_utf8(out.stdout).unwrap();
    assert!(csv.contains(",\"mi\rx\","), "{csv:?}");
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 1, "one read row: {csv:?}");
    assert_eq!(&rows[0][1], name);
    assert_eq!(&rows[0][10], "read", "the op column");
}

/// Per-second rows say which seconds were the ramp's (`measured` false) and carry the
/// settings (rw, bs or bssplit, depth, jobs) and p99.9, so a row read alone says what
/// ran; a figure the op does not measure (TPS of an IO) is empty.
#[test]
fn samples_mark_the_ramp_and_carry_the_settings() {
    let s = Scratch::new("export-ramp");
    let scenario = s.scenario(
        "name: ex\nworkloads:\n  w: {target: TARGET, size: 16m, rw: randread, bssplit: 4k/75:16k/25, iodepth: 2, jobs: 2, \
         ramp: 1s, duration: 2s}\n",
    );
    let out = s.run(&["run", scenario.to_str().unwrap(), "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = s.run(&["export", "--samples"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let csv = String::from_utf8(out.stdout).unwrap();
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    let cell = |r: &csv::StringRecord, name: &str| r[header.iter().position(|h| h == name).unwrap()].to_string();
    let measure_t: i64 = s.db().query_row("SELECT measure_t FROM workloads", [], |r| r.get(0)).unwrap();
    let ramp: Vec<_> = rows.iter().filter(|r| cell(r, "measured") == "false").collect();
    assert!(!ramp.is_empty(), "the ramp's seconds: {csv}");
    for r in &rows {
        let t: i64 = cell(r, "t").parse().unwrap();
        assert_eq!(cell(r, "measured") == "true", t >= measure_t, "{csv}");
        assert_eq!(
            (cell(r, "rw"), cell(r, "bs"), cell(r, "depth"), cell(r, "jobs"), cell(r, "unit")),
            ("randread".into(), "4k/75:16k/25".into(), "2".into(), "2".into(), "iops".into()),
            "{csv}"
        );
        assert!(cell(r, "tps").is_empty() && cell(r, "gbit_per_s").is_empty(), "{csv}");
    }
    let p999 = |r: &&csv::StringRecord| cell(r, "p99_9_us").parse::<f64>().unwrap();
    assert!(rows.iter().filter(|r| cell(r, "ops") != "0").all(|r| p999(&r) >= cell(r, "p99_us").parse().unwrap()));
}

/// `fathom_workers` backfilled is the workers each phase ran, second by second: a ramp
/// to 3 reads 1, 2, then 3, not the one it started with.
#[test]
fn openmetrics_workers_follow_a_ramp() {
    let s = Scratch::new("export-om-ramp");
    let scenario = s.scenario(
        "name: ramp\nworkloads:\n  r: {engine: null, rw: randread, rate_iops: 100, duration: 3s}\n\
         timeline:\n  - ramp: r\n    add: 1\n    every: 1s\n    until: 3\n",
    );
    let out = s.run(&["run", scenario.to_str().unwrap(), "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = s.run(&["export", "last", "--format", "openmetrics"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let om = String::from_utf8(out.stdout).unwrap();
    // each point: (its second, its workers)
    let mut points: Vec<(f64, u32)> = om
        .lines()
        .filter_map(|l| l.strip_prefix("fathom_workers{"))
        .map(|l| {
            let f: Vec<&str> = l.rsplit('}').next().unwrap().split_whitespace().collect();
            (f[1].parse().unwrap(), f[0].parse().unwrap())
        })
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut workers: Vec<u32> = points.iter().map(|p| p.1).collect();
    assert_eq!(workers.len(), 3, "a point each second: {om}");
    workers.dedup();
    assert_eq!(workers, [1, 2, 3], "{om}");
}
