//! `driver: tpcc`: a TPC-C-like workload on PostgreSQL, its five transactions
//! server-side functions driven by pgbench ([`super::pgbench::run`]) with weighted
//! scripts, prepared statements and retries, each script counted as its own op.
//!
//! Before anything is recorded, [`Driver::check`] reaches each `dsn` and refuses a
//! database that holds tables other than fathom's. Before the run clock starts, each
//! workload's database is loaded ([`load`]): on a throwaway cluster once per number of
//! warehouses, as a template each workload copies. After its run the runner reads
//! HammerDB's figures and checks the consistency conditions ([`figures`]), stored as
//! the workload's `tpcc` event and observations; a condition that does not hold fails
//! the run, its figures being invalid.

pub mod figures;
pub mod hammerdb;
pub mod load;
pub mod mariadb;

use super::driver::{DbServer, Driver, LaunchContext, Ready, bad_input, spawn_program};
use super::pgbench::{self, Invocation};
use super::postgres;
use super::throwaway::Clusters;
use crate::clock::sleep_until;
use crate::engine::WorkerThread;
use crate::engine::target::DataFile;
use crate::error::{Error, Result};
use crate::metrics::Op;
use crate::metrics::format::counted;
use crate::metrics::summary::Throughput;
use crate::scenario::program::seam::Spec;
use crate::scenario::program::tpcc::{Engine, Home, OPS, Tpcc, WAREHOUSE_BYTES};
use crate::scenario::units::Size;
use crate::scenario::{EngineKind, Scenario, Workload};
use crate::store::sink::Record;
use crate::store::{EventRow, ObservationRow};
use figures::{Figures, Profile};
use load::Loaded;
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The pgbench script of each transaction type, in the order of [`OPS`].
const SCRIPTS: [&str; 5] = [
    include_str!("scripts/new_order.sql"),
    include_str!("scripts/payment.sql"),
    include_str!("scripts/delivery.sql"),
    include_str!("scripts/order_status.sql"),
    include_str!("scripts/stock_level.sql"),
];

/// How many tries a transaction gets after serialization failures and deadlocks.
const MAX_TRIES: u32 = 10;

pub struct TpccDriver;

/// The TPC-C settings of workload `w`, if tpcc runs it with pgbench (HammerDB's runs
/// are [`hammerdb`]'s).
fn spec(w: &Workload) -> Option<&Tpcc> {
    w.program()?.get::<Tpcc>().filter(|p| p.engine == Engine::Pgbench)
}

/// Each workload's database, ready, and the clusters fathom started for them.
#[derive(Default)]
struct Databases {
    /// By workload name (an agent readies one workload of the scenario alone): its
    /// index in the scenario, its database and how it was loaded.
    ready: HashMap<String, (usize, String, Loaded)>,
    clusters: Clusters,
}

/// Reaches each `dsn` and refuses one whose database holds tables that are not fathom's.
fn connect(scenario: &Scenario, stop: &AtomicBool) -> Result<()> {
    for w in &scenario.workloads {
        let Some(Tpcc { dsn: Some(dsn), .. }) = spec(w) else { continue };
        postgres::own_database(&w.name, dsn, &load::TABLES, "TPC-C", stop)?;
    }
    Ok(())
}

