//! `driver: tpcc` (or `tprocc`, HammerDB's name): a TPC-C-like OLTP workload on
//! PostgreSQL or MariaDB (`dbms`), its five transactions as server-side functions or
//! procedures driven by pgbench on PostgreSQL and by sysbench on MariaDB, on a throwaway
//! server fathom creates on the storage under test or a server given by `dsn`. Each transaction type is an op of its own; `crate::drivers::tpcc` runs it.

use super::dbms::{Dbms, MysqlDsn, dbms};
use super::pgbench::{fits_in, log_target, no_secret, settings, table_targets, tables_at_most, target};
use super::seam::{Keys, Measures, Program, ProgramSpec, Risk, ServerDirs, Spec};
use crate::error::Result;
use crate::metrics::Op;
use crate::metrics::headline::{Figure, Headline};
use crate::metrics::summary::Throughput;
use crate::scenario::limits;
use crate::scenario::units::Size;
use serde::Serialize;
use std::any::Any;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub struct TpccProgram;

/// The five transaction types, as ops, in the order of their pgbench scripts.
pub const OPS: [&str; 5] = ["new-order", "payment", "delivery", "order-status", "stock-level"];

/// The most warehouses a workload may ask (about 10 TB).
const MAX_WAREHOUSES: i64 = 100_000;

/// About how large a freshly loaded warehouse is on disk with its indexes (measured:
/// 124 MB a warehouse at one, which carries the items and the catalog alone).
pub const WAREHOUSE_BYTES: u64 = 100 << 20;

/// How fast a cache warms: a run's reads are random 8 KiB pages, and a plausible
/// storage serves 10,000 of them a second at the depth a few clients give (80 MB/s,
/// about 1.3 s per warehouse). At 100 warehouses that is about 2 minutes, HammerDB's
/// default rampup for a database of that size.
const WARM_BYTES_PER_S: u64 = 10_000 * 8192;

/// `driver: tpcc`'s settings, checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tpcc {
    pub dbms: Dbms,
    /// A libpq connection string or URI for PostgreSQL, `mysql://USER@HOST:PORT/DB` for
    /// MariaDB; `None`: a throwaway server fathom creates.
    pub dsn: Option<String>,
    pub warehouses: u32,
    /// HammerDB's virtual users: pgbench's clients, each one connection.
    pub clients: u32,
    pub mix: Mix,
    pub home: Home,
    /// Transactions per second for all clients together (open loop, pgbench's `--rate`).
    pub rate: Option<f64>,
    /// Paced as TPC-C's terminals with their keying and think times are, in aggregate:
    /// `rate` is then the clients' over the mix's mean cycle.
    pub keying_thinking: bool,
    pub isolation: Isolation,
    /// With a `dsn`: keep tables already loaded at this many warehouses.
    pub reuse: bool,
    /// Server settings of the throwaway cluster, in order.
    pub settings: Vec<(String, String)>,
    /// The directory the throwaway cluster lives in: the storage under test.
    pub target: Option<PathBuf>,
    /// The directory of its transaction log (`log_target`), on a disk of its own; `None`:
    /// beside the data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_target: Option<PathBuf>,
    /// The directories its tables are spread over (`table_targets`), one per disk; empty:
    /// with the data.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub table_targets: Vec<PathBuf>,
    /// What runs the transactions; stored as the workload's `engine`.
    #[serde(skip)]
    pub engine: Engine,
    /// Where HammerDB's CLI is (`hammerdb_dir`): where to find a tool, not a setting
    /// of the workload, so not stored.
    #[serde(skip)]
    pub hammerdb_dir: Option<PathBuf>,
}

/// What runs a tpcc workload's transactions (`engine`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Engine {
    /// fathom's own transactions on PostgreSQL, driven by pgbench.
    Pgbench,
    /// fathom's own transactions on MariaDB, driven by sysbench.
    Sysbench,
    /// HammerDB's own TPROC-C, driven by its CLI (`hammerdbcli`): the peer's code,
    /// for a parity check and for users who trust HammerDB's numbers.
    Hammerdb,
}

