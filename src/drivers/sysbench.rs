//! `driver: sysbench`: Debian's sysbench runs one of its OLTP tests against PostgreSQL or
//! MariaDB (a throwaway server, or the server of a `dsn`), each transaction timed into fathom's
//! samples (op `txn`), so its TPS and latency per second sit in the same store, summary
//! and report as pgbench's.
//!
//! sysbench reports one percentile a second, not each transaction. So fathom runs its
//! test through a small Lua script of its own ([`TIMER`]) that wraps the test's `event`
//! and writes each transaction's end and latency in pgbench's per-transaction log
//! format: `super::pgbench::log` reads both alike, as they are written. sysbench's own
//! per-second report (`--report-interval=1`) adds its queries, errors and reconnects.

use super::driver::{
    DbServer, Driver, LaunchContext, OVERRUN, Ready, bad_input, finish_program, overran, spawn_program,
};
use super::mariadb;
use super::pgbench::log;
use super::postgres;
use super::throwaway::Servers;
use crate::children::{self, Group};
use crate::clock::sleep_until;
use crate::engine::WorkerThread;
use crate::engine::target::DataFile;
use crate::error::{Error, Result};
use crate::metrics::Op;
use crate::metrics::format::counted;
use crate::scenario::program::dbms::Dbms;
use crate::scenario::program::seam::Spec;
use crate::scenario::program::sysbench::Sysbench;
use crate::scenario::{EngineKind, Scenario, Workload};
use crate::store::ObservationRow;
use crate::store::sink::Record;
use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long sysbench takes from being started to its first transaction's end: loading
/// its Lua test and connecting its threads on loopback (measured: 30-60 ms).
pub const STARTUP: Duration = Duration::from_millis(40);

/// The Lua script sysbench runs: the test named in `FATHOM_SYSBENCH_TEST` (one of
/// sysbench's by name, or a script by its path), each `event` (a transaction) timed with
/// CLOCK_REALTIME and logged per thread to `$FATHOM_SYSBENCH_LOG.THREAD` in pgbench's
/// format with `--max-tries`: `thread transaction latency_us script epoch_s epoch_us
/// retries`, flushed every 200 ms so the log can be read while it runs. A test's event
/// may return its script number, its retries and whether it failed (fathom's TPC-C does);
/// sysbench's own return nothing, so they are script 0 with no retries. A transaction
/// sysbench restarts after an ignorable error is logged once, when it completes.
const TIMER: &str = r#"local test = os.getenv("FATHOM_SYSBENCH_TEST")
if test:find("/") then dofile(test) else require(test) end
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } fathom_timespec;
int clock_gettime(int clock, fathom_timespec *ts);
]]
local ts = ffi.new("fathom_timespec")
local function now_us()
  ffi.C.clock_gettime(0, ts)
  return tonumber(ts.tv_sec) * 1000000 + math.floor(tonumber(ts.tv_nsec) / 1000)
end
local inner_init, inner_done, inner_event = thread_init, thread_done, event
local log, id, n, flushed
function thread_init(...)
  id = sysbench.tid
  log = assert(io.open(os.getenv("FATHOM_SYSBENCH_LOG") .. "." .. id, "w"))
  n, flushed = 0, now_us()
  if inner_init then return inner_init(...) end
end
function event(...)
  local began = now_us()
  local script, retries, failed = inner_event(...)
  local ended = now_us()
  local latency = failed and "failed" or tostring(ended - began)
  log:write(string.format("%d %d %s %d %d %d %d\n", id, n, latency, script or 0, math.floor(ended / 1000000),
    ended % 1000000, retries or 0))
  n = n + 1
  if ended - flushed > 200000 then log:flush(); flushed = ended end
end
function thread_done(...)
  log:close()
  if inner_done then return inner_done(...) end
end
"#;

