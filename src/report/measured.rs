//! What was measured, per workload and per phase, as `show`, the report and the
//! analyses read it: figures over the measured window with what the scenario asked for
//! next to them. Apart from [`super::summary::RunSummary`], which gathers them and their
//! analysis, so that the analysis can read them without depending on the summary.

use crate::metrics::summary::{OpSummary, Throughput};
use crate::scenario::EngineKind;
use crate::store::read::{PhaseFacts, StoredWorkload};
use crate::store::{PhaseRow, WorkloadRow};
use serde::Serialize;

#[derive(Debug, Serialize)]
pub struct WorkloadSummary {
    #[serde(flatten)]
    pub workload: WorkloadRow,
    /// Its settings, typed (the same facts as `workload.profile`).
    #[serde(skip)]
    pub stored: StoredWorkload,
    /// Configured concurrency: depth x workers (what Little's law should give back).
    pub concurrency: i64,
    pub ops: Vec<OpSummary>,
    /// What the scenario asked for next to what the generator did, over all ops.
    pub fidelity: Fidelity,
    /// Per host, for a workload placed on other hosts (empty otherwise): its share of the
    /// workload over the measured window, with its own percentiles. The workload's
    /// percentiles above are the hosts' histograms merged, never their percentiles averaged.
    pub hosts: Vec<HostSummary>,
}

impl WorkloadSummary {
    /// Whether its ops' rates are figures to read, as its program declared (a TPC-H
    /// query's is not; a run stored before programs declared it: they are).
    pub fn rated(&self) -> bool {
        self.stored.headline.as_ref().is_none_or(|h| h.rated)
    }

    /// The op whose latency stands for the workload in every stretch it is compared
    /// over: the op its program leads with (TPC-C's new-order), else its busiest op over
    /// its measured window.
    pub fn timed_op(&self) -> Option<&str> {
        self.leading_op().or_else(|| self.ops.iter().filter(|o| o.op != "sync").max_by_key(|o| o.ops).map(|o| o.op))
    }

    /// The op its program declared it leads with (TPC-C's new-order), if any.
    pub fn leading_op(&self) -> Option<&str> {
        self.stored.headline.as_ref().and_then(|h| h.leading_op.as_deref())
    }
}

/// One host's part of a workload: rates and latency over the measured window, its
/// percentiles from its own histograms (absent for runs stored before they were kept).
#[derive(Debug, Serialize)]
pub struct HostSummary {
    pub host: String,
    pub workers: i64,
    pub iops: f64,
    pub mb_per_s: f64,
    pub mean_us: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p50_us: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p99_us: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p99_9_us: Option<f64>,
}

