//! The executor: runs a scenario's phases on the run clock, starting each workload's
//! workers at a whole second so every sample of every workload lines up on one
//! per-second grid, and decides how the run ended.

use crate::drivers::fio::{self, jobfile::IoEngine};
use crate::engine::target::DataFile;
use crate::engine::{self, Schedule, WorkerSpec, WorkerThread};
use crate::error::{Error, Result};
use crate::metrics::Sample;
use crate::scenario::{EngineKind, Phase, Queue, Scenario};
use crate::store::{Store, WorkloadRow};
use crate::warnings::Warning;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

/// How a run ended.
#[derive(Debug)]
pub enum Outcome {
    Completed,
    /// Stopped by Ctrl-C or SIGTERM.
    Aborted,
    /// An IO or a worker failed; the message says which.
    Failed(String),
}

/// What the executor needs besides the scenario.
pub struct Context<'a> {
    pub store: &'a Store,
    pub run: i64,
    /// Each workload's data files, one per target.
    pub files: Vec<Vec<Arc<DataFile>>>,
    /// Engine per workload, after any fallback.
    pub engines: Vec<EngineKind>,
    /// io_uring works here: fio workloads use it too, else psync.
    pub uring_ok: bool,
    pub clock_start: Instant,
    /// The run clock's second 0 in Unix milliseconds, for drivers whose programs
    /// report in wall-clock time.
    pub clock_unix_ms: i64,
    /// The run's own directory, for files a driver keeps (fio's job files).
    pub run_dir: PathBuf,
    pub tx: Sender<Sample>,
    /// Set by a signal, or by a worker that failed, to stop everything.
    pub stop: Arc<AtomicBool>,
    /// Set only by a signal, to tell an abort from a failure.
    pub interrupted: Arc<AtomicBool>,
    /// Where progress lines go (stderr, or nothing with --quiet).
    pub progress: &'a dyn Fn(&str),
}

pub fn execute(scenario: &Scenario, cx: &Context) -> Result<Outcome> {
    let mut next_worker = 0u32;
    let mut failure: Option<String> = None;
    for phase in &scenario.phases {
        if cx.stop.load(Ordering::Relaxed) {
            break;
        }
        let mut started = Started::default();
        if let Err(e) = start_phase(scenario, phase, cx, &mut next_worker, &mut started) {
            // whatever did start must not run on to its end
            cx.stop.store(true, Ordering::Relaxed);
            failure.get_or_insert(e.to_string());
        }
        for (handle, who) in started.threads {
            let result = handle.join().unwrap_or_else(|_| Err(format!("{who} panicked")));
            if let Err(msg) = result {
                cx.stop.store(true, Ordering::Relaxed);
                failure.get_or_insert(msg);
            }
        }
        let stopped = cx.clock_start.elapsed().as_secs_f64();
        for (idx, end_t) in started.ends {
            let mut stopped = stopped.min(end_t as f64);
            // an appending workload has one file
            let data = &cx.files[idx][0];
            let full_at_ms = data.full_at_ms.load(Ordering::Relaxed);
            if full_at_ms > 0 {
                stopped = stopped.min((full_at_ms - 1) as f64 / 1000.0);
                let w = Warning::TargetFull {
                    workload: scenario.workloads[idx].name.clone(),
                    path: data.path.clone(),
                    at_s: stopped,
                };
                cx.store.add_warning(cx.run, w.code(), &w.message())?;
                eprintln!("warning: {}", w.message());
            }
            cx.store.set_workload_stopped(cx.run, idx, stopped)?;
        }
    }
    Ok(match failure {
        Some(msg) => Outcome::Failed(msg),
        None if cx.interrupted.load(Ordering::Relaxed) => Outcome::Aborted,
        None => Outcome::Completed,
    })
}

/// What a phase has started so far: threads (with who they are, for errors), and each
/// workload's end second.
#[derive(Default)]
struct Started {
    threads: Vec<(WorkerThread, String)>,
    ends: Vec<(usize, u64)>,
}