/// Where sysbench's PostgreSQL driver connects: it takes these four, not a connection
/// string.
#[derive(Debug, Clone, PartialEq)]
struct Conn {
    /// A host name, or the directory of the server's socket.
    host: String,
    port: String,
    user: String,
    database: String,
    /// The same, as a connection string for psql.
    dsn: String,
}

impl Conn {
    /// The server of a `dsn`, resolved by libpq itself (service files, the
    /// environment, defaults) through psql's variables once it has connected.
    fn of_dsn(dsn: &str, stop: &AtomicBool) -> Result<Conn> {
        let said = postgres::ask(dsn, r"\echo :HOST :PORT :USER :DBNAME", "reading where it is", stop)?;
        match said.split_whitespace().collect::<Vec<_>>()[..] {
            [host, port, user, database] => Ok(Conn {
                host: host.into(),
                port: port.into(),
                user: user.into(),
                database: database.into(),
                dsn: dsn.into(),
            }),
            _ => Err(Error::failed(format!("cannot tell host, port, user and database of `{dsn}` from `{said}`"))),
        }
    }

    /// sysbench's options for it. No password: libpq reads PGPASSWORD or ~/.pgpass.
    fn args(&self) -> Vec<String> {
        vec![
            "--db-driver=pgsql".into(),
            format!("--pgsql-host={}", self.host),
            format!("--pgsql-port={}", self.port),
            format!("--pgsql-user={}", self.user),
            format!("--pgsql-db={}", self.database),
        ]
    }
}

/// The database a sysbench workload runs against, on either DBMS.
#[derive(Debug, Clone)]
enum Db {
    Postgres(Conn),
    Mariadb(mariadb::Conn),
}

impl Db {
    /// sysbench's options for it.
    fn args(&self) -> Vec<String> {
        match self {
            Db::Postgres(c) => c.args(),
            Db::Mariadb(c) => c.sysbench_args(),
        }
    }

    /// Which server and database it is, to load each once.
    fn key(&self) -> String {
        match self {
            Db::Postgres(c) => c.dsn.clone(),
            Db::Mariadb(c) => c.key(),
        }
    }

    /// Its answer to `sql`, `what` naming the question.
    fn ask(&self, sql: &str, what: &str, stop: &AtomicBool) -> Result<String> {
        match self {
            Db::Postgres(c) => postgres::ask(&c.dsn, sql, what, stop),
            Db::Mariadb(c) => mariadb::ask(c, sql, what, stop),
        }
    }
}

/// Databases ready for a run's sysbench workloads, and the throwaway servers fathom
/// started for them.
#[derive(Default)]
pub struct Databases {
    db: HashMap<usize, Db>,
    servers: Servers,
}

/// The sysbench settings of workload `w`, if sysbench runs it.
fn spec(w: &Workload) -> Option<&Sysbench> {
    w.program()?.get::<Sysbench>()
}

