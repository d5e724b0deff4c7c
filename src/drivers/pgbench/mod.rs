//! `driver: pgbench`: the real pgbench against PostgreSQL, its per-transaction log turned
//! into fathom's samples (op `txn`), so transactions per second and their latency
//! percentiles sit in the same store, summary and report as IO.
//!
//! Before anything is laid out or recorded, [`connect`] reaches each `dsn` given: one
//! that cannot be reached is bad input, in PostgreSQL's own words, and no run is
//! recorded. Before the run clock starts, [`prepare`] finds each workload's database: the
//! `dsn` given, or a throwaway cluster per distinct `settings`
//! ([`super::postgres::Cluster`]), and initialises it at `scale` (`pgbench -i`) unless
//! `reuse` finds it already at that scale.
//! On its first second the workload starts `pgbench -T` with the per-transaction log,
//! read as pgbench writes it: each second's transactions are sent to the collector as
//! they are logged, so the store, the live view and the Prometheus endpoint have them
//! while pgbench runs (see [`log`] for how late a second can be).

pub mod log;

use super::driver::{
    DbServer, Driver, LaunchContext, OVERRUN, Ready, RunDir, bad_input, finish_program, overran, spawn_program,
};
use super::postgres;
use super::throwaway::Clusters;
use crate::children::{self, Group};
use crate::clock::sleep_until;
use crate::engine::WorkerThread;
use crate::engine::target::DataFile;
use crate::error::{Error, Result};
use crate::metrics::Op;
use crate::metrics::format::counted;
use crate::scenario::program::pgbench::{Pgbench, Script};
use crate::scenario::program::seam::Spec;
use crate::scenario::{EngineKind, Scenario, Workload};
use crate::store::ObservationRow;
use crate::store::sink::Record;
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long pgbench takes from being started to its first transaction's end (measured:
/// 25-32 ms, process start and connecting its clients on loopback).
pub const STARTUP: Duration = Duration::from_millis(25);

/// Databases ready for a run's pgbench workloads, and the clusters fathom started for
/// them (stopped and removed when this is dropped or [`Databases::stop`]ped).
#[derive(Default)]
pub struct Databases {
    /// Per workload index: the connection string pgbench uses.
    pub dsn: HashMap<usize, String>,
    clusters: Clusters,
}

/// Connects to the server of each workload with a `dsn` (`SELECT 1` with psql): the
/// first that cannot be reached, with PostgreSQL's message; `stop` ends the wait.
fn connect(scenario: &Scenario, stop: &AtomicBool) -> Result<()> {
    for w in &scenario.workloads {
        if let Some(Pgbench { dsn: Some(dsn), .. }) = spec(w) {
            postgres::ask(dsn, "SELECT 1", "connecting", stop)
                .map_err(|e| Error::failed(format!("{}: cannot connect to `{dsn}`: {e}", w.name)))?;
        }
    }
    Ok(())
}

/// Readies a database for every pgbench workload of `scenario`: clusters are started in
/// the workload's `target` or else `dir` (the run's directory), one per distinct place
/// and `settings`; each (server, scale) is initialised once.
/// `progress` hears what takes time.
fn prepare(scenario: &Scenario, dir: &Path, stop: &AtomicBool, progress: &dyn Fn(&str)) -> Result<Databases> {
    let mut dbs = Databases::default();
    // each database initialised once for its scale
    let mut loads: crate::drivers::loading::Loads<u32> = Default::default();
    for (idx, w) in scenario.workloads.iter().enumerate() {
        let Some(p) = spec(w) else { continue };
        let (dsn, spaces) = match &p.dsn {
            // reached by `connect` before the run was recorded
            Some(dsn) => (dsn.clone(), Vec::new()),
            None => {
                let cluster = dbs.clusters.get((idx, &w.name), &p.server_dirs(), &p.settings, dir, stop, progress)?;
                let db = format!("pgbench_s{}", p.scale);
                cluster
                    .create_database(&db, None, stop)
                    .map_err(|e| bad_input(Error::failed(format!("{}: {e}", w.name))))?;
                (cluster.dsn(&db), cluster.tablespaces())
            }
        };
        loads.once(
            &dsn,
            |scale| *scale == p.scale,
            || initialise(&w.name, (&dsn, &spaces), p, stop, progress).map(|()| p.scale),
        )?;
        dbs.dsn.insert(idx, dsn);
    }
    dbs.clusters.settle(stop)?;
    Ok(dbs)
}

/// The scale an existing pgbench database was initialised at, if it was.
fn scale_of(dsn: &str, stop: &AtomicBool) -> Option<u32> {
    let sql = "SELECT count(*) FROM pgbench_branches";
    postgres::ask(dsn, sql, "reading the scale of an earlier load", stop).ok()?.parse().ok()
}

