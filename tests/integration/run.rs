//! Integration tests: the real `fathom` binary runs for a few seconds against a
//! temporary directory on the local disk, and the tests read what it stored.

use crate::common::{Scratch, ops, text, unsent};
use rusqlite::Connection;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// Two closed loops one after the other, each a 1 s ramp and 2 s measured: thousands of
/// IOs a second, so 2 s hold enough of them for Little's law, and the run is short as the
/// machine is held alone for it.
const CLOSED_LOOP: &str = "\
name: closed
defaults:
  target: TARGET
  size: 32m
  duration: 2s
  ramp: 1s
workloads:
  uring:
    rw: randread
    iodepth: 4
  psync:
    rw: randread
    engine: psync
    iodepth: 2
    jobs: 2
timeline:
  - start: uring
  - start: psync
";

#[test]
fn open_loop_rate_is_met_and_latency_counts_from_the_schedule() {
    let s = Scratch::new("open");
    let scenario = s.scenario(
        "name: open\nworkloads:\n  paced:\n    target: TARGET\n    rw: randrw\n    rwmixread: 50\n    \
         size: 16m\n    iodepth: 4\n    jobs: 2\n    rate_iops: 400\n    duration: 3s\n",
    );
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let show = s.show_json();
    let total: f64 = ops(&show, "paced").iter().map(|o| o["ops"].as_f64().unwrap()).sum();
    // 400 IOPS for 3 s is exactly 1200 scheduled IOs: each done, in flight at the end (at
    // most 8 slots), or due and never sent (a busy machine keeps the workers off the CPU),
    // which the run counts
    let unsent = unsent(&show, "paced");
    assert!((1192.0..=1200.0).contains(&(total + unsent)), "{total} IOs done and {unsent} unsent of 1200 scheduled");
    for o in ops(&show, "paced") {
        let svc = &o["service_time"];
        assert!(!svc.is_null(), "open loop keeps service time");
        assert!(o["latency"]["p50_us"].as_f64().unwrap() >= svc["p50_us"].as_f64().unwrap() * 0.99);
        assert!(o["target_iops"].as_f64().unwrap() == 200.0);
    }
}

/// A rate no worker keeps (a million IOs a second, one at a time): the IOs it had due
/// and never sent are counted, said as a warning, and with the IOs done they are every
/// IO the schedule asked for but the one in flight at the end.
#[test]
fn a_rate_not_kept_counts_the_ios_it_never_sent() {
    let s = Scratch::new("unsent");
    let scenario = s.scenario(
        "name: unsent\nworkloads:\n  paced:\n    target: TARGET\n    rw: randread\n    size: 8m\n    \
         iodepth: 1\n    rate_iops: 1000000\n    duration: 1s\n",
    );
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("warning: paced did not keep its rate: "), "{}", text(&out));
    let show = s.show_json();
    let total: f64 = ops(&show, "paced").iter().map(|o| o["ops"].as_f64().unwrap()).sum();
    let unsent = unsent(&show, "paced");
    assert!(unsent > 0.0 && total > 0.0, "{total} done, {unsent} unsent");
    assert!((999_999.0..=1_000_000.0).contains(&(total + unsent)), "{total} done and {unsent} unsent of 1,000,000");
}

