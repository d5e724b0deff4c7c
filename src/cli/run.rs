//! `fathom run [SCENARIO]`: load, prepare targets, run, store, summarize.

use crate::drivers::fio::{self, jobfile::IoEngine};
use crate::engine::{self, target};
use crate::error::{Error, Result};
use crate::metrics::collector;
use crate::observe::environment;
use crate::report::expect;
use crate::report::summary::RunSummary;
use crate::scenario::{EngineKind, Override, Scenario, Source, builtin};
use crate::store::{Status, Store};
use crate::timeline::{self, Outcome};
use crate::warnings::Warning;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// The target of built-in scenarios unless `--target` is given; created if missing.
const BUILTIN_TARGET: &str = "./fathom-data";

#[derive(clap::Args)]
pub struct Args {
    /// Scenario file, or the name of a built-in scenario (see `fathom scenarios`)
    scenario: Option<String>,
    /// Run every workload against this directory, file or block device
    #[arg(long)]
    target: Option<PathBuf>,
    /// Override a scenario value: KEY=VALUE (every workload), WORKLOAD.KEY=VALUE, or a full path
    #[arg(long = "set", value_name = "KEY=VALUE")]
    sets: Vec<Override>,
    /// Allow write workloads on raw block devices (never on mounted ones)
    #[arg(long)]
    allow_device_write: bool,
    /// Run every workload with this engine: io_uring, psync, null (no IO) or fio (the
    /// real fio, for parity checks); the same as `--set engine=ENGINE`
    #[arg(long, value_name = "ENGINE")]
    engine: Option<String>,
    /// Do not check the scenario's `expect` thresholds (a failed one exits 3)
    #[arg(long)]
    no_expect: bool,
    /// Print only the final summary
    #[arg(long, short)]
    quiet: bool,
}

pub fn run(mut args: Args, results: &Path) -> Result<i32> {
    let name = args.scenario.clone().unwrap_or_else(|| builtin::DEFAULT.to_string());
    let (origin, text, is_builtin) = read_scenario(&name)?;
    if let Some(t) = &args.target {
        args.sets.push(format!("target={}", t.display()).parse().map_err(Error::input)?);
    }
    if let Some(e) = &args.engine {
        args.sets.push(format!("engine={e}").parse().map_err(Error::input)?);
    }
    let explicit_size = args.sets.iter().any(|s| s.path.last().is_some_and(|k| k == "size"));
    let scenario = Scenario::load(&Source { origin, text: &text }, &args.sets)?;
    if is_builtin && args.target.is_none() {
        std::fs::create_dir_all(BUILTIN_TARGET).map_err(|e| Error::input(format!("{BUILTIN_TARGET}: {e}")))?;
    }

    // Signals stop workers and layout alike; a second Ctrl-C exits at once.
    let stop = Arc::new(AtomicBool::new(false));
    let interrupted = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let _ = signal_hook::flag::register_conditional_shutdown(sig, 130, interrupted.clone());
        let _ = signal_hook::flag::register(sig, interrupted.clone());
        let _ = signal_hook::flag::register(sig, stop.clone());
    }

    let quiet = args.quiet;
    let progress = move |line: &str| {
        if !quiet {
            eprintln!("{line}");
        }
    };

    let mut warnings: Vec<Warning> = Vec::new();
    let (engines, uring_ok) = choose_engines(&scenario, &mut warnings)?;
    let opts =
        target::Options { allow_device_write: args.allow_device_write, shrink_to_fit: is_builtin && !explicit_size };
    let files = target::prepare(&scenario.workloads, &opts, &interrupted, &mut |w| warnings.push(w))?;
    let files: Vec<Vec<_>> = files.into_iter().map(|f| f.into_iter().map(Arc::new).collect()).collect();

    let store = Store::open(results)?;
    let targets: Vec<PathBuf> = files.iter().flatten().map(|f| f.path.clone()).collect();
    let env = environment::capture(&targets);
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    let run = store.create_run(&scenario.name, &scenario.text, &command, &env)?;
    for w in &warnings {
        store.add_warning(run, w.code(), &w.message())?;
        eprintln!("warning: {}", w.message());
    }
    let total = timeline::planned_seconds(&scenario);
    if let Some(d) = &scenario.description {
        progress(&format!("{}: {d}", scenario.name));
    }
    progress(&format!("run {run}: about {total} s; results in {}", store.path.display()));

    let clock_start = Instant::now();
    let clock_unix_ms = crate::store::now_ms();
    store.set_clock_start(run, clock_unix_ms)?;
    let (tx, rx) = std::sync::mpsc::channel();
    let writer = Store::open(results)?;
    let collector = std::thread::Builder::new()
        .name("collector".into())
        .spawn(move || collector::run(writer, run, clock_start, rx))
        .map_err(|e| Error::failed(format!("starting the collector: {e}")))?;

    let cx = timeline::Context {
        store: &store,
        run,
        files,
        engines,
        uring_ok,
        clock_start,
        clock_unix_ms,
        run_dir: store.run_dir(run),
        tx,
        stop: stop.clone(),
        interrupted: interrupted.clone(),
        progress: &progress,
    };
    let outcome = timeline::execute(&scenario, &cx);
    drop(cx); // closes the sample channel so the collector finishes
    let stored = collector.join().unwrap_or_else(|_| Err(Error::failed("the sample collector panicked")));

    // Wrong data from storage fails the run, whatever else happened.
    let outcome = match (outcome, store.verify_failures(run)?) {
        (Ok(Outcome::Completed), (misplaced, corrupt)) if misplaced + corrupt > 0 => Ok(Outcome::Failed(format!(
            "data verification failed: {corrupt} corrupt and {misplaced} misplaced blocks (see `fathom show {run}`)"
        ))),
        (outcome, _) => outcome,
    };
    let (status, error, code) = match (outcome, stored) {
        (Err(e), _) | (Ok(_), Err(e)) => (Status::Failed, Some(e.to_string()), 1),
        (Ok(Outcome::Failed(msg)), _) => (Status::Failed, Some(msg), 1),
        (Ok(Outcome::Aborted), _) => (Status::Aborted, Some("interrupted by a signal".to_string()), 130),
        (Ok(Outcome::Completed), _) => (Status::Completed, None, 0),
    };
    store.finish_run(run, status, error.as_deref())?;
    // Expectations judge a run that completed; a failed one exits 3.
    let mut code = code;
    if code == 0 && !args.no_expect && !scenario.expect.is_empty() {
        let rows = expect::check(&store, run, &scenario.expect)?;
        for (i, row) in rows.iter().enumerate() {
            store.add_expectation(run, i, row)?;
        }
        if rows.iter().any(|r| !r.passed) {
            code = 3;
        }
    }
    println!();
    super::show::print(&RunSummary::load(&store, &run.to_string())?);
    if code == 3 {
        println!(
            "
some expectations failed (exit 3); `--no-expect` skips them"
        );
    }
    if code == 0 {
        println!("\nsee it again with `fathom show {run}`; all runs: `fathom runs`");
    }
    Ok(code)
}

