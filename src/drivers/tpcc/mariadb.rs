//! `driver: tpcc` with `dbms: mariadb`: the same TPC-C-like workload on MariaDB (or MySQL
//! by `dsn`), its five transactions stored procedures ([`TRANSACTIONS`]) that sysbench
//! calls from fathom's Lua client ([`CLIENT`]), one round trip per transaction, as
//! HammerDB's are. sysbench's C client and LuaJIT cost less CPU per transaction than a
//! Tcl interpreter, so the clients leave the cores to the server.
//!
//! The load is SQL the server runs from its sequence tables (no data crosses from the
//! client), a call per warehouse's part in parallel sessions. After the run the
//! figures are HammerDB's for MariaDB: NOPM from the districts' next order ids, TPM from
//! the server's `Com_commit` and `Com_rollback`, with TPC-C's consistency conditions 1-4.

use super::figures::{self, Reading, SinceLoad};
use super::load::{Loaded, TABLES};
use super::{Database, MAX_TRIES, constants, measure};
use crate::drivers::client::Client;
use crate::drivers::driver::{DbServer, Driver, LaunchContext, Ready, bad_input, bad_input_unless, spawn_program};
use crate::drivers::mariadb::{self, Conn, Server};
use crate::drivers::sysbench::{self, Job};
use crate::drivers::throwaway::Clusters;
use crate::engine::WorkerThread;
use crate::engine::target::DataFile;
use crate::error::{Error, Result};
use crate::metrics::Op;
use crate::metrics::format::counted;
use crate::metrics::summary::Throughput;
use crate::scenario::program::dbms::Dbms;
use crate::scenario::program::seam::Spec;
use crate::scenario::program::tpcc::{Engine, Isolation, OPS, Tpcc};
use crate::scenario::{EngineKind, Scenario, Workload};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// The tables, the load's procedures, the transactions' and the consistency checks.
const SCHEMA: &str = include_str!("mariadb/schema.sql");
const LOAD: &str = include_str!("mariadb/load.sql");
const TRANSACTIONS: &str = include_str!("mariadb/transactions.sql");
const CONSISTENCY: &str = include_str!("mariadb/consistency.sql");
/// The client sysbench runs, through fathom's timer.
const CLIENT: &str = include_str!("mariadb/tpcc.lua");

/// The routines fathom creates, dropped with its tables.
const ROUTINES: [(&str, &str); 12] = [
    ("FUNCTION", "tpcc_original"),
    ("FUNCTION", "tpcc_nurand"),
    ("FUNCTION", "tpcc_last_name"),
    ("PROCEDURE", "tpcc_load_items"),
    ("PROCEDURE", "tpcc_load_stock"),
    ("PROCEDURE", "tpcc_load_warehouse"),
    ("PROCEDURE", "tpcc_customer"),
    ("PROCEDURE", "tpcc_new_order"),
    ("PROCEDURE", "tpcc_payment"),
    ("PROCEDURE", "tpcc_order_status"),
    ("PROCEDURE", "tpcc_delivery"),
    ("PROCEDURE", "tpcc_stock_level"),
];

pub struct TpccMariadbDriver;

/// The TPC-C settings of workload `w`, if fathom runs it on MariaDB.
fn spec(w: &Workload) -> Option<&Tpcc> {
    w.program()?.get::<Tpcc>().filter(|p| p.engine == Engine::Sysbench)
}

/// Each workload's database, loaded, and the servers fathom started for them.
#[derive(Default)]
struct Databases {
    /// By workload index: its database and how it was loaded.
    ready: HashMap<usize, (Conn, Loaded)>,
    servers: Clusters<Server>,
}

/// Reaches each `dsn` and refuses one whose database holds tables that are not fathom's.
fn connect(scenario: &Scenario, stop: &AtomicBool) -> Result<()> {
    for w in &scenario.workloads {
        let Some(Tpcc { dsn: Some(dsn), .. }) = spec(w) else { continue };
        let named = |e: Error| Error::failed(format!("{}: `{dsn}`: {e}", w.name));
        let conn = Conn::parse(dsn).map_err(|e| named(Error::failed(e)))?;
        let foreign = mariadb::foreign_tables(&conn, &TABLES, stop).map_err(named)?;
        crate::drivers::loading::only_ours(&w.name, dsn, "TPC-C", &foreign)?;
    }
    Ok(())
}

