//! `fathom sweep --vary iodepth=1,2,4,8 [--vary jobs=1,2,4] SCENARIO`: one step per
//! combination of values of a workload, each ending as soon as its IOPS are steady
//! (between `--min` and `--max`), stored as one run; the summary then shows the curve,
//! its knee, "you are here" (the lowest-concurrency step) and the USL fit.

use crate::error::{Error, Result};
use crate::import::open::load_scenario;
use crate::scenario::model::Scenario;
use crate::scenario::steps::{Action, Step};
use crate::scenario::time_scale;
use crate::scenario::units::Span;
use crate::scenario::{Override, SteadyStop};
use crate::session::{self, RunOptions};
use crate::suggest;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(clap::Args)]
pub struct Args {
    /// Scenario file or built-in name whose workload is swept (the first, or --workload)
    scenario: String,
    /// KEY=V1,V2,...: iodepth or jobs and their values; several --vary sweep every combination
    #[arg(long = "vary", value_name = "KEY=VALUES", required = true)]
    vary: Vec<String>,
    /// Which workload of the scenario to sweep
    #[arg(long)]
    workload: Option<String>,
    /// Shortest step (steady state is not checked before)
    #[arg(long, default_value = "10s")]
    min: Span,
    /// Longest step, when steady state is not reached
    #[arg(long, default_value = "60s")]
    max: Span,
    /// Length of a steady-state round (5 rounds make the SNIA window)
    #[arg(long, default_value = "2s")]
    round: Span,
    /// Run every step for --max, without stopping at steady state
    #[arg(long)]
    fixed: bool,
    /// As for `fathom run`
    #[arg(long)]
    target: Option<PathBuf>,
    /// As for `fathom run`
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<Override>,
    /// As for `fathom run`: multiply every duration by F, --min, --max and --round too
    #[arg(long, value_name = "F")]
    time_scale: Option<f64>,
    /// Print only the final summary
    #[arg(long, short)]
    quiet: bool,
}

pub fn run(mut args: Args, store_dir: &Path, width: usize) -> Result<i32> {
    args.sets.extend(args.time_scale.map(time_scale::as_set));
    let (mut scenario, is_builtin) =
        load_scenario(Some(&args.scenario), args.target.as_slice(), None, &args.sets, None)?;
    let base = match &args.workload {
        Some(name) => scenario.workloads.iter().find(|w| &w.name == name).ok_or_else(|| {
            let names: Vec<&str> = scenario.workloads.iter().map(|w| w.name.as_str()).collect();
            Error::input(format!("{}: {}", args.scenario, suggest::no_workload(name, &names)))
        })?,
        None => &scenario.workloads[0],
    }
    .clone();
    if base.io().is_none() {
        return Err(Error::input(format!(
            "{}: workload `{}` runs {}: `sweep` varies the iodepth or jobs of an IO workload",
            args.scenario,
            base.name,
            base.runner()
        )));
    }
    let (min, max, round) = step_lengths(&args, &mut scenario)?;
    let combos = combinations(&args.vary)?;
    scenario.workloads.clear();
    scenario.steps.clear();
    scenario.expect.clear();
    for (i, combo) in combos.iter().enumerate() {
        let mut w = base.clone();
        // a step is named by what it sets (`qd4`, `qd4 j2`): the base's own name, itself
        // perhaps `qd1`, would make `qd1-qd4` read as a range
        let mut parts = Vec::new();
        for (key, v) in combo {
            match key.as_str() {
                "iodepth" => w.io_mut().into_iter().for_each(|io| io.iodepth = *v),
                _ => w.workers = *v,
            }
            parts.push(format!("{}{v}", if key == "iodepth" { "qd" } else { "j" }));
        }
        w.name = parts.join(" ");
        w.duration = Duration::from_secs(max);
        let steady = (!args.fixed).then_some(SteadyStop { min: Duration::from_secs(min), round_s: round as usize });
        w.io_mut().into_iter().for_each(|io| io.stop_when_steady = steady);
        scenario.workloads.push(w);
        scenario.steps.push(Step {
            at: None,
            phase: None,
            action: Action::Start { workload: i, stagger: Duration::ZERO, wait: true },
        });
    }
    scenario.name = format!("sweep-{}", base.name);
    // the swept values are not in the file: cost them as the file's are (one step at a time)
    crate::scenario::budget::check(&scenario.workloads, &scenario.steps)
        .map_err(|(i, msg)| Error::input(format!("--vary: step {}: {msg}", scenario.workloads[i].name)))?;
    let opts = RunOptions {
        target: args.target.clone(),
        sets: args.sets.clone(),
        no_expect: true,
        quiet: args.quiet,
        ..RunOptions::default()
    };
    super::end::End::new(args.quiet, None)?.print(&session::run(scenario, is_builtin, &opts, store_dir)?, width)
}

/// `--min`, `--max` and `--round` in seconds, scaled as a scenario's durations are by
/// `--time-scale`: the steps' lengths are the sweep's timeline.
/// Each must be whole seconds, and the shortest step no longer than the longest.
fn step_lengths(args: &Args, scenario: &mut Scenario) -> Result<(u64, u64, u64)> {
    let whole = |s: Span, what: &str| -> Result<u64> {
        if s.0.is_zero() || s.0.subsec_nanos() != 0 {
            return Err(Error::input(format!("--{what} {s}: a whole number of seconds, at least 1s")));
        }
        Ok(s.0.as_secs())
    };
    let (mut min, mut max, mut round) = (whole(args.min, "min")?, whole(args.max, "max")?, whole(args.round, "round")?);
    if let Some(scaled) = scenario.time_scale.as_mut() {
        for (value, what) in [(&mut min, "--min"), (&mut max, "--max"), (&mut round, "--round")] {
            let d = Duration::from_secs(*value);
            let (d2, raised) = time_scale::scale(d, scaled.factor, time_scale::Unit::Seconds(1));
            if raised {
                scaled.raised.push(time_scale::raised_text(what, d, scaled.factor, d2));
            }
            *value = d2.as_secs();
        }
    }
    if min > max && !args.fixed {
        return Err(Error::input(format!("--min {} is longer than --max {}", args.min, args.max)));
    }
    Ok((min, max, round))
}

/// Every combination of the `--vary` values, the first axis slowest.
/// Only iodepth and jobs can be swept, each value from 1 to 4096.
fn combinations(vary: &[String]) -> Result<Vec<Vec<(String, u32)>>> {
    let mut axes: Vec<(String, Vec<u32>)> = Vec::new();
    for v in vary {
        let (key, values) =
            v.split_once('=').ok_or_else(|| Error::input(format!("--vary {v}: expected KEY=V1,V2,...")))?;
        if !matches!(key, "iodepth" | "jobs") {
            return Err(Error::input(format!("--vary {v}: `{key}` cannot be swept (iodepth or jobs)")));
        }
        let values: Vec<u32> = values
            .split(',')
            .map(|x| x.trim().parse::<u32>().ok().filter(|n| (1..=4096).contains(n)))
            .collect::<Option<_>>()
            .ok_or_else(|| Error::input(format!("--vary {v}: values must be whole numbers from 1 to 4096")))?;
        axes.push((key.to_string(), values));
    }
    let mut combos: Vec<Vec<(String, u32)>> = vec![Vec::new()];
    for (key, values) in &axes {
        combos = combos
            .into_iter()
            .flat_map(|c| values.iter().map(move |&v| [c.clone(), vec![(key.clone(), v)]].concat()))
            .collect();
    }
    Ok(combos)
}
