//! A small scenario cannot exhaust memory: what a scenario would allocate is computed
//! before anything runs, and absurd ramps, rates and think times are refused by lint
//! and run alike, with the numbers, exit 2, no backtrace and no run left `running`.

use crate::common::{Scratch, text};
use std::time::{Duration, Instant};

/// Runs `args` (with a backtrace asked for, as a developer's shell has it) and checks
/// the refusal: exit 2 well within `BOUND`, no backtrace, stderr as returned.
fn refused(s: &Scratch, args: &[&str]) -> String {
    const BOUND: Duration = Duration::from_secs(20);
    let started = Instant::now();
    let out = s.fathom(args).env("RUST_BACKTRACE", "1").output().unwrap();
    assert!(started.elapsed() < BOUND, "took {:?}: {}", started.elapsed(), text(&out));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!stderr.contains("backtrace") && !stderr.contains("panicked"), "{stderr}");
    stderr
}

/// No run of this scratch's store is left `running` (or none was recorded at all).
fn none_running(s: &Scratch) {
    if !s.dir.join("results/fathom.db").exists() {
        return;
    }
    let running: i64 =
        s.db().query_row("SELECT count(*) FROM runs WHERE status = 'running'", [], |r| r.get(0)).unwrap();
    assert_eq!(running, 0, "a run was left running");
}

#[test]
fn huge_io_buffers_are_refused_with_the_numbers() {
    let s = Scratch::new("budget-buffers");
    let scenario = s.scenario(
        "name: big\nworkloads:\n  w: {target: TARGET, rw: randread, bs: 64m, iodepth: 4096, size: 128m, duration: 2s}\n",
    );
    let sc = scenario.to_str().unwrap();
    for cmd in ["lint", "run"] {
        let stderr = refused(&s, &[cmd, sc]);
        // where, what the workload needs and why, and what the machine has
        assert!(stderr.contains("scenario.yaml:3: workloads.w:"), "{stderr}");
        assert!(stderr.contains("256 GiB"), "{stderr}");
        assert!(stderr.contains("64 MiB x iodepth 4096 x 1 worker"), "{stderr}");
        assert!(stderr.contains("available"), "{stderr}");
        none_running(&s);
    }
    assert!(!s.data().join("fathom-w.dat").exists(), "nothing laid out");
}

#[test]
fn a_ramp_to_four_billion_workers_is_refused_where_it_is_written() {
    let s = Scratch::new("budget-ramp");
    let scenario = s.scenario(
        "name: ramp\nworkloads:\n  w: {target: TARGET, rw: randread, size: 16m}\n\
         timeline:\n  - ramp: w\n    every: 1s\n    until: 4294967295\n",
    );
    let sc = scenario.to_str().unwrap();
    for cmd in ["lint", "run"] {
        let stderr = refused(&s, &[cmd, sc]);
        assert!(stderr.contains("scenario.yaml:7: timeline.0.until: 4294967295"), "{stderr}");
        assert!(stderr.contains("4096"), "{stderr}");
        none_running(&s);
    }
    // adding whole hosts counts their workers
    let scenario = s.scenario(
        "name: hosts\nworkloads:\n  w: {rw: randread, size: 16m, hosts: all, per_host: 1000}\n\
         timeline:\n  - ramp: w\n    add_host: 1\n    every: 1s\n    until: 5\n",
    );
    let stderr = refused(&s, &["lint", scenario.to_str().unwrap()]);
    assert!(stderr.contains("timeline.0.until: 5 hosts of 1000 workers"), "{stderr}");
}

#[test]
fn absurd_rates_think_times_and_ramp_lengths_are_refused() {
    let s = Scratch::new("budget-bounds");
    let base = "name: b\nworkloads:\n  w: {target: TARGET, rw: randread, size: 16m, duration: 5s, KEY}\n";
    let cases = [
        ("rate_iops: 20000000", "scenario.yaml:3: workloads.w.rate_iops: 20000000 IOs per second"),
        ("rate_mbps: 1000000", "scenario.yaml:3: workloads.w.rate_mbps: 1000000 MB/s of 4 KiB blocks"),
        ("think_time: 2h", "scenario.yaml:3: workloads.w.think_time: 2h"),
    ];
    for (key, expected) in cases {
        let scenario = s.scenario(&base.replace("KEY", key));
        for cmd in ["lint", "run"] {
            let stderr = refused(&s, &[cmd, scenario.to_str().unwrap()]);
            assert!(stderr.contains(expected), "{key}: {stderr}");
        }
    }
    // a ramp that would take years
    let scenario = s.scenario(
        "name: slow\nworkloads:\n  w: {target: TARGET, rw: randread, size: 16m}\n\
         timeline:\n  - ramp: w\n    every: 1000h\n    until: 4000\n",
    );
    let stderr = refused(&s, &["lint", scenario.to_str().unwrap()]);
    assert!(stderr.contains("scenario.yaml:6: timeline.0.every:"), "{stderr}");
    assert!(stderr.contains("30 days"), "{stderr}");
    none_running(&s);
}

#[test]
fn an_allocation_the_budget_could_not_foresee_fails_the_run_cleanly() {
    use std::os::unix::process::CommandExt;
    let s = Scratch::new("budget-runtime");
    // 768 MiB of buffers fit the machine's budget, not a 512 MiB address space (ulimit -v)
    let scenario = s.scenario(
        "name: limited\nworkloads:\n  w: {target: TARGET, rw: randread, bs: 64m, iodepth: 12, size: 128m, duration: 2s}\n",
    );
    let mut cmd = s.fathom(&["run", scenario.to_str().unwrap(), "-q"]);
    cmd.env("RUST_BACKTRACE", "1");
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit { rlim_cur: 512 << 20, rlim_max: 512 << 20 };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    // the summary says why
    assert!(text(&out).contains("cannot allocate 805306368 bytes of IO buffers: out of memory"), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("backtrace") && !stderr.contains("panicked"), "{stderr}");
    let (status, error): (String, String) =
        s.db().query_row("SELECT status, error FROM runs", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    assert_eq!(status, "failed");
    assert!(error.contains("out of memory"), "{error}");
}

#[test]
fn a_sweep_is_costed_step_by_step() {
    let s = Scratch::new("budget-sweep");
    let scenario =
        s.scenario("name: sw\nworkloads:\n  w: {target: TARGET, rw: randread, bs: 64m, size: 128m, duration: 1s}\n");
    let stderr = refused(&s, &["sweep", scenario.to_str().unwrap(), "--vary", "iodepth=1,4096"]);
    assert!(stderr.contains("--vary: step qd4096: needs about 256 GiB"), "{stderr}");
    none_running(&s);
    assert!(!s.data().join("fathom-w.dat").exists(), "nothing laid out");
}
