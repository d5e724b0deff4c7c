//! Serving a run's measurements to other tools while it runs.

pub mod prometheus;
