//! Workloads bounded by size or count (`io_size`, `loops`, `number_ios`): they end by
//! themselves after exactly their IO, a duration caps them, and the timeline goes on
//! when they end. Run by fathom's engine and by the real fio.

use crate::common::{Scratch, text};

/// (IOs, bytes) the store holds for workload `idx` of the last run, per worker.
fn per_worker(s: &Scratch, idx: i64) -> Vec<(i64, i64)> {
    let db = s.db();
    let mut stmt = db
        .prepare(
            "SELECT SUM(ops), SUM(bytes) FROM samples WHERE workload_idx = ?1 AND op IN (0, 1)
             AND run_id = (SELECT MAX(id) FROM runs) GROUP BY worker ORDER BY worker",
        )
        .unwrap();
    stmt.query_map([idx], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
}

fn phases(show: &serde_json::Value) -> Vec<(String, i64, i64)> {
    let phases = show["phases"].as_array().unwrap().iter();
    phases
        .map(|p| (p["label"].as_str().unwrap().into(), p["start_t"].as_i64().unwrap(), p["end_t"].as_i64().unwrap()))
        .collect()
}

const ONE_PASS: &str = "\
name: one-pass
defaults: {target: TARGET, size: 8m, engine: ENGINE}
workloads:
  seq: {rw: read, bs: 64k, iodepth: 4, loops: 1}
  split: {rw: read, bssplit: 4k/50:64k/30:192k/20, jobs: 2, io_size: 8m}
timeline:
  - start: seq
  - start: split
";

/// One pass over an 8 MiB file moves exactly 8 MiB, in 8 MiB / bs IOs; with a split of
/// sizes too, and each of two workers does its own pass.
#[test]
fn one_pass_over_size_moves_exactly_its_bytes() {
    for engine in ["io_uring", "psync"] {
        let s = Scratch::new(&format!("bounded-pass-{engine}"));
        let scenario = s.scenario(&ONE_PASS.replace("ENGINE", engine));
        let out = s.run(&["run", scenario.to_str().unwrap()]);
        assert!(out.status.success(), "{}", text(&out));
        assert!(String::from_utf8_lossy(&out.stderr).contains("until one pass per worker"), "{}", text(&out));
        assert_eq!(per_worker(&s, 0), vec![(128, 8 << 20)], "{engine}");
        let split = per_worker(&s, 1);
        assert_eq!(split.iter().map(|w| w.1).collect::<Vec<_>>(), vec![8 << 20, 8 << 20], "{engine}");
        // the two ran one after the other, each in its own phase
        let show = s.show_json();
        let p = phases(&show);
        assert_eq!(p.iter().map(|p| p.0.as_str()).collect::<Vec<_>>(), vec!["seq", "split"], "{p:?}");
        assert!(p[0].2 <= p[1].1, "{p:?}");
        // each phase measured its workload, though it ran for less than a second
        for phase in show["phases"].as_array().unwrap() {
            let reads = phase["ops"].as_array().unwrap().iter().find(|o| o["op"] == "read");
            assert!(reads.is_some_and(|o| o["iops"].as_f64().unwrap() > 0.0), "{engine}: {phase}");
        }
    }
}

/// `number_ios: 1000` gives each worker exactly 1000 IOs, whatever its depth.
#[test]
fn number_ios_gives_each_worker_that_many() {
    let s = Scratch::new("bounded-ios");
    let scenario = s.scenario(
        "name: ios\nworkloads:\n  r: {target: TARGET, size: 4m, rw: randrw, jobs: 3, iodepth: 8, engine: psync, number_ios: 1000}\n",
    );
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(per_worker(&s, 0).iter().map(|w| w.0).collect::<Vec<_>>(), vec![1000, 1000, 1000]);
}

/// A bounded workload ends by itself and the timeline goes on: a `start` waits for it,
/// the next workload's phase follows its phase, and `wait_for` waits for an async one.
#[test]
fn a_bounded_workload_ends_its_phase_and_the_next_starts() {
    let s = Scratch::new("bounded-timeline");
    let scenario = s.scenario(
        "name: tl\ndefaults: {target: TARGET, size: 4m}\nworkloads:\n  \
         fill: {rw: write, bs: 128k, loops: 2}\n  read: {rw: randread, number_ios: 500}\n  after: {rw: randread, duration: 1s}\n\
         timeline:\n  - start: fill\n  - start: read\n    async: true\n  - wait_for: read\n  - start: after\n",
    );
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(per_worker(&s, 0), vec![(64, 8 << 20)]);
    assert_eq!(per_worker(&s, 1).iter().map(|w| w.0).collect::<Vec<_>>(), vec![500]);
    let p = phases(&s.show_json());
    assert_eq!(p.iter().map(|p| p.0.as_str()).collect::<Vec<_>>(), vec!["fill", "read", "after"], "{p:?}");
    assert!(p.windows(2).all(|w| w[0].2 <= w[1].1 && w[0].1 < w[0].2), "{p:?}");
    // the store says how long each ran, not the 30 days that capped it
    let db = s.db();
    let ends: Vec<(i64, f64)> = db
        .prepare("SELECT end_t, stopped_at FROM workloads ORDER BY idx")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for (end_t, stopped_at) in &ends[..2] {
        assert!(*end_t as f64 >= *stopped_at && (*end_t as f64) < stopped_at + 1.0, "{ends:?}");
    }
    let out = s.run(&["export", "last", "--format", "openmetrics"]);
    assert!(out.status.success(), "{}", text(&out));
}

/// A duration caps a bound that would take longer: at 100 IOs per second, 64 MiB of
/// 4k reads would take minutes; the workload stops at its 2 s with fewer bytes.
#[test]
fn duration_caps_a_bound_that_would_take_longer() {
    let s = Scratch::new("bounded-cap");
    let scenario = s.scenario(
        "name: cap\nworkloads:\n  slow: {target: TARGET, size: 64m, rw: randread, rate_iops: 100, io_size: 64m, duration: 2s}\n",
    );
    let started = std::time::Instant::now();
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let (ios, bytes) = per_worker(&s, 0)[0];
    assert!(bytes < 64 << 20 && ios <= 2 * 100 + 10, "{ios} IOs, {bytes} bytes");
    let p = phases(&s.show_json());
    assert_eq!(p.len(), 1, "{p:?}");
    assert!((2..=3).contains(&(p[0].2 - p[0].1)), "ended near its duration: {p:?}");
    // laying out 64 MiB and starting take a while on a busy machine; minutes would not
    assert!(started.elapsed().as_secs() < 60, "{:?}", started.elapsed());
}

/// Bad bounds are refused before anything runs, at their line.
#[test]
fn bad_bounds_are_refused_at_their_line() {
    let s = Scratch::new("bounded-errors");
    for (profile, expected) in [
        ("rw: read, loops: 0", "scenario.yaml:3: workloads.w.loops: must be at least 1"),
        ("rw: read, number_ios: 0", "scenario.yaml:3: workloads.w.number_ios: must be at least 1"),
        ("rw: read, bs: 64k, io_size: 4k", "scenario.yaml:3: workloads.w.io_size: 4k is less than one block"),
        ("rw: read", "scenario.yaml:3: workloads.w: missing `duration`"),
    ] {
        let scenario = s.scenario(&format!("name: e\nworkloads:\n  w: {{target: TARGET, size: 1m, {profile}}}\n"));
        let out = s.run(&["run", scenario.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{profile}: {}", text(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expected), "{profile}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// `engine: fio` passes the bound to fio, which ends by itself after the same bytes.
#[test]
fn fio_ends_after_the_same_bytes() {
    let s = Scratch::new("bounded-fio");
    let scenario = s.scenario(
        "name: fio\nworkloads:\n  seq: {target: TARGET, size: 8m, rw: read, bs: 64k, jobs: 2, loops: 1, engine: fio}\n",
    );
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(per_worker(&s, 0), vec![(128, 8 << 20), (128, 8 << 20)]);
}
