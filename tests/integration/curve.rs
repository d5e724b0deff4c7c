//! The concurrency curve (knee, "you are here", USL fit) exists only when a run's phases
//! are steps of one workload profile that differ only in concurrency; otherwise
//! `show --json` says why and neither the terminal nor the report mention a curve.

use crate::common::{Scratch, text};

/// Three 1 s phases of one null-engine profile; `step` is each workload's own setting.
fn steps(s: &Scratch, name: &str, steps: [&str; 3]) -> std::path::PathBuf {
    s.scenario(&format!(
        "name: {name}\ndefaults: {{engine: null, rw: randread, bs: 4k, iodepth: 1, duration: 1s}}\nworkloads:\n  \
         a: {{{}}}\n  b: {{{}}}\n  c: {{{}}}\ntimeline:\n  - start: a\n  - start: b\n  - start: c\n",
        steps[0], steps[1], steps[2]
    ))
}

#[test]
fn a_depth_sweep_has_a_curve_marked_at_its_lowest_concurrency() {
    let s = Scratch::new("curve-depth");
    // the lowest depth is not the first phase: "you are here" is the lowest concurrency
    let scenario = steps(&s, "depths", ["iodepth: 4", "iodepth: 1", "iodepth: 8"]);
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("you are here (the lowest concurrency"), "{stdout}");
    let show = s.show_json();
    let analysis = &show["analysis"];
    assert!(analysis["curve_reason"].is_null(), "{analysis}");
    let curve = &analysis["curve"];
    let n: Vec<f64> = curve["points"].as_array().unwrap().iter().map(|p| p[0].as_f64().unwrap()).collect();
    assert_eq!(n, vec![4.0, 1.0, 8.0]);
    assert_eq!(curve["you_are_here"], 1, "{curve}");
    let page = s.dir.join("r.html");
    let out = s.run(&["report", "-o", page.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("you are here"), "no mark in the page");
}

#[test]
fn a_block_size_sweep_has_no_curve_and_says_why() {
    let s = Scratch::new("curve-bs");
    let scenario = steps(&s, "sizes", ["bs: 4k", "bs: 16k", "bs: 64k"]);
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let show = s.show_json();
    let analysis = &show["analysis"];
    assert!(analysis["curve"].is_null(), "{analysis}");
    assert_eq!(analysis["curve_reason"], "phases differ in block size", "{analysis}");
    let summary = String::from_utf8_lossy(&out.stdout).to_string();
    let out = s.run(&["show", "last"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let page = s.dir.join("r.html");
    let report = s.run(&["report", "-o", page.to_str().unwrap()]);
    assert_eq!(report.status.code(), Some(0), "{}", text(&report));
    let html = std::fs::read_to_string(&page).unwrap();
    for (what, said) in [("run", summary), ("show", String::from_utf8_lossy(&out.stdout).to_string()), ("report", html)]
    {
        for word in ["USL", "knee", "you are here", "You are here"] {
            assert!(!said.contains(word), "{what} mentions {word}:\n{said}");
        }
    }
    // `fit` refuses with the same reason
    let out = s.run(&["fit", "--run", "last"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("phases differ in block size"), "{}", text(&out));
}

#[test]
fn phases_at_one_concurrency_have_no_knee_and_a_flattening_set_is_warned_about() {
    let s = Scratch::new("curve-flat");
    // three working sets a `--set` makes one: every phase alike, at one depth
    let scenario = s.scenario(
        "name: sets\nvars:\n  small: 1m\ndefaults: {engine: null, rw: randread, bs: 4k, iodepth: 4, duration: 1s}\n\
         workloads:\n  a: {size: '${small}'}\n  b: {size: 2m}\n  c: {size: 4m}\ntimeline:\n  - start: a\n  - start: b\n  \
         - start: c\n",
    );
    let out = s.run(&["run", scenario.to_str().unwrap(), "--set", "size=2m"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("lint warning [flattened-sweep]: the --set given makes a, b, c identical"), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    for said in ["you are here", "knee", "USL"] {
        assert!(!stdout.contains(said), "{said}: {stdout}");
    }
    let analysis = &s.show_json()["analysis"];
    assert!(analysis["curve"].is_null(), "{analysis}");
    let reason = analysis["curve_reason"].as_str().unwrap();
    assert!(reason.contains("every phase runs at one concurrency (4): a curve needs at least two"), "{reason}");
}
