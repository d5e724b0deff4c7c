//! What running a timeline needs besides the scenario: the run, its files, clocks and
//! flags, where samples and progress go.

use crate::engine::target::DataFile;
use crate::metrics::Sample;
use crate::scenario::EngineKind;
use crate::store::Store;
use crate::store::sink::Sink;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::Sender;
use std::time::Instant;

/// What the executor needs besides the scenario.
pub struct Context<'a> {
    /// Read only (the steady-state check): what the timeline writes goes to `sink`.
    pub store: &'a Store,
    pub run: i64,
    /// Each workload's data files, one per target.
    pub files: Vec<Vec<Arc<DataFile>>>,
    /// Engine per workload, after any fallback.
    pub engines: Vec<Option<EngineKind>>,
    /// io_uring works here: fio workloads use it too, else psync.
    pub uring_ok: bool,
    pub clock_start: Instant,
    /// The run clock's second 0 in Unix milliseconds, for drivers whose programs
    /// report in wall-clock time.
    pub clock_unix_ms: i64,
    /// The run's own directory, for files a driver keeps (fio's job files).
    pub run_dir: PathBuf,
    /// Where the timeline and the drivers send what they write (events, phases,
    /// workloads, workers, observations): the collector writes it.
    pub sink: Sink,
    /// Databases and servers the `driver:` workloads use.
    pub drivers: &'a crate::drivers::ReadyDrivers,
    /// The agents of workloads placed on other hosts.
    pub fleet: &'a crate::transport::fleet::Fleet,
    /// The inventory of hosts (`--hosts`), for the hosts a hook acts on.
    pub inventory: Option<&'a crate::transport::Inventory>,
    /// The commands of the scenario's hooks (`--hooks`), checked before the run.
    pub hooks: &'a crate::scenario::hooks::Hooks,
    pub tx: Sender<Sample>,
    /// Set by a signal, or by a worker that failed, to stop everything.
    pub stop: Arc<AtomicBool>,
    /// Set only by a signal, to tell an abort from a failure.
    pub interrupted: Arc<AtomicBool>,
    /// Where progress lines go (stderr, or nothing with --quiet).
    pub progress: &'a dyn Fn(&str),
    /// Told each phase as it opens (the live view and the Prometheus endpoint).
    pub on_phase: OnPhase<'a>,
    /// Told the host of each worker started on another host (the endpoint's `host`).
    pub on_host: &'a dyn Fn(u32, &str),
    /// Told the second the run is planned to end, replanned before each step from
    /// where the timeline stands (a start lands on the next whole second, a hook or a
    /// `prefill` takes what it takes), so the live view's ETA holds; `None` while a
    /// workload that ends by itself (bounded, no duration) makes the end unknown.
    pub on_plan: &'a dyn Fn(Option<u64>),
}

/// Told a phase as it opens: its label, its first second on the run clock and what runs
/// in it (workload index, its workers), so the live view shows that phase's workloads.
pub type OnPhase<'a> = &'a dyn Fn(&str, u64, &[(usize, u32)]);
