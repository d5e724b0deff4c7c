//! Block sizes: one size (`bs: 4k`) or a weighted split (`bssplit: 8k/90:32k/10`, fio's
//! syntax). A split is a share of IOs, not of bytes, so `rate_iops` stays IOs per
//! second whatever the mix.

use super::Rng;
use crate::scenario::units::Size;
use serde::Serialize;
use std::fmt;

/// The block sizes of a workload with their shares of IOs in percent (summing to 100).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockSizes {
    split: Vec<(u64, u32)>,
}

impl BlockSizes {
    pub fn single(bs: u64) -> BlockSizes {
        BlockSizes { split: vec![(bs, 100)] }
    }

    /// Parses what `Display` writes: one size, or a split.
    pub fn parse(text: &str) -> Result<BlockSizes, String> {
        if text.contains('/') {
            BlockSizes::parse_split(text)
        } else {
            Size::parse(text).map(|s| BlockSizes::single(s.0))
        }
    }

    /// Parses `SIZE/PERCENT:SIZE/PERCENT...`; the percentages must add up to 100.
    pub fn parse_split(text: &str) -> Result<BlockSizes, String> {
        let mut split: Vec<(u64, u32)> = Vec::new();
        for part in text.split(':') {
            let (size, pct) = part
                .split_once('/')
                .ok_or_else(|| format!("`{part}` must be SIZE/PERCENT, e.g. bssplit: 8k/90:32k/10"))?;
            let size = Size::parse(size.trim())?.0;
            let pct: u32 = pct.trim().parse().map_err(|_| format!("`{pct}` in `{part}` is not a whole percentage"))?;
            if pct == 0 {
                continue;
            }
            match split.iter_mut().find(|(s, _)| *s == size) {
                Some(entry) => entry.1 += pct,
                None => split.push((size, pct)),
            }
        }
        let total: u32 = split.iter().map(|e| e.1).sum();
        if total != 100 {
            return Err(format!("the shares add up to {total}%, not 100%"));
        }
        split.sort_unstable();
        Ok(BlockSizes { split })
    }

    pub fn sizes(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.split.iter().copied()
    }

    pub fn min(&self) -> u64 {
        self.split[0].0
    }

    pub fn max(&self) -> u64 {
        self.split[self.split.len() - 1].0
    }

    /// Mean bytes per IO, for turning an IO rate into a byte rate and back.
    pub fn mean(&self) -> f64 {
        self.split.iter().map(|&(s, p)| s as f64 * p as f64 / 100.0).sum()
    }

    pub fn is_single(&self) -> bool {
        self.split.len() == 1
    }

    /// The size of the next IO.
    #[inline]
    pub fn pick(&self, rng: &mut Rng) -> u64 {
        if self.split.len() == 1 {
            return self.split[0].0;
        }
        let mut r = rng.below(100) as u32;
        for &(size, pct) in &self.split {
            if r < pct {
                return size;
            }
            r -= pct;
        }
        self.max()
    }
}

impl fmt::Display for BlockSizes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_single() {
            return write!(f, "{}", Size(self.min()));
        }
        let parts: Vec<String> = self.split.iter().map(|&(s, p)| format!("{}/{p}", Size(s))).collect();
        f.write_str(&parts.join(":"))
    }
}

impl Serialize for BlockSizes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
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
    fn bad_splits_say_why() {
        assert!(BlockSizes::parse_split("8k/90:32k/20").unwrap_err().contains("add up to 110%"));
        assert!(BlockSizes::parse_split("8k:32k").unwrap_err().contains("SIZE/PERCENT"));
        assert!(BlockSizes::parse_split("8q/100").unwrap_err().contains("8q"));
        assert_eq!(BlockSizes::parse_split("4k/50:4k/50").unwrap(), BlockSizes::single(4096));
    }
}