/// Loads a database for every tpcc workload on MariaDB: a `dsn`'s in place, else one of
/// its own on the throwaway server of its place and settings.
fn prepare(scenario: &Scenario, dir: &Path, stop: &AtomicBool, progress: &dyn Fn(&str)) -> Result<Databases> {
    let mut dbs = Databases::default();
    let mut loads: crate::drivers::loading::Loads<Loaded> = Default::default();
    for (idx, w) in scenario.workloads.iter().enumerate().filter(|(_, w)| w.placement.is_none()) {
        let Some(p) = spec(w) else { continue };
        let named = |e: Error| Error::failed(format!("{}: {e}", w.name));
        let say = |m: &str| progress(&format!("{}: {m}", w.name));
        let (conn, tables) = match &p.dsn {
            Some(dsn) => (Conn::parse(dsn).map_err(|e| bad_input(named(Error::failed(e))))?, Vec::new()),
            None => {
                let server = dbs.servers.get((idx, &w.name), &p.server_dirs(), &p.settings, dir, stop, progress)?;
                let database = format!("tpcc_{idx}");
                server.create_database(&database, stop).map_err(|e| bad_input(named(e)))?;
                (server.conn(&database), server.table_dirs().to_vec())
            }
        };
        let loaded = loads.once(
            &conn.key(),
            |l| l.warehouses == p.warehouses,
            || {
                let l = load(&conn, p, &tables, stop, &say).map_err(named)?;
                let broken = violations(&conn, stop).map_err(named)?;
                if !broken.is_empty() {
                    return Err(named(Error::failed(format!(
                        "TPC-C consistency {} after the load",
                        broken.join("; ")
                    ))));
                }
                Ok(l)
            },
        )?;
        dbs.ready.insert(idx, (conn, loaded));
    }
    dbs.servers.settle(stop)?;
    Ok(dbs)
}

/// The warehouses and last-name constant of a database fathom loaded, if it is one.
fn loaded_at(conn: &Conn, stop: &AtomicBool) -> Option<(u32, u32)> {
    let row =
        mariadb::ask(conn, "SELECT warehouses, c_last FROM tpcc_load", "reading the record of an earlier load", stop)
            .ok()?;
    let mut f = row.split_whitespace().map(|v| v.parse().ok());
    Some((f.next()??, f.next()??))
}

/// What drops fathom's tables and routines from a database, if there.
fn drop_ours() -> String {
    let tables = format!("DROP TABLE IF EXISTS {};", TABLES.join(", "));
    let routines = ROUTINES.iter().map(|(kind, name)| format!("DROP {kind} IF EXISTS {name};"));
    std::iter::once(tables).chain(routines).collect()
}

/// Loads `p`'s warehouses into `conn`'s database (empty of other tables), its tables in
/// the server's table directories `tables` when it has any, in parallel sessions; with
/// `reuse`, a database loaded at as many warehouses is kept.
fn load(conn: &Conn, p: &Tpcc, tables: &[PathBuf], stop: &AtomicBool, progress: &dyn Fn(&str)) -> Result<Loaded> {
    let started = Instant::now();
    let warehouses = p.warehouses;
    if let Some((at, c_last)) = loaded_at(conn, stop).filter(|(at, _)| p.reuse && *at == warehouses) {
        progress(&format!("reusing the TPC-C database of {}", counted(at, "warehouse")));
        let per = mariadb::database_size(&mut mariadb::session(conn, true)?, stop)? / at as f64;
        return Ok(Loaded { warehouses, seconds: 0.0, bytes_per_warehouse: per, c_last, reused: true });
    }
    let mut c = mariadb::session(conn, true)?;
    c.run(&drop_ours(), stop)?;
    // the load's constant for C_LAST; the run's differs from it as clause 2.1.6.1 asks
    let c_last = (std::process::id() ^ started.elapsed().subsec_nanos()) % 256;
    let filled = fill(&mut c, conn, tables, (warehouses, c_last), stop, progress);
    if filled.is_err() && p.dsn.is_some() {
        // the user's database is left as it was found
        let _ = mariadb::script(conn, &drop_ours(), &AtomicBool::new(false));
    }
    filled?;
    let per = mariadb::database_size(&mut c, stop)? / warehouses as f64;
    let (secs, mb) = (started.elapsed().as_secs_f64(), per / 1e6);
    progress(&format!("loaded {} in {secs:.1} s, {mb:.0} MB per warehouse", counted(warehouses, "warehouse")));
    Ok(Loaded { warehouses, seconds: secs, bytes_per_warehouse: per, c_last, reused: false })
}

