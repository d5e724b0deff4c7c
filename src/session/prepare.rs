//! The first stage: everything a run needs before its clock starts. The order matters:
//! lint and placement refuse a run before anything is touched, servers are reached
//! before anything is laid out, agents are laid out before anything is stored, the
//! store's reserve is taken as soon as it is open, and the run's row comes after layout.

use super::state::{INTERRUPTED, Repeat, RunOptions, Session, Staged};
use crate::analysis::lint::{self, Severity};
use crate::children;
use crate::drivers::ReadyDrivers;
use crate::drivers::fio::{self, jobfile::IoEngine};
use crate::engine::{self, target};
use crate::error::{Error, Result};
use crate::observe::environment;
use crate::scenario::applied_sets;
use crate::scenario::time_scale;
use crate::scenario::{EngineKind, Override, Scenario};
use crate::store::{Reserve, Status, Store};
use crate::timeline;
use crate::transport::Inventory;
use crate::transport::fleet::{self, Fleet};
use crate::warnings::Warning;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The target of built-in scenarios unless `--target` is given; created if missing.
const BUILTIN_TARGET: &str = "./fathom-data";

/// Lint gate, engine choice, layout, fleet, the run's row and the drivers' programs.
/// A run refused here exits 2; one interrupted while its programs start exits 130.
pub(super) fn prepare(
    mut scenario: Scenario,
    is_builtin: bool,
    opts: &RunOptions,
    store_dir: &Path,
) -> Result<(Session, Staged)> {
    let findings = lint_gate(&mut scenario, opts)?;
    // placed on hosts: refused here, before anything is laid out, if they cannot be
    let inventory = opts.hosts.as_deref().map(Inventory::load).transpose()?;
    let hosts = fleet::place(&mut scenario, inventory.as_ref())?;
    crate::timeline::check_hosts(&scenario, inventory.as_ref())?;
    if makes_builtin_target(is_builtin, opts.target.is_some()) {
        std::fs::create_dir_all(BUILTIN_TARGET).map_err(|e| Error::input(format!("{BUILTIN_TARGET}: {e}")))?;
    }

    let (stop, interrupted) = catch_signals();
    let quiet = opts.quiet;
    crate::terminal::draw_meters(!quiet);
    let progress = progress_line(quiet);

    let mut warnings: Vec<Warning> = Vec::new();
    let (engines, uring_ok) = choose_engines(&scenario, &mut warnings)?;
    if let Some(scaled) = scenario.time_scale.as_ref().filter(|s| !s.raised.is_empty()) {
        warnings.push(Warning::TimeScaleRaised { factor: scaled.factor, raised: scaled.raised.clone() });
    }
    crate::drivers::check(&scenario, &interrupted)?;
    let mut files = lay_out_here(&scenario, opts, shrinks(is_builtin, &opts.sets), &interrupted, &mut warnings)?;

    // agents of other hosts: connected and laid out before anything is stored; one that
    // cannot be reached stops the run here, naming the host and its transport's words
    let (tx, rx) = std::sync::mpsc::channel();
    let sets = applied_sets(&opts.sets, opts.target.as_deref(), opts.engine.as_deref())?;
    let fleet = Arc::new(Fleet::start(&scenario, &hosts, &sets, opts.push_agent, &tx, &interrupted, &*progress)?);
    // a placed workload's stand-in here says how its hosts opened their files
    for (&idx, &direct) in &fleet.direct {
        files[idx].iter_mut().for_each(|f| f.direct = direct);
    }
    let files: Vec<Vec<_>> = files.into_iter().map(|f| f.into_iter().map(Arc::new).collect()).collect();

    let store = Store::open(store_dir)?;
    let workers: Vec<u32> = scenario.workloads.iter().zip(&files).map(|(w, f)| timeline::workers_of(w, f)).collect();
    let total = timeline::planned_seconds(&scenario);
    // a run whose length is unknown (a workload ends when its IO is done) is checked for
    // its first second's results and the reserve
    let reserve = Arc::new(Reserve::take(store_dir, total.unwrap_or(1), &workers)?);
    // about runs before this one: said, and stored with those runs (`clean_up`)
    for what in children::clean_up(&store)? {
        Warning::LeftBehind { what }.say();
    }
    let (targets, env) = environment_of(&scenario, &files, &fleet);
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    let run = store.create_run(&scenario.name, &scenario.text, &command, &env)?;
    // recorded at once: a forced stop from here on marks the run aborted
    let recorded = children::record_run(Store::open(store_dir)?, run)?;
    if let Some(scaled) = &scenario.time_scale {
        store.set_time_scale(run, scaled.factor)?;
    }
    store.set_resolved(run, &scenario.resolved, &serde_json::json!(scenario.vars))?;
    if let Some(repeat) = opts.repeat {
        store.set_repeat_group(run, if let Repeat::Of(first) = repeat { first } else { run })?;
    }
    store_warnings(&store, run, &warnings, &findings, quiet)?;
    if let Some(d) = &scenario.description {
        progress(&format!("{}: {d}{}", scenario.name, servers(&scenario)));
    }
    let prepared = start_drivers(&store, run, &scenario, &stop, &interrupted, &*progress)?;
    let length = planned_length(&scenario, total);
    let scale =
        scenario.time_scale.as_ref().map(|s| format!(", {}", time_scale::describe(s.factor))).unwrap_or_default();
    progress(&format!("run {run}: {length}{scale}; results in {}", store.path.display()));

    let session = Session {
        _recorded: recorded,
        reserve,
        store,
        run,
        fleet,
        inventory,
        scenario,
        engines,
        progress,
        stop,
        interrupted,
    };
    Ok((session, Staged { files, targets, uring_ok, total, prepared, tx, rx }))
}

