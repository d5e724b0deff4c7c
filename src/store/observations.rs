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
    /// A gauge's mean over its seconds; a counter's rise per second (its rise from its
    /// first sample to its last over the seconds between): a running total's mean
    /// says nothing.
    pub mean: f64,
    /// A gauge's highest value; a counter's highest rise per second between samples.
    pub max: f64,
    pub seconds: usize,
    /// A counter's rise over the run; absent for a gauge.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<f64>,
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

    /// Each observed figure over the run, by source and name: a gauge's mean and max,
    /// a counter's rise per second and over the run (`counter` says which names are
    /// counters: the observers know, the store does not).
    pub fn observation_summary(&self, run: i64, counter: fn(&str) -> bool) -> Result<Vec<Observed>> {
        let mut stmt = self.conn.prepare(
            "WITH d AS (SELECT source, name, t, value, value - lag(value) OVER w AS rise, t - lag(t) OVER w AS dt
                        FROM observations WHERE run_id = ?1
                        WINDOW w AS (PARTITION BY source, name ORDER BY t))
             SELECT source, name, avg(value), max(value), count(*), max(t) - min(t), sum(rise), max(rise / dt)
             FROM d GROUP BY source, name ORDER BY source, name",
        )?;
        let rows = stmt.query_map([run], |r| {
            let (source, name): (String, String) = (r.get(0)?, r.get(1)?);
            let (mean, max, seconds): (f64, f64, i64) = (r.get(2)?, r.get(3)?, r.get(4)?);
            let (span, rise, fastest): (i64, Option<f64>, Option<f64>) = (r.get(5)?, r.get(6)?, r.get(7)?);
            let seconds = seconds as usize;
            Ok(match counter(&name) {
                true => {
                    let delta = rise.unwrap_or(0.0);
                    let per_s = if span > 0 { delta / span as f64 } else { 0.0 };
                    Observed { source, name, mean: per_s, max: fastest.unwrap_or(0.0), seconds, delta: Some(delta) }
                }
                false => Observed { source, name, mean, max, seconds, delta: None },
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

    /// The rise per second of the sum of counters `names` of `source`, between bins of
    /// `bin` seconds: (bin start, rise per second), from the second bin on. A counter is
    /// stored as its exporter serves it (a running total); this is how the report's
    /// charts and the exports read it. A fall (the server's statistics reset) reads 0.
    pub fn observation_rises(&self, run: i64, source: &str, names: &[String], bin: i64) -> Result<Vec<(i64, f64)>> {
        let mut sum: std::collections::BTreeMap<i64, f64> = std::collections::BTreeMap::new();
        for n in names {
            for (t, v) in self.observation_series(run, source, n, bin)? {
                *sum.entry(t).or_default() += v;
            }
        }
        let points: Vec<(i64, f64)> = sum.into_iter().collect();
        // over the seconds between two bins, so that a second left out does not double the next
        Ok(points.windows(2).map(|w| (w[1].0, (w[1].1 - w[0].1).max(0.0) / (w[1].0 - w[0].0) as f64)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::ObservationRow;
    use crate::store::fixture::{Fixture, Second};
    use crate::store::sink::Record;

    /// A running total is read as its rise (per second and over the run), never
    /// averaged; a gauge as its mean and highest value.
    #[test]
    fn a_counter_is_its_rise_and_a_gauge_its_mean() {
        let fx = Fixture::new("observed-kinds");
        let row = |t: i64, name: &str, value: f64| ObservationRow {
            t,
            source: "postgres:w".into(),
            name: name.into(),
            value,
        };
        let commits = "pg_stat_database_xact_commit{datname=\"x\"}";
        let rows = vec![
            row(1, commits, 100_000.0),
            row(2, commits, 100_010.0),
            row(3, commits, 100_030.0),
            row(1, "numbackends", 2.0),
            row(3, "numbackends", 4.0),
        ];
        let run = fx
            .run("name: o\nworkloads:\n  w: {engine: null, rw: read, duration: 3s}\n")
            .phase("w", &[("w", 1)], 3, |_| Second::new(10, 1_000))
            .record(Record::Observations(rows))
            .finish();
        let counter = |name: &str| name.starts_with("pg_stat_");
        let seen = fx.store().observation_summary(run, counter).unwrap();
        let c = seen.iter().find(|o| o.name == commits).unwrap();
        assert_eq!((c.mean, c.max, c.delta, c.seconds), (15.0, 20.0, Some(30.0), 3), "{c:?}");
        let g = seen.iter().find(|o| o.name == "numbackends").unwrap();
        assert_eq!((g.mean, g.max, g.delta), (3.0, 4.0, None), "{g:?}");
    }

    /// A counter's rise per second between its samples, over the seconds between them
    /// (a missing second does not double the next), summed over the names asked, a
    /// reset read as no rise.
    #[test]
    fn a_counter_rises_per_second_between_its_samples() {
        let fx = Fixture::new("observed-rises");
        let row = |t: i64, name: &str, value: f64| ObservationRow { t, source: "s".into(), name: name.into(), value };
        let rows = vec![
            row(1, "a", 100.0),
            row(2, "a", 110.0),
            row(4, "a", 150.0),
            row(5, "a", 0.0),
            row(1, "b", 1.0),
            row(2, "b", 2.0),
            row(4, "b", 4.0),
            row(5, "b", 5.0),
        ];
        let run = fx
            .run("name: o\nworkloads:\n  w: {engine: null, rw: read, duration: 5s}\n")
            .phase("w", &[("w", 1)], 5, |_| Second::new(10, 1_000))
            .record(Record::Observations(rows))
            .finish();
        let store = fx.store();
        let rises = store.observation_rises(run, "s", &["a".into(), "b".into()], 1).unwrap();
        assert_eq!(rises, [(2, 11.0), (4, 21.0), (5, 0.0)]);
    }
}
