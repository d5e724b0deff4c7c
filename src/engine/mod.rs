//! fathom's own IO engine: workers that keep `iodepth` IOs in flight (closed loop) or
//! issue IOs at the instants of an open-loop schedule, timing every IO.
//!
//! Two back ends share everything but the system calls: [`uring`] (one thread per
//! worker, each IO submitted as its slot frees) and [`psync`] (pread/pwrite, one thread per
//! outstanding IO so `iodepth` keeps its meaning); [`null`] does no IO at all and shows
//! what the rest costs. [`target`] lays out and opens the
//! data files. Each worker reports through a [`Recorder`], which hands a sample per op
//! to the collector at every second boundary.

pub mod buffer;
pub mod null;
pub mod psync;
pub mod target;
pub mod uring;

use crate::metrics::{Op, OpStats, Sample};
use crate::scenario::{Arrival, EngineKind, Queue, Workload};
use crate::workload::data::{DataGen, Verify, verify};
use crate::workload::{Io, IoGen, Rng};
use buffer::AlignedBuf;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use target::DataFile;

/// Everything one worker needs; shared by the threads of a psync worker.
pub struct WorkerSpec {
    pub workload_idx: usize,
    pub workload: Arc<Workload>,
    /// Unique within the run.
    pub worker_id: u32,
    /// Position within its workload (0..jobs).
    pub index: u32,
    /// The files this worker does IO on: all of the workload's targets with a shared
    /// queue, one with a queue per target.
    pub files: Vec<Arc<DataFile>>,
    pub engine: EngineKind,
    /// Second 0 of the run clock; samples are numbered from here.
    pub clock_start: Instant,
    pub begin: Instant,
    pub end: Instant,
    /// This worker's share of `rate_iops`, if open loop.
    pub schedule: Option<Arc<Schedule>>,
    pub tx: Sender<Sample>,
    /// Set to stop this worker's workload (a timeline `stop`, or the run ending).
    pub stop: Arc<AtomicBool>,
    /// Set to stop the whole run: a worker that fails sets it.
    pub abort: Arc<AtomicBool>,
}

impl WorkerSpec {
    pub fn stopped(&self, now: Instant) -> bool {
        now >= self.end || self.stop.load(Ordering::Relaxed) || self.abort.load(Ordering::Relaxed)
    }

    pub fn recorder(&self) -> Recorder {
        Recorder::new(self)
    }

    /// This worker's IO generator: the same working set in each of its files (the
    /// smallest file's, if they differ), and its place among the workers sharing them.
    fn io_gen(&self) -> IoGen {
        let w = &self.workload;
        let span = self.files.iter().map(|f| f.size).min().unwrap_or(0);
        let (index, workers) = match w.queue {
            Queue::Shared => (self.index, w.jobs),
            Queue::PerTarget => (self.index % w.jobs, w.jobs),
        };
        IoGen::new(w, span, index, workers, self.files.len() as u32)
    }
}

/// A running worker thread; it ends with an error message if an IO failed.
pub type WorkerThread = JoinHandle<Result<(), String>>;

/// What the workers of one workload share, to start some of them: the timeline's
/// workloads here, and an agent's on another host.
pub struct Workers {
    pub workload_idx: usize,
    pub workload: Arc<Workload>,
    pub files: Vec<Arc<DataFile>>,
    pub engine: EngineKind,
    /// Worker id of the workload's worker 0 (of this host's, on an agent).
    pub first_worker: u32,
    /// How many workers the workload will have: an open-loop rate is shared among them.
    pub planned: u32,
    pub clock_start: Instant,
    pub end: Instant,
    pub tx: Sender<Sample>,
    pub stop: Arc<AtomicBool>,
    pub abort: Arc<AtomicBool>,
}

impl Workers {
    /// Starts workers `from..from + count`, the first at `begin` and each next `stagger`
    /// later; their threads, each with who it is.
    pub fn start(
        &self,
        from: u32,
        count: u32,
        begin: Instant,
        stagger: Duration,
    ) -> std::io::Result<Vec<(WorkerThread, String)>> {
        let w = &self.workload;
        let mut threads = Vec::new();
        for index in from..from + count {
            // each worker's IO starts at its own instant; the run clock stays on whole seconds
            let begin = begin + stagger * (index - from);
            let spec = Arc::new(WorkerSpec {
                workload_idx: self.workload_idx,
                workload: w.clone(),
                worker_id: self.first_worker + index,
                index,
                files: match w.queue {
                    Queue::Shared => self.files.clone(),
                    Queue::PerTarget => vec![self.files[(index / w.jobs) as usize].clone()],
                },
                engine: self.engine,
                clock_start: self.clock_start,
                begin,
                end: self.end,
                schedule: w.rate_iops.map(|r| {
                    let seed = crate::workload::Rng::seed_from(&w.name, index as u64, 2);
                    Arc::new(Schedule::new(begin, r, w.arrival, seed, index, self.planned))
                }),
                tx: self.tx.clone(),
                stop: self.stop.clone(),
                abort: self.abort.clone(),
            });
            let who = format!("{} worker {index}", w.name);
            threads.extend(spawn(spec)?.into_iter().map(|h| (h, who.clone())));
        }
        Ok(threads)
    }
}

