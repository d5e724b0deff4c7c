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
    let w = &spec.io;
    let depth = w.iodepth as usize;
    // each slot has a buffer of the largest block size
    let bs = w.bs.max() as usize;
    // Declared before the ring so they are dropped after it.
    let mut buffers = AlignedBuf::new(bs.saturating_mul(depth))?;
    let base = buffers.as_mut_ptr();
    // The bytes of a slot's IO; only valid while no IO of that slot is in flight.
    let slot_bytes = |slot: usize, len: u64| {
        // SAFETY: the slot's region is inside `buffers`, which outlives every use here,
        // and callers hold it only while the kernel does not (before submission, after
        // completion).
        unsafe { std::slice::from_raw_parts_mut(base.add(slot * bs), len as usize) }
    };
    let mut payload = super::worker::Payload::new(spec, 0);
    let mut ring = ring(depth.next_power_of_two() as u32).map_err(|e| Error::failed(format!("io_uring setup: {e}")))?;

    let iovec = libc::iovec { iov_base: base.cast(), iov_len: buffers.len() };
    // SAFETY: the buffer outlives the ring (dropped after it) and is not moved.
    let fixed_buffers = bs <= REGISTER_MAX_BS && unsafe { ring.submitter().register_buffers(&[iovec]) }.is_ok();
    let fds: Vec<i32> = spec.files.iter().map(|f| f.file.as_raw_fd()).collect();
    let fixed_file = ring.submitter().register_files(&fds).is_ok();

    let prep = |slot: usize, io: Io| -> squeue::Entry {
        let (op, offset) = (io.op, io.offset);
        let (fixed_fd, fd) = (types::Fixed(io.file), types::Fd(fds[io.file as usize]));
        // SAFETY: slot < depth, so the offset is inside `buffers` (depth x bs bytes). For
        // the caller pushing the entry: the slot's region stays valid and unused by any
        // other IO until this one completes.
        let ptr = unsafe { base.add(slot * bs) };
        let len = io.len as u32;
        let entry = match (op, fixed_file, fixed_buffers) {
            // after the writes before it (IO_DRAIN), as a log writer syncs what it wrote
            (Op::Sync, registered, _) => {
                let flags = if w.fdatasync { types::FsyncFlags::DATASYNC } else { types::FsyncFlags::empty() };
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
    };

    let mut rec = spec.recorder();
    let start = Instant::now();
    let mut slots =
        vec![Slot { io: Io { op: Op::Read, file: 0, offset: 0, len: 0 }, intended: start, submitted: start }; depth];
    let mut free: Vec<usize> = (0..depth).rev().collect();
    // With `think_time`, a slot rests after its IO completes; completions come in time
    // order and the pause is constant, so the queue stays sorted.
    let think = w.think_time;
    let mut resting: VecDeque<(Instant, usize)> = VecDeque::new();
    let mut result = Ok(());
    let mut full = false;
    loop {
        let now = Instant::now();
        if spec.stopped(now) {
            break;
        }
        rec.tick(now);
        while let Some(&(ready, slot)) = resting.front()
            && ready <= now
        {
            resting.pop_front();
            free.push(slot);
        }
        // Each IO is submitted on its own as soon as its slot is free, as fio does by
        // default (iodepth_batch_submit=1). Pushing a burst and submitting it once costs
        // fewer syscalls, but measured on a virtio disk it cut IOPS by a third: the
        // device then sees IOs in bursts, completes them in bursts, and the queue
        // alternates between full and idle (bench/README.md).
        {
            let (submitter, mut sq, _) = ring.split();
            // after running out of space, or out of a bounded worker's IO, only the IOs
            // in flight are left to finish
            while let Some(&slot) = free.last().filter(|_| !full && !ios.done()) {
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
                let Some(io) = ios.next() else { break };
                free.pop();
                payload.fill(io, slot_bytes(slot, io.len));
                slots[slot] = Slot { io, intended, submitted: Instant::now() };
                // SAFETY: see `prep`; the queue has `depth` entries, at most `depth` in flight.
                if unsafe { sq.push(&prep(slot, io)) }.is_err() {
                    free.push(slot);
                    break;
                }
                sq.sync();
                if let Err(e) = submitter.submit()
                    && !transient(&e)
                {
                    result = Err(Error::failed(format!(
                        "{} worker {}: io_uring submit: {e}",
                        spec.workload.name, spec.index
                    )));
                    break;
                }
            }
        }
        if result.is_err() {
            break;
        }
        let mut wait = MAX_WAIT.min(spec.end.saturating_duration_since(now));
        if let Some(s) = &spec.schedule
            && !free.is_empty()
        {
            wait = wait.min(s.peek().saturating_duration_since(now));
        }
        if let Some(&(ready, _)) = resting.front() {
            wait = wait.min(ready.saturating_duration_since(now));
        }
        let ts = types::Timespec::from(wait.max(Duration::from_micros(1)));
        let args = types::SubmitArgs::new().timespec(&ts);
        if let Err(e) = ring.submitter().submit_with_args(1, &args)
            && !transient(&e)
            && e.raw_os_error() != Some(libc::ETIME)
        {
            result = Err(Error::failed(format!("{} worker {}: io_uring submit: {e}", spec.workload.name, spec.index)));
            break;
        }
        let done = Instant::now();
        for cqe in ring.completion() {
            let slot = cqe.user_data() as usize;
            let s = slots[slot];
            if think.is_zero() {
                free.push(slot);
            } else {
                resting.push_back((done + think, slot));
            }
            let res = cqe.result();
            if res < 0 && super::worker::out_of_space(spec, s.io, -res) {
                full = true;
            } else if res < 0 {
                result = Err(super::worker::io_error(spec, s.io, std::io::Error::from_raw_os_error(-res)));
            } else if res as u64 != s.io.len {
                result = Err(super::worker::io_error(spec, s.io, format!("short transfer of {res} bytes")));
            } else {
                rec.record(done, s.io.op, s.io.len, done - s.intended, done - s.submitted);
                payload.check(spec, s.io, slot_bytes(slot, s.io.len), &mut rec);
            }
        }
        if result.is_err() || ((full || ios.done()) && free.len() + resting.len() == depth) {
            break;
        }
    }
    // IOs still in flight finished after the end of the window: wait for them (their
    // buffers must outlive them) but do not count them.
    let drain_start = Instant::now();
    free.extend(resting.drain(..).map(|(_, slot)| slot));
    while free.len() < depth && drain_start.elapsed() < DRAIN_LIMIT {
        let ts = types::Timespec::from(MAX_WAIT);
        let _ = ring.submitter().submit_with_args(1, &types::SubmitArgs::new().timespec(&ts));
        free.extend(ring.completion().map(|c| c.user_data() as usize));
    }
    result
}
