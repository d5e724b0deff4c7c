//! The rows [`csv`](super::csv) and [`json`](super::json) write: per workload and op over
//! the measured window, or with `--samples` per second (percentiles from that second's
//! merged histogram).

use super::format::Source;
use crate::error::Result;
use crate::metrics::summary::OpSummary;
use serde_json::Value;

/// The columns of a row, in order (CSV header and JSON keys alike).
pub const COLUMNS: [&str; 14] = [
    "run", "workload", "phase", "op", "t", "seconds", "ops", "bytes", "iops", "mb_per_s", "mean_us", "p50_us",
    "p99_us", "max_us",
];

/// One row's cells in [`COLUMNS`] order; a missing value (`t` of a summary row, a
/// figure that is not a finite number) is null.
pub type Row = Vec<Value>;

/// The run's rows: one per workload and op, or with `samples` one per second, workload
/// and op.
pub fn rows(src: &Source) -> Result<Vec<Row>> {
    let s = src.summary;
    let mut rows: Vec<Row> = Vec::new();
    let row = |w: &str, phase: &str, t: Option<i64>, o: &OpSummary| {
        vec![
            s.run.id.into(),
            w.into(),
            phase.into(),
            o.op.into(),
            t.into(),
            o.seconds.into(),
            o.ops.into(),
            o.bytes.into(),
            o.iops.into(),
            o.mb_per_s.into(),
            o.latency.mean_us.into(),
            o.latency.p50_us.into(),
            o.latency.p99_us.into(),
            o.latency.max_us.into(),
        ]
    };
    for w in &s.workloads {
        let name = &w.workload.name;
        if !src.samples {
            rows.extend(w.ops.iter().map(|o| row(name, &w.workload.phase, None, o)));
            continue;
        }
        let (from, to) = (w.workload.start_t, w.workload.measured_window().1.ceil() as i64);
        for t in from..to {
            let phase = s
                .phases
                .iter()
                .find(|p| p.phase.start_t <= t && p.phase.end_t.is_none_or(|e| t < e))
                .map(|p| p.phase.label.as_str())
                .unwrap_or("");
            for (op, stats) in src.store.window(s.run.id, w.workload.idx, t, t + 1)? {
                rows.push(row(name, phase, Some(t), &OpSummary::new(name, op, &stats, 1.0, None)));
            }
        }
    }
    Ok(rows)
}
