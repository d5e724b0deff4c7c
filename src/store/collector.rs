//! The collector: one thread, the run's only writer to the store while it measures. It
//! receives every worker's per-second samples and writes them as each second closes, so
//! a crash or Ctrl-C loses at most the second in progress, and writes whatever else the
//! run sends to its [`Sink`](super::sink::Sink) as it comes. A write that fails (a full
//! disk) stops the run: the reserve kept for the store is freed, and the seconds still
//! to come are written into it.

use super::connection::Store;
use super::per_host::HostLatency;
use super::read::StoredWorkload;
use super::reserve::Reserve;
use super::sink::Record;
use crate::error::{Error, Result};
use crate::metrics::totals::Totals;
use crate::metrics::{self, CounterRow, Op, OpStats, Sample};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

/// How long after a second ends before it is written: workers report at their first
/// completion after the boundary, which at depth 1 on a slow device takes a while.
const GRACE: Duration = Duration::from_millis(300);

/// What the collector writes to and tells, besides what it receives.
pub struct Writer<'a> {
    store: Store,
    run: i64,
    /// The live view and the Prometheus endpoint: every second as it is written.
    totals: &'a Totals,
    /// Set to stop the run when the store cannot be written.
    stop: &'a AtomicBool,
    /// Freed when a write fails, for the seconds after it and the run's end.
    reserve: &'a Reserve,
    /// The first write that failed, returned when the run's writers are all gone.
    failure: Option<Error>,
    /// Workloads placed on other hosts (from the workloads recorded): their latency is
    /// kept per host too, each worker's host from the workers recorded.
    placed: HashSet<usize>,
    hosts: HashMap<u32, String>,
}

impl<'a> Writer<'a> {
    pub fn new(store: Store, run: i64, totals: &'a Totals, stop: &'a AtomicBool, reserve: &'a Reserve) -> Self {
        Writer { store, run, totals, stop, reserve, failure: None, placed: HashSet::new(), hosts: HashMap::new() }
    }

    /// Runs `write`; if it fails, stops the run, frees the reserve and tries once more.
    /// The first failure is kept (whether the retry fit or not), said as `doing`.
    fn attempt(&mut self, doing: impl FnOnce() -> String, mut write: impl FnMut(&mut Store) -> Result<()>) {
        let failed = match write(&mut self.store) {
            Ok(()) => return,
            Err(e) => e,
        };
        self.stop.store(true, Ordering::Relaxed);
        self.reserve.release();
        let _ = write(&mut self.store);
        if self.failure.is_none() {
            self.failure = Some(Error::failed(format!(
                "{failed} ({}): the run was stopped, and the seconds that could be stored are kept",
                doing()
            )));
        }
    }

    fn record(&mut self, record: Record) {
        match &record {
            Record::Workload(w) if StoredWorkload::decode(w).placed() => {
                self.placed.insert(w.idx as usize);
            }
            Record::Worker { id, host, .. } => {
                self.hosts.insert(*id, host.clone());
            }
            // the database servers' series carry their exporters' names: the endpoint serves them
            Record::Observations(rows) => self.totals.set_exported(
                rows.iter()
                    .filter(|r| r.source.starts_with("postgres:") || r.source.starts_with("mariadb:"))
                    .map(|r| (&*r.source, &*r.name, r.value)),
            ),
            _ => {}
        }
        let run = self.run;
        self.attempt(|| format!("writing {}", record.what()), |store| record.write(store, run));
    }
}

/// Receives samples and records until every sender of both is gone, writing closed
/// seconds and each record as they come. The first write that fails stops the run and
/// is the error returned at the end; what comes after it is still written where it fits.
pub fn run(
    mut writer: Writer,
    clock_start: Instant,
    samples: Receiver<Sample>,
    records: Receiver<Record>,
) -> Result<()> {
    let mut pending: BTreeMap<u32, Vec<Sample>> = BTreeMap::new();
    let mut records_open = true;
    loop {
        let disconnected = match samples.recv_timeout(Duration::from_millis(200)) {
            Ok(sample) => {
                pending.entry(sample.t).or_default().push(sample);
                false
            }
            Err(RecvTimeoutError::Timeout) => false,
            Err(RecvTimeoutError::Disconnected) => true,
        };
        while records_open {
            match records.try_recv() {
                Ok(record) => writer.record(record),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => records_open = false,
            }
        }
        let closed_before =
            if disconnected { u32::MAX } else { (clock_start.elapsed().saturating_sub(GRACE)).as_secs() as u32 };
        let ready: Vec<u32> = pending.range(..closed_before).map(|(t, _)| *t).collect();
        if !ready.is_empty() {
            let batch: Vec<Sample> = ready.iter().flat_map(|t| pending.remove(t).unwrap_or_default()).collect();
            write_samples(&mut writer, batch, ready[0]);
        }
        if disconnected {
            // the samples are all in; what the run's last writers still send follows
            for record in records.iter() {
                writer.record(record);
            }
            return writer.failure.map_or(Ok(()), Err);
        }
    }
}

