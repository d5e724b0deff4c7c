//! Scenarios with a timeline, end to end: workloads overlap and stop on cue, ramps add
//! workers phase by phase, hooks run and are timed, and expectations judge the run.

use crate::common::{Scratch, text};

fn phases(show: &serde_json::Value) -> Vec<(String, i64, i64)> {
    show["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (p["label"].as_str().unwrap().to_string(), p["start_t"].as_i64().unwrap(), p["end_t"].as_i64().unwrap())
        })
        .collect()
}

/// IOPS of `workload`'s `op` in the phase labelled `label`.
fn iops_in(show: &serde_json::Value, label: &str, workload: &str, op: &str) -> f64 {
    let p = show["phases"].as_array().unwrap().iter().find(|p| p["label"] == label).unwrap();
    let o = p["ops"].as_array().unwrap().iter().find(|o| o["workload"] == workload && o["op"] == op);
    o.unwrap_or_else(|| panic!("no {workload} {op} in phase {label}: {p}"))["iops"].as_f64().unwrap()
}

const COLOCATION: &str = "\
name: coloc
vars:
  before: 2
defaults: {target: TARGET, size: 16m}
workloads:
  oltp: {rw: randread, iodepth: 2, rate_iops: 500}
  dss: {rw: read, bs: 128k, iodepth: 2, duration: 2s}
timeline:
  - start: oltp
    duration: 6s
    async: true
    phase: before
  - wait: ${before}s
  - start: dss
    phase: during
  - mark: dss done
  - wait_for: oltp
expect:
  - oltp.read.iops >= 450 during during
  - oltp.achieved_rate >= 0.95
  - dss.read.p99 < 1us
";

