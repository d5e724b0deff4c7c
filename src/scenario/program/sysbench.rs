//! `driver: sysbench`: sysbench's OLTP tests (`oltp_read_write` and its kin) against
//! PostgreSQL or MariaDB (`dbms`): a throwaway server fathom creates on the storage under
//! test, or a server given by `dsn`. Its keys are sysbench's own options, named as in sysbench (`tables`,
//! `table_size`, `threads`); `crate::drivers::sysbench` runs it.

use super::dbms::{Dbms, dbms};
use super::pgbench::{fits_in, log_target, no_secret, settings, table_targets, tables_at_most, target};
use super::seam::{Keys, Measures, Program, ProgramSpec, Risk, ServerDirs, Spec};
use crate::error::Result;
use crate::metrics::Op;
use crate::metrics::format::counted;
use crate::metrics::summary::Throughput;
use crate::scenario::units::Size;
use serde::Serialize;
use std::any::Any;
use std::path::PathBuf;
use std::time::Duration;

pub struct SysbenchProgram;

/// `driver: sysbench`'s settings, checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sysbench {
    pub dbms: Dbms,
    /// Where the server is: a libpq connection string or URI for PostgreSQL,
    /// `mysql://USER@HOST:PORT/DB` for MariaDB; `None`: a throwaway server fathom creates.
    pub dsn: Option<String>,
    /// One of sysbench's OLTP tests ([`TESTS`]).
    pub test: String,
    /// How many `sbtestN` tables (`--tables`).
    pub tables: u32,
    /// Rows in each table (`--table-size`).
    pub table_size: u32,
    /// sysbench's threads, each with its own connection (`--threads`).
    pub threads: u32,
    /// Keep tables an earlier run prepared at this size instead of preparing again.
    pub reuse: bool,
    /// Server settings of the throwaway cluster, in order.
    pub settings: Vec<(String, String)>,
    /// The directory of the throwaway cluster (`target`); `None`: the run's directory.
    pub target: Option<PathBuf>,
    /// The directory of its transaction log (`log_target`), on a disk of its own; `None`:
    /// beside the data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_target: Option<PathBuf>,
    /// The directories its tables are spread over (`table_targets`), one per disk; empty:
    /// with the data.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub table_targets: Vec<PathBuf>,
}

/// sysbench's OLTP tests, as Debian's sysbench 1.0.20 ships them: each `event` one
/// transaction (or, where it says so, one statement).
pub const TESTS: [&str; 9] = [
    "oltp_read_write",
    "oltp_read_only",
    "oltp_write_only",
    "oltp_point_select",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_insert",
    "oltp_delete",
    "select_random_points",
];

/// About how many bytes one row of an `sbtest` table takes in PostgreSQL, its primary
/// key and secondary index with it (measured: 10,000 rows, 2.4 MB).
const ROW_BYTES: u64 = 240;

impl Program for SysbenchProgram {
    fn name(&self) -> &'static str {
        "sysbench"
    }

    fn keys(&self) -> &'static [&'static str] {
        &[
            "dbms",
            "target",
            "log_target",
            "table_targets",
            "dsn",
            "test",
            "tables",
            "table_size",
            "threads",
            "reuse",
            "settings",
        ]
    }

    fn concurrency(&self) -> &'static [&'static str] {
        &["threads"]
    }

    fn settles(&self) -> &'static str {
        "a database's cache warms, and checkpoints and autovacuum come round, over minutes"
    }

    fn check(&self, keys: &Keys) -> Result<ProgramSpec> {
        let dbms = dbms(keys)?;
        let (dsn, dsn_at) = keys.line("dsn")?;
        match (&dsn, dbms) {
            (Some(dsn), Dbms::Postgresql) => no_secret(dsn).map_err(|why| keys.fail(&dsn_at, &why.to_string()))?,
            (Some(dsn), Dbms::Mariadb) => {
                super::dbms::MysqlDsn::parse(dsn).map_err(|why| keys.fail(&dsn_at, &why))?;
            }
            (None, _) => {}
        }
        let (test, test_at) = keys.line("test")?;
        let test = test.unwrap_or_else(|| TESTS[0].to_string());
        if !TESTS.contains(&test.as_str()) {
            return Err(keys.fail(&test_at, &format!("`{test}` is not one of sysbench's tests: {}", TESTS.join(", "))));
        }
        let (tables, _) = keys.count("tables", 1, 1000)?;
        let (table_size, _) = keys.count("table_size", 10_000, 1_000_000_000)?;
        let (threads, _) = keys.count("threads", 1, 1024)?;
        let settings = settings(keys, dsn.is_some())?;
        let target = target(keys, dsn.is_some())?;
        let log_target = log_target(keys, dsn.is_some(), &target)?;
        let table_targets = table_targets(keys, dsn.is_some(), &target, &log_target)?;
        let (most, why) = match dbms {
            Dbms::Postgresql => {
                (1, "sysbench makes its own tables, which fathom places by the database's one `default_tablespace`")
            }
            Dbms::Mariadb => {
                (0, "sysbench makes its own tables and takes no table options for MariaDB to place them by")
            }
        };
        tables_at_most(keys, &table_targets, most, why)?;
        let reuse = keys.get::<bool>("reuse")?.0.unwrap_or(false);
        Ok(ProgramSpec::new(Sysbench {
            dbms,
            dsn,
            test,
            tables,
            table_size,
            threads,
            reuse,
            settings,
            target,
            log_target,
            table_targets,
        }))
    }
}

impl Spec for Sysbench {
    fn program(&self) -> &'static dyn Program {
        &SysbenchProgram
    }

    fn workers(&self) -> u32 {
        self.threads
    }

    fn stored(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        v["driver"] = "sysbench".into();
        v
    }

    fn measures(&self) -> Measures {
        Measures { unit: Throughput::Tps, ops: vec![Op::Txn], latency: true, mb_per_s: false, rate: false }
    }

    /// Tables that fit in shared_buffers or RAM: after warm-up no read reaches storage.
    fn risks(&self, memory_bytes: Option<u64>, _ramp: Duration) -> Vec<Risk> {
        let size = self.database_bytes();
        let Some(fits) = fits_in(size, self.cache_bytes().map(|b| (self.dbms.cache().0, b)), memory_bytes) else {
            return Vec::new();
        };
        let message = format!(
            "{} of {} rows (about {}) fit in {fits}: after warm-up no read reaches storage, so this run measures \
             memory, not storage. For storage, raise `tables` or `table_size` past RAM (a million rows is about {})",
            counted(self.tables, "table"),
            self.table_size,
            Size(size).human(),
            Size(ROW_BYTES * 1_000_000).human()
        );
        vec![Risk { rule: "sysbench-in-memory", warning: true, message }]
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

impl Sysbench {
    /// The tables' size in bytes, about.
    pub fn database_bytes(&self) -> u64 {
        self.tables as u64 * self.table_size as u64 * ROW_BYTES
    }

    /// The memory the throwaway server caches pages in, in bytes (see [`Dbms::cache_bytes`]).
    pub fn cache_bytes(&self) -> Option<u64> {
        self.dbms.cache_bytes(&self.dsn, &self.settings)
    }

    /// The database its tables live in on a throwaway cluster: one per shape, so that
    /// `reuse` finds tables of the size asked.
    pub fn database(&self) -> String {
        format!("sbtest_{}x{}", self.tables, self.table_size)
    }
}