/// Whether a working set may shrink to fit the target's free space: a built-in
/// scenario's, unless `--set size=` asked for one.
fn shrinks(is_builtin: bool, sets: &[Override]) -> bool {
    is_builtin && !sets.iter().any(|s| s.path.last().is_some_and(|k| k == "size"))
}

/// The workloads as laid out here: a stand-in (no IO, no file) for each placed on other
/// hosts, whose agents lay them out there.
fn here(scenario: &Scenario) -> Vec<crate::scenario::Workload> {
    let stand_in =
        |w: &crate::scenario::Workload| crate::scenario::Workload { engine: Some(EngineKind::Null), ..w.clone() };
    scenario.workloads.iter().map(|w| if w.placement.is_some() { stand_in(w) } else { w.clone() }).collect()
}

/// Whether the run creates the built-in scenarios' target directory before laying out:
/// a built-in scenario run without `--target`.
fn makes_builtin_target(is_builtin: bool, target_given: bool) -> bool {
    is_builtin && !target_given
}

/// Refuses what laying out here would refuse, before anything is written, in the run's
/// words: `fathom lint` checks what `fathom run` would refuse. Writing a device is left
/// to the run's `--allow-device-write`, which lint does not take.
pub fn check_layout(scenario: &Scenario, is_builtin: bool, target_given: bool, sets: &[Override]) -> Result<()> {
    // the run makes that directory first, empty: nothing in it can be missing, and a
    // built-in's working set shrinks to fit
    if makes_builtin_target(is_builtin, target_given) && !Path::new(BUILTIN_TARGET).is_dir() {
        return Ok(());
    }
    let layout = target::Options { allow_device_write: true, shrink_to_fit: shrinks(is_builtin, sets) };
    target::check(&here(scenario), &layout).map_err(|e| of_scenario(scenario, e))
}

/// A refusal of laying out, led by the scenario it is of: a target may come from a file
/// the scenario was imported from (a fio job's `filename=`), which the message then names.
fn of_scenario(scenario: &Scenario, e: Error) -> Error {
    match e {
        Error::Input(msg) => Error::input(format!("{}: {msg}", scenario.origin)),
        other => other,
    }
}

