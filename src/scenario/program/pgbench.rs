//! `driver: pgbench`: PostgreSQL's pgbench runs TPC-B-like (or the user's own)
//! transactions against a throwaway cluster fathom creates on the storage under test, or
//! a server given by `dsn`. Its keys are pgbench's own options, named as in pgbench;
//! `crate::drivers::pgbench` runs it.

use super::dbms::Dbms;
use super::seam::{Keys, Measures, Program, ProgramSpec, Risk, ServerDirs, Spec};
use crate::error::{Error, Result};
use crate::metrics::Op;
use crate::metrics::format::counted;
use crate::metrics::summary::Throughput;
use crate::scenario::limits;
use crate::scenario::units::Size;
use crate::scenario::yaml::Value;
use indexmap::IndexMap;
use serde::Serialize;
use std::any::Any;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub struct PgbenchProgram;

/// `driver: pgbench`'s settings, checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pgbench {
    /// A libpq connection string or URI; `None`: a throwaway cluster fathom creates.
    pub dsn: Option<String>,
    /// pgbench's scale factor (`-s`): 100,000 accounts per unit, about 15 MB.
    pub scale: u32,
    /// Keep an existing database initialised at this scale instead of initialising again.
    pub reuse: bool,
    pub clients: u32,
    pub threads: u32,
    pub script: Script,
    /// Transactions per second for all clients together (pgbench's `--rate`).
    pub rate: Option<f64>,
    /// Server settings of the throwaway cluster (`shared_buffers: 1GB`), in order.
    pub settings: Vec<(String, String)>,
    /// The directory the throwaway cluster lives in (`target`): the storage under test.
    /// `None`: the run's own directory.
    pub target: Option<PathBuf>,
    /// The directory of its WAL (`log_target`), on a disk of its own; `None`: beside the data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_target: Option<PathBuf>,
    /// The directories its tables are spread over (`table_targets`), one per disk; empty:
    /// with the data.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub table_targets: Vec<PathBuf>,
}

/// What each transaction runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Script {
    /// One of pgbench's built-in scripts: `tpcb-like`, `simple-update`, `select-only`.
    Builtin(String),
    /// A custom script file as the scenario names it, and its text, read at load from
    /// the scenario's directory: pgbench runs a copy in the run's directory, never a
    /// file outside the one the user handed fathom (an agent, which runs no pgbench,
    /// reads none and keeps it empty).
    File { path: PathBuf, sql: String },
    /// A custom script given in the scenario (`sql:`), written to the run's directory.
    Sql(String),
}

/// pgbench's built-in scripts.
pub const BUILTIN_SCRIPTS: [&str; 3] = ["tpcb-like", "simple-update", "select-only"];

impl Program for PgbenchProgram {
    fn name(&self) -> &'static str {
        "pgbench"
    }

    fn keys(&self) -> &'static [&'static str] {
        &[
            "target",
            "log_target",
            "table_targets",
            "dsn",
            "scale",
            "reuse",
            "clients",
            "threads",
            "script",
            "sql",
            "rate",
            "settings",
        ]
    }

    fn concurrency(&self) -> &'static [&'static str] {
        // the clients, and the threads that drive them
        &["clients", "threads"]
    }

    fn settles(&self) -> &'static str {
        "a database's cache warms, and checkpoints and autovacuum come round, over minutes"
    }

    fn check(&self, keys: &Keys) -> Result<ProgramSpec> {
        let (dsn, dsn_at) = keys.line("dsn")?;
        if let Some(dsn) = &dsn {
            no_secret(dsn).map_err(|why| keys.fail(&dsn_at, &why.to_string()))?;
        }
        let (scale, _) = keys.count("scale", 1, 1_000_000)?;
        let (clients, _) = keys.count("clients", 1, 1024)?;
        let (threads, threads_at) = keys.count("threads", 1, 1024)?;
        if threads > clients {
            return Err(keys.fail(
                &threads_at,
                &format!("{threads} threads for {}: at most one each", counted(clients, "client")),
            ));
        }
        let (rate, rate_at) = keys.get::<f64>("rate")?;
        if let Some(r) = rate.filter(|r| !(*r > 0.0 && *r <= limits::MAX_RATE)) {
            let max = limits::MAX_RATE;
            return Err(keys
                .fail(&rate_at, &format!("{r} must be a positive number of transactions per second, at most {max}")));
        }
        let settings = settings(keys, dsn.is_some())?;
        let target = target(keys, dsn.is_some())?;
        let log_target = log_target(keys, dsn.is_some(), &target)?;
        let table_targets = table_targets(keys, dsn.is_some(), &target, &log_target)?;
        let why = "pgbench puts its tables in one tablespace (`--tablespace`) and its indexes in another \
                   (`--index-tablespace`)";
        tables_at_most(keys, &table_targets, 2, why)?;
        let (reuse, _) = keys.get::<bool>("reuse")?;
        let script = script(keys)?;
        let reuse = reuse.unwrap_or(false);
        Ok(ProgramSpec::new(Pgbench {
            dsn,
            scale,
            reuse,
            clients,
            threads,
            script,
            rate,
            settings,
            target,
            log_target,
            table_targets,
        }))
    }
}

