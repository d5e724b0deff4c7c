//! What a worker does next: which op, at which offset. Pure and fast (a few ns per IO)
//! so the generator is never the bottleneck it was in vioperf.

pub mod access;
pub mod blocksize;
pub mod data;
mod permutation;
mod rng;
mod zones;

pub use rng::Rng;

use crate::metrics::Op;
use crate::scenario::IoProfile;
use access::Sampler;
use blocksize::BlockSizes;
use permutation::Passes;
use zones::ZoneWalk;

/// One IO to issue: what, where (absolute offset in the data file) and how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Io {
    pub op: Op,
    /// Which of the worker's files (0 with one target).
    pub file: u32,
    pub offset: u64,
    pub len: u64,
}

/// Generates the IOs of one worker: op by `rwmixread`, size by the block-size split,
/// position sequential or drawn from the access distribution (`random_percent` of
/// them, fio's `percentage_random`: a sequential IO follows the previous IO wherever
/// it landed, so "90% sequential" gives runs of about ten from random starts).
#[derive(Debug, Clone)]
pub struct IoGen {
    rng: Rng,
    read_percent: u32,
    random_percent: u32,
    sizes: BlockSizes,
    /// Random IOs start on multiples of the smallest block size (fio's `blockalign`).
    align: u64,
    /// The working set: `span` bytes from `base`.
    base: u64,
    span: u64,
    units: u64,
    sampler: Sampler,
    /// With `randommap`: the passes over every block of every file, each block once a
    /// pass, which random IOs take their file and offset from instead of the sampler.
    passes: Option<Passes>,
    /// Strided zones (`zonesize`): the IOs stay in the current zone of the working set.
    zones: Option<ZoneWalk>,
    /// Next sequential position in each file, relative to `base`.
    next: Vec<u64>,
    /// The file of the next IO: a worker with several files deals its IOs round-robin,
    /// so each gets the same share whatever its speed.
    file: u32,
    /// Writes between syncs (0: never), and writes since the last one.
    fsync_every: u32,
    unsynced: u32,
    /// What is left of a bounded worker's bytes and IOs (`None`: no such bound).
    bytes_left: Option<u64>,
    ios_left: Option<u64>,
}

impl IoGen {
    /// Worker `worker` of `workers` of a workload over a working set of `span` bytes
    /// starting at the workload's `offset`. Sequential workers start at evenly spaced
    /// positions (fio's `offset_increment`) and wrap at the end of the working set.
    /// An appending (`extend`) workload has no working set: `span` is the file's
    /// current length, where its writes start, and they never wrap.
    /// With several `files` the working set is the same span in each.
    /// With zones, random IOs draw from one zone's units, and every worker starts at
    /// the first zone's start, as each of fio's `numjobs` does.
    pub fn new(name: &str, w: &IoProfile, span: u64, worker: u32, workers: u32, files: u32) -> IoGen {
        let (base, span) = if w.extend { (span, u64::MAX / 2) } else { (w.offset, span) };
        let align = w.bs.min();
        let zones = w.zones.map(|z| ZoneWalk::new(&z, span));
        let units = (zones.as_ref().map_or(span, |z| z.zone().1) / align).max(1);
        // an appender starts at its own file's end, zoned workers at the first zone
        let first = if zones.is_some() || w.extend { 0 } else { units / workers as u64 * worker as u64 * align };
        IoGen {
            rng: Rng::new(Rng::seed_from(name, worker as u64, 0)),
            read_percent: w.rw.read_percent(w.rwmixread),
            random_percent: if w.rw.is_random() { w.random_percent } else { 0 },
            sizes: w.bs.clone(),
            align,
            base,
            span,
            units,
            sampler: Sampler::new(&w.distribution, units),
            // one pass covers the blocks of all the worker's files, so a pass over
            // several targets touches each of their blocks once too
            passes: w
                .randommap
                .then(|| Passes::new(units * files.max(1) as u64, Rng::seed_from(name, worker as u64, 3))),
            zones,
            next: vec![first; files.max(1) as usize],
            file: 0,
            fsync_every: w.fsync_every,
            unsynced: 0,
            // a pass covers the working set of each file
            bytes_left: w.bound.and_then(|b| b.bytes(span.saturating_mul(files.max(1) as u64))),
            ios_left: w.bound.and_then(|b| b.number_ios),
        }
    }