/// The installed sysbench's version line, or why it cannot be run.
pub(crate) fn version() -> Result<String> {
    let out = Command::new("sysbench").arg("--version").output().map_err(|e| {
        Error::failed(format!(
            "`driver: sysbench` runs sysbench, which could not be started ({e}): apt-get install sysbench"
        ))
    })?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Readies the tables of every sysbench workload of `scenario`: on the server of its
/// `dsn`, or a throwaway server per DBMS, place and `settings`; each (server, tables,
/// size) prepared once.
fn prepare(scenario: &Scenario, dir: &Path, stop: &AtomicBool, progress: &dyn Fn(&str)) -> Result<Databases> {
    let mut dbs = Databases::default();
    let mut loads: crate::drivers::loading::Loads<(u32, u32)> = Default::default();
    for (idx, w) in scenario.workloads.iter().enumerate() {
        let Some(s) = spec(w) else { continue };
        let db = dbs.database((idx, &w.name), s, dir, stop, progress)?;
        let shape = (s.tables, s.table_size);
        loads.once(&db.key(), |done| *done == shape, || load(&w.name, &db, s, stop, progress).map(|()| shape))?;
        dbs.db.insert(idx, db);
    }
    dbs.servers.settle(stop)?;
    Ok(dbs)
}

impl Databases {
    /// The database of workload `(idx, name)`: its `dsn`'s, or one made on the
    /// throwaway server of its DBMS, place and settings.
    fn database(
        &mut self,
        (idx, name): (usize, &str),
        s: &Sysbench,
        dir: &Path,
        stop: &AtomicBool,
        progress: &dyn Fn(&str),
    ) -> Result<Db> {
        let named = |e: Error| bad_input(Error::failed(format!("{name}: {e}")));
        let database = s.database();
        Ok(match (s.dbms, &s.dsn) {
            (Dbms::Postgresql, Some(dsn)) => Db::Postgres(Conn::of_dsn(dsn, stop).map_err(named)?),
            (Dbms::Mariadb, Some(dsn)) => {
                let conn = mariadb::Conn::parse(dsn).map_err(|e| named(Error::failed(e)))?;
                mariadb::ask(&conn, "SELECT 1", "connecting", stop).map_err(named)?;
                Db::Mariadb(conn)
            }
            (Dbms::Postgresql, None) => {
                let cluster =
                    self.servers.postgres.get((idx, name), &s.server_dirs(), &s.settings, dir, stop, progress)?;
                cluster.create_database(&database, None, stop).map_err(named)?;
                // sysbench makes its tables itself: the database's default places them
                if let Some(space) = cluster.tablespaces().first() {
                    let sql = format!("ALTER DATABASE {database} SET default_tablespace = {space}");
                    postgres::psql(&cluster.dsn("postgres"), &sql, stop).map_err(named)?;
                }
                Db::Postgres(Conn {
                    host: cluster.socket().display().to_string(),
                    port: cluster.port.to_string(),
                    user: postgres::SUPERUSER.into(),
                    dsn: cluster.dsn(&database),
                    database,
                })
            }
            (Dbms::Mariadb, None) => {
                let server =
                    self.servers.mariadb.get((idx, name), &s.server_dirs(), &s.settings, dir, stop, progress)?;
                server.create_database(&database, stop).map_err(named)?;
                Db::Mariadb(server.conn(&database))
            }
        })
    }
}

/// Whether the tables are there at the size asked (`reuse`).
fn prepared(db: &Db, s: &Sysbench, stop: &AtomicBool) -> bool {
    let sql = format!("SELECT count(*) FROM sbtest{}", s.tables);
    db.ask(&sql, "reading the size of an earlier load", stop).is_ok_and(|n| n == s.table_size.to_string())
}

/// `sysbench TEST cleanup` then `prepare` (the tables, their rows and indexes), unless
/// `reuse` finds them; then, on PostgreSQL, a checkpoint, so that the load's pages are
/// not written during the measured window (a throwaway MariaDB's are written when it
/// settles).
fn load(name: &str, db: &Db, s: &Sysbench, stop: &AtomicBool, progress: &dyn Fn(&str)) -> Result<()> {
    if s.reuse && prepared(db, s, stop) {
        progress(&format!("{name}: reusing {} of {} rows", counted(s.tables, "sysbench table"), s.table_size));
        return Ok(());
    }
    let size = crate::scenario::units::Size(s.database_bytes()).human();
    progress(&format!("{name}: preparing {} of {} rows (about {size})", counted(s.tables, "table"), s.table_size));
    for step in ["cleanup", "prepare"] {
        let mut cmd = Command::new("sysbench");
        cmd.arg(&s.test).args(db.args()).args(shape_args(s)).arg(format!("--threads={}", s.tables.min(4)));
        cmd.arg(step).stdin(Stdio::null());
        let out = children::output(postgres::connect_bounded(&mut cmd), "sysbench prepare", stop)
            .map_err(|e| Error::failed(format!("{name}: starting sysbench: {e}")))?
            .ok_or_else(|| Error::failed(format!("{name}: sysbench {step} {}", super::client::INTERRUPTED)))?;
        if !out.status.success() {
            return Err(Error::failed(format!("{name}: sysbench {step} failed: {}", postgres::last_lines(&out, 5))));
        }
    }
    match db {
        Db::Postgres(c) => {
            postgres::checkpoint(&mut postgres::session(&c.dsn)?, stop, &|m| progress(&format!("{name}: {m}")))
        }
        Db::Mariadb(_) => Ok(()),
    }
}

/// The tables' shape, which `prepare` and `run` must be given alike.
fn shape_args(s: &Sysbench) -> [String; 2] {
    [format!("--tables={}", s.tables), format!("--table-size={}", s.table_size)]
}

/// `driver: sysbench`.
pub struct SysbenchDriver;

impl Driver for SysbenchDriver {
    fn name(&self) -> &'static str {
        "sysbench"
    }

    fn runs(&self, w: &Workload, _: Option<EngineKind>) -> bool {
        spec(w).is_some()
    }

    fn startup(&self) -> Duration {
        STARTUP
    }

    /// sysbench installed, and each `dsn` reached, as bad input before anything is
    /// recorded; a wait `stop` ended is [`Error::Interrupted`].
    fn check(&self, scenario: &Scenario, stop: &AtomicBool) -> Result<()> {
        version().map_err(bad_input)?;
        for w in &scenario.workloads {
            let Some(Sysbench { dsn: Some(dsn), dbms, .. }) = spec(w) else { continue };
            let reached = match dbms {
                Dbms::Postgresql => postgres::ask(dsn, "SELECT 1", "connecting", stop).map(drop),
                Dbms::Mariadb => mariadb::Conn::parse(dsn)
                    .map_err(Error::failed)
                    .and_then(|c| mariadb::ask(&c, "SELECT 1", "connecting", stop).map(drop)),
            };
            let named = |e| Error::failed(format!("{}: cannot connect to `{dsn}`: {e}", w.name));
            reached.map_err(|e| super::driver::bad_input_unless(stop, named(e)))?;
        }
        Ok(())
    }

    fn prepare(
        &self,
        scenario: &Scenario,
        dir: &Path,
        stop: &AtomicBool,
        progress: &dyn Fn(&str),
    ) -> Result<Box<dyn Ready>> {
        Ok(Box::new(prepare(scenario, dir, stop, progress)?))
    }

    fn describe(&self, w: &Workload, _: &[Arc<DataFile>], _: u32, _: Option<EngineKind>) -> String {
        let Some(s) = spec(w) else { return w.runner() };
        let server = match &s.dsn {
            Some(_) => format!("the given {} server", s.dbms.label()),
            None => format!("a throwaway {}", s.dbms.label()),
        };
        let tables = counted(s.tables, "table");
        format!("sysbench {}, {tables} of {} rows, {}, on {server}", s.test, s.table_size, counted(s.threads, "thread"))
    }
}