/// `script` (one of pgbench's, or a file) or `sql` (the transaction itself), not both.
fn script(keys: &Keys) -> Result<Script> {
    let (script, script_at) = keys.line("script")?;
    let (sql, sql_at) = keys.get::<String>("sql")?;
    Ok(match (script, sql) {
        (Some(_), Some(_)) if keys.own_has("script") == keys.own_has("sql") => {
            return Err(keys.fail(&sql_at, "set `script` or `sql`, not both"));
        }
        (Some(_), Some(sql)) if keys.own_has("sql") => Script::Sql(sql),
        (Some(s), _) if BUILTIN_SCRIPTS.contains(&s.as_str()) => Script::Builtin(s),
        (Some(s), _) if s.contains('/') || s.ends_with(".sql") => {
            let sql = keys.input(&script_at, &s, "pgbench script")?.unwrap_or_default();
            Script::File { path: PathBuf::from(s), sql }
        }
        (Some(s), _) => {
            let msg = format!(
                "`{s}` is neither one of pgbench's scripts ({}) nor a file (a path, or NAME.sql)",
                BUILTIN_SCRIPTS.join(", ")
            );
            return Err(keys.fail(&script_at, &msg));
        }
        (None, Some(sql)) if sql.trim().is_empty() => {
            return Err(keys.fail(&sql_at, "is empty: give the SQL of one transaction"));
        }
        (None, Some(sql)) => Script::Sql(sql),
        (None, None) => Script::Builtin("tpcb-like".into()),
    })
}

/// The directory of the throwaway cluster (`target`): one, and none with a `dsn` (the
/// server is elsewhere); a `target` of the defaults does not apply to a `dsn` workload.
/// One on a kernel pseudo file system is refused.
pub fn target(keys: &Keys, has_dsn: bool) -> Result<Option<PathBuf>> {
    let (target, target_at) = keys.get::<Vec<String>>("target")?;
    Ok(match target.as_deref() {
        Some([one]) if !has_dsn => {
            keys.not_pseudo(Path::new(one), &target_at)?;
            Some(PathBuf::from(one))
        }
        Some([_]) if keys.own_has("target") => {
            return Err(keys.fail(&target_at, "places the throwaway cluster; with a `dsn` the server is elsewhere"));
        }
        Some([_]) | None => None,
        Some(_) => return Err(keys.fail(&target_at, "give one directory for the throwaway cluster")),
    })
}

