//! How many seconds a run's time series is binned by: the report's charts draw these
//! bins, and `fathom compare` and a run's `compare:` table judge their noise on them,
//! so each says the same of the same run.

use crate::store::{Bin, Scan};
use std::collections::BTreeSet;

/// Time-series charts keep at most about this many points per series: a day-long run
/// is binned into minutes, a short one stays per second.
pub const MAX_POINTS: i64 = 1500;

/// The bin width in seconds that keeps a run of `span` seconds under [`MAX_POINTS`].
pub fn bin_for(span: i64) -> i64 {
    let raw = (span + MAX_POINTS - 1) / MAX_POINTS;
    [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600].into_iter().find(|&b| b >= raw).unwrap_or(raw)
}

/// The starts of the whole bins of `bin` seconds in `[from, to)`: the samples a window
/// is judged on. A bin is one whether or not anything was stored in it, as a second in
/// which a workload moved nothing is a stall, a rate of 0, not a second missing.
pub fn whole_bins(from: f64, to: f64, bin: i64) -> impl Iterator<Item = i64> {
    let bin = bin.max(1);
    let first = (from / bin as f64).ceil() as i64 * bin;
    (first..).step_by(bin as usize).take_while(move |t| (t + bin) as f64 <= to)
}

/// A workload's line, `(op, rate, p99)` over seconds since its scope began.
pub type Line = (String, Vec<(f64, f64)>, Vec<(f64, f64)>);

/// A workload's lines over its `window`: one per op when it ran several (a rate or a
/// p99 is never one line across ops: the five transaction types of TPC-C, or reads and
/// writes, would join into a sawtooth), else one, its op unnamed.
pub fn lines(scan: &Scan, (start, end): (i64, i64), bin: f64) -> Vec<Line> {
    let x = |t: i64| (t - start) as f64 + bin / 2.0;
    let bins: Vec<&Bin> = scan.bins.iter().filter(|b| b.t >= start && b.t < end && !b.op.is_network()).collect();
    let ops: BTreeSet<&str> = bins.iter().map(|b| b.op.as_str()).collect();
    if ops.len() > 1 {
        return ops
            .into_iter()
            .map(|op| {
                let of: Vec<&&Bin> = bins.iter().filter(|b| b.op.as_str() == op).collect();
                let rate = of.iter().map(|b| (x(b.t), b.ops as f64 / bin)).collect();
                let lat = of.iter().filter(|b| b.p99_us.is_finite()).map(|b| (x(b.t), b.p99_us)).collect();
                (op.to_string(), rate, lat)
            })
            .collect();
    }
    let rate = bins.iter().map(|b| (x(b.t), b.ops as f64 / bin)).collect();
    let lat = bins.iter().filter(|b| b.p99_us.is_finite()).map(|b| (x(b.t), b.p99_us)).collect();
    vec![(String::new(), rate, lat)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_runs_are_binned_to_a_readable_number_of_points() {
        assert_eq!(bin_for(60), 1);
        assert_eq!(bin_for(1500), 1);
        assert_eq!(bin_for(1501), 2);
        assert_eq!(bin_for(86_400), 60);
        assert!(86_400 / bin_for(86_400) <= MAX_POINTS);
    }

    #[test]
    fn a_window_holds_its_whole_bins_only() {
        assert_eq!(whole_bins(0.0, 4.0, 1).collect::<Vec<_>>(), [0, 1, 2, 3]);
        assert_eq!(whole_bins(1.5, 4.5, 1).collect::<Vec<_>>(), [2, 3]);
        assert_eq!(whole_bins(1.0, 11.0, 5).collect::<Vec<_>>(), [5]);
        assert_eq!(whole_bins(3.0, 3.5, 1).count(), 0);
    }
}
