//! The rows [`csv`](super::csv) and [`json`](super::json) write: per workload and op over
//! the measured window, or with `--samples` per second (percentiles from that second's
//! merged histogram). Each row carries the workload's settings, so a row read alone
//! says what was run, and each figure sits under its unit's column (IOPS, TPS or
//! Gbit/s): a figure the op's unit does not measure is empty, never 0.
//!
//! The observed series (the host's, the devices', the database servers') follow in the
//! same table, a row per series (and with `--samples` per series and second) under
//! `source`, `series` and `value`, the workload's columns empty. A counter is read as
//! `fathom show` and the report read it, its rise per second (`unit` says `per_second`):
//! a running total since the server started says nothing of the run.

use super::seam::Source;
use crate::error::Result;
use crate::metrics::summary::OpSummary;
use crate::report::measured::WorkloadSummary;
use serde_json::Value;

/// The columns of a row, in order (CSV header and JSON keys alike).
pub const COLUMNS: [&str; 26] = [
    "run",
    "workload",
    "phase",
    "t",
    "measured",
    "seconds",
    "rw",
    "bs",
    "depth",
    "jobs",
    "op",
    "unit",
    "ops",
    "bytes",
    "iops",
    "tps",
    "mb_per_s",
    "gbit_per_s",
    "mean_us",
    "p50_us",
    "p99_us",
    "p99_9_us",
    "max_us",
    "source",
    "series",
    "value",
];

/// One row's cells in [`COLUMNS`] order; a missing value (`t` of a summary row, a
/// figure that is not measured or not a finite number) is null.
pub type Row = Vec<Value>;

/// The run's rows: one per workload and op, or with `samples` one per second, workload
/// and op, `measured` false for the seconds of its ramp; then the observed series'.
pub fn rows(src: &Source) -> Result<Vec<Row>> {
    let mut rows = workload_rows(src)?;
    rows.extend(observed_rows(src)?);
    Ok(rows)
}

/// The phase in force at second `t`, empty outside every phase.
fn phase_at(s: &crate::report::summary::RunSummary, t: i64) -> &str {
    s.phases
        .iter()
        .find(|p| p.phase.start_t <= t && p.phase.end_t.is_none_or(|e| t < e))
        .map(|p| p.phase.label.as_str())
        .unwrap_or("")
}

/// The workloads' rows.
fn workload_rows(src: &Source) -> Result<Vec<Row>> {
    let s = src.summary;
    let mut rows: Vec<Row> = Vec::new();
    for w in &s.workloads {
        let name = &w.workload.name;
        if !src.samples {
            rows.extend(w.ops.iter().map(|o| row(s.run.id, w, &w.workload.phase, None, o)));
            continue;
        }
        let (from, to) = (w.workload.start_t, w.workload.measured_window().1.ceil() as i64);
        for t in from..to {
            let phase = phase_at(s, t);
            for (op, stats) in src.store.window(s.run.id, w.workload.idx, t, t + 1)? {
                rows.push(row(s.run.id, w, phase, Some(t), &OpSummary::new(name, op, &stats, 1.0, None)));
            }
        }
    }
    Ok(rows)
}

/// The observed series' rows: one per series over the run (a gauge's mean, a counter's
/// rise per second, as `fathom show` reads them), or with `samples` one per series and
/// second (a counter's rise over the second before it, from its second sample on).
fn observed_rows(src: &Source) -> Result<Vec<Row>> {
    let s = src.summary;
    let mut rows = Vec::new();
    for o in &s.observed {
        let counter = o.delta.is_some();
        let row = |t: Option<i64>, seconds: usize, value: f64| {
            let mut r: Row = vec![Value::Null; COLUMNS.len()];
            let mut put = |column: &str, v: Value| r[COLUMNS.iter().position(|c| *c == column).unwrap_or(0)] = v;
            put("run", s.run.id.into());
            put("phase", t.map(|t| phase_at(s, t)).into());
            put("t", t.into());
            put("seconds", seconds.into());
            put("unit", counter.then_some("per_second").into());
            put("source", o.source.clone().into());
            put("series", o.name.clone().into());
            put("value", value.into());
            r
        };
        if !src.samples {
            rows.push(row(None, o.seconds, o.mean));
            continue;
        }
        let seconds = match counter {
            true => src.store.observation_rises(s.run.id, &o.source, std::slice::from_ref(&o.name), 1)?,
            false => src.store.observation_series(s.run.id, &o.source, &o.name, 1)?,
        };
        rows.extend(seconds.into_iter().map(|(t, v)| row(Some(t), 1, v)));
    }
    Ok(rows)
}

/// One row: `t` is the second of a per-second row, None for the measured window's.
fn row(run: i64, w: &WorkloadSummary, phase: &str, t: Option<i64>, o: &OpSummary) -> Row {
    let st = &w.stored;
    // an IO workload's settings; a driver's program (pgbench, iperf3) has none of these
    let io = st.rw.is_some();
    let rw = st.rw.and_then(|rw| serde_json::to_value(rw).ok());
    let shown = o.shown();
    let latency = |f: fn(&crate::metrics::summary::Latency) -> f64| shown.latency.map(f);
    vec![
        run.into(),
        w.workload.name.clone().into(),
        phase.into(),
        t.into(),
        t.is_none_or(|t| t >= w.workload.measure_t).into(),
        o.seconds.into(),
        rw.into(),
        io.then(|| st.bs.to_string()).into(),
        io.then_some(st.iodepth).into(),
        st.profile_workers.into(),
        o.op.into(),
        serde_json::to_value(o.unit).unwrap_or_default(),
        shown.ops.into(),
        shown.bytes.into(),
        shown.iops.into(),
        shown.tps.into(),
        shown.mb_per_s.into(),
        shown.gbit_per_s.into(),
        latency(|l| l.mean_us).into(),
        latency(|l| l.p50_us).into(),
        latency(|l| l.p99_us).into(),
        latency(|l| l.p99_9_us).into(),
        latency(|l| l.max_us).into(),
        Value::Null,
        Value::Null,
        Value::Null,
    ]
}
