//! How long this process's worker threads waited on a run queue: runnable, wanting a CPU,
//! but not on one (Linux's `/proc/thread-self/schedstat`, kept with CONFIG_SCHED_INFO).
//! CPU seconds alone fall when other programs load the machine; CPU seconds plus this
//! wait are what the generator wanted, however much of it it got. Each worker thread
//! reads its own figure as it starts and ends (never on the IO path) and adds the
//! difference to the process's total; agents' workers add to the agent's process, so a
//! run reads only its local workers here.

use std::sync::atomic::{AtomicU64, Ordering};

/// Nanoseconds finished worker threads waited on a run queue, and how many threads
/// could be measured, since the process began.
static WAITED_NS: AtomicU64 = AtomicU64::new(0);
static THREADS: AtomicU64 = AtomicU64::new(0);

/// Runs `work` on this thread and adds the time it waited for a CPU to the process's
/// total; nothing when schedstat cannot be read.
pub(super) fn measured<T>(work: impl FnOnce() -> T) -> T {
    let before = waited_ns();
    let out = work();
    if let (Some(before), Some(after)) = (before, waited_ns()) {
        WAITED_NS.fetch_add(after.saturating_sub(before), Ordering::Relaxed);
        THREADS.fetch_add(1, Ordering::Relaxed);
    }
    out
}

/// This thread's time waiting on a run queue so far, in nanoseconds.
fn waited_ns() -> Option<u64> {
    parse(&std::fs::read_to_string("/proc/thread-self/schedstat").ok()?)
}

/// schedstat's second field: ns waiting on a run queue (the first is ns on a CPU, the
/// third counts timeslices).
fn parse(text: &str) -> Option<u64> {
    let mut fields = text.split_whitespace().map(str::parse::<u64>);
    fields.next()?.ok()?;
    fields.next()?.ok()
}

/// The process's worker total at one moment; two of them give a run's wait.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Demand {
    waited_ns: u64,
    threads: u64,
}

impl Demand {
    pub fn now() -> Demand {
        Demand { waited_ns: WAITED_NS.load(Ordering::Relaxed), threads: THREADS.load(Ordering::Relaxed) }
    }

    /// Seconds the worker threads that ended since `before` waited for a CPU; None when
    /// none of them could be measured here (no schedstat, or every worker on an agent).
    pub fn waited_since(self, before: Demand) -> Option<f64> {
        (self.threads > before.threads).then(|| self.waited_ns.saturating_sub(before.waited_ns) as f64 / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedstat_gives_the_wait_for_a_cpu() {
        assert_eq!(parse("1056731 351325 4\n"), Some(351_325));
        assert_eq!(parse("1056731\n"), None);
        assert_eq!(parse(""), None);
    }

    #[test]
    fn the_wait_is_what_measured_threads_added_between_two_readings() {
        let before = Demand { waited_ns: 5, threads: 1 };
        let after = Demand { waited_ns: 5 + 1_500_000_000, threads: 3 };
        assert_eq!(after.waited_since(before), Some(1.5));
        // no thread measured: no figure, not a zero wait
        assert_eq!(before.waited_since(before), None);
    }
}
