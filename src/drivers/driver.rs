//! The seam every driver implements: fathom's own engine, fio, pgbench, iperf3 each in
//! one file, registered by name in `drivers/mod.rs` (`DRIVERS`). The timeline and the
//! run session know only this trait, so a new program's runner is a file, a registry
//! line and its docs (see docs/architecture.md, "A program").

use crate::engine::WorkerThread;
use crate::engine::target::DataFile;
use crate::error::{Error, Result};
use crate::metrics::Sample;
use crate::scenario::{EngineKind, Scenario, Workload};
use crate::store::ObservationRow;
use crate::store::sink::{Record, Sink};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What runs a workload: fathom's engine or another program.
pub trait Driver: Sync {
    /// Its name, as a workload names it (`engine: fio`, `driver: pgbench`).
    fn name(&self) -> &'static str;

    /// Whether it runs workload `w`, whose IO back end (after any fallback, io_uring
    /// to psync) is `engine`: none for a program's workload.
    fn runs(&self, w: &Workload, engine: Option<EngineKind>) -> bool;

    /// How long before a workload's first second it must be started, so that its work
    /// (not its program's start-up) fills that second.
    fn startup(&self) -> Duration {
        Duration::ZERO
    }

    /// Before anything is laid out or recorded, for a scenario that uses it: its program
    /// is installed, the servers its workloads name answer. Bad input is
    /// [`crate::error::Error::input`] (exit 2); `stop` (a signal) ends a wait.
    fn check(&self, _scenario: &Scenario, _stop: &AtomicBool) -> Result<()> {
        Ok(())
    }

    /// Readies what its workloads need before the run clock starts (databases, servers)
    /// in `dir`, the run's directory. An error, or `stop` set meanwhile, stops what was
    /// already started. `progress` hears what takes time.
    fn prepare(
        &self,
        scenario: &Scenario,
        dir: &Path,
        stop: &AtomicBool,
        progress: &dyn Fn(&str),
    ) -> Result<Box<dyn Ready>>;

    /// What workload `w`, placed on several hosts, adds up to from each host's figures
    /// (`rows`, their sources `SOURCE@HOST`): records for the run's end.
    fn totals(&self, _w: &Workload, _rows: &[ObservationRow]) -> Vec<Record> {
        Vec::new()
    }

    /// What a workload runs, for the line printed as it starts (between its name and
    /// its duration): `files` are its data files, `planned` its workers, `engine` the
    /// one it runs on.
    fn describe(&self, w: &Workload, files: &[Arc<DataFile>], planned: u32, engine: Option<EngineKind>) -> String;
}

/// A driver readied for one run: it starts its workloads and, at the run's end, stops
/// what its `prepare` started.
pub trait Ready: Send + Sync {
    /// Starts the workers `cx.workers` of a workload; their threads, each with who it
    /// is (for the message if one fails).
    fn start(&self, cx: &LaunchContext) -> Result<Vec<(WorkerThread, String)>>;

    /// Stops what `prepare` started; the first error, if any.
    fn stop(self: Box<Self>) -> Result<()> {
        Ok(())
    }

    /// The database servers its workloads use, of either DBMS, which the run observes.
    fn servers(&self) -> Vec<DbServer> {
        Vec::new()
    }

    /// Ends what it started for workloads that are all `over` (a throwaway cluster), as
    /// another workload starts; each server it ended, said as its workload and DBMS.
    fn retire(&self, _over: &[usize]) -> Vec<String> {
        Vec::new()
    }
}

/// A workload's database server, as the run observes it.
#[derive(Debug, Clone)]
pub enum DbServer {
    Postgres(PgServer),
    Mariadb(MariadbServer),
}

impl DbServer {
    /// The workload it serves.
    pub fn workload(&self) -> usize {
        match self {
            DbServer::Postgres(s) => s.workload,
            DbServer::Mariadb(s) => s.workload,
        }
    }

    /// It, if a PostgreSQL server.
    pub fn postgres(self) -> Option<PgServer> {
        match self {
            DbServer::Postgres(s) => Some(s),
            DbServer::Mariadb(_) => None,
        }
    }

    /// It, if a MariaDB server.
    pub fn mariadb(self) -> Option<MariadbServer> {
        match self {
            DbServer::Mariadb(s) => Some(s),
            DbServer::Postgres(_) => None,
        }
    }
}

/// A workload's PostgreSQL server, as the run observes it.
#[derive(Debug, Clone)]
pub struct PgServer {
    pub workload: usize,
    /// How to reach it: the workload's `dsn`, or its throwaway cluster's.
    pub dsn: String,
    /// A throwaway cluster's log (a `dsn`'s server keeps its own).
    pub log: Option<PathBuf>,
    /// A throwaway cluster's flag, set when fathom ends it before the run's end.
    pub retired: Option<Arc<AtomicBool>>,
}