/// Starts a worker's threads.
pub fn spawn(spec: Arc<WorkerSpec>) -> std::io::Result<Vec<WorkerThread>> {
    let name = format!("{}-{}", spec.workload.name, spec.index);
    let threads = match spec.engine {
        EngineKind::IoUring | EngineKind::Null => 1,
        EngineKind::Psync => spec.workload.iodepth,
        EngineKind::Fio | EngineKind::Pgbench | EngineKind::Iperf3 => {
            unreachable!("workloads run by another program are started by crate::drivers")
        }
    };
    // One generator per worker: psync threads draw from it in turn, so a worker is one
    // stream of IOs (sequential stays sequential) whatever the engine.
    let io = Arc::new(Mutex::new(spec.io_gen()));
    (0..threads)
        .map(|stream| {
            let spec = spec.clone();
            let io = io.clone();
            std::thread::Builder::new().name(name.clone()).spawn(move || {
                precise_timers();
                sleep_until(spec.begin, &spec.stop);
                let result = match spec.engine {
                    EngineKind::IoUring => uring::run(&spec, &mut io.lock().unwrap_or_else(|e| e.into_inner())),
                    EngineKind::Psync => psync::run(&spec, stream, &io),
                    EngineKind::Null => null::run(&spec, &mut io.lock().unwrap_or_else(|e| e.into_inner())),
                    EngineKind::Fio | EngineKind::Pgbench | EngineKind::Iperf3 => {
                        unreachable!("workloads run by another program are started by crate::drivers")
                    }
                };
                if result.is_err() {
                    // a failed IO ends the whole run now, not when this thread is joined
                    spec.abort.store(true, Ordering::Relaxed);
                }
                result
            })
        })
        .collect()
}

