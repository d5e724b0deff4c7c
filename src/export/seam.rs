//! What every export format is: the [`Format`] trait and the [`Source`] it reads. Apart
//! from the list of formats (`mod.rs`), so that each format's file uses this one and
//! nothing uses a format's file but that list.

use crate::error::Result;
use crate::report::summary::RunSummary;
use crate::store::Store;

/// One way of writing a stored run for another tool. A new format is a file in this
/// folder implementing it and a line in [`FORMATS`](super::FORMATS); `fathom export
/// --format` then takes its name and `--help` shows its [`about`](Format::about).
pub trait Format: Sync {
    /// The name `--format` takes.
    fn name(&self) -> &'static str;
    /// One line for `fathom export --help`: what the format is for.
    fn about(&self) -> &'static str;
    /// The whole run as this format's text, ready to write to a file or standard output.
    fn render(&self, run: &Source) -> Result<String>;
}

/// What a format reads: the store, the run's summary (loaded once, so a run that does
/// not exist is refused before any format starts), and whether `--samples` asked for
/// one row per second.
pub struct Source<'a> {
    pub store: &'a Store,
    pub summary: &'a RunSummary,
    pub samples: bool,
}
