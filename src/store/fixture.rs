//! A synthetic run written into a store, for the tests of what reads runs (`show`,
//! `report`, `compare`, `fit`, `export`, the result views). A real run spends real
//! seconds, and what a busy machine measures in them is not what a quiet one does; the
//! reading is what those tests test, so they read seconds given here instead.
//!
//! It writes through the run's own path, so the read side cannot tell it from a real
//! run: the scenario is loaded as `fathom run` loads it, each workload's row is the one
//! the timeline sends, and the rows, phases and samples go through the run sink and the
//! collector ([`super::collector`]), which merges and writes them as it does during a
//! run. Only what the machine decides is given by the test: the phases (which workloads
//! ran, with how many workers, for how long) and what each second measured.
//!
//! ```ignore
//! let fx = Fixture::new("compare-steps");
//! let run = fx
//!     .run(STEPS)
//!     .phase("qd1", &[("qd1", 1)], 3, |_| Second::new(200, 1_000))
//!     .phase("qd4", &[("qd4", 1)], 3, |at| Second::new(200 + at.t, 4_000))
//!     .finish();
//! ```

use super::collector::{self, Writer};
use super::sink::{Record, Sink};
use super::{PhaseRow, Reserve, Status, Store, WorkloadRow};
use crate::metrics::totals::Totals;
use crate::metrics::{Op, OpStats, Sample};
use crate::scenario::{Scenario, Source};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// A store directory of its own under the system's temporary directory, removed when
/// dropped, holding the runs written into it.
pub struct Fixture {
    pub dir: PathBuf,
}