/// Lays out the workloads that run here, and a stand-in for each placed on other
/// hosts, whose agents lay them out there. `shrink` lets a built-in scenario's files
/// shrink to fit the target's free space.
fn lay_out_here(
    scenario: &Scenario,
    opts: &RunOptions,
    shrink: bool,
    interrupted: &AtomicBool,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<Vec<target::DataFile>>> {
    let layout = target::Options { allow_device_write: opts.allow_device_write, shrink_to_fit: shrink };
    target::prepare(&here(scenario), &layout, interrupted, &mut |w| warnings.push(w))
        .map_err(|e| of_scenario(scenario, e))
}

/// Starts the databases and servers of `driver:` workloads.
/// A bad DSN ends the run here, with PostgreSQL's own message, and stops whatever was
/// started (exit 2); an interrupt ends it as aborted.
fn start_drivers(
    store: &Store,
    run: i64,
    scenario: &Scenario,
    stop: &AtomicBool,
    interrupted: &AtomicBool,
    progress: &dyn Fn(&str),
) -> Result<ReadyDrivers> {
    match ReadyDrivers::prepare(scenario, &store.run_dir(run), stop, progress) {
        Ok(p) => Ok(p),
        Err(_) if interrupted.load(Ordering::Relaxed) => {
            super::state::finish(store, run, Status::Aborted, Some(INTERRUPTED))?;
            Err(Error::Interrupted)
        }
        Err(e) => {
            super::state::finish(store, run, Status::Failed, Some(&e.to_string()))?;
            Err(e)
        }
    }
}

/// Applies `--prometheus`, checks the hooks, and lints the scenario.
/// With `--strict`, a warning refuses the run before anything is touched.
fn lint_gate(scenario: &mut Scenario, opts: &RunOptions) -> Result<Vec<lint::Finding>> {
    // --prometheus wins over the scenario's `prometheus:`: lint checks the one in force
    if let Some(addr) = &opts.prometheus {
        scenario.prometheus = Some(addr.clone());
    }
    crate::scenario::hooks::check(scenario, opts.hooks.as_ref())?;
    let findings = lint::before(scenario, &crate::observe::preflight::facts(scenario));
    if opts.strict && findings.iter().any(|f| f.severity == Severity::Warning) {
        lint::describe(&findings).lines().for_each(crate::terminal::say);
        return Err(Error::input("lint found warnings and --strict is set: fix them, or run without --strict"));
    }
    Ok(findings)
}

/// The run's stop and interrupt flags, raised by a signal.
/// Signals stop workers, layout and the programs fathom started alike; a second
/// Ctrl-C kills those programs and exits at once.
fn catch_signals() -> (Arc<AtomicBool>, Arc<AtomicBool>) {
    let stop = Arc::new(AtomicBool::new(false));
    let interrupted = Arc::new(AtomicBool::new(false));
    // a hangup (the terminal or the ssh session gone) is an interrupt too: the run keeps
    // its seconds and stops what it started, rather than die with them running
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM, signal_hook::consts::SIGHUP] {
        let _ = children::exit_on_second_signal(sig);
        let _ = signal_hook::flag::register(sig, interrupted.clone());
        let _ = signal_hook::flag::register(sig, stop.clone());
    }
    (stop, interrupted)
}

/// Where the run's progress lines go: above the live view, unless `--quiet`.
fn progress_line(quiet: bool) -> Arc<dyn Fn(&str) + Send + Sync> {
    Arc::new(move |line: &str| {
        if !quiet {
            // above the live view, if any; a hook's command line may hold a secret
            crate::terminal::say(&crate::secrets::redact(line));
        }
    })
}

/// The targets measured here, and the environment the run records.
/// A placed workload's files here are stand-ins, so its targets are left to its hosts.
fn environment_of(
    scenario: &Scenario,
    files: &[Vec<Arc<target::DataFile>>],
    fleet: &Fleet,
) -> (Vec<PathBuf>, serde_json::Value) {
    // a placed workload's files here are stand-ins; its hosts' targets are theirs to say
    let targets: Vec<PathBuf> = files
        .iter()
        .zip(&scenario.workloads)
        .filter(|(_, w)| w.placement.is_none())
        .flat_map(|(f, w)| {
            f.iter().map(|f| f.path.clone()).chain(w.outside_targets().iter().cloned()).chain(server_dirs(w))
        })
        .collect();
    let mut env = environment::capture(&targets);
    // each host's machine, so that what is summed over hosts counts a shared machine
    // once, and its CPUs' shape, which `compare` lists where two runs differ
    let host = |r: &crate::transport::remote::Remote| serde_json::json!({"machine": r.machine, "cores": r.cores, "cpu_topology": r.cpu_topology});
    let hosts: serde_json::Map<String, serde_json::Value> =
        fleet.remotes.iter().map(|(name, r)| (name.clone(), host(r))).collect();
    if !hosts.is_empty() {
        env["hosts"] = serde_json::Value::Object(hosts);
    }
    (targets, env)
}

