//! `fathom runs [--json]`: every stored run with its headline figures.

use crate::error::Result;
use crate::metrics::summary::OpSummary;
use crate::report::sections::findings;
use crate::report::summary::RunSummary;
use crate::report::table::text;
use crate::store::Store;
use serde_json::{Map, Value};
use std::path::Path;

#[derive(clap::Args)]
pub struct Args {
    /// Print JSON instead of a table
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args, store_dir: &Path, width: usize) -> Result<i32> {
    let store = Store::open_existing(store_dir)?;
    let mut list = Vec::new();
    let mut json = Vec::new();
    for mut run in store.runs()? {
        let summary = RunSummary::load(&store, &run.id.to_string())?;
        let head = summary.busiest();
        let text = findings::headline(&summary);
        json.push(serde_json::json!({
            "id": run.id,
            "scenario": run.scenario,
            "started_at": run.started_at,
            "duration_s": run.duration_s,
            "status": run.status,
            "expectations_passed": summary.answer.as_ref().map(|a| a.passed),
            "headline": head.map(headline_json),
        }));
        // a run its own expectations failed is not a result to quote: the verdict
        // stands in for `completed`, which it implies
        if summary.answer.as_ref().is_some_and(|a| !a.passed) {
            run.status = "expectations FAILED".into();
        }
        list.push((run, text));
    }
    if args.json {
        crate::terminal::print(format!("{}\n", serde_json::to_string_pretty(&json).expect("runs serialize")));
    } else if list.is_empty() {
        crate::terminal::print("no runs yet: try `fathom run`\n");
    } else {
        crate::terminal::print(text::render(&findings::runs(&list), width));
    }
    Ok(0)
}

/// The headline op's figures as `show --json` names them (only those its unit measures),
/// with its p99 when it has a latency.
fn headline_json(h: &OpSummary) -> Value {
    let all = serde_json::to_value(h.shown()).expect("an op summary serializes");
    let keys = ["workload", "op", "unit", "iops", "tps", "gbit_per_s", "mb_per_s"];
    let mut out: Map<String, Value> = keys.iter().filter_map(|&k| Some((k.to_string(), all.get(k)?.clone()))).collect();
    if let Some(p99) = all.get("latency").and_then(|l| l.get("p99_us")) {
        out.insert("p99_us".into(), p99.clone());
    }
    Value::Object(out)
}
