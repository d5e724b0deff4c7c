//! How many seconds a run's time series is binned by: the report's charts draw these
//! bins, and `fathom compare` and a run's `compare:` table judge their noise on them,
//! so each says the same of the same run.

/// Time-series charts keep at most about this many points per series: a day-long run
/// is binned into minutes, a short one stays per second.
pub const MAX_POINTS: i64 = 1500;

/// The bin width in seconds that keeps a run of `span` seconds under [`MAX_POINTS`].
pub fn bin_for(span: i64) -> i64 {
    let raw = (span + MAX_POINTS - 1) / MAX_POINTS;
    [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600].into_iter().find(|&b| b >= raw).unwrap_or(raw)
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
}