/// Creates and fills the tables of `warehouses` through `c` (on `conn`, in the table
/// directories `tables`) and parallel sessions, the customers' last names drawn with
/// constant `c_last`, and analyses them.
fn fill(
    c: &mut Client,
    conn: &Conn,
    tables: &[PathBuf],
    (warehouses, c_last): (u32, u32),
    stop: &AtomicBool,
    progress: &dyn Fn(&str),
) -> Result<()> {
    let schema = crate::drivers::table_disks::mariadb(SCHEMA, &super::load::BY_SIZE, tables);
    c.run(&[&schema, LOAD, TRANSACTIONS].concat(), stop)?;
    let sessions = crate::drivers::loading::sessions();
    progress(&format!("loading {} in {}", counted(warehouses, "TPC-C warehouse"), counted(sessions, "session")));
    let jobs = super::load::jobs(warehouses, c_last, "CALL");
    crate::drivers::loading::metered("loading", &jobs, sessions, stop, progress, || mariadb::session(conn, true))?;
    let record = format!("INSERT INTO tpcc_load VALUES ({warehouses}, {c_last}); ANALYZE TABLE {}", TABLES.join(", "));
    c.run(&record, stop).map(drop)
}

/// The conditions 1-4 that do not hold, each named.
fn violations(conn: &Conn, stop: &AtomicBool) -> Result<Vec<String>> {
    Ok(figures::conditions(&mariadb::script(conn, CONSISTENCY, stop)?))
}

impl Driver for TpccMariadbDriver {
    fn name(&self) -> &'static str {
        "tpcc-mariadb"
    }

    fn runs(&self, w: &Workload, _: Option<EngineKind>) -> bool {
        spec(w).is_some()
    }

    fn startup(&self) -> Duration {
        sysbench::STARTUP
    }

    fn check(&self, scenario: &Scenario, stop: &AtomicBool) -> Result<()> {
        if scenario.workloads.iter().any(|w| spec(w).is_some()) {
            sysbench::version().map_err(bad_input)?;
        }
        connect(scenario, stop).map_err(|e| bad_input_unless(stop, e))
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

    fn describe(&self, w: &Workload, _: &[Arc<DataFile>], _: u32, _: Option<EngineKind>) -> String {
        let Some(p) = spec(w) else { return w.runner() };
        let server = if p.dsn.is_some() { "the given MariaDB server" } else { "a throwaway MariaDB" };
        let (warehouses, clients) = (counted(p.warehouses, "warehouse"), counted(p.clients, "client"));
        format!("tpcc, {warehouses}, {clients}, {}, {}, on {server}", p.mix.describe(), p.home.describe())
    }
}

impl Ready for Databases {
    fn start(&self, cx: &LaunchContext) -> Result<Vec<(WorkerThread, String)>> {
        let Some((conn, loaded)) = self.ready.get(&cx.workload_idx).cloned() else {
            return Err(Error::failed(format!("{}: its TPC-C database was not loaded", cx.workload.name)));
        };
        spawn_program(cx, "tpcc", move |l| run(l, &conn, loaded))
    }

    fn stop(mut self: Box<Self>) -> Result<()> {
        self.servers.stop()
    }

    fn servers(&self) -> Vec<DbServer> {
        self.servers.servers(self.ready.iter().map(|(idx, (conn, _))| (*idx, conn)))
    }