impl Ready for Databases {
    fn start(&self, cx: &LaunchContext) -> Result<Vec<(WorkerThread, String)>> {
        let db = self.db.get(&cx.workload_idx).cloned();
        let db = db.ok_or_else(|| Error::failed(format!("{}: no database readied", cx.workload.name)))?;
        spawn_program(cx, "sysbench", move |l| run(l, &db))
    }

    /// Stops every throwaway server; the first error, if any.
    fn stop(mut self: Box<Self>) -> Result<()> {
        self.servers.stop()
    }

    /// The servers of both DBMSs, which the run observes.
    fn servers(&self) -> Vec<DbServer> {
        let pg = self.db.iter().filter_map(|(workload, db)| match db {
            Db::Postgres(c) => Some((*workload, c.dsn.as_str())),
            Db::Mariadb(_) => None,
        });
        let mariadb = self.db.iter().filter_map(|(workload, db)| match db {
            Db::Mariadb(c) => Some((*workload, c)),
            Db::Postgres(_) => None,
        });
        self.servers.servers(pg, mariadb)
    }

    fn retire(&self, over: &[usize]) -> Vec<String> {
        self.servers.retire(over)
    }
}

/// Runs sysbench's test for workload `l`.
fn run(l: &LaunchContext, db: &Db) -> Result<()> {
    let w = &l.workload;
    let s = spec(w).ok_or_else(|| Error::failed(format!("{}: not a sysbench workload", w.name)))?;
    let mut args = db.args();
    args.extend(shape_args(s));
    args.push(format!("--threads={}", s.threads));
    let job = Job { test: s.test.clone(), args, env: Vec::new(), ops: vec![Op::Txn], profile_from: None };
    drive(l, &job).map(drop)
}