/// The directory of the throwaway server's transaction log (`log_target`), on a disk of
/// its own: one, none with a `dsn` (the server is elsewhere), and not `target` itself
/// (the log would not be apart from the data). One on a kernel pseudo file system is
/// refused.
pub fn log_target(keys: &Keys, has_dsn: bool, data: &Option<PathBuf>) -> Result<Option<PathBuf>> {
    let (log, at) = keys.line("log_target")?;
    match log {
        None => Ok(None),
        Some(_) if has_dsn && keys.own_has("log_target") => {
            Err(keys.fail(&at, "places the throwaway server's log; with a `dsn` the server is elsewhere"))
        }
        Some(_) if has_dsn => Ok(None),
        Some(one) if data.as_deref() == Some(Path::new(&one)) => {
            Err(keys.fail(&at, "is `target` itself: give a directory on the disk the log is to have to itself"))
        }
        Some(one) => {
            keys.not_pseudo(Path::new(&one), &at)?;
            Ok(Some(PathBuf::from(one)))
        }
    }
}

/// The directories the throwaway server's tables are spread over (`table_targets`), one
/// per disk: none with a `dsn` (the server is elsewhere), and at least one. Each is an
/// existing directory, in which fathom makes one of its own: a missing one is a typo
/// caught before a server starts, not a directory to create. Each is given once and is
/// neither `target` nor `log_target`, or those tables would not be on a disk apart.
pub fn table_targets(
    keys: &Keys,
    has_dsn: bool,
    data: &Option<PathBuf>,
    log: &Option<PathBuf>,
) -> Result<Vec<PathBuf>> {
    let (dirs, at) = keys.get::<Vec<String>>("table_targets")?;
    match dirs {
        None => Ok(Vec::new()),
        Some(_) if has_dsn && keys.own_has("table_targets") => {
            Err(keys.fail(&at, "places the throwaway server's tables; with a `dsn` the server is elsewhere"))
        }
        Some(_) if has_dsn => Ok(Vec::new()),
        Some(dirs) if dirs.is_empty() => {
            Err(keys.fail(&at, "is empty: give one directory for each disk the tables are to be spread over"))
        }
        Some(dirs) => {
            let mut seen: Vec<PathBuf> = Vec::new();
            for dir in &dirs {
                let path = PathBuf::from(dir);
                let why = table_dir(&path, data, log, &seen);
                why.map_or(Ok(()), |why| Err(keys.fail(&at, &format!("`{dir}` {why}"))))?;
                keys.not_pseudo(&path, &at)?;
                seen.push(path);
            }
            Ok(seen)
        }
    }
}

/// Refuses more table directories (`table_targets`) than a runner can place tables in,
/// `why` saying what it can: a directory left unused would be recorded, and observed,
/// as storage under test.
pub fn tables_at_most(keys: &Keys, dirs: &[PathBuf], most: usize, why: &str) -> Result<()> {
    let at = keys.at("table_targets");
    match dirs.len() {
        n if n <= most => Ok(()),
        _ if most == 0 => Err(keys.fail(&at, &format!("{why}: leave `table_targets` out"))),
        n => Err(keys.fail(&at, &format!("gives {n} directories; {why}: give at most {most}"))),
    }
}

/// Why `dir` cannot hold tables apart (`table_targets`), given the data's and the log's
/// directories and the table directories before it; None when it can.
fn table_dir(dir: &Path, data: &Option<PathBuf>, log: &Option<PathBuf>, before: &[PathBuf]) -> Option<String> {
    // one directory written two ways (`/mnt/a/`, `/mnt/x/../a`) is still one
    let real = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let same = |other: &Option<PathBuf>| other.as_deref().is_some_and(|o| real(o) == real(dir));
    match std::fs::metadata(dir) {
        _ if !crate::scenario::text::one_line(&dir.to_string_lossy()) => Some("is more than one line".into()),
        Err(e) => Some(format!("cannot be used ({e}): give an existing directory")),
        Ok(m) if !m.is_dir() => Some("is not a directory".into()),
        _ if same(data) => Some("is `target` itself: give a directory on a disk the tables are to have".into()),
        _ if same(log) => Some("is `log_target`: the log's disk is the log's alone".into()),
        _ if before.iter().any(|b| same(&Some(b.clone()))) => {
            Some("is given twice: give each directory (one per disk) once".into())
        }
        Ok(_) => None,
    }
}

