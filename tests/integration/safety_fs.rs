//! What fathom writes stays where it belongs: no symlink, planted in a target directory
//! or the results, leads it to create or overwrite a file elsewhere (issue 15, item 1);
//! targets that are not plain paths are refused, and appending files do not grow from
//! run to run (item 11).

use crate::common::{Scratch, ops, text};
use std::os::unix::fs::symlink;
use std::path::Path;

/// A file outside every target, with bytes that must survive.
fn precious(s: &Scratch) -> (std::path::PathBuf, Vec<u8>) {
    let path = s.dir.join("outside.bin");
    let bytes: Vec<u8> = (0..(1u32 << 20)).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&path, &bytes).unwrap();
    (path, bytes)
}

fn runs_recorded(s: &Scratch) -> i64 {
    if !s.dir.join("results/fathom.db").exists() {
        return 0;
    }
    s.db().query_row("SELECT count(*) FROM runs", [], |r| r.get(0)).unwrap()
}

const READER: &str =
    "name: r\nworkloads:\n  r:\n    target: TARGET\n    rw: randread\n    size: 16m\n    duration: 1s\n";

#[test]
fn a_symlinked_data_file_is_refused_even_for_reading() {
    let s = Scratch::new("fs-symlink-read");
    let (outside, bytes) = precious(&s);
    symlink(&outside, s.data().join("fathom-r.dat")).unwrap();
    let out = s.run(&["run", s.scenario(READER).to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("fathom-r.dat is a symbolic link"), "{}", text(&out));
    assert!(!err.contains("panicked"), "{}", text(&out));
    assert_eq!(std::fs::read(&outside).unwrap(), bytes, "the file it points to is untouched");
    assert_eq!(runs_recorded(&s), 0);
}

#[test]
fn a_dangling_symlink_never_creates_a_file_outside_the_target() {
    let s = Scratch::new("fs-symlink-dangling");
    let elsewhere = s.dir.join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    symlink(elsewhere.join("new"), s.data().join("fathom-w.dat")).unwrap();
    let scenario = s
        .scenario("name: w\nworkloads:\n  w:\n    target: TARGET\n    rw: randwrite\n    size: 4m\n    duration: 1s\n");
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("fathom-w.dat is a symbolic link"), "{}", text(&out));
    assert!(!elsewhere.join("new").exists(), "nothing created where the link points");
    // the same for an appending workload, which creates its file when it opens it
    let append = s
        .scenario("name: w\nworkloads:\n  w:\n    target: TARGET\n    rw: write\n    extend: true\n    duration: 1s\n");
    let out = s.run(&["run", append.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(!elsewhere.join("new").exists());
}

#[test]
fn a_hard_link_in_a_target_directory_is_not_fathoms_file() {
    let s = Scratch::new("fs-hardlink");
    let (outside, bytes) = precious(&s);
    std::fs::hard_link(&outside, s.data().join("fathom-r.dat")).unwrap();
    let out = s.run(&["run", s.scenario(READER).to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("has 2 hard links"), "{}", text(&out));
    assert_eq!(std::fs::read(&outside).unwrap(), bytes);
}

#[test]
fn a_symlink_named_as_the_target_is_read_through_but_never_written() {
    let s = Scratch::new("fs-user-link");
    let (outside, bytes) = precious(&s);
    let link = s.dir.join("link.img");
    symlink(&outside, &link).unwrap();
    let body = |rw: &str| {
        format!(
            "name: u\nworkloads:\n  u:\n    target: {}\n    rw: {rw}\n    size: 1m\n    direct: false\n    duration: 1s\n",
            link.display()
        )
    };
    let out = s.run(&["run", s.scenario(&body("randread")).to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "the user named it: reading follows it\n{}", text(&out));
    assert!(ops(&s.show_json(), "u")[0]["ops"].as_u64().unwrap() > 0);
    let out = s.run(&["run", s.scenario(&body("randwrite")).to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("link.img is a symbolic link"), "{}", text(&out));
    assert!(err.contains(&format!("Name {} as the target", outside.canonicalize().unwrap().display())), "{err}");
    assert_eq!(std::fs::read(&outside).unwrap(), bytes);
}

const NULL_RUN: &str = "name: n\nworkloads:\n  n:\n    engine: null\n    rw: randread\n    duration: 1s\n";

#[test]
fn a_symlinked_results_directory_or_store_is_refused() {
    let s = Scratch::new("fs-results-link");
    let scenario = s.scenario(NULL_RUN);
    let real = s.dir.join("real-results");
    std::fs::create_dir(&real).unwrap();
    symlink(&real, s.dir.join("results")).unwrap();
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("results directory"), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("symbolic link"), "{}", text(&out));
    assert!(!real.join("fathom.db").exists(), "no store created through the link");

    std::fs::remove_file(s.dir.join("results")).unwrap();
    std::fs::create_dir(s.dir.join("results")).unwrap();
    let other = s.dir.join("other.db");
    std::fs::write(&other, b"not fathom's").unwrap();
    symlink(&other, s.dir.join("results/fathom.db")).unwrap();
    for args in [vec!["run", scenario.to_str().unwrap()], vec!["runs"]] {
        let out = s.run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(String::from_utf8_lossy(&out.stderr).contains("fathom.db: is a symbolic link"), "{}", text(&out));
    }
    assert_eq!(std::fs::read(&other).unwrap(), b"not fathom's");
}

#[test]
fn reports_are_not_written_through_symlinks() {
    let s = Scratch::new("fs-report-link");
    let out = s.run(&["run", s.scenario(NULL_RUN).to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let (outside, bytes) = precious(&s);
    let link = s.dir.join("report.html");
    symlink(&outside, &link).unwrap();
    let out = s.run(&["report", "last", "-o", link.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("report.html: is a symbolic link"), "{}", text(&out));
    assert_eq!(std::fs::read(&outside).unwrap(), bytes);
    // a dangling one creates nothing either; an SVG directory that is a link is refused
    let dangling = s.dir.join("dangling.html");
    symlink(s.dir.join("created.html"), &dangling).unwrap();
    let out = s.run(&["report", "last", "-o", dangling.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(!s.dir.join("created.html").exists());
    let real = s.dir.join("charts-real");
    std::fs::create_dir(&real).unwrap();
    symlink(&real, s.dir.join("charts")).unwrap();
    let page = s.dir.join("page.html");
    let out = s.run(&["report", "last", "-o", page.to_str().unwrap(), "--svg", s.dir.join("charts").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(std::fs::read_dir(&real).unwrap().count(), 0, "no chart written through the link");
    // the plain case still works, and overwrites its own earlier page
    for _ in 0..2 {
        let out = s.run(&["report", "last", "-o", page.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    }
    assert!(std::fs::read_to_string(&page).unwrap().contains("<html"));
}

#[test]
fn blank_or_multi_line_targets_are_refused_with_their_line() {
    let s = Scratch::new("fs-blank-target");
    for (value, shown) in [("' '", "\" \""), ("''", "\"\""), ("\"a\\nb\"", "\"a\\nb\"")] {
        let scenario = s.scenario(&READER.replace("TARGET", value));
        let out = s.run(&["run", scenario.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{value}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("scenario.yaml:4: workloads.r.target: {shown} is not a path")), "{err}");
    }
    let out = s.run(&["run", s.scenario(READER).to_str().unwrap(), "--target", " "]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a path"), "{}", text(&out));
    let names: Vec<String> =
        std::fs::read_dir(&s.dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().all(|n| !n.trim().is_empty() && !n.contains('\n')), "{names:?}");
}

/// A paced appender: a known, small number of 64 KiB writes per run.
const APPEND: &str = "name: a\nworkloads:\n  log:\n    target: TARGET\n    rw: write\n    bs: 64k\n    extend: true\n    \
                      rate_iops: 20\n    duration: 2s\n";

fn appended(s: &Scratch, scenario: &Path) -> (u64, u64) {
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let written = ops(&s.show_json(), "log")[0]["bytes"].as_u64().unwrap();
    (written, std::fs::metadata(s.data().join("fathom-log.dat")).unwrap().len())
}

#[test]
fn an_appending_workload_starts_from_an_empty_file_each_run_unless_kept() {
    let s = Scratch::new("fs-extend");
    let scenario = s.scenario(APPEND);
    let (first, _) = appended(&s, &scenario);
    assert!(first > 0);
    let (written, len) = appended(&s, &scenario);
    assert_eq!(len, written, "the second run's file holds the second run's writes only");
    let kept = s.scenario(&APPEND.replace("extend: true", "extend: true\n    keep: true"));
    let (more, grown) = appended(&s, &kept);
    assert_eq!(grown, len + more, "keep: true appends to what is there");
}

#[test]
fn an_appending_workload_on_tmpfs_is_warned_about() {
    let shm = Path::new("/dev/shm");
    assert!(shm.is_dir(), "this test needs /dev/shm (a tmpfs)");
    let dir = shm.join(format!("fathom-test-extend-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let s = Scratch::new("fs-extend-tmpfs");
    let scenario =
        s.scenario(&APPEND.replace("TARGET", dir.to_str().unwrap()).replace("extend:", "direct: false\n    extend:"));
    let out = s.run(&["run", scenario.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let warnings = &s.show_json()["warnings"];
    assert!(warnings.as_array().unwrap().iter().any(|w| w["code"] == "memory-backed-target"), "{warnings}");
}

#[test]
fn a_throwaway_postgres_cluster_goes_only_into_a_directory_fathom_creates() {
    use std::os::unix::fs::MetadataExt;
    let s = Scratch::new("fs-pg-cluster");
    // planted where the cluster of run 1 would go, in a target others can write to
    let victim = s.dir.join("victim");
    std::fs::create_dir(&victim).unwrap();
    std::fs::write(victim.join("keep.txt"), b"mine").unwrap();
    let owner = std::fs::metadata(&victim).unwrap().uid();
    symlink(&victim, s.data().join("fathom-postgres-run1-0")).unwrap();
    let scenario = s.scenario(
        "name: pg\nworkloads:\n  p:\n    driver: pgbench\n    target: TARGET\n    script: select-only\n    \
         duration: 1s\n",
    );
    let out = s.run(&["run", scenario.to_str().unwrap(), "-q"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("fathom-postgres-run1-0: already exists"), "{}", text(&out));
    let entries: Vec<_> = std::fs::read_dir(&victim).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(entries, vec![std::ffi::OsString::from("keep.txt")], "nothing created in what the link points to");
    assert_eq!(std::fs::metadata(&victim).unwrap().uid(), owner, "not handed to the postgres user");
    assert_eq!(std::fs::read(victim.join("keep.txt")).unwrap(), b"mine");
}

#[test]
fn fio_job_files_are_not_written_through_a_symlinked_run_directory() {
    let s = Scratch::new("fs-fio-rundir");
    let elsewhere = s.dir.join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::create_dir_all(s.dir.join("results/runs")).unwrap();
    symlink(&elsewhere, s.dir.join("results/runs/1")).unwrap();
    let scenario = s.scenario(&READER.replace("duration: 1s", "duration: 1s\n    engine: fio"));
    let out = s.run(&["run", scenario.to_str().unwrap(), "-q"]);
    assert_ne!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("runs/1: is a symbolic link"), "{}", text(&out));
    let status: String = s.db().query_row("SELECT status FROM runs", [], |r| r.get(0)).unwrap();
    assert_eq!(status, "failed");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0, "no job file written through the link");
}

/// A target on one of the kernel's pseudo file systems is refused before anything is
/// laid out or written, by fathom's engine and by `--engine fio` alike: a write there
/// is a command to the kernel, whatever the file's type.
#[test]
fn a_target_on_procfs_or_sysfs_is_refused_before_anything_is_written() {
    let s = Scratch::new("safety-pseudo");
    let before = std::fs::read_to_string("/proc/self/oom_score_adj").unwrap();
    for (target, fs) in [("/proc/self/oom_score_adj", "procfs"), ("/sys/kernel/fathom-new", "sysfs")] {
        let writer = READER.replace("TARGET", target).replace("randread", "randwrite");
        let path = s.scenario(&writer);
        let out = s.run(&["run", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        let said = text(&out);
        assert!(
            said.contains(&format!("target {target} is on {fs}, one of the kernel's pseudo file systems")),
            "{said}"
        );
        assert_eq!(runs_recorded(&s), 0, "refused before a run was recorded");
    }
    let job = s.dir.join("pseudo.fio");
    std::fs::write(&job, "[w]\nfilename=/proc/self/oom_score_adj\nrw=write\nbs=4k\nsize=4k\n").unwrap();
    for engine in [&[][..], &["--engine", "fio"][..]] {
        let mut args = vec!["run", job.to_str().unwrap()];
        args.extend(engine);
        let out = s.run(&args);
        assert_eq!(out.status.code(), Some(2), "{engine:?}: {}", text(&out));
        assert!(text(&out).contains("is on procfs"), "{engine:?}: {}", text(&out));
    }
    assert_eq!(std::fs::read_to_string("/proc/self/oom_score_adj").unwrap(), before);
}

/// A symlinked `RESULTS/runs` stops the run naming it, whatever makes the run's
/// directory: fio's job file, or a PostgreSQL driver's throwaway cluster (built before
/// the clock starts, so refused as bad input before anything is built).
#[test]
fn a_symlinked_runs_directory_is_not_followed() {
    let s = Scratch::new("fs-runs-link");
    let elsewhere = s.dir.join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::create_dir_all(s.dir.join("results")).unwrap();
    symlink(&elsewhere, s.dir.join("results/runs")).unwrap();
    let fio = READER.replace("duration: 1s", "duration: 1s\n    engine: fio");
    let programs = ["driver: pgbench", "driver: tpcc\n    warehouses: 1", "driver: tpch\n    scale: 0.01"];
    let databases = programs.map(|p| format!("name: pg\nworkloads:\n  w:\n    {p}\n    duration: 2s\n"));
    for (i, body) in [fio].iter().chain(&databases).enumerate() {
        let scenario = s.scenario(body);
        let out = s.run(&["run", scenario.to_str().unwrap(), "-q"]);
        let code = if i == 0 { 1 } else { 2 };
        assert_eq!(out.status.code(), Some(code), "{body}: {}", text(&out));
        assert!(text(&out).contains("runs is a symbolic link"), "{body}: {}", text(&out));
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0, "{body}: something created through the link");
    }
}

#[test]
fn outputs_replace_a_hard_link_instead_of_writing_into_it() {
    let s = Scratch::new("fs-output-hardlink");
    let out = s.run(&["run", s.scenario(NULL_RUN).to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let (outside, bytes) = precious(&s);
    let table = s.dir.join("table.txt");
    std::fs::write(&table, "1 100\n2 190\n4 350\n8 520\n16 600\n").unwrap();
    let fit = ["fit", table.to_str().unwrap(), "--svg"];
    for (i, args) in [&["report", "last", "-o"][..], &["export", "last", "-o"][..], &fit[..]].iter().enumerate() {
        let linked = s.dir.join(format!("out-{i}"));
        std::fs::hard_link(&outside, &linked).unwrap();
        let out = s.run(&[args, &[linked.to_str().unwrap()][..]].concat());
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        assert_eq!(std::fs::read(&outside).unwrap(), bytes, "{args:?} wrote into the other name");
        assert!(std::fs::metadata(&linked).unwrap().len() > 0);
    }
}