    /// The next IO, or `None` once a bounded worker has done its bytes or IOs (see
    /// `scenario::Bound`): the worker then stops.
    #[inline]
    pub fn next(&mut self) -> Option<Io> {
        if self.done() {
            return None;
        }
        let mut file = self.file;
        self.file = (file + 1) % self.next.len() as u32;
        if self.fsync_every > 0 && self.unsynced >= self.fsync_every {
            self.unsynced = 0;
            return Some(Io { op: Op::Sync, file, offset: 0, len: 0 });
        }
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
        let mut len = self.sizes.pick(&mut self.rng);
        if let Some(left) = self.bytes_left
            && len > left
        {
            // a bounded worker's last IOs fit in what is left of its bytes
            len = self.sizes.largest_within(left);
        }
        let random = match self.random_percent {
            100 => true,
            0 => false,
            p => self.rng.below(100) < p as u64,
        };
        // the IOs go to the current zone, or anywhere in the working set
        let (lo, hi) = self.zones.as_ref().map_or((0, self.span), ZoneWalk::zone);
        let mut pos = match self.passes.as_mut() {
            Some(passes) if random => {
                let block = passes.next_block();
                file = (block / self.units) as u32;
                block % self.units * self.align
            }
            _ if random => {
                lo + self.sampler.next(&mut self.rng, self.units.min((hi - lo) / self.align).max(1)) * self.align
            }
            _ => self.next[file as usize],
        };
        let next = &mut self.next[file as usize];
        if pos + len > hi {
            let to_end = hi.saturating_sub(pos) / self.align * self.align;
            if random {
                // a random draw near the end moves back to fit
                pos = lo + (hi - lo).saturating_sub(len) / self.align * self.align;
            } else if to_end >= self.align {
                // a sequential IO that would pass the end of the working set (or zone)
                // takes a size that fits, so a pass covers its tail too
                len = self.sizes.largest_within(to_end);
            } else {
                pos = lo;
            }
        }
        *next = pos + len;
        if let Some(z) = self.zones.as_mut()
            && z.count(len)
        {
            // each file's sequential IO starts the next zone at its start
            self.next.fill(z.zone().0);
        }
        self.unsynced += (op == Op::Write) as u32;
        if let Some(b) = self.bytes_left.as_mut() {
            *b -= len;
        }
        if let Some(n) = self.ios_left.as_mut() {
            *n -= 1;
        }
        Some(Io { op, file, offset: self.base + pos, len })
    }

    /// A bounded worker has done its bytes or its IOs.
    #[inline]
    pub fn done(&self) -> bool {
        self.bytes_left.is_some_and(|b| b < self.align) || self.ios_left == Some(0)
    }
}

