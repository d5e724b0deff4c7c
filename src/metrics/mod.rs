//! What is measured: per-operation counters and latency histograms for one interval,
//! and how intervals from many workers and seconds combine.
//!
//! Percentiles are never averaged: every aggregate (across workers, across seconds,
//! across hosts later) merges histograms and reads percentiles from the merge.

pub mod format;
pub mod headline;
pub mod littles_law;
pub mod op;
pub mod summary;
pub mod totals;

use crate::error::{Error, Result};
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
pub use op::Op;

/// Histogram precision: 2 significant digits (values within 1%), finer than fio's
/// ~1.6% latency buckets, and small enough to store one histogram per second for a
/// day-long run (see docs/metrics.md, "Resolution").
pub const SIGNIFICANT_DIGITS: u8 = 2;
/// Largest latency a histogram holds: one hour, in nanoseconds. Larger values saturate.
pub const MAX_LATENCY_NS: u64 = 3_600_000_000_000;

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

/// Adds an encoded histogram (as [`encode`] wrote it) into each of `targets` without
/// building a histogram for it: reports over day-long runs merge hundreds of thousands of them,
/// and allocating, zeroing and scanning a full counts array for each (what
/// `decode` + `add` do) cost most of their time. Decodes the V2 format: a zlib payload
/// of a header and zig-zag LEB128 counts, where a negative number skips that many empty
/// buckets.
pub fn merge_encoded(targets: &mut [&mut Histogram<u64>], bytes: &[u8]) -> Result<()> {
    let corrupt = |what: &str| Error::failed(format!("corrupt histogram in the store: {what}"));
    let be32 = |b: &[u8], at: usize| b.get(at..at + 4).map(|s| u32::from_be_bytes(s.try_into().expect("4 bytes")));
    let be64 = |b: &[u8], at: usize| b.get(at..at + 8).map(|s| u64::from_be_bytes(s.try_into().expect("8 bytes")));
    if be32(bytes, 0) != Some(0x1c84_9314) {
        return Err(corrupt("not a compressed V2 histogram"));
    }
    let len = be32(bytes, 4).ok_or_else(|| corrupt("truncated"))? as usize;
    let compressed = bytes.get(8..8 + len).ok_or_else(|| corrupt("truncated"))?;
    INFLATE.with_borrow_mut(|(z, buf)| {
        buf.clear();
        z.reset(true);
        loop {
            buf.reserve(64 * 1024);
            let before = z.total_in() as usize;
            let status = z
                .decompress_vec(&compressed[before..], buf, flate2::FlushDecompress::Finish)
                .map_err(|e| corrupt(&e.to_string()))?;
            if status == flate2::Status::StreamEnd {
                break;
            }
            if z.total_in() as usize == before && buf.len() < buf.capacity() {
                return Err(corrupt("truncated payload"));
            }
        }
        let b = &buf[..];
        // header: cookie, payload length, normalizing offset, digits, lowest, highest, ratio
        if be32(b, 0) != Some(0x1c84_9313) {
            return Err(corrupt("bad inner cookie"));
        }
        let payload = be32(b, 4).ok_or_else(|| corrupt("truncated header"))? as usize;
        let digits = be32(b, 12).ok_or_else(|| corrupt("truncated header"))?;
        let lowest = be64(b, 16).ok_or_else(|| corrupt("truncated header"))?.max(1);
        let counts = b.get(40..40 + payload).ok_or_else(|| corrupt("truncated counts"))?;
        // the bucket layout of HdrHistogram: index -> value
        let unit = 63 - lowest.leading_zeros();
        let single_unit = 2 * 10u64.pow(digits);
        let sub_bucket_bits = 64 - (single_unit - 1).leading_zeros();
        let half_bits = sub_bucket_bits.max(1) - 1;
        let half = 1u64 << half_bits;
        let value_at = |index: u64| {
            let bucket = (index >> half_bits) as i64 - 1;
            let sub = (index & (half - 1)) + half;
            let (bucket, sub) = if bucket < 0 { (0, sub - half) } else { (bucket, sub) };
            sub << (bucket as u32 + unit)
        };
        let (mut at, mut index) = (0usize, 0u64);
        while at < counts.len() {
            let (mut v, mut shift) = (0u64, 0);
            loop {
                let byte = *counts.get(at).ok_or_else(|| corrupt("truncated varint"))?;
                at += 1;
                if shift == 56 {
                    v |= u64::from(byte) << 56;
                    break;
                }
                v |= u64::from(byte & 0x7f) << shift;
                if byte & 0x80 == 0 {
                    break;
                }
                shift += 7;
            }
            let n = ((v >> 1) as i64) ^ -((v & 1) as i64);
            if n < 0 {
                index += n.unsigned_abs();
            } else {
                if n > 0 {
                    for acc in targets.iter_mut() {
                        acc.record_n(value_at(index), n as u64).map_err(|e| corrupt(&format!("{e:?}")))?;
                    }
                }
                index += 1;
            }
        }
        Ok(())
    })
}

thread_local! {
    /// The inflater and the inflated payload of the histogram being merged, reused
    /// between calls: setting up an inflater zeroes tens of kilobytes.
    static INFLATE: std::cell::RefCell<(flate2::Decompress, Vec<u8>)> =
        std::cell::RefCell::new((flate2::Decompress::new(true), Vec::new()));
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
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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

/// One second of one worker's counters, its threads' samples merged: what the running
/// totals add and the store writes, borrowed so the collector merges each only once.
pub struct CounterRow<'a> {
    pub worker: u32,
    pub workload: usize,
    pub t: u32,
    pub op: Op,
    pub stats: &'a OpStats,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_encoded_histograms_equals_decoding_and_adding() {
        let mut rng = crate::workload::Rng::new(7);
        let mut via_decode = new_histogram();
        let mut via_merge = new_histogram();
        for round in 0..20u64 {
            let mut h = new_histogram();
            // values from 100 ns to about 10 s, with long empty stretches between them
            for _ in 0..(500 + round * 37) {
                let bits = 10 + rng.below(24);
                let v = 100 + rng.below(1 << bits);
                h.record(v).unwrap();
            }
            h.record_n(3_000_000_000_000, 2).unwrap();
            let bytes = encode(&h);
            via_decode.add(decode(&bytes).unwrap()).unwrap();
            merge_encoded(&mut [&mut via_merge], &bytes).unwrap();
        }
        assert_eq!(via_merge, via_decode);
        assert!(merge_encoded(&mut [&mut via_merge], b"not a histogram").is_err());
        let bytes = encode(&via_decode);
        assert!(merge_encoded(&mut [&mut via_merge], &bytes[..bytes.len() / 2]).is_err());
    }

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