/// Loads a database for every tpcc workload: a `dsn`'s in place, else a template per
/// cluster and number of warehouses, copied for each workload.
fn prepare(scenario: &Scenario, dir: &Path, stop: &AtomicBool, progress: &dyn Fn(&str)) -> Result<Databases> {
    let mut dbs = Databases::default();
    // each server's template (or dsn) loaded once, for the workloads of its warehouses
    let mut loads: crate::drivers::loading::Loads<Loaded> = Default::default();
    // a workload placed on hosts is readied by each host's agent
    for (idx, w) in scenario.workloads.iter().enumerate().filter(|(_, w)| w.placement.is_none()) {
        let Some(p) = spec(w) else { continue };
        let named = |e: Error| Error::failed(format!("{}: {e}", w.name));
        let say = |m: &str| progress(&format!("{}: {m}", w.name));
        let (source, run_dsn, copy, tablespaces) = match &p.dsn {
            Some(dsn) => (dsn.clone(), dsn.clone(), None, Vec::new()),
            None => {
                let settings = cluster_settings(scenario, p);
                let cluster = dbs.clusters.get((idx, &w.name), &p.server_dirs(), &settings, dir, stop, progress)?;
                let template = format!("tpcc_w{}", p.warehouses);
                // the room for the template and every copy of it, checked once
                if !loads.holds(&cluster.dsn(&template)) {
                    let copies = scenario.workloads.iter().filter_map(spec).filter(|q| same_cluster(p, q)).count();
                    room(&cluster.dir, p.warehouses, copies as u64).map_err(|e| bad_input(named(e)))?;
                }
                cluster.create_database(&template, None, stop).map_err(|e| bad_input(named(e)))?;
                let copy = format!("tpcc_{idx}");
                (cluster.dsn(&template), cluster.dsn(&copy), Some((cluster, template, copy)), cluster.tablespaces())
            }
        };
        let done = loads.once(
            &source,
            |l| l.warehouses == p.warehouses,
            || {
                let db = postgres::Database { dsn: &source, users: p.dsn.is_some(), tablespaces };
                let l = load::load(&db, p.warehouses, p.reuse, crate::drivers::loading::sessions(), stop, &say)
                    .map_err(named)?;
                let violations = figures::violations(&source, !l.reused, stop).map_err(named)?;
                if !violations.is_empty() {
                    let broken = violations.join("; ");
                    return Err(named(Error::failed(format!("TPC-C consistency {broken} after the load"))));
                }
                if !l.reused {
                    let (secs, mb) = (l.seconds, l.bytes_per_warehouse / 1e6);
                    say(&format!(
                        "loaded {} in {secs:.1} s, {mb:.0} MB per warehouse",
                        counted(p.warehouses, "warehouse")
                    ));
                }
                Ok(l)
            },
        )?;
        if let Some((cluster, template, copy)) = copy {
            cluster.create_database(&copy, Some(&template), stop).map_err(named)?;
        }
        dbs.ready.insert(w.name.clone(), (idx, run_dsn, done));
    }
    dbs.clusters.settle(stop)?;
    Ok(dbs)
}

/// The settings of `p`'s throwaway cluster: its own, and unless they set it, room for
/// the most clients a workload on it runs (PostgreSQL's default is 100 connections,
/// which ten clients per warehouse pass at ten warehouses).
fn cluster_settings(scenario: &Scenario, p: &Tpcc) -> Vec<(String, String)> {
    let mut settings = p.settings.clone();
    let on_it = scenario
        .workloads
        .iter()
        .filter_map(spec)
        .filter(|q| (q.server_dirs(), &q.settings) == (p.server_dirs(), &p.settings));
    let most = on_it.filter(|q| q.dsn.is_none()).map(|q| q.clients).max().unwrap_or(p.clients);
    if most > 90 && !settings.iter().any(|(k, _)| k == "max_connections") {
        settings.push(("max_connections".into(), (most + 10).to_string()));
    }
    settings
}

/// Whether two workloads load the same template on the same throwaway cluster.
fn same_cluster(p: &Tpcc, q: &Tpcc) -> bool {
    q.dsn.is_none() && (q.server_dirs(), &q.settings, q.warehouses) == (p.server_dirs(), &p.settings, p.warehouses)
}

/// Refuses, before anything is loaded, a cluster in `dir` whose storage has no room for
/// `warehouses` loaded once and copied for each of `copies` workloads.
fn room(dir: &Path, warehouses: u32, copies: u64) -> Result<()> {
    let need = warehouses as u64 * WAREHOUSE_BYTES * (1 + copies);
    let (many, copied) = (counted(warehouses, "warehouse"), counted(copies, "workload"));
    match crate::nofollow::free_space(dir) {
        Some(free) if free < need => Err(Error::failed(format!(
            "{many} need about {} in {} (about {} each, loaded once and copied for each of {copied}), which has {} \
             free: give fewer warehouses or a `target` with more room",
            Size(need).human(),
            dir.display(),
            Size(WAREHOUSE_BYTES).human(),
            Size(free).human()
        ))),
        _ => Ok(()),
    }
}