/// A workload's MariaDB (or MySQL) server, as the run observes it.
#[derive(Debug, Clone)]
pub struct MariadbServer {
    pub workload: usize,
    /// Which server it is (two workloads' servers are one when these are equal).
    pub at: String,
    /// The `mariadb` client's options that reach it, in no database.
    pub client: Vec<String>,
    /// A throwaway server's flag, set when fathom ends it before the run's end.
    pub retired: Option<Arc<AtomicBool>>,
}

/// Everything a driver needs to start (some of) a workload's workers, the same for
/// every driver.
#[derive(Clone)]
pub struct LaunchContext {
    pub workload_idx: usize,
    pub workload: Arc<Workload>,
    /// The IO back end it runs on, after any fallback; none for a program's workload.
    pub engine: Option<EngineKind>,
    /// Its data files, one per target (fathom's engine and fio).
    pub files: Vec<Arc<DataFile>>,
    /// Worker id of the workload's worker 0; the others follow.
    pub first_worker: u32,
    /// How many workers the workload will have (an open-loop rate is shared among them).
    pub planned: u32,
    /// Which of them to start now: all at once, or those a ramp adds.
    pub workers: Range<u32>,
    /// When the first of them begins, and how much later each next one does.
    pub begin: Instant,
    pub stagger: Duration,
    /// Second 0 of the run clock, as an instant and in Unix milliseconds (for programs
    /// that stamp their reports in wall-clock time).
    pub clock_start: Instant,
    pub clock_unix_ms: i64,
    /// Second of the run clock at which the workload ends.
    pub end_t: u64,
    /// io_uring works here (fio uses it too, else psync).
    pub uring_ok: bool,
    /// The run's directory, for the files a program keeps (job files, logs, reports).
    pub dir: PathBuf,
    /// Where what a program reports besides samples goes (observations, its closing
    /// event): the collector writes it.
    pub sink: Sink,
    /// Where the samples go.
    pub tx: Sender<Sample>,
    /// Set to stop this workload (a timeline `stop`, or the run ending).
    pub stop: Arc<AtomicBool>,
    /// Set to stop the whole run; a worker or program that fails sets it.
    pub abort: Arc<AtomicBool>,
    /// Where a program says when a bounded workload's IO ended.
    pub io_end: Arc<IoEnd>,
    /// Where fathom's engine counts the IOs an open-loop schedule gave up.
    pub unsent: Arc<AtomicU64>,
}

/// When a bounded workload's IO ended, in seconds of the run clock, as its program
/// reports it. A program exits a while after its last IO (fio closes its files and
/// writes its report, some 0.2 s), and a bounded workload's measured window ends at its
/// last IO, as it does on fathom's engine, whose workers end with their last IO. Without
/// a report the window ends when the program's thread does.
#[derive(Debug, Default)]
pub struct IoEnd(Mutex<Option<f64>>);

impl IoEnd {
    /// The IO of some of the workload's workers ended at `at`; the workload's ends
    /// with the last.
    pub fn set(&self, at: f64) {
        let mut end = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *end = Some(end.map_or(at, |e| e.max(at)));
    }

