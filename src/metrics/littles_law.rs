//! Little's law: N = X x R. In a closed-loop IO test N is known (depth x workers), so
//! computing it from measured throughput X and mean latency R checks the measurement:
//! a gap means the generator or something outside the device is queueing.

/// A measured concurrency further than this (as a fraction) from the configured one is
/// flagged: the generator, or queueing outside the device, or a measurement error.
pub const TOLERANCE: f64 = 0.10;

/// Mean number of requests in the system from throughput (per second) and mean
/// latency (seconds).
pub fn concurrency(throughput_per_s: f64, mean_latency_s: f64) -> f64 {
    throughput_per_s * mean_latency_s
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_field_notes_example() {
        // "2,500 IOPS at one outstanding IO must be 400 µs"
        assert!((super::concurrency(2500.0, 400e-6) - 1.0).abs() < 1e-9);
    }
}