impl Engine {
    /// Its name, as `engine:` gives it and a run stores it.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Pgbench => "pgbench",
            Engine::Sysbench => "sysbench",
            Engine::Hammerdb => "hammerdb",
        }
    }

    /// What runs fathom's own transactions on `dbms`.
    fn own(dbms: Dbms) -> Engine {
        match dbms {
            Dbms::Postgresql => Engine::Pgbench,
            Dbms::Mariadb => Engine::Sysbench,
        }
    }
}

/// How often each transaction type runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mix {
    /// HammerDB's: new-order 10, payment 10, delivery 1, order-status 1, stock-level 1.
    Hammerdb,
    /// TPC-C's minimum mix: 45/43/4/4/4.
    Spec,
}

/// TPC-C's keying time (clause 5.2.5.7) and least mean think time (clause 5.2.5.4) of
/// each transaction type, in seconds, in the order of [`OPS`].
const KEYING: [f64; 5] = [18.0, 3.0, 2.0, 2.0, 2.0];
const THINKING: [f64; 5] = [12.0, 12.0, 5.0, 10.0, 5.0];

impl Mix {
    /// Each transaction type's weight, in the order of [`OPS`].
    pub fn weights(self) -> [u32; 5] {
        match self {
            Mix::Hammerdb => [10, 10, 1, 1, 1],
            Mix::Spec => [45, 43, 4, 4, 4],
        }
    }

    /// The mix as a run's description says it.
    pub fn describe(self) -> &'static str {
        match self {
            Mix::Hammerdb => "HammerDB's mix",
            Mix::Spec => "TPC-C's mix",
        }
    }

    /// A terminal's mean keying and think time per transaction of this mix, in seconds
    /// (20.7 for HammerDB's, 21.0 for TPC-C's).
    pub fn cycle_seconds(self) -> f64 {
        let w = self.weights();
        let total: u32 = w.iter().sum();
        (0..5).map(|i| w[i] as f64 * (KEYING[i] + THINKING[i])).sum::<f64>() / total as f64
    }
}

/// Which warehouse a client's transactions are for.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Home {
    /// Each client its own warehouse, as a TPC-C terminal (client N: warehouse N mod W + 1).
    PerClient,
    /// Each client a warehouse drawn at random when it starts (HammerDB's default).
    Random,
    /// Every transaction a warehouse drawn at random among the client's own: client k's
    /// are k, k + clients, k + 2 clients, ... mod warehouses, as many as cover them all
    /// (HammerDB's "use all warehouses": its virtual users do not share warehouses).
    All,
}

impl Home {
    /// The homes as a run's description says them.
    pub fn describe(self) -> &'static str {
        match self {
            Home::PerClient => "a home warehouse per client",
            Home::Random => "random home warehouses",
            Home::All => "all warehouses",
        }
    }

    /// Its name, as `home:` gives it.
    pub fn name(self) -> &'static str {
        match self {
            Home::PerClient => "per-client",
            Home::Random => "random",
            Home::All => "all",
        }
    }
}

/// The transactions' isolation level.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Isolation {
    ReadCommitted,
    RepeatableRead,
    Serializable,
}

impl Isolation {
    /// The level as PostgreSQL's `default_transaction_isolation` takes it.
    pub fn setting(self) -> &'static str {
        match self {
            Isolation::ReadCommitted => "read committed",
            Isolation::RepeatableRead => "repeatable read",
            Isolation::Serializable => "serializable",
        }
    }
}

/// A key whose value is one of `choices` (its `(name, value)` pairs), `default` if unset.
fn choice<T: Copy>(keys: &Keys, key: &str, choices: &[(&str, T)], default: T) -> Result<T> {
    let (value, at) = keys.line(key)?;
    let Some(value) = value else { return Ok(default) };
    match choices.iter().find(|(name, _)| *name == value) {
        Some((_, v)) => Ok(*v),
        None => {
            let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
            Err(keys.fail(&at, &format!("`{value}` is not one of {}", names.join(", "))))
        }
    }
}

/// `warehouses`: a whole number, at least 1; 0 or less is refused with what it means.
fn warehouses(keys: &Keys) -> Result<u32> {
    let (n, at) = keys.get::<i64>("warehouses")?;
    let n = n.unwrap_or(1);
    if !(1..=MAX_WAREHOUSES).contains(&n) {
        let msg = format!(
            "{n} warehouses: give between 1 and {MAX_WAREHOUSES} (each is about {} of data)",
            Size(WAREHOUSE_BYTES).human()
        );
        return Err(keys.fail(&at, &msg));
    }
    Ok(n as u32)
}

