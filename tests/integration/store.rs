//! The results store under adverse conditions: read-only, shared by runs starting
//! together, damaged, foreign, and on a filesystem that fills up. The real binary runs;
//! read-only and full filesystems are real tmpfs mounts (these tests run as root, as CI
//! does; without the right to mount they fail, saying so).

use crate::common::tmpfs::Tmpfs;
use crate::common::{Scratch, text};
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A small open-loop workload: few rows a second, little CPU (the machine is shared).
const SMALL: &str = "\
name: small
workloads:
  r:
    target: TARGET
    rw: randrw
    size: 4m
    engine: psync
    direct: false
    rate_iops: 200
    jobs: 2
    duration: DURATION
";

/// The application_id fathom stamps on its stores (docs/metrics.md, "The store").
const FATHOM_APPLICATION_ID: i64 = 0x6661_7468;

fn results(s: &Scratch) -> PathBuf {
    s.dir.join("results")
}

fn store_file(s: &Scratch) -> PathBuf {
    results(s).join("fathom.db")
}

fn small(s: &Scratch, duration: &str) -> String {
    s.scenario(&SMALL.replace("DURATION", duration)).display().to_string()
}

fn run_ok(s: &Scratch, args: &[&str]) -> String {
    let out = s.run(args);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn assert_refused(s: &Scratch, args: &[&str], expect: &[&str]) {
    let out = s.run(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
    for e in expect {
        assert!(err.contains(e), "{args:?}: expected `{e}` in: {err}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

/// The files of a directory (a database and any -wal, -shm) and their bytes.
fn bytes_of(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect();
    files.sort();
    files
}

#[test]
fn a_read_only_store_is_readable_by_every_read_command() {
    let s = Scratch::new("store-read-only");
    let mount = Tmpfs::mount(&results(&s), "32m");
    let scenario = small(&s, "2s");
    run_ok(&s, &["run", &scenario, "--quiet"]);
    run_ok(&s, &["run", &scenario, "--quiet"]);
    mount.remount("ro");
    assert!(std::fs::write(results(&s).join("probe"), b"x").is_err(), "the mount is read-only");

    assert!(run_ok(&s, &["runs"]).contains("small"));
    assert!(run_ok(&s, &["show", "last"]).contains("IOPS"));
    run_ok(&s, &["show", "1", "--json"]);
    assert!(run_ok(&s, &["export", "last"]).contains("r"));
    run_ok(&s, &["export", "last", "--samples", "--format", "json"]);
    run_ok(&s, &["compare", "1", "2"]);
    // read far enough to count the run's phases (two runs of one phase: nothing to fit)
    assert_refused(&s, &["fit", "--run", "last"], &["run 2: fewer than 3 phases"]);
    let report = s.dir.join("report.html");
    run_ok(&s, &["report", "last", "-o", report.to_str().unwrap()]);
    assert!(std::fs::metadata(&report).unwrap().len() > 1000);
    // writing needs a writable store: refused, saying why
    assert_refused(&s, &["run", &scenario, "--quiet"], &["read-only"]);
}

/// `chattr +i` on a file, undone when dropped (root ignores file modes, not this).
struct Immutable(PathBuf);

impl Immutable {
    fn set(path: &Path) -> Immutable {
        let out = Command::new("chattr").arg("+i").arg(path).output().unwrap();
        assert!(
            out.status.success(),
            "this test needs chattr +i (root, ext4): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Immutable(path.to_path_buf())
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = Command::new("chattr").arg("-i").arg(&self.0).status();
    }
}

#[test]
fn a_read_only_store_file_is_readable_and_refused_for_runs() {
    let s = Scratch::new("store-immutable");
    let scenario = small(&s, "1s");
    run_ok(&s, &["run", &scenario, "--quiet"]);
    let before = std::fs::read(store_file(&s)).unwrap();
    let _immutable = Immutable::set(&store_file(&s));
    assert!(run_ok(&s, &["runs"]).contains("small"));
    run_ok(&s, &["show", "last", "--json"]);
    run_ok(&s, &["export", "last"]);
    assert_refused(&s, &["run", &scenario, "--quiet"], &["read-only"]);
    assert!(before == std::fs::read(store_file(&s)).unwrap());
}

#[test]
fn a_read_only_store_that_needs_an_upgrade_says_so() {
    let s = Scratch::new("store-read-only-old");
    let mount = Tmpfs::mount(&results(&s), "32m");
    run_ok(&s, &["run", &small(&s, "1s"), "--quiet"]);
    let db = s.db();
    // as a fathom of schema 3 left it: no observations table yet
    db.execute_batch("DROP TABLE observations; PRAGMA user_version = 3; PRAGMA wal_checkpoint(TRUNCATE);").unwrap();
    drop(db);
    mount.remount("ro");
    assert_refused(&s, &["runs"], &["schema 3", "read-only", "upgrade"]);
}

#[test]
fn three_first_runs_at_once_all_succeed() {
    let s = Scratch::new("store-concurrent");
    let scenario = small(&s, "1s");
    for round in 0..10 {
        let _ = std::fs::remove_dir_all(results(&s));
        let children: Vec<Child> = (0..3)
            .map(|_| {
                s.fathom(&["run", &scenario, "--quiet"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
            })
            .collect();
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert_eq!(out.status.code(), Some(0), "round {round}: {}", text(&out));
        }
        let n: i64 =
            s.db().query_row("SELECT count(*) FROM runs WHERE status = 'completed'", [], |r| r.get(0)).unwrap();
        assert_eq!(n, 3, "round {round}");
    }
}

#[test]
fn a_damaged_store_is_refused_for_writing_and_left_as_it_was() {
    let s = Scratch::new("store-damaged");
    let scenario = small(&s, "3s");
    run_ok(&s, &["run", &scenario, "--quiet"]);
    let path = store_file(&s);
    let page = 4096usize;
    let mut bytes = std::fs::read(&path).unwrap();
    let pages = bytes.len() / page;
    assert!(pages >= 6, "a store of {pages} pages is too small to damage in the middle");
    for b in &mut bytes[(pages / 2) * page..(pages / 2 + 1) * page] {
        *b = 0xa5;
    }
    std::fs::write(&path, &bytes).unwrap();
    assert_refused(&s, &["run", &scenario, "--quiet"], &["fathom.db", "damaged"]);
    assert!(bytes == std::fs::read(&path).unwrap(), "the damaged store was written to");
    // reading a WAL-mode store read-only leaves SQLite's -wal (empty) and -shm beside it
    let wal = std::fs::metadata(results(&s).join("fathom.db-wal")).map(|m| m.len()).unwrap_or(0);
    assert_eq!(wal, 0, "nothing was written to the damaged store's WAL");
}

#[test]
fn a_foreign_sqlite_file_named_fathom_db_is_refused_untouched() {
    let s = Scratch::new("store-foreign");
    std::fs::create_dir_all(results(&s)).unwrap();
    let db = Connection::open(store_file(&s)).unwrap();
    db.execute_batch("CREATE TABLE accounts (name TEXT, balance INTEGER); INSERT INTO accounts VALUES ('a', 1);")
        .unwrap();
    drop(db);
    let before = bytes_of(&results(&s));
    let scenario = small(&s, "1s");
    assert_refused(&s, &["run", &scenario, "--quiet"], &["fathom.db", "not a fathom results store"]);
    assert!(before == bytes_of(&results(&s)), "the foreign file was written to");
    assert_refused(&s, &["runs"], &["not a fathom results store"]);
    assert!(before == bytes_of(&results(&s)), "the foreign file was written to");

    // not SQLite at all
    std::fs::write(store_file(&s), "my notes\n".repeat(1000)).unwrap();
    let before = bytes_of(&results(&s));
    assert_refused(&s, &["run", &scenario, "--quiet"], &["fathom.db", "not a fathom results store"]);
    assert!(before == bytes_of(&results(&s)), "the foreign file was written to");
}

#[test]
fn a_store_from_before_application_ids_is_accepted_and_stamped() {
    let s = Scratch::new("store-legacy");
    let scenario = small(&s, "1s");
    run_ok(&s, &["run", &scenario, "--quiet"]);
    // what a store of schema 4, the last before the stamp, looked like
    s.db().execute_batch("PRAGMA application_id = 0; PRAGMA user_version = 4; DROP TABLE processes;").unwrap();
    assert!(run_ok(&s, &["runs"]).contains("small"), "read as it is");
    run_ok(&s, &["run", &scenario, "--quiet"]);
    let id: i64 = s.db().query_row("PRAGMA application_id", [], |r| r.get(0)).unwrap();
    assert_eq!(id, FATHOM_APPLICATION_ID);
    let n: i64 = s.db().query_row("SELECT count(*) FROM runs", [], |r| r.get(0)).unwrap();
    assert_eq!(n, 2);
}

#[test]
fn a_run_whose_store_fills_up_ends_failed_with_its_seconds() {
    let s = Scratch::new("store-full");
    let mount = Tmpfs::mount(&results(&s), "24m");
    let mut child =
        s.fathom(&["run", &small(&s, "60s"), "--quiet"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let started = Instant::now();
    loop {
        let n: i64 = Connection::open(store_file(&s))
            .and_then(|db| db.query_row("SELECT count(DISTINCT t) FROM samples", [], |r| r.get(0)))
            .unwrap_or(0);
        if n >= 2 {
            break;
        }
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        assert!(started.elapsed() < Duration::from_secs(60), "no samples after a minute");
        std::thread::sleep(Duration::from_millis(200));
    }
    mount.fill("filler");
    let filled = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(filled.elapsed() < Duration::from_secs(30), "the run went on for {:?} with a full store", filled.elapsed());
    assert!(text(&out).contains("full"), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("failed"), "the summary is printed: {}", text(&out));

    // every read command works on the full filesystem
    mount.fill("filler");
    let runs = run_ok(&s, &["runs"]);
    assert!(runs.contains("failed"), "{runs}");
    let show: serde_json::Value = serde_json::from_str(&run_ok(&s, &["show", "last", "--json"])).unwrap();
    assert_eq!(show["run"]["status"], "failed", "{show}");
    assert!(show["run"]["error"].as_str().unwrap().contains("full"), "{show}");
    run_ok(&s, &["export", "last", "--samples"]);
    let report = s.dir.join("report.html");
    run_ok(&s, &["report", "last", "-o", report.to_str().unwrap()]);
    // (SQLite cannot make a -shm file on the full filesystem: read the file as it is)
    let db = Connection::open_with_flags(
        format!("file:{}?immutable=1", store_file(&s).display()),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_URI,
    )
    .unwrap();
    let seconds: i64 = db.query_row("SELECT count(DISTINCT t) FROM samples", [], |r| r.get(0)).unwrap();
    assert!(seconds >= 2, "the seconds written before the disk filled are kept: {seconds}");
}

#[test]
fn a_run_the_store_has_no_room_for_is_refused() {
    let s = Scratch::new("store-no-room");
    let _mount = Tmpfs::mount(&results(&s), "16m");
    // 20 minutes of 64 workers: about 15 MB of rows expected, more than 16 MiB less the reserve
    let scenario = s.scenario(&SMALL.replace("DURATION", "20m").replace("jobs: 2", "jobs: 64"));
    let mut child = s
        .fathom(&["run", scenario.to_str().unwrap(), "--quiet"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("the run started: {}", text(&child.wait_with_output().unwrap()));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not enough free space for this run's results") && err.contains("1200 s"), "{err}");
    let n: i64 = s.db().query_row("SELECT count(*) FROM runs", [], |r| r.get(0)).unwrap();
    assert_eq!(n, 0, "no run is stored");
    // a shorter one fits
    let scenario = s.scenario(&SMALL.replace("DURATION", "1s").replace("jobs: 2", "jobs: 64"));
    run_ok(&s, &["run", scenario.to_str().unwrap(), "--quiet"]);
}

#[test]
fn a_store_of_schema_6_gains_the_expectations_reference_column() {
    let s = Scratch::new("store-schema-6");
    let scenario = s.scenario(
        "name: judged\nworkloads:\n  w: {target: TARGET, size: 16m, rw: randread, duration: 1s}\n\
         expect:\n  - w.iops > 0\n  - w.p99 <= 1000 x w\n",
    );
    let scenario = scenario.to_str().unwrap();
    run_ok(&s, &["run", scenario, "--quiet"]);
    // as a fathom of schema 6 left it: expectations without `reference`
    let db = s.db();
    db.execute_batch("ALTER TABLE expectations DROP COLUMN reference; PRAGMA user_version = 6;").unwrap();
    drop(db);
    // read: upgraded, the old rows have no reference
    let show: serde_json::Value = serde_json::from_str(&run_ok(&s, &["show", "last", "--json"])).unwrap();
    assert!(show["expectations"].as_array().unwrap().iter().all(|e| e["reference"].is_null()), "{show}");
    // written: a relative expectation keeps what it was compared with
    run_ok(&s, &["run", scenario, "--quiet"]);
    let show = s.show_json();
    assert!(show["expectations"][1]["reference"].as_f64().unwrap() > 0.0, "{show}");
    let version: i64 = s.db().query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert!(version > 6, "upgraded: {version}");
}

/// A store deleted while a run writes to it takes the run's seconds with it: the run
/// fails (exit 1) saying so, rather than report `completed` of rows no one can read.
#[test]
fn a_store_deleted_mid_run_fails_the_run_saying_so() {
    let s = Scratch::new("store-deleted");
    let scenario =
        s.scenario("name: d\nworkloads:\n  w: {engine: null, rw: randread, bs: 4k, rate_iops: 1000, duration: 4s}\n");
    let child =
        s.fathom(&["run", scenario.to_str().unwrap()]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let db = s.dir.join("results/fathom.db");
    let started = Instant::now();
    // once its first second is stored, the store goes
    let stored = || {
        // read-only: never creating the file before fathom does
        Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .and_then(|c| c.query_row("SELECT count(*) FROM samples", [], |r| r.get::<_, i64>(0)))
            .unwrap_or(0)
    };
    while stored() == 0 {
        assert!(started.elapsed() < Duration::from_secs(60), "no second stored");
        std::thread::sleep(Duration::from_millis(100));
    }
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("was deleted or replaced during the run"), "{}", text(&out));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("completed"), "{}", text(&out));
}

/// A store with a garbage page in its middle: every read command that meets it says
/// which store is damaged and how to save what it holds (exit 2), never SQLite's bare
/// words.
#[test]
fn a_store_with_a_garbage_page_says_how_to_recover_it() {
    let s = Scratch::new("store-garbage-page");
    let path = s.scenario("name: g\nworkloads:\n  w: {engine: null, rw: randread, duration: 2s}\n");
    assert!(s.run(&["run", path.to_str().unwrap(), "-q"]).status.success());
    let db = s.dir.join("results/fathom.db");
    let mut bytes = std::fs::read(&db).unwrap();
    let page = 4096;
    assert!(bytes.len() > 4 * page, "{} bytes", bytes.len());
    for (i, b) in bytes[3 * page..4 * page].iter_mut().enumerate() {
        *b = (i * 7 + 13) as u8;
    }
    std::fs::write(&db, bytes).unwrap();
    for command in [&["runs"][..], &["show", "1"], &["run", path.to_str().unwrap(), "-q"]] {
        let out = s.run(command);
        assert_eq!(out.status.code(), Some(2), "{command:?}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        let hint = format!("sqlite3 {} .recover", db.display());
        assert!(err.contains("damaged") && err.contains(&hint), "{command:?}: {err}");
    }
}

/// A results directory that refuses new files (immutable here, `chattr +i`; read-only
/// or another user's alike) is named with the system's reason, not SQLite's bare
/// "unable to open database file".
#[test]
fn a_results_directory_that_refuses_files_is_named_with_its_reason() {
    let s = Scratch::new("store-refusing-directory");
    let results = s.dir.join("frozen");
    std::fs::create_dir(&results).unwrap();
    let set = |flag: &str| std::process::Command::new("chattr").arg(flag).arg(&results).status().unwrap().success();
    assert!(set("+i"), "chattr +i on the scratch directory's file system");
    let path = s.scenario("name: f\nworkloads:\n  w: {engine: null, rw: randread, duration: 1s}\n");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fathom"))
        .args(["run", path.to_str().unwrap(), "-q", "--results"])
        .arg(&results)
        .output()
        .unwrap();
    assert!(set("-i"));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    let said = format!("its directory {} refuses new files (Operation not permitted", results.display());
    assert!(err.contains(&said), "{err}");
}
