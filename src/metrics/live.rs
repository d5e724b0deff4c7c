//! What a running run has measured so far, for the Prometheus endpoint and the live
//! view: counters per worker and op, per workload and op a cumulative latency
//! histogram, and the latest second. The
//! collector adds each second as it writes it to the store, so what is exposed is
//! exactly what is stored.

use super::{Op, OpStats, Sample};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// The run's workloads as the endpoint labels them.
#[derive(Debug, Clone)]
pub struct WorkloadInfo {
    pub name: String,
    pub workers: u32,
    pub target_iops: Option<f64>,
}

#[derive(Default)]
pub struct Live {
    state: Mutex<State>,
}

#[derive(Default)]
pub struct State {
    pub run: i64,
    pub scenario: String,
    pub workloads: Vec<WorkloadInfo>,
    /// Per (workload, op): everything so far, histograms merged.
    pub totals: BTreeMap<(usize, Op), OpStats>,
    /// Per (workload, worker, op): IOs and bytes so far.
    pub workers: BTreeMap<(usize, u32, Op), (u64, u64)>,
    /// Per (workload, op): the latest second stored, and its figures (the live view).
    pub latest: BTreeMap<(usize, Op), (u32, OpStats)>,
}

impl Live {
    pub fn new(run: i64, scenario: &str, workloads: Vec<WorkloadInfo>) -> Live {
        Live { state: Mutex::new(State { run, scenario: scenario.to_string(), workloads, ..State::default() }) }
    }

    /// Adds written samples.
    pub fn add(&self, samples: &[Sample]) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        for sample in samples {
            let w = s.workers.entry((sample.workload, sample.worker, sample.op)).or_default();
            w.0 += sample.stats.ops;
            w.1 += sample.stats.bytes;
            match s.latest.get_mut(&(sample.workload, sample.op)) {
                Some((t, stats)) if *t == sample.t => stats.merge(&sample.stats),
                Some((t, _)) if *t > sample.t => {}
                _ => {
                    s.latest.insert((sample.workload, sample.op), (sample.t, sample.stats.clone()));
                }
            }
            match s.totals.get_mut(&(sample.workload, sample.op)) {
                Some(t) => t.merge(&sample.stats),
                None => {
                    s.totals.insert((sample.workload, sample.op), sample.stats.clone());
                }
            }
        }
    }

    /// Runs `f` on the state, for rendering.
    pub fn with<T>(&self, f: impl FnOnce(&State) -> T) -> T {
        f(&self.state.lock().unwrap_or_else(|e| e.into_inner()))
    }
}
