//! `fathom show RUN [--json]`: one run's results per workload and op.

use crate::error::Result;
use crate::metrics::summary::Throughput;
use crate::report::format::seconds;
use crate::report::summary::RunSummary;
use crate::report::table;
use crate::store::Store;
use std::path::Path;

#[derive(clap::Args)]
pub struct Args {
    /// Run id, or `last`
    #[arg(default_value = "last")]
    run: String,
    /// Print JSON instead of a table
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args, store_dir: &Path) -> Result<i32> {
    let store = Store::open_existing(store_dir)?;
    let summary = RunSummary::load(&store, &args.run)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary).expect("summary serializes"));
    } else {
        print(&summary, &|_| false);
    }
    Ok(0)
}

/// The human-readable view, also printed at the end of `fathom run`, which leaves out
/// the warnings `said` already printed (by their code).
pub fn print(s: &RunSummary, said: &dyn Fn(&str) -> bool) {
    let r = &s.run;
    // the study's answer before anything else
    if let Some(a) = &s.answer {
        println!("{}", a.line());
    }
    let duration = r.duration_s.map(seconds).unwrap_or_else(|| "still running".into());
    let scale = r.time_scale.map(|f| format!(" · {}", crate::scenario::time_scale::describe(f))).unwrap_or_default();
    println!("run {} · {} · {} · {} · {}{scale}", r.id, r.scenario, r.started_at, duration, r.status);
    if let Some(err) = &r.error {
        println!("error: {err}");
    }
    println!();
    print!("{}", table::results(s));
    print!("{}", crate::report::views_print::terminal(s));
    print!("{}", crate::report::results_print::terminal(s));
    print!("{}", table::analysis(s));
    print!("{}", table::observed(s));
    if !s.expectations.is_empty() {
        print!("{}", crate::report::expect::describe(&s.expectations));
    }
    if s.workloads.iter().any(|w| w.ops.iter().any(|o| o.unit == Throughput::Iops)) {
        println!(
            "\nIOPS x mean = Little's law: the average number of IOs in flight. In a closed-loop workload\n\
             its ops together should match depth; when lower, time is lost outside the device (the\n\
             generator, or queueing above it). Open-loop workloads hold only as many as the rate needs."
        );
    }
    for w in s.warnings.iter().filter(|w| !said(&w.code)) {
        println!("warning: {}", w.message);
    }
}