/// Asked vs achieved for one workload, so a user sees at a glance that the generator
/// did what the scenario says (fio's rate with mixed sizes, for one, does not). Only
/// what its ops' unit measures is there: a pgbench workload has TPS, and no bytes, op
/// mix or block sizes; a network stream has its bytes only.
#[derive(Debug, Serialize)]
pub struct Fidelity {
    /// What the rate is counted in.
    pub unit: Throughput,
    /// IOs per second: asked only for open-loop workloads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iops: Option<Pair>,
    /// Transactions per second (pgbench): asked only under a `rate`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tps: Option<Pair>,
    /// Megabytes (10^6 bytes) per second.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mb_per_s: Option<Pair>,
    /// Share of IOs that are reads, in percent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_percent: Option<Pair>,
    /// Share of IOs of each block size, in percent (one entry per size asked or seen).
    pub block_sizes: Vec<SizeShare>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Pair {
    pub asked: Option<f64>,
    pub achieved: f64,
}

#[derive(Debug, Serialize)]
pub struct SizeShare {
    pub bytes: u64,
    pub asked_percent: f64,
    /// Unknown (null) when the workload ran on fio with several sizes: fio does not
    /// report IOs per block size.
    pub achieved_percent: Option<f64>,
}

impl Fidelity {
    /// Asked (from the stored settings) against achieved (`ops` over the measured
    /// window; `sizes`: IOs per block size, empty when one size was stored).
    pub fn new(w: &StoredWorkload, ops: &[OpSummary], sizes: &[(u64, u64)]) -> Fidelity {
        // syncs move no data and are not part of the mix or the block sizes
        let ops: Vec<&OpSummary> = ops.iter().filter(|o| o.op != "sync").collect();
        let total_ops: u64 = ops.iter().map(|o| o.ops).sum();
        let seconds = ops.first().map(|o| o.seconds).unwrap_or(0.0);
        let per_s = |v: f64| if seconds > 0.0 { v / seconds } else { 0.0 };
        let pct = |part: u64| if total_ops > 0 { part as f64 * 100.0 / total_ops as f64 } else { 0.0 };
        let asked_sizes = &w.bs;
        // a job file's section run by fio as written asked what its file says
        let mut block_sizes: Vec<SizeShare> = asked_sizes
            .sizes()
            .filter(|_| !w.as_written)
            .map(|(bytes, p)| SizeShare { bytes, asked_percent: p, achieved_percent: Some(0.0) })
            .collect();
        if w.engine == EngineKind::Fio.to_string() && !asked_sizes.is_single() {
            block_sizes.iter_mut().for_each(|s| s.achieved_percent = None);
        }
        // one size is not stored separately: it is bytes / ops
        let total_bytes: u64 = ops.iter().map(|o| o.bytes).sum();
        let single = [(total_bytes.checked_div(total_ops).unwrap_or(0), total_ops)];
        let sizes = match sizes.is_empty() && total_ops > 0 && !w.as_written {
            true if block_sizes.first().is_some_and(|b| b.achieved_percent.is_some()) => &single[..],
            true => &[],
            false => sizes,
        };
        for &(bytes, n) in sizes.iter().filter(|(bytes, _)| *bytes > 0) {
            match block_sizes.iter_mut().find(|s| s.bytes == bytes) {
                Some(s) => s.achieved_percent = Some(pct(n)),
                None => block_sizes.push(SizeShare { bytes, asked_percent: 0.0, achieved_percent: Some(pct(n)) }),
            }
        }
        let rate = w.rate_iops;
        let mbps = w.rate_mbps;
        let unit = ops.first().map_or(Throughput::Iops, |o| o.unit);
        let io = unit == Throughput::Iops;
        let per_op = Pair { asked: rate, achieved: per_s(total_ops as f64) };
        Fidelity {
            unit,
            iops: io.then_some(per_op.clone()),
            tps: (unit == Throughput::Tps).then_some(per_op),
            mb_per_s: unit.counts_bytes().then(|| Pair {
                asked: mbps.or(rate.map(|r| r * asked_sizes.mean() / 1e6)),
                achieved: per_s(total_bytes as f64) / 1e6,
            }),
            read_percent: io.then(|| Pair {
                asked: (!w.as_written).then_some(w.read_percent as f64),
                achieved: pct(ops.iter().filter(|o| o.op == "read").map(|o| o.ops).sum()),
            }),
            block_sizes: if io { block_sizes } else { Vec::new() },
        }
    }

    /// Ops per second in [`Fidelity::unit`] (IOPS, TPS); None for network streams.
    pub fn rate(&self) -> Option<&Pair> {
        self.iops.as_ref().or(self.tps.as_ref())
    }

    /// True when there is more to check than one size of one op at full speed.
    pub fn worth_showing(&self) -> bool {
        let mixed = self.read_percent.as_ref().and_then(|r| r.asked).is_some_and(|a| a > 0.0 && a < 100.0);
        self.rate().is_some_and(|r| r.asked.is_some()) || mixed || self.block_sizes.len() > 1
    }
}

#[derive(Debug, Serialize)]
pub struct PhaseSummary {
    #[serde(flatten)]
    pub phase: PhaseRow,
    pub ops: Vec<OpSummary>,
    /// What ran in it and what differs from the phase before (`ran`, `differs`).
    #[serde(flatten)]
    pub facts: PhaseFacts,
}