/// Reads a scenario file, or a built-in by name. Returns (origin, text, is_builtin).
fn read_scenario(name: &str) -> Result<(String, String, bool)> {
    let path = std::path::Path::new(name);
    if path.exists() {
        let text = std::fs::read_to_string(path).map_err(|e| Error::input(format!("{name}: {e}")))?;
        return Ok((name.to_string(), text, false));
    }
    match builtin::find(name) {
        Some(text) => Ok((format!("builtin:{name}"), text.to_string(), true)),
        None => Err(Error::input(format!(
            "{name}: no such scenario file, and no built-in scenario of that name (see `fathom scenarios`)"
        ))),
    }
}

/// The engine each workload will use (io_uring falls back to psync when unavailable),
/// and whether io_uring works here. Workloads run by fio need the program, and each
/// knob fio runs differently is a warning.
fn choose_engines(scenario: &Scenario, warnings: &mut Vec<Warning>) -> Result<(Vec<EngineKind>, bool)> {
    let uses = |e: EngineKind| scenario.workloads.iter().any(|w| w.engine == e);
    let uring_ok = if uses(EngineKind::IoUring) || uses(EngineKind::Fio) {
        match engine::probe_io_uring() {
            Ok(()) => true,
            Err(reason) => {
                warnings.push(Warning::IoUringUnavailable { reason });
                false
            }
        }
    } else {
        false
    };
    if uses(EngineKind::Fio) {
        fio::version().map_err(Error::input)?;
        let io_engine = if uring_ok { IoEngine::IoUring } else { IoEngine::Psync };
        for w in scenario.workloads.iter().filter(|w| w.engine == EngineKind::Fio) {
            for note in fio::jobfile::inexact(w, io_engine) {
                warnings.push(Warning::FioInexact { workload: w.name.clone(), knob: note.knob, why: note.why });
            }
        }
    }
    let engines = scenario
        .workloads
        .iter()
        .map(|w| if w.engine == EngineKind::IoUring && !uring_ok { EngineKind::Psync } else { w.engine })
        .collect();
    Ok((engines, uring_ok))
}
