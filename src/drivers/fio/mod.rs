//! `engine: fio`: the same workload run by the real fio, read back into fathom's
//! samples, so one store, one summary and one report cover both and a user can check
//! fathom against the tool they trust (and see where fio cannot do what was asked).
//!
//! fathom lays out the files as for its own engine, writes a job file (kept in the
//! run's directory), starts fio early enough that its jobs begin on the workload's
//! first second, with json+ status reports every 250 ms, and turns the difference
//! between reports into per-second samples ([`status`]). It stops fio with SIGINT at
//! the workload's end (fio's own clock starts late and would run past it), on Ctrl-C,
//! or when a worker elsewhere failed; fio still writes its final report then.

pub mod jobfile;
pub mod status;

use super::driver::{Driver, LaunchContext, Ready, spawn_program};
use crate::children::Group;
use crate::clock::sleep_until;
use crate::engine::WorkerThread;
use crate::engine::target::DataFile;
use crate::error::{Error, Result};
use crate::metrics::Sample;
use crate::scenario::{EngineKind, Scenario, Workload};
use jobfile::{FileSpec, IoEngine};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

/// How often fio reports; finer than a second so each report lands in the right one.
const STATUS_INTERVAL: &str = "250ms";
/// How long fio takes from being started to its jobs' first IO (measured: 0.28 s with
/// fio 3.33, most of it fio's own 100 ms polling while it sets jobs up).
const STARTUP: Duration = Duration::from_millis(300);
/// Runtime given to fio beyond the workload's, so that fathom's stop at the end, not
/// fio's clock, ends it.
const SPARE_S: u64 = 1;

/// The installed fio's version line, or why it cannot be run.
pub fn version() -> Result<String> {
    let out = Command::new("fio").arg("--version").output().map_err(|e| {
        Error::input(format!("`engine: fio` runs the fio program, which could not be started ({e}); install it (Debian: apt-get install fio)"))
    })?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// `engine: fio`.
pub struct Fio;

impl Driver for Fio {
    fn name(&self) -> &'static str {
        "fio"
    }

    fn runs(&self, _: &Workload, engine: Option<EngineKind>) -> bool {
        engine == Some(EngineKind::Fio)
    }

    fn startup(&self) -> Duration {
        STARTUP
    }

    fn check(&self, _: &Scenario, _: &AtomicBool) -> Result<()> {
        version().map(drop)
    }

    fn prepare(&self, _: &Scenario, _: &Path, _: &AtomicBool, _: &dyn Fn(&str)) -> Result<Box<dyn Ready>> {
        Ok(Box::new(Fio))
    }

    fn describe(&self, w: &Workload, files: &[Arc<DataFile>], planned: u32, engine: Option<EngineKind>) -> String {
        if let Some(job) = w.fio_section() {
            return format!("fio, job [{}] as written", job.section);
        }
        let Some(io) = w.io() else { return w.runner() };
        super::native::describe_io(w, io, files, planned, engine)
    }
}

impl Ready for Fio {
    fn start(&self, cx: &LaunchContext) -> Result<Vec<(WorkerThread, String)>> {
        spawn_program(cx, "fio", run)
    }
}

/// What fio is given for one workload: the job file, and where each of its jobs'
/// samples go.
struct Plan {
    text: String,
    workers: HashMap<String, status::Worker>,
    /// The workload's one block size, if it has one (then bytes follow from IOs).
    single: Option<u64>,
    open_loop: bool,
    /// A user's job file runs in the run's directory, where the files it names
    /// relatively (logs) land, rather than wherever fathom was started.
    in_run_dir: bool,
    /// fio ends the job after its IO (a size, a count): all of that IO is measured.
    bounded: bool,
}

/// A workload's plan: its IO profile translated ([`jobfile::translate`]), or a user's
/// job section as written (`--engine fio` on a job file), whose clones (`numjobs`) are
/// the workload's workers in order.
fn plan(l: &LaunchContext) -> Result<Plan> {
    let w = &l.workload;
    let worker = |index: u32| status::Worker { workload: l.workload_idx, worker: l.first_worker + index };
    if let Some(job) = w.fio_section() {
        let workers = HashMap::from([(job.section.clone(), worker(0))]);
        let bounded = job.ends_by_itself;
        return Ok(Plan { text: job.text.clone(), workers, single: None, open_loop: false, in_run_dir: true, bounded });
    }
    let io = w.io().ok_or_else(|| Error::failed(format!("{}: fio runs IO workloads only", w.name)))?;
    let files: Vec<FileSpec> =
        l.files.iter().map(|f| FileSpec { path: f.path.clone(), size: f.size, direct: f.direct }).collect();
    let io_engine = if l.uring_ok { IoEngine::IoUring } else { IoEngine::Psync };
    let job =
        jobfile::translate(&w.name, w.workers, io, &files, io_engine, l.end_t.saturating_sub(l.begin_t()) + SPARE_S);
    let workers = job.jobs.iter().map(|(name, index)| (name.clone(), worker(*index))).collect();
    let single = io.bs.is_single().then(|| io.bs.min());
    let (open_loop, bounded) = (io.rate_iops.is_some(), io.bound.is_some());
    Ok(Plan { text: job.text, workers, single, open_loop, in_run_dir: false, bounded })
}

