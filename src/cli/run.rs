//! `fathom run [SCENARIO]`: the command line of a run session (see `crate::session`):
//! load the scenario, run it with these options, print how it ended.

use super::end::End;
use crate::error::{Result, exit};
use crate::import::open::load_scenario;
use crate::scenario::Override;
use crate::scenario::time_scale;
use crate::session::{self, Repeat, RunOptions};
use crate::transport::Inventory;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// Scenario file (or fio job file, X-Ray scenario dir), or a built-in's name (see `fathom scenarios`)
    pub(super) scenario: Option<String>,
    /// Run every workload against this directory, file or block device; several replace
    /// a fio job file's own targets (its files or devices) in order
    #[arg(long)]
    pub(super) target: Vec<PathBuf>,
    /// Override a scenario value: KEY=VALUE (every workload), WORKLOAD.KEY=VALUE, or a full path
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(super) sets: Vec<Override>,
    /// Allow write workloads on raw block devices (never on mounted ones)
    #[arg(long)]
    pub(super) allow_device_write: bool,
    /// Run every workload with this engine: io_uring, psync, null (no IO) or fio (the
    /// real fio, for parity checks); hammerdb for `driver: tpcc` workloads (HammerDB's
    /// own TPROC-C); the same as `--set engine=ENGINE`
    #[arg(long, value_name = "ENGINE")]
    pub(super) engine: Option<String>,
    /// Refuse to run (exit 2) when lint finds a warning
    #[arg(long)]
    pub(super) strict: bool,
    /// Do not check the scenario's `expect` thresholds (a failed one exits 3)
    #[arg(long)]
    pub(super) no_expect: bool,
    /// Serve the run's metrics for Prometheus at ADDR (default 127.0.0.1:9464) under /metrics
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:9464")]
    pub(super) prometheus: Option<String>,
    /// Print only the final summary
    #[arg(long, short)]
    pub(super) quiet: bool,
    /// The inventory of hosts that workloads with `hosts:` run on (see docs/hosts.md)
    #[arg(long, value_name = "FILE")]
    pub(super) hosts: Option<PathBuf>,
    /// Copy this fathom to hosts (over ssh) where it is missing or of another version
    #[arg(long)]
    pub(super) push_agent: bool,
    /// The commands of the scenario's `hook:` steps: a YAML file of `hooks: {NAME: COMMAND}`
    /// (see docs/scenarios.md#hooks)
    #[arg(long, value_name = "FILE")]
    pub(super) hooks: Option<PathBuf>,
    /// Multiply every duration of the timeline by F (above 0, e.g. 0.01 to rehearse a long study
    /// quickly); the same as `--set time_scale=F`
    #[arg(long, value_name = "F")]
    pub(super) time_scale: Option<f64>,
    /// Write the run as `fathom show RUN --json` gives it to FILE when it ends; with no
    /// FILE (or `-`), to stdout, the summary people read then going to stderr
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub(super) json: Option<PathBuf>,
    /// Run the scenario N times, one run after another, the runs stored as a group that
    /// `fathom compare group:FIRST` reads (each timed event's spread)
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub(super) repeat: u32,
}

pub fn run(mut args: Args, store_dir: &Path, width: usize) -> Result<i32> {
    let end = End::new(args.quiet, args.json.take())?;
    args.sets.extend(args.time_scale.map(time_scale::as_set));
    let hosts = args.hosts.as_deref().map(Inventory::load).transpose()?.map(|i| i.target_counts());
    let (scenario, is_builtin) =
        load_scenario(args.scenario.as_deref(), &args.target, args.engine.as_deref(), &args.sets, hosts.as_deref())?;
    let hooks = args.hooks.as_deref().map(crate::scenario::hooks::Hooks::load).transpose()?;
    let mut opts = RunOptions {
        // several were a job file's own targets, already in its scenario
        target: if args.target.len() == 1 { args.target.into_iter().next() } else { None },
        sets: args.sets,
        engine: args.engine,
        allow_device_write: args.allow_device_write,
        strict: args.strict,
        no_expect: args.no_expect,
        prometheus: args.prometheus,
        quiet: args.quiet,
        hosts: args.hosts,
        push_agent: args.push_agent,
        hooks,
        repeat: None,
    };
    // a repeat runs the scenario as loaded; it stops at the first run that fails
    let (mut code, mut first) = (0, None);
    for _ in 0..args.repeat {
        opts.repeat = (args.repeat > 1).then_some(first.map_or(Repeat::First, Repeat::Of));
        let ended = session::run(scenario.clone(), is_builtin, &opts, store_dir)?;
        (code, first) = (end.print(&ended, width)?, first.or(Some(ended.run)));
        if ![exit::SUCCESS, exit::EXPECTATION_FAILED].contains(&code) {
            break;
        }
    }
    if let (Some(first), true) = (first, args.repeat > 1) {
        crate::terminal::print(format!("runs of group {first}: `fathom compare group:{first}`\n"));
    }
    Ok(code)
}