    fn retire(&self, over: &[usize]) -> Vec<String> {
        self.servers.retire(over)
    }
}

/// sysbench's job for workload `l`: fathom's client with the run's constants.
fn job(l: &LaunchContext, p: &Tpcc, conn: &Conn, loaded: &Loaded) -> Result<Job> {
    let client = l.run_dir()?.write(&l.file_name("tpcc.lua")?, CLIENT)?;
    let [c_last, c_id, ol_i_id] = constants(l, loaded);
    let weights: Vec<String> = p.mix.weights().iter().map(u32::to_string).collect();
    let isolation = match p.isolation {
        Isolation::ReadCommitted => "READ COMMITTED",
        Isolation::RepeatableRead => "REPEATABLE READ",
        Isolation::Serializable => "SERIALIZABLE",
    };
    let env = [
        ("WAREHOUSES", p.warehouses.to_string()),
        ("CLIENTS", p.clients.to_string()),
        ("HOME", p.home.name().to_string()),
        ("C_LAST", c_last.to_string()),
        ("C_ID", c_id.to_string()),
        ("OL_I_ID", ol_i_id.to_string()),
        ("MAX_TRIES", MAX_TRIES.to_string()),
        ("ISOLATION", isolation.to_string()),
        ("WEIGHTS", weights.join(",")),
    ];
    let mut args = conn.sysbench_args();
    args.push(format!("--threads={}", p.clients));
    Ok(Job {
        test: client.display().to_string(),
        args,
        env: env.into_iter().map(|(k, v)| (format!("FATHOM_TPCC_{k}"), v)).collect(),
        ops: OPS.iter().map(|n| Op::named(n, Throughput::Tps)).collect(),
        profile_from: Some((l.begin_t() + l.workload.ramp.as_secs()) as u32),
    })
}

/// Runs workload `l` against `conn` with sysbench, then reads its figures and checks the
/// database.
fn run(l: &LaunchContext, conn: &Conn, loaded: Loaded) -> Result<()> {
    let w = &l.workload;
    let Some(p) = spec(w) else { return Err(Error::failed(format!("{}: not a tpcc workload", w.name))) };
    let job = job(l, p, conn, &loaded)?;
    measure(l, p, &Mariadb(conn), &loaded, || sysbench::drive(l, &job))
}

/// The database of a MariaDB connection.
pub(super) struct Mariadb<'a>(pub(super) &'a Conn);

impl Database for Mariadb<'_> {
    fn label(&self) -> &'static str {
        Dbms::Mariadb.label()
    }

    /// The server's commits and rollbacks (all its databases', as HammerDB reads them on
    /// MariaDB) and the districts' next order ids.
    fn read(&self, stop: &AtomicBool) -> Result<Reading> {
        let sql = "SELECT (SELECT SUM(d_next_o_id) FROM district), \
                   (SELECT SUM(variable_value) FROM information_schema.global_status \
                    WHERE variable_name IN ('COM_COMMIT', 'COM_ROLLBACK')), \
                   (SELECT variable_value FROM information_schema.global_status WHERE variable_name = 'COM_ROLLBACK')";
        Reading::parse(&mariadb::ask(self.0, sql, "reading the TPC-C counters", stop)?)
    }

    fn violations(&self, stop: &AtomicBool) -> Result<Vec<String>> {
        violations(self.0, stop)
    }

    fn since_load(&self, warehouses: u32, stop: &AtomicBool) -> Result<SinceLoad> {
        let sql = "SELECT (SELECT COUNT(*) FROM orders WHERE o_id > 3000), \
                   (SELECT COUNT(*) FROM orders WHERE o_id > 3000 AND o_all_local = 0), \
                   (SELECT COUNT(*) FROM history), (SELECT COUNT(*) FROM history WHERE h_c_w_id <> h_w_id), \
                   (SELECT COUNT(*) FROM orders WHERE o_id > 2100 AND o_carrier_id IS NOT NULL)";
        SinceLoad::parse(&mariadb::script(self.0, sql, stop)?, warehouses)
    }
}
