//! Expectations: thresholds a run is judged against at its end, k6-style, written as
//! `WORKLOAD[.OP].METRIC CMP VALUE [during PHASE]`, e.g. `oltp.read.iops >= 3900 during
//! dss`, `oltp.write.p99 < 5ms`, `oltp.achieved_rate >= 0.98`.

use crate::error::{Error, Result};
use crate::metrics::Op;
use std::fmt;

/// What an expectation measures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Metric {
    Iops,
    MbPerS,
    /// Latency at a quantile (0.5, 0.99, ...) in ns; 1.0 is the maximum.
    Latency(f64),
    MeanLatency,
    /// Achieved IOPS over the asked rate (open-loop workloads).
    AchievedRate,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    pub fn holds(self, measured: f64, threshold: f64) -> bool {
        match self {
            Cmp::Lt => measured < threshold,
            Cmp::Le => measured <= threshold,
            Cmp::Gt => measured > threshold,
            Cmp::Ge => measured >= threshold,
        }
    }
}

/// One checked expectation.
#[derive(Debug, Clone)]
pub struct Expectation {
    /// As written, for messages.
    pub text: String,
    pub workload: usize,
    /// One op, or all of the workload's (IOPS summed, latency merged).
    pub op: Option<Op>,
    pub metric: Metric,
    pub cmp: Cmp,
    /// In the metric's base unit: IOs/s, MB/s, ns, or a ratio.
    pub threshold: f64,
    /// A phase label or a workload name (the phases it runs in); the workload's whole
    /// measured window when absent.
    pub during: Option<String>,
}

impl fmt::Display for Expectation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Parses one expectation; `index_of` resolves workload names.
pub fn parse(text: &str, index_of: &dyn Fn(&str) -> Option<usize>) -> Result<Expectation> {
    let example = "e.g. `oltp.read.iops >= 3900 during dss` or `oltp.write.p99 < 5ms`";
    let words: Vec<&str> = text.split_whitespace().collect();
    let (subject, cmp, value, during) = match words.as_slice() {
        [s, c, v] => (*s, *c, *v, None),
        [s, c, v, "during", p] => (*s, *c, *v, Some(p.to_string())),
        _ => {
            return Err(Error::input(format!(
                "`{text}` is not WORKLOAD[.OP].METRIC CMP VALUE [during PHASE] ({example})"
            )));
        }
    };
    let cmp = match cmp {
        "<" => Cmp::Lt,
        "<=" => Cmp::Le,
        ">" => Cmp::Gt,
        ">=" => Cmp::Ge,
        other => return Err(Error::input(format!("`{other}` is not a comparison: use <, <=, > or >="))),
    };
    let parts: Vec<&str> = subject.split('.').collect();
    // `p99.9` has a dot of its own
    let (name, op, metric) = match parts.as_slice() {
        [w, m] => (*w, None, m.to_string()),
        [w, "p99", "9"] => (*w, None, "p99.9".to_string()),
        [w, o, m] => (*w, Some(*o), m.to_string()),
        [w, o, "p99", "9"] => (*w, Some(*o), "p99.9".to_string()),
        _ => return Err(Error::input(format!("`{subject}` is not WORKLOAD[.OP].METRIC ({example})"))),
    };
    let workload = index_of(name).ok_or_else(|| Error::input(format!("`{subject}`: no workload named `{name}`")))?;
    let op = match op {
        None => None,
        Some("read") => Some(Op::Read),
        Some("write") => Some(Op::Write),
        Some("sync") => Some(Op::Sync),
        Some(o) => return Err(Error::input(format!("`{subject}`: `{o}` is not an op (read, write or sync)"))),
    };
    let metric = match metric.as_str() {
        "iops" => Metric::Iops,
        "mb_per_s" | "mbps" => Metric::MbPerS,
        "mean" => Metric::MeanLatency,
        "p50" => Metric::Latency(0.5),
        "p90" => Metric::Latency(0.9),
        "p99" => Metric::Latency(0.99),
        "p99.9" => Metric::Latency(0.999),
        "max" => Metric::Latency(1.0),
        "achieved_rate" => Metric::AchievedRate,
        m => {
            return Err(Error::input(format!(
                "`{m}` is not a metric: iops, mb_per_s, mean, p50, p90, p99, p99.9, max or achieved_rate"
            )));
        }
    };
    let threshold = match metric {
        Metric::Latency(_) | Metric::MeanLatency => latency_ns(value)?,
        _ => count(value)?,
    };
    // every metric is a count, a rate or a time: never below zero, never infinite, and a
    // `nan` would fail whatever was measured
    if !(threshold.is_finite() && threshold >= 0.0) {
        return Err(Error::input(format!(
            "`{value}` is not a threshold: expected a finite number, 0 or more ({example})"
        )));
    }
    Ok(Expectation { text: text.to_string(), workload, op, metric, cmp, threshold, during })
}

