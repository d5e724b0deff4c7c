//! How much of their lives this process's worker threads wanted a CPU: on one, or
//! runnable and waiting on a run queue (Linux's `/proc/thread-self/schedstat`, kept with
//! CONFIG_SCHED_INFO). Unlike CPU seconds over wall seconds, this share does not fall
//! when other programs load the machine: a generator that could use all the CPU it got
//! shows as such however much it actually got. Each worker thread reads its own figure
//! as it starts and ends (never on the IO path) and adds the difference to the process's
//! totals; agents' workers add to the agent's process, so a run reads only its local
//! workers here.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Nanoseconds the finished worker threads wanted a CPU, and lived, since the process began.
static WANTED_NS: AtomicU64 = AtomicU64::new(0);
static LIVED_NS: AtomicU64 = AtomicU64::new(0);

/// Runs `work` on this thread and adds the time it wanted a CPU and the time it took to
/// the process's totals; nothing when schedstat cannot be read.
pub(super) fn measured<T>(work: impl FnOnce() -> T) -> T {
    let (before, start) = (wanted_ns(), Instant::now());
    let out = work();
    if let (Some(before), Some(after)) = (before, wanted_ns()) {
        WANTED_NS.fetch_add(after.saturating_sub(before), Ordering::Relaxed);
        LIVED_NS.fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }
    out
}

/// This thread's time on a CPU plus its time waiting on a run queue, in nanoseconds.
fn wanted_ns() -> Option<u64> {
    parse(&std::fs::read_to_string("/proc/thread-self/schedstat").ok()?)
}

/// schedstat's first two fields: ns on a CPU, ns waiting on a run queue (the third
/// counts timeslices).
fn parse(text: &str) -> Option<u64> {
    let mut fields = text.split_whitespace().map(str::parse::<u64>);
    Some(fields.next()?.ok()? + fields.next()?.ok()?)
}

/// The process's worker totals at one moment; two of them give a run's share.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Demand {
    wanted_ns: u64,
    lived_ns: u64,
}

impl Demand {
    pub fn now() -> Demand {
        Demand { wanted_ns: WANTED_NS.load(Ordering::Relaxed), lived_ns: LIVED_NS.load(Ordering::Relaxed) }
    }

    /// The share of their lives the worker threads that ended since `before` wanted a
    /// CPU (1.0: always); None when none did here, or schedstat was unreadable.
    pub fn share_since(self, before: Demand) -> Option<f64> {
        let lived = self.lived_ns.saturating_sub(before.lived_ns);
        (lived > 0).then(|| self.wanted_ns.saturating_sub(before.wanted_ns) as f64 / lived as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedstat_gives_time_on_a_cpu_plus_waiting_for_one() {
        assert_eq!(parse("1056731 351325 4\n"), Some(1_408_056));
        assert_eq!(parse("1056731\n"), None);
        assert_eq!(parse(""), None);
    }

    #[test]
    fn the_share_is_wanted_time_over_lived_time_between_two_readings() {
        let before = Demand { wanted_ns: 5, lived_ns: 10 };
        // two threads lived 2 s each; one wanted a CPU throughout, the other half the time
        let after = Demand { wanted_ns: 5 + 3_000_000_000, lived_ns: 10 + 4_000_000_000 };
        assert_eq!(after.share_since(before), Some(0.75));
        assert_eq!(before.share_since(before), None);
    }
}
