//! The run sink: how everything a run writes while it goes (events, phases, workload
//! and worker rows, observations, warnings) reaches the store without its writer
//! opening one. Each is sent as a [`Record`] to the collector
//! ([`super::collector`]), which alone holds the writing store during measurement, so
//! a full disk stops the run in one place and no thread waits on another's write.
//! Samples keep their own channel (the engine's, unchanged and also used on agents):
//! the collector drains both.

use super::WorkloadRow;
use super::connection::Store;
use super::events::{EventRow, PhaseRow};
use super::observations::ObservationRow;
use crate::error::Result;
use std::sync::mpsc::{Receiver, Sender, channel};

/// One write of a running run, in the store's terms (the run id is the collector's).
#[derive(Debug)]
pub enum Record {
    Event(EventRow),
    Observations(Vec<ObservationRow>),
    Warning {
        code: String,
        message: String,
    },
    Workload(WorkloadRow),
    Worker {
        id: u32,
        workload: usize,
        index: u32,
        host: String,
    },
    /// When a workload really stopped, seconds on the run clock.
    WorkloadStopped {
        idx: usize,
        at: f64,
    },
    /// A bounded workload did all its IO at `at`, before the end its duration (or, with
    /// none, the longest a workload may run) gave it: that end becomes the second it
    /// ended in, so what reads the run sees how long it really ran.
    WorkloadDone {
        idx: usize,
        at: f64,
    },
    PhaseOpened(PhaseRow),
    PhaseEnded {
        idx: i64,
        end_t: i64,
    },
    /// A phase opened and closed within one second: it never was one.
    PhaseDropped(i64),
}

impl Record {
    /// What this record is, for the message of a write that failed.
    pub fn what(&self) -> &'static str {
        match self {
            Record::Event(_) => "an event",
            Record::Observations(_) => "observations",
            Record::Warning { .. } => "a warning",
            Record::Workload(_) => "a workload",
            Record::Worker { .. } => "a worker",
            Record::WorkloadStopped { .. } | Record::WorkloadDone { .. } => "a workload's end",
            Record::PhaseOpened(_) | Record::PhaseEnded { .. } | Record::PhaseDropped(_) => "a phase",
        }
    }

    /// Writes it to `store` as part of `run`.
    pub fn write(&self, store: &mut Store, run: i64) -> Result<()> {
        match self {
            Record::Event(e) => store.add_event(run, e),
            Record::Observations(rows) => store.add_observations(run, rows),
            Record::Warning { code, message } => store.add_warning(run, code, message),
            Record::Workload(w) => store.add_workload(run, w),
            Record::Worker { id, workload, index, host } => store.add_worker(run, *id, *workload, *index, host),
            Record::WorkloadStopped { idx, at } => store.set_workload_stopped(run, *idx, *at),
            Record::WorkloadDone { idx, at } => store.set_workload_done(run, *idx, *at),
            Record::PhaseOpened(p) => store.add_phase(run, p),
            Record::PhaseEnded { idx, end_t } => store.end_phase(run, *idx, *end_t),
            Record::PhaseDropped(idx) => store.drop_phase(run, *idx),
        }
    }
}

/// Where a run's writers send their records; cheap to clone, one per thread that
/// writes. The collector finishes once every clone is dropped.
#[derive(Clone, Debug)]
pub struct Sink(Sender<Record>);

impl Sink {
    /// A sink and the receiving end the collector drains.
    pub fn new() -> (Sink, Receiver<Record>) {
        let (tx, rx) = channel();
        (Sink(tx), rx)
    }

    /// Sends `record` to be written. Nothing is returned: a write that fails stops the
    /// run from the collector, and a collector that is gone is reported by the run.
    pub fn send(&self, record: Record) {
        let _ = self.0.send(record);
    }
}
