//! `fathom compare` as a performance engineer reads it: the configuration differences
//! named before any figure, phases matched by what ran and each figure shown once, a
//! change called better or worse only beyond the runs' own noise, "nothing in common"
//! said plainly, and the page's time series aligned at each phase's start. Short real
//! runs of the null engine; the noise rule itself is unit-tested on given samples
//! (`analysis::noise`), so nothing here depends on how busy the machine is.

use crate::common::{Scratch, text};
use serde_json::Value;

/// Two steps of one profile, each `duration` long, at a fixed rate (every second holds
/// the same number of IOs however busy the machine is).
fn steps(duration: &str) -> String {
    format!(
        "name: steps\ndefaults: {{engine: null, rw: randread, bs: 4k, rate_iops: 200, duration: {duration}}}\n\
         workloads:\n  qd1: {{iodepth: 1}}\n  qd4: {{iodepth: 4}}\ntimeline:\n  - start: qd1\n  - start: qd4\n"
    )
}

fn run(s: &Scratch, body: &str) {
    let scenario = s.scenario(body);
    let out = s.run(&["run", scenario.to_str().unwrap(), "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

fn compare_json(s: &Scratch, args: &[&str]) -> Value {
    let mut all = vec!["compare"];
    all.extend(args);
    all.push("--json");
    let out = s.run(&all);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn stdout(s: &Scratch, args: &[&str]) -> String {
    let out = s.run(args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn steps_of_another_length_are_named_before_any_figure_and_each_row_is_shown_once() {
    let s = Scratch::new("compare-durations");
    run(&s, &steps("3s"));
    run(&s, &steps("1s"));
    let table = stdout(&s, &["compare", "1", "2"]);
    // one line first says how the later run's IOPS moved, and how much of it is noise
    let summary =
        table.lines().find(|l| l.starts_with("run 2 against run 1: IOPS ")).unwrap_or_else(|| panic!("{table}"));
    assert!(summary.ends_with("beyond the noise)") && summary.contains('%'), "{summary}");
    let named = table.find("qd1: duration 3s -> 1s").unwrap_or_else(|| panic!("duration not named:\n{table}"));
    assert!(table.contains("qd4: duration 3s -> 1s"), "{table}");
    let figures = table.find("figure").unwrap_or_else(|| panic!("no table:\n{table}"));
    assert!(named < figures, "the difference comes before the figures:\n{table}");

    let cmp = compare_json(&s, &["1", "2"]);
    let differs = cmp["configuration"][0]["workloads"].as_array().unwrap();
    assert!(
        differs.iter().any(|d| d["setting"] == "duration" && d["workload"] == "qd1" && d["key"] == "duration"),
        "{differs:?}"
    );
    // phases matched by what ran: qd1 with qd1, qd4 with qd4, though they began at
    // other times of their runs
    let scopes: Vec<(&str, Vec<&str>)> = cmp["scopes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["label"].as_str().unwrap(),
                s["phases"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect(),
            )
        })
        .collect();
    assert_eq!(scopes, [("qd1", vec!["qd1", "qd1"]), ("qd4", vec!["qd4", "qd4"])]);
    // each figure once: no row repeats another's workload, op and figure in one scope,
    // and a phased run has no second copy of its phases as "whole run"
    let rows = cmp["rows"].as_array().unwrap();
    let mut keys: Vec<String> =
        rows.iter().map(|r| format!("{} {} {} {}", r["scope"], r["workload"], r["op"], r["metric"])).collect();
    let n = keys.len();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), n, "a row appears twice: {keys:?}");
    assert!(rows.iter().all(|r| r["scope"] != "whole run"), "phases and the whole run both shown");
    assert!(rows.iter().all(|r| r["workload"] == r["scope"]), "each phase shows the workload that ran in it");
    assert_eq!(n, 2 * 5, "two phases, one workload and op each, five figures");

    // the page: each phase's series start at the phase's start, not the run's
    let page = s.dir.join("compare.html");
    let out = s.run(&["compare", "1", "2", "-o", page.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("qd1: duration 3s -&gt; 1s"), "the page names the difference");
    let at = html.find("<svg id=\"cmp-1-iops\"").expect("the second phase's IOPS overlaid");
    let chart = &html[at..at + html[at..].find("</svg>").unwrap()];
    assert!(chart.contains("IOPS: phase qd4"), "{chart}");
    let starts: Vec<f64> =
        chart.split("data-from=\"").skip(1).map(|rest| rest[..rest.find('"').unwrap()].parse().unwrap()).collect();
    assert_eq!(starts.len(), 2, "one series per run: {chart}");
    // qd4 began about 1 s into run 2 and 3 s into run 1; on the page both begin at 0
    assert!(starts.iter().all(|&x| x < 1.0), "series not aligned at the phase start: {starts:?}");
}

#[test]
fn the_same_run_twice_is_within_the_noise() {
    let s = Scratch::new("compare-same");
    run(&s, &steps("4s"));
    run(&s, &steps("4s"));
    let cmp = compare_json(&s, &["1", "2"]);
    assert_eq!(cmp["configuration"][0]["workloads"], serde_json::json!([]), "the same scenario");
    let rows = cmp["rows"].as_array().unwrap();
    // at a fixed rate, each second of either run holds about the same IOs: whatever
    // the small change of the whole, it is not better or worse
    for r in rows.iter().filter(|r| r["metric"] == "iops") {
        assert_eq!(r["verdict"][1], "~", "{r}");
        assert!(r["verdict"][0].is_null(), "the first run is the baseline");
        let i = &r["intervals"][1];
        assert!(i["samples"].as_u64().unwrap() >= 2, "per-second samples of the phase: {r}");
    }
    let table = stdout(&s, &["compare", "1", "2"]);
    let iops: Vec<&str> = table.lines().filter(|l| l.split_whitespace().nth(3) == Some("IOPS")).collect();
    assert_eq!(iops.len(), 2, "{table}");
    for line in iops {
        assert!(line.trim_end().ends_with('~'), "{line}");
        assert!(!line.contains("better") && !line.contains("worse") && !line.contains('*'), "{line}");
    }
    assert!(table.contains("the same configuration"), "{table}");
}

#[test]
fn runs_with_nothing_in_common_say_so_plainly() {
    let s = Scratch::new("compare-unrelated");
    run(&s, &steps("1s"));
    run(&s, "name: other\nworkloads:\n  w: {engine: null, rw: randwrite, duration: 1s}\n");
    let cmp = compare_json(&s, &["1", "2"]);
    assert_eq!(cmp["nothing_in_common"], true);
    assert_eq!(cmp["rows"], serde_json::json!([]));
    let table = stdout(&s, &["compare", "1", "2"]);
    assert!(
        table.contains(
            "nothing in common: no phase of these runs ran the same workloads (run 1 ran qd1, qd4; run 2 ran w)"
        ),
        "{table}"
    );
    assert!(table.contains("scenario: steps -> other"), "{table}");
    // another run's workload of another name is another workload, not qd1 changed
    assert!(table.contains("workload added: w") && table.contains("workload removed: qd1"), "{table}");
    assert!(!table.contains("figure") && !table.contains(" - "), "no table of dashes:\n{table}");
    assert!(table.lines().count() < 20, "{table}");
}

/// Two runs of a depth curve compared: each run's points and its USL fit are one colour
/// (the style tells the points from the fit), so a reader follows a run across them.
#[test]
fn a_run_keeps_one_colour_for_its_points_and_its_fit() {
    let s = Scratch::new("compare-colours");
    let curve = "name: depths\ndefaults: {engine: null, rw: randread, duration: 1s}\nworkloads:\n  \
                 qd1: {iodepth: 1}\n  qd2: {iodepth: 2}\n  qd4: {iodepth: 4}\n  qd8: {iodepth: 8}\ntimeline:\n  \
                 - start: qd1\n  - start: qd2\n  - start: qd4\n  - start: qd8\n";
    run(&s, curve);
    run(&s, curve);
    let page = s.dir.join("compare.html");
    let out = s.run(&["compare", "1", "2", "-o", page.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    let at = html.find("<svg id=\"cmp-curve-usl\"").expect("the runs' USL charts overlaid");
    let chart = &html[at..at + html[at..].find("</svg>").unwrap()];
    // the colour each series is drawn in, by its name
    let colour = |name: &str| -> String {
        let from = chart.find(&format!("data-name=\"{name}\"")).unwrap_or_else(|| panic!("no {name}: {chart}"));
        let rest = &chart[from..];
        let hash = rest.find('#').unwrap();
        rest[hash..hash + 7].to_string()
    };
    for run in ["run 1", "run 2"] {
        assert_eq!(colour(&format!("{run}: measured")), colour(&format!("{run}: USL fit")), "{chart}");
    }
    assert_ne!(colour("run 1: measured"), colour("run 2: measured"), "{chart}");
}
