//! `fathom lint [SCENARIO]`: the benchmarking mistakes a scenario would make on this
//! machine, without running it (for a fio job file, first what each option became). `fathom run` does the same check first.

use crate::analysis::lint::{Severity, before, describe};
use crate::error::Result;
use crate::import::open::{import, load_scenario};
use crate::import::seam::Given;
use crate::scenario::Override;
use crate::scenario::hooks::Hooks;
use crate::transport::Inventory;
use crate::transport::fleet;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Scenario file (or fio job file, X-Ray scenario dir), or a built-in's name (the quickstart when omitted)
    scenario: Option<String>,
    /// As for `fathom run`: every workload against this directory, file or device
    /// (several: a fio job file's own targets, in order)
    #[arg(long)]
    target: Vec<PathBuf>,
    /// As for `fathom run`: override a scenario value
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<Override>,
    /// As for `fathom run`: the inventory of hosts that workloads with `hosts:` run on
    #[arg(long, value_name = "FILE")]
    hosts: Option<PathBuf>,
    /// As for `fathom run`: the commands of the scenario's `hook:` steps
    #[arg(long, value_name = "FILE")]
    hooks: Option<PathBuf>,
    /// As for `fathom run`: multiply every duration of the timeline by F (above 0, e.g. 0.01 to rehearse a long study
    /// quickly); the same as `--set time_scale=F`
    #[arg(long, value_name = "F")]
    time_scale: Option<f64>,
    /// Exit 2 when there is a warning
    #[arg(long)]
    strict: bool,
    /// Print JSON
    #[arg(long)]
    json: bool,
}

pub fn run(mut args: Args) -> Result<i32> {
    args.sets.extend(args.time_scale.map(crate::scenario::time_scale::as_set));
    let inventory = args.hosts.as_deref().map(Inventory::load).transpose()?;
    let hosts = inventory.as_ref().map(Inventory::target_counts);
    let hosts = hosts.as_deref();
    // what an imported input became is shown before it is loaded: a refusal (hooks an
    // X-Ray scenario needs, a value past its bound) is then explained by it
    let given = Given { targets: &args.target, sets: &args.sets, hosts, target_in_text: false };
    let imported = args.scenario.as_deref().map(|n| import(n, &given)).transpose()?.flatten();
    if let Some((importer, imported)) = imported.filter(|_| !args.json) {
        crate::terminal::print(format!(
            "{}: {}, {}:\n{}\n",
            imported.name,
            importer.kind(),
            importer.runs_as(),
            imported.described
        ));
    }
    let (mut scenario, is_builtin) = load_scenario(args.scenario.as_deref(), &args.target, None, &args.sets, hosts)?;
    let hooks = args.hooks.as_deref().map(Hooks::load).transpose()?;
    crate::scenario::hooks::check(&scenario, hooks.as_ref())?;
    fleet::place(&mut scenario, inventory.as_ref())?;
    crate::timeline::check_hosts(&scenario, inventory.as_ref())?;
    crate::session::check_layout(&scenario, is_builtin, !args.target.is_empty(), &args.sets)?;
    if let Some(inventory) = inventory.as_ref().filter(|_| !args.json) {
        fleet::targets_by_host(&scenario, inventory)?
            .iter()
            .for_each(|line| crate::terminal::print(format!("{line}\n")));
    }
    let found = before(&scenario, &crate::observe::preflight::facts(&scenario));
    // said as the run would say it: durations --time-scale raised to their key's least
    if let Some(t) = scenario.time_scale.as_ref().filter(|t| !t.raised.is_empty()) {
        let w = crate::warnings::Warning::TimeScaleRaised { factor: t.factor, raised: t.raised.clone() };
        w.say();
    }
    if args.json {
        crate::terminal::print(format!("{}\n", serde_json::to_string_pretty(&found).expect("findings serialize")));
    } else if found.is_empty() {
        crate::terminal::print(format!("{}: no findings\n", scenario.name));
    } else {
        // wrapped at the terminal's width, as `fathom run` says them
        let width = crate::terminal::prose_width();
        describe(&found).lines().for_each(|line| crate::terminal::print(crate::terminal::wrap(line, width)));
    }
    let warned = found.iter().any(|f| f.severity == Severity::Warning);
    use crate::error::exit;
    Ok(if args.strict && warned { exit::BAD_INPUT } else { exit::SUCCESS })
}
