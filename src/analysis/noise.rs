//! Whether a figure changed between two runs by more than the runs' own noise. A run's
//! figure (IOPS, a percentile) is one number, but the run measured it second by second,
//! and those per-second samples scatter: two runs of the same thing differ by a percent
//! or two every time. `fathom compare` calls a change better or worse only when the 95%
//! confidence intervals of the mean of the two runs' per-second samples do not overlap
//! (Student's t, so a few seconds give wide intervals); otherwise the change is within
//! the noise, `~`. Per-second samples follow each other closely, so the intervals are,
//! if anything, too narrow: overlap is a conservative test, and non-overlap at 95% a
//! stricter one than a t-test of the difference.

use serde::Serialize;

/// The 95% confidence interval of the mean of some samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    pub mean: f64,
    pub low: f64,
    pub high: f64,
    /// Samples it was computed from.
    pub samples: usize,
}

impl Interval {
    /// The interval of the mean of `samples` (NaN and infinities left out); None with
    /// fewer than two, whose spread is unknown.
    pub fn of(samples: &[f64]) -> Option<Interval> {
        let v: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
        let n = v.len();
        if n < 2 {
            return None;
        }
        let mean = v.iter().sum::<f64>() / n as f64;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let half = t95(n - 1) * (var / n as f64).sqrt();
        Some(Interval { mean, low: mean - half, high: mean + half, samples: n })
    }

    fn overlaps(&self, other: &Interval) -> bool {
        self.low <= other.high && other.low <= self.high
    }

    /// How far apart the means of two intervals may be and still overlap, the sum of
    /// their half-widths: the noise a difference has to exceed to be called a change.
    pub fn margin(&self, other: &Interval) -> f64 {
        (self.high - self.low + other.high - other.low) / 2.0
    }
}

/// A figure of a later run against the same figure of the first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Change {
    #[serde(rename = "better")]
    Better,
    #[serde(rename = "worse")]
    Worse,
    /// Within the noise of the two runs' samples (or too few samples to tell).
    #[serde(rename = "~")]
    Noise,
}

impl Change {
    /// `base` and `other`: the per-second samples of the figure in the first run and
    /// in the later one; `higher_is_better` for rates, not for latency.
    pub fn judge(base: &[f64], other: &[f64], higher_is_better: bool) -> Change {
        let (Some(a), Some(b)) = (Interval::of(base), Interval::of(other)) else {
            return Change::Noise;
        };
        if a.overlaps(&b) {
            return Change::Noise;
        }
        if (b.mean > a.mean) == higher_is_better { Change::Better } else { Change::Worse }
    }

    /// A figure that is the whole window's own (a percentile of every op in it), `a` in
    /// the first run and `b` in the later one, judged on itself: changed when the two
    /// differ by more than the noise of their runs' per-second samples (the half-widths
    /// of both intervals), in the direction they differ in. The verdict is then about
    /// the figure shown, never the mean of seconds beside it.
    pub fn judge_figures(a: f64, b: f64, base: &[f64], other: &[f64], higher_is_better: bool) -> Change {
        let (Some(ia), Some(ib)) = (Interval::of(base), Interval::of(other)) else {
            return Change::Noise;
        };
        if (b - a).abs() <= ia.margin(&ib) {
            return Change::Noise;
        }
        if (b > a) == higher_is_better { Change::Better } else { Change::Worse }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Change::Better => "better",
            Change::Worse => "worse",
            Change::Noise => "~",
        }
    }
}

/// Student's t for a two-sided 95% interval with `df` degrees of freedom (df >= 1).
fn t95(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df - 1],
        // the next tabulated value below df, so the interval is never too narrow
        31..=40 => 2.042,
        41..=60 => 2.021,
        61..=120 => 2.000,
        121..=1000 => 1.980,
        _ => 1.962,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The figure shown moved up while the mean of its seconds moved down: the verdict
    /// follows the figure, and is within the noise when the figures differ by less.
    #[test]
    fn a_whole_window_figure_is_judged_on_itself_against_its_seconds_noise() {
        let (base, other) = ([10.0, 10.2, 9.8, 10.0], [9.0, 9.2, 8.8, 9.0]);
        assert_eq!(Change::judge(&base, &other, false), Change::Better);
        assert_eq!(Change::judge_figures(10.0, 12.0, &base, &other, false), Change::Worse);
        assert_eq!(Change::judge_figures(10.0, 10.1, &base, &other, false), Change::Noise);
        assert_eq!(Change::judge_figures(10.0, 8.0, &base, &other, false), Change::Better);
        assert_eq!(
            Change::judge_figures(10.0, 8.0, &[10.0], &other, false),
            Change::Noise,
            "one second: no noise known"
        );
    }

    #[test]
    fn the_interval_is_the_mean_plus_and_minus_t_standard_errors() {
        let i = Interval::of(&[9.0, 10.0, 11.0]).unwrap();
        // s = 1, n = 3, t(2) = 4.303
        assert_eq!(i.mean, 10.0);
        assert!((i.high - (10.0 + 4.303 / 3f64.sqrt())).abs() < 1e-9, "{i:?}");
        assert_eq!(i.samples, 3);
        assert_eq!(Interval::of(&[5.0]), None, "one sample has no spread");
        assert_eq!(Interval::of(&[5.0, f64::NAN]), None, "NaN is no sample");
    }

    #[test]
    fn a_change_within_the_runs_own_scatter_is_noise() {
        // 0.7% less IOPS, with seconds scattering by 2%: the first issue's "-0.7% better"
        let a = [10_000.0, 10_200.0, 9_800.0, 10_100.0, 9_900.0, 10_000.0];
        let b: Vec<f64> = a.iter().map(|x| x * 0.993).collect();
        assert_eq!(Change::judge(&a, &b, true), Change::Noise);
        assert_eq!(Change::judge(&a, &b, false), Change::Noise);
        // the same run twice
        assert_eq!(Change::judge(&a, &a, true), Change::Noise);
    }

    #[test]
    fn a_change_beyond_the_scatter_is_better_or_worse_by_direction() {
        let a = [10_000.0, 10_200.0, 9_800.0, 10_100.0, 9_900.0];
        let b = [12_000.0, 12_100.0, 11_900.0, 12_050.0, 11_950.0];
        assert_eq!(Change::judge(&a, &b, true), Change::Better, "more IOPS");
        assert_eq!(Change::judge(&b, &a, true), Change::Worse);
        // latency: higher is worse
        assert_eq!(Change::judge(&a, &b, false), Change::Worse);
        assert_eq!(Change::judge(&b, &a, false), Change::Better);
    }

    #[test]
    fn too_few_seconds_cannot_tell_a_change_from_noise() {
        // a big difference measured for one second, or two wildly scattered seconds
        assert_eq!(Change::judge(&[100.0], &[200.0], true), Change::Noise);
        assert_eq!(Change::judge(&[100.0, 300.0], &[400.0, 600.0], true), Change::Noise);
        // the same difference over five steady seconds is real
        let a = [100.0, 110.0, 90.0, 105.0, 95.0];
        let b = [400.0, 410.0, 390.0, 405.0, 395.0];
        assert_eq!(Change::judge(&a, &b, true), Change::Better);
    }
}
