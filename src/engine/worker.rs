//! What every back end's worker shares: the [`Backend`] seam each back end (`uring.rs`,
//! `psync.rs`, `null.rs`) implements, declaring what it needs so the engine, the layout
//! and the checks ask it instead of matching on `EngineKind`; the worker's spec, the
//! recorder that turns its IOs into per-second samples, the bytes it writes and checks,
//! and how it stops or fails.

use super::arrivals::Schedule;
use super::buffer::AlignedBuf;
use super::datafile::DataFile;
use crate::error::{Error, Result};
use crate::metrics::{Op, OpStats, Sample};
use crate::scenario::{IoProfile, Queue, Workload};
use crate::workload::data::{DataGen, Verify, verify};
use crate::workload::{Io, IoGen, Rng};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One way of doing a worker's IO. A new back end is a file implementing this and its
/// line in `engine::kinds::backend` (the one place an `EngineKind` names its back end).
pub trait Backend: Sync {
    /// Threads one worker runs: 1 for a back end that keeps `iodepth` IOs in flight
    /// itself, `iodepth` for blocking calls (so `iodepth` keeps its meaning).
    fn threads(&self, iodepth: u32) -> u32;

    /// Whether its workers do IO on a data file; one that does none (`null`) needs no
    /// target laid out, here or on another host.
    fn needs_file(&self) -> bool;

    /// Runs thread `stream` of a worker until its end or a stop. The worker's threads
    /// draw their IOs from one generator, so a worker is one stream of IOs (sequential
    /// stays sequential) whatever the back end.
    fn run(&self, spec: &WorkerSpec, stream: u32, ios: &Mutex<IoGen>) -> Result<()>;
}

/// Everything one worker needs; shared by the threads of a psync worker.
pub struct WorkerSpec {
    pub workload_idx: usize,
    pub workload: Arc<Workload>,
    /// The workload's IO profile (a worker runs IO workloads only).
    pub io: IoProfile,
    /// Unique within the run.
    pub worker_id: u32,
    /// Position within its workload (0..workers).
    pub index: u32,
    /// The files this worker does IO on: all of the workload's targets with a shared
    /// queue, one with a queue per target.
    pub files: Vec<Arc<DataFile>>,
    /// The back end that does its IO.
    pub backend: &'static dyn Backend,
    /// Second 0 of the run clock; samples are numbered from here.
    pub clock_start: Instant,
    pub begin: Instant,
    pub end: Instant,
    /// This worker's share of `rate_iops`, if open loop.
    pub schedule: Option<Arc<Schedule>>,
    /// The IOs its schedule gave up, added to its workload's count as it ends.
    pub unsent: Arc<AtomicU64>,
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
    pub(super) fn io_gen(&self) -> IoGen {
        let workers = self.workload.workers;
        let span = self.files.iter().map(|f| f.size).min().unwrap_or(0);
        let index = match self.io.queue {
            Queue::Shared => self.index,
            Queue::PerTarget => self.index % workers,
        };
        IoGen::new(&self.workload.name, &self.io, span, index, workers, self.files.len() as u32)
    }
}

/// A running worker thread; it ends with an error message if an IO failed.
pub type WorkerThread = JoinHandle<Result<()>>;

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
        self.stats[op.code() as usize].get_or_insert_with(|| OpStats::new(open_loop)).record(
            bytes,
            latency.as_nanos() as u64,
            service.as_nanos() as u64,
        );
    }

    /// Records the check of a read block (after `record` of its IO).
    pub fn verified(&mut self, outcome: Verify) {
        let open_loop = self.open_loop;
        let v = &mut self.stats[Op::Read.code() as usize].get_or_insert_with(|| OpStats::new(open_loop)).verify;
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
            if let Some(stats) = self.stats[op.code() as usize].take().filter(|s| s.ops > 0) {
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
        let seed = Rng::seed_from(&spec.workload.name, spec.index as u64, 4 << 32 | stream as u64);
        Payload { data: DataGen::new(&spec.io.data, seed), verify: spec.io.data.crc }
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
    if spec.io.extend && io.op == Op::Write && matches!(err, libc::ENOSPC | libc::EDQUOT | libc::EFBIG) {
        let ms = spec.clock_start.elapsed().as_millis() as u64 + 1;
        let _ = spec.files[io.file as usize].full_at_ms.compare_exchange(0, ms, Ordering::Relaxed, Ordering::Relaxed);
        return true;
    }
    false
}

/// Describes a failed IO for the run's error message.
pub fn io_error(spec: &WorkerSpec, io: Io, what: impl std::fmt::Display) -> Error {
    Error::failed(format!(
        "{} worker {}: {} of {} bytes at offset {} of {}: {what}",
        spec.workload.name,
        spec.index,
        io.op.as_str(),
        io.len,
        io.offset,
        spec.files[io.file as usize].path.display()
    ))
}
