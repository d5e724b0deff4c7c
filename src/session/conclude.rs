//! The last stage: what the run's data says about it. Verification failures fail it,
//! a lost host makes it partial, lint judges what was measured, and the scenario's
//! expectations judge a run that completed. Its end is recorded before anything is read
//! back for the summary.

use super::measure::Measured;
use super::state::{Ended, INTERRUPTED, RunOptions, Session};
use crate::analysis::lint;
use crate::engine::demand::Demand;
use crate::error::Result;
use crate::error::exit;
use crate::metrics::summary::Throughput;
use crate::report::summary::RunSummary;
use crate::report::{expect, results};
use crate::scenario::{EngineKind, Scenario};
use crate::store::{EventRow, ObservationRow, Status, Store};
use crate::timeline::Outcome;
use crate::transport::fleet::Fleet;
use crate::warnings::Warning;
use std::time::Instant;

/// Judges and records the run's end; the exit status is 0, 1 failed, 3 an expectation
/// failed, 130 interrupted.
pub(super) fn conclude(s: &Session, measured: Measured, opts: &RunOptions) -> Result<Ended> {
    let Measured { outcome, stored, clock_start, cpu_before, demand_before, endpoint } = measured;
    let (store, run, fleet, scenario) = (&s.store, s.run, &s.fleet, &s.scenario);
    let (status, error, code) = judge(store, run, outcome, stored)?;
    let lost = record_lost(store, run, fleet, clock_start)?;
    let (status, error, code) = match (status, lost.is_empty()) {
        (Status::Completed, false) => {
            let hosts: Vec<&str> = lost.iter().map(|(h, _)| h.as_str()).collect();
            (Status::Partial, Some(format!("lost host {}", hosts.join(", "))), exit::FAILED)
        }
        _ => (status, error, code),
    };
    let generator = match Demand::now().share_since(demand_before) {
        Some(wanted) => Some(lint::GeneratorBusy::Wanted(wanted)),
        None => generator_busy(
            scenario,
            &s.engines,
            crate::observe::host::process_cpu_seconds() - cpu_before,
            clock_start.elapsed(),
        )
        .map(lint::GeneratorBusy::Cpu),
    };
    // the lags and the generator's share are details: failing to store them must not
    // leave the run `running`
    let figures = record_figures(store, run, fleet, generator);
    super::state::finish(store, run, status, error.as_deref())?;
    figures?;
    for f in lint::after(&measured_by_workload(&RunSummary::load(store, &run.to_string())?, scenario), generator) {
        store.add_warning(run, &format!("lint-{}", f.code), &f.message)?;
    }
    // Expectations judge a run that completed; a failed one exits 3.
    let mut code = code;
    let banded = scenario.result_views.iter().any(|v| !v.bands.is_empty());
    if code == exit::SUCCESS && !opts.no_expect && (!scenario.expect.is_empty() || banded) {
        let mut rows = expect::check(store, run, &scenario.expect)?;
        // the bands of the result views are expectations on their per-second series
        rows.extend(results::band_rows(&results::measure(store, run, &scenario.result_views)?));
        for (i, row) in rows.iter().enumerate() {
            store.add_expectation(run, i, row)?;
        }
        if rows.iter().any(|r| !r.passed) {
            code = exit::EXPECTATION_FAILED;
        }
    }
    if let Some(endpoint) = endpoint {
        endpoint.stop();
    }
    let summary = RunSummary::load(store, &run.to_string())?;
    Ok(Ended { run, code, summary })
}

/// The run's status, error and exit code from how the timeline ended and whether
/// everything was stored. Wrong data from storage, or a store deleted during the run,
/// fails a run that otherwise completed.
fn judge(
    store: &Store,
    run: i64,
    outcome: Result<Outcome>,
    stored: Result<()>,
) -> Result<(Status, Option<String>, i32)> {
    // Wrong data from storage fails the run, whatever else happened.
    let outcome = match (outcome, store.verify_failures(run)?) {
        (Ok(Outcome::Completed), (misplaced, corrupt)) if misplaced + corrupt > 0 => Ok(Outcome::Failed(format!(
            "data verification failed: {corrupt} corrupt and {misplaced} misplaced blocks (see `fathom show {run}`)"
        ))),
        (outcome, _) => outcome,
    };
    // a store deleted mid-run keeps taking writes, to a file no one can read again
    let outcome = match outcome {
        Ok(Outcome::Completed) if !store.is_where_it_was() => Ok(Outcome::Failed(format!(
            "the results store {} was deleted or replaced during the run: what the run stored is gone with it",
            store.path.display()
        ))),
        outcome => outcome,
    };
    Ok(match (outcome, stored) {
        (Err(e), _) | (Ok(_), Err(e)) => (Status::Failed, Some(e.to_string()), exit::FAILED),
        (Ok(Outcome::Failed(msg)), _) => (Status::Failed, Some(msg), exit::FAILED),
        (Ok(Outcome::Aborted), _) => (Status::Aborted, Some(INTERRUPTED.to_string()), exit::INTERRUPTED),
        (Ok(Outcome::Completed), _) => (Status::Completed, None, exit::SUCCESS),
    })
}

