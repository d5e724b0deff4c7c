//! Interference: what a workload lost while another ran (OLTP before vs during DSS),
//! as a change in percent and as a ratio, and how long latency took to settle after a
//! change (ILM warm-up).

use crate::metrics::summary::OpSummary;
use serde::Serialize;

/// A workload's figures over one stretch (a phase).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Figures {
    pub iops: f64,
    /// Achieved over asked IOPS, for open-loop workloads.
    pub attainment: Option<f64>,
    pub p50_us: f64,
    pub p99_us: f64,
}

impl Figures {
    /// A workload's figures from its ops over one stretch: IOPS over every op but syncs
    /// (they move no data), latency of op `timed` (else its busiest op there), achieved
    /// over asked IOPS when it asked a rate (`rate_iops`). None when it did no IO there.
    /// `timed` is named by the caller, the same for every stretch: the busiest op of each
    /// stretch on its own can differ (TPC-C's payment before, new-order during), and a
    /// before -> during of two different ops' latencies is no change of either.
    pub fn of<'a>(
        ops: impl IntoIterator<Item = &'a OpSummary>,
        rate_iops: Option<f64>,
        timed: Option<&str>,
    ) -> Option<Figures> {
        let ops: Vec<&OpSummary> = ops.into_iter().filter(|o| o.op != "sync").collect();
        let named = timed.and_then(|t| ops.iter().find(|o| o.op == t));
        let heaviest = named.or_else(|| ops.iter().max_by_key(|o| o.ops))?;
        let iops: f64 = ops.iter().map(|o| o.iops).sum();
        Some(Figures {
            iops,
            attainment: rate_iops.map(|r| iops / r),
            p50_us: heaviest.latency.p50_us,
            p99_us: heaviest.latency.p99_us,
        })
    }
}

/// Change from `before` to `during`, in percent of `before`, per figure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Change {
    pub iops_percent: f64,
    pub attainment_percent: Option<f64>,
    pub p50_percent: f64,
    pub p99_percent: f64,
}

pub fn change(before: &Figures, during: &Figures) -> Change {
    let pct = |a: f64, b: f64| if a != 0.0 { (b - a) / a * 100.0 } else { 0.0 };
    Change {
        iops_percent: pct(before.iops, during.iops),
        attainment_percent: before.attainment.zip(during.attainment).map(|(a, b)| pct(a, b)),
        p50_percent: pct(before.p50_us, during.p50_us),
        p99_percent: pct(before.p99_us, during.p99_us),
    }
}

/// During over before, per figure: `p99 x84` reads where `+8300%` does not. None where
/// the figure was 0 before.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Ratio {
    pub iops: Option<f64>,
    pub attainment: Option<f64>,
    pub p50: Option<f64>,
    pub p99: Option<f64>,
}

pub fn ratio(before: &Figures, during: &Figures) -> Ratio {
    let over = |a: f64, b: f64| (a != 0.0).then(|| b / a);
    Ratio {
        iops: over(before.iops, during.iops),
        attainment: before.attainment.zip(during.attainment).and_then(|(a, b)| over(a, b)),
        p50: over(before.p50_us, during.p50_us),
        p99: over(before.p99_us, during.p99_us),
    }
}

/// Seconds until a per-second latency series reached and stayed within 10% of its
/// final level, the mean of its last `tail` seconds (a quarter of the series, at
/// least 1). None for an empty series.
pub fn time_to_settle(latency: &[f64]) -> Option<usize> {
    let tail = (latency.len() / 4).max(1);
    let last = latency.get(latency.len().checked_sub(tail)?..)?;
    let level = last.iter().sum::<f64>() / last.len() as f64;
    let outside = |v: &f64| (v - level).abs() > 0.1 * level;
    Some(latency.iter().rposition(outside).map_or(0, |i| i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_percent_of_before() {
        let before = Figures { iops: 4000.0, attainment: Some(1.0), p50_us: 200.0, p99_us: 1000.0 };
        let during = Figures { iops: 3000.0, attainment: Some(0.75), p50_us: 300.0, p99_us: 5000.0 };
        let c = change(&before, &during);
        assert_eq!(
            (c.iops_percent, c.attainment_percent, c.p50_percent, c.p99_percent),
            (-25.0, Some(-25.0), 50.0, 400.0)
        );
    }

    #[test]
    fn ratios_are_during_over_before_and_absent_from_nothing() {
        let before = Figures { iops: 4000.0, attainment: Some(1.0), p50_us: 200.0, p99_us: 3150.0 };
        let during = Figures { iops: 4000.0, attainment: Some(1.0), p50_us: 300.0, p99_us: 266_000.0 };
        let r = ratio(&before, &during);
        assert_eq!((r.iops, r.attainment, r.p50), (Some(1.0), Some(1.0), Some(1.5)));
        assert!((r.p99.unwrap() - 84.44).abs() < 0.01, "{r:?}");
        let idle = Figures { iops: 0.0, attainment: None, p50_us: 0.0, p99_us: 0.0 };
        assert_eq!(ratio(&idle, &during), Ratio { iops: None, attainment: None, p50: None, p99: None });
    }

    /// TPC-C's payments outnumber its new orders before, and not during: the latency
    /// compared is new-order's in both, as the caller names it.
    #[test]
    fn the_latency_compared_is_of_one_op_in_every_stretch() {
        use crate::metrics::summary::Throughput;
        use crate::metrics::{Op, OpStats};
        let op = |name: &str, n: u64, latency_ns: u64| {
            let mut stats = OpStats::new(false);
            (0..n).for_each(|_| stats.record(0, latency_ns, 0));
            OpSummary::new("oltp", Op::named(name, Throughput::Tps), &stats, 10.0, None)
        };
        let before = [op("new-order", 100, 1_000_000), op("payment", 120, 5_000_000)];
        let during = [op("new-order", 130, 2_000_000), op("payment", 110, 9_000_000)];
        let (b, d) = (Figures::of(&before, None, Some("new-order")), Figures::of(&during, None, Some("new-order")));
        let (b, d) = (b.unwrap(), d.unwrap());
        assert!((b.p50_us - 1_000.0).abs() < 10.0 && (d.p50_us - 2_000.0).abs() < 20.0, "{b:?} {d:?}");
        // without a name, each stretch's busiest: payment's, then new-order's
        let (b, d) = (Figures::of(&before, None, None).unwrap(), Figures::of(&during, None, None).unwrap());
        assert!(b.p50_us > 4_000.0 && d.p50_us < 2_100.0, "{b:?} {d:?}");
    }

    #[test]
    fn settling_is_the_last_second_outside_the_band() {
        // warm-up from 500 µs down to 100 µs over 6 s, then flat
        let s = [500.0, 400.0, 300.0, 200.0, 150.0, 120.0, 105.0, 100.0, 98.0, 101.0, 100.0, 99.0];
        assert_eq!(time_to_settle(&s), Some(6));
        assert_eq!(time_to_settle(&[100.0; 8]), Some(0));
        assert_eq!(time_to_settle(&[]), None);
    }
}
