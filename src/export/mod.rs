//! A run's measurements for other tools. `fathom export` writes a stored run in one of
//! [`FORMATS`], each a file here behind [`Format`]: [`csv`] and [`json`] (the rows of
//! [`table`], for notebooks and spreadsheets) and [`openmetrics`] (for backfilling
//! Prometheus). [`prometheus`] is not one of them: it serves a run to Prometheus while it
//! runs.
//!
//! The HTML report (`report::html`) stays outside this list on purpose: it is a page for
//! people, built from several runs at once by `fathom compare` and extended by `fathom
//! fit`, written with its charts as SVG files beside it (`fathom report --svg`), none of
//! which one run rendered as text in a format can carry; as a format here it would be a
//! second command for the same page.

pub mod csv;
pub mod json;
pub mod openmetrics;
pub mod prometheus;
pub mod table;

use crate::error::Result;
use crate::report::summary::RunSummary;
use crate::store::Store;

/// One way of writing a stored run for another tool. A new format is a file in this
/// folder implementing it and a line in [`FORMATS`]; `fathom export --format` then takes
/// its name and `--help` shows its [`about`](Format::about).
pub trait Format: Sync {
    /// The name `--format` takes.
    fn name(&self) -> &'static str;
    /// One line for `fathom export --help`: what the format is for.
    fn about(&self) -> &'static str;
    /// The whole run as this format's text, ready to write to a file or standard output.
    fn render(&self, run: &Source) -> Result<String>;
}

/// Every format `fathom export` writes, by name; the first is the default.
pub const FORMATS: [&dyn Format; 3] = [&csv::Csv, &json::Json, &openmetrics::OpenMetrics];

/// The format named `name`, if there is one.
pub fn named(name: &str) -> Option<&'static dyn Format> {
    FORMATS.into_iter().find(|f| f.name() == name)
}

/// What a format reads: the store, the run's summary (loaded once, so a run that does
/// not exist is refused before any format starts), and whether `--samples` asked for
/// one row per second.
pub struct Source<'a> {
    pub store: &'a Store,
    pub summary: &'a RunSummary,
    pub samples: bool,
}