/// Records and starts a phase's workloads on the next whole second of the run clock.
fn start_phase(
    scenario: &Scenario,
    phase: &Phase,
    cx: &Context,
    next_worker: &mut u32,
    started: &mut Started,
) -> Result<()> {
    // fio needs a moment to start its jobs: leave it that long before the first second
    let lead = match phase.workloads.iter().any(|&i| cx.engines[i] == EngineKind::Fio) {
        true => fio::STARTUP.as_secs_f64(),
        false => 0.0,
    };
    let start_t = (cx.clock_start.elapsed().as_secs_f64() + lead - 0.005).ceil().max(0.0) as u64;
    let begin = cx.clock_start + Duration::from_secs(start_t);
    for &idx in &phase.workloads {
        let w = Arc::new(scenario.workloads[idx].clone());
        let engine = cx.engines[idx];
        let measure_t = start_t + w.ramp.as_secs();
        let end_t = measure_t + w.duration.as_secs();
        let files = &cx.files[idx];
        // A queue per target runs `jobs` workers on each target.
        let workers = match w.queue {
            Queue::Shared => w.jobs,
            Queue::PerTarget => w.jobs * files.len() as u32,
        };
        let paths: Vec<String> = files.iter().map(|f| f.path.display().to_string()).collect();
        cx.store.add_workload(
            cx.run,
            &WorkloadRow {
                idx: idx as i64,
                name: w.name.clone(),
                phase: phase.label.clone(),
                profile: serde_json::to_value(&*w).unwrap_or_default(),
                data_path: paths.join(", "),
                engine: engine.to_string(),
                workers: workers as i64,
                start_t: start_t as i64,
                measure_t: measure_t as i64,
                end_t: end_t as i64,
                stopped_at: None,
                rate_iops: w.rate_iops,
            },
        )?;
        started.ends.push((idx, end_t));
        (cx.progress)(&describe(&w, engine, files, workers, start_t));
        let end = cx.clock_start + Duration::from_secs(end_t);
        let first_worker = *next_worker;
        for index in 0..workers {
            cx.store.add_worker(cx.run, first_worker + index, idx, index, "localhost")?;
        }
        *next_worker += workers;
        let failed_to_start = |e: std::io::Error| Error::failed(format!("starting worker threads: {e}"));
        if engine == EngineKind::Fio {
            std::fs::create_dir_all(&cx.run_dir)
                .map_err(|e| Error::failed(format!("{}: {e}", cx.run_dir.display())))?;
            let launch = fio::Launch {
                workload_idx: idx,
                workload: w.clone(),
                files: files.clone(),
                first_worker,
                io_engine: if cx.uring_ok { IoEngine::IoUring } else { IoEngine::Psync },
                clock_start: cx.clock_start,
                clock_unix_ms: cx.clock_unix_ms,
                begin,
                end_t,
                dir: cx.run_dir.clone(),
                tx: cx.tx.clone(),
                stop: cx.stop.clone(),
            };
            started.threads.push((fio::start(launch).map_err(failed_to_start)?, format!("{} (fio)", w.name)));
            continue;
        }
        for index in 0..workers {
            let spec = Arc::new(WorkerSpec {
                workload_idx: idx,
                workload: w.clone(),
                worker_id: first_worker + index,
                index,
                files: match w.queue {
                    Queue::Shared => files.clone(),
                    Queue::PerTarget => vec![files[(index / w.jobs) as usize].clone()],
                },
                engine,
                clock_start: cx.clock_start,
                begin,
                end,
                schedule: w.rate_iops.map(|r| {
                    let seed = crate::workload::Rng::seed_from(&w.name, index as u64, 2);
                    Arc::new(Schedule::new(begin, r, w.arrival, seed, index, workers))
                }),
                tx: cx.tx.clone(),
                stop: cx.stop.clone(),
            });
            let who = format!("{} worker {index}", w.name);
            started.threads.extend(engine::spawn(spec).map_err(failed_to_start)?.into_iter().map(|h| (h, who.clone())));
        }
    }
    Ok(())
}

/// One line saying what starts now, e.g.
/// `[  17s] qd4: randread 4k, depth 4 x 1 job, io_uring, O_DIRECT on ... (1 GiB): 2s ramp + 15s`.
fn describe(
    w: &crate::scenario::Workload,
    engine: EngineKind,
    files: &[Arc<DataFile>],
    workers: u32,
    start_t: u64,
) -> String {
    use crate::scenario::units::{Size, Span};
    let rw = serde_json::to_value(w.rw).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
    let rate = w.rate_iops.map(|r| format!(", {r} IOPS target")).unwrap_or_default();
    let jobs = if workers == 1 { "1 job".to_string() } else { format!("{workers} jobs") };
    let ramp = if w.ramp.is_zero() { String::new() } else { format!("{} ramp + ", Span(w.ramp)) };
    let on: Vec<String> = files.iter().map(|f| format!("{} ({})", f.path.display(), Size(f.size).human())).collect();
    let queue = match (files.len(), w.queue) {
        (1, _) => String::new(),
        (_, Queue::Shared) => ", one queue across".to_string(),
        (_, Queue::PerTarget) => ", a queue per target".to_string(),
    };
    format!(
        "[{start_t:>5}s] {}: {rw} {}, depth {} x {jobs}{rate}, {engine}, {}{queue} on {}: {ramp}{}",
        w.name,
        w.bs,
        w.iodepth,
        if files.iter().all(|f| f.direct) { "O_DIRECT" } else { "buffered" },
        on.join(", "),
        Span(w.duration)
    )
}