impl Program for TpccProgram {
    fn name(&self) -> &'static str {
        "tpcc"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["tprocc"]
    }

    fn keys(&self) -> &'static [&'static str] {
        &[
            "dbms",
            "target",
            "log_target",
            "table_targets",
            "dsn",
            "warehouses",
            "clients",
            "mix",
            "home",
            "rate",
            "keying_thinking",
            "isolation",
            "reuse",
            "settings",
            "engine",
            "hammerdb_dir",
        ]
    }

    fn concurrency(&self) -> &'static [&'static str] {
        &["clients"]
    }

    fn settles(&self) -> &'static str {
        "a database's cache warms, and checkpoints and autovacuum come round, over minutes"
    }

    fn check(&self, keys: &Keys) -> Result<ProgramSpec> {
        let dbms = dbms(keys)?;
        let (dsn, dsn_at) = keys.line("dsn")?;
        match (&dsn, dbms) {
            (Some(dsn), Dbms::Postgresql) => no_secret(dsn).map_err(|why| keys.fail(&dsn_at, &why.to_string()))?,
            (Some(dsn), Dbms::Mariadb) => drop(MysqlDsn::parse(dsn).map_err(|why| keys.fail(&dsn_at, &why))?),
            (None, _) => {}
        }
        let warehouses = warehouses(keys)?;
        let (keying, keying_at) = keys.get::<bool>("keying_thinking")?;
        let keying_thinking = keying.unwrap_or(false);
        // a TPC-C warehouse has ten terminals
        let terminals = if keying_thinking { (10 * warehouses).min(1024) } else { 1 };
        let (clients, _) = keys.count("clients", terminals, 1024)?;
        let (rate, rate_at) = keys.get::<f64>("rate")?;
        if let Some(r) = rate.filter(|r| !(*r > 0.0 && *r <= limits::MAX_RATE)) {
            let max = limits::MAX_RATE;
            return Err(keys
                .fail(&rate_at, &format!("{r} must be a positive number of transactions per second, at most {max}")));
        }
        let mix = choice(keys, "mix", &[("hammerdb", Mix::Hammerdb), ("spec", Mix::Spec)], Mix::Hammerdb)?;
        let rate = match (keying_thinking, rate) {
            (true, Some(_)) => {
                return Err(
                    keys.fail(&keying_at, "paces the clients itself: set `keying_thinking` or `rate`, not both")
                );
            }
            (true, None) => Some(clients as f64 / mix.cycle_seconds()),
            (false, rate) => rate,
        };
        let homes = [Home::PerClient, Home::Random, Home::All].map(|h| (h.name(), h));
        let home = choice(keys, "home", &homes, Home::PerClient)?;
        let levels = [
            ("read-committed", Isolation::ReadCommitted),
            ("repeatable-read", Isolation::RepeatableRead),
            ("serializable", Isolation::Serializable),
        ];
        let isolation = choice(keys, "isolation", &levels, Isolation::ReadCommitted)?;
        let settings = settings(keys, dsn.is_some())?;
        let target = target(keys, dsn.is_some())?;
        let log_target = log_target(keys, dsn.is_some(), &target)?;
        let table_targets = table_targets(keys, dsn.is_some(), &target, &log_target)?;
        let reuse = keys.get::<bool>("reuse")?.0.unwrap_or(false);
        let engine = engine(keys, dbms)?;
        let (hammerdb_dir, hammerdb_at) = keys.line("hammerdb_dir")?;
        let hammerdb_dir = hammerdb_dir.map(PathBuf::from);
        if let Some(dir) = &hammerdb_dir {
            keys.not_pseudo(dir, &hammerdb_at)?;
        }
        let spec = Tpcc {
            dbms,
            dsn,
            warehouses,
            clients,
            mix,
            home,
            rate,
            keying_thinking,
            isolation,
            reuse,
            settings,
            target,
            log_target,
            table_targets,
            engine,
            hammerdb_dir,
        };
        match engine {
            Engine::Hammerdb => beyond_hammerdb(keys, &spec)?,
            Engine::Sysbench => beyond_sysbench(keys, &spec)?,
            Engine::Pgbench => {}
        }
        Ok(ProgramSpec::new(spec))
    }
}

