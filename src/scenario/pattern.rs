//! The values a profile's pattern keys parse to: block sizes (`bs`, `bssplit`), where
//! random IOs land (`distribution`) and what written blocks contain (the data keys).
//! They are part of a checked workload, so they live with the scenario; how a worker
//! draws from them (sizes, offsets, bytes) is `crate::workload`'s.

use super::units::Size;
use crate::error::{Error, Result};
use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// The block sizes of a workload: a split of sizes with their shares of IOs, or a range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockSizes {
    kind: Kind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    /// Sizes with their shares of IOs in percent (summing to 100): one size, or `bssplit`.
    Split(Vec<(u64, u32)>),
    /// `step`, `2 × step`, ... up to `count × step`, each as likely (fio's `bsrange`,
    /// whose sizes are the multiples of its smallest one).
    Range { step: u64, count: u64 },
}

impl BlockSizes {
    pub fn single(bs: u64) -> BlockSizes {
        BlockSizes { kind: Kind::Split(vec![(bs, 100)]) }
    }

    /// Parses what `Display` writes: one size, a split or a range.
    pub fn parse(text: &str) -> Result<BlockSizes> {
        if text.contains('/') {
            BlockSizes::parse_split(text)
        } else if text.contains('-') {
            BlockSizes::parse_range(text)
        } else {
            Size::parse(text).map(|s| BlockSizes::single(s.0))
        }
    }

    /// Parses `SIZE/PERCENT:SIZE/PERCENT...`; the percentages must add up to 100.
    pub fn parse_split(text: &str) -> Result<BlockSizes> {
        let mut split: Vec<(u64, u32)> = Vec::new();
        for part in text.split(':') {
            let (size, pct) = part
                .split_once('/')
                .ok_or_else(|| Error::input(format!("`{part}` must be SIZE/PERCENT, e.g. bssplit: 8k/90:32k/10")))?;
            let size = Size::parse(size.trim())?.0;
            let pct: u32 = pct
                .trim()
                .parse()
                .map_err(|_| Error::input(format!("`{pct}` in `{part}` is not a whole percentage")))?;
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
            return Err(Error::input(format!("the shares add up to {total}%, not 100%")));
        }
        split.sort_unstable();
        Ok(BlockSizes { kind: Kind::Split(split) })
    }

    /// Parses `MIN-MAX`: the multiples of `MIN` up to `MAX`, each as likely, as fio's
    /// `bsrange` draws them (`4k-16k`: 4, 8, 12 and 16 KiB).
    pub fn parse_range(text: &str) -> Result<BlockSizes> {
        let (low, high) = text
            .split_once('-')
            .ok_or_else(|| Error::input(format!("`{text}` must be MIN-MAX, e.g. bsrange: 4k-64k")))?;
        let (step, high) = (Size::parse(low.trim())?.0, Size::parse(high.trim())?.0);
        if step == 0 || high < step {
            return Err(Error::input(format!("`{text}`: the smallest size must be above 0 and at most the largest")));
        }
        match high / step {
            1 => Ok(BlockSizes::single(step)),
            count => Ok(BlockSizes { kind: Kind::Range { step, count } }),
        }
    }

    /// Each size and its share of IOs in percent.
    pub fn sizes(&self) -> Box<dyn Iterator<Item = (u64, f64)> + '_> {
        match &self.kind {
            Kind::Split(split) => Box::new(split.iter().map(|&(s, p)| (s, p as f64))),
            &Kind::Range { step, count } => Box::new((1..=count).map(move |k| (k * step, 100.0 / count as f64))),
        }
    }

    pub fn min(&self) -> u64 {
        match &self.kind {
            Kind::Split(split) => split[0].0,
            Kind::Range { step, .. } => *step,
        }
    }

    pub fn max(&self) -> u64 {
        match &self.kind {
            Kind::Split(split) => split[split.len() - 1].0,
            Kind::Range { step, count } => step * count,
        }
    }

    /// Mean bytes per IO, for turning an IO rate into a byte rate and back.
    pub fn mean(&self) -> f64 {
        self.sizes().map(|(s, p)| s as f64 * p / 100.0).sum()
    }

    pub fn is_single(&self) -> bool {
        matches!(&self.kind, Kind::Split(split) if split.len() == 1)
    }

    /// fio's `bsrange` (`MIN-MAX`) when the sizes are a range.
    pub fn range(&self) -> Option<(u64, u64)> {
        matches!(self.kind, Kind::Range { .. }).then(|| (self.min(), self.max()))
    }

    /// The split's sizes and their whole percentages (`None` for a range), to draw by.
    pub fn split(&self) -> Option<&[(u64, u32)]> {
        match &self.kind {
            Kind::Split(split) => Some(split),
            Kind::Range { .. } => None,
        }
    }
}

