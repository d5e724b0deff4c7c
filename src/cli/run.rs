//! `fathom run [SCENARIO]`: the command line of a run session (see `crate::session`):
//! load the scenario, run it with these options, print how it ended.

use crate::error::{Error, Result};
use crate::import::open::load_scenario;
use crate::scenario::Override;
use crate::scenario::time_scale;
use crate::session::{self, Ended, RunOptions};
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
}

pub fn run(mut args: Args, store_dir: &Path, width: usize) -> Result<i32> {
    let end = End::new(args.quiet, args.json.take())?;
    args.sets.extend(args.time_scale.map(time_scale::as_set));
    let hosts = args.hosts.as_deref().map(Inventory::load).transpose()?.map(|i| i.target_counts());
    let (scenario, is_builtin) =
        load_scenario(args.scenario.as_deref(), &args.target, args.engine.as_deref(), &args.sets, hosts.as_deref())?;
    let hooks = args.hooks.as_deref().map(crate::scenario::hooks::Hooks::load).transpose()?;
    let opts = RunOptions {
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
    };
    end.print(&session::run(scenario, is_builtin, &opts, store_dir)?, width)
}

/// How a run's end is told (also `sweep`'s): the summary people read, unless `quiet`
/// only the final one, and the run as JSON where `--json` asks.
pub(super) struct End {
    quiet: bool,
    json: Option<Json>,
}

/// Where `--json` writes.
enum Json {
    Stdout,
    File(PathBuf),
}

impl End {
    /// Refuses a `--json` file fathom would not write (a symbolic link, a missing
    /// directory) before the run, not after it.
    pub(super) fn new(quiet: bool, json: Option<PathBuf>) -> Result<End> {
        let json = match json {
            None => None,
            Some(p) if p.as_os_str() == "-" => Some(Json::Stdout),
            Some(p) => {
                let bad = |e: String| Error::input(format!("--json {}: {e}", p.display()));
                crate::nofollow::not_a_symlink(&p).map_err(|e| bad(e.to_string()))?;
                let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
                if !dir.is_dir() {
                    return Err(bad(format!("no directory {}", dir.display())));
                }
                Some(Json::File(p))
            }
        };
        Ok(End { quiet, json })
    }

    /// Prints the summary a run ends with and writes its JSON; returns its exit status.
    /// Lint's findings before the run were printed as it started, unless `quiet`: each
    /// is said once. With the JSON on stdout, the summary goes to stderr, so stdout parses.
    pub(super) fn print(&self, ended: &Ended, width: usize) -> Result<i32> {
        let said = |code: &str| !self.quiet && crate::analysis::lint::said_before_run(code);
        let mut text = format!("\n{}", super::show::text(&ended.summary, &said, width, super::show::prose(width)));
        if ended.code == crate::error::exit::EXPECTATION_FAILED {
            text.push_str("\nsome expectations failed (exit 3); `--no-expect` skips them\n");
        }
        if ended.code == crate::error::exit::SUCCESS {
            text.push_str(&format!("\nsee it again with `fathom show {}`; all runs: `fathom runs`\n", ended.run));
        }
        let json = || serde_json::to_string_pretty(&ended.summary).expect("a summary serializes") + "\n";
        match &self.json {
            None => crate::terminal::print(&text),
            Some(Json::Stdout) => {
                crate::terminal::eprint(&text);
                crate::terminal::print(json());
            }
            Some(Json::File(p)) => {
                crate::terminal::print(&text);
                crate::nofollow::write(p, json()).map_err(|e| Error::input(format!("--json {}: {e}", p.display())))?;
            }
        }
        Ok(ended.code)
    }
}