/// `engine`: `pgbench` (the default) or `hammerdb`. Another engine that `defaults`
/// gives is the IO workloads' (`--engine fio` sets it there), not this one's.
/// `d` as HammerDB's `pg_duration` or `pg_rampup` takes it: minutes as a decimal number
/// (`0.2` for 12 s), or none when HammerDB cannot time it. Its driver waits in steps of
/// 6 s until the steps' milliseconds equal the minutes times 60,000, computed in floating
/// point, so only a duration that product reaches exactly ends: tenths of a minute up to 4
/// minutes (4.1 x 60,000 is not 246,000), and whole minutes.
pub fn hammerdb_minutes(d: Duration) -> Option<String> {
    let ms = d.as_millis();
    if !ms.is_multiple_of(6000) {
        return None;
    }
    let tenths = ms / 6000;
    let minutes = match tenths % 10 {
        0 => format!("{}", tenths / 10),
        t => format!("{}.{t}", tenths / 10),
    };
    // the product HammerDB's Tcl computes: both are IEEE doubles
    let exact = minutes.parse::<f64>().ok()? * 60000.0 == ms as f64;
    exact.then_some(minutes)
}

fn engine(keys: &Keys, dbms: Dbms) -> Result<Engine> {
    let (name, at) = keys.line("engine")?;
    let own = Engine::own(dbms);
    let engines = [own, Engine::Hammerdb];
    let found = name.as_deref().map(|n| engines.into_iter().find(|e| e.name() == n));
    match (found, name) {
        (Some(Some(e)), _) => Ok(e),
        (Some(None), Some(name)) if keys.own_has("engine") => {
            let names = engines.map(Engine::name);
            let hint = crate::suggest::hint(&name, names);
            let on = dbms.label();
            Err(keys.fail(
                &at,
                &format!("`{name}`{hint} is not one of {} (what runs the transactions on {on})", names.join(", ")),
            ))
        }
        _ => Ok(own),
    }
}

/// Refuses what fathom's transactions on MariaDB do not do, at the key that asks it.
fn beyond_sysbench(keys: &Keys, t: &Tpcc) -> Result<()> {
    if t.rate.is_some() {
        let key = if t.keying_thinking { "keying_thinking" } else { "rate" };
        let why = "on MariaDB the clients run flat out: sysbench times a paced transaction from when it starts, not \
                   from when it was due, so its latency would hide the queue (drop it)";
        return Err(keys.fail(&keys.at(key), why));
    }
    Ok(())
}

/// Refuses what HammerDB's TPROC-C cannot run as asked, at the key that asks it: the
/// same workload or none, since its figures stand beside fathom's.
fn beyond_hammerdb(keys: &Keys, t: &Tpcc) -> Result<()> {
    let refused = |key: &str, why: &str| -> Result<()> {
        let at = if keys.own_has(key) || !keys.own_has("engine") { keys.at(key) } else { keys.at("engine") };
        Err(keys.fail(&at, &format!("with `engine: hammerdb`: {why}")))
    };
    tables_at_most(
        keys,
        &t.table_targets,
        0,
        "with `engine: hammerdb`: HammerDB builds its own schema, in the default tablespace",
    )?;
    if t.dsn.is_some() {
        return refused(
            "dsn",
            "HammerDB builds its schema as a superuser it logs in as by password, which a scenario does not hold: it runs on a throwaway cluster only (drop `dsn`)",
        );
    }
    if t.rate.is_some() {
        let key = if t.keying_thinking { "keying_thinking" } else { "rate" };
        return refused(key, "HammerDB's virtual users run flat out here, unpaced (drop it)");
    }
    if t.mix != Mix::Hammerdb {
        return refused("mix", "HammerDB draws its own mix (`mix: hammerdb`)");
    }
    if t.isolation != Isolation::ReadCommitted {
        return refused("isolation", "HammerDB's transactions run at the server's default, read committed");
    }
    if t.home == Home::PerClient && t.clients < t.warehouses {
        return refused(
            "home",
            "HammerDB gives no virtual user a single home of its own among more warehouses: `home: all` (its \
             \"use all warehouses\") or `random` (a warehouse drawn by each virtual user)",
        );
    }
    Ok(())
}

impl Tpcc {
    /// The database's size as loaded.
    fn database_bytes(&self) -> u64 {
        self.warehouses as u64 * WAREHOUSE_BYTES
    }