/// `pgbench -i -s SCALE`, unless `reuse` and the database is already at that scale, its
/// tables in the first of the cluster's tablespaces `spaces` and its indexes in the
/// second (the first, when there is one; both with the data, when none).
/// Killed at once when `stop` is set.
fn initialise(
    name: &str,
    (dsn, spaces): (&str, &[String]),
    p: &Pgbench,
    stop: &AtomicBool,
    progress: &dyn Fn(&str),
) -> Result<()> {
    if p.reuse && scale_of(dsn, stop) == Some(p.scale) {
        progress(&format!("{name}: reusing the pgbench database at scale {}", p.scale));
        return Ok(());
    }
    progress(&format!("{name}: initialising pgbench at scale {} (about {} MB)", p.scale, p.database_bytes() >> 20));
    let mut init = Command::new(postgres::client("pgbench")?);
    postgres::connect_bounded(&mut init).args(["-i", "-q", "-s", &p.scale.to_string()]);
    if let Some(tables) = spaces.first() {
        let indexes = spaces.get(1).unwrap_or(tables);
        init.arg(format!("--tablespace={tables}")).arg(format!("--index-tablespace={indexes}"));
    }
    init.arg(dsn).stdin(Stdio::null());
    let out = children::output(&mut init, "pgbench -i", stop)
        .map_err(|e| Error::failed(format!("{name}: starting pgbench: {e}")))?
        .ok_or_else(|| Error::failed(format!("{name}: pgbench -i {}", crate::drivers::client::INTERRUPTED)))?;
    if !out.status.success() {
        return Err(Error::failed(format!("{name}: pgbench -i failed: {}", postgres::last_lines(&out, 5))));
    }
    // the load's pages written now: a cluster that waits for its turn in an A/B study
    // must not write them by a timed checkpoint during the other's measured window
    postgres::checkpoint(&mut postgres::session(dsn)?, stop, &|m| progress(&format!("{name}: {m}")))
}

/// `driver: pgbench`.
pub struct PgbenchDriver;

/// The pgbench settings of workload `w`, if pgbench runs it.
fn spec(w: &Workload) -> Option<&Pgbench> {
    w.program()?.get::<Pgbench>()
}

impl Driver for PgbenchDriver {
    fn name(&self) -> &'static str {
        "pgbench"
    }

    fn runs(&self, w: &Workload, _: Option<EngineKind>) -> bool {
        spec(w).is_some()
    }

    fn startup(&self) -> Duration {
        STARTUP
    }

    fn check(&self, scenario: &Scenario, stop: &AtomicBool) -> Result<()> {
        postgres::check(stop, || connect(scenario, stop))
    }

    fn prepare(
        &self,
        scenario: &Scenario,
        dir: &Path,
        stop: &AtomicBool,
        progress: &dyn Fn(&str),
    ) -> Result<Box<dyn Ready>> {
        // a cluster that will not start is bad input (exit 2), but `pgbench -i` failing
        // on a running one (a full disk) is a run that failed (exit 1)
        Ok(Box::new(prepare(scenario, dir, stop, progress)?))
    }

    fn describe(&self, w: &Workload, _: &[Arc<DataFile>], _: u32, _: Option<EngineKind>) -> String {
        let Some(p) = spec(w) else { return w.runner() };
        let script = match &p.script {
            Script::Builtin(name) => name.clone(),
            Script::File { path, .. } => path.display().to_string(),
            Script::Sql(_) => "custom SQL".into(),
        };
        let rate = p.rate.map(|r| format!(", {r} tps target")).unwrap_or_default();
        let server = if p.dsn.is_some() { "the given server" } else { "a throwaway PostgreSQL" };
        let (clients, threads) = (counted(p.clients, "client"), counted(p.threads, "thread"));
        format!("pgbench {script}, scale {}, {clients} x {threads}{rate}, on {server}", p.scale)
    }
}

impl Ready for Databases {
    fn start(&self, cx: &LaunchContext) -> Result<Vec<(WorkerThread, String)>> {
        let dsn = self.dsn.get(&cx.workload_idx).cloned().unwrap_or_default();
        spawn_program(cx, "pgbench", move |l| run_workload(l, &dsn))
    }

    /// Stops every throwaway cluster; the first error, if any.
    fn stop(mut self: Box<Self>) -> Result<()> {
        self.clusters.stop()
    }

    fn servers(&self) -> Vec<DbServer> {
        self.clusters.servers(self.dsn.iter().map(|(workload, dsn)| (*workload, dsn.as_str())))
    }

    fn retire(&self, over: &[usize]) -> Vec<String> {
        self.clusters.retire(over)
    }
}

