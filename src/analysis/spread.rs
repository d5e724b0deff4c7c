//! How far repeated measurements of one thing spread (a recovery timed in each of
//! three runs): the least, the median and the most, and the range over the median, as
//! hyperfine reports repeated runs. Too few values to estimate a deviation from, so
//! the range is the honest figure.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    /// Values it was computed from.
    pub n: usize,
    pub min: f64,
    pub median: f64,
    pub max: f64,
    /// (max - min) / median; None when the median is 0, where no share means anything.
    pub relative: Option<f64>,
}

impl Spread {
    /// The spread of `values` (NaN and infinities left out); None when none is left.
    pub fn of(values: &[f64]) -> Option<Spread> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 };
        let (min, max) = (v[0], v[n - 1]);
        let relative = (median > 0.0).then(|| (max - min) / median);
        Some(Spread { n, min, median, max, relative })
    }
}

#[cfg(test)]
mod tests {
    use super::Spread;

    #[test]
    fn the_spread_is_the_range_over_the_median() {
        let s = Spread::of(&[120.0, 100.0, 110.0]).unwrap();
        assert_eq!((s.n, s.min, s.median, s.max), (3, 100.0, 110.0, 120.0));
        assert!((s.relative.unwrap() - 20.0 / 110.0).abs() < 1e-12);
        // an even count's median is the mean of the middle two
        assert_eq!(Spread::of(&[4.0, 1.0, 3.0, 2.0]).unwrap().median, 2.5);
        let zero = Spread::of(&[0.0, 0.0, f64::NAN]).unwrap();
        assert_eq!((zero.n, zero.relative), (2, None));
        assert!(Spread::of(&[f64::NAN]).is_none());
    }
}