/// The throwaway cluster's server settings (`settings: {shared_buffers: 1GB}`), in order.
pub fn settings(keys: &Keys, has_dsn: bool) -> Result<Vec<(String, String)>> {
    let (settings, at) = keys.get::<IndexMap<String, Value>>("settings")?;
    let mut pairs = Vec::new();
    for (key, value) in settings.unwrap_or_default() {
        let text = match value {
            Value::Bool(b) => Some(if b { "on" } else { "off" }.to_string()),
            other => other.as_text(),
        };
        let key_at = [&at[..], std::slice::from_ref(&key)].concat();
        let Some(text) = text else {
            return Err(keys.fail(&key_at, "give a value such as 1GB, 0.9 or on"));
        };
        if !setting_name(&key) {
            let msg = format!("{key:?} is not a PostgreSQL setting name (letters, digits, `_` and `.`)");
            return Err(keys.fail(&at, &msg));
        }
        // written into postgresql.conf: a line break would start a setting of its own
        if text.chars().any(char::is_control) {
            return Err(keys.fail(&key_at, "expected one line of text, without control characters"));
        }
        pairs.push((key, text));
    }
    if !pairs.is_empty() && has_dsn {
        let msg = "configures the throwaway cluster fathom starts; a server given by `dsn` keeps its own";
        return Err(keys.fail(&at, msg));
    }
    Ok(pairs)
}

