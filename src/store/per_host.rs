//! Workloads placed on other hosts, host by host: each host's counters (from its
//! workers' samples) and its own latency (`host_histograms`, kept beside the workload's
//! merged histograms), over a window and per bin of the run.

use super::connection::Store;
use crate::error::Result;
use crate::metrics::{self, Op};
use hdrhistogram::Histogram;
use rusqlite::params;
use serde::Serialize;
use std::collections::BTreeMap;

/// The latency of workloads on other hosts per (workload, host, second, op): what
/// [`Store::write_samples`] keeps beside the workloads' merged histograms.
pub type HostLatency = BTreeMap<(usize, String, u32, Op), Histogram<u64>>;

/// One host's share of a workload (see [`Store::per_host`]).
#[derive(Debug, Clone, Serialize)]
pub struct HostCounters {
    pub host: String,
    pub workers: i64,
    pub ops: u64,
    pub bytes: u64,
    pub latency_sum_ns: u64,
    /// The host's latency histogram over the window, syncs left out; None for a run
    /// stored before hosts' histograms were kept.
    #[serde(skip)]
    pub latency: Option<Histogram<u64>>,
}

/// One bin of a host's share of a workload over the run: seconds `[t, t + bin)`.
#[derive(Debug, Clone)]
pub struct HostBin {
    pub host: String,
    pub t: i64,
    pub ops: u64,
    /// NaN when the bin has no histogram of this host.
    pub p99_us: f64,
}

/// A host's bin being summed: its ops and latency.
type Cell = (u64, Option<Histogram<u64>>);

/// The op code of syncs, which per-host figures leave out (as the per-host counters do).
const SYNC: i64 = Op::Sync.code() as i64;

impl Store {
    /// Per host, a workload's counters over seconds `[from, to)` and its latency
    /// histogram there, syncs left out, in the order of the hosts' first workers.
    pub fn per_host(&self, run: i64, workload: i64, from: i64, to: i64) -> Result<Vec<HostCounters>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT w.host, count(DISTINCT w.id), coalesce(sum(s.ops), 0), coalesce(sum(s.bytes), 0),
                    coalesce(sum(s.latency_sum_ns), 0)
             FROM workers w LEFT JOIN samples s
               ON s.run_id = w.run_id AND s.worker = w.id AND s.t >= ?3 AND s.t < ?4 AND s.op != ?5
             WHERE w.run_id = ?1 AND w.workload_idx = ?2 GROUP BY w.host ORDER BY min(w.id)",
        )?;
        let rows = stmt.query_map(params![run, workload, from, to, SYNC], |r| {
            Ok(HostCounters {
                host: r.get(0)?,
                workers: r.get(1)?,
                ops: r.get::<_, i64>(2)? as u64,
                bytes: r.get::<_, i64>(3)? as u64,
                latency_sum_ns: r.get::<_, i64>(4)? as u64,
                latency: None,
            })
        })?;
        let mut hosts: Vec<HostCounters> = rows.collect::<rusqlite::Result<_>>()?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT host, hist FROM host_histograms
             WHERE run_id = ?1 AND workload_idx = ?2 AND t >= ?3 AND t < ?4 AND op != ?5",
        )?;
        let mut rows = stmt.query(params![run, workload, from, to, SYNC])?;
        while let Some(r) = rows.next()? {
            let host: String = r.get(0)?;
            if let Some(h) = hosts.iter_mut().find(|h| h.host == host) {
                let latency = h.latency.get_or_insert_with(metrics::new_histogram);
                metrics::merge_encoded(&mut [latency], &r.get::<_, Vec<u8>>(1)?)?;
            }
        }
        Ok(hosts)
    }

    /// Per host and bin of `bin` seconds over the whole run, a workload's ops and p99
    /// latency (syncs left out): the report's per-host charts.
    pub fn host_bins(&self, run: i64, workload: i64, bin: i64) -> Result<Vec<HostBin>> {
        let bin = bin.max(1);
        let mut bins: BTreeMap<(String, i64), Cell> = BTreeMap::new();
        let mut stmt = self.conn.prepare_cached(
            "SELECT w.host, s.t / ?3, sum(s.ops) FROM samples s JOIN workers w ON w.run_id = s.run_id AND w.id = s.worker
             WHERE s.run_id = ?1 AND s.workload_idx = ?2 AND s.op != ?4 GROUP BY w.host, s.t / ?3",
        )?;
        let mut rows = stmt.query(params![run, workload, bin, SYNC])?;
        while let Some(r) = rows.next()? {
            bins.entry((r.get(0)?, r.get(1)?)).or_default().0 += r.get::<_, i64>(2)? as u64;
        }
        let mut stmt = self.conn.prepare_cached(
            "SELECT host, t / ?3, hist FROM host_histograms WHERE run_id = ?1 AND workload_idx = ?2 AND op != ?4",
        )?;
        let mut rows = stmt.query(params![run, workload, bin, SYNC])?;
        while let Some(r) = rows.next()? {
            let cell = bins.entry((r.get(0)?, r.get(1)?)).or_default();
            let latency = cell.1.get_or_insert_with(metrics::new_histogram);
            metrics::merge_encoded(&mut [latency], &r.get::<_, Vec<u8>>(2)?)?;
        }
        Ok(bins
            .into_iter()
            .map(|((host, k), (ops, latency))| HostBin {
                host,
                t: k * bin,
                ops,
                p99_us: latency.map_or(f64::NAN, |h| h.value_at_quantile(0.99) as f64 / 1000.0),
            })
            .collect())
    }
}
