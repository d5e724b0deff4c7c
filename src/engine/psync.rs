//! The psync back end: blocking pread/pwrite. A worker with `iodepth` N runs N of these
//! threads, each with one IO outstanding, so depth means the same on either engine
//! (fio's psync would silently run at depth 1).

use super::buffer::AlignedBuf;
use super::worker::{Backend, WorkerSpec};
use crate::error::Result;
use crate::metrics::Op;
use crate::workload::IoGen;
use std::os::fd::AsRawFd;
use std::sync::Mutex;
use std::time::Instant;

/// The `psync` back end.
pub struct Psync;

impl Backend for Psync {
    fn threads(&self, iodepth: u32) -> u32 {
        iodepth
    }

    fn needs_file(&self) -> bool {
        true
    }

    fn run(&self, spec: &WorkerSpec, stream: u32, ios: &Mutex<IoGen>) -> Result<()> {
        run(spec, stream, ios)
    }
}

/// Runs one stream (thread) of a psync worker until its end time, a stop or the end of
/// a bounded worker's IO; the
/// worker's streams take their IOs from one generator.
pub fn run(spec: &WorkerSpec, stream: u32, ios: &Mutex<IoGen>) -> Result<()> {
    let w = &spec.io;
    let mut buf = AlignedBuf::new(w.bs.max() as usize)?;
    let mut payload = super::worker::Payload::new(spec, stream);
    let fds: Vec<i32> = spec.files.iter().map(|f| f.file.as_raw_fd()).collect();
    let mut rec = spec.recorder();
    loop {
        let mut now = Instant::now();
        if spec.stopped(now) {
            return Ok(());
        }
        let intended = match &spec.schedule {
            None => now,
            Some(s) => {
                let due = s.claim();
                if due >= spec.end {
                    return Ok(());
                }
                if due > now {
                    crate::clock::sleep_until(due, &spec.stop);
                    now = Instant::now();
                    if spec.stopped(now) {
                        return Ok(());
                    }
                }
                due
            }
        };
        // a bounded worker's streams end once its generator has handed out all its IO
        let Some(io) = ios.lock().unwrap_or_else(|e| e.into_inner()).next() else { return Ok(()) };
        let len = io.len as usize;
        payload.fill(io, &mut buf.as_mut_slice()[..len]);
        // SAFETY: buf is valid for the largest block size for the duration of the call.
        let n = unsafe {
            match io.op {
                Op::Read => libc::pread(fds[io.file as usize], buf.as_mut_ptr().cast(), len, io.offset as libc::off_t),
                Op::Write => {
                    libc::pwrite(fds[io.file as usize], buf.as_mut_ptr().cast(), len, io.offset as libc::off_t)
                }
                Op::Sync if w.fdatasync => libc::fdatasync(fds[io.file as usize]) as isize,
                Op::Sync => libc::fsync(fds[io.file as usize]) as isize,
                _ => unreachable!("the IO generator issues reads, writes and syncs"),
            }
        };
        let done = Instant::now();
        if n < 0 {
            let err = std::io::Error::last_os_error();
            if err.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            if super::worker::out_of_space(spec, io, err.raw_os_error().unwrap_or(0)) {
                return Ok(());
            }
            return Err(super::worker::io_error(spec, io, err));
        }
        if n as usize != len {
            return Err(super::worker::io_error(spec, io, format!("short transfer of {n} bytes")));
        }
        rec.record(done, io.op, io.len, done - intended, done - now);
        payload.check(spec, io, &buf.as_mut_slice()[..len], &mut rec);
        if !w.think_time.is_zero() {
            crate::clock::sleep_until(done + w.think_time, &spec.stop);
        }
    }
}
