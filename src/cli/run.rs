//! `fathom run [SCENARIO]`: load, prepare targets, run, store, summarize.

use crate::analysis::lint::{self, Severity};
use crate::children;
use crate::drivers::fio::{self, jobfile::IoEngine};
use crate::engine::{self, target};
use crate::error::{Error, Result};
use crate::export::prometheus::Endpoint;
use crate::metrics::collector;
use crate::metrics::live::{Live, WorkloadInfo};
use crate::observe::{Observers, diskstats, environment, host};
use crate::report::expect;
use crate::report::live::View;
use crate::report::summary::RunSummary;
use crate::scenario::{EngineKind, Override, Scenario, Source, builtin};
use crate::store::{EventRow, ObservationRow, Reserve, Status, Store};
use crate::timeline::{self, Outcome};
use crate::transport::Inventory;
use crate::transport::fleet::{self, Fleet};
use crate::warnings::Warning;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// The error of a run stopped by SIGINT or SIGTERM.
const INTERRUPTED: &str = "interrupted by a signal";

/// The target of built-in scenarios unless `--target` is given; created if missing.
const BUILTIN_TARGET: &str = "./fathom-data";

#[derive(clap::Args)]
pub struct Args {
    /// Scenario file, or the name of a built-in scenario (see `fathom scenarios`)
    pub(super) scenario: Option<String>,
    /// Run every workload against this directory, file or block device
    #[arg(long)]
    pub(super) target: Option<PathBuf>,
    /// Override a scenario value: KEY=VALUE (every workload), WORKLOAD.KEY=VALUE, or a full path
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(super) sets: Vec<Override>,
    /// Allow write workloads on raw block devices (never on mounted ones)
    #[arg(long)]
    pub(super) allow_device_write: bool,
    /// Run every workload with this engine: io_uring, psync, null (no IO) or fio (the
    /// real fio, for parity checks); the same as `--set engine=ENGINE`
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
}

/// Reads and checks the scenario named on the command line (a file, a built-in, or the
/// quickstart) with `--target`, `--engine` and `--set` applied. Also says whether it is
/// a built-in.
pub fn load_scenario(
    scenario: Option<&str>,
    target: Option<&Path>,
    engine: Option<&str>,
    sets: &[Override],
) -> Result<(Scenario, bool)> {
    let name = scenario.unwrap_or(builtin::DEFAULT);
    let (origin, text, is_builtin) = read_scenario(name)?;
    let sets = applied_sets(sets, target, engine)?;
    Ok((Scenario::load(&Source { origin, text: &text }, &sets)?, is_builtin))
}

/// The `--set`s a scenario is loaded with: the user's, then `--target` and `--engine`
/// as the sets they stand for (agents on other hosts load it with the same).
fn applied_sets(sets: &[Override], target: Option<&Path>, engine: Option<&str>) -> Result<Vec<Override>> {
    let mut sets = sets.to_vec();
    if let Some(t) = target {
        sets.push(format!("target={}", t.display()).parse().map_err(Error::input)?);
    }
    if let Some(e) = engine {
        sets.push(format!("engine={e}").parse().map_err(Error::input)?);
    }
    Ok(sets)
}

pub fn run(args: Args, results: &Path) -> Result<i32> {
    let (scenario, is_builtin) =
        load_scenario(args.scenario.as_deref(), args.target.as_deref(), args.engine.as_deref(), &args.sets)?;
    execute(scenario, is_builtin, &args, results)
}

