//! The figures a user reads: IOPS (or TPS, or Gbit/s), MB/s, latency percentiles and
//! Little's law, for one workload and op over a window of seconds.

pub use super::op::Throughput;
use super::{Op, OpStats};
use serde::{Serialize, Serializer};

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
/// Serialized with only the figures its [`Throughput`] measures, each under its unit's
/// key (see [`OpSummary::shown`]).
#[derive(Debug, Clone)]
pub struct OpSummary {
    pub workload: String,
    pub op: &'static str,
    /// What its rate is counted in, and which figures were measured.
    pub unit: Throughput,
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
    /// Requested rate for this op (IOPS, or TPS for pgbench), for open-loop workloads.
    pub target_iops: Option<f64>,
    /// Reads checked against their crc header (workloads with `crc` only).
    pub verify: Option<super::Verified>,
}

impl OpSummary {
    /// Network streams' bytes (see [`Op::is_network`]): no op count or latency to show.
    pub fn is_network(&self) -> bool {
        self.unit == Throughput::Gbits
    }

    /// Whether its ops were timed: network streams are not, nor transactions a program
    /// counted without timing each (HammerDB's, counted per second from the server).
    pub fn timed(&self) -> bool {
        self.unit.has_latency() && (self.ops == 0 || self.latency.max_us > 0.0)
    }

    /// Its rate in its own unit: IOPS, TPS or Gbit/s.
    pub fn rate(&self) -> f64 {
        self.unit.rate(self.iops, self.mb_per_s)
    }

    /// What `--json` and export show of it: each measured figure under its unit's key
    /// (`iops`, or `tps` and `tpm`, or `gbit_per_s`), and none that was not measured.
    pub fn shown(&self) -> Shown<'_> {
        let u = self.unit;
        let per = |unit: Throughput| (u == unit).then(|| self.rate());
        Shown {
            workload: &self.workload,
            op: self.op,
            unit: u,
            seconds: self.seconds,
            ops: u.counts_ops().then_some(self.ops),
            bytes: u.counts_bytes().then_some(self.bytes),
            iops: per(Throughput::Iops),
            tps: per(Throughput::Tps),
            tpm: per(Throughput::Tps).map(|t| t * 60.0),
            // a stream's bytes are shown once, in its own unit
            mb_per_s: per(Throughput::Iops).map(|_| self.mb_per_s),
            gbit_per_s: per(Throughput::Gbits),
            latency: u.has_latency().then_some(&self.latency),
            service_time: self.service_time.as_ref(),
            littles_n: u.has_latency().then_some(self.littles_n),
            target_iops: self.target_iops.filter(|_| u == Throughput::Iops),
            target_tps: self.target_iops.filter(|_| u == Throughput::Tps),
            verify: self.verify,
        }
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
            unit: op.unit(),
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

/// An [`OpSummary`] as `--json` and export write it: absent keys are figures its unit
/// does not measure (MB/s of a transaction, the latency of a network stream).
#[derive(Serialize)]
pub struct Shown<'a> {
    pub workload: &'a str,
    pub op: &'a str,
    pub unit: Throughput,
    pub seconds: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ops: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iops: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tps: Option<f64>,
    /// Transactions per minute, as database benchmarks quote them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tpm: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mb_per_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gbit_per_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency: Option<&'a Latency>,
    pub service_time: Option<&'a Latency>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub littles_n: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_iops: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_tps: Option<f64>,
    pub verify: Option<super::Verified>,
}

impl Serialize for OpSummary {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.shown().serialize(s)
    }
}
