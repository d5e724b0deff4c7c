//! Interrupts with the programs fathom starts (fio, pgbench and its throwaway PostgreSQL,
//! iperf3 and its server, a timeline `exec`): Ctrl-C to the whole process group, as a
//! terminal sends it, or SIGTERM to fathom alone, stops everything promptly, keeps the
//! seconds measured, marks the run `aborted`, exits 130 and leaves no process behind.
//! A fathom killed outright leaves its programs running; the next `fathom run` stops them.

use crate::common::servers;
use crate::common::{Scratch, text};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Output};
use std::time::{Duration, Instant};

/// The contract is 2 s; a debug build on a busy 2-core machine gets more.
const PROMPT: Duration = Duration::from_secs(10);

/// What docs/security.md promises ("What an interrupt guarantees"): everything stops
/// within about 2 s.
const PROMISED: Duration = Duration::from_secs(2);

/// Starts `fathom ARGS` in a process group of its own (as a shell starts a job), its
/// output into files of the scratch directory.
pub(crate) fn spawn_job(s: &Scratch, args: &[&str]) -> Child {
    let out = std::fs::File::create(s.dir.join("stdout")).unwrap();
    let err = std::fs::File::create(s.dir.join("stderr")).unwrap();
    s.fathom(args).process_group(0).stdout(out).stderr(err).spawn().unwrap()
}

/// Waits for `child` to exit, at most `limit` (then kills it and fails).
pub(crate) fn wait_exit(s: &Scratch, mut child: Child, limit: Duration) -> (Output, Duration) {
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            // SAFETY: kill(2) of the group we started.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            panic!("fathom did not exit within {limit:?}: {}", std::fs::read_to_string(s.dir.join("stderr")).unwrap());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let took = started.elapsed();
    let read = |name: &str| std::fs::read(s.dir.join(name)).unwrap_or_default();
    (Output { status, stdout: read("stdout"), stderr: read("stderr") }, took)
}

