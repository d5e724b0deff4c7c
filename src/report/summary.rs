//! A run's results as users read them: per workload and op over the measured window
//! (ramp excluded), from counters summed and histograms merged in the store.

use super::analysis::Analysis;
use crate::error::{Error, Result};
use crate::metrics::summary::OpSummary;
use crate::scenario::EngineKind;
use crate::store::{EventRow, ExpectationRow, Observed, PhaseRow, RunRow, Scan, Store, WarningRow, WorkloadRow};
use crate::workload::blocksize::BlockSizes;
use serde::Serialize;
use std::path::Path;

#[derive(Debug, Serialize)]
pub struct WorkloadSummary {
    #[serde(flatten)]
    pub workload: WorkloadRow,
    /// Configured concurrency: depth x workers (what Little's law should give back).
    pub concurrency: i64,
    pub ops: Vec<OpSummary>,
    /// What the scenario asked for next to what the generator did, over all ops.
    pub fidelity: Fidelity,
    /// Per host, for a workload placed on other hosts (empty otherwise): its share of the
    /// workload over the measured window. The workload's percentiles above are the
    /// hosts' histograms merged, never their percentiles averaged.
    pub hosts: Vec<HostSummary>,
}

/// One host's part of a workload: rates and mean latency over the measured window.
#[derive(Debug, Serialize)]
pub struct HostSummary {
    pub host: String,
    pub workers: i64,
    pub iops: f64,
    pub mb_per_s: f64,
    pub mean_us: f64,
}

/// Asked vs achieved for one workload, so a user sees at a glance that the generator
/// did what the scenario says (fio's rate with mixed sizes, for one, does not).
#[derive(Debug, Serialize)]
pub struct Fidelity {
    /// IOs per second: asked only for open-loop workloads.
    pub iops: Pair,
    /// Megabytes (10^6 bytes) per second.
    pub mb_per_s: Pair,
    /// Share of IOs that are reads, in percent.
    pub read_percent: Pair,
    /// Share of IOs of each block size, in percent (one entry per size asked or seen).
    pub block_sizes: Vec<SizeShare>,
}

#[derive(Debug, Serialize)]
pub struct Pair {
    pub asked: Option<f64>,
    pub achieved: f64,
}

#[derive(Debug, Serialize)]
pub struct SizeShare {
    pub bytes: u64,
    pub asked_percent: f64,
    /// Unknown (null) when the workload ran on fio with several sizes: fio does not
    /// report IOs per block size.
    pub achieved_percent: Option<f64>,
}

impl Fidelity {
    fn new(w: &WorkloadRow, ops: &[OpSummary], sizes: &[(u64, u64)]) -> Fidelity {
        // syncs move no data and are not part of the mix or the block sizes
        let ops: Vec<&OpSummary> = ops.iter().filter(|o| o.op != "sync").collect();
        let total_ops: u64 = ops.iter().map(|o| o.ops).sum();
        let seconds = ops.first().map(|o| o.seconds).unwrap_or(0.0);
        let per_s = |v: f64| if seconds > 0.0 { v / seconds } else { 0.0 };
        let pct = |part: u64| if total_ops > 0 { part as f64 * 100.0 / total_ops as f64 } else { 0.0 };
        let asked_sizes = w
            .profile
            .get("bs")
            .and_then(|v| v.as_str())
            .and_then(|t| BlockSizes::parse(t).ok())
            .unwrap_or_else(|| BlockSizes::single(4096));
        let mut block_sizes: Vec<SizeShare> = asked_sizes
            .sizes()
            .map(|(bytes, p)| SizeShare { bytes, asked_percent: p as f64, achieved_percent: Some(0.0) })
            .collect();
        if w.engine == EngineKind::Fio.to_string() && !asked_sizes.is_single() {
            block_sizes.iter_mut().for_each(|s| s.achieved_percent = None);
        }
        // one size is not stored separately: it is bytes / ops
        let total_bytes: u64 = ops.iter().map(|o| o.bytes).sum();
        let single = [(total_bytes.checked_div(total_ops).unwrap_or(0), total_ops)];
        let sizes = match sizes.is_empty() && total_ops > 0 {
            true if block_sizes[0].achieved_percent.is_some() => &single[..],
            true => &[],
            false => sizes,
        };
        for &(bytes, n) in sizes.iter().filter(|(bytes, _)| *bytes > 0) {
            match block_sizes.iter_mut().find(|s| s.bytes == bytes) {
                Some(s) => s.achieved_percent = Some(pct(n)),
                None => block_sizes.push(SizeShare { bytes, asked_percent: 0.0, achieved_percent: Some(pct(n)) }),
            }
        }
        let rate = w.rate_iops;
        let mbps = w.profile.get("rate_mbps").and_then(|v| v.as_f64());
        Fidelity {
            iops: Pair { asked: rate, achieved: per_s(total_ops as f64) },
            mb_per_s: Pair {
                asked: mbps.or(rate.map(|r| r * asked_sizes.mean() / 1e6)),
                achieved: per_s(total_bytes as f64) / 1e6,
            },
            read_percent: Pair {
                asked: Some(read_share(w) * 100.0),
                achieved: pct(ops.iter().filter(|o| o.op == "read").map(|o| o.ops).sum()),
            },
            block_sizes,
        }
    }

