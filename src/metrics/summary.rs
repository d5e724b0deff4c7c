//! The figures a user reads: IOPS, MB/s, latency percentiles and Little's law, for one
//! workload and op over a window of seconds.

use super::{Op, OpStats};
use serde::Serialize;

/// Latency percentiles in microseconds.
#[derive(Debug, Clone, Serialize)]
pub struct Latency {
    pub mean_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p99_9_us: f64,
    pub max_us: f64,
}

impl Latency {
    fn from_histogram(h: &hdrhistogram::Histogram<u64>, mean_ns: f64) -> Latency {
        let q = |p: f64| h.value_at_quantile(p) as f64 / 1000.0;
        Latency {
            mean_us: mean_ns / 1000.0,
            p50_us: q(0.50),
            p90_us: q(0.90),
            p99_us: q(0.99),
            p99_9_us: q(0.999),
            max_us: h.max() as f64 / 1000.0,
        }
    }
}

/// One workload's figures for one op over its measured window (ramp excluded).
#[derive(Debug, Clone, Serialize)]
pub struct OpSummary {
    pub workload: String,
    pub op: &'static str,
    /// Length of the measured window in seconds.
    pub seconds: f64,
    pub ops: u64,
    pub bytes: u64,
    pub iops: f64,
    /// Megabytes (10^6 bytes) per second, as fio's "MB/s".
    pub mb_per_s: f64,
    /// Latency from intended start (open loop) or submission (closed loop).
    pub latency: Latency,
    /// Submission to completion; present for open-loop (rate-limited) workloads only.
    pub service_time: Option<Latency>,
    /// Little's law: IOPS x mean latency = the mean number of IOs in flight.
    pub littles_n: f64,
    /// Requested IOPS for this op, for open-loop workloads.
    pub target_iops: Option<f64>,
    /// Reads checked against their crc header (workloads with `crc` only).
    pub verify: Option<super::Verified>,
}

impl OpSummary {
    /// Network streams' bytes (see [`Op::is_network`]): no op count or latency to show.
    pub fn is_network(&self) -> bool {
        self.op == Op::Send.as_str() || self.op == Op::Recv.as_str()
    }

    pub fn new(workload: &str, op: Op, stats: &OpStats, seconds: f64, target_iops: Option<f64>) -> OpSummary {
        let mean_ns = if stats.ops > 0 { stats.latency_sum_ns as f64 / stats.ops as f64 } else { 0.0 };
        let iops = if seconds > 0.0 { stats.ops as f64 / seconds } else { 0.0 };
        let service_time = stats.service.as_ref().map(|h| {
            let mean = if h.is_empty() { 0.0 } else { h.mean() };
            Latency::from_histogram(h, mean)
        });
        OpSummary {
            workload: workload.to_string(),
            op: op.as_str(),
            seconds,
            ops: stats.ops,
            bytes: stats.bytes,
            iops,
            mb_per_s: if seconds > 0.0 { stats.bytes as f64 / seconds / 1e6 } else { 0.0 },
            latency: Latency::from_histogram(&stats.latency, mean_ns),
            service_time,
            littles_n: super::littles_law::concurrency(iops, mean_ns / 1e9),
            target_iops,
            verify: Some(stats.verify).filter(|v| v.good + v.failures() > 0),
        }
    }
}
