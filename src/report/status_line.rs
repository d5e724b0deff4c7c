//! The live view: while a run goes, one status line on a terminal, redrawn four times a
//! second (progress, ETA, and per running workload the last second's IOPS, MB/s, p50
//! and p99, and its target), or a plain line every 10 s when stderr is not a terminal
//! (CI logs, pipes).

use super::format::{count, latency_us, sig3};
use crate::metrics::totals::{State, Totals};
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A running view; `stop` ends it and clears its line.
pub struct View {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// True when stderr is a terminal (the status line can be redrawn in place).
pub fn on_terminal() -> bool {
    // SAFETY: isatty only inspects the descriptor.
    unsafe { libc::isatty(2) == 1 }
}

impl View {
    pub fn start(live: Arc<Totals>, clock_start: Instant, planned_s: u64) -> View {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new().name("live-view".into()).spawn(move || {
            let terminal = on_terminal();
            let mut last_plain = Instant::now();
            while !flag.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(250));
                let now = clock_start.elapsed().as_secs();
                let line = live.with(|s| status(s, now, planned_s));
                if terminal {
                    eprint!("\r\x1b[K{line}");
                    let _ = std::io::stderr().flush();
                } else if last_plain.elapsed() >= Duration::from_secs(10) {
                    last_plain = Instant::now();
                    eprintln!("{line}");
                }
            }
            if terminal {
                eprint!("\r\x1b[K");
            }
        });
        // without a thread for it, the run goes on without a live view
        View { stop, thread: thread.ok() }
    }

    pub fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread {
            let _ = t.join();
        }
    }
}

/// Width of the progress bar in characters.
const BAR: usize = 12;

/// `[  23s/68s ####-------- 34%, ETA 45s] during · qd4 x4: 84,012 IOPS 344 MB/s p50 40 µs p99 73 µs`:
/// progress, the phase, and per running workload its workers and last second.
pub fn status(s: &State, now: u64, planned: u64) -> String {
    let pct = (now * 100).checked_div(planned).unwrap_or(0).min(100);
    let eta = planned.saturating_sub(now);
    let mut parts = Vec::new();
    for (i, w) in s.workloads.iter().enumerate() {
        let recent: Vec<_> = s
            .latest
            .iter()
            .filter(|((wi, op), (t, _))| *wi == i && *op != crate::metrics::Op::Sync && u64::from(*t) + 3 >= now)
            .map(|(_, (_, stats))| stats)
            .collect();
        if recent.is_empty() {
            continue;
        }
        let ops: u64 = recent.iter().map(|st| st.ops).sum();
        let bytes: u64 = recent.iter().map(|st| st.bytes).sum();
        let mut merged = recent[0].latency.clone();
        for st in &recent[1..] {
            let _ = merged.add(&st.latency);
        }
        let target = w.target_iops.map(|t| format!(" of {}", count(t))).unwrap_or_default();
        let workers = s.last_seen.iter().filter(|((wi, _), t)| *wi == i && u64::from(**t) + 3 >= now).count();
        parts.push(format!(
            "{} x{workers}: {} IOPS{target} {} MB/s p50 {} p99 {}",
            w.name,
            count(ops as f64),
            sig3(bytes as f64 / 1e6),
            latency_us(merged.value_at_quantile(0.5) as f64 / 1000.0),
            latency_us(merged.value_at_quantile(0.99) as f64 / 1000.0)
        ));
    }
    let body = if parts.is_empty() { "starting".to_string() } else { parts.join(" | ") };
    let phase = s.phase.as_ref().map(|p| format!("{p} · ")).unwrap_or_default();
    let done = (pct as usize * BAR).div_ceil(100).min(BAR);
    let bar = format!("{}{}", "#".repeat(done), "-".repeat(BAR - done));
    format!("[{now:>5}s/{planned}s {bar} {pct:>3}%, ETA {eta}s] {phase}{body}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::totals::WorkloadInfo;
    use crate::metrics::{Op, OpStats};

    #[test]
    fn the_status_line_shows_the_last_second_of_running_workloads() {
        let live = Totals::new(
            1,
            "s",
            vec![WorkloadInfo {
                name: "qd4".into(),
                group: String::new(),
                workers: 1,
                target_iops: Some(2000.0),
                placed: false,
            }],
        );
        let mut st = OpStats::new(false);
        for _ in 0..1000 {
            st.record(4096, 50_000, 0);
        }
        live.add_one(0, 0, 9, Op::Read, st.clone());
        live.add_one(0, 0, 10, Op::Read, st);
        live.set_phase("before");
        let line = live.with(|s| status(s, 11, 40));
        assert!(
            line.starts_with(
                "[   11s/40s ####--------  27%, ETA 29s] before · qd4 x1: 1,000 IOPS of 2,000 4.10 MB/s p50 50"
            ),
            "{line}"
        );
        // long after its last second a workload is no longer shown
        assert!(live.with(|s| status(s, 30, 40)).ends_with("starting"));
    }
}
