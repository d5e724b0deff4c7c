//! A run's measurements for other tools. `fathom export` writes a stored run in one of
//! [`FORMATS`], each a file here behind [`Format`] (declared in `seam.rs`, which the
//! formats use; this file only lists them): [`csv`] and [`json`] (the rows of
//! [`rows`], for notebooks and spreadsheets) and [`openmetrics`] (for backfilling
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
pub mod rows;
mod seam;

pub use seam::{Format, Source};

/// Every format `fathom export` writes, by name; the first is the default.
pub const FORMATS: [&dyn Format; 3] = [&csv::Csv, &json::Json, &openmetrics::OpenMetrics];

/// The format named `name`, if there is one.
pub fn named(name: &str) -> Option<&'static dyn Format> {
    FORMATS.into_iter().find(|f| f.name() == name)
}
