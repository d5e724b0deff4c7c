//! The processes a run has running, fathom's own included, so that a fathom that dies
//! (SIGKILL, a crash, a second Ctrl-C) does not leave its throwaway PostgreSQL or
//! `iperf3 -s` running forever: the next `fathom run` finds the run still `running`
//! with its fathom gone, stops what it left (see `crate::children`), removes the
//! directories it would have removed (its throwaway clusters') and marks it aborted.

use super::connection::{Status, Store};
use crate::error::Result;
use rusqlite::params;

/// One process a run started (or the run's fathom, `what` = [`FATHOM`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessRow {
    pub pid: i64,
    /// The process group it leads, killed as a whole.
    pub pgid: i64,
    /// Which process this is, so a recycled pid is never taken for it: the host, the
    /// boot and the start time (see `crate::children::identity`).
    pub identity: String,
    /// What it is, for messages: `postgres`, `pgbench`, `exec`...
    pub what: String,
}

/// `what` of the row that stands for the run's fathom itself.
pub const FATHOM: &str = "fathom";

/// A run left `running`, with the processes recorded for it.
pub struct Unfinished {
    pub run: i64,
    pub processes: Vec<ProcessRow>,
}

impl Store {
    pub fn add_process(&self, run: i64, p: &ProcessRow) -> Result<()> {
        self.conn.execute(
            "INSERT OR REPLACE INTO processes (run_id, pid, pgid, identity, what) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![run, p.pid, p.pgid, p.identity, p.what],
        )?;
        Ok(())
    }

    /// Forgets a process that has ended (or every one of the run's, with `pid` None).
    pub fn remove_processes(&self, run: i64, pid: Option<i64>) -> Result<()> {
        self.conn.execute("DELETE FROM processes WHERE run_id = ?1 AND (?2 IS NULL OR pid = ?2)", params![run, pid])?;
        Ok(())
    }

    /// Records a directory the run makes and will remove (a throwaway cluster's).
    pub fn add_leftover(&self, run: i64, path: &str) -> Result<()> {
        self.conn.execute("INSERT OR REPLACE INTO leftovers (run_id, path) VALUES (?1, ?2)", params![run, path])?;
        Ok(())
    }

    /// Forgets a directory that was removed (or every one of the run's, with `path` None).
    pub fn remove_leftovers(&self, run: i64, path: Option<&str>) -> Result<()> {
        self.conn
            .execute("DELETE FROM leftovers WHERE run_id = ?1 AND (?2 IS NULL OR path = ?2)", params![run, path])?;
        Ok(())
    }

    /// The directories recorded for `run` that it did not remove.
    pub fn leftovers(&self, run: i64) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare("SELECT path FROM leftovers WHERE run_id = ?1 ORDER BY path")?;
        let paths = stmt.query_map(params![run], |r| r.get(0))?.collect::<rusqlite::Result<Vec<String>>>()?;
        Ok(paths)
    }

    /// Runs still `running` whose fathom was recorded (runs of fathoms before schema 5
    /// have none, and nothing can be said of them), with their processes.
    pub fn unfinished_runs(&self) -> Result<Vec<Unfinished>> {
        let mut stmt = self.conn.prepare(
            "SELECT p.run_id, p.pid, p.pgid, p.identity, p.what FROM processes p JOIN runs r ON r.id = p.run_id
             WHERE r.status = ?1 ORDER BY p.run_id, p.what = ?2 DESC, p.pid",
        )?;
        let rows = stmt.query_map(params![Status::Running.as_str(), FATHOM], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                ProcessRow { pid: r.get(1)?, pgid: r.get(2)?, identity: r.get(3)?, what: r.get(4)? },
            ))
        })?;
        let mut out: Vec<Unfinished> = Vec::new();
        for row in rows {
            let (run, p) = row?;
            match out.last_mut() {
                Some(u) if u.run == run => u.processes.push(p),
                _ => out.push(Unfinished { run, processes: vec![p] }),
            }
        }
        out.retain(|u| u.processes.first().is_some_and(|p| p.what == FATHOM));
        Ok(out)
    }
}
