//! What runs a workload, behind one [`Driver`] seam: fathom's own engine (`native.rs`),
//! and the programs whose reports become fathom's samples, so their results sit in the
//! same store next to the engine's: fio (`engine: fio`), pgbench and iperf3 (`driver:`).

pub mod driver;
pub mod fio;
pub mod iperf3;
pub mod native;
pub mod pgbench;
pub mod postgres;

use crate::engine::WorkerThread;
use crate::error::Result;
use crate::scenario::{EngineKind, Scenario};
pub use driver::{Driver, IoEnd, LaunchContext, Ready};
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// Every driver, by name: the one list a new driver joins.
pub const DRIVERS: [&dyn Driver; 4] = [&native::Native, &fio::Fio, &pgbench::PgbenchDriver, &iperf3::Iperf3Driver];

/// The driver that runs workloads of `engine`.
pub fn of(engine: EngineKind) -> &'static dyn Driver {
    DRIVERS.into_iter().find(|d| d.runs(engine)).expect("every engine kind has its driver in DRIVERS")
}

/// The drivers a scenario uses, in the order of `DRIVERS`.
fn used(scenario: &Scenario) -> impl Iterator<Item = &'static dyn Driver> + '_ {
    DRIVERS.into_iter().filter(|d| scenario.workloads.iter().any(|w| d.runs(w.engine)))
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

    /// Starts workers of a workload with the driver that runs its engine.
    pub fn start(&self, cx: &LaunchContext) -> Result<Vec<(WorkerThread, String)>> {
        let driver = of(cx.engine);
        let (_, ready) = self.ready.iter().find(|(d, _)| d.name() == driver.name()).ok_or_else(|| {
            crate::error::Error::failed(format!("{}: driver {} was not prepared", cx.workload.name, driver.name()))
        })?;
        ready.start(cx)
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

    #[test]
    fn every_engine_kind_has_exactly_one_driver_and_names_are_unique() {
        use EngineKind::*;
        for kind in [IoUring, Psync, Null, Fio, Pgbench, Iperf3] {
            let runners: Vec<&str> = DRIVERS.iter().filter(|d| d.runs(kind)).map(|d| d.name()).collect();
            assert_eq!(runners.len(), 1, "{kind}: {runners:?}");
        }
        assert_eq!((of(Psync).name(), of(Fio).name(), of(Iperf3).name()), ("engine", "fio", "iperf3"));
        let mut names: Vec<&str> = DRIVERS.iter().map(|d| d.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), DRIVERS.len());
        assert!(of(Pgbench).startup() > std::time::Duration::ZERO && of(IoUring).startup().is_zero());
    }
}
