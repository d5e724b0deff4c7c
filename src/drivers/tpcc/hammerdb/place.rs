//! Where HammerDB's TPROC-C runs: a throwaway PostgreSQL cluster's database or a
//! throwaway MariaDB server's, and what differs between them for HammerDB (its `dbset db`
//! and its settings' prefix, how it connects, its procedures' names) and for fathom (how
//! it counts the procedures' calls each second, and reads the figures).

use crate::drivers::client::Client;
use crate::drivers::mariadb::{self, Conn};
use crate::drivers::postgres;
use crate::drivers::tpcc::mariadb::Mariadb;
use crate::drivers::tpcc::{Database, Postgres};
use crate::error::{Error, Result};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

/// A workload's database HammerDB runs in.
#[derive(Clone)]
pub enum Place {
    /// A PostgreSQL cluster's: the directory of its socket, its port, and the database as
    /// the cluster's superuser reaches it, for fathom's readings.
    Postgres { host: PathBuf, port: u16, database: String, dsn: String },
    /// A MariaDB server's, as fathom's OS user reaches it through the server's socket.
    Mariadb { conn: Conn },
}

impl Place {
    /// HammerDB's prefix of its settings for this DBMS (`pg_count_ware`, `maria_count_ware`).
    pub fn prefix(&self) -> &'static str {
        match self {
            Place::Postgres { .. } => "pg",
            Place::Mariadb { .. } => "maria",
        }
    }

    /// The commands every script starts with: TPROC-C on this database. The passwords are
    /// none: a throwaway server admits fathom's OS user by its socket's peer credentials
    /// and ignores them.
    pub fn connection(&self) -> String {
        match self {
            Place::Postgres { host, port, database, .. } => format!(
                "dbset db pg\ndbset bm TPC-C\ndiset connection pg_host {{{}}}\ndiset connection pg_port {port}\n\
                 diset connection pg_sslmode disable\ndiset tpcc pg_superuser {}\ndiset tpcc pg_superuserpass unused\n\
                 diset tpcc pg_defaultdbase postgres\ndiset tpcc pg_user {}\ndiset tpcc pg_pass unused\n\
                 diset tpcc pg_dbase {database}\ndiset tpcc pg_storedprocs true\ndiset tpcc pg_partition false\n",
                host.display(),
                postgres::SUPERUSER,
                postgres::SCHEMA_OWNER
            ),
            // HammerDB takes the socket when the host is localhost
            Place::Mariadb { conn } => format!(
                "dbset db maria\ndbset bm TPC-C\ndiset connection maria_host localhost\n\
                 diset connection maria_socket {{{}}}\ndiset tpcc maria_user {}\ndiset tpcc maria_pass unused\n\
                 diset tpcc maria_dbase {}\ndiset tpcc maria_storage_engine innodb\ndiset tpcc maria_partition false\n\
                 diset tpcc maria_no_stored_procs false\n",
                conn.socket.as_ref().map(|s| s.display().to_string()).unwrap_or_default(),
                conn.user,
                conn.database
            ),
        }
    }

    /// The driver's setting that leaves the database's maintenance alone while it runs.
    pub fn no_maintenance(&self) -> &'static str {
        match self {
            Place::Postgres { .. } => "diset tpcc pg_vacuum false\n",
            Place::Mariadb { .. } => "diset tpcc maria_purge false\n",
        }
    }

    /// What fathom reads of the database around the run.
    pub fn database(&self) -> Box<dyn Database + '_> {
        match self {
            Place::Postgres { dsn, .. } => Box::new(Postgres(dsn)),
            Place::Mariadb { conn } => Box::new(Mariadb(conn)),
        }
    }

    /// A session with the database, kept by the sampler for its run.
    pub fn session(&self) -> Result<Client> {
        match self {
            Place::Postgres { dsn, .. } => postgres::session(dsn),
            Place::Mariadb { conn } => mariadb::session(conn, true),
        }
    }

    /// The calls so far of HammerDB's procedures named `procs` (in any case), in their
    /// order, asked through `c` ([`Place::session`]): PostgreSQL counts them in
    /// `pg_stat_user_functions` (`track_functions`), MariaDB in its performance schema's
    /// summary by program.
    pub fn calls(&self, c: &mut Client, procs: &[&str; 5], stop: &AtomicBool) -> Result<[u64; 5]> {
        let sql = match self {
            Place::Postgres { .. } => "SELECT funcname || ' ' || calls FROM pg_stat_user_functions".to_string(),
            Place::Mariadb { conn } => format!(
                "SELECT object_name, count_star FROM performance_schema.events_statements_summary_by_program \
                 WHERE object_type = 'PROCEDURE' AND object_schema = '{}'",
                conn.database
            ),
        };
        let out = c.ask(&sql, "reading the procedures' calls", stop)?;
        let mut n = [0; 5];
        for line in out.lines() {
            let mut f = line.split_whitespace();
            if let (Some(name), Some(count)) = (f.next(), f.next().and_then(|c| c.parse::<u64>().ok()))
                && let Some(i) = procs.iter().position(|p| p.eq_ignore_ascii_case(name))
            {
                n[i] += count;
            }
        }
        Ok(n)
    }

    /// Which server and database this is, to build each once.
    pub fn key(&self) -> String {
        match self {
            Place::Postgres { dsn, .. } => dsn.clone(),
            Place::Mariadb { conn } => conn.key(),
        }
    }

    /// The database's size in bytes.
    pub fn size(&self, stop: &AtomicBool) -> Result<f64> {
        match self {
            Place::Postgres { dsn, .. } => postgres::database_size(&mut postgres::session(dsn)?, stop),
            Place::Mariadb { conn } => mariadb::database_size(&mut mariadb::session(conn, true)?, stop),
        }
        .map_err(|e| Error::failed(format!("reading the size of HammerDB's database: {e}")))
    }
}