/// What sysbench runs for a workload: a Lua test (one of sysbench's by name, or a
/// script's path), its options (the server's, `--threads` and the test's own), its
/// environment, and the op of each script number its events log.
pub(super) struct Job {
    pub test: String,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub ops: Vec<Op>,
    /// The run-clock second from which each op's latencies are kept whole.
    pub profile_from: Option<u32>,
}

/// Runs `job` for workload `l` from its first second to its end, its transactions sent
/// as samples while it runs; its seconds, or none when `stop` came before it started.
pub(super) fn drive(l: &LaunchContext, job: &Job) -> Result<Option<log::Seconds>> {
    let w = &l.workload;
    let dir = l.run_dir()?;
    let script = dir.write(&l.file_name("sysbench.lua")?, TIMER)?;
    let logs = dir.dir(&l.file_name("sysbench-log")?)?;
    let logs = logs.path().to_path_buf();
    let (out, out_path) = dir.create_file(&l.file_name("sysbench.out")?)?;
    let (err, err_path) = dir.create_file(&l.file_name("sysbench.stderr")?)?;
    let mut cmd = Command::new("sysbench");
    cmd.arg(&script).args(&job.args).arg(format!("--time={}", (w.ramp + w.duration).as_secs()));
    cmd.args(["--report-interval=1", "--db-ps-mode=auto", "run"]);
    cmd.env("FATHOM_SYSBENCH_TEST", &job.test).env("FATHOM_SYSBENCH_LOG", logs.join("txn"));
    cmd.envs(job.env.iter().map(|(k, v)| (k, v))).stdin(Stdio::null()).stdout(out).stderr(err);

    sleep_until(l.begin.checked_sub(STARTUP).unwrap_or(l.begin), &l.stop);
    if l.stop.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let started = Instant::now();
    let mut child = Group::spawn(postgres::connect_bounded(&mut cmd), "sysbench")
        .map_err(|e| Error::failed(format!("{}: starting sysbench: {e}", w.name)))?;
    let stopped = || l.stop.load(Ordering::Relaxed) || l.abort.load(Ordering::Relaxed);
    let ended = AtomicBool::new(false);
    let mut seconds = log::Seconds::new(l.workload_idx, l.first_worker, l.clock_unix_ms, l.end_t as u32, false)
        .with_ops(job.ops.clone(), true)
        .with_profile(job.profile_from);
    let (waited, took, read) = std::thread::scope(|scope| {
        let reader = scope.spawn(|| super::pgbench::follow(l, &logs, &mut seconds, &ended));
        let waited = child.wait_stopping(Some(libc::SIGTERM), Some(l.end() + OVERRUN), &stopped);
        let took = started.elapsed();
        ended.store(true, Ordering::Relaxed);
        (waited, took, reader.join())
    });
    let (status, signalled) = waited.map_err(|e| Error::failed(format!("{}: waiting for sysbench: {e}", w.name)))?;
    read.map_err(|_| Error::failed(format!("{}: reading sysbench's log failed", w.name)))??;
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    record_seconds(l, &stdout, started);
    finish_program(l, "sysbench", started, took, status, closing(&stdout));
    if signalled && !stopped() {
        return Err(overran(l, "sysbench"));
    }
    if !status.success() && !signalled {
        let err = std::fs::read_to_string(&err_path).unwrap_or_default();
        let said = [err.trim(), stdout.lines().last().unwrap_or_default()].join(" / ");
        return Err(Error::failed(format!("{}: sysbench {status}: {said} (output in {})", w.name, l.dir.display())));
    }
    Ok(Some(seconds))
}

