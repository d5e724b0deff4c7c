//! `fathom export RUN [--format csv|json] [--samples] [-o FILE]`: a run's figures for
//! notebooks and spreadsheets: per workload and op over the measured window, or with
//! `--samples` per second (percentiles from that second's merged histogram).

use crate::error::{Error, Result};
use crate::metrics::summary::OpSummary;
use crate::report::summary::RunSummary;
use crate::store::Store;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, clap::ValueEnum)]
enum Format {
    Csv,
    Json,
    /// Timestamped, for `promtool tsdb create-blocks-from openmetrics`
    Openmetrics,
}

#[derive(clap::Args)]
pub struct Args {
    /// Run id, or `last`
    #[arg(default_value = "last")]
    run: String,
    #[arg(long, value_enum, default_value = "csv")]
    format: Format,
    /// One row per second, workload and op instead of one per workload and op
    #[arg(long)]
    samples: bool,
    /// Write here instead of standard output
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

/// The columns of a row, in order (CSV header and JSON keys alike).
const COLUMNS: [&str; 14] = [
    "run", "workload", "phase", "op", "t", "seconds", "ops", "bytes", "iops", "mb_per_s", "mean_us", "p50_us",
    "p99_us", "max_us",
];

pub fn run(args: Args, results: &Path) -> Result<i32> {
    let store = Store::open_existing(results)?;
    let s = RunSummary::load(&store, &args.run)?;

    let mut rows: Vec<Vec<serde_json::Value>> = Vec::new();
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
        if !args.samples {
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
            for (op, stats) in store.window(s.run.id, w.workload.idx, t, t + 1)? {
                rows.push(row(name, phase, Some(t), &OpSummary::new(name, op, &stats, 1.0, None)));
            }
        }
    }
    let text = match args.format {
        Format::Json => {
            let objects: Vec<serde_json::Value> = rows
                .into_iter()
                .map(|r| serde_json::Value::Object(COLUMNS.iter().map(|c| c.to_string()).zip(r).collect()))
                .collect();
            serde_json::to_string_pretty(&objects).expect("rows serialize") + "\n"
        }
        Format::Openmetrics => crate::export::openmetrics::render(&store, s.run.id)?,
        Format::Csv => {
            let mut out = COLUMNS.join(",") + "\n";
            for r in rows {
                let cells: Vec<String> = r.iter().map(csv_cell).collect();
                out.push_str(&cells.join(","));
                out.push('\n');
            }
            out
        }
    };
    write(&args, &text)
}

/// Writes `text` to `-o FILE` or standard output.
fn write(args: &Args, text: &str) -> Result<i32> {
    match &args.output {
        Some(path) => {
            crate::nofollow::write(path, text).map_err(|e| Error::input(format!("{}: {e}", path.display())))?
        }
        None => {
            let _ = std::io::stdout().write_all(text.as_bytes());
        }
    }
    Ok(0)
}

/// A CSV cell: numbers as they are, text quoted when it holds a comma or a quote, and
/// nothing for a missing value.
fn csv_cell(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(s) if s.contains([',', '"', '\n']) => format!("\"{}\"", s.replace('"', "\"\"")),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
