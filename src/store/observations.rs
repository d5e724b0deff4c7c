//! What the observers saw, per second of the run clock: the host's CPU, fathom's own,
//! the devices under the targets, and remote Prometheus series. One narrow table of
//! (second, source, name, value) holds them all, so a new observer needs no new table.

use super::connection::Store;
use crate::error::Result;
use rusqlite::params;
use serde::{Deserialize, Serialize};

/// One observed value. `source` is `host`, `fathom`, `device:NAME`, `prometheus` or
/// `postgres:NAME` (an agent's, on the controller: `host:HOST`, `fathom:HOST`,
/// `device:NAME@HOST`); `name` is the figure (`usr_pct`, `w_s`, ...) or a series named
/// as its exporter names it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObservationRow {
    /// The second of the run clock the value covers: `[t, t+1)` for rates.
    pub t: i64,
    pub source: String,
    pub name: String,
    pub value: f64,
}

/// One observed figure over the run, e.g. source `device:vda`, name `w_s`.
#[derive(Debug, Clone, Serialize)]
pub struct Observed {
    pub source: String,
    pub name: String,
    pub mean: f64,
    pub max: f64,
    pub seconds: usize,
}

impl Store {
    pub fn add_observations(&self, run: i64, rows: &[ObservationRow]) -> Result<()> {
        // no other transaction is open on the handle while a run's rows are added, so
        // the run's one handle need not be borrowed mutably (or opened again) for it
        let tx = self.conn.unchecked_transaction()?;
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

    /// Mean, max and count of each observed figure over the run, by source and name.
    pub fn observation_summary(&self, run: i64) -> Result<Vec<Observed>> {
        let mut stmt = self.conn.prepare(
            "SELECT source, name, avg(value), max(value), count(*) FROM observations WHERE run_id = ?1
             GROUP BY source, name ORDER BY source, name",
        )?;
        let rows = stmt.query_map([run], |r| {
            Ok(Observed {
                source: r.get(0)?,
                name: r.get(1)?,
                mean: r.get(2)?,
                max: r.get(3)?,
                seconds: r.get::<_, i64>(4)? as usize,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// One figure's values averaged over bins of `bin` seconds: (bin start, mean).
    pub fn observation_series(&self, run: i64, source: &str, name: &str, bin: i64) -> Result<Vec<(i64, f64)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT t / ?4 * ?4, avg(value) FROM observations WHERE run_id = ?1 AND source = ?2 AND name = ?3
             GROUP BY 1 ORDER BY 1",
        )?;
        let rows = stmt.query_map(params![run, source, name, bin], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}
