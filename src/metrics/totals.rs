//! The running totals: what a running run has measured so far, for the Prometheus
//! endpoint and the live view: counters per worker and op, per workload and op a
//! cumulative latency histogram, and the latest second. The collector adds each second
//! as it writes it to the store, so what is exposed is exactly what is stored.

use super::{CounterRow, Op, OpStats};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// The run's workloads as the endpoint labels them.
#[derive(Debug, Clone)]
pub struct WorkloadInfo {
    pub name: String,
    /// Its worker group (`group:`), empty when it has none.
    pub group: String,
    pub target_iops: Option<f64>,
    /// Runs on other hosts: its histograms merge theirs (`host="all"`).
    pub placed: bool,
    /// Seconds of warm-up (`ramp:`) after it starts, which are not measured.
    pub ramp_s: u32,
}

/// The running totals of one run, shared by the collector (which adds) and the endpoint
/// and the live view (which read), hence behind a lock.
#[derive(Default)]
pub struct Totals {
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
    /// The phase of the timeline in force.
    pub phase: Option<String>,
    /// What runs in it: (workload index, its workers, the second of the run clock
    /// since which it runs with them). The live view shows these workloads, each with
    /// its seconds since then.
    pub running: Vec<(usize, u32, u32)>,
    /// Per (workload, worker): the last second it reported (who is running now).
    pub last_seen: BTreeMap<(usize, u32), u32>,
    /// The second the run is planned to end, as the timeline last replanned it: `None`
    /// before it has, `Some(None)` while a workload that ends by itself makes the end
    /// unknown.
    pub planned: Option<Option<u64>>,
    /// The host of each worker that runs on another host (the rest run here).
    pub hosts: BTreeMap<u32, String>,
    /// The latest value of each series observed under an exporter's name (source, name
    /// with its labels), which the endpoint serves as that exporter would.
    pub exported: BTreeMap<(String, String), f64>,
}

impl Totals {
    pub fn new(run: i64, scenario: &str, workloads: Vec<WorkloadInfo>) -> Totals {
        Totals { state: Mutex::new(State { run, scenario: scenario.to_string(), workloads, ..State::default() }) }
    }

    /// Adds what the collector is writing: each worker's counters, and per workload,
    /// second and op the merged figures.
    pub fn add(&self, workers: &[CounterRow], workloads: &BTreeMap<(usize, u32, Op), OpStats>) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        for c in workers {
            let w = s.workers.entry((c.workload, c.worker, c.op)).or_default();
            w.0 += c.stats.ops;
            w.1 += c.stats.bytes;
            let seen = s.last_seen.entry((c.workload, c.worker)).or_default();
            *seen = (*seen).max(c.t);
        }
        for (&(workload, t, op), stats) in workloads {
            match s.latest.get_mut(&(workload, op)) {
                Some((at, latest)) if *at == t => latest.merge(stats),
                Some((at, _)) if *at > t => {}
                _ => {
                    s.latest.insert((workload, op), (t, stats.clone()));
                }
            }
            match s.totals.get_mut(&(workload, op)) {
                Some(total) => total.merge(stats),
                None => {
                    s.totals.insert((workload, op), stats.clone());
                }
            }
        }
    }

    /// A worker started on `host` (not this one).
    pub fn set_host(&self, worker: u32, host: &str) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).hosts.insert(worker, host.to_string());
    }

    /// The timeline replanned the run's end (second of the run clock; `None`: unknown).
    pub fn set_planned(&self, end: Option<u64>) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).planned = Some(end);
    }

    /// The timeline opened a phase at second `start_t` with `running` (workload index,
    /// its workers).
    pub fn set_phase(&self, label: &str, start_t: u64, running: &[(usize, u32)]) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.phase = Some(label.to_string());
        // a workload that goes on as it ran in the phase before keeps its seconds
        let since = |&(i, n): &(usize, u32)| match s.running.iter().find(|r| r.0 == i && r.1 == n) {
            Some(r) => r.2,
            None => start_t as u32,
        };
        s.running = running.iter().map(|r| (r.0, r.1, since(r))).collect();
    }

    /// The latest values of series observed under an exporter's name: (source, name,
    /// value).
    pub fn set_exported<'a>(&self, values: impl Iterator<Item = (&'a str, &'a str, f64)>) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        for (source, name, value) in values {
            s.exported.insert((source.to_string(), name.to_string()), value);
        }
    }

    /// One worker's second, as the collector would add it (for tests).
    #[cfg(test)]
    pub fn add_one(&self, workload: usize, worker: u32, t: u32, op: Op, stats: OpStats) {
        let row = CounterRow { worker, workload, t, op, stats: &stats };
        self.add(&[row], &BTreeMap::from([((workload, t, op), stats.clone())]));
    }

    /// Runs `f` on the state, for rendering.
    pub fn with<T>(&self, f: impl FnOnce(&State) -> T) -> T {
        f(&self.state.lock().unwrap_or_else(|e| e.into_inner()))
    }
}