impl Fixture {
    /// An empty store directory named after the test (`name`) and this process, so tests
    /// running at once never share one.
    pub fn new(name: &str) -> Fixture {
        let dir = std::env::temp_dir().join(format!("fathom-fixture-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Store::open(&dir).expect("a fixture's store opens");
        Fixture { dir }
    }

    /// The store, opened read-only as the read commands open it.
    pub fn store(&self) -> Store {
        Store::open_existing(&self.dir).expect("the fixture's store reads")
    }

    /// A run of `scenario` (YAML, loaded as `fathom run` loads it), written when its
    /// phases are given and [`RunBuilder::finish`] is called.
    pub fn run(&self, scenario: &str) -> RunBuilder<'_> {
        let scenario = Scenario::load(&Source { origin: "fixture.yaml".into(), text: scenario }, &[])
            .unwrap_or_else(|e| panic!("the fixture's scenario: {e}"));
        RunBuilder { fixture: self, scenario, t: 0, started: Vec::new(), phases: Vec::new(), besides: Vec::new() }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Where a second falls: the second of the run, and the workers of the workload
/// running then.
#[derive(Debug, Clone, Copy)]
pub struct At {
    pub t: u32,
    pub workers: u32,
}

/// What one workload measured in one second, summed over its workers: `ops` IOs, each
/// taking `latency_ns`, and `slow` more taking `slow_ns` (a tail, for percentiles).
/// Reads and writes split as the workload's mix says.
#[derive(Debug, Clone, Copy)]
pub struct Second {
    pub ops: u64,
    pub latency_ns: u64,
    pub slow: u64,
    pub slow_ns: u64,
}

impl Second {
    /// `ops` IOs, each taking `latency_ns`.
    pub fn new(ops: u64, latency_ns: u64) -> Second {
        Second { ops, latency_ns, slow: 0, slow_ns: 0 }
    }

    /// And `slow` more IOs, each taking `slow_ns`.
    pub fn tail(self, slow: u64, slow_ns: u64) -> Second {
        Second { slow, slow_ns, ..self }
    }
}

/// A stretch of the run with the same workloads running, as the timeline records it.
struct Phase {
    label: String,
    start_t: u32,
    seconds: u32,
    /// Index of each workload running, its workers, and each of its seconds.
    running: Vec<(usize, u32, Vec<Second>)>,
}

/// A run being given its phases; see [`Fixture::run`].
pub struct RunBuilder<'a> {
    fixture: &'a Fixture,
    scenario: Scenario,
    /// The second the next phase starts at.
    t: u32,
    /// Each workload started so far: its index, the second it started and its phase.
    started: Vec<(usize, u32, String)>,
    phases: Vec<Phase>,
    /// What the observers and the timeline sent besides (events, observations).
    besides: Vec<Record>,
}

impl RunBuilder<'_> {
    /// A phase `label` of `seconds`, right after the last, in which the named workloads
    /// run with the given workers each; `second` gives what each of them measured in
    /// each second. A workload starts in the first phase it runs in, as the timeline
    /// starts it, and is recorded with its workers of its last phase (a ramp's end).
    pub fn phase(mut self, label: &str, running: &[(&str, u32)], seconds: u32, second: impl Fn(At) -> Second) -> Self {
        let start_t = self.t;
        let running = running
            .iter()
            .map(|&(name, workers)| {
                let idx = self.index(name);
                if !self.started.iter().any(|s| s.0 == idx) {
                    self.started.push((idx, start_t, label.to_string()));
                }
                let at = |k| At { t: start_t + k, workers };
                (idx, workers, (0..seconds).map(|k| second(at(k))).collect())
            })
            .collect();
        self.phases.push(Phase { label: label.to_string(), start_t, seconds, running });
        self.t += seconds;
        self
    }

    /// `seconds` in which nothing runs: the timeline starts a workload that follows
    /// another on the next whole second after it ended, one second later.
    pub fn gap(mut self, seconds: u32) -> Self {
        self.t += seconds;
        self
    }

    /// A record an observer or the timeline sends during the run (an event, a
    /// second's observations), written after the phases.
    pub fn record(mut self, r: Record) -> Self {
        self.besides.push(r);
        self
    }

    fn index(&self, name: &str) -> usize {
        self.scenario
            .workloads
            .iter()
            .position(|w| w.name == name)
            .unwrap_or_else(|| panic!("no workload {name} in the fixture's scenario"))
    }

    /// Writes the run, completed, and returns its id.
    pub fn finish(mut self) -> i64 {
        let store = Store::open(&self.fixture.dir).expect("a fixture's store opens");
        let s = &self.scenario;
        let command = format!("fathom run {}.yaml", s.name);
        let run = store.create_run(&s.name, &s.text, &command, &environment()).expect("create_run");
        store.set_resolved(run, &s.resolved, &serde_json::json!(s.vars)).expect("set_resolved");
        store.set_clock_start(run, crate::clock::unix_ms()).expect("set_clock_start");
        let (sink, records) = Sink::new();
        let (samples, received) = std::sync::mpsc::channel();
        self.send(&sink, &samples);
        std::mem::take(&mut self.besides).into_iter().for_each(|r| sink.send(r));
        drop((sink, samples));
        let (totals, stop) = (Totals::new(run, &s.name, Vec::new()), AtomicBool::new(false));
        let reserve = Reserve::take(&self.fixture.dir, 1, &[1]).expect("the reserve");
        let writer = Writer::new(Store::open(&self.fixture.dir).expect("store"), run, &totals, &stop, &reserve);
        collector::run(writer, Instant::now(), received, records).expect("the collector writes the run");
        reserve.release();
        store.finish_run(run, Status::Completed, None).expect("finish_run");
        run
    }

    /// Sends what the timeline and the workers send during the run: each workload and
    /// its workers as it starts, each phase as it opens and ends, the seconds measured,
    /// and each workload's end.
    fn send(&self, sink: &Sink, samples: &std::sync::mpsc::Sender<Sample>) {
        let mut first_worker = 0;
        let mut workers_of = vec![0u32; self.scenario.workloads.len()];
        for (idx, start_t, phase) in &self.started {
            let planned = self.last_phase(*idx).and_then(|p| p.running.iter().find(|r| r.0 == *idx)).map_or(0, |r| r.1);
            sink.send(Record::Workload(self.row(*idx, *start_t, planned, phase)));
            for index in 0..planned {
                let (id, host) = (first_worker + index, "localhost".to_string());
                sink.send(Record::Worker { id, workload: *idx, index, host });
            }
            workers_of[*idx] = first_worker;
            first_worker += planned;
        }
        for (i, p) in self.phases.iter().enumerate() {
            let running = p.running.iter().map(|r| (r.0 as i64, r.1 as i64)).collect();
            let (idx, start_t, end_t) = (i as i64, p.start_t as i64, (p.start_t + p.seconds) as i64);
            sink.send(Record::PhaseOpened(PhaseRow { idx, label: p.label.clone(), start_t, end_t: None, running }));
            sink.send(Record::PhaseEnded { idx, end_t });
            for (w, workers, seconds) in &p.running {
                for (k, second) in seconds.iter().enumerate() {
                    let t = p.start_t + k as u32;
                    for sample in self.samples(*w, workers_of[*w], *workers, t, second) {
                        let _ = samples.send(sample);
                    }
                }
            }
        }
        for (idx, start_t, _) in &self.started {
            sink.send(Record::WorkloadStopped { idx: *idx, at: self.end_t(*idx, *start_t) as f64 });
        }
    }

    /// The last phase workload `idx` runs in.
    fn last_phase(&self, idx: usize) -> Option<&Phase> {
        self.phases.iter().rev().find(|p| p.running.iter().any(|r| r.0 == idx))
    }

    /// The second workload `idx`, started at `start_t`, ends at: where its ramp and
    /// duration say, or, with no duration, with its last phase.
    fn end_t(&self, idx: usize, start_t: u32) -> u64 {
        let w = &self.scenario.workloads[idx];
        match w.duration.is_zero() {
            true => self.last_phase(idx).map_or(start_t, |p| p.start_t + p.seconds) as u64,
            false => start_t as u64 + w.ramp.as_secs() + w.duration.as_secs(),
        }
    }

    /// The workload's row as the timeline sends it when it starts ([`WorkloadRow`]).
    fn row(&self, idx: usize, start_t: u32, planned: u32, phase: &str) -> WorkloadRow {
        let w = &self.scenario.workloads[idx];
        let start = start_t as u64;
        WorkloadRow {
            idx: idx as i64,
            name: w.name.clone(),
            phase: phase.to_string(),
            profile: serde_json::to_value(w).unwrap_or_default(),
            data_path: data_path(w),
            engine: w.runner(),
            workers: planned as i64,
            start_t: start as i64,
            measure_t: (start + w.ramp.as_secs()) as i64,
            end_t: self.end_t(idx, start_t) as i64,
            stopped_at: None,
            rate_iops: w.rate(),
        }
    }

    /// One second of workload `w` as its `workers` workers (ids from `first`) report
    /// it: the second's IOs shared among them, each op recorded IO by IO as the engine
    /// records it, reads and writes split by the workload's mix.
    fn samples(&self, w: usize, first: u32, workers: u32, t: u32, second: &Second) -> Vec<Sample> {
        let workload = &self.scenario.workloads[w];
        let io = workload.io();
        // each IO's size as the split gives it (shares in percent): each size takes its
        // share of every hundred IOs
        let sizes: Vec<(u64, f64)> = io.map_or(vec![(0, 100.0)], |io| io.bs.sizes().collect());
        let size_of = |i: u64| {
            let mut below = 0.0;
            let at = (i % 100) as f64;
            sizes
                .iter()
                .find(|(_, share)| {
                    below += share;
                    at < below
                })
                .or(sizes.last())
                .map_or(0, |s| s.0)
        };
        let reads = io.map_or(100, |io| io.rw.read_percent(io.rwmixread)) as u64;
        let open_loop = workload.rate().is_some();
        let mut out = Vec::new();
        for worker in 0..workers.max(1) {
            let share = |n: u64| n / workers.max(1) as u64 + u64::from((worker as u64) < n % workers.max(1) as u64);
            for (op, percent) in [(Op::Read, reads), (Op::Write, 100 - reads)] {
                let mut stats = OpStats::new(open_loop);
                for (n, latency) in [(second.ops, second.latency_ns), (second.slow, second.slow_ns)] {
                    for i in 0..share(n * percent / 100) {
                        stats.record(size_of(i), latency, latency);
                    }
                }
                if stats.ops > 0 {
                    out.push(Sample { workload: w, worker: first + worker, t, op, stats });
                }
            }
        }
        out
    }
}

/// Where a workload's files are, as the run lays them out: `null` for the null
/// engine's, `fathom-FILE.dat` in each target otherwise.
fn data_path(w: &crate::scenario::Workload) -> String {
    let Some(io) = w.io() else { return String::new() };
    let path = |t: &std::path::PathBuf| match w.runner().as_str() {
        "null" => t.display().to_string(),
        _ => t.join(format!("fathom-{}.dat", io.file)).display().to_string(),
    };
    io.targets.iter().map(path).collect::<Vec<_>>().join(", ")
}

/// The environment a run stores ([`crate::observe::environment`]'s keys), the same for
/// every fixture run, so runs compared differ only in what a test gives them.
fn environment() -> serde_json::Value {
    serde_json::json!({
        "fathom_version": env!("CARGO_PKG_VERSION"),
        "fathom_build": env!("BUILD_IDENTITY"),
        "hostname": "fixture",
        "machine": "fixture-boot",
        "kernel": "Linux 6.1.0",
        "os": "Debian GNU/Linux 12",
        "cpu_model": "fixture CPU",
        "cpus": 2,
        "memory_bytes": 8u64 << 30,
        "targets": [],
    })
}
