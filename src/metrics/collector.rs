//! The collector: one thread that receives every worker's per-second samples and writes
//! them to the store as each second closes, so a crash or Ctrl-C loses at most the
//! second in progress.

use super::live::Live;
use super::{Op, OpStats, Sample};
use crate::error::Result;
use crate::store::{CounterRow, Store};
use std::collections::BTreeMap;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How long after a second ends before it is written: workers report at their first
/// completion after the boundary, which at depth 1 on a slow device takes a while.
const GRACE: Duration = Duration::from_millis(300);

/// Receives samples until every sender is gone, writing closed seconds as it goes.
/// `live` (the live view and the Prometheus endpoint) gets every second as it is written.
pub fn run(mut store: Store, run: i64, clock_start: Instant, rx: Receiver<Sample>, live: &Live) -> Result<()> {
    let mut pending: BTreeMap<u32, Vec<Sample>> = BTreeMap::new();
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
            write(&mut store, run, batch, live)?;
        }
        if disconnected {
            return Ok(());
        }
    }
}

/// Merges samples that share a key (threads of one worker report separately), hands
/// the result to `live` and writes it. Each histogram is merged once here: with
/// hundreds of workers, merging is most of what the collector does.
fn write(store: &mut Store, run: i64, batch: Vec<Sample>, live: &Live) -> Result<()> {
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
    live.add(&counters, &per_workload);
    store.write_samples(run, &counters, &per_workload)
}
