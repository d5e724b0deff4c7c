//! A run's results as users read them: per workload and op over the measured window
//! (ramp excluded), from counters summed and histograms merged in the store.

use super::analysis::Analysis;
use super::expect::Answer;
use super::headline::Quoted;
use super::measured::{Fidelity, HostSummary, PhaseSummary, WorkloadSummary};
use super::results::ResultSeries;
use crate::error::{Error, Result};
use crate::metrics::summary::OpSummary;
use crate::store::read::StoredWorkload;
use crate::store::{EventRow, ExpectationRow, Observed, PhaseRow, RunRow, Scan, Store, WarningRow, WorkloadRow};
use serde::Serialize;

#[derive(Debug, Serialize)]
pub struct RunSummary {
    pub run: RunRow,
    pub workloads: Vec<WorkloadSummary>,
    /// Stretches with the same workloads running, with each op's figures in each
    /// (the measured part: ramps excluded).
    pub phases: Vec<PhaseSummary>,
    /// What the timeline did besides running workloads (exec, wait_until, fills, marks).
    pub events: Vec<EventRow>,
    pub expectations: Vec<ExpectationRow>,
    /// The scenario's question and the run's one-line answer from its expectations (None
    /// when they were not checked).
    pub answer: Option<Answer>,
    /// The figure the run is read by first, as its workloads' programs declared it.
    pub headline: Option<Quoted>,
    pub warnings: Vec<WarningRow>,
    /// What the observers saw (host and fathom CPU, devices, remote series), each
    /// figure's mean and max over the run.
    pub observed: Vec<Observed>,
    /// Little's law, steady state, interference, knee and USL (see docs/analysis.md).
    pub analysis: Analysis,
    /// The scenario's result views (`results:`) with their per-second series.
    pub results: Vec<ResultSeries>,
    /// Per workload (in order): the stats of its measured window, then of its part of
    /// each phase, and its time series when loaded with a bin; for the report.
    #[serde(skip)]
    pub scans: Vec<Scan>,
}

impl RunSummary {
    pub fn load(store: &Store, which: &str) -> Result<RunSummary> {
        RunSummary::load_binned(store, which, None)
    }

    /// Like [`RunSummary::load`], also gathering each workload's time series in bins of
    /// `bin` seconds (the report's charts) in the same pass over the store.
    pub fn load_binned(store: &Store, which: &str, bin: Option<i64>) -> Result<RunSummary> {
        let run = store.run(which)?;
        let rows = store.workloads(run.id)?;
        let phase_rows = store.phases(run.id)?;
        // per workload: its measured window, then its part of each phase (maybe empty)
        let plans: Vec<Vec<(f64, f64)>> = rows
            .iter()
            .map(|w| {
                let (from, to) = w.measured_window();
                let phases = phase_rows.iter().map(move |p| phase_window(w, p));
                std::iter::once((from, to.ceil())).chain(phases).collect()
            })
            .collect();
        let scans = scan_all(store, run.id, &rows, &plans, bin)?;
        let mut workloads = Vec::new();
        for (w, scan) in rows.into_iter().zip(&scans) {
            workloads.push(workload_summary(store, run.id, w, scan)?);
        }
        let stored: Vec<StoredWorkload> = workloads.iter().map(|w| w.stored.clone()).collect();
        let facts = store.phase_facts(run.id, &phase_rows, &stored)?;
        let phases = phase_summaries(phase_rows, facts, &workloads, &scans, &plans);
        let events = store.events(run.id)?;
        let expectations = store.expectations(run.id)?;
        let names: Vec<String> = workloads.iter().map(|w| w.workload.name.clone()).collect();
        let warnings = store.warnings(run.id)?;
        let observed = store.observation_summary(run.id, crate::observe::counter)?;
        let headline = quoted(&workloads, &observed);
        let compare = super::analysis::compare_list(&run);
        let analysis = super::analysis::analyze(store, run.id, &workloads, &phases, &compare)?;
        let mut answer = Answer::of(super::analysis::question(&run), &expectations, &names);
        if let Some(a) = answer.as_mut() {
            if let Some(stalls) = super::checkpoints::clause(&analysis.checkpoints) {
                a.answer = format!("{stalls}; {}", a.answer);
            }
            if let Some(log) = super::log_disk::clause(&workloads, &run.environment, &observed) {
                a.answer = format!("{log}; {}", a.answer);
            }
            if let Some(q) = sides(&workloads, &observed, &compare).as_ref().or(headline.as_ref()) {
                a.lead(q, &expectations, &names);
            }
        }
        let results = super::results::measure(store, run.id, &super::results::stored_views(&run))?;
        Ok(RunSummary {
            run,
            workloads,
            phases,
            events,
            expectations,
            answer,
            headline,
            warnings,
            observed,
            analysis,
            results,
            scans,
        })
    }

