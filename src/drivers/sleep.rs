//! The runner of `driver: sleep`, the test build's skeleton program (its model is
//! `crate::scenario::program::sleep`): a thread per sleeper, each recording one
//! transaction every `every_ms` until its workload stops or ends. A new program's runner
//! starts from this file: `runs` recognises its spec, `start` spawns its program and
//! turns what it reports into per-second samples.

use super::driver::{Driver, LaunchContext, Ready, spawn_program};
use crate::engine::WorkerThread;
use crate::engine::target::DataFile;
use crate::error::Result;
use crate::metrics::{OpStats, Sample};
use crate::scenario::program::sleep::Sleep;
use crate::scenario::{EngineKind, Scenario, Workload};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub struct SleepDriver;

/// The sleep settings of workload `w`, if `sleep` runs it.
fn spec_of(w: &Workload) -> Option<&Sleep> {
    w.program()?.get::<Sleep>()
}

impl Driver for SleepDriver {
    fn name(&self) -> &'static str {
        "sleep"
    }

    fn runs(&self, w: &Workload, _: Option<EngineKind>) -> bool {
        spec_of(w).is_some()
    }

    fn prepare(&self, _: &Scenario, _: &Path, _: &AtomicBool, _: &dyn Fn(&str)) -> Result<Box<dyn Ready>> {
        Ok(Box::new(SleepDriver))
    }

    fn describe(&self, w: &Workload, _: &[Arc<DataFile>], _: u32, _: Option<EngineKind>) -> String {
        spec_of(w).map_or_else(|| w.runner(), |s| format!("sleep, a transaction every {} ms", s.every_ms))
    }
}

impl Ready for SleepDriver {
    /// One thread for all the workers asked: each second, a sample per worker and op.
    fn start(&self, cx: &LaunchContext) -> Result<Vec<(WorkerThread, String)>> {
        let every = Duration::from_millis(spec_of(&cx.workload).map_or(1000, |s| s.every_ms as u64));
        let ops = cx.workload.measures().ops;
        spawn_program(cx, "sleep", move |l| {
            let per_second = (1000 / every.as_millis().max(1)) as usize;
            let mut t = l.begin_t();
            while t < l.end_t && !l.stop.load(Ordering::Relaxed) && !l.abort.load(Ordering::Relaxed) {
                let second = l.clock_start + Duration::from_secs(t + 1);
                std::thread::sleep(second.saturating_duration_since(Instant::now()));
                for worker in l.workers.clone() {
                    // the ops in turn, a transaction each, for a second's worth
                    for (i, &op) in ops.iter().enumerate() {
                        let mut stats = OpStats::new(false);
                        for _ in (i..per_second).step_by(ops.len()) {
                            stats.record(0, every.as_nanos() as u64, every.as_nanos() as u64);
                        }
                        let worker = l.first_worker + worker;
                        let _ = l.tx.send(Sample { workload: l.workload_idx, worker, t: t as u32, op, stats });
                    }
                }
                t += 1;
            }
            Ok(())
        })
    }
}
