//! The io_uring back end: one thread per worker keeps up to `iodepth` IOs in flight,
//! submitting each IO as its slot frees and reaping completions in batches with one
//! clock read per batch. The file, and the buffers of small IOs, are registered with the
//! ring when the kernel allows, which saves an fd lookup and a page-pinning per IO.

use super::buffer::AlignedBuf;
use super::worker::{Backend, WorkerSpec};
use crate::error::{Error, Result};
use crate::metrics::Op;
use crate::workload::{Io, IoGen};
use io_uring::{IoUring, opcode, squeue, types};
use std::collections::VecDeque;
use std::os::fd::AsRawFd;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Longest single wait, so the worker notices a stop or the end of its run promptly
/// even when a device stalls.
const MAX_WAIT: Duration = Duration::from_millis(100);
/// The largest block size whose buffers are registered with the ring. A registered
/// buffer reaches the block layer page by page, so a large IO from scattered pages is
/// cut at the device's segment limit: 1 MiB writes reached a virtio disk as 427 KiB
/// requests, against about 1.1 MiB unregistered (the kernel joins adjacent pages, and
/// requests merge), and the device moved more bytes with the larger ones
/// (bench/README.md, "Registered buffers"). Below this size an IO fits in any
/// device's segments, and pinning its pages is the larger share of its cost.
const REGISTER_MAX_BS: usize = 64 << 10;
/// How long in-flight IOs may take to drain after the worker stops.
const DRAIN_LIMIT: Duration = Duration::from_millis(1500);

#[derive(Clone, Copy)]
struct Slot {
    io: Io,
    intended: Instant,
    submitted: Instant,
}

/// Builds a ring with the cheapest setup the kernel accepts.
fn ring(entries: u32) -> std::io::Result<IoUring> {
    IoUring::builder()
        .setup_single_issuer()
        .setup_coop_taskrun()
        .setup_defer_taskrun()
        .build(entries)
        .or_else(|_| IoUring::builder().setup_coop_taskrun().build(entries))
        .or_else(|_| IoUring::new(entries))
}

/// Errors of `io_uring_enter` that mean "try again": a signal, or a full completion
/// queue or kernel allocation shortage that reaping completions resolves.
fn transient(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::EBUSY) | Some(libc::EAGAIN))
}

/// The `io_uring` back end.
pub struct Uring;

impl Backend for Uring {
    fn threads(&self, _iodepth: u32) -> u32 {
        1
    }

    fn needs_file(&self) -> bool {
        true
    }