#[test]
fn overlapping_workloads_make_phases_and_expectations_judge_them() {
    let s = Scratch::new("tl-coloc");
    let scenario = s.scenario(COLOCATION);
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    // dss cannot read 128k in under a microsecond: that expectation fails, the run exits 3
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("FAIL dss.read.p99 < 1us"), "{stdout}");
    let show = s.show_json();
    assert_eq!(show["run"]["status"], "completed");
    let p = phases(&show);
    let labels: Vec<&str> = p.iter().map(|(l, _, _)| l.as_str()).collect();
    assert_eq!(labels, vec!["before", "during", "oltp"], "{p:?}");
    // before: 2 s, during: dss's 2 s, then oltp alone to its end at 6 s
    assert_eq!(p[1].2 - p[1].1, 2, "{p:?}");
    assert_eq!(p[0].2, p[1].1);
    assert_eq!(p[2].2 - p[0].1, 6, "{p:?}");
    // an open loop never runs ahead of its schedule, but IOs held up in one phase are issued late
    // in the next, so only the whole run is bounded by the rate; how near 500 it gets depends on
    // how busy the machine is, so the expectations are checked against the figures they were
    // judged on
    let mut ios = 0.0;
    for (label, start, end) in &p {
        let iops = iops_in(&show, label, "oltp", "read");
        assert!(iops > 0.0, "{label}: {iops}");
        ios += iops * (end - start) as f64;
    }
    assert!(ios <= 500.0 * 6.0 * 1.02, "{ios} IOs in 6 s at 500 IOPS: {p:?}");
    assert!(iops_in(&show, "during", "dss", "read") > 0.0);
    let exp = show["expectations"].as_array().unwrap();
    let during = iops_in(&show, "during", "oltp", "read");
    assert_eq!(exp[0]["measured"].as_f64().unwrap(), during, "{exp:?}");
    assert_eq!(exp[0]["passed"].as_bool(), Some(during >= 450.0), "{exp:?}");
    let verdict = if during >= 450.0 { "pass" } else { "FAIL" };
    assert!(stdout.contains(&format!("{verdict} oltp.read.iops >= 450 during during")), "{stdout}");
    let achieved = exp[1]["measured"].as_f64().unwrap();
    assert_eq!(exp[1]["passed"].as_bool(), Some(achieved >= 0.95), "{exp:?}");
    assert_eq!(exp[2]["passed"].as_bool(), Some(false), "{exp:?}");
    assert_eq!(show["events"][0]["kind"], "mark");

    // --no-expect skips them; a var changes the timeline
    let out = s.run(&["run", scenario.to_str().unwrap(), "--no-expect", "--set", "before=1"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let show = s.show_json();
    assert!(show["expectations"].as_array().unwrap().is_empty());
    let p = phases(&show);
    assert_eq!(p[0].2 - p[0].1, 1, "before is 1 s now: {p:?}");
}

/// Two open-loop readers, the second ten times the first's rate.
const NOISE: &str = "name: noise
defaults: {engine: null, rw: randread, bs: 4k, duration: 4s}
workloads:
  slow: {rate_iops: 200}
  fast: {rate_iops: 2000}
timeline:
  - start: slow
  - start: fast
expect:
  - slow.iops >= 1 x slow.iops beyond noise
  - fast.read.mb_per_s > 2 x slow.read.mb_per_s beyond noise
";

#[test]
fn beyond_noise_fails_a_difference_the_seconds_do_not_show() {
    let s = Scratch::new("tl-noise");
    let out = s.run(&["run", s.scenario(NOISE).to_str().unwrap()]);
    // a workload against itself: the same seconds on both sides are never apart
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let show = s.show_json();
    let same = &show["expectations"][0];
    assert_eq!((same["passed"].as_bool(), same["beyond_noise"].as_bool()), (Some(false), Some(false)), "{same}");
    assert_eq!(same["measured"], same["reference"], "{same}");
    let answer = show["answer"]["answer"].as_str().unwrap();
    assert!(
        answer.starts_with("slow IOPS is level with slow's, within the noise of their per-second samples (±"),
        "{answer}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("FAIL slow.iops >= 1 x slow.iops beyond noise: 200 against 200, within the noise"),
        "{stdout}"
    );
    // an op's MB/s: judged on its own seconds, its verdict the figures' and the noise's
    let mb = &show["expectations"][1];
    let (m, r) = (mb["measured"].as_f64().unwrap(), mb["reference"].as_f64().unwrap());
    assert!(mb["noise"].as_f64().unwrap() >= 0.0, "{mb}");
    assert_eq!(mb["passed"].as_bool(), Some(mb["beyond_noise"] == true && m > 2.0 * r), "{mb}");
    // latency has no per-second samples whose mean is its figure: refused before running
    let latency = s.scenario(&NOISE.replace("slow.iops >= 1 x slow.iops", "fast.p99 < 1 x slow.p99"));
    let out = s.run(&["run", latency.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(":10: expect.0: `fast.p99 < 1 x slow.p99 beyond noise`: `beyond noise` judges rates"),
        "{stderr}"
    );
}

#[test]
fn a_ramp_adds_a_worker_per_step_and_each_step_is_a_phase() {
    let s = Scratch::new("tl-ramp");
    let scenario = s.scenario(
        "name: ramp\nworkloads:\n  vm: {target: TARGET, size: 16m, rw: randread, iodepth: 1, think_time: 10ms}\n\
         timeline:\n  - ramp: vm\n    add: 1\n    every: 2s\n    until: 3\n",
    );
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let show = s.show_json();
    let p = phases(&show);
    let labels: Vec<&str> = p.iter().map(|(l, _, _)| l.as_str()).collect();
    assert_eq!(labels, vec!["vm x1", "vm x2", "vm x3"]);
    assert!(p.iter().all(|(_, a, b)| b - a == 2), "{p:?}");
    // the steps are 1, 2, 3 workers: that many workers did IOs in each phase (counted in
    // the store, whatever the machine's load), and each did at most 100 IOPS (10 ms think
    // time), which only a worker too many would exceed
    let db = s.db();
    for (i, (label, start, end)) in p.iter().enumerate() {
        let n = (i + 1) as i64;
        let busy: i64 = db
            .query_row(
                "SELECT COUNT(DISTINCT worker) FROM samples WHERE t >= ?1 AND t < ?2 AND ops > 0",
                [start, end],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(busy, n, "{label}: workers that did IOs");
        let iops = iops_in(&show, label, "vm", "read");
        assert!(iops > 0.0 && iops <= 101.0 * n as f64, "{label}: {iops}");
    }
    assert_eq!(show["workloads"][0]["workers"], 3);
}

#[test]
fn stagger_starts_workers_one_after_another() {
    let s = Scratch::new("tl-stagger");
    let scenario = s.scenario(
        "name: stagger\nworkloads:\n  w: {target: TARGET, size: 16m, rw: randread, jobs: 3, duration: 4s}\n\
         timeline:\n  - start: w\n    stagger: 1s\n",
    );
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // worker i's first sample is i seconds after worker 0's
    let db = s.db();
    let mut stmt = db.prepare("SELECT worker, min(t) FROM samples GROUP BY worker ORDER BY worker").unwrap();
    let firsts: Vec<(i64, i64)> =
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(|r| r.unwrap()).collect();
    assert_eq!(firsts.len(), 3);
    assert_eq!(firsts.iter().map(|f| f.1 - firsts[0].1).collect::<Vec<_>>(), vec![0, 1, 2], "{firsts:?}");
}

#[test]
fn hooks_run_in_order_are_timed_and_a_failing_one_fails_the_run() {
    let s = Scratch::new("tl-hooks");
    let flag = s.dir.join("ready");
    let body = format!(
        "name: hooks\nworkloads:\n  w: {{target: TARGET, size: 8m, rw: randread, duration: 3s}}\n\
         timeline:\n  - start: w\n    async: true\n  - exec: sleep 0.3; touch {flag}\n  \
         - wait_until: {{command: 'test -e {flag}', timeout: 5s, interval: 100ms}}\n  - stop: w\n  - exec: exit 7\n",
        flag = flag.display()
    );
    let scenario = s.scenario(&body);
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let show = s.show_json();
    assert_eq!(show["run"]["status"], "failed");
    assert!(show["run"]["error"].as_str().unwrap().contains("exec `exit 7` failed (exit 7)"), "{show}");
    let events = show["events"].as_array().unwrap();
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, vec!["exec", "wait_until", "exec"]);
    assert!(events[0]["took_ms"].as_i64().unwrap() >= 300);
    assert_eq!(events[1]["status"], 0);
    assert_eq!(events[2]["status"], 7);
    // stopped on cue, before its 3 s were up
    let stopped = show["workloads"][0]["stopped_at"].as_f64().unwrap();
    assert!(stopped < 3.0, "stopped at {stopped}");

    // a probe that never succeeds fails the run at its timeout
    let scenario = s.scenario(
        "name: never\nworkloads:\n  w: {target: TARGET, size: 8m, rw: randread, duration: 1s}\n\
         timeline:\n  - wait_until: {tcp: '127.0.0.1:1', timeout: 1s, interval: 200ms}\n  - start: w\n",
    );
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("not ready after 1 s"), "{}", text(&out));
}

#[test]
fn timeline_mistakes_name_file_line_and_key() {
    let s = Scratch::new("tl-errors");
    for (body, says) in [
        ("timeline:\n  - start: w\n    every: 2s\n", ":6: timeline.0.every: does not apply to `start`"),
        ("timeline:\n  - stop: w\n  - start: w\n", ":5: timeline.0.stop: `w` has not been started"),
        ("timeline:\n  - start: w\n  - wait: 2s\n    mark: x\n", ":7: timeline.1.mark: one action per step"),
        ("timeline:\n  - start: w\nexpect:\n  - w.read.p99 < 5\n", ":7: expect.0: `5` is not a latency"),
        ("timeline:\n  - start: w\n    duration: ${long}\n", ":6: `${long}` is not a variable"),
    ] {
        let scenario = s.scenario(&format!(
            "name: bad\nworkloads:\n  w: {{target: TARGET, size: 8m, rw: randread, duration: 1s}}\n{body}"
        ));
        let out = s.run(&["run", scenario.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(says), "expected `{says}` in: {stderr}");
    }
}

#[test]
fn phase_names_a_wait_a_mark_and_a_wait_for() {
    // `phase:` on a wait names the phase it waits in; on a mark or a wait_for, the phase
    // from that step on (here: once `noise` has ended), and expectations name them
    let s = Scratch::new("tl-named");
    let scenario = s.scenario(
        "name: named\ndefaults: {target: TARGET, size: 16m}\n\
         workloads:\n  base: {rw: randread, iodepth: 1, rate_iops: 200}\n  noise: {rw: read, bs: 128k, iodepth: 2, duration: 2s}\n\
         timeline:\n  - start: base\n    duration: 8s\n    async: true\n  - wait: 2s\n    phase: warm\n\
         \x20 - mark: settled\n    phase: steady\n  - wait: 2s\n  - start: noise\n    async: true\n\
         \x20 - wait_for: noise\n    phase: after\n  - wait_for: base\n\
         expect:\n  - base.iops during steady >= 0.5 x warm\n  - base.p99 during after <= 1000 x steady\n",
    );
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert!(matches!(out.status.code(), Some(0 | 3)), "{}", text(&out));
    let show = s.show_json();
    let p = phases(&show);
    let labels: Vec<&str> = p.iter().map(|(l, _, _)| l.as_str()).collect();
    assert_eq!(labels, vec!["warm", "steady", "base+noise", "after"], "{p:?}");
    // whole seconds, one after another: 2 s each
    assert!(p.iter().all(|(_, a, b)| b - a == 2), "{p:?}");
    assert!(p.windows(2).all(|w| w[0].2 == w[1].1), "{p:?}");
    assert_eq!(
        (show["events"][0]["kind"].as_str(), show["events"][0]["label"].as_str()),
        (Some("mark"), Some("settled"))
    );
    // the relative expectations found their phases: a figure and one to compare with
    for e in show["expectations"].as_array().unwrap() {
        assert!(e["measured"].as_f64().unwrap() > 0.0 && e["reference"].as_f64().unwrap() > 0.0, "{e}");
    }
}

#[test]
fn the_answer_comes_first_and_runs_marks_a_run_whose_expectations_failed() {
    let s = Scratch::new("tl-answer");
    let scenario = s.scenario(
        "name: answer\nquestion: does it read at all, and in a nanosecond?\n\
         workloads:\n  w: {target: TARGET, size: 16m, rw: randread, duration: 2s}\n\
         expect:\n  - w.read.iops > 0\n  - w.read.p99 < 1ns\n",
    );
    let out = s.run(&["run", scenario.to_str().unwrap(), "-q"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let show = s.run(&["show"]);
    let stdout = String::from_utf8_lossy(&show.stdout);
    let first = stdout.lines().next().unwrap();
    assert!(first.starts_with("does it read at all, and in a nanosecond? w read IOPS "), "{stdout}");
    assert!(first.contains("(limit > 0); w read p99 ") && first.ends_with("(limit < 1.00 ns): FAIL"), "{stdout}");
    let json = s.show_json();
    assert_eq!(json["answer"]["passed"], false);
    assert_eq!(json["answer"]["question"], "does it read at all, and in a nanosecond?");
    // the report's headline says it too
    let page = s.dir.join("report.html");
    let out = s.run(&["report", "last", "-o", page.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<p class=\"answer fail\" id=\"answer\">does it read at all, and in a nanosecond? w read IOPS")
    );
    // the same scenario without judging: not marked
    let out = s.run(&["run", scenario.to_str().unwrap(), "-q", "--no-expect"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(s.show_json()["answer"].is_null());
    let runs = s.run(&["runs"]);
    let table = String::from_utf8_lossy(&runs.stdout);
    let marked: Vec<bool> = table.lines().skip(1).map(|l| l.contains("expectations FAILED")).collect();
    assert_eq!(marked, vec![true, false], "{table}");
    // the verdict stays whole at 80 columns, the headline giving way
    let narrow = s.fathom(&["runs"]).env("COLUMNS", "80").output().unwrap();
    let table = String::from_utf8_lossy(&narrow.stdout);
    assert!(table.lines().all(|l| l.chars().count() <= 80), "{table}");
    let marked: Vec<bool> = table.lines().skip(1).map(|l| l.contains("expectations FAILED")).collect();
    assert_eq!(marked, vec![true, false], "{table}");
    let runs: serde_json::Value = serde_json::from_slice(&s.run(&["runs", "--json"]).stdout).unwrap();
    let passed: Vec<&serde_json::Value> = runs.as_array().unwrap().iter().map(|r| &r["expectations_passed"]).collect();
    assert_eq!(passed, vec![&serde_json::json!(false), &serde_json::Value::Null], "{runs}");
}

/// `--repeat 3` runs the scenario three times as one group, which `show` names and
/// `compare group:FIRST` reads: the wait's duration in each run, with its least, median
/// and most and the range over the median. A group that does not exist is refused.
#[test]
fn repeated_runs_are_grouped_and_compare_gives_each_timed_events_spread() {
    let s = Scratch::new("repeat");
    let scenario = s.scenario(
        "name: recover\nworkloads:\n  w: {engine: null, rw: randread, bs: 4k, duration: 1s}\ntimeline:\n  - start: w\n  \
         - wait_until: {command: 'sleep 0.1', timeout: 10s, interval: 1s}\n",
    );
    let out = s.run(&["run", scenario.to_str().unwrap(), "--repeat", "3", "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("runs of group 1: `fathom compare group:1`"),
        "{}",
        text(&out)
    );
    let groups: Vec<(i64, Option<i64>)> = {
        let db = s.db();
        let mut stmt = db.prepare("SELECT id, repeat_group FROM runs ORDER BY id").unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect()
    };
    assert_eq!(groups, [(1, Some(1)), (2, Some(1)), (3, Some(1))]);
    let shown = s.run(&["show", "2"]);
    assert!(String::from_utf8_lossy(&shown.stdout).contains(" · repeat group:1"), "{}", text(&shown));

    let out = s.run(&["compare", "group:1", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let cmp: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let events = cmp["events"].as_array().unwrap();
    assert_eq!(events.len(), 1, "{events:?}");
    let e = &events[0];
    assert_eq!(e["kind"], "wait_until");
    let took: Vec<f64> = e["took_ms"].as_array().unwrap().iter().map(|t| t.as_f64().unwrap()).collect();
    assert_eq!(took.len(), 3);
    // each wait lasted at least the command's 0.1 s
    assert!(took.iter().all(|&t| t >= 100.0), "{took:?}");
    let mut sorted = took.clone();
    sorted.sort_by(f64::total_cmp);
    let spread = &e["spread"];
    let figures = [&spread["min"], &spread["median"], &spread["max"]].map(|v| v.as_f64().unwrap());
    assert_eq!(figures, [sorted[0], sorted[1], sorted[2]]);
    let relative = spread["relative"].as_f64().unwrap();
    assert!((relative - (sorted[2] - sorted[0]) / sorted[1]).abs() < 1e-9, "{spread}");
    let page = s.dir.join("group.html");
    let table = s.run(&["compare", "group:1", "-o", page.to_str().unwrap()]);
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(table.contains("timed events over 3 runs"), "{table}");
    assert!(table.lines().any(|l| l.starts_with("wait_until") && l.ends_with('%')), "{table}");
    let html = std::fs::read_to_string(&page).unwrap();
    let section = &html[html.find("<section id=\"repeats\">").expect("the page's timed events")..];
    assert!(section.contains("wait_until"), "{section}");

    let out = s.run(&["compare", "group:7"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`group:7`: no runs of group 7"), "{}", text(&out));
}
