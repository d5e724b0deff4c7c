//! `fathom show RUN [--json]`: one run's results per workload and op.

use crate::error::Result;
use crate::metrics::summary::Throughput;
use crate::report::format::seconds;
use crate::report::summary::RunSummary;
use crate::report::table::text::wrap;
use crate::store::Store;
use std::io::IsTerminal;
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

pub fn run(args: Args, store_dir: &Path, width: usize) -> Result<i32> {
    let store = Store::open_existing(store_dir)?;
    let summary = RunSummary::load(&store, &args.run)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary).expect("summary serializes"));
    } else {
        print(&summary, &|_| false, width);
    }
    Ok(0)
}

/// The human-readable view, also printed at the end of `fathom run`, which leaves out
/// the warnings `said` already printed (by their code). Tables fit `width`; sentences
/// wrap at it on a terminal, and stay one line each when piped, for grep.
pub fn print(s: &RunSummary, said: &dyn Fn(&str) -> bool, width: usize) {
    let prose = if std::io::stdout().is_terminal() { width } else { usize::MAX };
    print!("{}", text(s, said, width, prose));
}

/// What [`print`] prints, its sentences wrapped at `prose`: a value, so that tests read
/// what a person reads.
pub fn text(s: &RunSummary, said: &dyn Fn(&str) -> bool, width: usize, prose: usize) -> String {
    let mut out = String::new();
    let say = |out: &mut String, line: &str| out.push_str(&wrap(line, prose));
    let r = &s.run;
    // the study's answer before anything else
    if let Some(a) = &s.answer {
        say(&mut out, &a.line());
    }
    let duration = r.duration_s.map(seconds).unwrap_or_else(|| "still running".into());
    let scale = r.time_scale.map(|f| format!(" · {}", crate::scenario::time_scale::describe(f))).unwrap_or_default();
    say(&mut out, &format!("run {} · {} · {} · {} · {}{scale}", r.id, r.scenario, r.started_at, duration, r.status));
    if let Some(err) = &r.error {
        say(&mut out, &format!("error: {err}"));
    }
    out.push('\n');
    out.push_str(&crate::report::sections::terminal(s, width));
    if !s.expectations.is_empty() {
        out.push('\n');
        crate::report::expect::describe(&s.expectations).lines().skip(1).for_each(|l| say(&mut out, l));
    }
    if s.workloads.iter().any(|w| w.ops.iter().any(|o| o.unit == Throughput::Iops)) {
        out.push('\n');
        say(
            &mut out,
            "IOPS x mean = Little's law: the average number of IOs in flight. In a closed-loop workload its ops \
             together should match depth; when lower, time is lost outside the device (the generator, or queueing \
             above it). Open-loop workloads hold only as many as the rate needs.",
        );
    }
    for w in s.warnings.iter().filter(|w| !said(&w.code)) {
        say(&mut out, &format!("warning: {}", w.message));
    }
    out
}