/// `5ms`, `250us`, `250µs`, `1.5s`, `800ns` in ns (a bare number is rejected: say the unit).
fn latency_ns(v: &str) -> Result<f64> {
    let units = [("ns", 1.0), ("us", 1e3), ("µs", 1e3), ("ms", 1e6), ("s", 1e9)];
    for (unit, mult) in units {
        if let Some(n) = v.strip_suffix(unit)
            && let Ok(x) = n.parse::<f64>()
        {
            return Ok(x * mult);
        }
    }
    Err(Error::input(format!("`{v}` is not a latency with a unit (ns, us, ms, s), e.g. 5ms")))
}

/// `3900`, `3.9k`, `1.2M`, `0.98`.
fn count(v: &str) -> Result<f64> {
    let (n, mult) = match v.chars().last() {
        Some('k') => (&v[..v.len() - 1], 1e3),
        Some('M') => (&v[..v.len() - 1], 1e6),
        _ => (v, 1.0),
    };
    n.parse::<f64>().map(|x| x * mult).map_err(|_| Error::input(format!("`{v}` is not a number (3900, 3.9k, 0.98)")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index_of(n: &str) -> Option<usize> {
        ["oltp", "dss"].iter().position(|w| *w == n)
    }

    #[test]
    fn the_issue_examples_parse() {
        let e = parse("oltp.read.iops >= 3900 during dss", &index_of).unwrap();
        assert_eq!(
            (e.workload, e.op, e.metric, e.cmp, e.threshold),
            (0, Some(Op::Read), Metric::Iops, Cmp::Ge, 3900.0)
        );
        assert_eq!(e.during.as_deref(), Some("dss"));
        let e = parse("oltp.write.p99 < 5ms", &index_of).unwrap();
        assert_eq!((e.metric, e.threshold, e.cmp), (Metric::Latency(0.99), 5e6, Cmp::Lt));
        let e = parse("dss.achieved_rate >= 0.98", &index_of).unwrap();
        assert_eq!((e.workload, e.op, e.metric), (1, None, Metric::AchievedRate));
        let e = parse("oltp.read.p99.9 <= 250us", &index_of).unwrap();
        assert_eq!((e.metric, e.threshold), (Metric::Latency(0.999), 250_000.0));
        assert_eq!(parse("oltp.iops > 3.9k", &index_of).unwrap().threshold, 3900.0);
        assert!(Cmp::Ge.holds(3900.0, 3900.0) && !Cmp::Gt.holds(3900.0, 3900.0));
    }

    #[test]
    fn mistakes_say_what_was_expected() {
        for (text, says) in [
            ("oltp.read.iops => 3900", "comparison"),
            ("web.iops > 1", "no workload named `web`"),
            ("oltp.trim.iops > 1", "not an op"),
            ("oltp.read.p98 < 1ms", "not a metric"),
            ("oltp.read.p99 < 5", "with a unit"),
            ("oltp.read.iops >= lots", "not a number"),
            ("oltp.read.iops >= 1 while dss", "is not WORKLOAD"),
            ("oltp.read.iops >= nan", "not a threshold"),
            ("oltp.read.iops >= -1", "not a threshold"),
            ("oltp.read.iops >= inf", "not a threshold"),
            ("oltp.read.iops >= 1e400", "not a threshold"),
            ("oltp.read.p99 < -5ms", "not a threshold"),
            ("oltp.read.p99 < 1e300s", "not a threshold"),
        ] {
            let e = parse(text, &index_of).unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
    }
}
