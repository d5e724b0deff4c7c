//! The second stage: the run's clock, the collector that stores every second, the
//! observers, the live view and the Prometheus endpoint around the timeline, which runs
//! the workloads. It ends once every sample is stored and the drivers' programs stopped.

use super::state::{RunOptions, Session, Staged};
use crate::drivers::{DbServer, ReadyDrivers};
use crate::engine::demand::Demand;
use crate::error::{Error, Result};
use crate::export::prometheus::Endpoint;
use crate::metrics::totals::{Totals, WorkloadInfo};
use crate::observe::{Observer, Observers, RunClock, diskstats, host, mariadb, network, postgres, promql};
use crate::report::status_line::View;
use crate::store::collector::{self, Writer};
use crate::store::sink::Sink;
use crate::store::{ObservationRow, Store};
use crate::timeline::{self, Outcome};
use crate::transport::fleet::Fleet;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// What the run did, for `conclude` to judge and record.
pub(super) struct Measured {
    /// How the timeline ended.
    pub outcome: Result<Outcome>,
    /// Whether every sample and observation was stored and the programs stopped cleanly.
    pub stored: Result<()>,
    pub clock_start: Instant,
    /// fathom's own CPU seconds when the clock started.
    pub cpu_before: f64,
    /// What the local worker threads wanted of the CPU when the clock started.
    pub demand_before: Demand,
    /// Serves until the run's end is recorded.
    pub endpoint: Option<Endpoint>,
}

/// Starts the clock and runs the timeline with the collector, observers, live view and
/// endpoint around it. An error here is one of starting them; the run's own failures are
/// in the returned outcome.
pub(super) fn measure(s: &Session, staged: Staged, opts: &RunOptions, store_dir: &Path) -> Result<Measured> {
    let Staged { files, targets, uring_ok, total, prepared, tx, rx } = staged;
    let (store, run, fleet) = (&s.store, s.run, &s.fleet);
    let cpu_before = host::process_cpu_seconds();
    let demand_before = Demand::now();
    let clock_start = Instant::now();
    let clock_unix_ms = crate::clock::unix_ms();
    store.set_clock_start(run, clock_unix_ms)?;
    *fleet.clock_unix_ms.lock().unwrap_or_else(|e| e.into_inner()) = clock_unix_ms;
    record_clocks(store, run, fleet)?;
    let (sink, records) = Sink::new();
    fleet.watch(sink.clone(), clock_start);
    let writer = Store::open(store_dir)?;
    let live = live_totals(s);
    let endpoint = start_endpoint(s, opts, &live)?;
    let view = (!opts.quiet).then(|| View::start(live.clone(), clock_start, total));
    let (feed, halt, kept) = (live.clone(), s.stop.clone(), s.reserve.clone());
    let collector = std::thread::Builder::new()
        .name("collector".into())
        .spawn(move || collector::run(Writer::new(writer, run, &feed, &halt, &kept), clock_start, rx, records))
        .map_err(|e| Error::failed(format!("starting the collector: {e}")))?;

    let observing = observers(s, &prepared, diskstats::devices_of(&targets));
    let observers = Observers::start(&sink, RunClock { start: clock_start, unix_ms: clock_unix_ms }, observing)?;

    let no_hooks = crate::scenario::hooks::Hooks::default();
    let cx = timeline::Context {
        store,
        run,
        files,
        engines: s.engines.clone(),
        uring_ok,
        clock_start,
        clock_unix_ms,
        run_dir: store.run_dir(run),
        sink,
        drivers: &prepared,
        fleet,
        inventory: s.inventory.as_ref(),
        hooks: opts.hooks.as_ref().unwrap_or(&no_hooks),
        tx,
        stop: s.stop.clone(),
        interrupted: s.interrupted.clone(),
        progress: &*s.progress,
        on_phase: &|label, t, running| live.set_phase(label, t, running),
        on_host: &|worker, host| live.set_host(worker, host),
        on_plan: &|end| live.set_planned(end),
    };
    let outcome = timeline::run_steps(&s.scenario, &cx);
    drop(cx); // closes the sample channel and the sink so the collector finishes
    let observed = observers.stop();
    // agents' samples are all in once they have left; then what their programs'
    // figures add up to
    if let Some(sink) = fleet.leave() {
        crate::drivers::totals(&s.scenario, &fleet.program_figures()).into_iter().for_each(|r| sink.send(r));
    }
    if let Some(view) = view {
        view.stop();
    }
    let stored = collector.join().unwrap_or_else(|_| Err(Error::failed("the sample collector panicked")));
    // the samples are in: what is left to write is the run's end, which the reserve
    // makes room for if the disk filled
    s.reserve.release();
    let stored = stored.and(observed);
    let stored = stored.and(prepared.stop());
    Ok(Measured { outcome, stored, clock_start, cpu_before, demand_before, endpoint })
}

