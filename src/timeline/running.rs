//! A running workload: its workers (started all at once, staggered, or added by a
//! ramp), the flag that stops it, and the second it ends.

use super::context::Context;
use crate::drivers::{IoEnd, LaunchContext};
use crate::engine::WorkerThread;
use crate::engine::target::DataFile;
use crate::error::{Error, Result};
use crate::scenario::{EngineKind, Queue, Workload};
use crate::store::WorkloadRow;
use crate::store::sink::Record;
use crate::transport::protocol::{Command, Reply};
use crate::transport::remote::Remote;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub struct RunningWorkload {
    pub idx: usize,
    pub w: Arc<Workload>,
    /// Its IO back end after any fallback; none for a program's workload.
    pub engine: Option<EngineKind>,
    pub start_t: u64,
    pub end_t: u64,
    /// Workers started so far, and how many it will have (a ramp's `until`).
    pub workers: u32,
    pub planned: u32,
    /// Started by a ramp: each of its phases is named by its workers (`vm x4`), the
    /// last included, as `during` may name them.
    pub ramped: bool,
    first_worker: u32,
    /// Stops this workload's workers (a timeline `stop`, or the run ending).
    pub stop: Arc<AtomicBool>,
    pub threads: Vec<(WorkerThread, String)>,
    /// Stopped or past its end: its threads have been joined.
    pub over: bool,
    /// When its IO ended, if its program (fio) says so before its thread ends.
    pub io_end: Arc<IoEnd>,
    /// The IOs its open-loop schedules gave up (fathom's engine on this host).
    pub unsent: Arc<AtomicU64>,
}

/// Workers a workload runs: its `workers` (on each target with a queue per target).
pub fn workers_of(w: &Workload, files: &[Arc<DataFile>]) -> u32 {
    match w.io().map(|io| io.queue) {
        Some(Queue::PerTarget) => w.workers * files.len() as u32,
        Some(Queue::Shared) | None => w.workers,
    }
}

impl RunningWorkload {
    /// Records workload `idx` as starting at second `start_t` with `planned` workers
    /// (worker ids from `first_worker`), without starting any.
    pub fn new(
        cx: &Context,
        idx: usize,
        w: &Workload,
        start_t: u64,
        planned: u32,
        first_worker: u32,
        phase: &str,
    ) -> Result<RunningWorkload> {
        let engine = cx.engines[idx];
        let end_t = start_t + w.ramp.as_secs() + w.duration.as_secs();
        let files = &cx.files[idx];
        let paths: Vec<String> = files.iter().map(|f| f.path.display().to_string()).collect();
        cx.sink.send(Record::Workload(WorkloadRow {
            idx: idx as i64,
            name: w.name.clone(),
            phase: phase.to_string(),
            profile: serde_json::to_value(w).unwrap_or_default(),
            data_path: paths.join(", "),
            engine: engine.map_or_else(|| w.runner(), |e| e.to_string()),
            workers: planned as i64,
            start_t: start_t as i64,
            measure_t: (start_t + w.ramp.as_secs()) as i64,
            end_t: end_t as i64,
            stopped_at: None,
            rate_iops: w.rate(),
        }));
        Ok(RunningWorkload {
            idx,
            w: Arc::new(w.clone()),
            engine,
            start_t,
            end_t,
            workers: 0,
            planned,
            ramped: false,
            first_worker,
            stop: Arc::new(AtomicBool::new(false)),
            threads: Vec::new(),
            over: false,
            io_end: Arc::new(IoEnd::default()),
            unsent: Default::default(),
        })
    }

    pub fn end(&self, cx: &Context) -> Instant {
        cx.clock_start + Duration::from_secs(self.end_t)
    }

