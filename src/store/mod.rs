//! The run store: every run, its environment, workloads, workers, per-second samples
//! and warnings, in one SQLite file (`fathom-results/fathom.db` by default).
//!
//! Resolution policy (docs/metrics.md): counters (ops, bytes, latency sum) are kept per
//! worker, op and second; latency histograms per workload, op and second (merged across
//! its workers at write time) at 2 significant digits. Percentiles over any window come
//! from merging those histograms. A 24-hour run of 64 workers at ~10k IOPS each takes
//! about 230 MB (measured by the test `a_day_of_64_workers_fits_in_a_few_hundred_megabytes`).
//!
//! Every text a write method takes (the scenario, the command line, errors, warnings,
//! events, labels) goes through [`crate::secrets::redact`] on its way in: what is
//! stored is shown again by `show` and reports, so nothing that looks like a password
//! is ever written. The scenario's texts go through [`crate::secrets::redact_yaml`]
//! instead, so that what is stored still parses once masked.
//!
//! While a run measures, one thread writes: the collector (`collector.rs`), which
//! drains the samples and the run sink (`sink.rs`) that everything else the run
//! records is sent to.

pub mod collector;
mod connection;
mod events;
#[cfg(test)]
pub mod fixture;
mod observations;
pub mod per_host;
mod processes;
pub mod read;
mod reserve;
mod samples;
mod schema;
pub mod sink;

pub use connection::{Status, Store};
pub use events::{EventRow, ExpectationRow, PhaseRow};
pub use observations::{ObservationRow, Observed};
pub use processes::{FATHOM, ProcessRow};
pub use reserve::Reserve;
use samples::{KIND_LATENCY, KIND_SERVICE};
pub use schema::recover as recover_hint;

use crate::error::{Error, Result};
use crate::metrics::summary::Throughput;
use crate::metrics::{self, Op, OpStats};
use crate::secrets::{redact, redact_json, redact_yaml};
use hdrhistogram::Histogram;
use rusqlite::params;
use serde::Serialize;
use std::collections::BTreeMap;

/// A run as listed by `fathom runs`.
#[derive(Debug, Clone, Serialize)]
pub struct RunRow {
    pub id: i64,
    pub scenario: String,
    /// RFC 3339, UTC.
    pub started_at: String,
    pub duration_s: Option<f64>,
    pub status: String,
    pub command: String,
    /// The scenario as it ran (YAML), so the run can be reproduced.
    pub scenario_text: String,
    pub environment: serde_json::Value,
    pub error: Option<String>,
    /// `--time-scale`: every duration of the timeline was multiplied by it.
    pub time_scale: Option<f64>,
    /// The scenario as read after its variables and `--set`s: what the read side reads
    /// (None for runs stored before it was kept).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved_text: Option<String>,
    /// The variables' values the run used, after `--set`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vars: Option<serde_json::Value>,
    /// `run --repeat`: the id of the first run of the runs repeated with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeat_group: Option<i64>,
}

/// A workload of a run with its place on the run's clock (seconds since the run began).
#[derive(Debug, Clone, Serialize)]
pub struct WorkloadRow {
    pub idx: i64,
    pub name: String,
    pub phase: String,
    pub profile: serde_json::Value,
    pub data_path: String,
    pub engine: String,
    pub workers: i64,
    pub start_t: i64,
    /// First second after the ramp: results start here.
    pub measure_t: i64,
    pub end_t: i64,
    /// When it really stopped (earlier than `end_t` if interrupted), seconds on the run clock.
    pub stopped_at: Option<f64>,
    pub rate_iops: Option<f64>,
}

impl WorkloadRow {
    /// The measured window `[from, to)` in seconds; empty if it never got past the ramp.
    pub fn measured_window(&self) -> (f64, f64) {
        let to = self.stopped_at.unwrap_or(self.end_t as f64).min(self.end_t as f64);
        (self.measure_t as f64, to.max(self.measure_t as f64))
    }

