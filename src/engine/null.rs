//! The null back end: IOs are generated, timed and recorded, but never reach a device
//! (fio's `ioengine=null`). What it measures is fathom's own cost per IO (generator,
//! clock, histogram, sample hand-off), the floor under every real result.

use super::worker::{Backend, WorkerSpec};
use crate::error::Result;
use crate::workload::{Io, IoGen};
use std::sync::Mutex;
use std::time::Instant;

/// The `null` back end.
pub struct Null;

impl Backend for Null {
    fn threads(&self, _iodepth: u32) -> u32 {
        1
    }

    fn needs_file(&self) -> bool {
        false
    }

    fn run(&self, spec: &WorkerSpec, _stream: u32, ios: &Mutex<IoGen>) -> Result<()> {
        run(spec, &mut ios.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// Runs a null worker: each pass "submits" up to `iodepth` IOs, and they complete at
/// the next clock read, as a batch of real completions would.
pub fn run(spec: &WorkerSpec, ios: &mut IoGen) -> Result<()> {
    let depth = spec.io.iodepth as usize;
    let mut batch: Vec<(Io, Instant)> = Vec::with_capacity(depth);
    let mut rec = spec.recorder();
    loop {
        let now = Instant::now();
        if spec.stopped(now) || ios.done() {
            return Ok(());
        }
        rec.tick(now);
        batch.clear();
        match &spec.schedule {
            None => batch.extend((0..depth).map_while(|_| Some((ios.next()?, now)))),
            Some(s) => {
                while batch.len() < depth {
                    let due = s.peek();
                    if due > now || due >= spec.end {
                        break;
                    }
                    let Some(io) = ios.next() else { break };
                    batch.push((io, s.claim()));
                }
                if batch.is_empty() {
                    crate::clock::sleep_until(s.peek().min(spec.end), &spec.stop);
                    continue;
                }
            }
        }
        let done = Instant::now();
        for &(io, intended) in &batch {
            rec.record(done, io.op, io.len, done - intended, done - now);
        }
    }
}
