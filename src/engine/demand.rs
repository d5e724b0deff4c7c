//! How much of their lives this process's worker threads wanted a CPU for fathom's own
//! code: on one, or runnable and waiting on a run queue, times the share of their CPU
//! time spent in user space (Linux's `/proc/thread-self/schedstat`, kept with
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
    let (before, cpu_before, start) = (wanted_ns(), thread_cpu(), Instant::now());
    let out = work();
    if let (Some(before), Some(after)) = (before, wanted_ns()) {
        // the generator is fathom's own code: the kernel's part (a buffered read's copy
        // from the page cache, the IO path) is the storage stack's, not the generator's
        let ((user0, sys0), (user1, sys1)) = (cpu_before, thread_cpu());
        let (user, sys) = (user1.saturating_sub(user0), sys1.saturating_sub(sys0));
        let wanted = after.saturating_sub(before) as f64 * user_share(user, sys);
        WANTED_NS.fetch_add(wanted as u64, Ordering::Relaxed);
        LIVED_NS.fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }
    out
}

/// This thread's user and system CPU time so far, in microseconds.
fn thread_cpu() -> (u64, u64) {
    // SAFETY: getrusage fills the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a struct of the type getrusage fills.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) };
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    (us(u.ru_utime), us(u.ru_stime))
}

/// The share of a thread's CPU time spent in user space (1.0 when it used none).
fn user_share(user: u64, sys: u64) -> f64 {
    if user + sys == 0 { 1.0 } else { user as f64 / (user + sys) as f64 }
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
    fn the_kernels_share_of_the_cpu_is_not_the_generators() {
        assert_eq!(user_share(300, 100), 0.75);
        assert_eq!(user_share(0, 0), 1.0);
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