    pub fn get(&self) -> Option<f64> {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl LaunchContext {
    /// The name of this workload's run file `NAME.SUFFIX` (`NAME.fio`,
    /// `NAME.pgbench-log`), made in the run's directory through [`RunDir`]: every file a
    /// program keeps is named here. The loader refused any name that is not part of a
    /// file's name; a workload built another way (a sweep's step, one an agent was
    /// sent) is held to the same rule before it names a file, so no name reaches
    /// outside the run's directory.
    pub fn file_name(&self, suffix: &str) -> Result<String> {
        let name = &self.workload.name;
        crate::scenario::text::file_name_part(name).map_err(|why| Error::input(format!("workload {why}")))?;
        Ok(format!("{name}.{suffix}"))
    }

    /// The instant the workload ends.
    pub fn end(&self) -> Instant {
        self.clock_start + Duration::from_secs(self.end_t)
    }

    /// The second of the run clock its workers begin on (`begin` is on a whole second).
    pub fn begin_t(&self) -> u64 {
        self.begin.saturating_duration_since(self.clock_start).as_secs()
    }

    /// The run's directory, created if it is not yet, for a program's files.
    pub fn run_dir(&self) -> Result<RunDir> {
        RunDir::open(&self.dir)
    }
}

/// A run's directory, `RESULTS/runs/RUN` ([`crate::store::Store::run_dir`]), opened once:
/// the results directory is the user's, the two below it fathom's, never a symlink
/// someone planted there. Every directory and file fathom makes for a run is made
/// relative to it, so a link swapped in later redirects nothing; programs are handed
/// paths below [`RunDir::path`].
pub struct RunDir(crate::nofollow::Dir);

impl RunDir {
    /// Creates (or walks) `dir`, refusing a symlink at `runs` or `RUN`, naming it.
    pub fn open(dir: &Path) -> Result<RunDir> {
        let opened = crate::nofollow::create_dir_below(dir, 2);
        opened.map(RunDir).map_err(|e| Error::failed(format!("{}: {e}", dir.display())))
    }

    pub fn path(&self) -> &Path {
        self.0.path()
    }

    /// What went wrong with `name` in it, with its path.
    fn failed(&self, name: &str, e: std::io::Error) -> Error {
        Error::failed(format!("{}: {e}", self.path().join(name).display()))
    }

    /// Writes file `name` whole (never through a symlink); its path.
    pub fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> Result<PathBuf> {
        self.0.write(name.as_ref(), bytes).map_err(|e| self.failed(name, e))?;
        Ok(self.path().join(name))
    }

    /// Creates file `name`, or empties the one there, for a program's output; its path.
    pub fn create_file(&self, name: &str) -> Result<(std::fs::File, PathBuf)> {
        let file = self.0.create_file(name.as_ref()).map_err(|e| self.failed(name, e))?;
        Ok((file, self.path().join(name)))
    }

    /// Directory `name` in it, created if it is not there.
    pub fn dir(&self, name: &str) -> Result<RunDir> {
        self.0.dir(name.as_ref()).map(RunDir).map_err(|e| self.failed(name, e))
    }

    /// Directory `name` in it, which must not exist yet (a throwaway cluster's).
    pub fn new_dir(&self, name: &str) -> Result<crate::nofollow::Dir> {
        self.0.new_dir(name.as_ref()).map_err(|e| self.failed(name, e))
    }
}

/// The same failure as bad input (exit 2): what goes wrong before the run clock starts
/// (a program missing, a server unreachable, a database that cannot be readied) is the
/// scenario's to fix, and nothing was measured.
pub fn bad_input(e: Error) -> Error {
    match e {
        Error::Failed(m) => Error::Input(m),
        other => other,
    }
}

/// [`bad_input`], unless `stop` ended the wait that failed: then the run was interrupted.
pub fn bad_input_unless(stop: &std::sync::atomic::AtomicBool, e: Error) -> Error {
    match stop.load(std::sync::atomic::Ordering::Relaxed) {
        true => Error::Interrupted,
        false => bad_input(e),
    }
}

/// How long past its workload's end a program may run before fathom stops it and fails
/// the run: a program ends its last work within a moment, unless what it waits on (a
/// server that stopped answering) holds it, and a workload's end bounds the run.
pub const OVERRUN: Duration = Duration::from_secs(10);

/// The failure of `program`, stopped [`OVERRUN`] past workload `l`'s end: the run never
/// reads as completed with seconds missing. What it measured before is kept.
pub fn overran(l: &LaunchContext, program: &str) -> Error {
    Error::failed(format!(
        "{}: {program} did not end within {} s of the workload's end (what it waits on stopped answering?): \
         stopped, its seconds until then kept (output in {})",
        l.workload.name,
        OVERRUN.as_secs(),
        l.dir.display()
    ))
}

/// Records a program's end as the run's event: `program` ran for workload `l` from
/// `started` for `took`, exited with `status`, and said `detail` (its own closing
/// figures), so every program's end reads alike in the report's events.
pub fn finish_program(
    l: &LaunchContext,
    program: &str,
    started: Instant,
    took: Duration,
    status: std::process::ExitStatus,
    detail: String,
) {
    l.sink.send(crate::store::sink::Record::Event(crate::store::EventRow {
        at_ms: started.saturating_duration_since(l.clock_start).as_millis() as i64,
        kind: program.into(),
        label: l.workload.name.clone(),
        status: status.code().map(i64::from),
        took_ms: Some(took.as_millis() as i64),
        detail,
    }));
}

/// Starts a program driver's thread for a workload: `run` on it, the whole run stopped
/// if it fails. `program` names the thread and, with the workload, its messages.
pub fn spawn_program(
    cx: &LaunchContext,
    program: &str,
    run: impl FnOnce(&LaunchContext) -> Result<()> + Send + 'static,
) -> Result<Vec<(WorkerThread, String)>> {
    cx.run_dir()?;
    let owned = cx.clone();
    let thread = std::thread::Builder::new()
        .name(format!("{}-{program}", cx.workload.name))
        .spawn(move || {
            let result = run(&owned);
            if result.is_err() {
                owned.abort.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            result
        })
        .map_err(|e| Error::failed(format!("starting worker threads: {e}")))?;
    Ok(vec![(thread, format!("{} ({program})", cx.workload.name))])
}