impl Driver for TpccDriver {
    fn name(&self) -> &'static str {
        "tpcc"
    }

    fn runs(&self, w: &Workload, _: Option<EngineKind>) -> bool {
        spec(w).is_some()
    }

    fn startup(&self) -> Duration {
        pgbench::STARTUP
    }

    fn check(&self, scenario: &Scenario, stop: &AtomicBool) -> Result<()> {
        postgres::check(stop, || connect(scenario, stop))
    }

    fn prepare(
        &self,
        scenario: &Scenario,
        dir: &Path,
        stop: &AtomicBool,
        progress: &dyn Fn(&str),
    ) -> Result<Box<dyn Ready>> {
        Ok(Box::new(prepare(scenario, dir, stop, progress)?))
    }

    /// HammerDB's figures for the cluster: each node's NOPM and TPM, and their sum.
    fn totals(&self, w: &Workload, rows: &[ObservationRow]) -> Vec<Record> {
        let hosts = w.placement.as_ref().map(|p| p.resolved.clone()).unwrap_or_default();
        let nodes = figures::nodes(&w.name, &hosts, rows);
        let Some(t) = nodes.iter().map(|n| n.t).min() else { return Vec::new() };
        let event = EventRow {
            at_ms: t * 1000,
            kind: "tpcc".into(),
            label: w.name.clone(),
            status: Some(if nodes.len() == hosts.len() { 0 } else { 1 }),
            took_ms: None,
            detail: figures::cluster(&nodes, hosts.len()),
        };
        let source = format!("tpcc:{}", w.name);
        let sum = |f: fn(&figures::Node) -> f64| nodes.iter().map(f).sum::<f64>();
        let rows = [("nopm", sum(|n| n.nopm)), ("tpm", sum(|n| n.tpm)), ("nodes", nodes.len() as f64)]
            .map(|(name, value)| ObservationRow { t, source: source.clone(), name: name.into(), value });
        vec![Record::Event(event), Record::Observations(rows.into())]
    }

    fn describe(&self, w: &Workload, _: &[Arc<DataFile>], _: u32, _: Option<EngineKind>) -> String {
        let Some(p) = spec(w) else { return w.runner() };
        let rate = match (p.keying_thinking, p.rate) {
            (true, Some(r)) => format!(", paced by TPC-C's keying and think times ({r:.1} tps)"),
            (false, Some(r)) => format!(", {r} tps target"),
            (_, None) => String::new(),
        };
        let server = if p.dsn.is_some() { "the given server" } else { "a throwaway PostgreSQL" };
        let (warehouses, clients) = (counted(p.warehouses, "warehouse"), counted(p.clients, "client"));
        format!("tpcc, {warehouses}, {clients}, {}, {}{rate}, on {server}", p.mix.describe(), p.home.describe())
    }
}

impl Ready for Databases {
    fn start(&self, cx: &LaunchContext) -> Result<Vec<(WorkerThread, String)>> {
        let Some((_, dsn, loaded)) = self.ready.get(&cx.workload.name).cloned() else {
            return Err(Error::failed(format!("{}: its TPC-C database was not loaded", cx.workload.name)));
        };
        spawn_program(cx, "tpcc", move |l| run(l, &dsn, loaded))
    }

    fn stop(mut self: Box<Self>) -> Result<()> {
        self.clusters.stop()
    }

    fn servers(&self) -> Vec<DbServer> {
        self.clusters.servers(self.ready.values().map(|(workload, dsn, _)| (*workload, dsn.as_str())))
    }

    fn retire(&self, over: &[usize]) -> Vec<String> {
        self.clusters.retire(over)
    }
}

/// pgbench's options for workload `l`: its five scripts written to the run's directory,
/// each behind the line that picks its warehouse, with their weights and the run's
/// NURand constants.
fn invocation(l: &LaunchContext, p: &Tpcc, loaded: &Loaded) -> Result<Invocation> {
    let home = match p.home {
        Home::PerClient => "\\set w :client_id % :warehouses + 1\n",
        Home::Random => "\\if :home = 0\n\\set home random(1, :warehouses)\n\\endif\n\\set w :home\n",
        // HammerDB's "use all warehouses": client k's warehouses are k, k + clients, k + 2
        // clients, ... (mod warehouses), as many as it takes for the clients to cover them
        // all; so that clients do not meet on the same rows, as they would if each drew any
        Home::All => "\\set w (:client_id + :clients * random(0, :spread - 1)) % :warehouses + 1\n",
    };
    let [c_last, c_id, ol_i_id] = constants(l, loaded);
    let mut args: Vec<OsString> = ["-M", "prepared", &format!("--max-tries={MAX_TRIES}")].map(OsString::from).into();
    for (name, value) in [
        ("warehouses", p.warehouses),
        ("c_last", c_last),
        ("c_id", c_id),
        ("ol_i_id", ol_i_id),
        ("home", 0),
        ("clients", p.clients),
        ("spread", p.warehouses.div_ceil(p.clients)),
    ] {
        args.extend(["-D".into(), format!("{name}={value}").into()]);
    }
    let dir = l.run_dir()?;
    for ((op, script), weight) in OPS.iter().zip(SCRIPTS).zip(p.mix.weights()) {
        let path = dir.write(&l.file_name(&format!("tpcc-{op}.sql"))?, format!("{home}{script}"))?;
        let mut arg = OsString::from(path);
        arg.push(format!("@{weight}"));
        args.extend(["-f".into(), arg]);
    }
    let isolation = p.isolation.setting().replace(' ', "\\ ");
    Ok(Invocation {
        clients: p.clients,
        threads: p.clients.min(crate::drivers::loading::sessions()),
        rate: p.rate,
        args,
        env: vec![("PGOPTIONS".into(), format!("-c default_transaction_isolation={isolation}"))],
        ops: OPS.iter().map(|n| Op::named(n, Throughput::Tps)).collect(),
        profile_from: Some((l.begin_t() + l.workload.ramp.as_secs()) as u32),
    })
}

