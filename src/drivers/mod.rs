//! Drivers that run another program for a workload and turn what it reports into
//! fathom's samples, so its results sit in the same store next to the native engine's:
//! fio (`engine: fio`), pgbench and iperf3 (`driver:`).

pub mod fio;
pub mod iperf3;
pub mod pgbench;
pub mod postgres;

use crate::scenario::driver::Driver;
use crate::scenario::{EngineKind, Scenario};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// How long before a workload's first second its program is started, so that its work
/// (not its start-up) fills that second.
pub fn startup(engine: EngineKind) -> Duration {
    match engine {
        EngineKind::Fio => fio::STARTUP,
        EngineKind::Pgbench => pgbench::STARTUP,
        _ => Duration::ZERO,
    }
}

/// What the `driver:` workloads of a run need before its clock starts: databases
/// initialised, servers listening. Dropping it stops what fathom started.
pub struct Prepared {
    pub databases: pgbench::Databases,
    pub servers: iperf3::Servers,
}

/// Checks that each driver's program is installed (a clear message and exit 2 when not).
pub fn check_installed(scenario: &Scenario) -> Result<(), String> {
    let uses = |name: &str| scenario.workloads.iter().any(|w| w.driver.as_ref().is_some_and(|d| d.name() == name));
    if uses("pgbench") {
        pgbench::version()?;
    }
    if uses("iperf3") {
        iperf3::version()?;
    }
    Ok(())
}

/// Reaches every server a `driver:` workload names (a pgbench `dsn`), before anything
/// is laid out or recorded: one that cannot be reached is bad input, no run. `stop`
/// (a signal) ends the wait.
pub fn check_servers(scenario: &Scenario, stop: &AtomicBool) -> Result<(), String> {
    pgbench::connect(scenario, stop)
}

/// Readies every `driver:` workload: PostgreSQL clusters in `dir` (the run's directory)
/// and pgbench databases, iperf3 servers. An error, or `stop` set meanwhile, stops what
/// was already started.
pub fn prepare(
    scenario: &Scenario,
    dir: &Path,
    stop: &AtomicBool,
    progress: &dyn Fn(&str),
) -> Result<Prepared, String> {
    if !scenario.workloads.iter().any(|w| w.driver.is_some()) {
        return Ok(Prepared { databases: Default::default(), servers: Default::default() });
    }
    let databases = pgbench::prepare(scenario, dir, stop, progress)?;
    let servers = iperf3::prepare(scenario, stop, progress)?;
    Ok(Prepared { databases, servers })
}

impl Prepared {
    /// Stops the clusters and servers fathom started.
    pub fn stop(self) -> Result<(), String> {
        drop(self.servers);
        self.databases.stop()
    }
}

/// The one-line description of a driver workload as it starts.
pub fn describe(d: &Driver) -> String {
    match d {
        Driver::Pgbench(p) => {
            let script = match &p.script {
                crate::scenario::driver::Script::Builtin(name) => name.clone(),
                crate::scenario::driver::Script::File(path) => path.display().to_string(),
                crate::scenario::driver::Script::Sql(_) => "custom SQL".into(),
            };
            let rate = p.rate.map(|r| format!(", {r} tps target")).unwrap_or_default();
            let server = if p.dsn.is_some() { "the given server" } else { "a throwaway PostgreSQL" };
            format!(
                "pgbench {script}, scale {}, {} clients x {} threads{rate}, on {server}",
                p.scale, p.clients, p.threads
            )
        }
        Driver::Iperf3(i) => format!(
            "iperf3, {} stream{}{}",
            i.streams,
            if i.streams == 1 { "" } else { "s" },
            if i.reverse { ", reverse (server sends)" } else { "" }
        ),
    }
}
