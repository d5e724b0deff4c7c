//! What runs a workload, behind one [`Driver`] seam: fathom's own engine (`native.rs`),
//! and the programs whose reports become fathom's samples, so their results sit in the
//! same store next to the engine's: fio (`engine: fio`), pgbench and iperf3 (`driver:`).

pub mod client;
pub mod driver;
pub mod fio;
pub mod iperf3;
pub mod loading;
pub mod mariadb;
pub mod native;
pub mod pg_host;
pub mod pgbench;
pub mod postgres;
#[cfg(test)]
pub mod sleep;
pub mod sysbench;
pub mod table_disks;
pub mod tcp_rtt;
pub mod throwaway;
pub mod tpcc;
pub mod tpch;

use crate::engine::WorkerThread;
use crate::error::Result;
use crate::scenario::{EngineKind, Scenario, Workload};
use crate::store::ObservationRow;
use crate::store::sink::Record;
pub use driver::{DbServer, Driver, IoEnd, LaunchContext, Ready};
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// Every driver, by name: the one list a new driver (a program's runner) joins.
pub const DRIVERS: &[&dyn Driver] = &[
    &native::Native,
    &fio::Fio,
    &pgbench::PgbenchDriver,
    &iperf3::Iperf3Driver,
    &tpcc::TpccDriver,
    &tpcc::hammerdb::HammerdbDriver,
    &tpcc::mariadb::TpccMariadbDriver,
    &tpch::TpchDriver,
    &sysbench::SysbenchDriver,
];

/// Drivers of the test build only (`sleep`, the skeleton a new program's runner copies).
#[cfg(test)]
const TEST_DRIVERS: &[&dyn Driver] = &[&sleep::SleepDriver];
#[cfg(not(test))]
const TEST_DRIVERS: &[&dyn Driver] = &[];

/// The driver that runs workload `w` on IO back end `engine` (after any fallback).
pub fn of(w: &Workload, engine: Option<EngineKind>) -> &'static dyn Driver {
    all().find(|d| d.runs(w, engine)).expect("every engine kind and program has its driver in DRIVERS")
}

/// Every driver this build has.
fn all() -> impl Iterator<Item = &'static dyn Driver> {
    DRIVERS.iter().chain(TEST_DRIVERS).copied()
}

/// What each workload placed on hosts adds up to from its hosts' figures (`rows`), as
/// its driver totals them.
pub fn totals(scenario: &Scenario, rows: &[ObservationRow]) -> Vec<Record> {
    let placed = scenario.workloads.iter().filter(|w| w.placement.is_some());
    placed.flat_map(|w| of(w, w.engine).totals(w, rows)).collect()
}

/// The drivers a scenario uses, in the order of `DRIVERS`.
fn used(scenario: &Scenario) -> impl Iterator<Item = &'static dyn Driver> + '_ {
    all().filter(|d| scenario.workloads.iter().any(|w| d.runs(w, w.engine)))
}

/// Checks, before anything is laid out or recorded, that each driver the scenario uses
/// can run: its program installed, the servers its workloads name reachable (a clear
/// message and exit 2 when not). `stop` (a signal) ends a wait.
pub fn check(scenario: &Scenario, stop: &AtomicBool) -> Result<()> {
    used(scenario).try_for_each(|d| d.check(scenario, stop))
}

/// The drivers of one run, readied before its clock starts (databases initialised,
/// servers listening). Stopping it, or dropping it, stops what they started.
pub struct ReadyDrivers {
    ready: Vec<(&'static dyn Driver, Box<dyn Ready>)>,
}

impl ReadyDrivers {
    /// Readies every driver the scenario uses, in `dir` (the run's directory). An
    /// error, or `stop` set meanwhile, stops what was already started.
    pub fn prepare(scenario: &Scenario, dir: &Path, stop: &AtomicBool, progress: &dyn Fn(&str)) -> Result<Self> {
        let ready =
            used(scenario).map(|d| Ok((d, d.prepare(scenario, dir, stop, progress)?))).collect::<Result<_>>()?;
        Ok(ReadyDrivers { ready })
    }

    /// Starts workers of a workload with the driver that runs it.
    pub fn start(&self, cx: &LaunchContext) -> Result<Vec<(WorkerThread, String)>> {
        let driver = of(&cx.workload, cx.engine);
        let (_, ready) = self.ready.iter().find(|(d, _)| d.name() == driver.name()).ok_or_else(|| {
            crate::error::Error::failed(format!("{}: driver {} was not prepared", cx.workload.name, driver.name()))
        })?;
        ready.start(cx)
    }

