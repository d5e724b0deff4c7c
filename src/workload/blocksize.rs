//! The size of each IO: a workload's block sizes (`crate::scenario::pattern`) drawn by
//! their share of IOs.

use super::rng::Rng;

pub use crate::scenario::pattern::BlockSizes;

impl BlockSizes {
    /// The size of the next IO.
    #[inline]
    pub fn pick(&self, rng: &mut Rng) -> u64 {
        if self.is_single() {
            return self.min();
        }
        let Some(split) = self.split() else {
            // a range: each multiple of the smallest size as likely
            let step = self.min();
            return step * (1 + rng.below(self.max() / step));
        };
        let mut r = rng.below(100) as u32;
        for &(size, pct) in split {
            if r < pct {
                return size;
            }
            r -= pct;
        }
        self.max()
    }

    /// The largest size of the split that is at most `limit`: what an IO gets when the
    /// one drawn would pass the end of the working set or of a bounded worker's bytes
    /// (fio, too, takes a smaller size of the split that fits). `limit` is at least the
    /// smallest size.
    pub fn largest_within(&self, limit: u64) -> u64 {
        self.sizes().map(|(size, _)| size).filter(|&size| size <= limit).max().unwrap_or(self.min())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_parses_and_picks_by_share_of_ios() {
        let b = BlockSizes::parse_split("64k/20:128k/20:256k/20:512k/20:1m/20").unwrap();
        assert_eq!((b.min(), b.max()), (64 << 10, 1 << 20));
        assert_eq!(b.to_string(), "64k/20:128k/20:256k/20:512k/20:1m/20");
        let b = BlockSizes::parse_split("32k/10:8k/90").unwrap();
        assert_eq!(b.to_string(), "8k/90:32k/10", "sorted by size");
        assert_eq!(b.mean(), 8192.0 * 0.9 + 32768.0 * 0.1);
        let mut rng = Rng::new(1);
        let small = (0..100_000).filter(|_| b.pick(&mut rng) == 8192).count();
        assert!((89_000..91_000).contains(&small), "{small}");
    }

    #[test]
    fn a_range_picks_each_multiple_alike() {
        let b = BlockSizes::parse_range("4k-16k").unwrap();
        let mut rng = Rng::new(1);
        let mut seen = [0u32; 4];
        for _ in 0..100_000 {
            let size = b.pick(&mut rng);
            assert_eq!(size % 4096, 0, "{size}");
            seen[(size / 4096 - 1) as usize] += 1;
        }
        assert!(seen.iter().all(|n| (24_000..26_000).contains(n)), "{seen:?}");
        assert_eq!(b.largest_within(10_000), 8192);
    }
}