/// Runs workload `l` against `dsn` with pgbench, then reads its figures and checks the
/// database.
fn run(l: &LaunchContext, dsn: &str, loaded: Loaded) -> Result<()> {
    let w = &l.workload;
    let Some(p) = spec(w) else { return Err(Error::failed(format!("{}: not a tpcc workload", w.name))) };
    let inv = invocation(l, p, &loaded)?;
    measure(l, p, &Postgres(dsn), &loaded, || pgbench::run(l, &inv, dsn))
}

/// A TPC-C database as a runner reads it around its run, in its DBMS's own SQL.
trait Database: Sync {
    /// The DBMS as HammerDB's line names it ("... from M PostgreSQL TPM").
    fn label(&self) -> &'static str;
    /// The counters HammerDB's figures are computed from.
    fn read(&self, stop: &AtomicBool) -> Result<figures::Reading>;
    /// Waits until the counters hold every transaction of the run.
    fn settle(&self, _stop: &AtomicBool) {}
    /// The consistency conditions 1-4 that do not hold, each named.
    fn violations(&self, stop: &AtomicBool) -> Result<Vec<String>>;
    fn since_load(&self, warehouses: u32, stop: &AtomicBool) -> Result<figures::SinceLoad>;
}

/// The database of a libpq `dsn`.
struct Postgres<'a>(&'a str);

impl Database for Postgres<'_> {
    fn label(&self) -> &'static str {
        "PostgreSQL"
    }

    fn read(&self, stop: &AtomicBool) -> Result<figures::Reading> {
        figures::read(self.0, stop)
    }

    /// A session adds its counts to pg_stat_database as it ends.
    fn settle(&self, stop: &AtomicBool) {
        figures::settle(self.0, stop)
    }

    fn violations(&self, stop: &AtomicBool) -> Result<Vec<String>> {
        figures::violations(self.0, false, stop)
    }

    fn since_load(&self, warehouses: u32, stop: &AtomicBool) -> Result<figures::SinceLoad> {
        figures::since_load(self.0, warehouses, stop)
    }
}

/// The run's NURand constants (clause 2.1.6), from its clock: C for C_LAST, which
/// differs from the load's by 65 to 119 but not 96 or 112 (clause 2.1.6.1), for C_ID and
/// for OL_I_ID.
fn constants(l: &LaunchContext, loaded: &Loaded) -> [u32; 3] {
    let seed = l.clock_unix_ms.unsigned_abs() as u32;
    let delta = [65, 119, 100, 80][(seed % 4) as usize] + seed % 13;
    let delta = if delta == 96 || delta == 112 { delta + 1 } else { delta };
    [(loaded.c_last + delta) % 256, seed % 1024, (seed / 1024) % 8192]
}

/// Runs workload `l`'s transactions with `drive` (the program's run, its seconds; none
/// when stopped before it started), reading `db`'s counters as the measured window opens
/// and after it; then stores HammerDB's figures and fathom's and checks the database.
fn measure(
    l: &LaunchContext,
    p: &Tpcc,
    db: &dyn Database,
    loaded: &Loaded,
    drive: impl FnOnce() -> Result<Option<pgbench::log::Seconds>>,
) -> Result<()> {
    let w = &l.workload;
    let named = |e: Error| Error::failed(format!("{}: {e}", w.name));
    // with no ramp the window opens before the program starts
    let first = match w.ramp.is_zero() {
        true => Some(db.read(&l.stop).map_err(named)?),
        false => None,
    };
    let (before, seconds) = std::thread::scope(|scope| {
        let reader = scope.spawn(|| match first {
            Some(r) => Ok(r),
            None => {
                sleep_until(l.begin + w.ramp, &l.stop);
                db.read(&l.stop)
            }
        });
        let ran = drive();
        (reader.join(), ran)
    });
    let Some(seconds) = seconds? else { return Ok(()) };
    if l.stop.load(Ordering::Relaxed) || l.abort.load(Ordering::Relaxed) {
        return Ok(());
    }
    let before = before.map_err(|_| named(Error::failed("reading the counters failed")))?.map_err(named)?;
    db.settle(&l.stop);
    conclude(l, p, db, loaded, before, &seconds).map_err(named)
}