    /// More clients than warehouses with a home each (ten per warehouse when paced as
    /// TPC-C's terminals).
    fn contention(&self) -> Option<Risk> {
        let per_warehouse = if self.keying_thinking { 10 } else { 1 };
        if self.home != Home::PerClient || self.clients <= self.warehouses * per_warehouse {
            return None;
        }
        let message = format!(
            "{} on {} with a home each: clients share a warehouse's rows and wait on each \
             other's locks, so this measures lock contention as much as storage (TPC-C has 10 terminals per \
             warehouse at most; give `warehouses` at least `clients`)",
            crate::metrics::format::counted(self.clients, "client"),
            crate::metrics::format::counted(self.warehouses, "warehouse")
        );
        Some(Risk { rule: "tpcc-contention", warning: true, message })
    }

    /// A database that fits in shared_buffers (a throwaway cluster's) or RAM.
    fn in_memory(&self, memory_bytes: Option<u64>) -> Option<Risk> {
        let size = self.database_bytes();
        let cache = self.dbms.cache_bytes(&self.dsn, &self.settings).map(|b| (self.dbms.cache().0, b));
        let fits = fits_in(size, cache, memory_bytes)?;
        let fit = if self.warehouses == 1 { "fits" } else { "fit" };
        let message = format!(
            "{} (about {}) {fit} in {fits}: after warm-up reads do not reach storage, so this run measures \
             commits and memory more than storage. For storage, raise `warehouses` past RAM (each is about {})",
            crate::metrics::format::counted(self.warehouses, "warehouse"),
            Size(size).human(),
            Size(WAREHOUSE_BYTES).human()
        );
        Some(Risk { rule: "tpcc-in-memory", warning: false, message })
    }

    /// A ramp shorter than the time to read once, at [`WARM_BYTES_PER_S`], what the
    /// cache will hold: the database, or as much of it as RAM holds.
    fn cold(&self, memory_bytes: Option<u64>, ramp: Duration) -> Option<Risk> {
        let cached = memory_bytes.map_or(self.database_bytes(), |ram| ram.min(self.database_bytes()));
        let warm = Duration::from_secs(cached.div_ceil(WARM_BYTES_PER_S));
        if ramp >= warm {
            return None;
        }
        let message = format!(
            "a ramp of {} s is shorter than the {} s the cache takes to warm (about {} read once in random 8 KiB \
             pages at 10,000 a second): the measured window starts with reads a warm cache would not make, so its \
             NOPM is low and its latency high. Give `ramp` at least {}s (HammerDB's default rampup is 2 minutes)",
            ramp.as_secs(),
            warm.as_secs(),
            Size(cached).human(),
            warm.as_secs()
        );
        Some(Risk { rule: "tpcc-short-ramp", warning: true, message })
    }
}