/// One pgbench run for a program's workload: what its clients do, besides the duration,
/// the log and the connection, which every run has alike.
pub struct Invocation {
    pub clients: u32,
    pub threads: u32,
    /// Transactions per second for all clients together (`--rate`).
    pub rate: Option<f64>,
    /// What each transaction runs (`-b NAME`, `-f PATH@WEIGHT`) and how (`-M prepared`,
    /// `--max-tries=N`, `-D NAME=VALUE`).
    pub args: Vec<OsString>,
    /// Environment of its connections (`PGOPTIONS`).
    pub env: Vec<(String, String)>,
    /// The op of each script, in the order its `-b` and `-f` options give them.
    pub ops: Vec<Op>,
    /// The second of the run clock from which each script's latencies are kept whole.
    pub profile_from: Option<u32>,
}

/// pgbench's options for a `driver: pgbench` workload. A custom script (inline, or the
/// text of the file read at load) is written to the run's directory, for pgbench to read.
fn invocation(l: &LaunchContext, p: &Pgbench) -> Result<Invocation> {
    let args: Vec<OsString> = match &p.script {
        Script::Builtin(name) => vec!["-b".into(), name.into()],
        Script::File { sql, .. } | Script::Sql(sql) => {
            let path = l.run_dir()?.write(&l.file_name("sql")?, sql)?;
            vec!["-f".into(), path.into()]
        }
    };
    let (clients, threads, rate) = (p.clients, p.threads, p.rate);
    Ok(Invocation { clients, threads, rate, args, env: Vec::new(), ops: vec![Op::Txn], profile_from: None })
}

fn run_workload(l: &LaunchContext, dsn: &str) -> Result<()> {
    let Some(p) = spec(&l.workload) else {
        return Err(Error::failed(format!("{}: not a pgbench workload", l.workload.name)));
    };
    run(l, &invocation(l, p)?, dsn).map(|_| ())
}

/// Runs pgbench for workload `l` as `inv` asks, from its first second to its end, its
/// transaction log sent as samples while it runs; what the log held, or `None` when the
/// workload was stopped before pgbench started.
pub fn run(l: &LaunchContext, inv: &Invocation, dsn: &str) -> Result<Option<log::Seconds>> {
    let w = &l.workload;
    let dir = l.run_dir()?;
    let logs = dir.dir(&l.file_name("pgbench-log")?)?;
    let logs = logs.path();
    let (mut cmd, out_path, err_path) = command(l, &dir, inv, dsn, logs)?;

    sleep_until(l.begin.checked_sub(STARTUP).unwrap_or(l.begin), &l.stop);
    if l.stop.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let started = Instant::now();
    let mut child =
        Group::spawn(&mut cmd, "pgbench").map_err(|e| Error::failed(format!("{}: starting pgbench: {e}", w.name)))?;
    // pgbench ends itself after -T; this stops it early (a timeline `stop`, Ctrl-C, a
    // failure elsewhere) or once it overruns its end. SIGALRM is the signal its -T
    // timer ends it with: it finishes its transactions, writes out its log (which
    // SIGINT would lose, buffered) and its closing report.
    let deadline = l.end() + OVERRUN;
    let stopped = || l.stop.load(Ordering::Relaxed) || l.abort.load(Ordering::Relaxed);
    let ended = AtomicBool::new(false);
    let mut seconds =
        log::Seconds::new(l.workload_idx, l.first_worker, l.clock_unix_ms, l.end_t as u32, inv.rate.is_some())
            .with_ops(inv.ops.clone(), inv.args.iter().any(|a| a.to_string_lossy().starts_with("--max-tries")))
            .with_profile(inv.profile_from);
    // the log is read as it is written; whatever pgbench managed to log is kept, even
    // when it failed
    let (waited, took, read) = std::thread::scope(|scope| {
        let reader = scope.spawn(|| follow(l, logs, &mut seconds, &ended));
        let waited = child.wait_stopping(Some(libc::SIGALRM), Some(deadline), &stopped);
        let took = started.elapsed();
        ended.store(true, Ordering::Relaxed);
        (waited, took, reader.join())
    });
    let (status, signalled) = waited.map_err(|e| Error::failed(format!("{}: waiting for pgbench: {e}", w.name)))?;
    read.map_err(|_| Error::failed(format!("{}: reading pgbench's log failed", w.name)))??;
    // a program that drives pgbench (tpcc) reports the run as its own event and counts
    // its failed transactions in its own figures, whichever engine runs it: pgbench is
    // how it runs, not what the timeline shows, and its runs read alike
    let own = l.workload.runner() == "pgbench";
    if own {
        record_extras(l, &seconds, l.begin_t() as u32);
    }
    let (unreadable, example) = seconds.unreadable.clone();
    if unreadable > 0 {
        return Err(Error::failed(format!(
            "{}: {unreadable} lines of pgbench's transaction log could not be read, e.g. `{}`",
            w.name,
            example.unwrap_or_default()
        )));
    }
    if own {
        record_closing(l, &out_path, started, took, status);
    }
    if signalled && !stopped() {
        // pgbench has no timeout of its own: a server that stopped answering holds it
        return Err(overran(l, "pgbench"));
    }
    if !status.success() && !signalled {
        let err = std::fs::read_to_string(&err_path).unwrap_or_default();
        let tail: Vec<&str> = err.lines().filter(|l| !l.starts_with("progress:")).collect();
        let tail = tail[tail.len().saturating_sub(5)..].join(" / ");
        return Err(Error::failed(format!("{}: pgbench {status}: {tail} (output in {})", w.name, l.dir.display())));
    }
    Ok(Some(seconds))
}