impl fmt::Display for BlockSizes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            _ if self.is_single() => write!(f, "{}", Size(self.min())),
            Kind::Split(split) => {
                let parts: Vec<String> = split.iter().map(|&(s, p)| format!("{}/{p}", Size(s))).collect();
                f.write_str(&parts.join(":"))
            }
            Kind::Range { .. } => write!(f, "{}-{}", Size(self.min()), Size(self.max())),
        }
    }
}

impl Serialize for BlockSizes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// An access distribution as written in a scenario (`distribution:`).
#[derive(Debug, Clone, PartialEq)]
pub enum Distribution {
    /// Every unit equally likely.
    Uniform,
    /// Unit of rank k (1-based) drawn with probability proportional to 1/k^theta.
    Zipf(f64),
    /// Self-similar "H/(1-H)" rule: a share H of the IOs go to the first (1-H) of the
    /// units, and recursively within them (`pareto:0.8` is the 80/20 rule).
    Pareto(f64),
    /// Normal around the middle of the working set, standard deviation as a percentage
    /// of its size; draws beyond an end wrap around.
    Normal(f64),
    /// Consecutive zones: (share of IOs in percent, share of the space in percent).
    Zoned(Vec<(f64, f64)>),
}

impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Distribution::Uniform => f.write_str("uniform"),
            Distribution::Zipf(t) => write!(f, "zipf:{t}"),
            Distribution::Pareto(h) => write!(f, "pareto:{h}"),
            Distribution::Normal(s) => write!(f, "normal:{s}%"),
            Distribution::Zoned(zones) => {
                let parts: Vec<String> = zones.iter().map(|(io, space)| format!("{io}/{space}")).collect();
                write!(f, "zoned:{}", parts.join(":"))
            }
        }
    }
}

impl serde::Serialize for Distribution {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl FromStr for Distribution {
    type Err = Error;

    fn from_str(text: &str) -> Result<Distribution> {
        let text = text.trim();
        let (kind, arg) = text.split_once(':').map(|(k, a)| (k.trim(), Some(a.trim()))).unwrap_or((text, None));
        let number = |what: &str| -> Result<f64> {
            let a = arg.ok_or_else(|| Error::input(format!("`{kind}` needs {what}, e.g. `{}`", example(kind))))?;
            a.trim_end_matches('%').parse::<f64>().map_err(|_| Error::input(format!("`{a}` is not a number ({what})")))
        };
        match kind {
            "uniform" if arg.is_none() => Ok(Distribution::Uniform),
            "zipf" => {
                let t = number("a theta")?;
                if !(t > 0.0 && t <= 10.0) || t == 1.0 {
                    return Err(Error::input(format!("zipf theta {t} must be above 0, at most 10, and not exactly 1")));
                }
                Ok(Distribution::Zipf(t))
            }
            "pareto" => {
                let h = number("the hot share H")?;
                if !(0.5..1.0).contains(&h) {
                    return Err(Error::input(format!(
                        "pareto H {h} must be at least 0.5 and below 1 (0.8 = 80% of IOs on 20%)"
                    )));
                }
                Ok(Distribution::Pareto(h))
            }
            "normal" => {
                let s = number("a standard deviation in percent of the working set")?;
                if !(s > 0.0 && s <= 100.0) {
                    return Err(Error::input(format!(
                        "normal standard deviation {s}% must be above 0 and at most 100"
                    )));
                }
                Ok(Distribution::Normal(s))
            }
            "zoned" => zoned(arg.unwrap_or("")).map(Distribution::Zoned),
            _ => Err(Error::input(format!(
                "`{text}` is not a distribution: uniform, zipf:THETA, pareto:H, normal:STDDEV%, or zoned:IO%/SPACE%:..."
            ))),
        }
    }
}

fn example(kind: &str) -> &'static str {
    match kind {
        "zipf" => "zipf:1.2",
        "pareto" => "pareto:0.8",
        "normal" => "normal:5%",
        _ => "zoned:60/10:30/20:10/70",
    }
}