/// What the run observes: the host and the devices under the targets, its network
/// interfaces (the loopback when an iperf3 workload crosses it), the scenario's remote
/// queries, and each PostgreSQL server its workloads use (one observer per server,
/// whichever workloads share it: their names, joined, name it).
fn observers(s: &Session, prepared: &ReadyDrivers, devices: Vec<String>) -> Vec<Box<dyn Observer>> {
    let loopback = crate::drivers::iperf3::on_loopback(&s.scenario);
    let mut observers: Vec<Box<dyn Observer>> = vec![
        Box::new(host::Local { devices, programs: crate::children::running }),
        Box::new(network::Network::here(loopback)),
    ];
    if let Some(remote) = s.scenario.remote.clone() {
        observers.push(Box::new(promql::Remote { remote, progress: s.progress.clone() }));
    }
    let mut servers: Vec<postgres::Server> = Vec::new();
    for pg in prepared.servers().into_iter().filter_map(DbServer::postgres) {
        let name = s.scenario.workloads.get(pg.workload).map(|w| w.name.clone()).unwrap_or_default();
        match servers
            .iter_mut()
            .find(|x| (&x.log, &x.dsn) == (&pg.log, &pg.dsn) || (pg.log.is_some() && x.log == pg.log))
        {
            Some(x) => x.name = format!("{},{name}", x.name),
            None => servers.push(postgres::Server { name, dsn: pg.dsn, log: pg.log, retired: pg.retired }),
        }
    }
    observers.extend(mariadb_observers(s, prepared));
    if servers.is_empty() {
        return observers;
    }
    match crate::drivers::postgres::client("psql") {
        Ok(psql) => observers.extend(servers.into_iter().map(|server| {
            Box::new(postgres::Postgres { server, psql: psql.clone(), progress: s.progress.clone() })
                as Box<dyn Observer>
        })),
        Err(e) => (s.progress)(&format!("observe: PostgreSQL is not observed: {e}")),
    }
    observers
}

/// An observer for each MariaDB server the workloads use, whichever workloads share it
/// (their names, joined, name it).
fn mariadb_observers(s: &Session, prepared: &ReadyDrivers) -> Vec<Box<dyn Observer>> {
    let mut servers: Vec<(String, mariadb::Server)> = Vec::new();
    for m in prepared.servers().into_iter().filter_map(DbServer::mariadb) {
        let name = s.scenario.workloads.get(m.workload).map(|w| w.name.clone()).unwrap_or_default();
        match servers.iter_mut().find(|(at, _)| *at == m.at) {
            Some((_, x)) => x.name = format!("{},{name}", x.name),
            None => servers.push((m.at, mariadb::Server { name, client: m.client, retired: m.retired })),
        }
    }
    let progress = s.progress.clone();
    let observe = move |server| Box::new(mariadb::Mariadb { server, progress: progress.clone() }) as Box<dyn Observer>;
    servers.into_iter().map(|(_, server)| observe(server)).collect()
}

/// The run's live totals, which the live view and the Prometheus endpoint read.
fn live_totals(s: &Session) -> Arc<Totals> {
    let infos = s
        .scenario
        .workloads
        .iter()
        .map(|w| WorkloadInfo {
            name: w.name.clone(),
            group: w.group.clone().unwrap_or_default(),
            target_iops: w.rate(),
            placed: w.placement.is_some(),
            ramp_s: w.ramp.as_secs() as u32,
        })
        .collect();
    Arc::new(Totals::new(s.run, &s.scenario.name, infos))
}

/// The Prometheus endpoint, when `--prometheus` or the scenario's `prometheus:` asks
/// for one. An address it cannot listen on is bad input.
fn start_endpoint(s: &Session, opts: &RunOptions, live: &Arc<Totals>) -> Result<Option<Endpoint>> {
    // --prometheus wins over the scenario's `prometheus:`
    let prometheus = match (&opts.prometheus, &s.scenario.prometheus) {
        (Some(addr), _) => Some((addr, "--prometheus")),
        (None, Some(addr)) => Some((addr, "prometheus:")),
        (None, None) => None,
    };
    Ok(match prometheus {
        Some((addr, from)) => {
            let endpoint = Endpoint::start(addr, live.clone())
                .map_err(|e| Error::input(format!("{from} {addr}: cannot listen there: {e}")))?;
            (s.progress)(&format!("metrics for Prometheus at http://{}/metrics", endpoint.addr));
            Some(endpoint)
        }
        None => None,
    })
}

/// Each agent's clock offset and round trip as measured at connection, as observations
/// of second 0 (source `host:NAME`).
fn record_clocks(store: &Store, run: i64, fleet: &Fleet) -> Result<()> {
    let mut rows = Vec::new();
    for r in fleet.remotes.values() {
        let source = format!("host:{}", r.host.name);
        rows.push(ObservationRow { t: 0, source: source.clone(), name: "clock_offset_ms".into(), value: r.offset_ms });
        rows.push(ObservationRow { t: 0, source, name: "rtt_ms".into(), value: r.rtt_ms });
    }
    store.add_observations(run, &rows)
}