/// True when a workload writes (its IO, or a prefill), so its files need opening for
/// writing.
pub fn writes(w: &IoProfile) -> bool {
    w.rw.read_percent(w.rwmixread) < 100 || w.prefill || w.filled
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::scenario::{IoProfile, Rw};
    use std::time::Duration;

    /// A plain workload for tests to adjust: one 4k job at depth 1, 50/50 when mixed.
    pub(crate) fn profile(rw: Rw) -> IoProfile {
        with_mix(rw, 50)
    }

    fn with_mix(rw: Rw, mix: u32) -> IoProfile {
        IoProfile {
            targets: vec!["/tmp".into()],
            queue: crate::scenario::Queue::Shared,
            file: "w".into(),
            rw,
            rwmixread: mix,
            bs: BlockSizes::single(4096),
            random_percent: 100,
            distribution: access::Distribution::Uniform,
            randommap: false,
            offset: 0,
            iodepth: 1,
            size: None,
            size_percent: None,
            direct: true,
            rate_iops: None,
            rate_mbps: None,
            rate_iops_per_host: None,
            arrival: crate::scenario::Arrival::Uniform,
            think_time: Duration::ZERO,
            fsync_every: 0,
            fdatasync: false,
            prefill: false,
            extend: false,
            keep: false,
            filled: false,
            stop_when_steady: None,
            data: data::DataSpec::default(),
            zones: None,
            bound: None,
        }
    }

    #[test]
    fn random_offsets_are_aligned_in_range_and_uniform() {
        let mut g = IoGen::new("w", &with_mix(Rw::Randread, 50), 1 << 20, 0, 1, 1);
        let mut hits = [0u32; 256];
        for _ in 0..256_000 {
            let io = g.next().unwrap();
            assert_eq!((io.op, io.len), (Op::Read, 4096));
            assert_eq!(io.offset % 4096, 0);
            assert!(io.offset < 1 << 20);
            hits[(io.offset / 4096) as usize] += 1;
        }
        // each of 256 blocks expects 1000 hits; allow 5 standard deviations
        assert!(hits.iter().all(|&h| (840..1160).contains(&h)), "{:?}", &hits[..8]);
    }

    #[test]
    fn mix_follows_rwmixread() {
        let mut g = IoGen::new("w", &with_mix(Rw::Randrw, 70), 1 << 20, 0, 1, 1);
        let reads = (0..100_000).filter(|_| g.next().unwrap().op == Op::Read).count();
        assert!((69_000..71_000).contains(&reads), "{reads}");
    }

    #[test]
    fn sequential_workers_spread_and_wrap() {
        let w = with_mix(Rw::Read, 50);
        let mut a = IoGen::new("w", &w, 4 * 4096, 0, 1, 1);
        let offs: Vec<u64> = (0..5).map(|_| a.next().unwrap().offset).collect();
        assert_eq!(offs, vec![0, 4096, 8192, 12288, 0]);
        // two workers on a 4-block set start half-way apart
        let mut second = IoGen::new("w", &w, 4 * 4096, 1, 2, 1);
        assert_eq!(second.next().unwrap().offset, 8192);
    }

    #[test]
    fn mixed_sizes_stay_inside_the_working_set_from_its_offset() {
        let mut w = with_mix(Rw::Randwrite, 50);
        w.bs = BlockSizes::parse_split("4k/50:64k/50").unwrap();
        w.offset = 1 << 20;
        let mut g = IoGen::new("w", &w, 1 << 20, 0, 1, 1);
        let mut sizes = [0u32; 2];
        for _ in 0..100_000 {
            let io = g.next().unwrap();
            assert!(io.offset >= 1 << 20 && io.offset + io.len <= 2 << 20, "{io:?}");
            assert_eq!(io.offset % 4096, 0);
            sizes[(io.len == 65536) as usize] += 1;
        }
        assert!((49_000..51_000).contains(&sizes[1]), "{sizes:?}");
        // sequential with mixed sizes: each IO starts where the last ended
        w.rw = Rw::Write;
        let mut g = IoGen::new("w", &w, 1 << 20, 0, 1, 1);
        let (a, b) = (g.next().unwrap(), g.next().unwrap());
        assert_eq!(b.offset, a.offset + a.len);
    }

    #[test]
    fn random_percent_gives_sequential_runs() {
        let mut w = with_mix(Rw::Randwrite, 50);
        w.random_percent = 10;
        let mut g = IoGen::new("w", &w, 1 << 30, 0, 1, 1);
        let mut prev = g.next().unwrap();
        let mut follows = 0;
        for _ in 0..100_000 {
            let io = g.next().unwrap();
            follows += (io.offset == prev.offset + prev.len) as u32;
            prev = io;
        }
        assert!((89_000..91_000).contains(&follows), "{follows}");
    }

    #[test]
    fn skewed_distributions_reach_the_generator() {
        let mut w = with_mix(Rw::Randread, 50);
        w.distribution = "zoned:90/10:10/90".parse().unwrap();
        let mut g = IoGen::new("w", &w, 100 << 20, 0, 1, 1);
        let hot = (0..100_000).filter(|_| g.next().unwrap().offset < 10 << 20).count();
        assert!((89_000..91_000).contains(&hot), "{hot}");
    }

    #[test]
    fn several_files_share_the_ios_round_robin_each_sequential() {
        let w = with_mix(Rw::Read, 50);
        let mut g = IoGen::new("w", &w, 1 << 20, 0, 1, 3);
        let ios: Vec<Io> = (0..6).map(|_| g.next().unwrap()).collect();
        let files: Vec<u32> = ios.iter().map(|io| io.file).collect();
        assert_eq!(files, vec![0, 1, 2, 0, 1, 2]);
        assert_eq!((ios[0].offset, ios[3].offset), (0, 4096), "each file is read sequentially");
    }

    #[test]
    fn a_sync_follows_every_n_writes() {
        let mut w = with_mix(Rw::Randrw, 50);
        w.fsync_every = 4;
        let mut g = IoGen::new("w", &w, 1 << 20, 0, 1, 1);
        let mut writes_since = 0;
        let mut syncs = 0;
        for _ in 0..10_000 {
            match g.next().unwrap().op {
                Op::Write => writes_since += 1,
                Op::Sync => {
                    assert_eq!(writes_since, 4);
                    writes_since = 0;
                    syncs += 1;
                }
                Op::Read => {}
                other => panic!("the IO generator issued {other:?}"),
            }
        }
        assert!(syncs > 900, "{syncs}");
    }

    #[test]
    fn seeds_repeat() {
        let w = with_mix(Rw::Randread, 50);
        let a: Vec<Io> = (0..5).scan(IoGen::new("w", &w, 1 << 30, 3, 4, 1), |g, _| g.next()).collect();
        let b: Vec<Io> = (0..5).scan(IoGen::new("w", &w, 1 << 30, 3, 4, 1), |g, _| g.next()).collect();
        assert_eq!(a, b);
    }

    fn bounded(rw: Rw, io_size: Option<u64>, passes: Option<u32>, number_ios: Option<u64>) -> IoProfile {
        let mut w = with_mix(rw, 50);
        w.bound = Some(crate::scenario::model::Bound { io_size, passes, number_ios, capped: false });
        w
    }

    /// Everything a generator hands out until it says the worker is done.
    fn drain(g: &mut IoGen) -> Vec<Io> {
        std::iter::from_fn(|| g.next()).take(10_000_000).collect()
    }

    #[test]
    fn one_pass_moves_the_working_set_exactly_once_even_with_a_split() {
        let mut w = bounded(Rw::Read, None, Some(1), None);
        w.bs = BlockSizes::parse_split("4k/50:64k/30:192k/20").unwrap();
        // the second of three workers starts a third of the way in and wraps
        let mut g = IoGen::new("w", &w, 8 << 20, 1, 3, 1);
        let ios = drain(&mut g);
        assert_eq!(ios.iter().map(|io| io.len).sum::<u64>(), 8 << 20);
        assert!(ios.iter().all(|io| [4096, 64 << 10, 192 << 10].contains(&io.len)), "sizes of the split only");
        let mut covered = vec![0u32; (8 << 20) / 4096];
        for io in &ios {
            assert!(io.offset + io.len <= 8 << 20, "{io:?}");
            (io.offset / 4096..(io.offset + io.len) / 4096).for_each(|b| covered[b as usize] += 1);
        }
        assert!(covered.iter().all(|&c| c == 1), "every block once");
        assert!(g.done() && g.next().is_none());
    }

    #[test]
    fn number_ios_stops_the_worker_after_that_many() {
        let mut g = IoGen::new("w", &bounded(Rw::Randread, None, None, Some(1000)), 1 << 20, 0, 1, 1);
        assert_eq!(drain(&mut g).len(), 1000);
    }

    #[test]
    fn loops_repeat_io_size_and_the_first_bound_reached_wins() {
        let mut g = IoGen::new("w", &bounded(Rw::Randwrite, Some(1 << 20), Some(3), None), 8 << 20, 0, 1, 1);
        assert_eq!(drain(&mut g).iter().map(|io| io.len).sum::<u64>(), 3 << 20);
        // 256 IOs of 4k would be 1 MiB: 100 IOs come first
        let mut g = IoGen::new("w", &bounded(Rw::Read, Some(1 << 20), Some(1), Some(100)), 8 << 20, 0, 1, 1);
        assert_eq!(drain(&mut g).len(), 100);
        // an io_size that is not a whole number of blocks ends on the last whole block
        let mut g = IoGen::new("w", &bounded(Rw::Read, Some(10_000), Some(1), None), 8 << 20, 0, 1, 1);
        assert_eq!(drain(&mut g).iter().map(|io| io.len).collect::<Vec<_>>(), vec![4096, 4096]);
    }

    #[test]
    fn an_unbounded_generator_never_ends() {
        let mut g = IoGen::new("w", &with_mix(Rw::Read, 50), 4 * 4096, 0, 1, 1);
        assert!((0..100_000).all(|_| g.next().is_some()));
    }
}