/// `60/10:30/20:10/70`: both columns must add up to 100.
fn zoned(text: &str) -> Result<Vec<(f64, f64)>> {
    let mut zones = Vec::new();
    for part in text.split(':') {
        let (io, space) = part
            .split_once('/')
            .ok_or_else(|| Error::input(format!("zone `{part}` must be IO%/SPACE%, e.g. zoned:60/10:40/90")))?;
        let pct = |s: &str| -> Result<f64> {
            let v: f64 = s
                .trim()
                .trim_end_matches('%')
                .parse()
                .map_err(|_| Error::input(format!("`{s}` in zone `{part}` is not a number")))?;
            if !(0.0..=100.0).contains(&v) {
                return Err(Error::input(format!("`{s}` in zone `{part}` is not a percentage")));
            }
            Ok(v)
        };
        let (io, space) = (pct(io)?, pct(space)?);
        if space == 0.0 && io > 0.0 {
            return Err(Error::input(format!("zone `{part}` sends IOs to no space")));
        }
        zones.push((io, space));
    }
    let (io, space): (f64, f64) = zones.iter().fold((0.0, 0.0), |(a, b), z| (a + z.0, b + z.1));
    if (io - 100.0).abs() > 1e-6 || (space - 100.0).abs() > 1e-6 {
        return Err(Error::input(format!("zones add up to {io}% of IOs and {space}% of the space; both must be 100")));
    }
    Ok(zones)
}

/// The content of written blocks (`data:` in a scenario).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Content {
    /// Incompressible, different for every write.
    Random,
    /// Compresses by about `percent`% (with gzip and zstd alike): in every 4 KiB chunk,
    /// that share of bytes is a repeating non-zero text pattern and the rest random.
    Compressible(u8),
    /// All zeros: frees space on thin-provisioned storage.
    Zero,
}

/// Everything that decides the bytes of a write.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DataSpec {
    pub content: Content,
    /// Share of written blocks, in percent, that repeat an earlier block exactly.
    pub dedupe_percent: u8,
    /// Each block starts with a header holding its offset and a crc32c of the rest.
    pub crc: bool,
}

impl Default for DataSpec {
    fn default() -> DataSpec {
        DataSpec { content: Content::Random, dedupe_percent: 0, crc: false }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_splits_say_why() {
        assert!(BlockSizes::parse_split("8k/90:32k/20").unwrap_err().to_string().contains("add up to 110%"));
        assert!(BlockSizes::parse_split("8k:32k").unwrap_err().to_string().contains("SIZE/PERCENT"));
        assert!(BlockSizes::parse_split("8q/100").unwrap_err().to_string().contains("8q"));
        assert_eq!(BlockSizes::parse_split("4k/50:4k/50").unwrap(), BlockSizes::single(4096));
    }

    #[test]
    fn a_range_is_the_multiples_of_its_smallest_size() {
        let r = BlockSizes::parse_range("4k-18k").unwrap();
        assert_eq!(r.sizes().map(|(s, _)| s >> 10).collect::<Vec<_>>(), [4, 8, 12, 16]);
        assert_eq!((r.min(), r.max(), r.mean()), (4096, 16384, 10240.0));
        assert_eq!(r.to_string(), "4k-16k");
        assert_eq!(BlockSizes::parse(&r.to_string()).unwrap(), r, "what the store keeps reads back");
        assert_eq!(BlockSizes::parse_range("4k-4k").unwrap(), BlockSizes::single(4096));
        assert!(BlockSizes::parse_range("8k-4k").unwrap_err().to_string().contains("at most the largest"));
    }

    #[test]
    fn bad_distributions_say_what_is_expected() {
        let err = |t: &str| t.parse::<Distribution>().unwrap_err().to_string();
        assert!(err("zipf").contains("zipf:1.2"));
        assert!(err("pareto:0.3").contains("at least 0.5"));
        assert!(err("zoned:60/10:30/20").contains("add up to 90% of IOs and 30%"));
        assert!(err("gauss:3").contains("uniform, zipf"));
        assert_eq!("normal:5%".parse::<Distribution>().unwrap(), Distribution::Normal(5.0));
        assert_eq!("zoned:50/50:50/50".parse::<Distribution>().unwrap().to_string(), "zoned:50/50:50/50");
    }
}