/// Merges samples that share a key (threads of one worker report separately), hands
/// the result to the running totals and writes it. Each histogram is merged once here:
/// with hundreds of workers, merging is most of what the collector does.
fn write_samples(writer: &mut Writer, batch: Vec<Sample>, first: u32) {
    let mut per_worker: BTreeMap<(u32, u32, Op), (usize, OpStats)> = BTreeMap::new();
    let mut per_workload: BTreeMap<(usize, u32, Op), OpStats> = BTreeMap::new();
    let mut by_host = HostLatency::new();
    for s in batch {
        if let Some(host) = writer.hosts.get(&s.worker).filter(|_| writer.placed.contains(&s.workload)) {
            let hist = by_host.entry((s.workload, host.clone(), s.t, s.op)).or_insert_with(metrics::new_histogram);
            hist.add(&s.stats.latency).expect("histograms share bounds");
        }
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
    writer.totals.add(&counters, &per_workload);
    let run = writer.run;
    writer.attempt(
        || format!("writing second {first}"),
        |store| store.write_samples(run, &counters, &per_workload, &by_host),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::sink::Sink;
    use crate::store::{EventRow, PhaseRow};
    use std::sync::mpsc::channel;

    #[test]
    fn records_are_written_in_order_and_every_writer_is_waited_for() {
        let dir = std::env::temp_dir().join(format!("fathom-collector-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = Store::open(&dir).unwrap();
        let id = store.create_run("t", "", "", &serde_json::json!({})).unwrap();
        let (samples, samples_rx) = channel::<Sample>();
        let (sink, records) = Sink::new();
        let phase = |label: &str| {
            Record::PhaseOpened(PhaseRow { idx: 0, label: label.into(), start_t: 0, end_t: None, running: Vec::new() })
        };
        // a phase replaced at once: the drop must come after the first and before the second
        sink.send(phase("first"));
        sink.send(Record::PhaseDropped(0));
        sink.send(phase("second"));
        // a writer still busy when the samples are all in (a driver reading its log)
        let late = sink.clone();
        drop((sink, samples));
        let writer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            late.send(Record::Event(EventRow {
                at_ms: 0,
                kind: "mark".into(),
                label: "late".into(),
                status: None,
                took_ms: None,
                detail: String::new(),
            }));
        });
        let (totals, stop) = (Totals::new(id, "t", Vec::new()), AtomicBool::new(false));
        let reserve = Reserve::take(&dir, 1, &[1]).unwrap();
        let writer_of = Writer::new(Store::open(&dir).unwrap(), id, &totals, &stop, &reserve);
        run(writer_of, Instant::now(), samples_rx, records).unwrap();
        writer.join().unwrap();
        let labels: Vec<String> = store.phases(id).unwrap().into_iter().map(|p| p.label).collect();
        assert_eq!(labels, vec!["second"]);
        let events: Vec<String> = store.events(id).unwrap().into_iter().map(|e| e.label).collect();
        assert_eq!(events, vec!["late"]);
        assert!(!stop.load(Ordering::Relaxed), "nothing failed");
        reserve.release();
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_record_that_cannot_be_written_stops_the_run_and_the_rest_is_still_written() {
        let dir = std::env::temp_dir().join(format!("fathom-collector-fails-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = Store::open(&dir).unwrap();
        let id = store.create_run("t", "", "", &serde_json::json!({})).unwrap();
        let (samples, samples_rx) = channel::<Sample>();
        let (sink, records) = Sink::new();
        let worker = || Record::Worker { id: 7, workload: 0, index: 0, host: "localhost".into() };
        // the same worker twice: the store refuses the second (its key is taken)
        sink.send(worker());
        sink.send(worker());
        sink.send(Record::Warning { code: "after".into(), message: "written all the same".into() });
        drop((sink, samples));
        let (totals, stop) = (Totals::new(id, "t", Vec::new()), AtomicBool::new(false));
        let reserve = Reserve::take(&dir, 1, &[1]).unwrap();
        let writer = Writer::new(Store::open(&dir).unwrap(), id, &totals, &stop, &reserve);
        let err = run(writer, Instant::now(), samples_rx, records).unwrap_err().to_string();
        assert!(err.contains("(writing a worker): the run was stopped"), "{err}");
        assert!(stop.load(Ordering::Relaxed), "the run is told to stop");
        let codes: Vec<String> = store.warnings(id).unwrap().into_iter().map(|w| w.code).collect();
        assert_eq!(codes, vec!["after"]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