/// The pgbench command line for a workload, with its output going to files in the
/// run's directory: the command, and the paths of its stdout and stderr.
fn command(
    l: &LaunchContext,
    dir: &RunDir,
    inv: &Invocation,
    dsn: &str,
    logs: &Path,
) -> Result<(Command, PathBuf, PathBuf)> {
    let w = &l.workload;
    let mut cmd = Command::new(postgres::client("pgbench")?);
    postgres::connect_bounded(&mut cmd);
    let seconds = (w.ramp + w.duration).as_secs();
    cmd.args(["-n", "-c", &inv.clients.to_string(), "-j", &inv.threads.to_string(), "-T", &seconds.to_string()]);
    cmd.arg("-l").arg(format!("--log-prefix={}", logs.join("txn").display()));
    if let Some(rate) = inv.rate {
        cmd.arg(format!("--rate={rate}"));
    }
    cmd.args(&inv.args).envs(inv.env.iter().map(|(k, v)| (k, v)));
    cmd.arg(dsn);
    let (out, out_path) = dir.create_file(&l.file_name("pgbench.out")?)?;
    let (err, err_path) = dir.create_file(&l.file_name("pgbench.stderr")?)?;
    cmd.stdin(Stdio::null()).stdout(out).stderr(err);
    Ok((cmd, out_path, err_path))
}

/// Records pgbench's run as an event, with what its closing report says.
fn record_closing(
    l: &LaunchContext,
    out_path: &Path,
    started: Instant,
    took: Duration,
    status: std::process::ExitStatus,
) {
    let stdout = std::fs::read_to_string(out_path).unwrap_or_default();
    let closing = log::closing(&stdout);
    let detail = match closing.tps {
        Some(tps) => format!(
            "tps = {tps:.3} (without initial connection time), {} transactions, {} failed",
            closing.processed.unwrap_or(0),
            closing.failed.unwrap_or(0)
        ),
        None => "no closing report".into(),
    };
    finish_program(l, "pgbench", started, took, status, detail);
}

/// Sends the seconds of pgbench's transaction log in `logs` as it is written, every
/// [`FOLLOW`], until `ended` (pgbench has ended), and then the rest of it.
pub(super) fn follow(l: &LaunchContext, logs: &Path, seconds: &mut log::Seconds, ended: &AtomicBool) -> Result<()> {
    let mut tail = log::Tail::new(logs);
    loop {
        let last = ended.load(Ordering::Relaxed);
        tail.read(|line| seconds.add(line)).map_err(|e| Error::failed(format!("{}: {e}", logs.display())))?;
        for sample in seconds.take() {
            // The collector outlives the drivers; if it failed, the run reports that.
            let _ = l.tx.send(sample);
        }
        if last {
            return Ok(());
        }
        std::thread::sleep(FOLLOW);
    }
}

/// How often the transaction log is read while pgbench runs: well within a second, so
/// each second is in the store by the time the collector writes it.
const FOLLOW: Duration = Duration::from_millis(200);

/// Stores each second's failed transactions (every second of the workload, zeros too,
/// so their mean is per second) and, under a rate, the mean schedule lag.
fn record_extras(l: &LaunchContext, s: &log::Seconds, start_t: u32) {
    let source = format!("pgbench:{}", l.workload.name);
    let mut rows = Vec::new();
    for t in start_t..l.end_t as u32 {
        let e = s.extra.get(&t).cloned().unwrap_or_default();
        rows.push(ObservationRow {
            t: t.into(),
            source: source.clone(),
            name: "failed".into(),
            value: e.failed as f64,
        });
        if e.lag_n > 0 {
            rows.push(ObservationRow {
                t: t.into(),
                source: source.clone(),
                name: "schedule_lag_ms".into(),
                value: e.lag_sum_us as f64 / e.lag_n as f64 / 1000.0,
            });
        }
    }
    l.sink.send(Record::Observations(rows));
}
