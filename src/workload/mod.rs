//! What a worker does next: which op, at which offset. Pure and fast (a few ns per IO)
//! so the generator is never the bottleneck it was in vioperf.

use crate::metrics::Op;
use crate::scenario::Workload;

/// wyrand: a tiny, fast, statistically good generator. Seeds are derived from the
/// workload name and worker index, so a run repeats its offsets (fio's `randrepeat`).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x2d35_8dcc_aa6c_78a5)
    }

    /// A seed from text and numbers (FNV-1a), stable across runs and platforms.
    pub fn seed_from(text: &str, a: u64, b: u64) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in text.bytes().chain(a.to_le_bytes()).chain(b.to_le_bytes()) {
            h = (h ^ byte as u64).wrapping_mul(0x0100_0000_01b3);
        }
        h
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0xa076_1d64_78bd_642f);
        let t = (self.0 as u128).wrapping_mul((self.0 ^ 0xe703_7ed1_a0b4_28db) as u128);
        ((t >> 64) ^ t) as u64
    }

    /// Uniform in `[0, n)` (Lemire's multiply-shift; bias below 2^-64 * n).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    pub fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
}

/// Generates the (op, offset) of each IO of one stream.
#[derive(Debug, Clone)]
pub struct IoGen {
    rng: Rng,
    random: bool,
    read_percent: u32,
    bs: u64,
    blocks: u64,
    /// Next sequential block, and how many blocks a sequential stream advances per IO
    /// (streams sharing a worker interleave so together they read sequentially).
    next_block: u64,
    stride: u64,
}

impl IoGen {
    /// Stream `stream` of `streams` for worker `worker` of `workers` of a workload over
    /// a working set of `size` bytes. Sequential workers start at evenly spaced offsets
    /// (fio's `offset_increment`) and wrap at the end of the working set.
    pub fn new(w: &Workload, size: u64, worker: u32, workers: u32, stream: u32, streams: u32) -> IoGen {
        let blocks = (size / w.bs).max(1);
        let start = blocks / workers as u64 * worker as u64 + stream as u64;
        IoGen {
            rng: Rng::new(Rng::seed_from(&w.name, worker as u64, stream as u64)),
            random: w.rw.is_random(),
            read_percent: w.rw.read_percent(w.rwmixread),
            bs: w.bs,
            blocks,
            next_block: start % blocks,
            stride: streams as u64,
        }
    }

    #[inline]
    pub fn next(&mut self) -> (Op, u64) {
        let op = match self.read_percent {
            100 => Op::Read,
            0 => Op::Write,
            p => {
                if self.rng.below(100) < p as u64 {
                    Op::Read
                } else {
                    Op::Write
                }
            }
        };
        let block = if self.random {
            self.rng.below(self.blocks)
        } else {
            let b = self.next_block;
            self.next_block = (b + self.stride) % self.blocks;
            b
        };
        (op, block * self.bs)
    }
}

/// True when a workload writes, so its files need opening for writing.
pub fn writes(w: &Workload) -> bool {
    w.rw.read_percent(w.rwmixread) < 100
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{EngineKind, Rw, Workload};
    use std::time::Duration;

    fn workload(rw: Rw, mix: u32) -> Workload {
        Workload {
            name: "w".into(),
            target: "/tmp".into(),
            file: "w".into(),
            rw,
            rwmixread: mix,
            bs: 4096,
            iodepth: 1,
            jobs: 1,
            size: None,
            direct: true,
            engine: EngineKind::Psync,
            rate_iops: None,
            duration: Duration::from_secs(1),
            ramp: Duration::ZERO,
        }
    }

    #[test]
    fn random_offsets_are_aligned_in_range_and_uniform() {
        let mut g = IoGen::new(&workload(Rw::Randread, 50), 1 << 20, 0, 1, 0, 1);
        let mut hits = [0u32; 256];
        for _ in 0..256_000 {
            let (op, off) = g.next();
            assert_eq!(op, Op::Read);
            assert_eq!(off % 4096, 0);
            assert!(off < 1 << 20);
            hits[(off / 4096) as usize] += 1;
        }
        // each of 256 blocks expects 1000 hits; allow 5 standard deviations
        assert!(hits.iter().all(|&h| (840..1160).contains(&h)), "{:?}", &hits[..8]);
    }

    #[test]
    fn mix_follows_rwmixread() {
        let mut g = IoGen::new(&workload(Rw::Randrw, 70), 1 << 20, 0, 1, 0, 1);
        let reads = (0..100_000).filter(|_| g.next().0 == Op::Read).count();
        assert!((69_000..71_000).contains(&reads), "{reads}");
    }

    #[test]
    fn sequential_streams_interleave_and_wrap() {
        let w = workload(Rw::Read, 50);
        let mut a = IoGen::new(&w, 4 * 4096, 0, 1, 0, 2);
        let mut b = IoGen::new(&w, 4 * 4096, 0, 1, 1, 2);
        let offs: Vec<u64> = (0..3).flat_map(|_| [a.next().1, b.next().1]).collect();
        assert_eq!(offs, vec![0, 4096, 8192, 12288, 0, 4096]);
        // two workers on a 4-block set start half-way apart
        let mut second = IoGen::new(&w, 4 * 4096, 1, 2, 0, 1);
        assert_eq!(second.next().1, 8192);
    }

    #[test]
    fn seeds_repeat() {
        let w = workload(Rw::Randread, 50);
        let a: Vec<u64> = (0..5).scan(IoGen::new(&w, 1 << 30, 3, 4, 0, 1), |g, _| Some(g.next().1)).collect();
        let b: Vec<u64> = (0..5).scan(IoGen::new(&w, 1 << 30, 3, 4, 0, 1), |g, _| Some(g.next().1)).collect();
        assert_eq!(a, b);
    }
}