    /// True when there is more to check than one size of one op at full speed.
    pub fn worth_showing(&self) -> bool {
        let mixed = self.read_percent.asked.is_some_and(|a| a > 0.0 && a < 100.0);
        self.iops.asked.is_some() || mixed || self.block_sizes.len() > 1
    }
}

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
    pub warnings: Vec<WarningRow>,
    /// What the observers saw (host and fathom CPU, devices, remote series), each
    /// figure's mean and max over the run.
    pub observed: Vec<Observed>,
    /// Little's law, steady state, interference, knee and USL (see docs/analysis.md).
    pub analysis: Analysis,
    /// Per workload (in order): the stats of its measured window, then of its part of
    /// each phase, and its time series when loaded with a bin; for the report.
    #[serde(skip)]
    pub scans: Vec<Scan>,
}

#[derive(Debug, Serialize)]
pub struct PhaseSummary {
    #[serde(flatten)]
    pub phase: PhaseRow,
    pub ops: Vec<OpSummary>,
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
                let phases = phase_rows.iter().map(move |p| {
                    let end = p.end_t.map(|e| e as f64).unwrap_or(to);
                    ((p.start_t as f64).max(from), end.min(to).floor())
                });
                std::iter::once((from, to.ceil())).chain(phases).collect()
            })
            .collect();
        let scans = scan_all(store, run.id, &rows, &plans, bin)?;
        let mut workloads = Vec::new();
        for (w, scan) in rows.into_iter().zip(&scans) {
            let (from, to) = w.measured_window();
            let stats = &scan.windows[0];
            let depth = w.profile.get("iodepth").and_then(|v| v.as_i64()).unwrap_or(1);
            let read_share = read_share(&w);
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
            let fidelity = Fidelity::new(&w, &ops, &sizes);
            let placed = w.profile.get("placement").is_some_and(|p| !p.is_null());
            let hosts = if placed {
                let seconds = (to - from).max(0.0);
                let per_s = |v: f64| if seconds > 0.0 { v / seconds } else { 0.0 };
                store
                    .per_host(run.id, w.idx, from as i64, to.ceil() as i64)?
                    .into_iter()
                    .map(|h| HostSummary {
                        host: h.host,
                        workers: h.workers,
                        iops: per_s(h.ops as f64),
                        mb_per_s: per_s(h.bytes as f64) / 1e6,
                        mean_us: if h.ops > 0 { h.latency_sum_ns as f64 / h.ops as f64 / 1000.0 } else { 0.0 },
                    })
                    .collect()
            } else {
                Vec::new()
            };
            workloads.push(WorkloadSummary { concurrency: depth * w.workers, workload: w, ops, fidelity, hosts });
        }
        let mut phases = Vec::new();
        for (k, p) in phase_rows.into_iter().enumerate() {
            let mut ops = Vec::new();
            for ((w, scan), plan) in workloads.iter().zip(&scans).zip(&plans) {
                let (from, to) = plan[k + 1];
                if to <= from {
                    continue;
                }
                for (op, s) in &scan.windows[k + 1] {
                    ops.push(OpSummary::new(&w.workload.name, *op, s, to - from, None));
                }
            }
            phases.push(PhaseSummary { phase: p, ops });
        }
        let events = store.events(run.id)?;
        let expectations = store.expectations(run.id)?;
        let warnings = store.warnings(run.id)?;
        let observed = store.observation_summary(run.id)?;
        let compare = super::analysis::compare_list(&run.scenario_text);
        let analysis = super::analysis::analyze(store, run.id, &workloads, &phases, &compare)?;
        Ok(RunSummary { run, workloads, phases, events, expectations, warnings, observed, analysis, scans })
    }

    /// The op with the most IOPS (or, with none, MB/s: network streams): the run's
    /// headline in `fathom runs`.
    pub fn headline(&self) -> Option<&OpSummary> {
        self.workloads
            .iter()
            .flat_map(|w| &w.ops)
            .max_by(|a, b| a.iops.total_cmp(&b.iops).then(a.mb_per_s.total_cmp(&b.mb_per_s)))
    }
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
        plans.iter().map(|p| p.iter().map(|&(f, t)| (f as i64, (t as i64).max(f as i64))).collect()).collect();
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(rows.len());
    if threads <= 1 {
        return rows.iter().zip(&windows).map(|(w, win)| store.windows(run, w.idx, win, bin)).collect();
    }
    let dir = store.path.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut out: Vec<Option<Scan>> = (0..rows.len()).map(|_| None).collect();
    std::thread::scope(|scope| -> Result<()> {
        let handles: Vec<_> = (0..threads)
            .map(|k| {
                let (dir, windows) = (&dir, &windows);
                scope.spawn(move || -> Result<Vec<(usize, Scan)>> {
                    let store = Store::open_existing(dir)?;
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

/// Fraction of a workload's IOs that are reads, from its stored profile.
pub fn read_share(w: &WorkloadRow) -> f64 {
    match w.profile.get("rw").and_then(|v| v.as_str()) {
        Some("read") | Some("randread") => 1.0,
        Some("randrw") | Some("rw") => w.profile.get("rwmixread").and_then(|v| v.as_f64()).unwrap_or(50.0) / 100.0,
        _ => 0.0,
    }
}
