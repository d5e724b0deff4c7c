//! Open-loop arrivals: when each IO of a worker is due.

use crate::scenario::Arrival;
use crate::workload::Rng;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// An open-loop schedule: the instant each IO of a worker is due, fixed in advance by
/// the arrival process, so a stall delays IOs but never removes them (coordinated
/// omission is measured, not hidden). Threads of one worker draw IOs from one schedule.
pub struct Schedule {
    begin: Instant,
    period_ns: f64,
    offset_ns: f64,
    arrival: Arrival,
    next: Mutex<Next>,
}

/// The next unclaimed IO: its number, and for Poisson arrivals its due time and the
/// generator of the gaps.
struct Next {
    k: u64,
    due_ns: f64,
    rng: Rng,
}

impl Schedule {
    /// Worker `index` of `workers` sharing `rate_iops`. Uniform arrivals of workers are
    /// offset by a fraction of the period so their IOs interleave evenly rather than
    /// arriving in bursts; Poisson arrivals are independent per worker (their sum is
    /// again Poisson at the full rate).
    pub fn new(begin: Instant, rate_iops: f64, arrival: Arrival, seed: u64, index: u32, workers: u32) -> Schedule {
        let per_worker = rate_iops / workers as f64;
        let period_ns = 1e9 / per_worker;
        let offset_ns = match arrival {
            Arrival::Uniform => period_ns * index as f64 / workers as f64,
            Arrival::Poisson => 0.0,
        };
        let mut rng = Rng::new(seed);
        let due_ns = match arrival {
            Arrival::Uniform => offset_ns,
            Arrival::Poisson => exponential(&mut rng, period_ns),
        };
        Schedule { begin, period_ns, offset_ns, arrival, next: Mutex::new(Next { k: 0, due_ns, rng }) }
    }

    /// When uniform IO k is due: computed from k, not accumulated, so a day-long run
    /// does not drift.
    fn uniform_due(&self, k: u64) -> f64 {
        self.offset_ns + k as f64 * self.period_ns
    }

    fn at(&self, ns: f64) -> Instant {
        self.begin + Duration::from_nanos(ns as u64)
    }

    /// The due time of the next unclaimed IO.
    pub fn peek(&self) -> Instant {
        let next = self.next.lock().unwrap_or_else(|e| e.into_inner());
        self.at(next.due_ns)
    }

    /// Claims the next IO, returning its due time.
    pub fn claim(&self) -> Instant {
        let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
        let due = self.at(next.due_ns);
        self.advance(&mut next);
        due
    }

    /// Moves `next` on to the IO after it.
    fn advance(&self, next: &mut Next) {
        next.k += 1;
        next.due_ns = match self.arrival {
            Arrival::Uniform => self.uniform_due(next.k),
            Arrival::Poisson => next.due_ns + exponential(&mut next.rng, self.period_ns),
        };
    }

    /// Gives up the IOs due before `until` that were never claimed, and says how many:
    /// IOs a worker could not send in time (its slots all busy, or its thread kept off
    /// the CPU) when its window ends. An open loop that drops them silently would
    /// report a rate it never asked the target for, as k6 counts `dropped_iterations`.
    /// They are counted, not stepped through one by one: a rate far past what the target
    /// keeps, given up at the end of a long run, is billions of IOs.
    pub fn abandon(&self, until: Instant) -> u64 {
        let until_ns = until.saturating_duration_since(self.begin).as_nanos() as f64;
        let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
        if self.arrival == Arrival::Uniform {
            // uniform IO k is due at offset + k x period: those before `until` are counted
            let due = ((until_ns - self.offset_ns) / self.period_ns).ceil().max(0.0) as u64;
            let given_up = due.saturating_sub(next.k);
            next.k += given_up;
            next.due_ns = self.uniform_due(next.k);
            return given_up;
        }
        let mut given_up = 0;
        while next.due_ns < until_ns && given_up < POISSON_STEPPED {
            given_up += 1;
            self.advance(&mut next);
        }
        if next.due_ns < until_ns {
            // the rest as many as the interval holds on average, and the next IO a fresh gap
            // after `until`: Poisson arrivals do not remember the gaps before
            let rest = 1 + ((until_ns - next.due_ns) / self.period_ns).round() as u64;
            given_up += rest;
            next.k += rest;
            next.due_ns = until_ns + exponential(&mut next.rng, self.period_ns);
        }
        given_up
    }
}

