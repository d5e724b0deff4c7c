//! A run's measurements for other tools: served to Prometheus while it runs, and as
//! OpenMetrics for backfilling it afterwards.

pub mod openmetrics;
pub mod prometheus;
