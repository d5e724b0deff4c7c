//! `fathom lint [SCENARIO]`: the benchmarking mistakes a scenario would make on this
//! machine, without running it. `fathom run` does the same check first.

use crate::analysis::lint::{self, Facts, Finding, Severity};
use crate::engine::target;
use crate::error::Result;
use crate::scenario::{Override, Scenario};
use crate::transport::Inventory;
use crate::transport::fleet;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// Scenario file, or the name of a built-in scenario (the quickstart when omitted)
    scenario: Option<String>,
    /// As for `fathom run`: every workload against this directory, file or device
    #[arg(long)]
    target: Option<PathBuf>,
    /// As for `fathom run`: override a scenario value
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<Override>,
    /// As for `fathom run`: the inventory of hosts that workloads with `hosts:` run on
    #[arg(long, value_name = "FILE")]
    hosts: Option<PathBuf>,
    /// Exit 2 when there is a warning
    #[arg(long)]
    strict: bool,
    /// Print JSON
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<i32> {
    let (mut scenario, _) =
        super::run::load_scenario(args.scenario.as_deref(), args.target.as_deref(), None, &args.sets)?;
    let inventory = args.hosts.as_deref().map(Inventory::load).transpose()?;
    fleet::place(&mut scenario, inventory.as_ref())?;
    let found = findings(&scenario);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&found).expect("findings serialize"));
    } else if found.is_empty() {
        println!("{}: no findings", scenario.name);
    } else {
        print!("{}", describe(&found));
    }
    let warned = found.iter().any(|f| f.severity == Severity::Warning);
    Ok(if args.strict && warned { 2 } else { 0 })
}

/// The findings before a run, from the scenario and what this machine says about its
/// memory and the targets (sizes of existing files, free space).
pub fn findings(s: &Scenario) -> Vec<Finding> {
    let memory_bytes = crate::observe::environment::meminfo_bytes("MemTotal");
    let working_set = s
        .workloads
        .iter()
        .map(|w| w.size.or_else(|| w.targets.iter().map(|t| existing_len(t, &w.file)).sum::<Option<u64>>()));
    let free_bytes = s.workloads.iter().map(|w| w.targets.first().and_then(|t| target::free_space(t)));
    lint::before(s, &Facts { memory_bytes, working_set: working_set.collect(), free_bytes: free_bytes.collect() })
}

/// Length of the file a target resolves to, if it exists.
fn existing_len(t: &Path, file: &str) -> Option<u64> {
    let path = if t.is_dir() { t.join(format!("fathom-{file}.dat")) } else { t.to_path_buf() };
    std::fs::metadata(path).ok().map(|m| m.len()).filter(|&n| n > 0)
}

/// `warning [page-cache]: ...` lines.
pub fn describe(found: &[Finding]) -> String {
    let mut out = String::new();
    for f in found {
        let level = match f.severity {
            Severity::Warning => "warning",
            Severity::Info => "note",
        };
        out.push_str(&format!("lint {level} [{}]: {}\n", f.code, f.message));
    }
    out
}
