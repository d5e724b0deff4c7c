//! A run session: one scenario run from start to end, outside the command line. Its
//! three stages are named functions, each in its own file: [`prepare`] (the lint gate,
//! the engines, the layout, the fleet, the run's row and the drivers' programs),
//! [`measure`] (the collector, observers, the timeline, the live view and the endpoint)
//! and [`conclude`] (verification, lost hosts, expectations and the summary). `fathom
//! run` and `fathom sweep` both hand it a loaded scenario and [`RunOptions`], so a run
//! is the same whichever command starts it.

mod conclude;
mod measure;
mod prepare;

use crate::engine::target::DataFile;
use crate::error::Result;
use crate::metrics::Sample;
use crate::report::summary::RunSummary;
use crate::scenario::{EngineKind, Override, Scenario};
use crate::store::{Reserve, Store};
use crate::transport::fleet::Fleet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{Receiver, Sender};

/// The error of a run stopped by SIGINT or SIGTERM.
const INTERRUPTED: &str = "interrupted by a signal";

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
}

/// How a run ended: its id, its exit status (0, 1 failed, 3 an expectation failed, 130
/// interrupted) and its stored summary, for the caller to print.
pub struct Ended {
    pub run: i64,
    pub code: i32,
    pub summary: RunSummary,
}

/// Runs a loaded scenario (its `--set`s, target and engine already applied) through the
/// three stages.
pub fn run(scenario: Scenario, is_builtin: bool, opts: &RunOptions, results: &Path) -> Result<Ended> {
    let (session, staged) = prepare::prepare(scenario, is_builtin, opts, results)?;
    let measured = measure::measure(&session, staged, opts, results)?;
    conclude::conclude(&session, measured, opts)
}

/// What every stage after `prepare` reads: the run as recorded in the store, with its
/// hosts connected. Fields drop in order: the record of the run's processes first, as
/// the run has ended by then.
struct Session {
    _recorded: crate::children::RunRecord,
    reserve: Arc<Reserve>,
    store: Store,
    run: i64,
    fleet: Arc<Fleet>,
    scenario: Scenario,
    /// Engine per workload, after any fallback.
    engines: Vec<EngineKind>,
    /// Where progress lines go (stderr, or nothing with --quiet).
    progress: Arc<dyn Fn(&str) + Send + Sync>,
    /// Set by a signal, or by a worker that failed, to stop everything.
    stop: Arc<AtomicBool>,
    /// Set only by a signal, to tell an abort from a failure.
    interrupted: Arc<AtomicBool>,
}

/// What `prepare` readied for `measure` to use up.
struct Staged {
    /// Each workload's data files, one per target.
    files: Vec<Vec<Arc<DataFile>>>,
    targets: Vec<PathBuf>,
    /// io_uring works here: fio workloads use it too, else psync.
    uring_ok: bool,
    /// The run's planned length in seconds.
    total: u64,
    /// Databases and servers the `driver:` workloads use.
    prepared: crate::drivers::ReadyDrivers,
    tx: Sender<Sample>,
    rx: Receiver<Sample>,
}