/// Records each host lost mid-run as an event and a warning, and says so.
/// What it sent is kept and the others ran on, so the run is partial, not failed.
fn record_lost(store: &Store, run: i64, fleet: &Fleet, clock_start: Instant) -> Result<Vec<(String, Instant)>> {
    // a host lost mid-run: what it sent is kept, the others ran on; the run is partial
    let lost = fleet.lost();
    for (host, at) in &lost {
        let at_ms = at.saturating_duration_since(clock_start).as_millis() as i64;
        let warning = Warning::HostLost { host: host.clone(), after_s: at_ms as f64 / 1000.0 };
        let message = warning.message();
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
        store.add_warning(run, warning.code(), &message)?;
        warning.say();
    }
    Ok(lost)
}

/// Figures of the run as a whole, as observations at second 0: how late agents'
/// samples arrived (from the end of their second to the controller; median and p99,
/// source `controller`), and how busy the generator was (source `fathom`,
/// `generator_busy_pct`), the figure the `generator-bound` lint judged, kept so that
/// the judgement can be checked against it.
fn record_figures(store: &Store, run: i64, fleet: &Fleet, generator: Option<lint::GeneratorBusy>) -> Result<()> {
    let row =
        |source: &str, name: &str, value: f64| ObservationRow { t: 0, source: source.into(), name: name.into(), value };
    let mut rows = Vec::new();
    let mut lags = fleet.lags.lock().unwrap_or_else(|e| e.into_inner()).clone();
    if !lags.is_empty() {
        lags.sort_by(f64::total_cmp);
        let q = |p: f64| lags[((lags.len() - 1) as f64 * p).round() as usize];
        rows.push(row("controller", "sample_lag_p50_ms", q(0.5)));
        rows.push(row("controller", "sample_lag_p99_ms", q(0.99)));
    }
    if let Some(g) = generator {
        rows.push(row("fathom", lint::GENERATOR_BUSY, g.share() * 100.0));
    }
    if rows.is_empty() {
        return Ok(());
    }
    store.add_observations(run, &rows)
}

/// How busy fathom kept the cores its worker threads could use: CPU seconds over wall
/// seconds over min(worker threads, cores). Other load on the machine lowers it, so it
/// serves only when the workers' own scheduler figures (`engine::demand`) are missing:
/// schedstat unreadable. None without native workers here (fio's CPU is its own
/// process's; workers on other hosts spend their agents' CPU, observed as
/// `fathom:HOST`, not this process's).
fn generator_busy(
    scenario: &Scenario,
    engines: &[Option<EngineKind>],
    cpu_s: f64,
    wall: std::time::Duration,
) -> Option<f64> {
    let threads: u32 = scenario
        .workloads
        .iter()
        .zip(engines)
        .filter(|(w, _)| w.placement.is_none())
        .map(|(w, e)| {
            e.and_then(crate::engine::backend).map_or(0, |b| w.workers * b.threads(w.io().map_or(1, |io| io.iodepth)))
        })
        .max()
        .unwrap_or(0);
    let cores = std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(1);
    let usable = threads.min(cores);
    (usable > 0 && wall.as_secs_f64() > 0.0).then(|| cpu_s / wall.as_secs_f64() / usable as f64)
}

/// Per workload, what lint needs of a finished run.
fn measured_by_workload(s: &RunSummary, scenario: &Scenario) -> Vec<lint::Measured> {
    let busiest_device = s
        .observed
        .iter()
        .filter(|o| o.source.starts_with("device:") && o.name == "util_pct")
        .map(|o| o.mean)
        .reduce(f64::max);
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
                unit: ops.first().map_or(Throughput::Iops, |o| o.unit),
                mean_latency_s: mean_us / 1e6,
                concurrency: w.concurrency as f64,
                workers: w.workload.workers as u32,
                seconds: {
                    let (from, to) = w.workload.measured_window();
                    to - from
                },
                bound: scenario.workloads.get(w.workload.idx as usize).and_then(lint::bound_text),
                lengthen: scenario.workloads.get(w.workload.idx as usize).map_or("", lint::lengthen),
                device_busy_pct: busiest_device,
                defined_by: scenario.imported,
            }
        })
        .collect()
}
