//! The timeline's records: phases, events (exec, wait_until, fills, marks) and the
//! expectations checked at the end. Sent to the run sink as they happen, so an
//! interrupted run keeps what it did.

use super::connection::Store;
use crate::error::Result;
use crate::secrets::redact;
use rusqlite::params;
use serde::{Deserialize, Serialize};

/// A stretch of the run with the same workloads running: seconds `[start_t, end_t)`.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseRow {
    pub idx: i64,
    pub label: String,
    pub start_t: i64,
    /// None while open, or when the run was cut short inside it.
    pub end_t: Option<i64>,
    /// What ran: (workload index, its workers running). Empty when read from a store
    /// older than schema 6 (see `store::read` for what the read side makes of that).
    #[serde(skip)]
    pub running: Vec<(i64, i64)>,
}

/// Something the timeline did besides running workloads.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EventRow {
    /// When it began, in ms of the run clock.
    pub at_ms: i64,
    /// `exec`, `hook`, `wait_until`, `prefill`, `zero`, `mark`, a program's (`pgbench`,
    /// `tpcc`), or a PostgreSQL server's `checkpoint` and `autovacuum` (their label the
    /// workloads it serves).
    pub kind: String,
    pub label: String,
    /// A command's exit status, 0 for a probe that succeeded, None for marks and
    /// probes that timed out.
    pub status: Option<i64>,
    pub took_ms: Option<i64>,
    /// A command's output (its end), or why a probe failed.
    pub detail: String,
}

/// An expectation as checked.
#[derive(Debug, Clone, Serialize)]
pub struct ExpectationRow {
    pub text: String,
    /// None when there was nothing to measure (the workload did no IO in the window).
    pub measured: Option<f64>,
    /// What a relative expectation compared with (`x before`: the figure in `before`,
    /// before its factor); None for the absolute form, or when nothing was measured there.
    /// For a result view's band (`measured` the share of seconds inside), the seconds judged.
    pub reference: Option<f64>,
    pub passed: bool,
    /// For `beyond noise`: the difference from the reference (times its factor) the
    /// per-second samples' noise hides, in the metric's unit; None when not asked, or
    /// with too few seconds to tell.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub noise: Option<f64>,
    /// For `beyond noise`: whether the difference exceeded that noise; None when not asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub beyond_noise: Option<bool>,
}

impl Store {
    pub fn add_phase(&self, run: i64, p: &PhaseRow) -> Result<()> {
        self.conn.execute(
            "INSERT INTO phases (run_id, idx, label, start_t, end_t) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![run, p.idx, redact(&p.label), p.start_t, p.end_t],
        )?;
        for &(workload, workers) in &p.running {
            self.conn.execute(
                "INSERT INTO phase_workloads (run_id, phase_idx, workload_idx, workers) VALUES (?1, ?2, ?3, ?4)",
                params![run, p.idx, workload, workers],
            )?;
        }
        Ok(())
    }

    /// Removes a phase that turned out to last no time (it is replaced at once).
    pub fn drop_phase(&self, run: i64, idx: i64) -> Result<()> {
        self.conn.execute("DELETE FROM phases WHERE run_id = ?1 AND idx = ?2", params![run, idx])?;
        self.conn.execute("DELETE FROM phase_workloads WHERE run_id = ?1 AND phase_idx = ?2", params![run, idx])?;
        Ok(())
    }

    pub fn end_phase(&self, run: i64, idx: i64, end_t: i64) -> Result<()> {
        self.conn.execute("UPDATE phases SET end_t = ?3 WHERE run_id = ?1 AND idx = ?2", params![run, idx, end_t])?;
        Ok(())
    }

    pub fn phases(&self, run: i64) -> Result<Vec<PhaseRow>> {
        let mut stmt =
            self.conn.prepare("SELECT idx, label, start_t, end_t FROM phases WHERE run_id = ?1 ORDER BY idx")?;
        let rows = stmt.query_map([run], |r| {
            Ok(PhaseRow { idx: r.get(0)?, label: r.get(1)?, start_t: r.get(2)?, end_t: r.get(3)?, running: Vec::new() })
        })?;
        let mut phases = rows.collect::<rusqlite::Result<Vec<_>>>()?;
        let mut stmt = self.conn.prepare(
            "SELECT phase_idx, workload_idx, workers FROM phase_workloads WHERE run_id = ?1
             ORDER BY phase_idx, workload_idx",
        )?;
        let mut rows = stmt.query([run])?;
        while let Some(r) = rows.next()? {
            let idx: i64 = r.get(0)?;
            if let Some(p) = phases.iter_mut().find(|p| p.idx == idx) {
                p.running.push((r.get(1)?, r.get(2)?));
            }
        }
        Ok(phases)
    }

    pub fn add_event(&self, run: i64, e: &EventRow) -> Result<()> {
        self.conn.execute(
            "INSERT INTO events (run_id, idx, at_ms, kind, label, status, took_ms, detail)
             VALUES (?1, (SELECT count(*) FROM events WHERE run_id = ?1), ?2, ?3, ?4, ?5, ?6, ?7)",
            params![run, e.at_ms, e.kind, redact(&e.label), e.status, e.took_ms, redact(&e.detail)],
        )?;
        Ok(())
    }

    pub fn events(&self, run: i64) -> Result<Vec<EventRow>> {
        let mut stmt = self
            .conn
            .prepare("SELECT at_ms, kind, label, status, took_ms, detail FROM events WHERE run_id = ?1 ORDER BY idx")?;
        let rows = stmt.query_map([run], |r| {
            Ok(EventRow {
                at_ms: r.get(0)?,
                kind: r.get(1)?,
                label: r.get(2)?,
                status: r.get(3)?,
                took_ms: r.get(4)?,
                detail: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    pub fn add_expectation(&self, run: i64, idx: usize, e: &ExpectationRow) -> Result<()> {
        self.conn.execute(
            "INSERT INTO expectations (run_id, idx, text, measured, reference, passed, noise, beyond_noise)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![run, idx as i64, redact(&e.text), e.measured, e.reference, e.passed, e.noise, e.beyond_noise],
        )?;
        Ok(())
    }

    pub fn expectations(&self, run: i64) -> Result<Vec<ExpectationRow>> {
        let mut stmt = self.conn.prepare(
            "SELECT text, measured, reference, passed, noise, beyond_noise FROM expectations
                 WHERE run_id = ?1 ORDER BY idx",
        )?;
        let rows = stmt.query_map([run], |r| {
            Ok(ExpectationRow {
                text: r.get(0)?,
                measured: r.get(1)?,
                reference: r.get(2)?,
                passed: r.get(3)?,
                noise: r.get(4)?,
                beyond_noise: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }
}