/// One second of sysbench's report (`[ 3s ] thds: 2 tps: 623.02 qps: 12482.46 (r/w/o:
/// ...) lat (ms,95%): 5.67 err/s: 2.00 reconn/s: 0.00`): its second and its queries,
/// errors and reconnects per second.
fn report_line(line: &str) -> Option<(u32, [(&'static str, f64); 3])> {
    let rest = line.strip_prefix("[ ")?;
    let (second, rest) = rest.split_once("s ]")?;
    let words: Vec<&str> = rest.split_whitespace().collect();
    let after = |key: &str| words.iter().position(|w| *w == key).and_then(|i| words.get(i + 1)?.parse::<f64>().ok());
    Some((
        second.trim().parse().ok()?,
        [("qps", after("qps:")?), ("errors", after("err/s:")?), ("reconnects", after("reconn/s:")?)],
    ))
}

/// Stores sysbench's per-second queries, errors and reconnects (source
/// `sysbench:WORKLOAD`), each report's second placed on the run clock from when
/// sysbench started.
fn record_seconds(l: &LaunchContext, stdout: &str, started: Instant) {
    let source = format!("sysbench:{}", l.workload.name);
    let first = started.saturating_duration_since(l.clock_start).as_secs();
    let mut rows = Vec::new();
    for (second, figures) in stdout.lines().filter_map(report_line) {
        let t = first + u64::from(second.saturating_sub(1));
        if t >= l.end_t {
            continue;
        }
        rows.extend(figures.iter().map(|(name, value)| ObservationRow {
            t: t as i64,
            source: source.clone(),
            name: (*name).into(),
            value: *value,
        }));
    }
    l.sink.send(Record::Observations(rows));
}

/// sysbench's closing figures, as its report says them, for the run's event.
fn closing(stdout: &str) -> String {
    let figure = |key: &str| {
        stdout
            .lines()
            .find_map(|l| l.trim().strip_prefix(key))
            .map(|v| v.split_whitespace().collect::<Vec<_>>().join(" "))
    };
    match figure("transactions:") {
        Some(txns) => format!(
            "transactions: {txns}, ignored errors: {}, reconnects: {}",
            figure("ignored errors:").unwrap_or_default(),
            figure("reconnects:").unwrap_or_default()
        ),
        None => "no closing report".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_second_gives_its_queries_errors_and_reconnects() {
        let line = "[ 3s ] thds: 2 tps: 623.02 qps: 12482.46 (r/w/o: 8744.32/2488.09/1250.05) lat (ms,95%): 5.67 \
                    err/s: 2.00 reconn/s: 0.50";
        assert_eq!(report_line(line), Some((3, [("qps", 12482.46), ("errors", 2.0), ("reconnects", 0.5)])));
        assert_eq!(report_line("Threads started!"), None);
        assert_eq!(report_line("[ 3s ] thds: 2 tps: 1"), None);
    }

    #[test]
    fn the_closing_report_is_said_as_sysbench_says_it() {
        let out = "SQL statistics:\n    transactions:                        2042   (679.11 per sec.)\n    \
                   ignored errors:                      3      (1.00 per sec.)\n    \
                   reconnects:                          0      (0.00 per sec.)\n";
        assert_eq!(
            closing(out),
            "transactions: 2042 (679.11 per sec.), ignored errors: 3 (1.00 per sec.), reconnects: 0 (0.00 per sec.)"
        );
        assert_eq!(closing("FATAL: connection refused"), "no closing report");
    }
}
