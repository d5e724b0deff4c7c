//! `fathom export`: a run's figures as CSV and JSON, per workload and per second, and
//! the per-second rows add up to the summary.

mod common;

use common::{Scratch, text};

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
    assert_eq!(lines[0], "run,workload,phase,op,t,seconds,ops,bytes,iops,mb_per_s,mean_us,p50_us,p99_us,max_us");
    assert_eq!(lines.len(), 3, "read and write: {csv}");
    let ops = |line: &str| line.split(',').nth(6).unwrap().parse::<u64>().unwrap();
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
    assert_eq!(&rows[0][3], "read");
}