/// Runs a loaded scenario with the options of `args` (its scenario, `--set`s and
/// engine are already applied): lint, layout, the timeline, storing and the summary.
/// The exit status: 0, 1 failed, 3 an expectation failed, 130 interrupted.
pub fn execute(mut scenario: Scenario, is_builtin: bool, args: &Args, results: &Path) -> Result<i32> {
    let explicit_size = args.sets.iter().any(|s| s.path.last().is_some_and(|k| k == "size"));
    // --prometheus wins over the scenario's `prometheus:`: lint checks the one in force
    if let Some(addr) = &args.prometheus {
        scenario.prometheus = Some(addr.clone());
    }
    let findings = super::lint::findings(&scenario);
    if args.strict && findings.iter().any(|f| f.severity == Severity::Warning) {
        eprint!("{}", super::lint::describe(&findings));
        return Err(Error::input("lint found warnings and --strict is set: fix them, or run without --strict"));
    }
    // placed on hosts: refused here, before anything is laid out, if they cannot be
    let inventory = args.hosts.as_deref().map(Inventory::load).transpose()?;
    fleet::place(&mut scenario, inventory.as_ref())?;
    if is_builtin && args.target.is_none() {
        std::fs::create_dir_all(BUILTIN_TARGET).map_err(|e| Error::input(format!("{BUILTIN_TARGET}: {e}")))?;
    }

    // Signals stop workers, layout and the programs fathom started alike; a second
    // Ctrl-C kills those programs and exits at once.
    let stop = Arc::new(AtomicBool::new(false));
    let interrupted = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let _ = children::exit_on_second_signal(sig, interrupted.clone());
        let _ = signal_hook::flag::register(sig, interrupted.clone());
        let _ = signal_hook::flag::register(sig, stop.clone());
    }

    let quiet = args.quiet;
    let terminal = crate::report::live::on_terminal();
    let progress: Arc<dyn Fn(&str) + Send + Sync> = Arc::new(move |line: &str| {
        if !quiet {
            // over the live view's status line, if any; a hook's command line may hold a secret
            eprintln!("{}{}", if terminal { "\r\x1b[K" } else { "" }, crate::secrets::redact(line));
        }
    });

    let mut warnings: Vec<Warning> = Vec::new();
    let (engines, uring_ok) = choose_engines(&scenario, &mut warnings)?;
    crate::drivers::check_installed(&scenario).map_err(Error::input)?;
    crate::drivers::check_servers(&scenario, &interrupted).map_err(|e| match interrupted.load(Ordering::Relaxed) {
        true => Error::Interrupted,
        false => Error::input(e),
    })?;
    let opts =
        target::Options { allow_device_write: args.allow_device_write, shrink_to_fit: is_builtin && !explicit_size };
    // workloads on other hosts are laid out there, by their agents
    let here: Vec<_> = scenario
        .workloads
        .iter()
        .map(|w| match w.placement {
            Some(_) => crate::scenario::Workload { targets: Vec::new(), engine: EngineKind::Null, ..w.clone() },
            None => w.clone(),
        })
        .collect();
    let files = target::prepare(&here, &opts, &interrupted, &mut |w| warnings.push(w))?;
    let files: Vec<Vec<_>> = files.into_iter().map(|f| f.into_iter().map(Arc::new).collect()).collect();

    // agents of other hosts: connected and laid out before anything is stored; one that
    // cannot be reached stops the run here, naming the host and its transport's words
    let (tx, rx) = std::sync::mpsc::channel();
    let sets = applied_sets(&args.sets, args.target.as_deref(), args.engine.as_deref())?;
    let fleet = Arc::new(Fleet::start(
        &mut scenario,
        inventory.as_ref(),
        &sets,
        args.push_agent,
        &tx,
        &interrupted,
        &*progress,
    )?);

    let store = Store::open(results)?;
    let workers: Vec<u32> = scenario.workloads.iter().zip(&files).map(|(w, f)| timeline::jobs_of(w, f)).collect();
    let reserve = Arc::new(Reserve::take(results, timeline::planned_seconds(&scenario), &workers)?);
    for line in children::clean_up(&store)? {
        eprintln!("warning: {line}");
    }
    let targets: Vec<PathBuf> = files.iter().flatten().map(|f| f.path.clone()).collect();
    let env = environment::capture(&targets);
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    let run = store.create_run(&scenario.name, &scenario.text, &command, &env)?;
    let _recorded = children::record_run(results, run)?;
    for w in &warnings {
        store.add_warning(run, w.code(), &w.message())?;
        eprintln!("warning: {}", w.message());
    }
    for f in &findings {
        store.add_warning(run, &format!("lint-{}", f.code), &f.message)?;
    }
    if !findings.is_empty() && !quiet {
        eprint!("{}", super::lint::describe(&findings));
    }
    let total = timeline::planned_seconds(&scenario);
    if let Some(d) = &scenario.description {
        progress(&format!("{}: {d}", scenario.name));
    }
    // databases and servers of `driver:` workloads; a bad DSN ends the run here, with
    // PostgreSQL's own message, and stops whatever was started (exit 2)
    let prepared = match crate::drivers::prepare(&scenario, &store.run_dir(run), &stop, &*progress) {
        Ok(p) => p,
        Err(_) if interrupted.load(Ordering::Relaxed) => {
            store.finish_run(run, Status::Aborted, Some(INTERRUPTED))?;
            return Err(Error::Interrupted);
        }
        Err(e) => {
            store.finish_run(run, Status::Failed, Some(&e))?;
            return Err(Error::input(e));
        }
    };
    progress(&format!("run {run}: about {total} s; results in {}", store.path.display()));

    let cpu_before = host::process_cpu_seconds();
    let clock_start = Instant::now();
    let clock_unix_ms = crate::store::now_ms();
    store.set_clock_start(run, clock_unix_ms)?;
    *fleet.clock_unix_ms.lock().unwrap_or_else(|e| e.into_inner()) = clock_unix_ms;
    record_clocks(&store, run, &fleet)?;
    fleet.watch_clocks(results.to_path_buf(), run, clock_start);
    let writer = Store::open(results)?;
    let infos = scenario
        .workloads
        .iter()
        .zip(&files)
        .map(|(w, f)| WorkloadInfo {
            name: w.name.clone(),
            group: w.group.clone().unwrap_or_default(),
            workers: timeline::jobs_of(w, f),
            target_iops: w.rate_iops,
            placed: w.placement.is_some(),
        })
        .collect();
    let live = Arc::new(Live::new(run, &scenario.name, infos));
    // --prometheus wins over the scenario's `prometheus:`
    let prometheus = match (&args.prometheus, &scenario.prometheus) {
        (Some(addr), _) => Some((addr, "--prometheus")),
        (None, Some(addr)) => Some((addr, "prometheus:")),
        (None, None) => None,
    };
    let endpoint = match prometheus {
        Some((addr, from)) => {
            let endpoint = Endpoint::start(addr, live.clone())
                .map_err(|e| Error::input(format!("{from} {addr}: cannot listen there: {e}")))?;
            progress(&format!("metrics for Prometheus at http://{}/metrics", endpoint.addr));
            Some(endpoint)
        }
        None => None,
    };
    let view = (!quiet).then(|| View::start(live.clone(), clock_start, total));
    let (feed, halt, kept) = (live.clone(), stop.clone(), reserve.clone());
    let collector = std::thread::Builder::new()
        .name("collector".into())
        .spawn(move || {
            let sink = collector::Sink { store: writer, run, live: &feed, stop: &halt, reserve: &kept };
            collector::run(sink, clock_start, rx)
        })
        .map_err(|e| Error::failed(format!("starting the collector: {e}")))?;

    let devices = diskstats::devices_of(&targets);
    let observers = Observers::start(
        &|| Store::open(results),
        run,
        clock_start,
        devices,
        scenario.remote.clone(),
        progress.clone(),
    )?;

    let cx = timeline::Context {
        store: &store,
        run,
        files,
        engines: engines.clone(),
        uring_ok,
        clock_start,
        clock_unix_ms,
        run_dir: store.run_dir(run),
        results: results.to_path_buf(),
        prepared: &prepared,
        fleet: &fleet,
        tx,
        stop: stop.clone(),
        interrupted: interrupted.clone(),
        progress: &*progress,
        on_phase: &|label| live.set_phase(label),
        on_host: &|worker, host| live.set_host(worker, host),
    };
    let engines_used = engines;
    let outcome = timeline::execute(&scenario, &cx);
    drop(cx); // closes the sample channel so the collector finishes
    // agents' samples are all in once they have left
    fleet.leave();
    if let Some(view) = view {
        view.stop();
    }
    let stored = collector.join().unwrap_or_else(|_| Err(Error::failed("the sample collector panicked")));
    // the samples are in: what is left to write is the run's end, which the reserve
    // makes room for if the disk filled
    reserve.release();
    let stored = stored.and(observers.stop());
    let stored = stored.and(prepared.stop().map_err(Error::failed));

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
        (Ok(Outcome::Aborted), _) => (Status::Aborted, Some(INTERRUPTED.to_string()), 130),
        (Ok(Outcome::Completed), _) => (Status::Completed, None, 0),
    };
    // a host lost mid-run: what it sent is kept, the others ran on; the run is partial
    let lost = fleet.lost();
    for (host, at) in &lost {
        let at_ms = at.saturating_duration_since(clock_start).as_millis() as i64;
        let message = format!(
            "host {host} was lost {:.1} s into the run: its samples up to then are kept, the other hosts ran on",
            at_ms as f64 / 1000.0
        );
        store.add_event(
            run,
            &EventRow {
                at_ms,
                kind: "host-lost".into(),
                label: host.clone(),
                status: None,
                took_ms: None,
                detail: message.clone(),
            },
        )?;
        store.add_warning(run, "host-lost", &message)?;
        eprintln!("warning: {message}");
    }
    let (status, error, code) = match (status, lost.is_empty()) {
        (Status::Completed, false) => {
            let hosts: Vec<&str> = lost.iter().map(|(h, _)| h.as_str()).collect();
            (Status::Partial, Some(format!("lost host {}", hosts.join(", "))), 1)
        }
        _ => (status, error, code),
    };
    // the lags are a detail: failing to store them must not leave the run `running`
    let lags = record_lags(&store, run, &fleet);
    let cpu_per_core =
        generator_busy(&scenario, &engines_used, host::process_cpu_seconds() - cpu_before, clock_start.elapsed());
    store.finish_run(run, status, error.as_deref())?;
    lags?;
    for f in lint::after(&measured(&RunSummary::load(&store, &run.to_string())?), cpu_per_core) {
        store.add_warning(run, &format!("lint-{}", f.code), &f.message)?;
    }
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
    if let Some(endpoint) = endpoint {
        endpoint.stop();
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

/// Each agent's clock offset and round trip as measured at connection, as observations
/// of second 0 (source `host:NAME`).
fn record_clocks(store: &Store, run: i64, fleet: &Fleet) -> Result<()> {
    let mut rows = Vec::new();
    for r in fleet.remotes.values() {
        let source = format!("host:{}", r.host.name);
        rows.push(ObservationRow { t: 0, source: source.clone(), name: "clock_offset_ms".into(), value: r.offset_ms });
        rows.push(ObservationRow { t: 0, source, name: "rtt_ms".into(), value: r.rtt_ms });
    }
    let mut store = Store::open(store.path.parent().unwrap_or(Path::new(".")))?;
    store.add_observations(run, &rows)
}

/// How late agents' samples arrived (from the end of their second to the controller):
/// median and p99 over the run, as observations of source `controller`.
fn record_lags(store: &Store, run: i64, fleet: &Fleet) -> Result<()> {
    let mut lags = fleet.lags.lock().unwrap_or_else(|e| e.into_inner()).clone();
    if lags.is_empty() {
        return Ok(());
    }
    lags.sort_by(f64::total_cmp);
    let q = |p: f64| lags[((lags.len() - 1) as f64 * p).round() as usize];
    let rows = [("sample_lag_p50_ms", q(0.5)), ("sample_lag_p99_ms", q(0.99))].map(|(name, value)| ObservationRow {
        t: 0,
        source: "controller".into(),
        name: name.into(),
        value,
    });
    let mut store = Store::open(store.path.parent().unwrap_or(Path::new(".")))?;
    store.add_observations(run, &rows)
}

/// Reads a scenario file, or a built-in by name. Returns (origin, text, is_builtin).
fn read_scenario(name: &str) -> Result<(String, String, bool)> {
    let path = std::path::Path::new(name);
    if path.exists() {
        return Ok((name.to_string(), read_text(path)?, false));
    }
    match builtin::find(name) {
        Some(text) => Ok((format!("builtin:{name}"), text.to_string(), true)),
        None => Err(Error::input(format!(
            "{name}: no such scenario file, and no built-in scenario of that name (see `fathom scenarios`)"
        ))),
    }
}

/// The text of a scenario file, read no further than one byte past the longest a
/// scenario may be (the loader says so; a named pipe or device must not fill memory).
fn read_text(path: &Path) -> Result<String> {
    use std::io::Read;
    let name = path.display();
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(crate::scenario::MAX_BYTES as u64 + 1).read_to_end(&mut bytes))
        .map_err(|e| Error::input(format!("{name}: {e}")))?;
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
        Error::input(format!("{name}:{line}: not UTF-8 text: expected a scenario saved as UTF-8"))
    })
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

