//! What the observers saw, per second of the run clock: the host's CPU, fathom's own,
//! the devices under the targets, and remote Prometheus series. One narrow table of
//! (second, source, name, value) holds them all, so a new observer needs no new table.

use super::Store;
use crate::error::Result;
use rusqlite::params;
use serde::Serialize;

/// One observed value. `source` is `host`, `fathom`, `device:NAME` or `prometheus`;
/// `name` is the figure (`usr_pct`, `w_s`, ...) or a remote series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ObservationRow {
    /// The second of the run clock the value covers: `[t, t+1)` for rates.
    pub t: i64,
    pub source: String,
    pub name: String,
    pub value: f64,
}

impl Store {
    pub fn add_observations(&mut self, run: i64, rows: &[ObservationRow]) -> Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut stmt = tx.prepare_cached(
                "INSERT INTO observations (run_id, t, source, name, value) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?;
            for r in rows {
                stmt.execute(params![run, r.t, r.source, r.name, r.value])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Every observation of a run, by source, name and second.
    pub fn observations(&self, run: i64) -> Result<Vec<ObservationRow>> {
        let mut stmt = self
            .conn
            .prepare("SELECT t, source, name, value FROM observations WHERE run_id = ?1 ORDER BY source, name, t")?;
        let rows = stmt.query_map([run], |r| {
            Ok(ObservationRow { t: r.get(0)?, source: r.get(1)?, name: r.get(2)?, value: r.get(3)? })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}
