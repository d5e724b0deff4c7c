//! Presenting results: a run's summary gathered from the store, terminal tables, and
//! the HTML report with its charts.

pub mod analysis;
pub mod bins;
pub mod chart;
pub mod checkpoints;
pub mod compare;
mod compare_config;
pub mod expect;
pub mod format;
pub mod headline;
pub mod hosts;
pub mod html;
pub mod log_disk;
pub mod measured;
pub mod node_scaling;
pub mod repeats;
pub mod results;
pub mod results_print;
pub mod run_charts;
pub mod sections;
pub mod status_line;
pub mod summary;
pub mod table;
pub mod views;
pub mod views_print;
