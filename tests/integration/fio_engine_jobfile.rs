//! `fathom run job.fio --engine fio`: the user's own job file run by the real fio, each
//! section as written (targets, `--set` and fio's report options rewritten only), its
//! samples stored per section. The job files are the project's own, written here.

use crate::common;

use crate::common::{Scratch, text};
use std::path::{Path, PathBuf};

/// Writes `body` as `name` in the scratch directory (not in its target).
fn job_file(s: &Scratch, name: &str, body: &str) -> PathBuf {
    let path = s.dir.join(name);
    std::fs::write(&path, body).unwrap();
    path
}

/// Per workload of the last run: (name, first second, last second, IOs, bytes) of its samples.
fn per_workload(s: &Scratch) -> Vec<(String, i64, i64, i64, i64)> {
    let db = s.db();
    let mut q = db
        .prepare(
            "SELECT w.name, min(s.t), max(s.t), sum(s.ops), sum(s.bytes) FROM samples s \
             JOIN workloads w ON w.run_id = s.run_id AND w.idx = s.workload_idx \
             WHERE s.run_id = (SELECT max(id) FROM runs) GROUP BY w.idx ORDER BY w.idx",
        )
        .unwrap();
    q.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Every file under `dir`, relative to it.
fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if e.file_type().unwrap().is_dir() {
            out.extend(files_under(&e.path()).into_iter().map(|f| format!("{name}/{f}")));
        } else {
            out.push(name);
        }
    }
    out.sort();
    out
}

