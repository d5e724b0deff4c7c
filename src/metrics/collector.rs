//! The collector: one thread that receives every worker's per-second samples and writes
//! them to the store as each second closes, so a crash or Ctrl-C loses at most the
//! second in progress. A write that fails (a full disk) stops the run: the reserve
//! kept for the store is freed, and the seconds still to come are written into it.

use super::live::Live;
use super::{Op, OpStats, Sample};
use crate::error::{Error, Result};
use crate::store::{CounterRow, Reserve, Store};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How long after a second ends before it is written: workers report at their first
/// completion after the boundary, which at depth 1 on a slow device takes a while.
const GRACE: Duration = Duration::from_millis(300);

/// What the collector needs of the run besides its samples.
pub struct Sink<'a> {
    pub store: Store,
    pub run: i64,
    /// The live view and the Prometheus endpoint: every second as it is written.
    pub live: &'a Live,
    /// Set to stop the run when the store cannot be written.
    pub stop: &'a AtomicBool,
    /// Freed when a write fails, for the seconds after it and the run's end.
    pub reserve: &'a Reserve,
}

/// Receives samples until every sender is gone, writing closed seconds as it goes.
/// The first write that fails stops the run and is the error returned once every
/// sender is gone; the seconds after it are still written where they fit.
pub fn run(mut sink: Sink, clock_start: Instant, rx: Receiver<Sample>) -> Result<()> {
    let mut pending: BTreeMap<u32, Vec<Sample>> = BTreeMap::new();
    let mut failure: Option<Error> = None;
    loop {
        let disconnected = match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(sample) => {
                pending.entry(sample.t).or_default().push(sample);
                false
            }
            Err(RecvTimeoutError::Timeout) => false,
            Err(RecvTimeoutError::Disconnected) => true,
        };
        let closed_before =
            if disconnected { u32::MAX } else { (clock_start.elapsed().saturating_sub(GRACE)).as_secs() as u32 };
        let ready: Vec<u32> = pending.range(..closed_before).map(|(t, _)| *t).collect();
        if !ready.is_empty() {
            let batch: Vec<Sample> = ready.iter().flat_map(|t| pending.remove(t).unwrap_or_default()).collect();
            if let Err(e) = write(&mut sink, batch)
                && failure.is_none()
            {
                failure = Some(Error::failed(format!(
                    "{e} (writing second {}): the run was stopped, and the seconds that could be stored are kept",
                    ready[0]
                )));
            }
        }
        if disconnected {
            return failure.map_or(Ok(()), Err);
        }
    }
}

/// Merges samples that share a key (threads of one worker report separately), hands
/// the result to `live` and writes it. Each histogram is merged once here: with
/// hundreds of workers, merging is most of what the collector does. A write that
/// fails stops the run, frees the reserve and is tried once more: the error returned
/// is the first one, whether the retry fit or not.
fn write(sink: &mut Sink, batch: Vec<Sample>) -> Result<()> {
    let mut per_worker: BTreeMap<(u32, u32, Op), (usize, OpStats)> = BTreeMap::new();
    let mut per_workload: BTreeMap<(usize, u32, Op), OpStats> = BTreeMap::new();
    for s in batch {
        match per_workload.get_mut(&(s.workload, s.t, s.op)) {
            Some(acc) => acc.merge(&s.stats),
            None => {
                per_workload.insert((s.workload, s.t, s.op), s.stats.clone());
            }
        }
        match per_worker.get_mut(&(s.worker, s.t, s.op)) {
            Some((_, acc)) => acc.merge(&s.stats),
            None => {
                per_worker.insert((s.worker, s.t, s.op), (s.workload, s.stats));
            }
        }
    }
    let counters: Vec<CounterRow> = per_worker
        .iter()
        .map(|((worker, t, op), (workload, stats))| CounterRow {
            worker: *worker,
            workload: *workload,
            t: *t,
            op: *op,
            stats,
        })
        .collect();
    sink.live.add(&counters, &per_workload);
    let failed = match sink.store.write_samples(sink.run, &counters, &per_workload) {
        Ok(()) => return Ok(()),
        Err(e) => e,
    };
    sink.stop.store(true, Ordering::Relaxed);
    sink.reserve.release();
    let _ = sink.store.write_samples(sink.run, &counters, &per_workload);
    Err(failed)
}
