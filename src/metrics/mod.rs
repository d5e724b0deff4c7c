//! What is measured: per-operation counters and latency histograms for one interval,
//! and how intervals from many workers and seconds combine.
//!
//! Percentiles are never averaged: every aggregate (across workers, across seconds,
//! across hosts later) merges histograms and reads percentiles from the merge.

pub mod collector;
pub mod live;
pub mod summary;

use crate::error::{Error, Result};
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};

/// Histogram precision: 2 significant digits (values within 1%), finer than fio's
/// ~1.6% latency buckets, and small enough to store one histogram per second for a
/// day-long run (see docs/metrics.md, "Resolution").
pub const SIGNIFICANT_DIGITS: u8 = 2;
/// Largest latency a histogram holds: one hour, in nanoseconds. Larger values saturate.
pub const MAX_LATENCY_NS: u64 = 3_600_000_000_000;

/// The direction of an IO.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    Read = 0,
    Write = 1,
    /// An fsync or fdatasync (`fsync_every`): no bytes, but a latency of its own.
    Sync = 2,
}

impl Op {
    pub const ALL: [Op; 3] = [Op::Read, Op::Write, Op::Sync];

    pub fn as_str(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Sync => "sync",
        }
    }
}

pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_NS, SIGNIFICANT_DIGITS).expect("static histogram bounds are valid")
}

/// Compact, portable encoding (HdrHistogram V2 + deflate, readable by every HDR library).
pub fn encode(h: &Histogram<u64>) -> Vec<u8> {
    let mut out = Vec::new();
    V2DeflateSerializer::new().serialize(h, &mut out).expect("serializing into memory cannot fail");
    out
}

pub fn decode(bytes: &[u8]) -> Result<Histogram<u64>> {
    Deserializer::new()
        .deserialize(&mut std::io::Cursor::new(bytes))
        .map_err(|e| Error::failed(format!("corrupt histogram in the store: {e:?}")))
}

/// Counters and histograms of one operation over some interval.
#[derive(Debug, Clone)]
pub struct OpStats {
    pub ops: u64,
    pub bytes: u64,
    /// Sum of latencies, so the mean is exact rather than read from buckets.
    pub latency_sum_ns: u64,
    /// Latency from the IO's intended start (open loop) or its submission (closed loop).
    pub latency: Histogram<u64>,
    /// Time from submission to completion; kept separately only for open-loop
    /// workloads, where it differs from latency by the time spent waiting to be issued.
    pub service: Option<Histogram<u64>>,
    /// IOs per block size (size, ops), so a block-size split can be checked against
    /// what was asked; a handful of entries, scanned linearly.
    pub sizes: Vec<(u64, u64)>,
    /// Reads checked against their crc header (`crc`), and those that failed.
    pub verify: Verified,
}

/// Outcomes of checking read blocks against their headers. Failures are kept, never
/// dropped: they are what an integrity test is for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Verified {
    /// Blocks whose header and checksum matched.
    pub good: u64,
    /// Blocks that held another offset's data.
    pub misplaced: u64,
    /// Blocks whose checksum did not match, even when read again.
    pub corrupt: u64,
}

impl Verified {
    pub fn add(&mut self, o: &Verified) {
        self.good += o.good;
        self.misplaced += o.misplaced;
        self.corrupt += o.corrupt;
    }

    pub fn failures(&self) -> u64 {
        self.misplaced + self.corrupt
    }
}

impl OpStats {
    pub fn new(open_loop: bool) -> OpStats {
        OpStats {
            ops: 0,
            bytes: 0,
            latency_sum_ns: 0,
            latency: new_histogram(),
            service: open_loop.then(new_histogram),
            sizes: Vec::new(),
            verify: Verified::default(),
        }
    }

    #[inline]
    pub fn record(&mut self, bytes: u64, latency_ns: u64, service_ns: u64) {
        self.ops += 1;
        self.bytes += bytes;
        self.add_size(bytes, 1);
        self.latency_sum_ns += latency_ns;
        self.latency.saturating_record(latency_ns.max(1));
        if let Some(s) = &mut self.service {
            s.saturating_record(service_ns.max(1));
        }
    }

    #[inline]
    fn add_size(&mut self, size: u64, ops: u64) {
        match self.sizes.iter_mut().find(|e| e.0 == size) {
            Some(e) => e.1 += ops,
            None => self.sizes.push((size, ops)),
        }
    }

    pub fn merge(&mut self, other: &OpStats) {
        self.verify.add(&other.verify);
        for &(size, ops) in &other.sizes {
            self.add_size(size, ops);
        }
        self.ops += other.ops;
        self.bytes += other.bytes;
        self.latency_sum_ns += other.latency_sum_ns;
        self.latency.add(&other.latency).expect("histograms share bounds");
        if let Some(o) = &other.service {
            self.service.get_or_insert_with(new_histogram).add(o).expect("histograms share bounds");
        }
    }
}

/// One worker's measurements of one operation during one second of the run.
#[derive(Debug)]
pub struct Sample {
    /// Index of the workload in the scenario.
    pub workload: usize,
    /// Worker id, unique within the run.
    pub worker: u32,
    /// Second of the run (0 = the first second after the run clock started).
    pub t: u32,
    pub op: Op,
    pub stats: OpStats,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_histograms_give_the_percentiles_of_all_values() {
        // worker A: 1..=1000 µs, worker B: 1001..=2000 µs; together p50 ≈ 1000 µs
        let mut a = OpStats::new(false);
        let mut b = OpStats::new(false);
        for v in 1..=1000u64 {
            a.record(4096, v * 1000, v * 1000);
            b.record(4096, (v + 1000) * 1000, 0);
        }
        let mut all = a.clone();
        all.merge(&b);
        assert_eq!(all.ops, 2000);
        assert_eq!(all.bytes, 2000 * 4096);
        let p50 = all.latency.value_at_quantile(0.5) as f64;
        assert!((p50 - 1_000_000.0).abs() / 1_000_000.0 < 0.01, "p50 {p50}");
        let p99 = all.latency.value_at_quantile(0.99) as f64;
        assert!((p99 - 1_980_000.0).abs() / 1_980_000.0 < 0.01, "p99 {p99}");
        // averaging the two workers' p99s would have said ~1.5 ms: merging must not
        let avg_p99 = (a.latency.value_at_quantile(0.99) + b.latency.value_at_quantile(0.99)) as f64 / 2.0;
        assert!(avg_p99 < 1_600_000.0 && p99 > 1_900_000.0);
        assert_eq!(all.latency_sum_ns, (1..=2000u64).map(|v| v * 1000).sum::<u64>());
    }

    #[test]
    fn encoding_round_trips_and_is_compact() {
        let mut s = OpStats::new(true);
        for i in 0..100_000u64 {
            s.record(4096, 50_000 + (i * 7919) % 2_000_000, 40_000);
        }
        let bytes = encode(&s.latency);
        let back = decode(&bytes).unwrap();
        assert_eq!(back.len(), 100_000);
        assert_eq!(back.value_at_quantile(0.99), s.latency.value_at_quantile(0.99));
        assert!(bytes.len() < 1500, "a second of latencies should encode small, got {}", bytes.len());
        assert!(decode(b"not a histogram").is_err());
    }

    #[test]
    fn service_time_only_for_open_loop() {
        assert!(OpStats::new(false).service.is_none());
        let mut closed = OpStats::new(false);
        closed.merge(&OpStats::new(true));
        assert!(closed.service.is_some(), "merging open-loop data keeps its service times");
    }
}