/// The directories a workload's throwaway database server keeps its data, its log and
/// its tables in, where the scenario gives them: storage under test, as a target is.
fn server_dirs(w: &crate::scenario::Workload) -> Vec<PathBuf> {
    let dirs = w.program().map(|p| p.server_dirs()).unwrap_or_default();
    dirs.all().cloned().collect()
}

/// Stores the run's warnings and lint findings, and shows them.
/// Warnings are always shown; findings only without `--quiet`.
fn store_warnings(
    store: &Store,
    run: i64,
    warnings: &[Warning],
    findings: &[lint::Finding],
    quiet: bool,
) -> Result<()> {
    for w in warnings {
        store.add_warning(run, w.code(), &w.message())?;
        w.say();
    }
    for f in findings {
        store.add_warning(run, &format!("lint-{}", f.code), &f.message)?;
    }
    if !findings.is_empty() && !quiet {
        lint::describe(findings).lines().for_each(crate::terminal::say);
    }
    Ok(())
}

/// The engine each workload will use (io_uring falls back to psync when unavailable),
/// and whether io_uring works here. Workloads run by fio need the program, and each
/// knob fio runs differently is a warning.
fn choose_engines(scenario: &Scenario, warnings: &mut Vec<Warning>) -> Result<(Vec<Option<EngineKind>>, bool)> {
    let uses = |e: EngineKind| scenario.workloads.iter().any(|w| w.engine == Some(e));
    let uring_ok = if uses(EngineKind::IoUring) || uses(EngineKind::Fio) {
        match engine::probe_io_uring() {
            Ok(()) => true,
            Err(reason) => {
                warnings.push(Warning::IoUringUnavailable { reason: reason.to_string() });
                false
            }
        }
    } else {
        false
    };
    if uses(EngineKind::Fio) {
        let io_engine = if uring_ok { IoEngine::IoUring } else { IoEngine::Psync };
        for w in scenario.workloads.iter().filter(|w| w.engine == Some(EngineKind::Fio)) {
            for note in w.io().map(|io| fio::jobfile::inexact(io, io_engine)).unwrap_or_default() {
                warnings.push(Warning::FioInexact { workload: w.name.clone(), knob: note.knob, why: note.why });
            }
        }
    }
    let engines = scenario
        .workloads
        .iter()
        .map(|w| match w.engine {
            Some(EngineKind::IoUring) if !uring_ok => Some(EngineKind::Psync),
            engine => engine,
        })
        .collect();
    Ok((engines, uring_ok))
}

/// How long the run is planned to take, as its first line says: `about N s`; `at most N
/// s` when a workload that ends by itself once its work is done is capped by its
/// duration (a TPC-H query set, a bounded IO), which it most often ends well before;
/// `until its IO is done` when nothing caps it.
fn planned_length(scenario: &Scenario, total: Option<u64>) -> String {
    let capped = scenario.workloads.iter().any(|w| w.bound().is_some_and(|b| b.capped));
    match (total, capped) {
        (None, _) => "until its IO is done".into(),
        (Some(s), true) => format!("at most {s} s, less once its work is done"),
        (Some(s), false) => format!("about {s} s"),
    }
}

/// Where a scenario's database workloads run, said after its description: `, on a
/// throwaway PostgreSQL` only when fathom starts it, the user's server named as theirs.
fn servers(scenario: &Scenario) -> &'static str {
    let given: Vec<bool> = scenario
        .workloads
        .iter()
        .filter_map(|w| w.program().filter(|p| p.serves_database()).map(|p| p.server_given()))
        .collect();
    match (given.contains(&false), given.contains(&true)) {
        (true, false) => " (on a throwaway PostgreSQL)",
        (false, true) => " (on the server its `dsn` gives)",
        (true, true) => " (on a throwaway PostgreSQL and the server a `dsn` gives)",
        (false, false) => "",
    }
}