/// How busy fathom kept the cores its worker threads could use: CPU seconds over wall
/// seconds over min(worker threads, cores). None without native workers (fio's CPU is
/// its own process's).
fn generator_busy(scenario: &Scenario, engines: &[EngineKind], cpu_s: f64, wall: std::time::Duration) -> Option<f64> {
    let threads: u32 = scenario
        .workloads
        .iter()
        .zip(engines)
        .map(|(w, e)| match e {
            EngineKind::Fio | EngineKind::Pgbench | EngineKind::Iperf3 => 0,
            EngineKind::Psync => w.jobs * w.iodepth,
            EngineKind::IoUring | EngineKind::Null => w.jobs,
        })
        .max()
        .unwrap_or(0);
    let cores = std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(1);
    let usable = threads.min(cores);
    (usable > 0 && wall.as_secs_f64() > 0.0).then(|| cpu_s / wall.as_secs_f64() / usable as f64)
}

/// Per workload, what lint needs of a finished run.
fn measured(s: &RunSummary) -> Vec<lint::Measured> {
    s.workloads
        .iter()
        .map(|w| {
            let ops: Vec<_> = w.ops.iter().filter(|o| o.op != "sync").collect();
            let iops: f64 = ops.iter().map(|o| o.iops).sum();
            let n: u64 = ops.iter().map(|o| o.ops).sum();
            let mean_us =
                if n > 0 { ops.iter().map(|o| o.latency.mean_us * o.ops as f64).sum::<f64>() / n as f64 } else { 0.0 };
            lint::Measured {
                name: w.workload.name.clone(),
                rate: w.workload.rate_iops,
                iops,
                mean_latency_s: mean_us / 1e6,
                concurrency: w.concurrency as f64,
            }
        })
        .collect()
}