/// Waits until the run has stored at least one sample, or panics after `limit`.
fn wait_for_samples(s: &Scratch, child: &mut Child, limit: Duration) {
    let started = Instant::now();
    loop {
        if let Ok(db) = Connection::open(s.dir.join("results/fathom.db")) {
            let n: i64 = db.query_row("SELECT count(*) FROM samples", [], |r| r.get(0)).unwrap_or(0);
            if n > 0 {
                return;
            }
        }
        assert!(child.try_wait().unwrap().is_none(), "run ended early");
        assert!(started.elapsed() < limit, "no samples after {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A minute of random reads, to be interrupted: `rate` sets `rate_iops` (none: as fast as
/// the target goes).
fn long(rate: Option<u32>) -> String {
    let rate = rate.map(|r| format!("    rate_iops: {r}\n")).unwrap_or_default();
    format!(
        "name: long\nworkloads:\n  r:\n    target: TARGET\n    rw: randread\n    size: 16m\n    iodepth: 8\n    \
         duration: 60s\n{rate}"
    )
}

/// Starts `scenario` in `s` and sends it `signal` once it has stored its first second and
/// `after` more have passed: the run's output, and how long it took to stop.
fn interrupt_run(s: &Scratch, scenario: &str, signal: i32, after: Duration) -> (std::process::Output, Duration) {
    let scenario = s.scenario(scenario);
    let mut child =
        s.fathom(&["run", scenario.to_str().unwrap()]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    wait_for_samples(s, &mut child, Duration::from_secs(30));
    std::thread::sleep(after);
    // SAFETY: plain kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, signal) };
    let sent = Instant::now();
    let out = child.wait_with_output().unwrap();
    (out, sent.elapsed())
}

/// What an interrupted run keeps: its seconds, marked aborted. How soon it stops is a time,
/// judged with the machine alone (`alone::interrupt_stops_a_run_within_3_s`); what it keeps
/// is not, so this runs beside the other tests, its reads paced so that it leaves them the
/// cores (it needs IOs in every second, not as many as the target allows).
fn interrupt_leaves_an_aborted_run_with_samples(signal: i32) {
    let s = Scratch::new(&format!("signal-{signal}"));
    let (out, _) = interrupt_run(&s, &long(Some(500)), signal, Duration::from_millis(1500));
    assert_eq!(out.status.code(), Some(130), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("aborted"), "prints what it has: {}", text(&out));
    let db = s.db();
    let status: String = db.query_row("SELECT status FROM runs", [], |r| r.get(0)).unwrap();
    assert_eq!(status, "aborted");
    let (seconds, ops): (i64, i64) =
        db.query_row("SELECT count(DISTINCT t), sum(ops) FROM samples", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    assert!(seconds >= 2 && ops > 0, "{seconds} seconds, {ops} IOs kept");
    let show = s.show_json();
    assert!(ops_f(&show) > 0.0, "show reports the measured part");
}

fn ops_f(show: &serde_json::Value) -> f64 {
    ops(show, "r").iter().map(|o| o["ops"].as_f64().unwrap()).sum()
}

#[test]
fn ctrl_c_leaves_an_aborted_run_with_samples() {
    interrupt_leaves_an_aborted_run_with_samples(libc::SIGINT);
}

#[test]
fn sigterm_leaves_an_aborted_run_with_samples() {
    interrupt_leaves_an_aborted_run_with_samples(libc::SIGTERM);
}

#[test]
fn a_failing_target_fails_the_run_and_keeps_its_samples() {
    let s = Scratch::new("fail");
    let file = s.data().join("victim.dat");
    // `r` reads the victim; `other` would run for 30 s more were the failure not to stop it.
    let scenario = s.scenario(&format!(
        "name: fail\nworkloads:\n  r:\n    target: {}\n    rw: read\n    size: 8m\n    direct: false\n    duration: 30s\n  \
         other:\n    target: TARGET\n    rw: randread\n    size: 8m\n    duration: 30s\n",
        file.display()
    ));
    let mut child =
        s.fathom(&["run", scenario.to_str().unwrap()]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    wait_for_samples(&s, &mut child, Duration::from_secs(30));
    // Shrinking the file under the reader makes its next reads come back short.
    std::fs::OpenOptions::new().write(true).open(&file).unwrap().set_len(0).unwrap();
    let truncated = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(truncated.elapsed() < Duration::from_secs(15), "a failed IO stops every workload, not just its own");
    let stderr_and_out = text(&out);
    assert!(stderr_and_out.contains("short transfer"), "{stderr_and_out}");
    let db = s.db();
    let (status, error): (String, String) =
        db.query_row("SELECT status, error FROM runs", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap();
    assert_eq!(status, "failed");
    assert!(error.contains("victim.dat"), "{error}");
    let n: i64 = db.query_row("SELECT count(*) FROM samples", [], |r| r.get(0)).unwrap();
    assert!(n > 0);
}

/// Bad input: one line naming file, line and key; exit 2; no panic; nothing stored.
fn assert_input_error(s: &Scratch, args: &[&str], expect: &[&str]) {
    let out = s.run(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
    for e in expect {
        assert!(err.contains(e), "{args:?}: expected `{e}` in: {err}");
    }
    assert!(!err.contains("panicked") && !err.contains("backtrace"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
}

#[test]
fn bad_input_is_one_clear_line_and_exit_2() {
    let s = Scratch::new("bad");
    let good = "name: b\nworkloads:\n  w:\n    target: TARGET\n    rw: randread\n    size: 8m\n    duration: 1s\n";
    let path = s.scenario(&good.replace("size: 8m", "size: 8 parsecs"));
    let p = path.to_str().unwrap();
    assert_input_error(&s, &["run", p], &["scenario.yaml:6:", "workloads.w.size", "invalid size"]);
    s.scenario(&good.replace("rw: randread", "rw: randread\n    depth: 4"));
    assert_input_error(&s, &["run", p], &["scenario.yaml:6:", "unknown key `depth`", "iodepth"]);
    s.scenario(&good.replace("rw: randread", "rw: randomread"));
    assert_input_error(&s, &["run", p], &["scenario.yaml:5:", "workloads.w.rw", "unknown choice `randomread`"]);
    s.scenario(&good.replace("duration: 1s", "duration: 1 fortnight"));
    assert_input_error(&s, &["run", p], &["scenario.yaml:7:", "invalid duration"]);
    s.scenario(good);
    assert_input_error(&s, &["run", p, "--set", "w.iodepth=-3"], &["--set w.iodepth=-3"]);
    assert_input_error(&s, &["run", p, "--target", "/nonexistent/dir/x"], &["does not exist"]);
    assert_input_error(&s, &["run", p, "--set", "size=900t"], &["not enough free space"]);
    assert_input_error(&s, &["run", "no-such-scenario.yaml"], &["no such scenario file"]);
    assert_input_error(&s, &["show", "42"], &["no results store"]);
    assert!(!s.dir.join("results/fathom.db").exists(), "bad input stores no run");
    assert!(std::fs::read_dir(s.data()).unwrap().next().is_none(), "bad input writes no data");
}

#[test]
fn builtin_scenarios_are_listed_and_shown() {
    let s = Scratch::new("builtin");
    let out = s.run(&["scenarios"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("quickstart"));
    let out = s.run(&["scenarios", "show", "quickstart"]);
    let yaml = String::from_utf8_lossy(&out.stdout);
    assert!(yaml.contains("qd64"), "{yaml}");
}

#[test]
fn quickstart_runs_with_overrides() {
    // The real quickstart, shortened: four depths, one second each, on a small file.
    let s = Scratch::new("quickstart");
    let target = s.data().display().to_string();
    let json = s.dir.join("out.json");
    let out = s.run(&[
        "run",
        "quickstart",
        "--target",
        &target,
        "--set",
        "size=16m",
        "--set",
        "duration=1s",
        "--set",
        "ramp=0s",
        "--json",
        json.to_str().unwrap(),
    ]);
    // the run completes; its expectation (qd64's p99 within 64 x qd1's) is the
    // machine's to meet, and the exit says whether it did: 0, else 3
    let show = s.show_json();
    let met = show["expectations"].as_array().unwrap().iter().all(|e| e["passed"] == true);
    assert_eq!(out.status.code(), Some(if met { 0 } else { 3 }), "{}", text(&out));
    assert_eq!(show["run"]["status"], "completed", "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    for step in ["qd1", "qd4", "qd16", "qd64"] {
        assert!(stdout.contains(step), "{stdout}");
    }
    // --json FILE is the run as `show --json` reads it, the summary still on stdout
    let written: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(written, show);
    assert_eq!(show["workloads"].as_array().unwrap().len(), 4);
    assert!(std::fs::metadata(s.data().join("fathom-quickstart.dat")).is_ok(), "all steps share one file");
    assert!(!s.dir.join("fathom-data").exists(), "--target replaces the default target");
}

/// `--json` alone puts the run on stdout for CI to parse, the summary on stderr, with the
/// exit status a failed expectation gives; a file it would not write is refused before
/// the run.
#[test]
fn run_json_on_stdout_keeps_the_exit_status_and_refuses_a_link() {
    let s = Scratch::new("run-json");
    let scenario = s.scenario(
        "name: j\nworkloads:\n  w: {engine: null, rw: randread, duration: 1s}\nexpect:\n  - w.read.p99 < 1ns\n",
    );
    let out = s.run(&["run", scenario.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let run: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    assert_eq!(run["run"]["status"], "completed");
    assert_eq!(run["expectations"][0]["passed"], false, "{run}");
    assert_eq!(run, s.show_json());
    assert!(String::from_utf8_lossy(&out.stderr).contains("FAIL w.read.p99 < 1ns"), "{}", text(&out));

    let link = s.dir.join("link.json");
    std::os::unix::fs::symlink(s.dir.join("elsewhere.json"), &link).unwrap();
    let out = s.run(&["run", scenario.to_str().unwrap(), "--json", link.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--json"), "{}", text(&out));
    assert!(!s.dir.join("elsewhere.json").exists());
    let runs = s.run(&["runs", "--json"]);
    let runs: serde_json::Value = serde_json::from_slice(&runs.stdout).unwrap();
    assert_eq!(runs.as_array().map(Vec::len), Some(1), "refused before it ran: {runs}");
}

#[test]
fn an_existing_file_is_never_overwritten_by_a_read_workload() {
    let s = Scratch::new("keep");
    let precious = b"IMPORTANT DATA, NOT A BENCHMARK FILE";
    let short = s.data().join("short.db");
    std::fs::write(&short, precious).unwrap();
    let sparse = s.data().join("sparse.img");
    std::fs::write(&sparse, precious).unwrap();
    std::fs::OpenOptions::new().write(true).open(&sparse).unwrap().set_len(32 << 20).unwrap();
    let read = |target: &Path, size: &str| {
        s.scenario(&format!(
            "name: keep\nworkloads:\n  r:\n    target: {}\n    rw: randread\n{size}    duration: 1s\n",
            target.display()
        ))
    };
    let p = read(&short, "    size: 4m\n");
    assert_input_error(&s, &["run", p.to_str().unwrap()], &["short.db", "does not overwrite an existing file"]);
    let p = read(&sparse, "");
    assert_input_error(&s, &["run", p.to_str().unwrap()], &["sparse.img is sparse"]);
    assert_eq!(std::fs::read(&short).unwrap(), precious);
    assert_eq!(&std::fs::read(&sparse).unwrap()[..precious.len()], precious);
    assert_eq!(std::fs::metadata(&sparse).unwrap().len(), 32 << 20);
}

#[test]
fn a_reader_that_went_away_ends_what_is_printed_quietly() {
    // stdout is a pipe whose reader has gone (`fathom scenarios | head`, head done)
    let s = Scratch::new("closed-stdout");
    let mut ends = [0; 2];
    // SAFETY: pipe(2) fills the two descriptors it is given.
    assert_eq!(unsafe { libc::pipe(ends.as_mut_ptr()) }, 0);
    // SAFETY: both descriptors were just opened and are owned here alone.
    let (reader, writer) = unsafe {
        use std::os::fd::FromRawFd;
        (std::os::fd::OwnedFd::from_raw_fd(ends[0]), std::os::fd::OwnedFd::from_raw_fd(ends[1]))
    };
    drop(reader);
    let out = s.fathom(&["scenarios"]).stdout(Stdio::from(writer)).output().unwrap();
    // not killed by SIGPIPE (no exit code), not a panic: the rest is dropped
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(out.stderr.is_empty(), "{}", text(&out));
}

/// Makes `cmd` run under a seccomp filter that answers `io_uring_setup` with EPERM, as
/// Docker's and containerd's default profiles do.
fn in_a_container_seccomp(cmd: &mut std::process::Command) {
    use libc::{BPF_ABS, BPF_JEQ, BPF_JMP, BPF_K, BPF_LD, BPF_RET, BPF_W, sock_filter};
    use std::os::unix::process::CommandExt;
    let op = |code: u32, k: u32, jt: u8, jf: u8| sock_filter { code: code as u16, jt, jf, k };
    let filter = [
        op(BPF_LD | BPF_W | BPF_ABS, 0, 0, 0), // the system call's number
        op(BPF_JMP | BPF_JEQ | BPF_K, libc::SYS_io_uring_setup as u32, 0, 1),
        op(BPF_RET | BPF_K, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32, 0, 0),
        op(BPF_RET | BPF_K, libc::SECCOMP_RET_ALLOW, 0, 0),
    ];
    // SAFETY: the closure runs in the child between fork and exec, and only makes two
    // prctl calls, which allocate nothing; the program it points to is copied by the
    // kernel before the call returns, and lives on in `filter`, moved into the closure.
    unsafe {
        cmd.pre_exec(move || {
            let program = libc::sock_fprog { len: filter.len() as u16, filter: filter.as_ptr() as *mut sock_filter };
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &program as *const libc::sock_fprog)
                    != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Where the container's seccomp profile blocks io_uring, a run says so (naming seccomp
/// and where to read how to allow it) and runs its io_uring workload with psync.
#[test]
fn io_uring_blocked_by_seccomp_falls_back_to_psync_saying_why() {
    let s = Scratch::new("seccomp");
    let scenario = s.scenario(
        "name: sc\nworkloads:\n  r: {target: TARGET, engine: io_uring, rw: randread, size: 8m, rate_iops: 200, duration: 1s}\n",
    );
    let mut cmd = s.fathom(&["run", scenario.to_str().unwrap()]);
    in_a_container_seccomp(&mut cmd);
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("warning: io_uring is unavailable (Operation not permitted"), "{said}");
    assert!(said.contains("seccomp") && said.contains("docs/hosts.md"), "{said}");
    let show = s.show_json();
    assert_eq!(show["workloads"][0]["engine"], "psync", "{show}");
    assert_eq!(show["warnings"][0]["code"], "io-uring-unavailable", "{show}");
}

/// The tests that judge a rate or a time, and so hold the machine alone: `make test` runs
/// them last, one at a time (see `Scratch::alone`).
mod alone {
    use super::*;

    #[test]
    fn closed_loop_run_stores_every_second_and_obeys_littles_law() {
        let s = Scratch::alone("closed");
        let scenario = s.scenario(CLOSED_LOOP);
        let out = s.run(&["run", scenario.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        assert!(String::from_utf8_lossy(&out.stdout).contains("IOPS x mean"), "{}", text(&out));

        let db = s.db();
        let status: String = db.query_row("SELECT status FROM runs", [], |r| r.get(0)).unwrap();
        assert_eq!(status, "completed");
        for (idx, name) in [(0, "uring"), (1, "psync")] {
            let (start, end): (i64, i64) = db
                .query_row("SELECT start_t, end_t FROM workloads WHERE idx = ?1", [idx], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap();
            assert_eq!(end - start, 3, "{name}: 1 s ramp + 2 s");
            let seconds: Vec<i64> = db
                .prepare("SELECT DISTINCT t FROM samples WHERE workload_idx = ?1 ORDER BY t")
                .unwrap()
                .query_map([idx], |r| r.get(0))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            assert_eq!(seconds, (start..end).collect::<Vec<_>>(), "{name}: a sample for every second");
            let hist_seconds: i64 = db
                .query_row("SELECT count(DISTINCT t) FROM histograms WHERE workload_idx = ?1", [idx], |r| r.get(0))
                .unwrap();
            assert_eq!(hist_seconds, end - start, "{name}: a histogram for every second");
        }
        // workers: 1 for uring, 2 for psync (each with two threads reporting as one worker)
        let workers: i64 = db.query_row("SELECT count(*) FROM workers", [], |r| r.get(0)).unwrap();
        assert_eq!(workers, 3);

        let show = s.show_json();
        for (name, depth) in [("uring", 4.0), ("psync", 4.0)] {
            let read = &ops(&show, name)[0];
            assert_eq!(read["op"], "read");
            let seconds = read["seconds"].as_f64().unwrap();
            assert!((seconds - 2.0).abs() < 0.05, "{name}: measured window {seconds}");
            let n = read["littles_n"].as_f64().unwrap();
            assert!((n - depth).abs() / depth < 0.15, "{name}: IOPS x mean latency = {n}, depth {depth}");
            let iops = read["iops"].as_f64().unwrap();
            let ops_count = read["ops"].as_f64().unwrap();
            assert!((iops * seconds - ops_count).abs() < 1.0);
            let lat = &read["latency"];
            assert!(lat["p50_us"].as_f64().unwrap() <= lat["p99_us"].as_f64().unwrap());
            assert!(lat["p99_us"].as_f64().unwrap() <= lat["max_us"].as_f64().unwrap() * 1.01);
            assert!(read["service_time"].is_null(), "closed loop has no separate service time");
        }
        // the data file was laid out for real, not sparse
        let meta = std::fs::metadata(s.data().join("fathom-uring.dat")).unwrap();
        assert_eq!(meta.len(), 32 << 20);
        assert!(std::os::unix::fs::MetadataExt::blocks(&meta) * 512 >= 32 << 20);

        let runs = s.run(&["runs", "--json"]);
        let list: serde_json::Value = serde_json::from_slice(&runs.stdout).unwrap();
        assert_eq!(list.as_array().unwrap().len(), 1);
        assert_eq!(list[0]["status"], "completed");
        assert!(list[0]["headline"]["iops"].as_f64().unwrap() > 0.0);
    }

    #[test]
    fn io_uring_fallback_is_recorded_as_a_warning() {
        let s = Scratch::alone("fallback");
        let scenario = s.scenario(
        "name: fb\nworkloads:\n  r:\n    target: TARGET\n    rw: randread\n    size: 8m\n    iodepth: 4\n    duration: 1s\n",
    );
        let out = s.fathom(&["run", scenario.to_str().unwrap()]).env("FATHOM_DISABLE_IO_URING", "1").output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let show = s.show_json();
        assert_eq!(show["workloads"][0]["engine"], "psync");
        assert_eq!(show["warnings"][0]["code"], "io-uring-unavailable");
        let n = ops(&show, "r")[0]["littles_n"].as_f64().unwrap();
        assert!((n - 4.0).abs() < 0.6, "psync keeps depth 4 with four threads: {n}");
    }
}

/// The tests that judge a rate or a time of a light load (well under a core each), and so
/// hold the machine with at most one other such test: `make test` runs them after the
/// shared tests, two at once (see `Scratch::paired`).
mod paired {
    use super::*;

    /// A run told to stop while it measures stops within 3 s: a time, which a busy machine
    /// stretches. Signalled as soon as its first second is stored, as the time to stop does
    /// not grow with the seconds before it (what those are kept as is judged by the shared
    /// `*_leaves_an_aborted_run_with_samples`).
    fn interrupt_stops_a_run_within_3_s(signal: i32) {
        let s = Scratch::paired(&format!("stop-{signal}"));
        let (out, took) = interrupt_run(&s, &long(None), signal, Duration::ZERO);
        assert_eq!(out.status.code(), Some(130), "{}", text(&out));
        assert!(took < Duration::from_secs(3), "stopping took {took:?}");
    }

    #[test]
    fn ctrl_c_stops_a_run_within_3_s() {
        interrupt_stops_a_run_within_3_s(libc::SIGINT);
    }

    #[test]
    fn sigterm_stops_a_run_within_3_s() {
        interrupt_stops_a_run_within_3_s(libc::SIGTERM);
    }
}
