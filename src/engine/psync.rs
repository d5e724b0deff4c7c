//! The psync back end: blocking pread/pwrite. A worker with `iodepth` N runs N of these
//! threads, each with one IO outstanding, so depth means the same on either engine
//! (fio's psync would silently run at depth 1).

use super::WorkerSpec;
use super::buffer::AlignedBuf;
use crate::metrics::Op;
use crate::workload::{IoGen, Rng};
use std::os::fd::AsRawFd;
use std::time::Instant;

/// Runs one stream (thread) of a psync worker until its end time or a stop.
pub fn run(spec: &WorkerSpec, stream: u32) -> Result<(), String> {
    let w = &spec.workload;
    let bs = w.bs as usize;
    let mut io = IoGen::new(w, spec.data.size, spec.index, w.jobs, stream, w.iodepth);
    let mut buf = AlignedBuf::new(bs);
    Rng::new(Rng::seed_from(&w.name, spec.index as u64, 1 << 32 | stream as u64)).fill(buf.as_mut_slice());
    let fd = spec.data.file.as_raw_fd();
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
                    super::sleep_until(due, &spec.stop);
                    now = Instant::now();
                    if spec.stopped(now) {
                        return Ok(());
                    }
                }
                due
            }
        };
        let (op, offset) = io.next();
        // SAFETY: buf is valid for bs bytes for the duration of the call.
        let n = unsafe {
            match op {
                Op::Read => libc::pread(fd, buf.as_mut_ptr().cast(), bs, offset as libc::off_t),
                Op::Write => libc::pwrite(fd, buf.as_mut_ptr().cast(), bs, offset as libc::off_t),
            }
        };
        let done = Instant::now();
        if n < 0 {
            let err = std::io::Error::last_os_error();
            if err.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(super::io_error(spec, op, offset, err));
        }
        if n as usize != bs {
            return Err(super::io_error(spec, op, offset, format!("short transfer of {n} bytes")));
        }
        rec.record(done, op, bs as u64, done - intended, done - now);
    }
}
