//! A run's results as users read them: per workload and op over the measured window
//! (ramp excluded), from counters summed and histograms merged in the store.

use crate::error::Result;
use crate::metrics::summary::OpSummary;
use crate::store::{RunRow, Store, WarningRow, WorkloadRow};
use serde::Serialize;

#[derive(Debug, Serialize)]
pub struct WorkloadSummary {
    #[serde(flatten)]
    pub workload: WorkloadRow,
    /// Configured concurrency: depth x workers (what Little's law should give back).
    pub concurrency: i64,
    pub ops: Vec<OpSummary>,
}

#[derive(Debug, Serialize)]
pub struct RunSummary {
    pub run: RunRow,
    pub workloads: Vec<WorkloadSummary>,
    pub warnings: Vec<WarningRow>,
}

impl RunSummary {
    pub fn load(store: &Store, which: &str) -> Result<RunSummary> {
        let run = store.run(which)?;
        let mut workloads = Vec::new();
        for w in store.workloads(run.id)? {
            let (from, to) = w.measured_window();
            let stats = store.window(run.id, w.idx, from as i64, to.ceil() as i64)?;
            let depth = w.profile.get("iodepth").and_then(|v| v.as_i64()).unwrap_or(1);
            let read_share = read_share(&w);
            let ops = stats
                .iter()
                .map(|(op, s)| {
                    let target = w.rate_iops.map(|r| match op {
                        crate::metrics::Op::Read => r * read_share,
                        crate::metrics::Op::Write => r * (1.0 - read_share),
                    });
                    OpSummary::new(&w.name, *op, s, to - from, target)
                })
                .collect();
            workloads.push(WorkloadSummary { concurrency: depth * w.workers, workload: w, ops });
        }
        let warnings = store.warnings(run.id)?;
        Ok(RunSummary { run, workloads, warnings })
    }

    /// The op with the most IOPS: the run's headline in `fathom runs`.
    pub fn headline(&self) -> Option<&OpSummary> {
        self.workloads.iter().flat_map(|w| &w.ops).max_by(|a, b| a.iops.total_cmp(&b.iops))
    }
}

/// Fraction of a workload's IOs that are reads, from its stored profile.
fn read_share(w: &WorkloadRow) -> f64 {
    match w.profile.get("rw").and_then(|v| v.as_str()) {
        Some("read") | Some("randread") => 1.0,
        Some("randrw") => w.profile.get("rwmixread").and_then(|v| v.as_f64()).unwrap_or(50.0) / 100.0,
        _ => 0.0,
    }
}