/// Checks that io_uring can be used here (kernel support, not blocked by seccomp, and
/// with the timed wait fathom relies on to stop promptly). The error says why not.
/// `FATHOM_DISABLE_IO_URING=1` makes it report unavailable, to try the fallback.
pub fn probe_io_uring() -> Result<(), String> {
    if std::env::var_os("FATHOM_DISABLE_IO_URING").is_some_and(|v| v != "0") {
        return Err("disabled by FATHOM_DISABLE_IO_URING".into());
    }
    match io_uring::IoUring::new(4) {
        Ok(ring) if ring.params().is_feature_ext_arg() => Ok(()),
        Ok(_) => Err("kernel older than 5.11: no timed completion wait".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// Sleeps in short steps until `at`, returning early when asked to stop.
pub fn sleep_until(at: Instant, stop: &AtomicBool) {
    loop {
        let now = Instant::now();
        if now >= at || stop.load(Ordering::Relaxed) {
            return;
        }
        std::thread::sleep((at - now).min(Duration::from_millis(100)));
    }
}

/// Timer slack defaults to 50 µs; an open-loop schedule wants its IOs on time.
fn precise_timers() {
    // SAFETY: prctl with PR_SET_TIMERSLACK takes a plain integer.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}

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
        next.k += 1;
        next.due_ns = match self.arrival {
            Arrival::Uniform => self.uniform_due(next.k),
            Arrival::Poisson => next.due_ns + exponential(&mut next.rng, self.period_ns),
        };
        due
    }
}

/// An exponentially distributed gap with the given mean.
fn exponential(rng: &mut Rng, mean_ns: f64) -> f64 {
    -(1.0 - rng.unit()).ln() * mean_ns
}

/// Accumulates one worker thread's measurements and sends them every second.
pub struct Recorder {
    tx: Sender<Sample>,
    clock_start: Instant,
    workload: usize,
    worker: u32,
    open_loop: bool,
    /// IOs completing at or after this instant are outside the window and not counted.
    end: Instant,
    t: u32,
    next_boundary: Instant,
    stats: [Option<OpStats>; 3],
}

impl Recorder {
    fn new(spec: &WorkerSpec) -> Recorder {
        let mut r = Recorder {
            tx: spec.tx.clone(),
            clock_start: spec.clock_start,
            workload: spec.workload_idx,
            worker: spec.worker_id,
            open_loop: spec.schedule.is_some(),
            end: spec.end,
            t: 0,
            next_boundary: spec.clock_start,
            stats: [None, None, None],
        };
        r.tick(Instant::now());
        r
    }

    /// Records one completed IO. `now` is its completion time.
    #[inline]
    pub fn record(&mut self, now: Instant, op: Op, bytes: u64, latency: Duration, service: Duration) {
        if now >= self.end {
            return;
        }
        self.tick(now);
        let open_loop = self.open_loop;
        self.stats[op as usize].get_or_insert_with(|| OpStats::new(open_loop)).record(
            bytes,
            latency.as_nanos() as u64,
            service.as_nanos() as u64,
        );
    }

    /// Records the check of a read block (after `record` of its IO).
    pub fn verified(&mut self, outcome: Verify) {
        let open_loop = self.open_loop;
        let v = &mut self.stats[Op::Read as usize].get_or_insert_with(|| OpStats::new(open_loop)).verify;
        match outcome {
            Verify::Good => v.good += 1,
            Verify::Misplaced => v.misplaced += 1,
            Verify::Corrupt => v.corrupt += 1,
            Verify::NoHeader | Verify::OtherSize => {}
        }
    }

    /// Sends the finished second once `now` has crossed into the next one.
    #[inline]
    pub fn tick(&mut self, now: Instant) {
        if now >= self.next_boundary {
            self.flush();
            let t = now.saturating_duration_since(self.clock_start).as_secs();
            self.t = t as u32;
            self.next_boundary = self.clock_start + Duration::from_secs(t + 1);
        }
    }

    fn flush(&mut self) {
        for op in Op::IO {
            if let Some(stats) = self.stats[op as usize].take().filter(|s| s.ops > 0) {
                // The collector outlives the workers; if it failed, the run reports that.
                let _ = self.tx.send(Sample { workload: self.workload, worker: self.worker, t: self.t, op, stats });
            }
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.flush();
    }
}

/// The bytes of one worker's IOs: fills each write's buffer with the workload's data
/// content just before it is issued, and checks read blocks against their crc header.
pub struct Payload {
    data: DataGen,
    verify: bool,
}

impl Payload {
    /// `stream` tells the threads of a psync worker apart.
    pub fn new(spec: &WorkerSpec, stream: u32) -> Payload {
        let w = &spec.workload;
        let seed = Rng::seed_from(&w.name, spec.index as u64, 4 << 32 | stream as u64);
        Payload { data: DataGen::new(&w.data, seed), verify: w.data.crc }
    }

    #[inline]
    pub fn fill(&mut self, io: Io, buf: &mut [u8]) {
        if io.op == Op::Write {
            self.data.fill(buf, io.offset);
        }
    }

    /// Checks a completed read (with `crc`). A failure is read again once, with a
    /// plain pread, before it counts: a read racing a write to the same block (mixed
    /// workloads) can see a half-written block that is fine a moment later.
    pub fn check(&self, spec: &WorkerSpec, io: Io, buf: &[u8], rec: &mut Recorder) {
        if !self.verify || io.op != Op::Read {
            return;
        }
        let mut outcome = verify(buf, io.offset);
        // (without memory for the second read, the first one's outcome stands)
        if outcome.is_failure()
            && let Ok(mut again) = AlignedBuf::new(buf.len())
        {
            let fd = spec.files[io.file as usize].file.as_raw_fd();
            // SAFETY: `again` is valid for its length for the duration of the call.
            let n = unsafe { libc::pread(fd, again.as_mut_ptr().cast(), buf.len(), io.offset as libc::off_t) };
            if n == buf.len() as isize {
                outcome = verify(again.as_mut_slice(), io.offset);
            }
        }
        rec.verified(outcome);
    }
}

/// An appending workload that ran out of space stops there, cleanly: the run goes on
/// and records a warning. True when `err` is that case (the caller then ends the worker).
pub fn out_of_space(spec: &WorkerSpec, io: Io, err: i32) -> bool {
    if spec.workload.extend && io.op == Op::Write && matches!(err, libc::ENOSPC | libc::EDQUOT | libc::EFBIG) {
        let ms = spec.clock_start.elapsed().as_millis() as u64 + 1;
        let _ = spec.files[io.file as usize].full_at_ms.compare_exchange(0, ms, Ordering::Relaxed, Ordering::Relaxed);
        return true;
    }
    false
}

/// Describes a failed IO for the run's error message.
pub fn io_error(spec: &WorkerSpec, io: Io, what: impl std::fmt::Display) -> String {
    format!(
        "{} worker {}: {} of {} bytes at offset {} of {}: {what}",
        spec.workload.name,
        spec.index,
        io.op.as_str(),
        io.len,
        io.offset,
        spec.files[io.file as usize].path.display()
    )
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