    fn run(&self, spec: &WorkerSpec, _stream: u32, ios: &Mutex<IoGen>) -> Result<()> {
        run(spec, &mut ios.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

pub fn run(spec: &WorkerSpec, ios: &mut IoGen) -> Result<()> {
    let mut q = Queue::new(spec, ios)?;
    let mut result = Ok(());
    loop {
        let now = Instant::now();
        if spec.stopped(now) {
            break;
        }
        q.rec.tick(now);
        q.wake(now);
        result = q.submit_free(now);
        if result.is_err() {
            break;
        }
        let wait = q.wait_for(now);
        let ts = types::Timespec::from(wait.max(Duration::from_micros(1)));
        let args = types::SubmitArgs::new().timespec(&ts);
        if let Err(e) = q.ring.submitter().submit_with_args(1, &args)
            && !transient(&e)
            && e.raw_os_error() != Some(libc::ETIME)
        {
            result = Err(Error::failed(format!("{} worker {}: io_uring submit: {e}", spec.workload.name, spec.index)));
            break;
        }
        result = q.reap();
        if result.is_err() || ((q.full || q.ios.done()) && q.free.len() + q.resting.len() == q.slots.len()) {
            break;
        }
    }
    q.drain();
    result
}

/// What an IO's submission entry is made from: where each slot's buffer is, the
/// files, and what the ring has registered of them.
struct Plan {
    base: *mut u8,
    /// Each slot has a buffer of the largest block size.
    bs: usize,
    fds: Vec<i32>,
    fixed_file: bool,
    fixed_buffers: bool,
    fdatasync: bool,
}

impl Plan {
    /// The bytes of a slot's IO; only valid while no IO of that slot is in flight.
    #[inline]
    fn bytes(&mut self, slot: usize, len: u64) -> &mut [u8] {
        // SAFETY: the slot's region is inside the worker's buffers, which outlive every
        // use here, and callers hold it only while the kernel does not (before
        // submission, after completion).
        unsafe { std::slice::from_raw_parts_mut(self.base.add(slot * self.bs), len as usize) }
    }

    /// The submission entry of a slot's IO, with the opcode for what is registered.
    #[inline]
    fn entry(&self, slot: usize, io: Io) -> squeue::Entry {
        let (op, offset, bs) = (io.op, io.offset, self.bs);
        let (fixed_fd, fd) = (types::Fixed(io.file), types::Fd(self.fds[io.file as usize]));
        // SAFETY: slot < depth, so the offset is inside the buffers (depth x bs bytes). For
        // the caller pushing the entry: the slot's region stays valid and unused by any
        // other IO until this one completes.
        let ptr = unsafe { self.base.add(slot * bs) };
        let len = io.len as u32;
        let entry = match (op, self.fixed_file, self.fixed_buffers) {
            // after the writes before it (IO_DRAIN), as a log writer syncs what it wrote
            (Op::Sync, registered, _) => {
                let flags = if self.fdatasync { types::FsyncFlags::DATASYNC } else { types::FsyncFlags::empty() };
                let e = if registered {
                    opcode::Fsync::new(fixed_fd).flags(flags).build()
                } else {
                    opcode::Fsync::new(fd).flags(flags).build()
                };
                e.flags(squeue::Flags::IO_DRAIN)
            }
            (Op::Read, true, true) => opcode::ReadFixed::new(fixed_fd, ptr, len, 0).offset(offset).build(),
            (Op::Write, true, true) => opcode::WriteFixed::new(fixed_fd, ptr, len, 0).offset(offset).build(),
            (Op::Read, true, false) => opcode::Read::new(fixed_fd, ptr, len).offset(offset).build(),
            (Op::Write, true, false) => opcode::Write::new(fixed_fd, ptr, len).offset(offset).build(),
            (Op::Read, false, true) => opcode::ReadFixed::new(fd, ptr, len, 0).offset(offset).build(),
            (Op::Write, false, true) => opcode::WriteFixed::new(fd, ptr, len, 0).offset(offset).build(),
            (Op::Read, false, false) => opcode::Read::new(fd, ptr, len).offset(offset).build(),
            (Op::Write, false, false) => opcode::Write::new(fd, ptr, len).offset(offset).build(),
            _ => unreachable!("the IO generator issues reads, writes and syncs"),
        };
        entry.user_data(slot as u64)
    }
}

/// A worker's ring and its `iodepth` slots, each free, in flight or resting.
struct Queue<'a> {
    spec: &'a WorkerSpec,
    ios: &'a mut IoGen,
    /// Dropped first, so it flushes the worker's last stats before the ring closes.
    rec: super::worker::Recorder,
    /// Declared before the buffers so it is dropped before them.
    ring: IoUring,
    payload: super::worker::Payload,
    _buffers: AlignedBuf,
    plan: Plan,
    slots: Vec<Slot>,
    free: Vec<usize>,
    /// With `think_time`, a slot rests after its IO completes; completions come in time
    /// order and the pause is constant, so the queue stays sorted.
    resting: VecDeque<(Instant, usize)>,
    think: Duration,
    /// Out of space: only the IOs in flight are left to finish.
    full: bool,
}

impl<'a> Queue<'a> {
    /// Sets up the ring and the buffers, and registers them with the kernel where it
    /// allows, so the loop itself does nothing but IO.
    fn new(spec: &'a WorkerSpec, ios: &'a mut IoGen) -> Result<Queue<'a>> {
        let w = &spec.io;
        let depth = w.iodepth as usize;
        let bs = w.bs.max() as usize;
        let mut buffers = AlignedBuf::new(bs.saturating_mul(depth))?;
        let base = buffers.as_mut_ptr();
        let payload = super::worker::Payload::new(spec, 0);
        let ring = ring(depth.next_power_of_two() as u32).map_err(|e| Error::failed(format!("io_uring setup: {e}")))?;

        let iovec = libc::iovec { iov_base: base.cast(), iov_len: buffers.len() };
        // SAFETY: the buffer outlives the ring (dropped after it) and is not moved (a
        // move of `AlignedBuf` leaves its memory where it is).
        let fixed_buffers = bs <= REGISTER_MAX_BS && unsafe { ring.submitter().register_buffers(&[iovec]) }.is_ok();
        let fds: Vec<i32> = spec.files.iter().map(|f| f.file.as_raw_fd()).collect();
        let fixed_file = ring.submitter().register_files(&fds).is_ok();
        let plan = Plan { base, bs, fds, fixed_file, fixed_buffers, fdatasync: w.fdatasync };

        let rec = spec.recorder();
        let start = Instant::now();
        let slots = vec![
            Slot { io: Io { op: Op::Read, file: 0, offset: 0, len: 0 }, intended: start, submitted: start };
            depth
        ];
        Ok(Queue {
            spec,
            ios,
            rec,
            ring,
            payload,
            _buffers: buffers,
            plan,
            slots,
            free: (0..depth).rev().collect(),
            resting: VecDeque::new(),
            think: w.think_time,
            full: false,
        })
    }

    /// Frees the slots whose rest after their IO is over.
    #[inline]
    fn wake(&mut self, now: Instant) {
        while let Some(&(ready, slot)) = self.resting.front()
            && ready <= now
        {
            self.resting.pop_front();
            self.free.push(slot);
        }
    }

    /// Submits an IO in each free slot whose IO is due.
    ///
    /// Each IO is submitted on its own as soon as its slot is free, as fio does by
    /// default (iodepth_batch_submit=1). Pushing a burst and submitting it once costs
    /// fewer syscalls, but measured on a virtio disk it cut IOPS by a third: the
    /// device then sees IOs in bursts, completes them in bursts, and the queue
    /// alternates between full and idle (bench/README.md).
    #[inline]
    fn submit_free(&mut self, now: Instant) -> Result<()> {
        let spec = self.spec;
        let (submitter, mut sq, _) = self.ring.split();
        // after running out of space, or out of a bounded worker's IO, only the IOs
        // in flight are left to finish
        while let Some(&slot) = self.free.last().filter(|_| !self.full && !self.ios.done()) {
            let intended = match &spec.schedule {
                None => now,
                Some(s) => {
                    let due = s.peek();
                    if due > now || due >= spec.end {
                        break;
                    }
                    s.claim()
                }
            };
            let Some(io) = self.ios.next() else { break };
            self.free.pop();
            self.payload.fill(io, self.plan.bytes(slot, io.len));
            self.slots[slot] = Slot { io, intended, submitted: Instant::now() };
            // SAFETY: see `Plan::entry`; the queue has `depth` entries, at most `depth` in flight.
            if unsafe { sq.push(&self.plan.entry(slot, io)) }.is_err() {
                self.free.push(slot);
                break;
            }
            sq.sync();
            if let Err(e) = submitter.submit()
                && !transient(&e)
            {
                return Err(Error::failed(format!(
                    "{} worker {}: io_uring submit: {e}",
                    spec.workload.name, spec.index
                )));
            }
        }
        Ok(())
    }

    /// How long to wait for completions: until the end of the run, the next IO due or
    /// the next slot's rest ends, and `MAX_WAIT` at most.
    #[inline]
    fn wait_for(&self, now: Instant) -> Duration {
        let spec = self.spec;
        let mut wait = MAX_WAIT.min(spec.end.saturating_duration_since(now));
        if let Some(s) = &spec.schedule
            && !self.free.is_empty()
        {
            wait = wait.min(s.peek().saturating_duration_since(now));
        }
        if let Some(&(ready, _)) = self.resting.front() {
            wait = wait.min(ready.saturating_duration_since(now));
        }
        wait
    }

    /// Records the IOs that completed, all with one clock read, and frees or rests
    /// their slots. An error is the last failed IO's.
    #[inline]
    fn reap(&mut self) -> Result<()> {
        let spec = self.spec;
        let mut result = Ok(());
        let done = Instant::now();
        for cqe in self.ring.completion() {
            let slot = cqe.user_data() as usize;
            let s = self.slots[slot];
            if self.think.is_zero() {
                self.free.push(slot);
            } else {
                self.resting.push_back((done + self.think, slot));
            }
            let res = cqe.result();
            if res < 0 && super::worker::out_of_space(spec, s.io, -res) {
                self.full = true;
            } else if res < 0 {
                result = Err(super::worker::io_error(spec, s.io, std::io::Error::from_raw_os_error(-res)));
            } else if res as u64 != s.io.len {
                result = Err(super::worker::io_error(spec, s.io, format!("short transfer of {res} bytes")));
            } else {
                self.rec.record(done, s.io.op, s.io.len, done - s.intended, done - s.submitted);
                self.payload.check(spec, s.io, self.plan.bytes(slot, s.io.len), &mut self.rec);
            }
        }
        result
    }

    /// Waits for the IOs still in flight, which finished after the end of the window:
    /// their buffers must outlive them, but they are not counted.
    fn drain(&mut self) {
        let depth = self.slots.len();
        let drain_start = Instant::now();
        self.free.extend(self.resting.drain(..).map(|(_, slot)| slot));
        while self.free.len() < depth && drain_start.elapsed() < DRAIN_LIMIT {
            let ts = types::Timespec::from(MAX_WAIT);
            let _ = self.ring.submitter().submit_with_args(1, &types::SubmitArgs::new().timespec(&ts));
            self.free.extend(self.ring.completion().map(|c| c.user_data() as usize));
        }
    }
}
