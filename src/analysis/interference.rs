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
    /// (they move no data), latency of its busiest op, achieved over asked IOPS when it
    /// asked a rate (`rate_iops`). None when it did no IO there.
    pub fn of<'a>(ops: impl IntoIterator<Item = &'a OpSummary>, rate_iops: Option<f64>) -> Option<Figures> {
        let ops: Vec<&OpSummary> = ops.into_iter().filter(|o| o.op != "sync").collect();
        let heaviest = ops.iter().max_by_key(|o| o.ops)?;
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

    #[test]
    fn settling_is_the_last_second_outside_the_band() {
        // warm-up from 500 µs down to 100 µs over 6 s, then flat
        let s = [500.0, 400.0, 300.0, 200.0, 150.0, 120.0, 105.0, 100.0, 98.0, 101.0, 100.0, 99.0];
        assert_eq!(time_to_settle(&s), Some(6));
        assert_eq!(time_to_settle(&[100.0; 8]), Some(0));
        assert_eq!(time_to_settle(&[]), None);
    }
}