    /// The database servers the workloads use, in the order of the workloads.
    pub fn servers(&self) -> Vec<DbServer> {
        let mut all: Vec<DbServer> = self.ready.iter().flat_map(|(_, r)| r.servers()).collect();
        all.sort_by_key(DbServer::workload);
        all
    }

    /// Ends the servers of workloads that are all `over`, before another starts (see
    /// [`Ready::retire`]); each server ended, said as its workload and DBMS.
    pub fn retire(&self, over: &[usize]) -> Vec<String> {
        self.ready.iter().flat_map(|(_, r)| r.retire(over)).collect()
    }

    /// Stops what the drivers started; the first error, if any.
    pub fn stop(self) -> Result<()> {
        let mut first = Ok(());
        for (_, ready) in self.ready {
            first = first.and(ready.stop());
        }
        first
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Source;
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;
    use std::time::{Duration, Instant};

    /// Every kind of workload: fathom's engine on each back end, fio, and each program.
    const EVERY: &str = "\
name: every
defaults: {target: /tmp, rw: read, duration: 1s}
workloads:
  uring: {engine: io_uring}
  psync: {engine: psync}
  none: {engine: null}
  fio: {engine: fio}
  pg: {driver: pgbench}
  net: {driver: iperf3}
  nap: {driver: sleep, sleepers: 2, every_ms: 250}
  oltp: {driver: tpcc}
";

    #[test]
    fn every_workload_has_exactly_one_driver_and_names_are_unique() {
        let s = Scenario::load(&Source { origin: "t".into(), text: EVERY }, &[]).unwrap();
        for w in &s.workloads {
            let runners: Vec<&str> = all().filter(|d| d.runs(w, w.engine)).map(|d| d.name()).collect();
            assert_eq!(runners.len(), 1, "{}: {runners:?}", w.name);
        }
        let of = |name: &str| {
            let w = s.workloads.iter().find(|w| w.name == name).unwrap();
            super::of(w, w.engine)
        };
        assert_eq!((of("psync").name(), of("fio").name(), of("net").name()), ("engine", "fio", "iperf3"));
        let mut names: Vec<&str> = all().map(|d| d.name()).collect();
        let count = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), count);
        assert!(of("pg").startup() > Duration::ZERO && of("uring").startup().is_zero());
        // each program's model has its runner
        for program in crate::scenario::program::all() {
            assert!(all().any(|d| d.name() == program.name()), "{} has no runner", program.name());
        }
    }

    /// The seam end to end with the test build's `sleep` program: loaded from its keys
    /// by its model, readied and started through the registry, its samples the
    /// workload's, one per worker per second.
    #[test]
    fn a_program_runs_through_the_seam_alone() {
        let s = Scenario::load(&Source { origin: "t".into(), text: EVERY }, &[]).unwrap();
        let (idx, w) = s.workloads.iter().enumerate().find(|(_, w)| w.name == "nap").unwrap();
        assert_eq!((w.workers, w.engine, w.runner().as_str()), (2, None, "sleep"));
        let only = Scenario { workloads: vec![w.clone()], ..s.clone() };
        let dir = std::env::temp_dir();
        let ready = ReadyDrivers::prepare(&only, &dir, &AtomicBool::new(false), &|_| {}).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let now = Instant::now();
        let cx = LaunchContext {
            workload_idx: idx,
            workload: Arc::new(w.clone()),
            engine: None,
            files: Vec::new(),
            first_worker: 10,
            planned: 2,
            workers: 0..2,
            begin: now,
            stagger: Duration::ZERO,
            clock_start: now,
            clock_unix_ms: 0,
            end_t: 2,
            uring_ok: false,
            dir,
            sink: crate::store::sink::Sink::new().0,
            tx,
            stop: Arc::new(AtomicBool::new(false)),
            abort: Arc::new(AtomicBool::new(false)),
            io_end: Arc::new(IoEnd::default()),
            unsent: Default::default(),
        };
        for (thread, _) in ready.start(&cx).unwrap() {
            thread.join().unwrap().unwrap();
        }
        let samples: Vec<_> = rx.try_iter().map(|x| (x.worker, x.t, x.op.as_str(), x.stats.ops)).collect();
        let second = |t| [(10, t, "nap", 2), (10, t, "snore", 2), (11, t, "nap", 2), (11, t, "snore", 2)];
        assert_eq!(samples, [second(0), second(1)].concat());
        // its ops are named by it, counted as transactions, each with its latency
        let ops: Vec<&str> = w.measures().ops.iter().map(|o| o.as_str()).collect();
        assert_eq!(ops, ["nap", "snore"]);
        assert!(w.measures().ops.iter().all(|o| o.unit() == crate::metrics::summary::Throughput::Tps));
        ready.stop().unwrap();
    }
}