fn run(l: &LaunchContext) -> Result<()> {
    let w = &l.workload;
    let plan = plan(l)?;
    let dir = l.run_dir()?;
    let job_path = dir.write(&l.file_name("fio")?, &plan.text)?;
    let (stderr, stderr_path) = dir.create_file(&l.file_name("fio.stderr")?)?;
    let mut messages = stderr.try_clone().map_err(|e| Error::failed(format!("{}: {e}", stderr_path.display())))?;

    sleep_until(l.begin.checked_sub(STARTUP).unwrap_or(l.begin), &l.stop);
    if l.stop.load(Ordering::Relaxed) {
        return Ok(());
    }
    let started_ms = crate::clock::unix_ms();
    let mut fio = Command::new("fio");
    fio.args(["--output-format=json+", "--eta=never"]).arg(format!("--status-interval={STATUS_INTERVAL}"));
    // absolute: fio may run in the run's directory
    fio.arg(std::path::absolute(&job_path).unwrap_or_else(|_| job_path.clone()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr);
    if plan.in_run_dir {
        fio.current_dir(&l.dir);
    }
    let mut child =
        Group::spawn(&mut fio, "fio").map_err(|e| Error::failed(format!("{}: starting fio: {e}", w.name)))?;
    let done = Arc::new(AtomicBool::new(false));
    let watcher = watch(child.id(), [l.stop.clone(), l.abort.clone()], done.clone(), l.end());

    let early_into = plan.bounded.then_some(l.begin_t() as u32);
    let mut intervals = status::Intervals::new(
        plan.workers,
        l.clock_unix_ms,
        started_ms,
        early_into,
        l.end_t as u32,
        plan.single,
        plan.open_loop,
    );
    let read = read_reports(child.stdout(), &mut intervals, &l.tx, &mut messages);
    if read.is_err() {
        // stop fio rather than let it run on unread
        child.signal(libc::SIGINT);
    }
    let status = child.wait().map_err(|e| Error::failed(format!("{}: waiting for fio: {e}", w.name)));
    done.store(true, Ordering::Relaxed);
    let signalled = watcher.join().unwrap_or(true);
    let (last, parsed) = read?.unzip();
    if plan.bounded
        && let Some(report) = &parsed
    {
        let measure_t = l.begin_t() as f64 + w.ramp.as_secs_f64();
        l.io_end.set(status::io_end(report, l.clock_unix_ms, measure_t));
    }
    if let Some(last) = &last {
        let text = serde_json::to_string_pretty(last).unwrap_or_default();
        dir.write(&l.file_name("json")?, &text)?;
    }
    let status = status?;
    let failed_job = last.as_ref().and_then(|v| {
        v.get("jobs")?.as_array()?.iter().find(|j| j.get("error").and_then(|e| e.as_i64()) != Some(0)).cloned()
    });
    // stopped by a signal, fio exits with 128 having done nothing wrong
    if (!status.success() && !signalled) || failed_job.is_some() || last.is_none() {
        let tail = std::fs::read_to_string(&stderr_path).unwrap_or_default();
        let tail: Vec<&str> = tail.lines().rev().take(5).collect::<Vec<_>>().into_iter().rev().collect();
        return Err(Error::failed(format!(
            "{}: fio {status}: {} (job file {}, stderr {})",
            w.name,
            if tail.is_empty() { "no output".to_string() } else { tail.join(" / ") },
            job_path.display(),
            stderr_path.display()
        )));
    }
    Ok(())
}

/// Reads fio's stream of json+ reports, sending each interval's samples; returns the
/// last report (fio's final one when it ended normally), whole and as read.
fn read_reports(
    stdout: Option<ChildStdout>,
    intervals: &mut status::Intervals,
    tx: &Sender<Sample>,
    messages: &mut impl Write,
) -> Result<Option<(serde_json::Value, status::Report)>> {
    let Some(stdout) = stdout else { return Ok(None) };
    let mut last = None;
    each_report(BufReader::new(stdout), messages, |value| {
        let parsed: status::Report =
            serde_json::from_value(value.clone()).map_err(|e| Error::failed(format!("unexpected fio report: {e}")))?;
        for sample in intervals.take(&parsed)? {
            // The collector outlives the drivers; if it failed, the run reports that.
            let _ = tx.send(sample);
        }
        last = Some((value, parsed));
        Ok(())
    })?;
    Ok(last)
}

/// Splits fio's output into its reports, handing each to `report` in order. fio prints
/// each report as pretty JSON, `{` and `}` alone on their lines, and its own messages
/// ("fio: terminating on signal 2", from a signal handler) go to the same stdout: between
/// reports, or, on a busy machine, in the middle of one, cutting a line in two. Messages
/// go to `messages` (its stderr file) and a cut line is joined again. A report that still
/// is not JSON is skipped, said in `messages`: fio's reports are cumulative, so the next
/// one counts its IOs.
fn each_report(
    input: impl BufRead,
    messages: &mut impl Write,
    mut report: impl FnMut(serde_json::Value) -> Result<()>,
) -> Result<()> {
    let mut text = String::new();
    // the start of a line a message cut, to join with the rest of it
    let mut cut: Option<String> = None;
    for line in input.lines() {
        let line = line.map_err(|e| Error::failed(format!("reading fio's output: {e}")))?;
        if text.is_empty() && cut.is_none() && line != "{" {
            if !line.is_empty() {
                let _ = writeln!(messages, "{line}");
            }
            continue;
        }
        if line.starts_with("fio: ") {
            let _ = writeln!(messages, "{line}");
            // fio's messages start with a newline: the text before it is the cut line
            if cut.is_none() {
                let kept = text.strip_suffix('\n').unwrap_or(&text);
                let len = kept.rfind('\n').map_or(0, |i| i + 1);
                let start = text.split_off(len);
                cut = Some(start.strip_suffix('\n').unwrap_or(&start).to_string());
            }
            continue;
        }
        let line = match cut.take() {
            Some(start) => start + &line,
            None => line,
        };
        text.push_str(&line);
        text.push('\n');
        if line != "}" {
            continue;
        }
        match serde_json::from_str(&text) {
            Ok(value) => report(value)?,
            Err(e) => {
                let _ =
                    writeln!(messages, "fathom: skipped a fio report it could not read ({e}); the next counts its IOs");
            }
        }
        text.clear();
    }
    Ok(())
}

/// Stops fio with SIGINT (it then stops its job processes, accounts their last IOs and
/// writes its final report) at `end`, or sooner when the run is stopped, and kills its
/// whole process group (`pid` leads it) if it does not end within 5 s of that. Returns
/// whether it signalled fio.
fn watch(pid: u32, stop: [Arc<AtomicBool>; 2], done: Arc<AtomicBool>, end: Instant) -> std::thread::JoinHandle<bool> {
    std::thread::spawn(move || {
        let mut interrupted: Option<Instant> = None;
        while !done.load(Ordering::Relaxed) {
            let now = Instant::now();
            let signal = match interrupted {
                None if stop.iter().any(|s| s.load(Ordering::Relaxed)) || now >= end => {
                    interrupted = Some(now);
                    libc::SIGINT
                }
                Some(at) if now > at + Duration::from_secs(5) => libc::SIGKILL,
                _ => 0,
            };
            if signal != 0 {
                // SIGINT to fio alone: jobs interrupted directly lose their last IOs' counts
                let target = if signal == libc::SIGKILL { -(pid as libc::pid_t) } else { pid as libc::pid_t };
                // SAFETY: signalling our own child (or its group), which `done` says has not been reaped.
                unsafe { libc::kill(target, signal) };
            }
            let nap = end.saturating_duration_since(now).clamp(Duration::from_millis(1), Duration::from_millis(50));
            std::thread::sleep(nap);
        }
        interrupted.is_some()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio's output with `message` put in at byte `at` of its second report.
    fn output(message: &str, at: usize) -> String {
        let report = |n: u32| {
            format!(
                "{{\n  \"fio version\" : \"fio-3.33\",\n  \"jobs\" : [\n    {{\n      \"ios\" : {n}12345\n    }}\n  ]\n}}\n"
            )
        };
        let second = report(2);
        format!("{}{}{message}{}{}", report(1), &second[..at], &second[at..], report(3))
    }

    fn read(text: &str) -> (Vec<serde_json::Value>, String) {
        let (mut got, mut messages) = (Vec::new(), Vec::new());
        each_report(text.as_bytes(), &mut messages, |v| {
            got.push(v);
            Ok(())
        })
        .unwrap();
        (got, String::from_utf8(messages).unwrap())
    }

    #[test]
    fn a_message_fio_writes_into_a_report_goes_to_its_messages() {
        let message = "\nfio: terminating on signal 2\n";
        let whole = output("", 0);
        // cut everywhere in the second report (of three of one length): mid-number,
        // mid-key, at a line's start
        for at in 1..whole.len() / 3 {
            let (got, said) = read(&output(message, at));
            let ios: Vec<i64> = got.iter().filter_map(|v| v["jobs"][0]["ios"].as_i64()).collect();
            assert_eq!(ios, [112345, 212345, 312345], "message at byte {at}");
            assert_eq!(said, "fio: terminating on signal 2\n", "message at byte {at}");
        }
        let (got, said) = read(&format!("fio: starting\n{whole}fio: done\n"));
        assert_eq!((got.len(), said.as_str()), (3, "fio: starting\nfio: done\n"));
    }

    #[test]
    fn a_report_that_is_not_json_is_skipped_and_said() {
        let (got, said) = read(&output("garbage", 20));
        let ios: Vec<i64> = got.iter().filter_map(|v| v["jobs"][0]["ios"].as_i64()).collect();
        assert_eq!(ios, [112345, 312345], "the reports either side still count");
        assert!(said.starts_with("fathom: skipped a fio report it could not read"), "{said}");
    }
}
