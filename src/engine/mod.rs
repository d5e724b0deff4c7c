//! fathom's own IO engine: workers that keep `iodepth` IOs in flight (closed loop) or
//! issue IOs at the instants of an open-loop schedule, timing every IO.
//!
//! The back ends share everything but the system calls, behind [`Backend`]: [`uring`]
//! (one thread per worker, each IO submitted as its slot frees) and [`psync`]
//! (pread/pwrite, one thread per outstanding IO so `iodepth` keeps its meaning); [`null`]
//! does no IO at all and shows what the rest costs. [`target`] lays out and opens the
//! data files. Each worker reports through a [`Recorder`], which hands a sample per op
//! to the collector at every second boundary.

pub mod arrivals;
pub mod buffer;
pub mod datafile;
pub mod demand;
pub mod kinds;
pub mod null;
pub mod psync;
pub mod target;
pub mod uring;
pub mod worker;

use crate::error::{Error, Result};
use crate::metrics::Sample;
use crate::scenario::{EngineKind, Queue, Workload};
use arrivals::Schedule;
use datafile::DataFile;
pub use kinds::backend;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
pub use worker::{Backend, WorkerSpec, WorkerThread};

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
    /// The IOs its open-loop schedules were due to send and never sent, counted as its
    /// workers end.
    pub unsent: Arc<AtomicU64>,
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
        // workloads of another program are started by `crate::drivers`, never here
        let no_workers =
            || std::io::Error::other(format!("{}: `{}` runs no workers of fathom's engine", w.name, self.engine));
        let backend = backend(self.engine).ok_or_else(no_workers)?;
        let io = w.io().ok_or_else(no_workers)?;
        let mut threads = Vec::new();
        for index in from..from + count {
            // each worker's IO starts at its own instant; the run clock stays on whole seconds
            let begin = begin + stagger * (index - from);
            let spec = Arc::new(WorkerSpec {
                workload_idx: self.workload_idx,
                workload: w.clone(),
                io: io.clone(),
                worker_id: self.first_worker + index,
                index,
                files: match io.queue {
                    // an appender writes its own file (see `target::prepare`)
                    _ if io.extend => vec![self.files[index as usize % self.files.len()].clone()],
                    Queue::Shared => self.files.clone(),
                    // its workers on each target; on an agent, `index` counts on from the
                    // hosts before this one, each with its workers on every target
                    Queue::PerTarget => vec![self.files[(index / w.workers) as usize % self.files.len()].clone()],
                },
                backend,
                clock_start: self.clock_start,
                begin,
                end: self.end,
                schedule: io.rate_iops.map(|r| {
                    let seed = crate::workload::Rng::seed_from(&w.name, index as u64, 2);
                    Arc::new(Schedule::new(begin, r, io.arrival, seed, index, self.planned))
                }),
                unsent: self.unsent.clone(),
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

/// Starts a worker's threads: as many as its back end runs per worker, all drawing
/// from one generator.
fn spawn(spec: Arc<WorkerSpec>) -> std::io::Result<Vec<WorkerThread>> {
    let name = format!("{}-{}", spec.workload.name, spec.index);
    let threads = spec.backend.threads(spec.io.iodepth);
    let io = Arc::new(Mutex::new(spec.io_gen()));
    (0..threads)
        .map(|stream| {
            let spec = spec.clone();
            let io = io.clone();
            std::thread::Builder::new().name(name.clone()).spawn(move || {
                precise_timers();
                crate::clock::sleep_until(spec.begin, &spec.stop);
                let result = demand::measured(|| spec.backend.run(&spec, stream, &io));
                give_up_unsent(&spec);
                if result.is_err() {
                    // a failed IO ends the whole run now, not when this thread is joined
                    spec.abort.store(true, Ordering::Relaxed);
                }
                result
            })
        })
        .collect()
}

/// An open-loop worker stopped (its window's end, a stop, a failure) counts the IOs its
/// schedule had due by then and never sent; one that ran out of IOs to do (a bounded
/// pass) owes none. Each of a worker's threads asks, and the schedule gives them up once.
fn give_up_unsent(spec: &WorkerSpec) {
    let now = Instant::now();
    if let Some(schedule) = spec.schedule.as_ref().filter(|_| spec.stopped(now)) {
        spec.unsent.fetch_add(schedule.abandon(now.min(spec.end)), Ordering::Relaxed);
    }
}

/// Checks that io_uring can be used here (kernel support, not blocked by seccomp, and
/// with the timed wait fathom relies on to stop promptly). The error says why not.
/// `FATHOM_DISABLE_IO_URING=1` makes it report unavailable, to try the fallback.
pub fn probe_io_uring() -> Result<()> {
    if std::env::var_os("FATHOM_DISABLE_IO_URING").is_some_and(|v| v != "0") {
        return Err(Error::failed("disabled by FATHOM_DISABLE_IO_URING"));
    }
    match io_uring::IoUring::new(4) {
        Ok(ring) if ring.params().is_feature_ext_arg() => Ok(()),
        Ok(_) => Err(Error::failed("kernel older than 5.11: no timed completion wait")),
        Err(e) => Err(Error::failed(uring_refused(&e))),
    }
}

/// Why `io_uring_setup` failed, in words that say what to change. In a container it is
/// most often the runtime's seccomp profile, which a person would not guess from
/// "Operation not permitted".
fn uring_refused(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::EPERM) => format!(
            "{e}: blocked by a seccomp profile (Docker's and containerd's default ones block io_uring) or by \
             the sysctl kernel.io_uring_disabled; docs/hosts.md says how to allow it"
        ),
        Some(libc::ENOSYS) => format!("{e}: this kernel has no io_uring"),
        _ => e.to_string(),
    }
}

/// Timer slack defaults to 50 µs; an open-loop schedule wants its IOs on time.
fn precise_timers() {
    // SAFETY: prctl with PR_SET_TIMERSLACK takes a plain integer.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}