#[test]
fn options_the_mapping_refuses_run_through_fio_section_by_section() {
    let s = Scratch::new("fio-engine-refused");
    let data = s.data().display().to_string();
    // a pause every 4 blocks is fio's: the mapping refuses thinktime_blocks above 1
    let file = job_file(
        &s,
        "think.fio",
        "[global]\nioengine=mmap\nbs=4k\nsize=4m\nthinktime=200\nthinktime_blocks=4\ngroup_reporting\nruntime=2\ntime_based\n\
         [reader]\nrw=randread\nnumjobs=2\n[writer]\nrw=randwrite\n",
    );
    let file = file.to_str().unwrap();
    let mapped = s.run(&["run", file, "--target", &data, "-q"]);
    assert_eq!(mapped.status.code(), Some(2), "{}", text(&mapped));
    let said = String::from_utf8_lossy(&mapped.stderr);
    assert!(said.contains("thinktime") && said.contains("--engine fio"), "the refusal points at fio: {said}");

    let out = s.run(&["run", file, "--engine", "fio", "--target", &data, "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stored = per_workload(&s);
    let names: Vec<&str> = stored.iter().map(|w| w.0.as_str()).collect();
    assert_eq!(names, ["reader", "writer"], "a workload per section: {stored:?}");
    assert!(stored.iter().all(|w| w.3 > 0), "each section has IOs: {stored:?}");
    // group_reporting did not merge reader's two jobs: each is a worker of its own
    let db = s.db();
    let workers: i64 = db
        .query_row(
            "SELECT count(DISTINCT worker) FROM samples WHERE run_id = (SELECT max(id) FROM runs) AND workload_idx = 0",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(workers, 2);
    // what fio ran is the section as written, kept with the run
    let run: i64 = db.query_row("SELECT max(id) FROM runs", [], |r| r.get(0)).unwrap();
    let ran = std::fs::read_to_string(s.dir.join(format!("results/runs/{run}/reader.fio"))).unwrap();
    assert!(ran.contains("ioengine=mmap") && ran.contains("thinktime=200"), "{ran}");
    assert!(!ran.contains("group_reporting"), "{ran}");
    let show = s.show_json();
    assert_eq!(show["workloads"][0]["engine"], "fio");
    // the file, not the stored profile, says what each section asked: nothing is claimed
    let writer = &show["workloads"][1];
    assert!(writer["fidelity"]["read_percent"]["asked"].is_null(), "{writer}");
    assert_eq!(writer["fidelity"]["block_sizes"], serde_json::json!([]), "{writer}");
    assert_eq!(show["analysis"]["littles_law"], serde_json::json!([]), "depth and think time are the file's");
}

#[test]
fn a_stonewall_runs_the_next_section_after_the_one_before() {
    let s = Scratch::new("fio-engine-stonewall");
    let data = s.data().display().to_string();
    let file = job_file(
        &s,
        "walls.fio",
        "[global]\nbs=4k\nsize=4m\nrw=randread\nruntime=2\ntime_based\n[one]\n[two]\nstonewall\nrw=randwrite\n",
    );
    let out = s.run(&["run", file.to_str().unwrap(), "--engine", "fio", "--target", &data, "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stored = per_workload(&s);
    assert_eq!(stored.len(), 2, "{stored:?}");
    let (one, two) = (&stored[0], &stored[1]);
    assert!(two.1 > one.2, "two's first second ({}) comes after one's last ({}): {stored:?}", two.1, one.2);
}

#[test]
fn every_file_fio_writes_is_inside_the_target() {
    let s = Scratch::new("fio-engine-target");
    let data = s.data().display().to_string();
    // its own targets are elsewhere; the log it asks for is relative to where fio runs
    let file = job_file(
        &s,
        "places.fio",
        "[global]\nbs=4k\nsize=2m\nrw=write\nwrite_lat_log=lat\n[a]\ndirectory=/nowhere/a\nnrfiles=2\n\
         [b]\nfilename=/nowhere/b.dat\n",
    );
    let before = files_under(&s.dir);
    let out = s.run(&["run", file.to_str().unwrap(), "--engine", "fio", "--target", &data, "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let inside = files_under(&s.data());
    assert_eq!(inside.len(), 3, "a's two files and b's one, laid out by fio in the target: {inside:?}");
    assert!(inside.iter().any(|f| f.starts_with("a.")) && inside.iter().any(|f| f.starts_with("b.")), "{inside:?}");
    // nothing else appeared outside the target and the results
    let outside: Vec<String> = files_under(&s.dir)
        .into_iter()
        .filter(|f| !f.starts_with("data/") && !f.starts_with("results/") && !before.contains(f))
        .collect();
    assert!(outside.is_empty(), "{outside:?}");
    assert!(!Path::new("/nowhere").exists());
}

#[test]
fn a_bounded_job_ends_after_one_pass_with_fios_byte_count() {
    let s = Scratch::new("fio-engine-bounded");
    let data = s.data().display().to_string();
    let file = job_file(&s, "pass.fio", "[pass]\nrw=write\nbs=64k\nsize=8m\n");
    let out = s.run(&["run", file.to_str().unwrap(), "--engine", "fio", "--target", &data, "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stored = per_workload(&s);
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!((stored[0].3, stored[0].4), (128, 8 << 20), "one pass over 8 MiB in 64 KiB writes: {stored:?}");
    let show = s.show_json();
    assert_eq!(show["run"]["status"], "completed", "{}", show["run"]);
    // fio's own final report, kept with the run, counts the same bytes
    let run = show["run"]["id"].as_i64().unwrap();
    let report = std::fs::read_to_string(s.dir.join(format!("results/runs/{run}/pass.json"))).unwrap();
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!(report["jobs"][0]["write"]["io_bytes"], stored[0].4, "{}", report["jobs"][0]["write"]);
    assert_eq!(show["workloads"][0]["profile"]["bs"], "64k", "labelled with fio's block size");
    // its window ends with its IO, as fio reports it, not when fio exits after it: at
    // fio's own runtime past the first measured second, or at fio's report if later
    let clock_ms: i64 =
        s.db().query_row("SELECT clock_start_unix_ms FROM runs WHERE id = ?1", [run], |r| r.get(0)).unwrap();
    let w = &show["workloads"][0];
    let measure_t = w["measure_t"].as_f64().unwrap();
    let runtime = report["jobs"][0]["job_runtime"].as_f64().unwrap().max(1.0) / 1000.0;
    let reported = (report["timestamp_ms"].as_i64().unwrap() - clock_ms) as f64 / 1000.0;
    let expected = (measure_t + runtime).max(reported);
    let stopped = w["stopped_at"].as_f64().unwrap();
    assert!((stopped - expected).abs() < 0.0015, "window ends at {stopped}, fio's IO at {expected}: {w}");
}

#[test]
fn a_short_bounded_job_with_several_block_sizes_is_measured_whole() {
    // Done within fio's lead-in before the workload's first second, with bytes that lag
    // fio's IO count: every IO and byte of fio's final report is in the measured window.
    let s = Scratch::new("fio-engine-short");
    let data = s.data().display().to_string();
    let body = "[global]\nrw=write\nbssplit=64k/50:256k/50\nsize=4m\n[a]\n[b]\n";
    let file = job_file(&s, "short.fio", body);
    let out = s.run(&["run", file.to_str().unwrap(), "--engine", "fio", "--target", &data, "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let show = s.show_json();
    let run = show["run"]["id"].as_i64().unwrap();
    for name in ["a", "b"] {
        let report = std::fs::read_to_string(s.dir.join(format!("results/runs/{run}/{name}.json"))).unwrap();
        let report: serde_json::Value = serde_json::from_str(&report).unwrap();
        let fio = &report["jobs"][0]["write"];
        let ops = common::ops(&show, name);
        assert_eq!(ops.len(), 1, "{name}: {ops:?}");
        assert_eq!((&ops[0]["ops"], &ops[0]["bytes"]), (&fio["total_ios"], &fio["io_bytes"]), "{name}: {fio}");
        assert_eq!(ops[0]["bytes"], 4 << 20, "{name}");
    }
    assert_eq!(show["workloads"][0]["profile"]["bs"], "64k/50:256k/50", "labelled with fio's split");
}

#[test]
fn set_duration_rewrites_each_sections_runtime() {
    let s = Scratch::new("fio-engine-set");
    let data = s.data().display().to_string();
    let file = job_file(
        &s,
        "long.fio",
        "[long]\nrw=randread\nbs=4k\nsize=2m\nruntime=1h\ntime_based\nioengine=io_uring\niodepth=8\nramp_time=1h\n",
    );
    let out = s.run(&[
        "run",
        file.to_str().unwrap(),
        "--engine",
        "fio",
        "--target",
        &data,
        "--set",
        "duration=2s",
        "--set",
        "ramp=0s",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stored = per_workload(&s);
    assert!(stored[0].2 - stored[0].1 <= 2, "two seconds, not an hour, and no ramp of an hour: {stored:?}");
    // labelled as fio ran it: 8 in flight, buffered (the summary's depth, beside Little's law)
    let show = s.show_json();
    let profile = &show["workloads"][0]["profile"];
    assert_eq!(
        (&profile["iodepth"], &profile["rw"], &profile["direct"]),
        (&8.into(), &"randread".into(), &false.into())
    );
    let summary = String::from_utf8_lossy(&out.stdout);
    let row = summary.lines().find(|l| l.starts_with("long ")).unwrap_or_else(|| panic!("{summary}"));
    assert_eq!(row.split_whitespace().nth(2), Some("8"), "{row}");
    let bad = s.run(&["run", file.to_str().unwrap(), "--engine", "fio", "--target", &data, "--set", "nojob.bs=8k"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("has no job [nojob]"), "{}", text(&bad));
}

/// The `device:` sources a run's `observed` figures come from.
fn observed_devices(show: &serde_json::Value) -> std::collections::BTreeSet<String> {
    let observed = show["observed"].as_array().unwrap();
    observed
        .iter()
        .filter_map(|o| o["source"].as_str())
        .filter(|s| s.starts_with("device:"))
        .map(String::from)
        .collect()
}

#[test]
fn a_run_through_fio_observes_its_targets_device_as_fathoms_engine_does() {
    use std::os::unix::fs::MetadataExt;
    let s = Scratch::new("fio-engine-device");
    let data = s.data().display().to_string();
    let file = job_file(&s, "dev.fio", "[dev]\nrw=write\nbs=64k\nsize=4m\ndirect=1\nruntime=2\ntime_based\n");
    let file = file.to_str().unwrap();
    let mut devices = Vec::new();
    for engine in [&["--engine", "fio"][..], &[]] {
        let out = s.run(&[&["run", file, "--target", &data, "-q"][..], engine].concat());
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let show = s.show_json();
        assert_eq!(show["workloads"][0]["profile"]["targets"], serde_json::json!([data]), "{engine:?}");
        devices.push(observed_devices(&show));
    }
    assert_eq!(devices[0], devices[1], "fio's run observes what fathom's engine observes");
    // (a target on tmpfs has no device; the scratch directory is on a disk's file system)
    let on_a_disk = libc::major(std::fs::metadata(&data).unwrap().dev()) != 0;
    assert!(!on_a_disk || !devices[0].is_empty(), "no device observed under {data}");
}

#[test]
fn options_that_act_beyond_the_targets_and_the_runs_directory_are_refused() {
    let s = Scratch::new("fio-engine-beyond");
    let data = s.data().display().to_string();
    let marker = s.dir.join("ran");
    let log = s.dir.join("elsewhere");
    let cases = [
        (format!("exec_prerun=touch {}", marker.display()), "exec_prerun: runs a command"),
        (format!("exec_postrun=touch {}", marker.display()), "exec_postrun: runs a command"),
        (format!("write_lat_log={}", log.display()), "write_lat_log: `"),
        (format!("write_iolog={}", log.display()), "write_iolog: `"),
        ("ioengine=external:/tmp/engine.so".to_string(), "loads an engine from a file"),
        ("cgroup=fathom".to_string(), "cgroup: creates and writes cgroups"),
    ];
    for (option, says) in cases {
        let file = job_file(&s, "beyond.fio", &format!("[global]\nbs=4k\nsize=1m\nrw=write\n[a]\n{option}\n"));
        let out = s.run(&["run", file.to_str().unwrap(), "--engine", "fio", "--target", &data, "-q"]);
        assert_eq!(out.status.code(), Some(2), "{option}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("beyond.fio:6: ") && err.contains(says), "{option}: {err}");
        assert!(err.contains("only on the targets and in the run's directory"), "{option}: {err}");
        assert!(!marker.exists() && !files_under(&s.dir).iter().any(|f| f.starts_with("elsewhere")), "{option}");
    }
}
