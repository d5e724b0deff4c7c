//! Scenarios: what to run, loaded from YAML with errors that name file, line and key.
//!
//! The file format (documented in `docs/scenarios.md`) has a `name`, optional
//! `defaults` (profile keys every workload inherits, like fio's `[global]`), named
//! `workloads`, and an optional `timeline`. The module is in parts, each used by the
//! ones after it and none used back:
//!
//! - [`model`]: what a checked scenario is (the types the rest of fathom reads), with
//!   [`pattern`], [`units`], [`steps`], [`expect`] and [`fio_section`] for its values,
//!   and [`program`], the programs a workload's `driver:` names, each in one file;
//! - [`file`](mod@file): the file as written (every key optional, unknown keys refused);
//! - [`check`]: from the file to the model, by topic, errors located at the key;
//! - [`fio_job`]: fio job files read and mapped to a scenario's YAML;
//! - [`load`]: the steps from text to a checked scenario: [`prescan`] bounds the text
//!   before any parser sees it, [`vars`] substitutes variables, [`overrides`] applies
//!   `--set`, the YAML parser reads, [`time_scale`] scales the timeline's durations
//!   (`--time-scale`), [`check`] resolves every workload.

pub mod auth;
pub mod budget;
pub mod builtin;
mod check;
pub mod expect;
pub mod file;
pub mod fio_section;
pub mod hooks;
pub mod limits;
mod load;
pub mod model;
mod overrides;
pub mod pattern;
mod prescan;
pub mod program;
pub mod results;
pub mod schedule;
pub mod step_env;
pub mod steps;
pub mod text;
pub mod time_scale;
pub mod units;
pub mod vars;
pub mod yaml;
mod yaml_words;

pub use model::{
    Arrival, EngineKind, IoProfile, Kind, Queue, RemoteQueries, Rw, Scenario, Source, SteadyStop, Workload,
};
pub use overrides::{Override, applied_sets};
pub use prescan::MAX_BYTES;
pub use text::{PLAIN_TEXT, plain_text};