    /// The op with the most IOPS (or, with none, MB/s: network streams).
    pub fn busiest(&self) -> Option<&OpSummary> {
        busiest(&self.workloads)
    }
}

/// The headline of a run of `workloads`: the first whose program declared a figure of
/// its own, else the busiest op's workload, by its rate.
fn quoted(workloads: &[WorkloadSummary], observed: &[Observed]) -> Option<Quoted> {
    let all: Vec<Quoted> = workloads.iter().filter_map(|w| super::headline::of(w, observed)).collect();
    let busiest = busiest(workloads).map(|h| h.workload.as_str());
    all.iter().find(|q| q.declared).or_else(|| all.iter().find(|q| Some(q.workload.as_str()) == busiest)).cloned()
}

/// A study's headline side by side (`tight 15,780 NOPM, spread 38,835 NOPM`): each
/// workload its `compare:` lists, by its own figure. None when fewer than two of them
/// have one, or when they are read by different figures.
fn sides(workloads: &[WorkloadSummary], observed: &[Observed], compare: &[String]) -> Option<Quoted> {
    let quoted: Vec<Quoted> = compare
        .iter()
        .filter_map(|name| workloads.iter().find(|w| &w.workload.name == name))
        .filter_map(|w| super::headline::of(w, observed))
        .collect();
    let first = quoted.first()?.clone();
    if quoted.len() < 2 || quoted.iter().any(|q| q.label != first.label) {
        return None;
    }
    let figure = |q: &Quoted| q.text.strip_suffix(&format!(" {}", q.beside)).unwrap_or(&q.text).to_string();
    let text = quoted.iter().map(|q| format!("{} {}", q.workload, figure(q))).collect::<Vec<_>>().join(", ");
    Some(Quoted { text, beside: String::new(), ..first })
}

/// The op of `workloads` with the most IOPS (or, with none, MB/s: network streams).
fn busiest(workloads: &[WorkloadSummary]) -> Option<&OpSummary> {
    workloads
        .iter()
        .flat_map(|w| &w.ops)
        .max_by(|a, b| a.iops.total_cmp(&b.iops).then(a.mb_per_s.total_cmp(&b.mb_per_s)))
}

/// A workload's summary over its measured window: per op, its fidelity to what was
/// asked, and each host's share when it was placed on hosts.
fn workload_summary(store: &Store, run_id: i64, w: WorkloadRow, scan: &Scan) -> Result<WorkloadSummary> {
    let (from, to) = w.measured_window();
    let stats = &scan.windows[0];
    let stored = StoredWorkload::decode(&w);
    let read_share = stored.read_share();
    let mut sizes: Vec<(u64, u64)> = Vec::new();
    for s in stats.values() {
        for &(size, n) in &s.sizes {
            match sizes.iter_mut().find(|e| e.0 == size) {
                Some(e) => e.1 += n,
                None => sizes.push((size, n)),
            }
        }
    }
    let ops: Vec<OpSummary> = stats
        .iter()
        .map(|(op, s)| {
            let target = w.rate_iops.map(|r| r * op.rate_share(read_share));
            OpSummary::new(&w.name, *op, s, to - from, target)
        })
        .collect();
    let fidelity = Fidelity::new(&stored, &ops, &sizes);
    let hosts = if stored.placed() { host_summaries(store, run_id, &w, from, to)? } else { Vec::new() };
    let concurrency = stored.iodepth as i64 * w.workers;
    Ok(WorkloadSummary { concurrency, workload: w, stored, ops, fidelity, hosts })
}