/// Whether `key` is a setting's name as postgresql.conf has it (`shared_buffers`,
/// `auto_explain.log_min_duration`): anything else could end its line or its key.
fn setting_name(key: &str) -> bool {
    key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

/// Refuses a connection string that holds a secret, in any form libpq reads one, or
/// anything the store would mask (the stored scenario must be the one that ran). The
/// message never quotes the string.
pub fn no_secret(dsn: &str) -> Result<()> {
    const STORED: &str = "fathom stores the scenario with the run";
    match crate::secrets::dsn_secret(dsn) {
        Err(why) => Err(Error::input(format!("is not a connection string libpq can read: {why}"))),
        Ok(Some("sslpassword")) => Err(Error::input(format!(
            "holds an sslpassword: give it in a service file (`service=NAME`, ~/.pg_service.conf) ({STORED})"
        ))),
        Ok(Some(_)) => Err(Error::input(format!("holds a password: give it in PGPASSWORD or ~/.pgpass ({STORED})"))),
        Ok(None) if crate::secrets::redact(dsn) != dsn => Err(Error::input(format!(
            "holds what looks like a password, which the store would mask ({STORED}): leave it out"
        ))),
        Ok(None) => Ok(()),
    }
}

impl Spec for Pgbench {
    fn program(&self) -> &'static dyn super::seam::Program {
        &PgbenchProgram
    }

    fn workers(&self) -> u32 {
        self.clients
    }

    fn stored(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        v["driver"] = "pgbench".into();
        v
    }

    fn measures(&self) -> Measures {
        Measures {
            unit: Throughput::Tps,
            ops: vec![Op::Txn],
            latency: true,
            mb_per_s: false,
            rate: self.rate.is_some(),
        }
    }

    fn rate(&self) -> Option<f64> {
        self.rate
    }

    /// A database that fits in shared_buffers or RAM: reads never reach storage. A
    /// custom script may only write (commit latency): its reads are not the point.
    fn risks(&self, memory_bytes: Option<u64>, _ramp: Duration) -> Vec<Risk> {
        if !matches!(self.script, Script::Builtin(_)) {
            return Vec::new();
        }
        let size = self.database_bytes();
        let Some(fits) = fits_in(size, self.shared_buffers().map(|b| ("shared_buffers", b)), memory_bytes) else {
            return Vec::new();
        };
        let message = format!(
            "a pgbench database at scale {} (about {}) fits in {fits}: after warm-up no read reaches storage, so \
             this run measures memory, not storage. For storage, raise `scale` past RAM (scale 100 is about 1.7 GB, \
             1000 about 15 GB)",
            self.scale,
            Size(size).human()
        );
        vec![Risk { rule: "pgbench-in-memory", warning: true, message }]
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

impl Pgbench {
    /// The `shared_buffers` of the throwaway cluster in bytes; `None` for a server given
    /// by `dsn` (its setting is its own) or a value fathom cannot read.
    pub fn shared_buffers(&self) -> Option<u64> {
        Dbms::Postgresql.cache_bytes(&self.dsn, &self.settings)
    }

    /// Size of the database at this scale in bytes: the field notes' table (scale 1 ≈
    /// 23 MB, 100 ≈ 1.7 GB, 1000 ≈ 15 GB) is about 15 MB per unit plus the catalog.
    pub fn database_bytes(&self) -> u64 {
        (8 + 15 * self.scale as u64) << 20
    }
}

/// Where a database of `size` bytes fits, as a lint says it: in the server's cache
/// (`shared_buffers`, `innodb_buffer_pool_size`: named with its size) or in the RAM; None
/// where it fits in neither and its reads reach storage.
pub fn fits_in(size: u64, cache: Option<(&str, u64)>, memory_bytes: Option<u64>) -> Option<String> {
    match (cache, memory_bytes) {
        (Some((name, bytes)), _) if size <= bytes => Some(format!("{name} ({})", Size(bytes).human())),
        (_, Some(ram)) if size < ram => Some(format!("the {} of RAM", Size(ram).human())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::{Scenario, Source};

    fn load(workload: &str) -> crate::error::Result<Scenario> {
        let text = format!("name: t\nworkloads:\n  db: {{duration: 5s, {workload}}}\n");
        Scenario::load(&Source { origin: "t.yaml".into(), text: &text }, &[])
    }

    #[test]
    fn table_targets_are_existing_directories_apart_each_runner_taking_what_it_can_place() {
        let dir = std::env::temp_dir().join(format!("fathom-table-targets-{}", std::process::id()));
        let (a, b, c, file) = (dir.join("a"), dir.join("b"), dir.join("c"), dir.join("f"));
        for d in [&a, &b, &c] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(&file, "").unwrap();
        let [a, b, c, file, dir] = [a, b, c, file, dir.clone()].map(|p| p.display().to_string());
        let s = load(&format!("driver: tpcc, table_targets: [{a}, {b}, {c}]")).unwrap();
        let dirs = s.workloads[0].program().unwrap().server_dirs();
        assert_eq!(dirs.tables, [&a, &b, &c].map(std::path::PathBuf::from));
        assert_eq!(dirs.all().count(), 3);
        for (workload, says) in [
            ("driver: tpcc, table_targets: []".to_string(), "is empty"),
            (format!("driver: tpcc, table_targets: [{a}, {a}/]"), "is given twice"),
            (format!("driver: tpcc, target: {a}, table_targets: [{a}]"), "is `target` itself"),
            (format!("driver: tpch, log_target: {b}, table_targets: [{a}, {b}]"), "is `log_target`"),
            (format!("driver: tpcc, table_targets: [{file}]"), "is not a directory"),
            (format!("driver: tpcc, table_targets: [{dir}/missing]"), "give an existing directory"),
            (format!("driver: pgbench, dsn: dbname=x, table_targets: [{a}]"), "with a `dsn` the server is elsewhere"),
            (format!("driver: tpcc, engine: hammerdb, table_targets: [{a}]"), "HammerDB builds its own schema"),
            (format!("driver: pgbench, table_targets: [{a}, {b}, {c}]"), "give at most 2"),
            (format!("driver: sysbench, table_targets: [{a}, {b}]"), "one `default_tablespace`: give at most 1"),
            (format!("driver: sysbench, dbms: mariadb, table_targets: [{a}]"), "leave `table_targets` out"),
        ] {
            let e = load(&workload).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("t.yaml:3") && e.contains("table_targets"), "{workload}: {e}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
