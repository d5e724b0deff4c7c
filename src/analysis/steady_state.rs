//! Steady state by the SNIA Solid State Storage PTS rule: per-second values are
//! averaged into rounds; over a window of 5 rounds the measurement is steady when the
//! range of the values is within 20% of their average, and the range of the
//! least-squares line across the window (its slope times the window's span) is within
//! 10% of the average. Both bounds inclusive.

use serde::Serialize;

/// Rounds in a window (the PTS's 5).
pub const WINDOW: usize = 5;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Steady {
    /// Index of the window's first round.
    pub first_round: usize,
    /// Seconds from the start of the series to the end of the window: when it was known.
    pub at_s: f64,
    /// The window's average.
    pub average: f64,
}

/// Averages per-second `values` into rounds of `round_s` seconds (a last, partial
/// round is dropped).
pub fn rounds(values: &[f64], round_s: usize) -> Vec<f64> {
    let round_s = round_s.max(1);
    values.chunks_exact(round_s).map(|c| c.iter().sum::<f64>() / round_s as f64).collect()
}

/// The first window of rounds that is steady, or None if none is.
pub fn reached(rounds: &[f64], round_s: f64) -> Option<Steady> {
    (0..rounds.len().saturating_sub(WINDOW - 1)).find_map(|i| {
        let w = &rounds[i..i + WINDOW];
        let average = w.iter().sum::<f64>() / WINDOW as f64;
        let (lo, hi) = w.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| (l.min(v), h.max(v)));
        let slope = slope(w);
        let excursion = (slope * (WINDOW - 1) as f64).abs();
        let steady =
            average > 0.0 && hi - lo <= 0.2 * average + 1e-12 * average && excursion <= 0.1 * average + 1e-12 * average;
        steady.then(|| Steady { first_round: i, at_s: (i + WINDOW) as f64 * round_s, average })
    })
}

/// Least-squares slope of `y` against 0, 1, 2, ...
fn slope(y: &[f64]) -> f64 {
    let n = y.len() as f64;
    let mx = (n - 1.0) / 2.0;
    let my = y.iter().sum::<f64>() / n;
    let num: f64 = y.iter().enumerate().map(|(i, v)| (i as f64 - mx) * (v - my)).sum();
    let den: f64 = (0..y.len()).map(|i| (i as f64 - mx).powi(2)).sum();
    num / den
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flat_series_is_steady_at_its_first_window() {
        let r = [100.0, 101.0, 99.0, 100.0, 100.0, 100.0];
        let s = reached(&r, 5.0).unwrap();
        assert_eq!((s.first_round, s.at_s), (0, 25.0));
    }

    #[test]
    fn the_bounds_are_inclusive() {
        // range exactly 20% of the average (100), no trend: steady
        let exactly = [90.0, 110.0, 100.0, 100.0, 100.0];
        assert!(slope(&exactly).abs() * 4.0 <= 10.0);
        assert!(reached(&exactly, 1.0).is_some());
        // a hair over 20%: not
        let over = [89.999, 110.0, 100.0, 100.0, 100.0];
        assert!(reached(&over, 1.0).is_none());
        // a trend whose line climbs exactly 10% of the average across the window
        let trend = [95.0, 97.5, 100.0, 102.5, 105.0];
        assert!(reached(&trend, 1.0).is_some());
        let steeper = [94.9, 97.45, 100.0, 102.55, 105.1];
        assert!(reached(&steeper, 1.0).is_none());
    }

    #[test]
    fn a_warm_up_is_skipped_and_rounds_average_seconds() {
        let secs: Vec<f64> = (0..60).map(|t| if t < 20 { 50.0 + 2.5 * t as f64 } else { 100.0 }).collect();
        let r = rounds(&secs, 5);
        assert_eq!(r.len(), 12);
        let s = reached(&r, 5.0).unwrap();
        assert!(s.first_round >= 3, "{s:?}");
        assert!((s.average - 100.0).abs() < 3.0);
        assert!(reached(&rounds(&secs[..20], 5), 5.0).is_none(), "only warm-up: not steady");
    }
}