/// Each host's share of a placed workload over its measured window, `from` to `to`.
fn host_summaries(store: &Store, run_id: i64, w: &WorkloadRow, from: f64, to: f64) -> Result<Vec<HostSummary>> {
    let seconds = (to - from).max(0.0);
    let per_s = |v: f64| if seconds > 0.0 { v / seconds } else { 0.0 };
    Ok(store
        .per_host(run_id, w.idx, from as i64, to.ceil() as i64)?
        .into_iter()
        .map(|h| {
            let q = |p: f64| h.latency.as_ref().map(|l| l.value_at_quantile(p) as f64 / 1000.0);
            HostSummary {
                workers: h.workers,
                iops: per_s(h.ops as f64),
                mb_per_s: per_s(h.bytes as f64) / 1e6,
                mean_us: if h.ops > 0 { h.latency_sum_ns as f64 / h.ops as f64 / 1000.0 } else { 0.0 },
                p50_us: q(0.5),
                p99_us: q(0.99),
                p99_9_us: q(0.999),
                host: h.host,
            }
        })
        .collect())
}

/// Each phase's ops, per workload that ran in it, from the scans' windows after the
/// measured one (`plans` says where each phase's part of a workload lies).
fn phase_summaries(
    phase_rows: Vec<PhaseRow>,
    facts: Vec<crate::store::read::PhaseFacts>,
    workloads: &[WorkloadSummary],
    scans: &[Scan],
    plans: &[Vec<(f64, f64)>],
) -> Vec<PhaseSummary> {
    let mut phases = Vec::new();
    for (k, (p, facts)) in phase_rows.into_iter().zip(facts).enumerate() {
        let mut ops = Vec::new();
        for ((w, scan), plan) in workloads.iter().zip(scans).zip(plans) {
            let (from, to) = plan[k + 1];
            if to <= from {
                continue;
            }
            for (op, s) in &scan.windows[k + 1] {
                ops.push(OpSummary::new(&w.workload.name, *op, s, to - from, None));
            }
        }
        phases.push(PhaseSummary { phase: p, ops, facts });
    }
    phases
}

/// A workload's part of a phase, in seconds of the run clock: the phase's stretch
/// within the workload's measured window (empty when they do not overlap). A workload
/// that ended by itself within its last second (bounded by bytes or IOs) keeps that
/// second's part; one stopped otherwise is cut to whole seconds.
pub fn phase_window(w: &WorkloadRow, p: &PhaseRow) -> (f64, f64) {
    let (from, to) = w.measured_window();
    let end = p.end_t.map(|e| e as f64).unwrap_or(to);
    let to = if w.ended_by_itself() { end.min(to) } else { end.min(to).floor() };
    ((p.start_t as f64).max(from), to)
}

/// Scans every workload's windows (whole seconds: a window's fractional end is cut),
/// the workloads spread over as many threads as there are cores, each with its own
/// connection: merging a day of histograms is CPU-bound.
fn scan_all(
    store: &Store,
    run: i64,
    rows: &[WorkloadRow],
    plans: &[Vec<(f64, f64)>],
    bin: Option<i64>,
) -> Result<Vec<Scan>> {
    let windows: Vec<Vec<(i64, i64)>> =
        plans.iter().map(|p| p.iter().map(|&(f, t)| (f as i64, (t.ceil() as i64).max(f as i64))).collect()).collect();
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(rows.len());
    if threads <= 1 {
        return rows.iter().zip(&windows).map(|(w, win)| store.windows(run, w.idx, win, bin)).collect();
    }
    let readers = (0..threads).map(|_| store.reader()).collect::<Result<Vec<Store>>>()?;
    let mut out: Vec<Option<Scan>> = (0..rows.len()).map(|_| None).collect();
    std::thread::scope(|scope| -> Result<()> {
        let handles: Vec<_> = readers
            .into_iter()
            .enumerate()
            .map(|(k, store)| {
                let windows = &windows;
                scope.spawn(move || -> Result<Vec<(usize, Scan)>> {
                    (k..rows.len())
                        .step_by(threads)
                        .map(|i| Ok((i, store.windows(run, rows[i].idx, &windows[i], bin)?)))
                        .collect()
                })
            })
            .collect();
        for h in handles {
            for (i, scan) in h.join().unwrap_or_else(|_| Err(Error::failed("a store reader panicked")))? {
                out[i] = Some(scan);
            }
        }
        Ok(())
    })?;
    Ok(out.into_iter().map(|s| s.expect("every workload scanned")).collect())
}