/// The figures of workload `l`'s window, from `db`'s counters `before` it and now and the
/// program's `seconds`, stored; an error when a consistency condition does not hold.
fn conclude(
    l: &LaunchContext,
    p: &Tpcc,
    db: &dyn Database,
    loaded: &Loaded,
    before: figures::Reading,
    seconds: &pgbench::log::Seconds,
) -> Result<()> {
    let w = &l.workload;
    let after = db.read(&l.stop)?;
    let violations = db.violations(&l.stop)?;
    let from = (l.begin_t() + w.ramp.as_secs()) as u32;
    let counts: Vec<_> = (0..OPS.len()).map(|i| seconds.counts_in(i, from, l.end_t as u32)).collect();
    let minutes = w.duration.as_secs_f64() / 60.0;
    let mut f = Figures::new(before, after, minutes, &counts, &OPS, &p.mix.weights(), p.clients);
    f.dbms = db.label();
    f.profile = (0..OPS.len()).filter_map(|i| seconds.profile.get(&i).map(|h| Profile::of(OPS[i], h))).collect();
    f.since_load = db.since_load(p.warehouses, &l.stop)?;
    f.deliveries = seconds.counts_in(2, 0, u32::MAX).done;
    record(l, from, &f, loaded, &violations);
    match violations.is_empty() {
        true => Ok(()),
        false => Err(Error::failed(format!(
            "TPC-C consistency {} after the run: its figures are invalid",
            violations.join("; ")
        ))),
    }
}

/// Stores the figures as the workload's `tpcc` event (what `fathom show` prints) and
/// observations at second `t`, where the window began.
fn record(l: &LaunchContext, t: u32, f: &Figures, loaded: &Loaded, violations: &[String]) {
    let load = match loaded.reused {
        true => "the loaded database reused".to_string(),
        false => format!("loaded in {:.1} s", loaded.seconds),
    };
    let database = format!("{} warehouse(s), {load}", loaded.warehouses);
    let figures = [f.nopm, f.tpm, f.log_nopm, f.rollback_pct(), loaded.seconds, loaded.bytes_per_warehouse];
    store(l, t, &f.describe(), &database, violations, figures);
}

/// The figures every engine's tpcc run stores, under these names, in this order.
const STORED: [&str; 6] = ["nopm", "tpm", "log_nopm", "rollback_pct", "load_s", "bytes_per_warehouse"];

/// Stores a run's `figures` ([`STORED`]) as the workload's `tpcc` event, `said` (the
/// figures in words) followed by the consistency verdict and how its `database` came to
/// be, and as observations at second `t`, where the window began, with whether the
/// database is consistent.
fn store(l: &LaunchContext, t: u32, said: &str, database: &str, violations: &[String], figures: [f64; 6]) {
    let verdict = match violations.is_empty() {
        true => "consistency conditions 1-4 hold".to_string(),
        false => format!("INVALID: consistency {} does not hold", violations.join("; ")),
    };
    let mb = figures[5] / 1e6;
    l.sink.send(Record::Event(EventRow {
        at_ms: (t as i64) * 1000,
        kind: "tpcc".into(),
        label: l.workload.name.clone(),
        status: Some(if violations.is_empty() { 0 } else { 1 }),
        took_ms: None,
        detail: format!("{said}; {verdict}; {database}, {mb:.0} MB per warehouse"),
    }));
    let source = format!("tpcc:{}", l.workload.name);
    let consistent = ("consistent", if violations.is_empty() { 1.0 } else { 0.0 });
    let rows = STORED.into_iter().zip(figures).chain([consistent]);
    let rows =
        rows.map(|(name, value)| ObservationRow { t: t.into(), source: source.clone(), name: name.into(), value });
    l.sink.send(Record::Observations(rows.collect()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cluster_without_room_is_refused_in_plain_words() {
        let err = room(Path::new("/"), 1_000_000, 1).unwrap_err().to_string();
        assert!(err.starts_with("1000000 warehouses need about "), "{err}");
        assert!(err.contains("loaded once and copied for each of 1 workload), which has "), "{err}");
        assert!(!err.contains("  "), "{err}");
    }
}
