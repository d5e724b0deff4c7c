//! fathom's own engine as a driver (`engine: io_uring`, `psync`, `null`): its workers
//! start in this process, each on its back end (`crate::engine`).

use super::driver::{Driver, LaunchContext, Ready};
use crate::engine::target::DataFile;
use crate::engine::{self, WorkerThread};
use crate::error::{Error, Result};
use crate::scenario::{EngineKind, IoProfile, Scenario, Workload};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// fathom's own engine, registered like any other driver so the timeline starts every
/// workload the same way.
pub struct Native;

impl Driver for Native {
    fn name(&self) -> &'static str {
        "engine"
    }

    fn runs(&self, _: &Workload, engine: Option<EngineKind>) -> bool {
        engine.and_then(engine::backend).is_some()
    }

    fn prepare(&self, _: &Scenario, _: &Path, _: &AtomicBool, _: &dyn Fn(&str)) -> Result<Box<dyn Ready>> {
        Ok(Box::new(Native))
    }

    fn describe(&self, w: &Workload, files: &[Arc<DataFile>], planned: u32, engine: Option<EngineKind>) -> String {
        let Some(io) = w.io() else { return w.runner() };
        describe_io(w, io, files, planned, engine)
    }
}

impl Ready for Native {
    fn start(&self, cx: &LaunchContext) -> Result<Vec<(WorkerThread, String)>> {
        let workers = engine::Workers {
            workload_idx: cx.workload_idx,
            workload: cx.workload.clone(),
            files: cx.files.clone(),
            engine: cx.engine.ok_or_else(|| Error::failed(format!("{}: no IO back end", cx.workload.name)))?,
            first_worker: cx.first_worker,
            planned: cx.planned,
            clock_start: cx.clock_start,
            end: cx.end(),
            tx: cx.tx.clone(),
            stop: cx.stop.clone(),
            abort: cx.abort.clone(),
            unsent: cx.unsent.clone(),
        };
        let count = cx.workers.end - cx.workers.start;
        workers
            .start(cx.workers.start, count, cx.begin, cx.stagger)
            .map_err(|e| Error::failed(format!("starting worker threads: {e}")))
    }
}

/// What an IO workload runs, e.g. `randread 4k, depth 4 x 1 job, io_uring, O_DIRECT on
/// /mnt/x/fathom.dat (1 GiB)`: the same whether fathom's engine or fio runs it.
pub fn describe_io(
    w: &Workload,
    io: &IoProfile,
    files: &[Arc<DataFile>],
    planned: u32,
    engine: Option<EngineKind>,
) -> String {
    use crate::scenario::units::Size;
    let engine = engine.map_or_else(|| w.runner(), |e| e.to_string());
    let on: Vec<String> = match &w.placement {
        Some(p) => vec![format!("hosts {} ({} each)", p.resolved.join(", "), p.workers_per_host())],
        None => files.iter().map(|f| format!("{} ({})", f.path.display(), Size(f.size).human())).collect(),
    };
    let rw = serde_json::to_value(io.rw).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
    let rate = io.rate_iops.map(|r| format!(", {r} IOPS target")).unwrap_or_default();
    let jobs = crate::metrics::format::counted(planned, "job");
    let queue = io.queue.describe(files.len());
    format!(
        "{rw} {}, depth {} x {jobs}{rate}, {engine}, {}{queue} on {}",
        io.bs,
        io.iodepth,
        if files.iter().all(|f| f.direct) { "O_DIRECT" } else { "buffered" },
        on.join(", "),
    )
}
