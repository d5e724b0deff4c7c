//! Workload fidelity, end to end: the real binary does what a scenario asks (rates with
//! mixed block sizes, think time) and an open-loop run shows a stall in its latency.

use crate::common;

use crate::common::{Scratch, ops, text};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The `fidelity` object of workload `name` in `show --json` output.
fn fidelity<'a>(show: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    &show["workloads"].as_array().unwrap().iter().find(|w| w["name"] == name).unwrap()["fidelity"]
}

/// A fresh directory in /dev/shm (memory-backed) for a fast target.
fn tempdir_in_shm() -> std::path::PathBuf {
    let dir = std::path::Path::new("/dev/shm").join(format!("fathom-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_null_engine_needs_no_target_and_touches_no_file() {
    let s = Scratch::new("null");
    let scenario = s.scenario(
        "name: null\nworkloads:\n  n:\n    engine: null\n    rw: randrw\n    bssplit: 4k/50:8k/50\n    iodepth: 8\n    \
     duration: 2s\n",
    );
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let show = s.show_json();
    let ops = ops(&show, "n");
    assert_eq!(ops.len(), 2, "reads and writes");
    assert!(ops.iter().all(|o| o["ops"].as_u64().unwrap() > 1000), "{ops:?}");
    let seconds: i64 = s.db().query_row("SELECT count(DISTINCT t) FROM samples", [], |r| r.get(0)).unwrap();
    assert_eq!(seconds, 2);
    assert_eq!(std::fs::read_dir(s.data()).unwrap().count(), 0, "no data file");
    assert!(!s.dir.join("null").exists());
}

#[test]
fn an_appending_workload_stops_cleanly_when_the_file_cannot_grow() {
    // The file size limit (RLIMIT_FSIZE) makes writes past 32 MiB fail as a full disk
    // would, without needing a small filesystem: the appender stops, the run completes
    // with a warning, and what it wrote is measured.
    use std::os::unix::process::CommandExt;
    let s = Scratch::new("extend");
    let scenario = s.scenario(
        "name: append\nworkloads:\n  log:\n    target: TARGET\n    rw: write\n    bs: 1m\n    extend: true\n    \
     iodepth: 4\n    duration: 5s\n",
    );
    let mut cmd = s.fathom(&["run", scenario.to_str().unwrap()]);
    // SAFETY: setrlimit and signal are async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit { rlim_cur: 32 << 20, rlim_max: 32 << 20 };
            libc::setrlimit(libc::RLIMIT_FSIZE, &limit);
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("log filled the filesystem"), "{}", text(&out));
    let data = s.data().join("fathom-log.dat");
    assert_eq!(std::fs::metadata(&data).unwrap().len(), 32 << 20, "appended up to the limit");
    let show = s.show_json();
    assert_eq!(show["run"]["status"], "completed");
    assert!(show["warnings"].as_array().unwrap().iter().any(|w| w["code"] == "target-full"), "{show}");
    let written = ops(&show, "log")[0]["bytes"].as_u64().unwrap();
    assert_eq!(written, 32 << 20, "every appended MiB is counted");
}

#[test]
fn prefill_writes_the_working_set_of_an_existing_file_before_measuring() {
    // A sparse file would be read without IO; fathom refuses it for a read workload
    // unless asked to prefill it, and then writes every block of the working set.
    use std::os::unix::fs::MetadataExt;
    let s = Scratch::new("prefill");
    let file = s.data().join("existing.img");
    std::fs::File::create(&file).unwrap().set_len(8 << 20).unwrap();
    let body = format!(
        "name: prefill\nworkloads:\n  r:\n    target: {}\n    rw: randread\n    size: 4m\n    offset: 2m\n    \
     duration: 1s\n",
        file.display()
    );
    let scenario = s.scenario(&body);
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is sparse"), "{}", text(&out));
    assert_eq!(std::fs::metadata(&file).unwrap().blocks(), 0, "refused without writing");

    let out = s.run(&["run", scenario.to_str().unwrap(), "--set", "prefill=true"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let meta = std::fs::metadata(&file).unwrap();
    assert_eq!(meta.len(), 8 << 20, "the file keeps its length");
    assert_eq!(meta.blocks() * 512, 4 << 20, "exactly the working set [2m, 6m) was written");
}

/// The tests that judge a rate or a time, and so hold the machine alone: `make test` runs
/// them last, one at a time (see `Scratch::alone`).
mod alone {
    use super::*;

    #[test]
    fn a_stall_shows_in_open_loop_latency_but_not_in_service_time() {
        // 1000 IOPS; the whole process is stopped for 500 ms mid-run. The IOs due during the
        // stall are issued late: their latency from the intended start shows it, their
        // service time does not, and none of them is dropped.
        let s = Scratch::alone("stall");
        let scenario = s.scenario(
            "name: stall\nworkloads:\n  w:\n    target: TARGET\n    rw: randread\n    size: 16m\n    iodepth: 8\n    \
         rate_iops: 1000\n    duration: 4s\n",
        );
        let child = s
            .fathom(&["run", scenario.to_str().unwrap()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        // the stall comes once the run has stored its first second, however long a busy
        // machine took to start it: mid-run, with seconds left to catch up before the end
        let started = Instant::now();
        let results = s.dir.join("results");
        while common::live::stored(&results, "SELECT count(*) FROM samples").unwrap_or(0) == 0
            && started.elapsed() < Duration::from_secs(60)
        {
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(500));
        // SAFETY: plain kill(2) on our own child.
        unsafe {
            libc::kill(pid, libc::SIGSTOP);
        }
        std::thread::sleep(Duration::from_millis(500));
        // SAFETY: plain kill(2) on our own child.
        unsafe {
            libc::kill(pid, libc::SIGCONT);
        }
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let show = s.show_json();
        let o = &ops(&show, "w")[0];
        let total = o["ops"].as_f64().unwrap();
        let asked = o["target_iops"].as_f64().unwrap() * o["seconds"].as_f64().unwrap();
        let lat = &o["latency"];
        let svc = &o["service_time"];
        // A stall that dropped the IOs due during it would lose 500 of them. The run can also
        // end with IOs due and never sent, when the device or a busy machine could not catch
        // up before its end: those it counts, and they are not lost either.
        let unsent = crate::common::unsent(&show, "w");
        assert!(
            total + unsent >= asked - 8.0,
            "{total} IOs done and {unsent} unsent of {asked}: a stall must not remove IOs"
        );
        let max_ms = lat["max_us"].as_f64().unwrap() / 1000.0;
        let p99_ms = lat["p99_us"].as_f64().unwrap() / 1000.0;
        assert!(max_ms >= 400.0, "the stall is in the latency: max {max_ms} ms");
        assert!(p99_ms >= 200.0, "about 1 IO in 8 waited: p99 {p99_ms} ms");
        let svc_p99_ms = svc["p99_us"].as_f64().unwrap() / 1000.0;
        assert!(svc_p99_ms < 50.0, "service time stays low: p99 {svc_p99_ms} ms");
    }

    #[test]
    fn rate_is_ios_per_second_whatever_the_block_size_mix() {
        // fio turns rate_iops into a byte rate at the smallest size and delivers ~150 IOPS
        // of 1000 with this split; fathom must deliver 1000.
        let s = Scratch::alone("rate-bssplit");
        let scenario = s.scenario(
            "name: mix\nworkloads:\n  w:\n    target: TARGET\n    rw: randrw\n    rwmixread: 70\n    \
         bssplit: 4k/50:64k/50\n    size: 32m\n    iodepth: 4\n    rate_iops: 1000\n    duration: 3s\n",
        );
        let out = s.run(&["run", scenario.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        assert!(String::from_utf8_lossy(&out.stdout).contains("asked -> achieved"), "{}", text(&out));
        let show = s.show_json();
        let f = fidelity(&show, "w");
        let iops = f["iops"]["achieved"].as_f64().unwrap();
        assert_eq!(f["iops"]["asked"].as_f64(), Some(1000.0));
        assert!((990.0..=1005.0).contains(&iops), "{iops} IOPS for 1000 asked");
        // 1000 IOs/s of 34 KiB on average
        let mbps = f["mb_per_s"]["achieved"].as_f64().unwrap();
        let asked_mbps = f["mb_per_s"]["asked"].as_f64().unwrap();
        assert!((asked_mbps - 1000.0 * 34816.0 / 1e6).abs() < 0.01, "{asked_mbps}");
        assert!((mbps / asked_mbps - 1.0).abs() < 0.1, "{mbps} MB/s for {asked_mbps}");
        let reads = f["read_percent"]["achieved"].as_f64().unwrap();
        assert!((reads - 70.0).abs() < 4.0, "{reads}% reads");
        let sizes = f["block_sizes"].as_array().unwrap();
        assert_eq!(sizes.len(), 2, "{sizes:?}");
        for b in sizes {
            let got = b["achieved_percent"].as_f64().unwrap();
            assert!((got - 50.0).abs() < 4.0, "{b}");
        }
    }

    #[test]
    fn a_shared_queue_is_held_back_by_its_slowest_target_and_separate_queues_are_not() {
        // One fast target (tmpfs, page cache) and one slow (O_DIRECT on disk). A shared
        // queue deals IOs round-robin, so the slow target sets the pace for both, like a
        // volume manager; a queue per target lets the fast one run ahead.
        let s = Scratch::alone("queues");
        let shm = tempdir_in_shm();
        let body = format!(
            "name: queues\nworkloads:\n  w:\n    target: [{}, TARGET]\n    rw: randread\n    size: 8m\n    \
         engine: psync\n    duration: 2s\n",
            shm.display()
        );
        let scenario = s.scenario(&body);
        let mut iops = Vec::new();
        for queue in ["shared", "per_target"] {
            let out = s.run(&["run", scenario.to_str().unwrap(), "--set", &format!("queue={queue}")]);
            assert_eq!(out.status.code(), Some(0), "{}", text(&out));
            let show = s.show_json();
            let w = &show["workloads"][0];
            assert_eq!(w["workers"], if queue == "shared" { 1 } else { 2 }, "{queue}");
            assert!(w["data_path"].as_str().unwrap().contains(", "), "both targets are recorded");
            let o = &ops(&show, "w")[0];
            let n = o["littles_n"].as_f64().unwrap();
            let depth = w["concurrency"].as_f64().unwrap();
            assert!((n / depth - 1.0).abs() < 0.15, "{queue}: {n} in flight of {depth}");
            iops.push(o["iops"].as_f64().unwrap());
        }
        let _ = std::fs::remove_dir_all(&shm);
        assert!(iops[1] > 5.0 * iops[0], "shared {} IOPS vs per target {}", iops[0], iops[1]);
    }
}

/// The tests that judge a rate or a time of a light load (well under a core each), and so
/// hold the machine with at most one other such test: `make test` runs them after the
/// shared tests, two at once (see `Scratch::paired`).
mod paired {
    use super::*;

    #[test]
    fn think_time_paces_a_closed_loop() {
        // 2 slots, each pausing 20 ms after every IO: at most 100 IOPS. One workload per
        // engine, side by side in one run (no timeline: both start at second 0): together
        // they keep at most 4 IOs and 2 threads' pauses going, which leave the cores idle,
        // and the run takes one workload's time, not two
        let s = Scratch::paired("think");
        let scenario = s.scenario(
            "name: think\ndefaults:\n  target: TARGET\n  rw: randread\n  size: 16m\n  iodepth: 2\n  think_time: 20ms\n  \
         duration: 3s\nworkloads:\n  io_uring:\n    engine: io_uring\n  psync:\n    engine: psync\n",
        );
        let out = s.run(&["run", scenario.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let show = s.show_json();
        for engine in ["io_uring", "psync"] {
            let w = show["workloads"].as_array().unwrap().iter().find(|w| w["name"] == engine).unwrap();
            assert_eq!(w["engine"], engine, "{show}");
            let iops: f64 = ops(&show, engine).iter().map(|o| o["iops"].as_f64().unwrap()).sum();
            // paced: never above 100 (unpaced, a 16 MiB file gives thousands); how far below
            // depends on how quickly a busy machine wakes the slots, so the floor is loose
            assert!((30.0..=100.5).contains(&iops), "{engine}: {iops} IOPS, expected at most 100");
        }
    }
}
