//! `fathom runs [--json]`: every stored run with its headline figures.

use crate::error::Result;
use crate::report::format::{count, latency_us};
use crate::report::summary::RunSummary;
use crate::report::table;
use crate::store::Store;
use std::path::Path;

#[derive(clap::Args)]
pub struct Args {
    /// Print JSON instead of a table
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args, results: &Path) -> Result<i32> {
    let store = Store::open_existing(results)?;
    let mut list = Vec::new();
    let mut json = Vec::new();
    for mut run in store.runs()? {
        let summary = RunSummary::load(&store, &run.id.to_string())?;
        let head = summary.headline();
        let text = head.map(|h| match h.op {
            // network streams: bytes, no per-op latency
            "send" | "recv" => format!("{:.2} Gbit/s {} ({})", h.mb_per_s * 8.0 / 1000.0, h.op, h.workload),
            _ => format!("{} IOPS {} ({}), p99 {}", count(h.iops), h.op, h.workload, latency_us(h.latency.p99_us)),
        });
        json.push(serde_json::json!({
            "id": run.id,
            "scenario": run.scenario,
            "started_at": run.started_at,
            "duration_s": run.duration_s,
            "status": run.status,
            "expectations_passed": summary.answer.as_ref().map(|a| a.passed),
            "headline": head.map(|h| serde_json::json!({
                "workload": h.workload, "op": h.op, "iops": h.iops, "mb_per_s": h.mb_per_s, "p99_us": h.latency.p99_us,
            })),
        }));
        // a run its own expectations failed is not a result to quote
        if summary.answer.as_ref().is_some_and(|a| !a.passed) {
            run.status.push_str(", expectations FAILED");
        }
        list.push((run, text));
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&json).expect("runs serialize"));
    } else if list.is_empty() {
        println!("no runs yet: try `fathom run`");
    } else {
        print!("{}", table::runs(&list));
    }
    Ok(0)
}
