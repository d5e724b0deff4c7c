//! What each phase of a run says it ran, and what differs from the phase before, in
//! `show --json` (`ran`, `differs`) and `show`: the facts an analysis checks before it
//! treats phases as points of one curve.

use crate::common::{Scratch, text};
use serde_json::{Value, json};

const STEPS: &str = "\
name: steps
defaults: {target: TARGET, size: 8m, duration: 1s, engine: psync, rw: randread, bs: 4k, file: steps}
workloads:
  qd1: {iodepth: 1}
  qd4: {iodepth: 4}
  big: {iodepth: 4, bs: 64k}
  vm: {iodepth: 2, duration: 3s}
  bg: {iodepth: 1, duration: 1s}
timeline:
  - start: qd1
  - start: qd4
  - start: big
  - ramp: vm
    add: 1
    every: 1s
    until: 3
    async: true
  - wait: 1s
  - start: bg
";

/// One workload in a phase's `ran`: its name, workers and depth.
type Ran = (String, i64, i64);

/// Per phase: its label, then each workload that ran.
fn ran(show: &Value) -> Vec<(String, Vec<Ran>)> {
    let phases = show["phases"].as_array().unwrap();
    phases
        .iter()
        .map(|p| {
            let ran = p["ran"].as_array().unwrap_or_else(|| panic!("no `ran` in {p}"));
            let ran = ran
                .iter()
                .map(|r| {
                    assert_eq!(r["hosts"], json!(["localhost"]), "{r}");
                    (
                        r["workload"].as_str().unwrap().into(),
                        r["workers"].as_i64().unwrap(),
                        r["depth"].as_i64().unwrap(),
                    )
                })
                .collect();
            (p["label"].as_str().unwrap().to_string(), ran)
        })
        .collect()
}

/// Per phase: the settings that differ from the phase before, as `setting workload`.
fn differs(show: &Value) -> Vec<Vec<String>> {
    let phases = show["phases"].as_array().unwrap();
    phases
        .iter()
        .map(|p| {
            let d = p["differs"].as_array().unwrap_or_else(|| panic!("no `differs` in {p}"));
            d.iter()
                .map(|d| format!("{} {}", d["setting"].as_str().unwrap(), d["workload"].as_str().unwrap()))
                .collect()
        })
        .collect()
}

#[test]
fn each_phase_says_what_ran_and_what_differs_from_the_one_before() {
    let s = Scratch::new("phases-steps");
    let scenario = s.scenario(STEPS);
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let show = s.show_json();
    let w = |name: &str, workers: i64, depth: i64| (name.to_string(), workers, depth);
    assert_eq!(
        ran(&show),
        [
            ("qd1".to_string(), vec![w("qd1", 1, 1)]),
            ("qd4".into(), vec![w("qd4", 1, 4)]),
            ("big".into(), vec![w("big", 1, 4)]),
            ("vm x1".into(), vec![w("vm", 1, 2)]),
            ("vm x2+bg".into(), vec![w("vm", 2, 2), w("bg", 1, 1)]),
            ("vm x3".into(), vec![w("vm", 3, 2)]),
        ],
        "{show}"
    );
    let expected: [&[&str]; 6] = [
        &[],
        // a step of one profile: only its depth
        &["depth qd4"],
        // the next step replaces it: its block size
        &["block_size big"],
        &["depth vm", "block_size vm"],
        // a ramp adds a worker, and another workload joins
        &["workers vm", "added bg"],
        &["workers vm", "removed bg"],
    ];
    assert_eq!(differs(&show), expected, "{show}");
    let depth = &show["phases"][1]["differs"][0];
    assert_eq!((&depth["before"], &depth["after"]), (&json!(1), &json!(4)), "{depth}");
    let bs = &show["phases"][2]["differs"][0];
    assert_eq!((&bs["before"], &bs["after"]), (&json!("4k"), &json!("64k")), "{bs}");
    // the keys that were there before are as they were
    for key in ["idx", "label", "start_t", "end_t", "ops"] {
        assert!(show["phases"][0].get(key).is_some(), "{key} missing: {}", show["phases"][0]);
    }
    // Little's law reads the workers of each phase: vm had 1, 2, then 3 workers of depth 2
    let little = show["analysis"]["littles_law"].as_array().unwrap();
    let vm = little.iter().find(|l| l["workload"] == "vm").unwrap();
    let expected = vm["expected"].as_f64().unwrap();
    assert!(expected > 2.0 && expected < 6.0, "between 1 and 3 workers of depth 2: {vm}");

    let out = s.run(&["show"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("what differs from the phase before:"), "{stdout}");
    assert!(stdout.contains("  qd4: depth\n") && stdout.contains("  vm x2+bg: workers, workloads added\n"), "{stdout}");

    // the report shows the same facts
    let page = s.dir.join("report.html");
    let out = s.run(&["report", "-o", page.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    for (phase, differs) in [("qd4", "depth"), ("vm x2+bg", "workers, workloads added")] {
        let cell = format!("data-phase=\"{phase}\" data-metric=\"differs\">{differs}</td>");
        assert!(html.contains(&cell), "no {cell} in the report");
    }
    assert!(html.contains("vm ×2 at depth 2, bg ×1 at depth 1"), "the report's phases say what ran");

    // a store written before phases recorded what ran: each phase has the workloads
    // whose time overlaps it, with all their workers
    s.db().execute_batch("DELETE FROM phase_workloads").unwrap();
    let old = s.show_json();
    let phases = ran(&old);
    assert_eq!(phases[0].1, [w("qd1", 1, 1)], "{old}");
    assert_eq!(phases[4].1, [w("vm", 3, 2), w("bg", 1, 1)], "{old}");
}
