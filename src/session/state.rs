//! What goes into a run session, what its three stages hand each other, and what comes
//! out: apart from `mod.rs`, so that the stages use this file and `mod.rs` uses the
//! stages, never back.

use crate::engine::target::DataFile;
use crate::metrics::Sample;
use crate::report::summary::RunSummary;
use crate::scenario::{EngineKind, Override, Scenario};
use crate::store::{Reserve, Status, Store};
use crate::transport::fleet::Fleet;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{Receiver, Sender};

/// The error of a run stopped by SIGINT, SIGTERM or SIGHUP.
pub(super) const INTERRUPTED: &str = "interrupted by a signal";

/// Records how run `run` ended. After a second interrupt it ended by being stopped at
/// once, whatever the stage saw meanwhile (its programs killed under it): the forced-stop
/// thread and the stage may both get there, and both say the same.
pub(super) fn finish(store: &Store, run: i64, status: Status, error: Option<&str>) -> crate::error::Result<()> {
    match crate::children::stopped_at_once() {
        true => store.finish_run(run, Status::Aborted, Some(crate::children::FORCED_STOP)),
        false => store.finish_run(run, status, error),
    }
}

/// How to run a scenario, beyond the scenario itself: plain values, so a caller builds
/// them without a command line (`sweep` sets its own).
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// `--target`: also applied to the scenario; here for agents and built-ins.
    pub target: Option<PathBuf>,
    /// `--set`s: also applied to the scenario; here for agents and `size`.
    pub sets: Vec<Override>,
    /// `--engine`: also applied to the scenario; here for agents.
    pub engine: Option<String>,
    /// Write workloads may use raw block devices (never mounted ones).
    pub allow_device_write: bool,
    /// A lint warning refuses the run (exit 2).
    pub strict: bool,
    /// The scenario's `expect` thresholds are not checked.
    pub no_expect: bool,
    /// Serve metrics for Prometheus here, over the scenario's `prometheus:`.
    pub prometheus: Option<String>,
    /// Print only the final summary.
    pub quiet: bool,
    /// The inventory of hosts that workloads with `hosts:` run on.
    pub hosts: Option<PathBuf>,
    /// Copy this fathom to hosts where it is missing or of another version.
    pub push_agent: bool,
    /// The commands of the scenario's `hook:` steps (`--hooks`).
    pub hooks: Option<crate::scenario::hooks::Hooks>,
    /// `--repeat`: the run is one of a group of repeats of one scenario.
    pub repeat: Option<Repeat>,
}

/// A run of `run --repeat`: the group's first, whose id names the group, or a later one.
#[derive(Debug, Clone, Copy)]
pub enum Repeat {
    First,
    Of(i64),
}

/// How a run ended: its id, its exit status (0, 1 failed, 3 an expectation failed, 130
/// interrupted) and its stored summary, for the caller to print.
pub struct Ended {
    pub run: i64,
    pub code: i32,
    pub summary: RunSummary,
}

/// What every stage after `prepare` reads: the run as recorded in the store, with its
/// hosts connected. Fields drop in order: the record of the run's processes first, as
/// the run has ended by then.
pub(super) struct Session {
    pub(super) _recorded: crate::children::RunRecord,
    pub(super) reserve: Arc<Reserve>,
    pub(super) store: Store,
    pub(super) run: i64,
    pub(super) fleet: Arc<Fleet>,
    /// The inventory of hosts (`--hosts`), for the hosts a hook acts on.
    pub(super) inventory: Option<crate::transport::Inventory>,
    pub(super) scenario: Scenario,
    /// Engine per workload, after any fallback.
    pub(super) engines: Vec<Option<EngineKind>>,
    /// Where progress lines go (stderr, or nothing with --quiet).
    pub(super) progress: Arc<dyn Fn(&str) + Send + Sync>,
    /// Set by a signal, or by a worker that failed, to stop everything.
    pub(super) stop: Arc<AtomicBool>,
    /// Set only by a signal, to tell an abort from a failure.
    pub(super) interrupted: Arc<AtomicBool>,
}

/// What `prepare` readied for `measure` to use up.
pub(super) struct Staged {
    /// Each workload's data files, one per target.
    pub(super) files: Vec<Vec<Arc<DataFile>>>,
    pub(super) targets: Vec<PathBuf>,
    /// io_uring works here: fio workloads use it too, else psync.
    pub(super) uring_ok: bool,
    /// The run's planned length in seconds (`None`: a workload that ends by itself
    /// decides it).
    pub(super) total: Option<u64>,
    /// Databases and servers the `driver:` workloads use.
    pub(super) prepared: crate::drivers::ReadyDrivers,
    pub(super) tx: Sender<Sample>,
    pub(super) rx: Receiver<Sample>,
}