    /// A bounded workload (`io_size`, `loops` or `number_ios` in its profile) that did
    /// all its IO (its `end_t` is then the second it stopped in): its window ends where
    /// its last IO did, not on a whole second.
    pub fn ended_by_itself(&self) -> bool {
        let bounded =
            ["io_size", "loops", "number_ios"].iter().any(|k| self.profile.get(k).is_some_and(|v| !v.is_null()));
        bounded && self.stopped_at.is_some_and(|s| s > (self.end_t - 1) as f64 && s < self.end_t as f64)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct WarningRow {
    pub code: String,
    pub message: String,
}

/// A scenario's text as a JSON value, if it reads as YAML: what
/// [`redact_yaml`] stores when the masked text would not read.
fn read_yaml(text: &str) -> Option<serde_json::Value> {
    let value: crate::scenario::yaml::Value = crate::scenario::yaml::from_str("scenario", text).ok()?;
    serde_json::to_value(value).ok()
}

impl Store {
    pub fn create_run(&self, scenario: &str, text: &str, command: &str, env: &serde_json::Value) -> Result<i64> {
        self.conn.execute(
            "INSERT INTO runs (scenario, scenario_text, command, started_unix_ms, status, environment)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                redact(scenario),
                redact_yaml(text, read_yaml),
                redact(command),
                crate::clock::unix_ms(),
                Status::Running.as_str(),
                redact_json(env).to_string()
            ],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Records the instant second 0 of the run clock began (after targets were laid out).
    /// Wall-clock instant of second 0 of a run's clock (None before its timeline began).
    pub fn clock_start(&self, run: i64) -> Result<Option<i64>> {
        Ok(self.conn.query_row("SELECT clock_start_unix_ms FROM runs WHERE id = ?1", [run], |r| r.get(0))?)
    }

    /// Records the `--time-scale` a run's durations were multiplied by.
    pub fn set_time_scale(&self, run: i64, factor: f64) -> Result<()> {
        self.conn.execute("UPDATE runs SET time_scale = ?2 WHERE id = ?1", params![run, factor])?;
        Ok(())
    }

    /// Records the scenario as the run read it and its variables' values (see
    /// [`RunRow::resolved_text`]), secrets redacted as the scenario's text is.
    pub fn set_resolved(&self, run: i64, text: &str, vars: &serde_json::Value) -> Result<()> {
        self.conn.execute(
            "UPDATE runs SET resolved_text = ?2, vars = ?3 WHERE id = ?1",
            params![run, redact_yaml(text, read_yaml), redact_json(vars).to_string()],
        )?;
        Ok(())
    }

    /// Records that a run is one of a `--repeat` group, named by its first run's id.
    pub fn set_repeat_group(&self, run: i64, group: i64) -> Result<()> {
        self.conn.execute("UPDATE runs SET repeat_group = ?2 WHERE id = ?1", params![run, group])?;
        Ok(())
    }

    /// The runs of a `--repeat` group, in order (none: no such group).
    pub fn repeat_group(&self, group: i64) -> Result<Vec<i64>> {
        let mut stmt = self.conn.prepare("SELECT id FROM runs WHERE repeat_group = ?1 ORDER BY id")?;
        let ids = stmt.query_map([group], |r| r.get(0))?;
        Ok(ids.collect::<rusqlite::Result<Vec<i64>>>()?)
    }

    pub fn set_clock_start(&self, run: i64, unix_ms: i64) -> Result<()> {
        self.conn.execute("UPDATE runs SET clock_start_unix_ms = ?2 WHERE id = ?1", params![run, unix_ms])?;
        Ok(())
    }

    pub fn finish_run(&self, run: i64, status: Status, error: Option<&str>) -> Result<()> {
        self.conn.execute(
            "UPDATE runs SET status = ?2, ended_unix_ms = ?3, error = ?4 WHERE id = ?1",
            params![run, status.as_str(), crate::clock::unix_ms(), error.map(redact)],
        )?;
        Ok(())
    }

    pub fn add_warning(&self, run: i64, code: &str, message: &str) -> Result<()> {
        self.conn.execute(
            "INSERT INTO warnings (run_id, code, message) VALUES (?1, ?2, ?3)",
            params![run, code, redact(message)],
        )?;
        Ok(())
    }

    pub fn add_workload(&self, run: i64, w: &WorkloadRow) -> Result<()> {
        self.conn.execute(
            "INSERT INTO workloads (run_id, idx, name, phase, profile, data_path, engine, workers,
                                    start_t, measure_t, end_t, rate_iops)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
                run,
                w.idx,
                w.name,
                redact(&w.phase),
                redact_json(&w.profile).to_string(),
                redact(&w.data_path),
                w.engine,
                w.workers,
                w.start_t,
                w.measure_t,
                w.end_t,
                w.rate_iops
            ],
        )?;
        Ok(())
    }

    pub fn set_workload_stopped(&self, run: i64, idx: usize, at: f64) -> Result<()> {
        self.conn.execute(
            "UPDATE workloads SET stopped_at = ?3 WHERE run_id = ?1 AND idx = ?2",
            params![run, idx as i64, at],
        )?;
        Ok(())
    }

    /// A bounded workload did all its IO at `at`: its `end_t` becomes the second it
    /// ended in (see `sink::Record::WorkloadDone`).
    pub fn set_workload_done(&self, run: i64, idx: usize, at: f64) -> Result<()> {
        self.conn.execute(
            "UPDATE workloads SET end_t = MIN(end_t, ?3) WHERE run_id = ?1 AND idx = ?2",
            params![run, idx as i64, at.ceil() as i64],
        )?;
        Ok(())
    }

    pub fn add_worker(&self, run: i64, id: u32, workload: usize, index: u32, host: &str) -> Result<()> {
        self.conn.execute(
            "INSERT INTO workers (run_id, id, workload_idx, idx, host) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![run, id, workload as i64, index, host],
        )?;
        Ok(())
    }

    /// Blocks of a run that failed their crc check: (misplaced, corrupt).
    pub fn verify_failures(&self, run: i64) -> Result<(u64, u64)> {
        let (misplaced, corrupt): (i64, i64) = self.conn.query_row(
            "SELECT coalesce(sum(misplaced), 0), coalesce(sum(corrupt), 0) FROM verify WHERE run_id = ?1",
            params![run],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok((misplaced as u64, corrupt as u64))
    }

    /// A run by id, or the latest for `last`.
    pub fn run(&self, which: &str) -> Result<RunRow> {
        let id: i64 = if which == "last" {
            self.conn
                .query_row("SELECT max(id) FROM runs", [], |r| r.get::<_, Option<i64>>(0))?
                .ok_or_else(|| Error::input("the results store has no runs yet"))?
        } else {
            which.parse().map_err(|_| Error::input(format!("`{which}` is not a run id (a number, or `last`)")))?
        };
        self.query_runs("WHERE id = ?1", params![id])?
            .pop()
            .ok_or_else(|| Error::input(format!("no run {id} in {}", self.path.display())))
    }

    pub fn runs(&self) -> Result<Vec<RunRow>> {
        self.query_runs("", [])
    }

    fn query_runs(&self, filter: &str, args: impl rusqlite::Params) -> Result<Vec<RunRow>> {
        let sql = format!(
            "SELECT id, scenario, started_unix_ms, ended_unix_ms, status, command, scenario_text, environment, error,
                    time_scale, resolved_text, vars, repeat_group
             FROM runs {filter} ORDER BY id"
        );
        let mut stmt = self.conn.prepare(&sql)?;
        let rows = stmt.query_map(args, |r| {
            let started: i64 = r.get(2)?;
            let ended: Option<i64> = r.get(3)?;
            let env: String = r.get(7)?;
            Ok(RunRow {
                id: r.get(0)?,
                scenario: r.get(1)?,
                started_at: rfc3339(started),
                duration_s: ended.map(|e| (e - started) as f64 / 1000.0),
                status: r.get(4)?,
                command: r.get(5)?,
                scenario_text: r.get(6)?,
                environment: serde_json::from_str(&env).unwrap_or(serde_json::Value::Null),
                error: r.get(8)?,
                time_scale: r.get(9)?,
                resolved_text: r.get(10)?,
                vars: r.get::<_, Option<String>>(11)?.and_then(|v| serde_json::from_str(&v).ok()),
                repeat_group: r.get(12)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    pub fn workloads(&self, run: i64) -> Result<Vec<WorkloadRow>> {
        let mut stmt = self.conn.prepare(
            "SELECT idx, name, phase, profile, data_path, engine, workers, start_t, measure_t, end_t, stopped_at, rate_iops
             FROM workloads WHERE run_id = ?1 ORDER BY start_t, idx",
        )?;
        let rows = stmt.query_map([run], |r| {
            let profile: String = r.get(3)?;
            Ok(WorkloadRow {
                idx: r.get(0)?,
                name: r.get(1)?,
                phase: r.get(2)?,
                profile: serde_json::from_str(&profile).unwrap_or(serde_json::Value::Null),
                data_path: r.get(4)?,
                engine: r.get(5)?,
                workers: r.get(6)?,
                start_t: r.get(7)?,
                measure_t: r.get(8)?,
                end_t: r.get(9)?,
                stopped_at: r.get(10)?,
                rate_iops: r.get(11)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    pub fn warnings(&self, run: i64) -> Result<Vec<WarningRow>> {
        let mut stmt = self.conn.prepare("SELECT code, message FROM warnings WHERE run_id = ?1 ORDER BY id")?;
        let rows = stmt.query_map([run], |r| Ok(WarningRow { code: r.get(0)?, message: r.get(1)? }))?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// Per second of `[from, to)`, a workload's reads and writes (syncs excluded): the
    /// second, IOs and the sum of their latencies in ns. Seconds without IO are absent.
    pub fn per_second(&self, run: i64, workload: i64, from: i64, to: i64) -> Result<Vec<(i64, u64, u64)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT t, sum(ops), sum(latency_sum_ns) FROM samples
             WHERE run_id = ?1 AND workload_idx = ?2 AND t >= ?3 AND t < ?4 AND op != 2 GROUP BY t ORDER BY t",
        )?;
        let rows = stmt.query_map(params![run, workload, from, to], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)? as u64, r.get::<_, i64>(2)? as u64))
        })?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// Per second of `[from, to)` and op, what a workload moved: the second, the op, its
    /// ops and bytes, summed over its workers. Seconds without IO are absent. The
    /// samples a rate's noise is judged by, for any op (what [`Store::per_second`]
    /// sums, syncs apart, and bytes).
    pub fn per_second_by_op(&self, run: i64, workload: i64, from: i64, to: i64) -> Result<Vec<(i64, Op, u64, u64)>> {
        let ops = self.ops_of(run)?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT t, op, sum(ops), sum(bytes) FROM samples
             WHERE run_id = ?1 AND workload_idx = ?2 AND t >= ?3 AND t < ?4 GROUP BY t, op ORDER BY t",
        )?;
        let mut rows = stmt.query(params![run, workload, from, to])?;
        let mut out = Vec::new();
        while let Some(r) = rows.next()? {
            let op = op_of(&ops, r.get(1)?)?;
            out.push((r.get::<_, i64>(0)?, op, r.get::<_, i64>(2)? as u64, r.get::<_, i64>(3)? as u64));
        }
        Ok(out)
    }

    /// Per op, everything a workload measured in seconds `[from, to)`: counters summed
    /// over its workers, histograms merged.
    pub fn window(&self, run: i64, workload: i64, from: i64, to: i64) -> Result<BTreeMap<Op, OpStats>> {
        Ok(self.windows(run, workload, &[(from, to)], None)?.windows.remove(0))
    }

    /// Like [`Store::window`] for several windows at once (a workload's measured window
    /// and each phase), and with `bin`, its latency percentiles per bin of that many
    /// seconds: one pass over the histograms, each decoded once, however many windows
    /// and bins it falls in. This is what keeps reports of day-long runs fast.
    pub fn windows(&self, run: i64, workload: i64, windows: &[(i64, i64)], bin: Option<i64>) -> Result<Scan> {
        let mut out = Scan { windows: windows.iter().map(|_| BTreeMap::new()).collect(), bins: Vec::new() };
        let (lo, hi) = match bin {
            Some(_) => (0, i64::MAX),
            None => (windows.iter().map(|w| w.0).min().unwrap_or(0), windows.iter().map(|w| w.1).max().unwrap_or(0)),
        };
        let ops = self.ops_of(run)?;
        let q = WindowQuery { run, workload, range: (lo, hi), windows, bin };
        let bin_counts = self.window_counters(&q, &ops, &mut out)?;
        for (m, &(from, to)) in out.windows.iter_mut().zip(windows) {
            self.checks_and_sizes(&q, &ops, (from, to), m)?;
        }
        let closed = self.window_histograms(&q, &ops, &mut out)?;
        if let Some(b) = bin {
            out.bins = bin_counts
                .into_iter()
                .map(|((k, op), (ops, bytes))| {
                    let (p50_us, p99_us, p99_9_us) =
                        closed.get(&(k, op)).copied().unwrap_or((f64::NAN, f64::NAN, f64::NAN));
                    Bin { t: k * b, op, ops, bytes, p50_us, p99_us, p99_9_us }
                })
                .collect();
        }
        Ok(out)
    }

    /// The counters pass of [`Store::windows`]: each window's sums, and with `bin`, each
    /// bin's ops and bytes (returned).
    fn window_counters(
        &self,
        q: &WindowQuery,
        ops: &BTreeMap<i64, Op>,
        out: &mut Scan,
    ) -> Result<BTreeMap<(i64, Op), (u64, u64)>> {
        let WindowQuery { run, workload, range: (lo, hi), windows, bin } = *q;
        // one row per second in key order (no sort), each op's sums side by side
        let mut bin_counts: BTreeMap<(i64, Op), (u64, u64)> = BTreeMap::new();
        let pivot: Vec<String> = ops
            .keys()
            .map(|c| {
                format!(
                    "sum(CASE op WHEN {c} THEN ops END), sum(CASE op WHEN {c} THEN bytes END), \
                     sum(CASE op WHEN {c} THEN latency_sum_ns END)"
                )
            })
            .collect();
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT t, {} FROM samples WHERE run_id = ?1 AND workload_idx = ?2 AND t >= ?3 AND t < ?4 GROUP BY t",
            pivot.join(", ")
        ))?;
        let mut rows = stmt.query(params![run, workload, lo, hi])?;
        while let Some(r) = rows.next()? {
            let t: i64 = r.get(0)?;
            for (i, &op) in ops.values().enumerate() {
                let col = 1 + 3 * i;
                let Some(ops) = r.get::<_, Option<i64>>(col)? else { continue };
                let (ops, bytes, lat) =
                    (ops as u64, r.get::<_, i64>(col + 1)? as u64, r.get::<_, i64>(col + 2)? as u64);
                for (m, _) in out.windows.iter_mut().zip(windows).filter(|(_, w)| w.0 <= t && t < w.1) {
                    let s = m.entry(op).or_insert_with(|| OpStats::new(false));
                    s.ops += ops;
                    s.bytes += bytes;
                    s.latency_sum_ns += lat;
                }
                if let Some(b) = bin {
                    let c = bin_counts.entry((t / b, op)).or_default();
                    c.0 += ops;
                    c.1 += bytes;
                }
            }
        }
        Ok(bin_counts)
    }

    /// The histograms pass of [`Store::windows`]: each window's histograms merged, and
    /// with `bin`, each bin's latency percentiles (returned). Each histogram is decoded
    /// once, however many windows and bins it falls in.
    fn window_histograms(&self, q: &WindowQuery, ops: &BTreeMap<i64, Op>, out: &mut Scan) -> Result<BinPercentiles> {
        let WindowQuery { run, workload, range: (lo, hi), windows, bin } = *q;
        // the bin being filled: its index and latency per op
        let mut open: Option<(i64, BTreeMap<Op, Histogram<u64>>)> = None;
        let mut closed: BinPercentiles = BTreeMap::new();
        let close = |open: Option<(i64, BTreeMap<Op, Histogram<u64>>)>, closed: &mut BinPercentiles| {
            if let Some((k, hists)) = open {
                for (op, h) in hists {
                    let q = |p: f64| h.value_at_quantile(p) as f64 / 1000.0;
                    closed.insert((k, op), (q(0.5), q(0.99), q(0.999)));
                }
            }
        };
        let mut stmt = self.conn.prepare_cached(
            "SELECT t, op, kind, hist FROM histograms WHERE run_id = ?1 AND workload_idx = ?2 AND t >= ?3 AND t < ?4
             ORDER BY t",
        )?;
        let mut rows = stmt.query(params![run, workload, lo, hi])?;
        while let Some(r) = rows.next()? {
            let t: i64 = r.get(0)?;
            let op = op_of(ops, r.get(1)?)?;
            let kind: i64 = r.get(2)?;
            let mut targets: Vec<&mut Histogram<u64>> = out
                .windows
                .iter_mut()
                .zip(windows)
                .filter(|(_, w)| w.0 <= t && t < w.1)
                .map(|(m, _)| {
                    let stats = m.entry(op).or_insert_with(|| OpStats::new(false));
                    if kind == KIND_SERVICE {
                        stats.service.get_or_insert_with(metrics::new_histogram)
                    } else {
                        &mut stats.latency
                    }
                })
                .collect();
            if let Some(b) = bin.filter(|_| kind == KIND_LATENCY) {
                if open.as_ref().is_some_and(|o| o.0 != t / b) {
                    close(open.take(), &mut closed);
                }
                let bins = &mut open.get_or_insert_with(|| (t / b, BTreeMap::new())).1;
                targets.push(bins.entry(op).or_insert_with(metrics::new_histogram));
            }
            if !targets.is_empty() {
                let blob = r.get_ref(3)?.as_blob().map_err(|e| Error::failed(format!("histogram column: {e}")))?;
                metrics::merge_encoded(&mut targets, blob)?;
            }
        }
        close(open, &mut closed);
        Ok(closed)
    }

    /// What each op code stored for `run` means: the six fixed ops every store shares,
    /// and the ops the run named (table `ops`), as this process's ops of those names.
    pub fn ops_of(&self, run: i64) -> Result<BTreeMap<i64, Op>> {
        let mut ops: BTreeMap<i64, Op> =
            (0..Op::FIRST_NAMED).filter_map(|c| Op::of_code(c as i64)).map(|op| (op.code() as i64, op)).collect();
        let mut stmt = self.conn.prepare_cached("SELECT op, name, unit FROM ops WHERE run_id = ?1")?;
        let mut rows = stmt.query(params![run])?;
        while let Some(r) = rows.next()? {
            let unit = Throughput::from_key(&r.get::<_, String>(2)?).unwrap_or(Throughput::Tps);
            ops.insert(r.get(0)?, Op::named(&r.get::<_, String>(1)?, unit));
        }
        Ok(ops)
    }

    /// A workload's verification counts and block sizes per op in `[from, to)`, into
    /// `out`; `ops` is what the run's op codes mean ([`Store::ops_of`]).
    fn checks_and_sizes(
        &self,
        q: &WindowQuery,
        ops: &BTreeMap<i64, Op>,
        (from, to): (i64, i64),
        out: &mut BTreeMap<Op, OpStats>,
    ) -> Result<()> {
        let (run, workload) = (q.run, q.workload);
        let mut stmt = self.conn.prepare_cached(
            "SELECT sum(good), sum(misplaced), sum(corrupt) FROM verify
             WHERE run_id = ?1 AND workload_idx = ?2 AND t >= ?3 AND t < ?4 HAVING count(*) > 0",
        )?;
        let mut rows = stmt.query(params![run, workload, from, to])?;
        if let Some(r) = rows.next()? {
            let reads = out.entry(Op::Read).or_insert_with(|| OpStats::new(false));
            reads.verify.good = r.get::<_, i64>(0)? as u64;
            reads.verify.misplaced = r.get::<_, i64>(1)? as u64;
            reads.verify.corrupt = r.get::<_, i64>(2)? as u64;
        }
        let mut stmt = self.conn.prepare_cached(
            "SELECT op, size, sum(ops) FROM io_sizes
             WHERE run_id = ?1 AND workload_idx = ?2 AND t >= ?3 AND t < ?4 GROUP BY op, size ORDER BY op, size",
        )?;
        let mut rows = stmt.query(params![run, workload, from, to])?;
        while let Some(r) = rows.next()? {
            let op = op_of(ops, r.get(0)?)?;
            let size = r.get::<_, i64>(1)? as u64;
            let ops = r.get::<_, i64>(2)? as u64;
            out.entry(op).or_insert_with(|| OpStats::new(false)).sizes.push((size, ops));
        }
        Ok(())
    }
}

/// What [`Store::windows`] gathers: per window, per op stats; and per bin, per op.
#[derive(Debug)]
pub struct Scan {
    pub windows: Vec<BTreeMap<Op, OpStats>>,
    pub bins: Vec<Bin>,
}

/// Each bin's latency percentiles in µs (p50, p99, p99.9), by bin index and op.
type BinPercentiles = BTreeMap<(i64, Op), (f64, f64, f64)>;

/// What a [`Store::windows`] scan reads: a workload's seconds in `range` (all that
/// any window or bin covers), summed per window and, with `bin`, per bin.
#[derive(Clone, Copy)]
struct WindowQuery<'a> {
    run: i64,
    workload: i64,
    range: (i64, i64),
    windows: &'a [(i64, i64)],
    bin: Option<i64>,
}

/// One bin of a workload's time series: seconds `[t, t + bin)`, one op. The
/// percentiles are NaN when the bin had counters but no histogram.
#[derive(Debug, Clone)]
pub struct Bin {
    pub t: i64,
    pub op: Op,
    pub ops: u64,
    pub bytes: u64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p99_9_us: f64,
}

/// The op a stored code means in a run (see [`Store::ops_of`]).
fn op_of(ops: &BTreeMap<i64, Op>, code: i64) -> Result<Op> {
    ops.get(&code).copied().ok_or_else(|| Error::failed(format!("unknown op code {code} in the store")))
}

fn rfc3339(unix_ms: i64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(unix_ms.max(0) as u64);
    humantime::format_rfc3339_seconds(t).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::CounterRow;
    use crate::workload::Rng;
    use per_host::HostLatency;

    /// A second of one worker's reads: ~10k IOs with a long-tailed latency spread.
    fn second_of_io(rng: &mut Rng) -> OpStats {
        let mut s = OpStats::new(false);
        for _ in 0..10_000 {
            let base = 80_000 + rng.below(120_000);
            let tail = if rng.below(100) == 0 { rng.below(5_000_000) } else { 0 };
            s.record(4096, base + tail, 0);
        }
        s
    }

    #[test]
    fn a_late_sample_adds_to_its_second_and_windows_merge_histograms() {
        let dir = std::env::temp_dir().join(format!("fathom-store-late-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut store = Store::open(&dir).unwrap();
        let run = store.create_run("late", "", "", &serde_json::json!({})).unwrap();
        let mut fast = OpStats::new(true);
        let mut slow = OpStats::new(true);
        for _ in 0..99 {
            fast.record(4096, 100_000, 50_000);
        }
        slow.record(4096, 10_000_000, 9_000_000);
        for (t, stats) in [(3u32, &fast), (3, &slow), (4, &fast)] {
            let counters = [CounterRow { worker: 0, workload: 0, t, op: Op::Write, stats }];
            let hist = BTreeMap::from([((0usize, t, Op::Write), stats.clone())]);
            store.write_samples(run, &counters, &hist, &HostLatency::new()).unwrap();
        }
        let rows: i64 = store.conn.query_row("SELECT count(*) FROM samples", [], |r| r.get(0)).unwrap();
        assert_eq!(rows, 2, "the late sample joined second 3 instead of adding a row");
        let second3 = &store.window(run, 0, 3, 4).unwrap()[&Op::Write];
        assert_eq!(second3.ops, 100);
        assert_eq!(second3.latency.len(), 100, "histograms merged too");
        assert!(second3.latency.value_at_quantile(1.0) >= 9_900_000);
        assert_eq!(second3.service.as_ref().unwrap().len(), 100);
        let both = &store.window(run, 0, 3, 5).unwrap()[&Op::Write];
        assert_eq!(both.ops, 199);
        assert_eq!(both.latency_sum_ns, 99 * 100_000 * 2 + 10_000_000);
        assert!(store.window(run, 0, 5, 9).unwrap().is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A program's named ops are stored by name: read back in a process that gave the
    /// names other codes (another fathom, or the same one reading two runs), each
    /// second is still the op of its name, with its own latency.
    #[test]
    fn named_ops_are_read_back_by_name_not_by_code() {
        use crate::metrics::summary::Throughput;
        let dir = std::env::temp_dir().join(format!("fathom-store-named-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut store = Store::open(&dir).unwrap();
        let run = store.create_run("named", "", "", &serde_json::json!({})).unwrap();
        let (order, pay) = (Op::named("test-new-order", Throughput::Tps), Op::named("test-payment", Throughput::Tps));
        let (mut fast, mut slow) = (OpStats::new(false), OpStats::new(false));
        fast.record(0, 1_000_000, 0);
        slow.record(0, 50_000_000, 0);
        let counters = [
            CounterRow { worker: 0, workload: 0, t: 0, op: order, stats: &fast },
            CounterRow { worker: 0, workload: 0, t: 0, op: pay, stats: &slow },
        ];
        let hist = BTreeMap::from([((0usize, 0, order), fast.clone()), ((0usize, 0, pay), slow.clone())]);
        store.write_samples(run, &counters, &hist, &HostLatency::new()).unwrap();
        // another process's codes, which mean nothing to this one
        for table in ["samples", "histograms", "ops"] {
            let sql = format!("UPDATE {table} SET op = op + 1000 WHERE run_id = ?1 AND op >= ?2");
            store.conn.execute(&sql, params![run, Op::FIRST_NAMED]).unwrap();
        }
        assert!(Op::of_code(order.code() as i64 + 1000).is_none());
        let window = store.window(run, 0, 0, 1).unwrap();
        let p99 = |op: Op| window[&op].latency.value_at_quantile(0.99);
        assert!(p99(order) < 2_000_000 && p99(pay) > 40_000_000, "{window:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_day_of_64_workers_fits_in_a_few_hundred_megabytes() {
        let dir = std::env::temp_dir().join(format!("fathom-store-size-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut store = Store::open(&dir).unwrap();
        let run = store.create_run("size", "", "", &serde_json::json!({})).unwrap();
        let mut rng = Rng::new(7);
        let template: Vec<OpStats> = (0..8).map(|_| second_of_io(&mut rng)).collect();
        let seconds = 120u32;
        for t in 0..seconds {
            let per_worker: Vec<(u32, &OpStats)> = (0..64u32).map(|w| (w, &template[(w + t) as usize % 8])).collect();
            let counters: Vec<CounterRow> = per_worker
                .iter()
                .map(|(w, s)| CounterRow { worker: *w, workload: 0, t, op: Op::Read, stats: s })
                .collect();
            let mut merged = OpStats::new(false);
            for (_, s) in &per_worker {
                merged.merge(s);
            }
            let hist = BTreeMap::from([((0usize, t, Op::Read), merged)]);
            store.write_samples(run, &counters, &hist, &HostLatency::new()).unwrap();
        }
        store.conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE); VACUUM;").unwrap();
        let bytes = std::fs::metadata(&store.path).unwrap().len() as f64;
        let per_day = bytes * 86_400.0 / seconds as f64;
        let _ = std::fs::remove_dir_all(&dir);
        let rate = bytes / seconds as f64;
        assert!(per_day < 400e6, "{rate:.0} bytes/s: a 24 h run of 64 workers would take {:.0} MB", per_day / 1e6);
    }
}
