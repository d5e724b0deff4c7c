//! Writing a batch of samples: per-worker counters, per-workload histograms (with the
//! crc checks and IO sizes they carry) and the latency of workloads on other hosts, in
//! one transaction. A second written before (a late sample) is added to, never
//! duplicated.

use super::connection::Store;
use super::per_host::HostLatency;
use crate::error::{Error, Result};
use crate::metrics::{self, CounterRow, Op, OpStats};
use hdrhistogram::Histogram;
use rusqlite::{OptionalExtension, params};
use std::collections::BTreeMap;

impl Store {
    /// Writes one batch of samples in one transaction: per-worker counters,
    /// per-workload histograms, and the latency of workloads on other hosts per host.
    /// A second written before (a late sample) is added to, never duplicated.
    pub fn write_samples(
        &mut self,
        run: i64,
        counters: &[CounterRow],
        histograms: &BTreeMap<(usize, u32, Op), OpStats>,
        by_host: &HostLatency,
    ) -> Result<()> {
        let tx = self.conn.transaction()?;
        write_counters(&tx, run, counters, histograms)?;
        write_histograms(&tx, run, histograms)?;
        write_host_latency(&tx, run, by_host)?;
        tx.commit()?;
        Ok(())
    }
}

/// A histogram added to one stored before for the same key (a late sample), encoded.
fn added(earlier: Option<Vec<u8>>, hist: &Histogram<u64>) -> Result<Vec<u8>> {
    Ok(match earlier {
        Some(bytes) => {
            let mut merged = metrics::decode(&bytes)?;
            merged.add(hist).map_err(|e| Error::failed(format!("histogram merge: {e:?}")))?;
            metrics::encode(&merged)
        }
        None => metrics::encode(hist),
    })
}

/// Writes per-worker counters, naming first the ops that are not fixed.
/// A second written before (a late sample) is added to.
fn write_counters(
    tx: &rusqlite::Connection,
    run: i64,
    counters: &[CounterRow],
    histograms: &BTreeMap<(usize, u32, Op), OpStats>,
) -> Result<()> {
    let mut put = tx.prepare_cached(
        "INSERT INTO samples (run_id, worker, t, op, workload_idx, ops, bytes, latency_sum_ns)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (run_id, workload_idx, t, worker, op) DO UPDATE SET
           ops = ops + excluded.ops, bytes = bytes + excluded.bytes,
           latency_sum_ns = latency_sum_ns + excluded.latency_sum_ns",
    )?;
    let mut name_op =
        tx.prepare_cached("INSERT OR IGNORE INTO ops (run_id, op, name, unit) VALUES (?1, ?2, ?3, ?4)")?;
    let named = counters.iter().map(|c| c.op).chain(histograms.keys().map(|k| k.2)).filter(|op| !op.is_fixed());
    for op in named.collect::<std::collections::BTreeSet<Op>>() {
        name_op.execute(params![run, op.code(), op.as_str(), op.unit().key()])?;
    }
    for c in counters {
        put.execute(params![
            run,
            c.worker,
            c.t,
            c.op.code(),
            c.workload as i64,
            c.stats.ops as i64,
            c.stats.bytes as i64,
            c.stats.latency_sum_ns as i64
        ])?;
    }
    Ok(())
}

/// Writes per-workload histograms, with the crc checks and the IO sizes they carry.
/// A histogram of a second written before is merged with the earlier one.
fn write_histograms(
    tx: &rusqlite::Connection,
    run: i64,
    histograms: &BTreeMap<(usize, u32, Op), OpStats>,
) -> Result<()> {
    let mut get = tx.prepare_cached(
        "SELECT hist FROM histograms WHERE run_id = ?1 AND workload_idx = ?2 AND t = ?3 AND op = ?4 AND kind = ?5",
    )?;
    let mut put = tx.prepare_cached(
        "INSERT OR REPLACE INTO histograms (run_id, workload_idx, t, op, kind, hist) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    let mut put_size = tx.prepare_cached(
        "INSERT INTO io_sizes (run_id, workload_idx, t, op, size, ops) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (run_id, workload_idx, t, op, size) DO UPDATE SET ops = ops + excluded.ops",
    )?;
    let mut put_verify = tx.prepare_cached(
        "INSERT INTO verify (run_id, workload_idx, t, good, misplaced, corrupt) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (run_id, workload_idx, t) DO UPDATE SET good = good + excluded.good,
           misplaced = misplaced + excluded.misplaced, corrupt = corrupt + excluded.corrupt",
    )?;
    for ((workload, t, op), stats) in histograms {
        let v = &stats.verify;
        if v.good + v.failures() > 0 {
            put_verify.execute(params![
                run,
                *workload as i64,
                t,
                v.good as i64,
                v.misplaced as i64,
                v.corrupt as i64
            ])?;
        }
        if stats.sizes.len() > 1 {
            for &(size, ops) in &stats.sizes {
                put_size.execute(params![run, *workload as i64, t, op.code(), size as i64, ops as i64])?;
            }
        }
        let kinds = [(KIND_LATENCY, Some(&stats.latency)), (KIND_SERVICE, stats.service.as_ref())];
        for (kind, hist) in kinds {
            let Some(hist) = hist else { continue };
            let key = params![run, *workload as i64, t, op.code(), kind];
            let earlier: Option<Vec<u8>> = get.query_row(key, |r| r.get(0)).optional()?;
            put.execute(params![run, *workload as i64, t, op.code(), kind, added(earlier, hist)?])?;
        }
    }
    Ok(())
}

/// Writes the latency of workloads on other hosts, per host.
/// A histogram of a second written before is merged with the earlier one.
fn write_host_latency(tx: &rusqlite::Connection, run: i64, by_host: &HostLatency) -> Result<()> {
    let mut get = tx.prepare_cached(
        "SELECT hist FROM host_histograms WHERE run_id = ?1 AND workload_idx = ?2 AND host = ?3 AND t = ?4
         AND op = ?5",
    )?;
    let mut put = tx.prepare_cached(
        "INSERT OR REPLACE INTO host_histograms (run_id, workload_idx, host, t, op, hist)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for ((workload, host, t, op), hist) in by_host {
        let key = params![run, *workload as i64, host, t, op.code()];
        let earlier: Option<Vec<u8>> = get.query_row(key, |r| r.get(0)).optional()?;
        put.execute(params![run, *workload as i64, host, t, op.code(), added(earlier, hist)?])?;
    }
    Ok(())
}

/// The kinds of a stored histogram: the latency an IO saw, or its service time.
pub(super) const KIND_LATENCY: i64 = 0;
pub(super) const KIND_SERVICE: i64 = 1;