impl Spec for Tpcc {
    fn program(&self) -> &'static dyn Program {
        &TpccProgram
    }

    fn workers(&self) -> u32 {
        self.clients
    }

    fn stored(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        v["driver"] = "tpcc".into();
        v
    }

    fn measures(&self) -> Measures {
        let ops = OPS.iter().map(|name| Op::named(name, Throughput::Tps)).collect();
        // HammerDB's latencies come as its time profile over the run, not per second
        let latency = self.engine != Engine::Hammerdb;
        Measures { unit: Throughput::Tps, ops, latency, mb_per_s: false, rate: self.rate.is_some() }
    }

    fn rate(&self) -> Option<f64> {
        self.rate
    }

    fn runner(&self) -> &'static str {
        match self.engine {
            Engine::Pgbench | Engine::Sysbench => "tpcc",
            Engine::Hammerdb => "hammerdb",
        }
    }

    /// HammerDB counts its rampup and duration in minutes, in steps of 6 s (see
    /// [`hammerdb_minutes`]).
    fn timing(&self, duration: Duration, ramp: Duration) -> std::result::Result<(), (&'static str, String)> {
        if self.engine != Engine::Hammerdb {
            return Ok(());
        }
        let why = |what: &str, d: Duration| {
            format!(
                "{}s: HammerDB (`engine: hammerdb`) times its {what} in minutes, in steps of 6 s that its \
                 timer reaches exactly: 6s, 12s, ... up to 4m, and whole minutes",
                d.as_secs_f64()
            )
        };
        if duration.is_zero() || hammerdb_minutes(duration).is_none() {
            return Err(("duration", why("duration", duration)));
        }
        if hammerdb_minutes(ramp).is_none() {
            return Err(("ramp", why("rampup", ramp)));
        }
        Ok(())
    }

    /// More clients than warehouses with a home each: clients share warehouse and
    /// district rows and wait on each other's locks. A database in memory: reads never
    /// reach storage. A ramp shorter than warming the cache takes: the window measures
    /// the warm-up.
    fn risks(&self, memory_bytes: Option<u64>, ramp: Duration) -> Vec<Risk> {
        [self.contention(), self.in_memory(memory_bytes), self.cold(memory_bytes, ramp)].into_iter().flatten().collect()
    }

    /// On other hosts, each its own throwaway cluster; a `dsn`'s server stays here, its
    /// database loaded once.
    fn on_host(&self, target: Option<&Path>) -> Option<ProgramSpec> {
        let target = target.map(Path::to_path_buf).or_else(|| self.target.clone());
        self.dsn.is_none().then(|| ProgramSpec::new(Tpcc { target, ..self.clone() }))
    }

    /// HammerDB's figures: new orders per minute, from the database's transactions per
    /// minute, new-order leading.
    fn headline(&self) -> Headline {
        Headline {
            figure: Figure::count("tpcc", "nopm", "NOPM"),
            beside: vec![Figure::count("tpcc", "tpm", "TPM")],
            leading_op: Some(OPS[0].into()),
            rated: true,
        }
    }

    fn serves_database(&self) -> bool {
        true
    }

    fn server_given(&self) -> bool {
        self.dsn.is_some()
    }

    fn server_dirs(&self) -> ServerDirs {
        ServerDirs { data: self.target.clone(), log: self.log_target.clone(), tables: self.table_targets.clone() }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{Scenario, Source};

    fn load(keys: &str) -> Result<Scenario> {
        let text = format!("name: t\nworkloads:\n  oltp: {{driver: tprocc, duration: 5s{keys}}}\n");
        Scenario::load(&Source { origin: "t.yaml".into(), text: &text }, &[])
    }

    /// A tpcc workload of `keys` alone, its duration among them.
    fn bare(keys: &str) -> Result<Scenario> {
        let text = format!("name: t\nworkloads:\n  oltp: {{driver: tpcc{keys}}}\n");
        Scenario::load(&Source { origin: "t.yaml".into(), text: &text }, &[])
    }

    fn spec(s: &Scenario) -> Tpcc {
        s.workloads[0].program().unwrap().get::<Tpcc>().unwrap().clone()
    }

    #[test]
    fn its_keys_and_defaults() {
        let t = spec(&load(", warehouses: 4, clients: 8, mix: spec, home: all, isolation: serializable").unwrap());
        assert_eq!(
            (t.warehouses, t.clients, t.mix, t.home, t.isolation),
            (4, 8, Mix::Spec, Home::All, Isolation::Serializable)
        );
        let t = spec(&load("").unwrap());
        assert_eq!((t.warehouses, t.clients, t.mix, t.home), (1, 1, Mix::Hammerdb, Home::PerClient));
        assert_eq!(t.stored()["driver"], "tpcc");
        assert_eq!(Mix::Hammerdb.weights().iter().sum::<u32>(), 23);
        let ops: Vec<&str> = t.measures().ops.iter().map(|o| o.as_str()).collect();
        assert_eq!(ops, OPS);
    }

    #[test]
    fn bad_values_are_refused_at_their_key() {
        for (keys, says) in [
            (", warehouses: 0", "0 warehouses: give between 1 and 100000"),
            (", warehouses: -2", "-2 warehouses"),
            (", mix: tpch", "`tpch` is not one of hammerdb, spec"),
            (", home: mine", "`mine` is not one of per-client, random, all"),
            (", isolation: snapshot", "`snapshot` is not one of read-committed"),
            (", rate: 0", "must be a positive number"),
            (", dsn: 'host=db', settings: {fsync: off}", "configures the throwaway cluster"),
            (", scale: 10", "does not apply to `driver: tprocc`"),
            (", keying_thinking: true, rate: 5", "set `keying_thinking` or `rate`, not both"),
        ] {
            let e = load(keys).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("t.yaml"), "{keys}: {e}");
        }
    }

    #[test]
    fn on_mariadb_sysbench_runs_fathom_s_transactions_and_what_it_cannot_do_is_refused() {
        let t = spec(&load(", dbms: mariadb, dsn: 'mysql://bench@db/shop'").unwrap());
        assert_eq!((t.dbms, t.engine, t.runner()), (Dbms::Mariadb, Engine::Sysbench, "tpcc"));
        assert_eq!(t.stored()["dbms"], "mariadb");
        assert!(t.measures().latency);
        assert_eq!(spec(&load("").unwrap()).engine, Engine::Pgbench);
        for (keys, says) in [
            (
                ", dbms: mariadb, engine: pgbench",
                "`pgbench` is not one of sysbench, hammerdb (what runs the transactions on MariaDB)",
            ),
            (", engine: sysbench", "`sysbench` is not one of pgbench, hammerdb"),
            (", dbms: mariadb, engine: hammerdb, dsn: 'mysql://bench@db/shop'", "it runs on a throwaway cluster only"),
            (", dbms: mariadb, rate: 50", "on MariaDB the clients run flat out"),
            (", dbms: mariadb, keying_thinking: true", "on MariaDB the clients run flat out"),
            (", dbms: mariadb, dsn: 'host=db'", "expected mysql://USER@HOST"),
            (", dbms: mariadb, dsn: 'mysql://bench:pw@db/shop'", "MYSQL_PWD"),
            (", dbms: oracle", "`oracle` is not a database fathom runs"),
        ] {
            let e = load(keys).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("t.yaml:"), "{keys}: {e}");
        }
    }

    #[test]
    fn keying_and_thinking_pace_ten_terminals_a_warehouse() {
        assert!((Mix::Hammerdb.cycle_seconds() - 476.0 / 23.0).abs() < 1e-9);
        assert!((Mix::Spec.cycle_seconds() - 20.99).abs() < 1e-9);
        let t = spec(&load(", warehouses: 2, keying_thinking: true").unwrap());
        assert_eq!((t.clients, t.keying_thinking), (20, true));
        assert!((t.rate.unwrap() - 20.0 * 23.0 / 476.0).abs() < 1e-9 && t.measures().rate);
        let t = spec(&load(", warehouses: 2, keying_thinking: true, clients: 4, mix: spec").unwrap());
        assert!((t.rate.unwrap() - 4.0 / 20.99).abs() < 1e-9);
    }

    const WARM: Duration = Duration::from_secs(3600);

    #[test]
    fn contention_and_memory_are_risks() {
        let t = spec(&load(", warehouses: 2, clients: 8").unwrap());
        let rules: Vec<&str> = t.risks(Some(64 << 30), WARM).iter().map(|r| r.rule).collect();
        assert_eq!(rules, ["tpcc-contention", "tpcc-in-memory"]);
        let t = spec(&load(", warehouses: 2, keying_thinking: true").unwrap());
        assert!(t.risks(Some(1 << 20), WARM).is_empty());
        let t = spec(&load(", warehouses: 1000, clients: 8, home: random").unwrap());
        assert!(t.risks(Some(16 << 30), WARM).is_empty());
    }

    #[test]
    fn a_ramp_shorter_than_reading_the_cache_once_is_a_risk() {
        let rules = |t: &Tpcc, ram: u64, ramp: u64| -> Vec<&str> {
            t.risks(Some(ram), Duration::from_secs(ramp))
                .iter()
                .map(|r| r.rule)
                .filter(|r| *r != "tpcc-in-memory")
                .collect()
        };
        // 100 warehouses, 10,000 MiB, read at 80 MB/s: 128 s
        let t = spec(&load(", warehouses: 100, clients: 8").unwrap());
        assert_eq!(rules(&t, 64 << 30, 127), ["tpcc-short-ramp"]);
        assert!(rules(&t, 64 << 30, 128).is_empty());
        let risks = t.risks(Some(64 << 30), Duration::from_secs(10));
        let said = &risks.iter().find(|r| r.rule == "tpcc-short-ramp").unwrap().message;
        assert!(said.contains("a ramp of 10 s is shorter than the 128 s") && said.contains("at least 128s"), "{said}");
        // past RAM, the cache holds RAM's worth: 4 GiB at 80 MB/s is 53 s
        assert_eq!(rules(&t, 4 << 30, 52), ["tpcc-short-ramp"]);
        assert!(rules(&t, 4 << 30, 53).is_empty());
        // the built-in's 4 warehouses warm within its 10 s ramp
        let t = spec(&load(", warehouses: 4, clients: 4").unwrap());
        assert!(rules(&t, 64 << 30, 10).is_empty() && !rules(&t, 64 << 30, 5).is_empty());
    }

    #[test]
    fn hammerdb_is_given_minutes_its_timer_reaches_exactly() {
        let m = |secs| hammerdb_minutes(Duration::from_secs(secs));
        assert_eq!(
            [m(6), m(12), m(60), m(90), m(240), m(300)].map(Option::unwrap),
            ["0.1", "0.2", "1", "1.5", "4", "5"]
        );
        // not a step of 6 s, and 4.1 minutes, which HammerDB's timer would pass forever
        assert_eq!((m(7), m(246), hammerdb_minutes(Duration::from_millis(6500))), (None, None, None));
        assert_eq!(m(0).as_deref(), Some("0"), "no rampup");
    }

    #[test]
    fn hammerdb_runs_the_same_workload_or_refuses_it_at_its_key() {
        let t = spec(&bare(", engine: hammerdb, clients: 2, duration: 2m, ramp: 1m").unwrap());
        assert_eq!((t.engine, t.runner(), t.measures().latency), (Engine::Hammerdb, "hammerdb", false));
        assert_eq!(t.stored().get("engine"), None, "the workload stores its runner as `engine`");
        let t = spec(&bare(", duration: 1s").unwrap());
        assert_eq!((t.engine, t.runner(), t.measures().latency), (Engine::Pgbench, "tpcc", true));
        for (keys, says) in [
            (", engine: hammerdb, duration: 100s", "100s: HammerDB (`engine: hammerdb`) times its duration in minutes"),
            (", engine: hammerdb, duration: 1m, ramp: 31s", "times its rampup in minutes, in steps of 6 s"),
            (", engine: hammerdb, duration: 246s", "6s, 12s, ... up to 4m, and whole minutes"),
            (", engine: hammerdb, duration: 1m, mix: spec", "oltp.mix: with `engine: hammerdb`: HammerDB draws"),
            (", engine: hammerdb, duration: 1m, rate: 50", "oltp.rate: with `engine: hammerdb`"),
            (", engine: hammerdb, duration: 1m, dsn: 'host=db'", "it runs on a throwaway cluster only"),
            (", engine: hammerdb, duration: 1m, isolation: serializable", "read committed"),
            (", engine: hammerdb, duration: 1m, warehouses: 4, clients: 2", "oltp.engine: with `engine: hammerdb`"),
            (", engine: hammerdb, duration: 1m, warehouses: 4, home: per-client", "oltp.home: with"),
            (", engine: fio, duration: 1s", "`fio` is not one of pgbench, hammerdb"),
        ] {
            let e = bare(keys).unwrap_err().to_string();
            assert!(e.contains(says), "{keys}: {e}");
        }
        // more warehouses than virtual users: all of them, or a random one each
        let t = spec(&bare(", engine: hammerdb, duration: 1m, warehouses: 4, home: all").unwrap());
        assert_eq!(t.home, Home::All);
    }

    #[test]
    fn an_io_engine_in_defaults_is_the_io_workloads() {
        let text = "name: t\ndefaults: {engine: psync, duration: 1m}\nworkloads:\n  oltp: {driver: tpcc}\n";
        let s = Scenario::load(&Source { origin: "t.yaml".into(), text }, &[]).unwrap();
        assert_eq!(spec(&s).engine, Engine::Pgbench);
        let s = Scenario::load(&Source { origin: "t.yaml".into(), text }, &["engine=hammerdb".parse().unwrap()]);
        assert_eq!(spec(&s.unwrap()).engine, Engine::Hammerdb);
        let text = "name: t\nworkloads:\n  io: {target: /tmp, engine: hammerdb, duration: 1s}\n";
        let e = Scenario::load(&Source { origin: "t.yaml".into(), text }, &[]).unwrap_err().to_string();
        assert!(e.contains("`hammerdb` is not an IO engine: one of io_uring, psync, null, fio"), "{e}");
        assert!(e.contains("`driver: tpcc`"), "{e}");
    }
}
