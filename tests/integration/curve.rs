//! The concurrency curve (knee, "you are here", USL fit) of a run whose `--set` makes
//! its phases alike: the run warns as it starts, and has no curve. How a stored run's
//! phases make a curve or say why not is tested in-process on a store fixture
//! (`cli::fit`'s tests).

use crate::common::{Scratch, text};

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