    /// Starts `count` more workers, the first at second `begin_t` and each next
    /// `stagger` later.
    pub fn add_workers(&mut self, cx: &Context, count: u32, begin_t: u64, stagger: Duration) -> Result<()> {
        let files = &cx.files[self.idx];
        let failed_to_start = |e: std::io::Error| Error::failed(format!("starting worker threads: {e}"));
        let begin = cx.clock_start + Duration::from_secs(begin_t);
        let from = self.workers;
        let host_of = |index: u32| self.w.placement.as_ref().map(|p| p.host_of(index)).unwrap_or("localhost");
        for index in from..from + count {
            cx.sink.send(Record::Worker {
                id: self.first_worker + index,
                workload: self.idx,
                index,
                host: host_of(index).to_string(),
            });
            if self.w.placement.is_some() {
                (cx.on_host)(self.first_worker + index, host_of(index));
            }
        }
        self.workers += count;
        let w = &self.w;
        if let Some(p) = &w.placement {
            // one start per host, each host's workers consecutive; all begin at the same
            // instant of the run clock, which each agent keeps in its own clock
            let mut index = from;
            while index < from + count {
                let host = p.host_of(index);
                let n = (index..from + count).take_while(|i| p.host_of(*i) == host).count() as u32;
                let remote = cx
                    .fleet
                    .remotes
                    .get(host)
                    .cloned()
                    .ok_or_else(|| Error::failed(format!("{}: host {host} is not connected", w.name)))?;
                let begin_ms = begin_t * 1000 + (stagger * (index - from)).as_millis() as u64;
                remote.send(&Command::Start {
                    idx: self.idx,
                    first_worker: self.first_worker,
                    from: index,
                    count: n,
                    planned: self.planned,
                    clock_unix_ms: cx.clock_unix_ms + remote.offset_ms.round() as i64,
                    begin_ms,
                    end_t: self.end_t,
                    stagger_ms: stagger.as_millis() as u64,
                })?;
                let waiter = await_remote(remote, self.idx, self.stop.clone(), cx.stop.clone());
                self.threads.push((waiter.map_err(failed_to_start)?, format!("{} on {host}", w.name)));
                index += n;
            }
            return Ok(());
        }
        let launch = LaunchContext {
            workload_idx: self.idx,
            workload: w.clone(),
            engine: self.engine,
            files: files.clone(),
            first_worker: self.first_worker,
            planned: self.planned,
            workers: from..from + count,
            begin,
            stagger,
            clock_start: cx.clock_start,
            clock_unix_ms: cx.clock_unix_ms,
            end_t: self.end_t,
            uring_ok: cx.uring_ok,
            dir: cx.run_dir.clone(),
            sink: cx.sink.clone(),
            tx: cx.tx.clone(),
            stop: self.stop.clone(),
            abort: cx.stop.clone(),
            io_end: self.io_end.clone(),
            unsent: self.unsent.clone(),
        };
        self.threads.extend(cx.drivers.start(&launch)?);
        Ok(())
    }

    /// A bounded workload whose workers have all done their IO: it ends now, before
    /// the end its duration gives it.
    pub fn done(&self) -> bool {
        self.w.bound().is_some()
            && self.workers == self.planned
            && !self.threads.is_empty()
            && self.threads.iter().all(|(thread, _)| thread.is_finished())
    }

    /// Waits for every thread; the first failure, if any.
    pub fn join(&mut self) -> Option<String> {
        let mut failure = None;
        for (handle, who) in self.threads.drain(..) {
            let result = handle.join().unwrap_or_else(|_| Err(Error::failed(format!("{who} panicked"))));
            if let Err(msg) = result {
                failure.get_or_insert(msg.to_string());
            }
        }
        self.over = true;
        failure
    }
}

/// A thread that stands for a workload's workers on another host: it tells the agent
/// to stop them when the workload or the run is stopped, and ends when the agent says
/// they ended (with their error, if one failed) or the host is lost (the run goes on
/// without it; the loss is recorded when the run ends).
fn await_remote(
    remote: Arc<Remote>,
    idx: usize,
    stop: Arc<AtomicBool>,
    abort: Arc<AtomicBool>,
) -> std::io::Result<WorkerThread> {
    std::thread::Builder::new().name(format!("await-{}", remote.host.name)).spawn(move || {
        let mut told = false;
        loop {
            if !told && (stop.load(Ordering::Relaxed) || abort.load(Ordering::Relaxed)) {
                told = true;
                let _ = remote.send(&Command::Stop { idx });
            }
            let ended = remote.take(Duration::from_millis(100), |r| match r {
                Reply::Ended { idx: i, error } if *i == idx => Some(error.clone()),
                Reply::Error { idx: Some(i), message } if *i == idx => Some(Some(message.clone())),
                _ => None,
            });
            match ended {
                Some(None) => return Ok(()),
                Some(Some(e)) => return Err(Error::failed(format!("host {}: {e}", remote.host.name))),
                None if remote.gone() => return Ok(()),
                None => {}
            }
        }
    })
}

/// One line saying what starts now, e.g.
/// `[  17s] qd4: randread 4k, depth 4 x 1 job, io_uring, O_DIRECT on ... (1 GiB): 2s ramp + 15s`;
/// its driver says what runs.
pub fn describe(r: &RunningWorkload, cx: &Context) -> String {
    use crate::scenario::units::Span;
    let w = &r.w;
    let what = crate::drivers::of(w, r.engine).describe(w, &cx.files[r.idx], r.planned, r.engine);
    let ramp = if w.ramp.is_zero() { String::new() } else { format!("{} ramp + ", Span(w.ramp)) };
    let length = match w.io().and_then(|io| io.bound) {
        Some(bound) if bound.capped => format!("{bound}, at most {}", Span(w.duration)),
        Some(bound) => bound.to_string(),
        None => Span(w.duration).to_string(),
    };
    format!("[{:>5}s] {}: {what}: {ramp}{length}", r.start_t, w.name)
}