/// Waits until `ready` holds, while `child` runs, at most 60 s; says what fathom said
/// if it ended first.
pub(crate) fn wait_for(s: &Scratch, child: &mut Child, what: &str, mut ready: impl FnMut() -> bool) {
    let started = Instant::now();
    while !ready() {
        if let Some(status) = child.try_wait().unwrap() {
            let said = std::fs::read_to_string(s.dir.join("stderr")).unwrap_or_default();
            panic!("fathom ended ({status}) before {what}: {said}");
        }
        assert!(started.elapsed() < Duration::from_secs(60), "no {what} after 60 s");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A query's single integer answer, 0 while the store or its table is not there yet.
pub(crate) fn count(s: &Scratch, sql: &str) -> i64 {
    rusqlite::Connection::open(s.dir.join("results/fathom.db"))
        .and_then(|db| db.query_row(sql, [], |r| r.get(0)))
        .unwrap_or(0)
}

/// Ctrl-C as a terminal sends it: SIGINT to every process of the group.
fn ctrl_c(child: &Child) {
    // SAFETY: kill(2) of the process group we started.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) };
}

/// The run's status and error.
fn status(s: &Scratch, run: i64) -> (String, Option<String>) {
    s.db().query_row("SELECT status, error FROM runs WHERE id = ?1", [run], |r| Ok((r.get(0)?, r.get(1)?))).unwrap()
}

/// Asserts the run ended as an interrupt must end it.
fn assert_aborted(s: &Scratch, out: &Output, took: Duration) {
    assert_eq!(out.status.code(), Some(130), "{}", text(out));
    assert!(took < PROMPT, "stopping took {took:?}");
    assert_eq!(status(s, 1).0, "aborted", "{}", text(out));
    assert!(!text(out).contains("panicked"), "{}", text(out));
}

/// PostgreSQL servers of the throwaway clusters of the fathom whose process is `pid`:
/// under `results`, or in the system's temporary directory, where they go when the
/// postgres user cannot reach the results. Other tests' and other fathoms' clusters on
/// the machine are not this run's.
fn postmasters(results: &Path, pid: u32) -> Vec<String> {
    let mut found = servers::running(&format!("-D {}", results.display()));
    found.extend(servers::running(&format!("/fathom-postgres-{pid}-")));
    found.retain(|c| c.contains("bin/postgres"));
    found
}

/// The port of the iperf3 server fathom started, as it says.
fn iperf3_port(s: &Scratch) -> String {
    std::fs::read_to_string(s.dir.join("stderr"))
        .unwrap()
        .split("iperf3 server on 127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next().map(str::to_string))
        .expect("the server's port is said")
}

/// iperf3 processes, server or client, on `port`.
fn iperf3s(port: &str) -> Vec<String> {
    servers::running(&format!("-p {port}")).into_iter().filter(|c| c.contains("iperf3")).collect()
}

/// A short run of another scenario in the same store.
fn short_run(s: &Scratch) -> Output {
    let short = s.dir.join("short.yaml");
    let body =
        format!("name: short\nworkloads:\n  r: {{target: {}, size: 8m, rw: read, duration: 1s}}\n", s.data().display());
    std::fs::write(&short, body).unwrap();
    s.run(&["run", short.to_str().unwrap(), "-q"])
}

/// Transactions of a pgbench log directory that ended in or after second `from` of the
/// run clock (`clock_ms` being its second 0).
fn logged_txns(dir: &Path, clock_ms: i64, from: i64) -> u64 {
    let mut n = 0;
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        for line in std::fs::read_to_string(entry.path()).unwrap_or_default().lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            let field = |i: usize| f.get(i).and_then(|s| s.parse::<i64>().ok());
            let (Some(secs), Some(us)) = (field(4), field(5)) else { continue };
            if (secs * 1_000_000 + us - clock_ms * 1000).div_euclid(1_000_000) >= from {
                n += 1;
            }
        }
    }
    n
}

#[test]
fn ctrl_c_stops_fio_keeps_its_seconds_and_aborts_the_run() {
    let s = Scratch::new("int-fio");
    let scenario = s.scenario(
        "name: long\nworkloads:\n  w:\n    target: TARGET\n    rw: randread\n    size: 16m\n    duration: 60s\n",
    );
    let mut child = spawn_job(&s, &["run", scenario.to_str().unwrap(), "--engine", "fio"]);
    wait_for(&s, &mut child, "samples", || count(&s, "SELECT count(*) FROM samples") > 0);
    ctrl_c(&child);
    let (out, took) = wait_exit(&s, child, PROMPT);
    assert_aborted(&s, &out, took);
    assert!(count(&s, "SELECT sum(ops) FROM samples") > 0);
    let job = s.dir.join("results/runs/1/w.fio");
    assert!(servers::running(job.to_str().unwrap()).is_empty(), "fio left running");
}

#[test]
fn ctrl_c_stops_pgbench_keeps_every_transaction_and_its_postgresql() {
    a_signal_stops_pgbench_keeps_every_transaction_and_its_postgresql("int-pgbench", libc::SIGINT);
}

/// The terminal or the ssh session going away: the kernel sends the job SIGHUP.
#[test]
fn a_hangup_stops_pgbench_keeps_every_transaction_and_its_postgresql() {
    a_signal_stops_pgbench_keeps_every_transaction_and_its_postgresql("int-hangup", libc::SIGHUP);
}

/// `signal` to fathom's process group while pgbench runs on a throwaway cluster.
fn a_signal_stops_pgbench_keeps_every_transaction_and_its_postgresql(name: &str, signal: i32) {
    let s = Scratch::new(name);
    let scenario = s.scenario(
        "name: pg\nworkloads:\n  tx:\n    driver: pgbench\n    script: select-only\n    clients: 2\n    \
         duration: 60s\n",
    );
    let mut child = spawn_job(&s, &["run", scenario.to_str().unwrap()]);
    let pid = child.id();
    let logs = s.dir.join("results/runs/1/tx.pgbench-log");
    let clock = || count(&s, "SELECT clock_start_unix_ms FROM runs WHERE id = 1");
    // pgbench writes its log in blocks: some transactions are on disk
    wait_for(&s, &mut child, "pgbench's log", || clock() > 0 && logged_txns(&logs, clock(), 0) > 0);
    std::thread::sleep(Duration::from_millis(1500));
    let before = logged_txns(&logs, clock(), 0);
    // SAFETY: kill(2) of the process group we started.
    unsafe { libc::kill(-(child.id() as i32), signal) };
    let (out, took) = wait_exit(&s, child, PROMPT);
    assert_aborted(&s, &out, took);
    let stored = count(&s, "SELECT sum(ops) FROM samples WHERE op = 3") as u64;
    assert!(stored >= before && stored > 0, "{stored} transactions stored, {before} logged before Ctrl-C");
    // pgbench ended writing out its log: every transaction it logged is stored
    let measure_t = count(&s, "SELECT measure_t FROM workloads");
    assert_eq!(stored, logged_txns(&logs, clock(), measure_t));
    let left = postmasters(&s.dir.join("results"), pid);
    assert!(left.is_empty(), "{left:?}");
    assert!(servers::running("pgbench -n").iter().all(|c| !c.contains(&s.dir.display().to_string())));
}

#[test]
fn ctrl_c_stops_iperf3_keeps_its_seconds_and_its_server() {
    let s = Scratch::new("int-iperf3");
    let scenario = s.scenario(
        "name: net\nworkloads:\n  s:\n    driver: iperf3\n    link: 100gbit\n    bitrate: 1gbit\n    duration: 60s\n",
    );
    let mut child = spawn_job(&s, &["run", scenario.to_str().unwrap()]);
    let output = s.dir.join("results/runs/1/s.iperf3.out");
    wait_for(&s, &mut child, "the iperf3 client", || output.exists());
    // a few of its seconds are measured
    std::thread::sleep(Duration::from_millis(3500));
    let port = iperf3_port(&s);
    ctrl_c(&child);
    let (out, took) = wait_exit(&s, child, PROMPT);
    assert_aborted(&s, &out, took);
    let seconds = count(&s, "SELECT count(DISTINCT t) FROM samples WHERE op = 4 AND bytes > 0");
    assert!(seconds >= 2, "{seconds} seconds of iperf3 kept: {}", text(&out));
    assert!(iperf3s(&port).is_empty(), "iperf3 left running");
}

/// Ctrl-C while timeline `step` runs `command` (in a shell that waits for it), with a
/// workload measuring meanwhile.
fn ctrl_c_kills_the_command_of(name: &str, step: &str, command: &str) {
    let s = Scratch::new(name);
    let scenario = s.scenario(&format!(
        "name: hook\nworkloads:\n  w: {{target: TARGET, size: 8m, rw: randread, duration: 60s}}\n\
         timeline:\n  - start: w\n    async: true\n  - {step}\n"
    ));
    let mut child = spawn_job(&s, &["run", scenario.to_str().unwrap()]);
    wait_for(&s, &mut child, "samples", || count(&s, "SELECT count(*) FROM samples") > 0);
    wait_for(&s, &mut child, "the hook's command", || !servers::running(command).is_empty());
    ctrl_c(&child);
    let (out, took) = wait_exit(&s, child, PROMPT);
    assert_aborted(&s, &out, took);
    assert!(count(&s, "SELECT sum(ops) FROM samples") > 0);
    assert!(servers::running(command).is_empty(), "the hook's command was left running");
}

#[test]
fn ctrl_c_during_an_exec_hook_kills_its_command() {
    ctrl_c_kills_the_command_of("int-exec", "exec: sleep 37; true\n    timeout: 120s", "sleep 37");
}

#[test]
fn ctrl_c_during_wait_until_kills_its_probe() {
    ctrl_c_kills_the_command_of("int-wait", "wait_until: {command: 'sleep 38; false', timeout: 120s}", "sleep 38");
}

#[test]
fn sigterm_during_pgbench_initialisation_stops_at_once() {
    let s = Scratch::new("int-pginit");
    let scenario = s.scenario("name: pg\nworkloads:\n  tx:\n    driver: pgbench\n    scale: 100\n    duration: 60s\n");
    let mut child = spawn_job(&s, &["run", scenario.to_str().unwrap()]);
    let pid = child.id();
    let needle = "pgbench -i -q -s 100";
    wait_for(&s, &mut child, "pgbench -i", || !servers::running(needle).is_empty());
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: kill(2) of fathom alone.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let (out, took) = wait_exit(&s, child, PROMPT);
    assert_aborted(&s, &out, took);
    assert!(servers::running(needle).is_empty(), "pgbench -i left running");
    let left = postmasters(&s.dir.join("results"), pid);
    assert!(left.is_empty(), "{left:?}");
}

const TPCC_LOAD: &str = "name: pg\nworkloads:\n  oltp:\n    driver: tpcc\n    warehouses: 4\n    duration: 60s\n";

/// How a TPC-C load's sessions are found: psql clients of the cluster, once fathom says
/// the warehouses load (each session runs many statements, none on its command line).
const TPCC_LOADING: Load = Load { client: "psql -X", said: "loading 4 TPC-C warehouses" };

/// What marks a load's sessions: their command line holds `client`, and fathom has said
/// `said` (the stage of the load they belong to).
struct Load {
    client: &'static str,
    said: &'static str,
}

/// SIGTERM to fathom alone.
fn sigterm(child: &Child) {
    // SAFETY: kill(2) of fathom alone.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
}

#[test]
fn sigterm_during_a_tpcc_load_stops_its_sessions_and_cluster() {
    let s = Scratch::new("int-tpccload");
    let took = a_signal_during_a_load_stops_its_sessions_and_cluster(&s, TPCC_LOAD, TPCC_LOADING, sigterm);
    assert!(took < PROMPT, "stopping took {took:?}");
}

/// The sessions are psql's, each piping generated rows into `COPY`.
#[test]
fn sigterm_during_a_tpch_load_stops_its_sessions_and_cluster() {
    let s = Scratch::new("int-tpchload");
    let scenario = "name: pg\nworkloads:\n  dss:\n    driver: tpch\n    scale: 0.1\n    duration: 60s\n";
    let copying = Load { client: "COPY lineitem FROM STDIN", said: "generating and loading TPC-H's tables" };
    let took = a_signal_during_a_load_stops_its_sessions_and_cluster(&s, scenario, copying, sigterm);
    assert!(took < PROMPT, "stopping took {took:?}");
}

/// `send` (a signal) while `scenario`'s database loads (its sessions as `load` finds
/// them): the run is aborted, no loading session and no server left. How long fathom
/// took to stop from the signal.
fn a_signal_during_a_load_stops_its_sessions_and_cluster(
    s: &Scratch,
    scenario: &str,
    load: Load,
    send: impl Fn(&Child),
) -> Duration {
    let scenario = s.scenario(scenario);
    let mut child = spawn_job(s, &["run", scenario.to_str().unwrap()]);
    let (results, pid) = (s.dir.join("results"), child.id());
    // this run's loading sessions are those connected to its cluster's port (other
    // tests load databases too)
    let ours = || {
        let postmaster = postmasters(&results, pid).into_iter().next()?;
        let data = postmaster.split(" -D ").nth(1)?.split_whitespace().next()?.to_string();
        let pid = std::fs::read_to_string(Path::new(&data).join("postmaster.pid")).ok()?;
        let port = pid.lines().nth(3)?.trim().to_string();
        Some(format!("port={port} "))
    };
    let loading = |needle: &str| servers::running(needle).into_iter().filter(|c| c.contains(load.client)).count();
    let said = || std::fs::read_to_string(s.dir.join("stderr")).unwrap_or_default().contains(load.said);
    let mut needle = None;
    wait_for(s, &mut child, "the load", || {
        needle = needle.take().or_else(ours);
        needle.as_deref().is_some_and(|n| said() && loading(n) > 0)
    });
    let needle = needle.unwrap();
    std::thread::sleep(Duration::from_millis(500));
    send(&child);
    let (out, took) = wait_exit(s, child, PROMPT);
    assert_aborted(s, &out, took);
    assert_eq!(loading(&needle), 0, "a loading session left running");
    let left = postmasters(&results, pid);
    assert!(left.is_empty(), "{left:?}");
    took
}

/// Ctrl-C while TPC-H loads into the user's own server (`dsn`): the run is aborted
/// and none of the tables it created is left there, half loaded.
#[test]
fn ctrl_c_during_a_tpch_load_into_a_dsn_drops_its_tables() {
    let s = Scratch::new("int-tpch-dsn");
    let pg = servers::Postgres::start(&s.dir.join("pg"), servers::free_port());
    let scenario = s.scenario("name: pg\nworkloads:\n  dss:\n    driver: tpch\n    scale: 0.1\n    duration: 60s\n");
    let dsn = format!("dsn={}", pg.dsn("postgres"));
    let mut child = spawn_job(&s, &["run", scenario.to_str().unwrap(), "--set", &dsn]);
    let needle = format!("port={} ", pg.port);
    let loading = || servers::running(&needle).into_iter().filter(|c| c.contains("COPY lineitem")).count();
    wait_for(&s, &mut child, "the load", || loading() > 0);
    std::thread::sleep(Duration::from_millis(500));
    ctrl_c(&child);
    let (out, took) = wait_exit(&s, child, PROMPT);
    assert_aborted(&s, &out, took);
    let tables = std::process::Command::new("psql")
        .args(["-X", "-A", "-t", "-d", &pg.dsn("postgres"), "-c"])
        .arg("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&tables.stdout).trim(), "0", "TPC-H's tables left behind: {}", text(&out));
}

#[test]
fn the_next_run_stops_what_a_killed_fathom_left_and_aborts_its_run() {
    let s = Scratch::new("int-killed");
    let scenario = s.scenario(
        "name: pg\nworkloads:\n  tx:\n    driver: pgbench\n    script: select-only\n    clients: 2\n    \
         duration: 60s\n",
    );
    let mut child = spawn_job(&s, &["run", scenario.to_str().unwrap()]);
    let (results, pid) = (s.dir.join("results"), child.id());
    wait_for(&s, &mut child, "PostgreSQL and pgbench", || {
        !postmasters(&results, pid).is_empty() && count(&s, "SELECT count(*) FROM workloads") > 0
    });
    std::thread::sleep(Duration::from_millis(1000));
    child.kill().unwrap(); // SIGKILL: fathom cannot stop anything
    child.wait().unwrap();
    assert!(!postmasters(&results, pid).is_empty(), "PostgreSQL is left running by a killed fathom");
    assert_eq!(status(&s, 1).0, "running");

    let out = short_run(&s);
    assert!(out.status.success(), "{}", text(&out));
    let started = Instant::now();
    while !postmasters(&results, pid).is_empty() {
        assert!(started.elapsed() < PROMPT, "left running: {:?}", postmasters(&results, pid));
        std::thread::sleep(Duration::from_millis(100));
    }
    let (status, error) = status(&s, 1);
    assert_eq!(status, "aborted");
    assert!(error.as_deref().unwrap_or("").contains("killed"), "{error:?}");
    assert!(servers::running("pgbench -n").iter().all(|c| !c.contains(&s.dir.display().to_string())));
}

#[test]
fn a_second_ctrl_c_exits_at_once_and_kills_postgresql_and_iperf3() {
    let s = Scratch::new("int-twice");
    let scenario = s.scenario(
        "name: both\nworkloads:\n  tx:\n    driver: pgbench\n    script: select-only\n    duration: 60s\n  \
         net:\n    driver: iperf3\n    link: 100gbit\n    bitrate: 1gbit\n    duration: 60s\n\
         timeline:\n  - start: tx\n    async: true\n  - start: net\n",
    );
    let mut child = spawn_job(&s, &["run", scenario.to_str().unwrap()]);
    let (results, pid) = (s.dir.join("results"), child.id());
    let output = results.join("runs/1/net.iperf3.out");
    wait_for(&s, &mut child, "PostgreSQL and iperf3", || !postmasters(&results, pid).is_empty() && output.exists());
    std::thread::sleep(Duration::from_millis(1000));
    let port = iperf3_port(&s);
    ctrl_c(&child);
    // a second interrupt, not the first one delivered again
    std::thread::sleep(Duration::from_millis(200));
    ctrl_c(&child);
    let (out, took) = wait_exit(&s, child, PROMPT);
    assert_eq!(out.status.code(), Some(130), "{}", text(&out));
    assert!(took < PROMPT, "{took:?}");
    // it did not stop in order, but the run is ended all the same, as aborted
    let (ended, error) = status(&s, 1);
    assert_eq!(ended, "aborted", "{}", text(&out));
    assert!(error.unwrap_or_default().contains("interrupted twice: stopped at once"), "{}", text(&out));
    let dir = s.dir.display().to_string();
    let started = Instant::now();
    let left = || {
        let mut left = postmasters(&results, pid);
        left.extend(iperf3s(&port));
        left.extend(servers::running("pgbench -n").into_iter().filter(|c| c.contains(&dir)));
        left
    };
    while !left().is_empty() {
        assert!(started.elapsed() < Duration::from_secs(5), "left running: {:?}", left());
        std::thread::sleep(Duration::from_millis(100));
    }
    // the next run finds nothing left to stop
    let out = short_run(&s);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(status(&s, 1).0, "aborted");
}

#[test]
fn an_interrupt_delivered_several_times_at_once_stops_the_run_in_order() {
    let s = Scratch::new("int-repeated");
    let scenario = s.scenario(
        "name: t
workloads:
  w: {engine: null, rw: randread, bs: 4k, duration: 60s}
",
    );
    let mut child = spawn_job(&s, &["run", scenario.to_str().unwrap()]);
    wait_for(&s, &mut child, "a second stored", || count(&s, "SELECT count(*) FROM samples") > 0);
    // `timeout` forwarding a terminal's SIGINT to the group: three within microseconds
    for _ in 0..3 {
        ctrl_c(&child);
    }
    let (out, took) = wait_exit(&s, child, PROMPT);
    assert_aborted(&s, &out, took);
    let (_, error) = status(&s, 1);
    assert!(!error.unwrap_or_default().contains("interrupted twice"), "one interrupt, stopped in order");
    assert!(count(&s, "SELECT count(*) FROM samples WHERE run_id = 1") > 0, "its seconds are kept");
}

#[test]
fn ctrl_c_under_timeout_stops_the_run_in_order() {
    let s = Scratch::new("int-timeout");
    let scenario = s.scenario("name: t\nworkloads:\n  w: {engine: null, rw: randread, bs: 4k, duration: 60s}\n");
    // `timeout` forwards the SIGINT it gets to fathom and to the group: fathom sees the
    // one Ctrl-C two or three times
    let out = std::fs::File::create(s.dir.join("stdout")).unwrap();
    let err = std::fs::File::create(s.dir.join("stderr")).unwrap();
    let mut cmd = std::process::Command::new("timeout");
    cmd.arg("120").arg(env!("CARGO_BIN_EXE_fathom")).args(["run", scenario.to_str().unwrap(), "--results"]);
    cmd.arg(s.dir.join("results")).current_dir(&s.dir).env_remove("FATHOM_RESULTS");
    let mut child = cmd.process_group(0).stdout(out).stderr(err).spawn().unwrap();
    wait_for(&s, &mut child, "a second stored", || count(&s, "SELECT count(*) FROM samples") > 0);
    ctrl_c(&child);
    let (out, took) = wait_exit(&s, child, PROMPT);
    assert_aborted(&s, &out, took);
    let (_, error) = status(&s, 1);
    assert_eq!(error.as_deref(), Some("interrupted by a signal"), "one interrupt, stopped in order");
    assert!(count(&s, "SELECT count(*) FROM samples WHERE run_id = 1") > 0, "its seconds are kept");
}

#[test]
fn a_second_interrupt_while_the_run_stops_slowly_still_marks_it_aborted() {
    let s = Scratch::new("int-slow-stop");
    // an agent whose transport lingers after bye: the run's orderly end waits 5 s for it
    let slow = s.dir.join("slow-agent");
    let script = format!("#!/bin/sh\n{} \"$@\"\nexec sleep 8\n", env!("CARGO_BIN_EXE_fathom"));
    // written by a child process, so that no descriptor of it leaks into a forked one
    let wrote = std::process::Command::new("sh")
        .args(["-c", "printf '%s' \"$1\" > \"$2\" && chmod +x \"$2\"", "sh", &script])
        .arg(&slow)
        .status()
        .unwrap();
    assert!(wrote.success());
    let hosts = s.dir.join("hosts.yaml");
    let host = s.data();
    std::fs::write(
        &hosts,
        format!("hosts:\n  slow: {{transport: local, fathom: {}, target: {}}}\n", slow.display(), host.display()),
    )
    .unwrap();
    let scenario = s.scenario("name: t\nworkloads:\n  w: {hosts: all, rw: randread, size: 8m, duration: 60s}\n");
    let mut child = spawn_job(&s, &["run", scenario.to_str().unwrap(), "--hosts", hosts.to_str().unwrap()]);
    wait_for(&s, &mut child, "a second stored", || count(&s, "SELECT count(*) FROM samples") > 0);
    ctrl_c(&child);
    // well after the first, while the run waits for its agent to leave
    std::thread::sleep(Duration::from_millis(1000));
    ctrl_c(&child);
    let (out, took) = wait_exit(&s, child, PROMPT);
    assert_aborted(&s, &out, took);
    let (_, error) = status(&s, 1);
    assert!(error.unwrap_or_default().contains("interrupted twice: stopped at once"), "{}", text(&out));
    assert!(count(&s, "SELECT count(*) FROM samples WHERE run_id = 1") > 0, "its seconds are kept");
}

#[test]
fn ctrl_c_while_an_agent_lays_out_stops_it_and_its_agent() {
    let s = Scratch::new("int-agent");
    let host = s.dir.join("host-lay");
    std::fs::create_dir_all(&host).unwrap();
    let hosts = s.dir.join("hosts.yaml");
    std::fs::write(&hosts, format!("hosts:\n  lay: {{transport: local, target: {}}}\n", host.display())).unwrap();
    // a file that takes far longer than the bound to lay out
    let scenario =
        s.scenario("name: big\nworkloads:\n  r:\n    hosts: all\n    rw: randread\n    size: 4g\n    duration: 5s\n");
    let mut child = spawn_job(&s, &["run", scenario.to_str().unwrap(), "--hosts", hosts.to_str().unwrap()]);
    let data = host.join("fathom-r.dat");
    let size = || std::fs::metadata(&data).map(|m| m.len()).unwrap_or(0);
    wait_for(&s, &mut child, "the agent's layout", || size() > 0);
    ctrl_c(&child);
    let (out, took) = wait_exit(&s, child, PROMPT);
    assert_eq!(out.status.code(), Some(130), "{}", text(&out));
    assert!(took < PROMPT, "stopping took {took:?}");
    let started = Instant::now();
    while !servers::running("agent --name lay").is_empty() {
        assert!(started.elapsed() < Duration::from_secs(5), "the agent is still laying out");
        std::thread::sleep(Duration::from_millis(100));
    }
    let at = size();
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(size(), at, "the layout goes on");
}

/// A server that accepts connections (the kernel does, from its backlog) and never
/// says a word; its port.
fn silent_server() -> (std::net::TcpListener, u16) {
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    (silent, port)
}

/// Each PostgreSQL driver given a `dsn` whose server never answers: the run ends on its
/// own with exit 2, naming the server and what fathom asked it, having said it waited.
#[test]
fn a_server_that_never_answers_ends_the_run_naming_it() {
    let s = Scratch::new("int-silent-bound");
    let (_silent, port) = silent_server();
    for program in ["pgbench", "tpcc", "tpch"] {
        let scenario = s.scenario(&format!("name: pg\nworkloads:\n  w:\n    driver: {program}\n    duration: 5s\n"));
        let dsn = format!("dsn=host=127.0.0.1 port={port} user=x dbname=silent");
        let child = spawn_job(&s, &["run", scenario.to_str().unwrap(), "--set", &dsn]);
        // the connection's bound (10 s) and a debug build's start on a busy machine
        let (out, _) = wait_exit(&s, child, Duration::from_secs(90));
        let said = text(&out);
        assert_eq!(out.status.code(), Some(2), "{program}: {said}");
        let server = format!("the server at 127.0.0.1:{port}");
        assert!(said.contains(&format!("waiting for {server} to answer (")), "{program}: {said}");
        assert!(said.contains(&format!("{server} did not open a session within 10 s (")), "{program}: {said}");
    }
}

#[test]
fn sigterm_while_a_server_never_answers_stops_at_once() {
    let s = Scratch::new("int-silent");
    let (_silent, port) = silent_server();
    let scenario = s.scenario("name: pg\nworkloads:\n  tx:\n    driver: pgbench\n    duration: 60s\n");
    let dsn = format!("dsn=host=127.0.0.1 port={port} user=x dbname=silent{port}");
    let mut child = spawn_job(&s, &["run", scenario.to_str().unwrap(), "--set", &dsn]);
    let needle = format!("dbname=silent{port}");
    let psql = || servers::running(&needle).into_iter().filter(|c| c.contains("psql")).collect::<Vec<_>>();
    wait_for(&s, &mut child, "psql", || !psql().is_empty());
    // SAFETY: kill(2) of fathom alone.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let (out, took) = wait_exit(&s, child, PROMPT);
    assert_eq!(out.status.code(), Some(130), "{}", text(&out));
    assert!(took < PROMPT, "stopping took {took:?}");
    assert!(psql().is_empty(), "psql left waiting");
}

/// The tests that judge a rate or a time, and so hold the machine alone: `make test` runs
/// them last, one at a time (see `Scratch::alone`).
mod alone {
    use super::*;

    /// The terminal or the ssh session gone while a throwaway cluster loads: the promise
    /// (docs/security.md, "What an interrupt guarantees") is kept, the machine being the
    /// test's alone: nothing is spent tidying a cluster that is thrown away whole.
    #[test]
    fn a_hangup_during_a_tpcc_load_stops_everything_within_2_s() {
        let s = Scratch::alone("int-tpccload-hup");
        let hangup = |child: &Child| {
            // SAFETY: kill(2) of the process group we started, as the kernel sends SIGHUP.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGHUP) };
        };
        let took = a_signal_during_a_load_stops_its_sessions_and_cluster(&s, TPCC_LOAD, TPCC_LOADING, hangup);
        assert!(took < PROMISED, "stopping took {took:?}, {PROMISED:?} promised");
    }
}
