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
mod state;

use crate::error::Result;
use crate::scenario::Scenario;
use std::path::Path;

pub use prepare::check_layout;
pub use state::{Ended, Repeat, RunOptions};

/// Runs a loaded scenario (its `--set`s, target and engine already applied) through the
/// three stages.
pub fn run(scenario: Scenario, is_builtin: bool, opts: &RunOptions, store_dir: &Path) -> Result<Ended> {
    let (session, staged) = prepare::prepare(scenario, is_builtin, opts, store_dir)?;
    let measured = measure::measure(&session, staged, opts, store_dir)?;
    conclude::conclude(&session, measured, opts)
}
