//! Errors that help: an unknown name offers the nearest known one, a refused `--set` is
//! blamed alone, `lint` refuses what `run` would refuse before running, and a fio file
//! is refused for the option that matters first. Each is one line on stderr and exit 2.

use crate::common::{Scratch, text};

/// An X-Ray scenario of our own with vars `oltp_iops` and `dss_nodes`.
const XRAY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/xray/colocation");

/// fathom's stderr for `args`, which must be refused as bad input in one line.
fn refused(s: &Scratch, args: &[&str]) -> String {
    let out = s.run(args);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    err
}

const OLTP: &str = "\
name: colocated
defaults:
  target: TARGET
  duration: 1s
  size: 16m
workloads:
  oltp:
    rw: randread
  dss:
    rw: read
    bs: 1m
";

#[test]
fn an_unknown_key_offers_the_nearest() {
    let s = Scratch::new("help-key");
    let p = s.scenario(&OLTP.replace("rw: randread", "rw: randread\n    io_depth: 4"));
    let err = refused(&s, &["lint", p.to_str().unwrap()]);
    assert!(
        err.contains(
            "scenario.yaml:9: workloads.oltp: unknown key `io_depth` (did you mean `iodepth`?): expected one of"
        ),
        "{err}"
    );
    let err = refused(&s, &["lint", p.to_str().unwrap(), "--set", "oltp.io_depth=4"]);
    assert!(err.contains("(did you mean `iodepth`?)"), "{err}");
}

#[test]
fn an_unknown_workload_offers_the_nearest() {
    let s = Scratch::new("help-workload");
    let p = s.scenario(&format!("{OLTP}timeline:\n  - start: olpt\n"));
    let err = refused(&s, &["lint", p.to_str().unwrap()]);
    assert!(err.contains("timeline.0.start: no workload named `olpt` (did you mean `oltp`?)"), "{err}");
    let p = s.scenario(&format!("{OLTP}expect:\n  - olpt.iops > 1\n"));
    let err = refused(&s, &["lint", p.to_str().unwrap()]);
    assert!(err.contains("no workload named `olpt` (did you mean `oltp`?)"), "{err}");
    let p = s.scenario(OLTP);
    let err = refused(&s, &["lint", p.to_str().unwrap(), "--set", "olpt.bs=8k"]);
    assert!(err.contains("`olpt` (did you mean `oltp`?) is neither a workload"), "{err}");
}

#[test]
fn an_unknown_builtin_offers_the_nearest() {
    let s = Scratch::new("help-builtin");
    let err = refused(&s, &["run", "quickstrat"]);
    assert!(
        err.contains(
            "quickstrat: no such scenario file, and no built-in scenario of that name (did you mean `quickstart`?)"
        ),
        "{err}"
    );
    let err = refused(&s, &["scenarios", "show", "quickstrat"]);
    assert!(err.contains("no built-in scenario named `quickstrat` (did you mean `quickstart`?)"), "{err}");
}

#[test]
fn an_unknown_set_on_an_xray_scenario_lists_its_vars() {
    let s = Scratch::new("help-xray-set");
    let hosts = s.local_inventory(&["a", "b", "c", "d"]);
    let err = refused(&s, &["lint", XRAY, "--hosts", &hosts, "--set", "oltp_iop=3"]);
    assert!(
        err.contains("--set oltp_iop=3: `oltp_iop` (did you mean `oltp_iops`?) is not a var of this X-Ray scenario"),
        "{err}"
    );
    assert!(err.contains("its vars: `oltp_iops`, `dss_nodes`"), "{err}");
    assert!(!err.contains("rwmixread"), "not fathom's profile keys: {err}");
    // a value the template cannot compute with is blamed on its --set, not the template
    let err = refused(&s, &["lint", XRAY, "--hosts", &hosts, "--set", "oltp_iops=abc", "--set", "bs=8k"]);
    assert!(
        err.contains("--set oltp_iops=abc: var `oltp_iops` is `abc`: expected a number, as its default 200 is"),
        "{err}"
    );
    // fathom's own keys are still fathom's
    let out = s.run(&["lint", XRAY, "--hosts", &hosts, "--set", "oltp_iops=30", "--set", "bs=8k"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn a_refused_set_is_blamed_alone() {
    let s = Scratch::new("help-blame");
    let p = s.scenario(&format!("{OLTP}timeline:\n  - start: oltp\n"));
    let err = refused(&s, &["lint", p.to_str().unwrap(), "--set", "timeline.0.nope=1", "--set", "bs=8k"]);
    assert!(err.starts_with("fathom: --set timeline.0.nope=1: timeline[0]: unknown key `nope`"), "{err}");
    assert!(!err.contains("bs=8k"), "{err}");
}

/// What `lint` and then `run` say of the scenario `OLTP` with `from` replaced by `to`,
/// both refusing it.
fn lint_and_run(s: &Scratch, from: &str, to: &str) -> (String, String) {
    let p = s.scenario(&OLTP.replace(from, to));
    (refused(s, &["lint", p.to_str().unwrap()]), refused(s, &["run", p.to_str().unwrap()]))
}

#[test]
fn lint_refuses_a_target_that_does_not_exist_as_run_does() {
    let s = Scratch::new("help-lint-target");
    let (lint, run) = lint_and_run(&s, "target: TARGET", "target: TARGET/nowhere/");
    assert!(lint.contains("target ") && lint.contains("nowhere/ is not an existing directory"), "{lint}");
    assert_eq!(lint, run);
}

#[test]
fn lint_refuses_a_working_set_larger_than_the_free_space_as_run_does() {
    let s = Scratch::new("help-lint-space");
    let (lint, run) = lint_and_run(&s, "size: 16m", "size: 900t");
    assert!(
        lint.contains("not enough free space for ") && lint.contains("the working set needs 900 TiB more"),
        "{lint}"
    );
    // the same words; the free space itself may change between the two commands
    let said = |e: &str| e.split(" more, ").next().unwrap_or_default().to_string();
    assert_eq!(said(&lint), said(&run));
    assert!(!s.data().join("fathom-oltp.dat").exists(), "nothing laid out");
}

#[test]
fn lint_accepts_a_builtin_whose_target_directory_run_creates() {
    let s = Scratch::new("help-lint-builtin");
    let out = s.run(&["lint", "db-colocation"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(!s.dir.join("fathom-data").exists(), "lint creates nothing");
}

#[test]
fn a_fio_file_is_refused_for_the_option_that_matters_first() {
    let s = Scratch::new("help-fio");
    let job = |name: &str, body: &str| {
        let path = s.dir.join(name);
        std::fs::write(&path, format!("[a]\n{body}rw=randread\nsize=1m\nruntime=1\ntime_based\n")).unwrap();
        path.display().to_string()
    };
    let rbd = job("rbd.fio", "ioengine=rbd\nclientname=admin\n");
    let err = refused(&s, &["lint", &rbd, "--target", s.data().to_str().unwrap()]);
    assert!(err.contains("rbd.fio:2: ioengine: ") && err.contains("`rbd` is an engine of fio's only"), "{err}");
    let latency = job("latency.fio", "random_generator=lfsr\nlatency_target=10ms\n");
    let err = refused(&s, &["lint", &latency, "--target", s.data().to_str().unwrap()]);
    assert!(err.contains("latency.fio:3: latency_target: "), "{err}");
    // random_generator changes no measurement: accepted, and said to be ignored
    let generator = job("generator.fio", "random_generator=lfsr\n");
    let out = s.run(&["lint", &generator, "--target", s.data().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("random_generator"), "{}", text(&out));
}
