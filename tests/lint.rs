//! Lint, end to end: `fathom lint` finds mistakes without running, `--strict` refuses
//! them, and a run records what only measuring shows (a depth that cannot carry the
//! rate, a busy generator).

mod common;

use common::{Scratch, text};

fn codes(show: &serde_json::Value) -> Vec<String> {
    show["warnings"].as_array().unwrap().iter().map(|w| w["code"].as_str().unwrap().to_string()).collect()
}

#[test]
fn lint_finds_before_running_and_strict_refuses() {
    let s = Scratch::new("lint-before");
    let scenario = s.scenario(
        "name: cached\nworkloads:\n  w: {target: [TARGET/a.dat, TARGET/b.dat], rw: randread, direct: false, size: 16m, \
         iodepth: 1, duration: 5s}\n",
    );
    let out = s.run(&["lint", scenario.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let found: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let found: Vec<&str> = found.as_array().unwrap().iter().map(|f| f["code"].as_str().unwrap()).collect();
    assert_eq!(found, vec!["page-cache", "depth-across-targets", "short-run"]);
    let out = s.run(&["lint", scenario.to_str().unwrap(), "--strict"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("lint warning [page-cache]"), "{}", text(&out));
    // run --strict refuses before writing anything
    let out = s.run(&["run", scenario.to_str().unwrap(), "--strict"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(!s.data().join("a.dat").exists(), "nothing laid out");
    assert!(!s.dir.join("results/fathom.db").exists(), "no run recorded");
    // without --strict it runs, and the findings are stored with it
    let out = s.run(&["run", scenario.to_str().unwrap(), "--set", "duration=1s"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let show = s.show_json();
    assert!(codes(&show).contains(&"lint-page-cache".to_string()), "{show}");
}

#[test]
fn a_run_records_what_only_measuring_shows() {
    let s = Scratch::new("lint-after");
    // depth 1 cannot carry 2 million IOPS at any real latency
    let scenario = s.scenario(
        "name: deep\nworkloads:\n  w: {target: TARGET, rw: randread, size: 16m, iodepth: 1, rate_iops: 2000000, \
         duration: 2s}\n",
    );
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let show = s.show_json();
    assert!(codes(&show).contains(&"lint-depth-limits-rate".to_string()), "{:?}", codes(&show));
    assert!(String::from_utf8_lossy(&out.stdout).contains("IOs in flight (Little's law)"), "{}", text(&out));

    // the null engine does no IO: its one worker keeps a core busy, and says so
    let scenario = s.scenario("name: busy\nworkloads:\n  w: {engine: null, rw: randread, duration: 2s}\n");
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let show = s.show_json();
    assert!(codes(&show).contains(&"lint-generator-bound".to_string()), "{:?}", codes(&show));
}
