//! The wall clock and waiting on the monotonic one, in one place: every module that
//! stamps a row in Unix time or waits for an instant unless told to stop uses these,
//! so the two cannot drift apart in units or in how promptly a stop is heard.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How long a wait may go without looking at its stop flag: a stop (a signal, the end
/// of a workload) is heard within this.
const STOP_POLL: Duration = Duration::from_millis(50);

/// Now, in milliseconds since the Unix epoch (0 on a clock set before it).
pub fn unix_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// Now, in nanoseconds since the Unix epoch (0 on a clock set before it): agents' clock
/// offsets are measured in these.
pub fn unix_ns() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as i64).unwrap_or(0)
}

/// Waits until `at`, or until `stop` is set: true when `at` came, false when stopped.
pub fn sleep_until(at: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let now = Instant::now();
        if now >= at {
            return true;
        }
        std::thread::sleep((at - now).min(STOP_POLL));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_ends_at_its_instant_or_at_once_when_stopped() {
        let go = AtomicBool::new(false);
        let start = Instant::now();
        assert!(sleep_until(start + Duration::from_millis(20), &go));
        assert!(start.elapsed() >= Duration::from_millis(20));
        let stopped = AtomicBool::new(true);
        assert!(!sleep_until(Instant::now() + Duration::from_secs(3600), &stopped));
        let (ms, ns) = (unix_ms(), unix_ns());
        assert!((ns / 1_000_000 - ms).abs() <= 1_000, "{ms} ms and {ns} ns are one clock");
    }
}