/// How many Poisson IOs [`Schedule::abandon`] draws one by one before it counts the rest
/// by their mean: exact for the few a busy second leaves behind, bounded for a day's.
const POISSON_STEPPED: u64 = 100_000;

/// An exponentially distributed gap with the given mean.
fn exponential(rng: &mut Rng, mean_ns: f64) -> f64 {
    -(1.0 - rng.unit()).ln() * mean_ns
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_is_exact_and_interleaves_workers() {
        let t0 = Instant::now();
        let a = Schedule::new(t0, 1000.0, Arrival::Uniform, 1, 0, 2);
        let b = Schedule::new(t0, 1000.0, Arrival::Uniform, 1, 1, 2);
        // 500/s per worker: a at 0, 2, 4 ms; b at 1, 3, 5 ms
        assert_eq!(a.claim() - t0, Duration::ZERO);
        assert_eq!(a.claim() - t0, Duration::from_millis(2));
        assert_eq!(b.claim() - t0, Duration::from_millis(1));
        assert_eq!(b.peek() - t0, Duration::from_millis(3));
        // no drift over a long run: IO 500,000 of a 500/s stream is due at exactly 1000 s
        assert_eq!(a.at(a.uniform_due(500_000)) - t0, Duration::from_secs(1000));
    }

    #[test]
    fn ios_due_but_never_claimed_are_given_up_once() {
        let t0 = Instant::now();
        for arrival in [Arrival::Uniform, Arrival::Poisson] {
            let s = Schedule::new(t0, 1000.0, arrival, 3, 0, 1);
            for _ in 0..3 {
                s.claim();
            }
            // about 10 due in the first 10 ms (exactly 10 when uniform: at 0, 1, ... 9 ms)
            let given_up = s.abandon(t0 + Duration::from_millis(10));
            let due = 3 + given_up;
            match arrival {
                Arrival::Uniform => assert_eq!(due, 10),
                Arrival::Poisson => assert!((2..=30).contains(&due), "{due}"),
            }
            // given up once: the next IO is due after `until`, and asking again gives none
            assert!(s.peek() >= t0 + Duration::from_millis(10));
            assert_eq!(s.abandon(t0 + Duration::from_millis(10)), 0);
        }
    }

    #[test]
    fn a_day_of_ios_given_up_is_counted_not_stepped_through() {
        let t0 = Instant::now();
        let day = t0 + Duration::from_secs(86_400);
        let s = Schedule::new(t0, 10_000_000.0, Arrival::Uniform, 5, 0, 1);
        s.claim();
        assert_eq!(s.abandon(day), 864_000_000_000 - 1);
        assert!(s.peek() >= day);
        let p = Schedule::new(t0, 10_000_000.0, Arrival::Poisson, 5, 0, 1);
        let given_up = p.abandon(day) as f64;
        assert!((given_up / 864e9 - 1.0).abs() < 0.001, "{given_up}");
        assert!(p.peek() >= day);
        assert_eq!(p.abandon(day), 0);
    }

    #[test]
    fn poisson_arrivals_have_the_rate_and_the_spread() {
        let t0 = Instant::now();
        let s = Schedule::new(t0, 1000.0, Arrival::Poisson, 7, 0, 1);
        let dues: Vec<f64> = (0..100_000).map(|_| (s.claim() - t0).as_secs_f64()).collect();
        // 100,000 IOs at 1000/s take 100 s (within 1%)
        assert!((dues[99_999] - 100.0).abs() < 1.0, "{}", dues[99_999]);
        // exponential gaps: standard deviation equals the mean (1 ms)
        let gaps: Vec<f64> = dues.windows(2).map(|w| w[1] - w[0]).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
        assert!((sd / mean - 1.0).abs() < 0.02, "cv {}", sd / mean);
        assert!(gaps.iter().all(|&g| g >= 0.0));
    }
}
