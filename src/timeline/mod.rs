//! The executor: runs a scenario's timeline on the run clock. Workloads start and stop
//! on whole seconds, so every sample of every workload lines up on one per-second grid
//! and every phase (a stretch with the same workloads running) is whole seconds too.
//! Steps run in order; a blocking step (a `start` without `async`, `wait`, `wait_for`)
//! waits while workloads started earlier go on, ramps add their workers, and workloads
//! that reach their end close a phase.

mod context;
mod exec;
mod phase_name;
mod planned;
mod running;

use crate::analysis::steady_state;
use crate::engine::target;
use crate::error::{Error, Result};
use crate::scenario::Scenario;
use crate::scenario::steps::{Action, Probe, Step};
use crate::store::sink::Record;
use crate::store::{EventRow, PhaseRow};
use crate::warnings::Warning;
pub use context::Context;
pub use exec::check_hosts;
use planned::planned_from;
pub use planned::planned_seconds;
use running::RunningWorkload;
pub use running::workers_of;
use std::sync::atomic::Ordering;
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

/// Runs the scenario's timeline on the run clock: its steps in order, workloads started,
/// ramped and stopped on whole seconds, phases recorded; every thread is joined before
/// it returns.
pub fn run_steps(scenario: &Scenario, cx: &Context) -> Result<Outcome> {
    let mut ex = Executor {
        scenario,
        cx,
        started: (0..scenario.workloads.len()).map(|_| None).collect(),
        ramps: Vec::new(),
        batch_t: None,
        cursor: Duration::ZERO,
        early: Duration::ZERO,
        last_steady_check: Instant::now(),
        next_worker: 0,
        phase: None,
        phases: 0,
        failure: None,
        background: exec::Background::new(),
    };
    let result = ex.run();
    // whatever happened, nothing keeps running and every thread is joined
    cx.stop.store(cx.stop.load(Ordering::Relaxed) || result.is_err(), Ordering::Relaxed);
    let ended = ex.finish();
    result?;
    ended?;
    Ok(match ex.failure {
        Some(msg) => Outcome::Failed(msg),
        None if cx.interrupted.load(Ordering::Relaxed) => Outcome::Aborted,
        None => Outcome::Completed,
    })
}

/// How far behind its cursor the timeline may start workers on the cursor's second;
/// later than that, they start on the next second.
const LATE: Duration = Duration::from_millis(250);

/// How long before a start on other hosts it is sent: the agents must have it before
/// the common instant (a round trip over ssh on a LAN is well under this).
const REMOTE_LEAD: Duration = Duration::from_millis(300);

/// How much earlier than their lead a wait ends before starts: the steps between
/// (a mark, the starts' own setup) take a little time too.
const EARLY_MARGIN: Duration = Duration::from_millis(200);

/// Workers a ramp still has to add: `add` at second `next_t`, and as many every `every`
/// seconds after, `left` in all. Kept as a rule, not a list of additions, so that a
/// ramp to a huge `until` costs nothing until its workers are due.
struct Ramp {
    workload: usize,
    next_t: u64,
    every: u64,
    add: u32,
    left: u32,
}

/// What runs in a phase: (workload, workers) of each.
type Running = Vec<(usize, u32)>;

struct Executor<'a> {
    scenario: &'a Scenario,
    cx: &'a Context<'a>,
    /// Per workload, once started.
    started: Vec<Option<RunningWorkload>>,
    ramps: Vec<Ramp>,
    /// The start second shared by consecutive starts (async ones, and the one after).
    batch_t: Option<u64>,
    /// Where the timeline stands on the run clock: the second the last start was
    /// scheduled for, or when the last step that takes time ended. A `wait` counts from
    /// here, so a start's setup time does not push what follows into a later second.
    cursor: Duration,
    /// How much before its end the current `wait` step ends: the lead of the starts
    /// right after it, so that they land on the second the wait ends on.
    early: Duration,
    last_steady_check: Instant,
    next_worker: u32,
    /// The open phase: its index, first second, what runs, and the label a step gave it.
    phase: Option<(i64, u64, Running, Option<String>)>,
    phases: i64,
    failure: Option<String>,
    /// Command steps running while the timeline goes on (`async`, `every`).
    background: exec::Background,
}

impl Executor<'_> {
    fn run(&mut self) -> Result<()> {
        let steps = &self.scenario.steps;
        for (i, step) in steps.iter().enumerate() {
            if self.aborted() {
                return Ok(());
            }
            if let Some(at) = step.at {
                self.idle_until(self.cx.clock_start + at, None)?;
                self.cursor = at;
            }
            self.replan(i);
            if self.batch_t.is_none() && starts(step) {
                self.batch_t = Some(self.batch_second(&steps[i..]));
            }
            // marks take no time: starts after them land with the wait too
            let next = steps[i + 1..].iter().find(|n| !matches!(n.action, Action::Mark(_)));
            let next_starts = next.is_some_and(|n| starts(n) && n.at.is_none());
            let at = i + 1 + steps[i + 1..].iter().take_while(|n| matches!(n.action, Action::Mark(_))).count();
            self.early = if next_starts { self.batch_lead(&steps[at..]) + EARLY_MARGIN } else { Duration::ZERO };
            self.step(step)?;
            // the batch goes on while async starts follow one another
            let next_joins = steps.get(i + 1).is_some_and(|n| starts(n) && n.at.is_none());
            if !(next_joins && is_async(step)) {
                self.batch_t = None;
            }
        }
        self.replan(steps.len());
        // the timeline is done: let what runs run to its end (or until its IO is done)
        let running: Vec<usize> = self.started.iter().flatten().filter(|l| !l.over).map(|l| l.idx).collect();
        for idx in running {
            self.wait_for(idx, None)?;
        }
        Ok(())
    }

    /// Tells the live view when the run will end: steps `from` on, as planned, from the
    /// second the next step would land on and the ends of the workloads running.
    fn replan(&self, from: usize) {
        let mut ends = vec![Some(0); self.scenario.workloads.len()];
        for l in self.started.iter().flatten().filter(|l| !l.over) {
            ends[l.idx] = (!l.w.open_ended()).then_some(l.end_t);
        }
        (self.cx.on_plan)(planned_from(self.scenario, from, self.next_second(Duration::ZERO), ends));
    }

    fn aborted(&self) -> bool {
        self.cx.stop.load(Ordering::Relaxed)
    }

    fn step(&mut self, step: &Step) -> Result<()> {
        match step.action {
            Action::Start { workload, stagger, wait } => self.start(step, workload, stagger, wait)?,
            Action::Ramp { workload, add, every, until, wait, .. } => {
                self.ramp(step, workload, add, every, until, wait)?;
            }
            Action::Stop { workload } => self.stop(step, workload)?,
            Action::Wait(d) => {
                // a named wait opens its phase as it begins: what runs while it lasts
                if let Some(label) = &step.phase {
                    self.open_phase(self.this_second(), Some(label.clone()))?;
                }
                self.cursor += d;
                // starts that follow are sent their lead early, to land on the wait's end
                self.idle_until(self.cx.clock_start + self.cursor.saturating_sub(self.early), None)?;
            }
            Action::WaitFor { workload, timeout } => self.wait_for(workload, timeout)?,
            Action::Fill { workload, zero } => self.fill(workload, zero),
            Action::Command(ref c) => {
                let cx = self.cx;
                let ready = exec::ready(c, cx, self.scenario);
                match c.repeat {
                    Some(repeat) => self.background.start(ready, repeat, cx.clock_start, cx.stop.clone()),
                    None => {
                        let at_ms = self.now_ms();
                        let ran = ready.run(&|| cx.stop.load(Ordering::Relaxed));
                        self.record(exec::Report { ready, at_ms, ran, stopped: false });
                    }
                }
            }
            Action::WaitUntil { ref probe, timeout, interval } => self.wait_until(probe, timeout, interval)?,
            Action::Mark(ref label) => self.mark(label),
        }
        self.after_step(step)
    }

    /// Starts a workload's workers in the second the step lands on.
    /// With `wait` it then waits for the workload to end.
    fn start(&mut self, step: &Step, workload: usize, stagger: Duration, wait: bool) -> Result<()> {
        self.retire_over(workload);
        let cx = self.cx;
        let w = &self.scenario.workloads[workload];
        let workers = running::workers_of(w, &cx.files[workload]);
        let start_t = self.batch_t.unwrap_or_else(|| self.next_second(Duration::ZERO));
        let label = self.label_for(step, workload);
        let mut l = RunningWorkload::new(cx, workload, w, start_t, workers, self.next_worker, &label)?;
        self.next_worker += workers;
        (cx.progress)(&running::describe(&l, cx));
        l.add_workers(cx, workers, start_t, stagger)?;
        self.started[workload] = Some(l);
        self.open_phase(start_t, step.phase.clone())?;
        self.cursor = Duration::from_secs(start_t);
        if wait {
            self.wait_for(workload, None)?;
        }
        Ok(())
    }

    /// Ends the servers whose workloads are all over, before `starting` starts, so that
    /// a cluster measured earlier is idle while it runs (see `Ready::retire`).
    fn retire_over(&self, starting: usize) {
        let over: Vec<usize> = self.started.iter().flatten().filter(|l| l.over).map(|l| l.idx).collect();
        if over.is_empty() {
            return;
        }
        let next = &self.scenario.workloads[starting].name;
        for server in self.cx.drivers.retire(&over) {
            (self.cx.progress)(&format!("{server} stopped (its workloads are over), idle while {next} runs"));
        }
    }

    /// Starts a ramped workload with its first workers.
    /// The rest are left to a ramp that adds them `every` apart as the timeline goes on.
    fn ramp(&mut self, step: &Step, workload: usize, add: u32, every: Duration, until: u32, wait: bool) -> Result<()> {
        self.retire_over(workload);
        let cx = self.cx;
        let w = &self.scenario.workloads[workload];
        let start_t = self.batch_t.unwrap_or_else(|| self.next_second(Duration::ZERO));
        let label = self.label_for(step, workload);
        let mut l = RunningWorkload::new(cx, workload, w, start_t, until, self.next_worker, &label)?;
        l.ramped = true;
        self.next_worker += until;
        (cx.progress)(&running::describe(&l, cx));
        l.add_workers(cx, add.min(until), start_t, Duration::ZERO)?;
        self.started[workload] = Some(l);
        self.open_phase(start_t, step.phase.clone())?;
        let first = add.min(until);
        if first < until {
            let every = every.as_secs();
            self.ramps.push(Ramp { workload, next_t: start_t + every, every, add, left: until - first });
        }
        self.cursor = Duration::from_secs(start_t);
        if wait {
            self.wait_for(workload, None)?;
        }
        Ok(())
    }

    /// Stops a workload at the next whole second, and ends its ramp if it has one.
    fn stop(&mut self, step: &Step, workload: usize) -> Result<()> {
        let cx = self.cx;
        let t = self.next_second(Duration::ZERO);
        self.idle_until(cx.clock_start + Duration::from_secs(t), None)?;
        if let Some(l) = self.started[workload].as_mut().filter(|l| !l.over) {
            l.stop.store(true, Ordering::Relaxed);
            (cx.progress)(&format!("[{t:>5}s] stop {}", l.w.name));
        }
        self.ramps.retain(|r| r.workload != workload);
        self.end_workload(workload, Some(t as f64))?;
        self.open_phase(t, step.phase.clone())?;
        self.cursor = Duration::from_secs(t);
        Ok(())
    }

    /// Writes a workload's working set, here or through the agents of its hosts.
    /// The fill is recorded as an event, and a failure other than a stop fails the run.
    fn fill(&mut self, workload: usize, zero: bool) {
        let cx = self.cx;
        let at = self.now_ms();
        let started = Instant::now();
        let w = &self.scenario.workloads[workload];
        let kind = if zero { "zero" } else { "prefill" };
        let mut result = Ok(());
        if let Some(p) = &w.placement {
            // its files are on its hosts: their agents fill them
            result = cx.fleet.fill(workload, &p.resolved, zero, &cx.stop);
        } else if let Some(io) = w.io() {
            for data in &cx.files[workload] {
                result = result.and_then(|_| target::fill(&w.name, io, data, zero, &cx.stop));
            }
        }
        let took = started.elapsed().as_millis() as i64;
        let detail = match &result {
            Ok(()) => String::new(),
            Err(e) => e.to_string(),
        };
        let row = EventRow {
            at_ms: at,
            kind: kind.into(),
            label: w.name.clone(),
            status: Some(i64::from(result.is_err())),
            took_ms: Some(took),
            detail,
        };
        cx.sink.send(Record::Event(row));
        match result {
            Err(Error::Interrupted) => {}
            Err(e) => self.fail(format!("{kind} {}: {e}", w.name)),
            Ok(()) => {}
        }
    }

    /// Polls a probe until it answers, while the workloads go on.
    /// The wait is recorded as an event, and a probe that never answers fails the run.
    fn wait_until(&mut self, probe: &Probe, timeout: Duration, interval: Duration) -> Result<()> {
        let cx = self.cx;
        let at = self.now_ms();
        // workloads go on while we poll, on a thread of its own
        let probe_thread = {
            let (probe, stop) = (probe.clone(), cx.stop.clone());
            std::thread::spawn(move || exec::wait_until(&probe, timeout, interval, &stop))
        };
        while !probe_thread.is_finished() && !self.aborted() {
            self.idle_until(Instant::now() + Duration::from_millis(50), None)?;
        }
        // stopped: a probe in the middle of a connection is not waited for (a
        // command is killed at once; a connection ends at its own timeout)
        let result = if probe_thread.is_finished() {
            probe_thread.join().unwrap_or_else(|_| Err(Error::failed("the probe panicked")))
        } else {
            Err(Error::Interrupted)
        };
        let took = match &result {
            Ok(d) => d.as_millis() as i64,
            Err(_) => self.now_ms() - at,
        };
        let row = EventRow {
            at_ms: at,
            kind: "wait_until".into(),
            label: probe.to_string(),
            status: result.as_ref().ok().map(|_| 0),
            took_ms: Some(took),
            detail: result.as_ref().err().map(ToString::to_string).unwrap_or_default(),
        };
        cx.sink.send(Record::Event(row));
        match result {
            Ok(d) => (cx.progress)(&format!("[{:>5}s] {probe}: ready after {:.1} s", at / 1000, d.as_secs_f64())),
            Err(e) if !self.aborted() => {
                self.fail(format!("wait_until {probe}: not ready after {} s: {e}", timeout.as_secs_f64()))
            }
            Err(_) => {}
        }
        Ok(())
    }

    /// Records a mark as an event and shows it.
    fn mark(&self, label: &str) {
        // where the timeline stands, though a wait before it ended early for starts after it
        let at = self.now_ms().max(self.cursor.as_millis() as i64);
        let row = EventRow {
            at_ms: at,
            kind: "mark".into(),
            label: label.to_string(),
            status: None,
            took_ms: None,
            detail: String::new(),
        };
        self.cx.sink.send(Record::Event(row));
        (self.cx.progress)(&format!("[{:>5}s] mark: {label}", at / 1000));
    }

    /// Moves the timeline's cursor past a step that took its own time, and opens the
    /// phase a step names as it ends.
    fn after_step(&mut self, step: &Step) -> Result<()> {
        if matches!(&step.action, Action::Fill { .. } | Action::WaitUntil { .. })
            || matches!(&step.action, Action::Command(c) if c.repeat.is_none())
        {
            self.cursor = self.cx.clock_start.elapsed();
        }
        // any other step named with `phase:` opens its phase as it ends (`wait_for: dss`
        // with `phase: after`, a `mark`, a fault injected by `exec`)
        if let Some(label) = &step.phase
            && !matches!(
                step.action,
                Action::Start { .. } | Action::Ramp { .. } | Action::Stop { .. } | Action::Wait(_)
            )
        {
            self.open_phase(self.this_second(), Some(label.clone()))?;
        }
        Ok(())
    }

    /// The whole second a step that changes nothing running names a phase from: the one
    /// the timeline stands in, so a phase that opened in it (a workload that just ended)
    /// is named rather than followed by another.
    fn this_second(&self) -> u64 {
        self.cursor.max(self.cx.clock_start.elapsed()).as_secs()
    }

    /// Records one run of a command step: its event, a progress line, and a failure of
    /// the run if it failed (not if the run's end stopped it).
    fn record(&mut self, report: exec::Report) {
        let exec::Report { ready, at_ms, ran, stopped } = report;
        let row = EventRow {
            at_ms,
            kind: ready.kind.into(),
            label: ready.label.clone(),
            status: ran.status.map(i64::from),
            took_ms: Some(ran.took.as_millis() as i64),
            detail: ran.output.clone(),
        };
        self.cx.sink.send(Record::Event(row));
        let how = match ran.status {
            Some(n) => format!("exit {n}"),
            None if stopped => "stopped at the run's end".to_string(),
            None => "killed".to_string(),
        };
        let shown = &ready.shown;
        (self.cx.progress)(&format!("[{:>5}s] {shown}: {how} after {:.1} s", at_ms / 1000, ran.took.as_secs_f64()));
        if ran.status != Some(0) && !stopped && !self.aborted() {
            let tail = ran.output.trim().lines().last().unwrap_or("").to_string();
            self.fail(format!("{shown} failed ({how}): {tail}"));
        }
    }

    fn fail(&mut self, msg: String) {
        self.cx.stop.store(true, Ordering::Relaxed);
        self.failure.get_or_insert(msg);
    }

    fn now_ms(&self) -> i64 {
        self.cx.clock_start.elapsed().as_millis() as i64
    }

    /// The second at which the starts at the head of `steps` begin together: the next
    /// whole second that leaves a driver's program (fio, pgbench) time to start and every
    /// start its setup.
    fn batch_second(&self, steps: &[Step]) -> u64 {
        self.next_second(self.batch_lead(steps))
    }

    /// How long before their second the starts at the head of `steps` must be sent: the
    /// longest startup of their drivers, [`REMOTE_LEAD`] for other hosts, and a little
    /// for each start after the first.
    fn batch_lead(&self, steps: &[Step]) -> Duration {
        let mut lead = Duration::ZERO;
        for (n, step) in steps.iter().enumerate() {
            if n > 0 && (!starts(step) || step.at.is_some()) {
                break;
            }
            if let Action::Start { workload, .. } | Action::Ramp { workload, .. } = step.action {
                lead = lead
                    .max(crate::drivers::of(&self.scenario.workloads[workload], self.cx.engines[workload]).startup());
                if self.scenario.workloads[workload].placement.is_some() {
                    lead = lead.max(REMOTE_LEAD);
                }
            }
            lead += Duration::from_millis(if n > 0 { 50 } else { 0 });
            if !is_async(step) {
                break;
            }
        }
        lead
    }

    /// The whole second a step that starts or stops workloads happens on: the first at
    /// least `lead` after where the timeline stands (its cursor), so a step due on a
    /// second boundary is not pushed to the next one because polling woke a few ms late.
    /// A `lead` (time fio needs to start) is kept from now; without one, the step may be
    /// up to [`LATE`] behind its second.
    fn next_second(&self, lead: Duration) -> u64 {
        let now = self.cx.clock_start.elapsed().as_secs_f64();
        let slack = if lead.is_zero() { LATE.as_secs_f64() } else { 0.0 };
        // the lead counts from now: a wait before the starts ended that much early
        let base = self.cursor.as_secs_f64().max(now + lead.as_secs_f64() - slack);
        (base - 0.005).ceil().max(0.0) as u64
    }

    /// The phase a workload starts in, as recorded with it: the step's label, else its
    /// own name.
    fn label_for(&self, step: &Step, workload: usize) -> String {
        step.phase.clone().unwrap_or_else(|| self.scenario.workloads[workload].name.clone())
    }

    /// Waits until `workload` has ended, or at most `timeout` (it then runs on).
    fn wait_for(&mut self, workload: usize, timeout: Option<Duration>) -> Result<()> {
        let longest = timeout.unwrap_or(Duration::from_secs(u32::MAX as u64));
        self.idle_until(Instant::now() + longest, Some(workload))?;
        self.cursor = self.cx.clock_start.elapsed();
        Ok(())
    }

    /// Lets time pass until `until` (or until workload `done` is over): adds ramp
    /// workers when due, ends workloads that reach their end, passes a run-wide stop
    /// on to every workload.
    fn idle_until(&mut self, until: Instant, done: Option<usize>) -> Result<()> {
        loop {
            let now = Instant::now();
            let t = self.cx.clock_start.elapsed().as_secs();
            if self.aborted() {
                for l in self.started.iter().flatten() {
                    l.stop.store(true, Ordering::Relaxed);
                }
                return Ok(());
            }
            for report in self.background.ended() {
                self.record(report);
            }
            self.add_due_workers(t)?;
            // workloads that reached steady state and may stop early (`fathom sweep`)
            if self.last_steady_check.elapsed() >= Duration::from_millis(500) {
                self.last_steady_check = Instant::now();
                for idx in self.steady_now(t)? {
                    let stop_t = t + 1;
                    if let Some(l) = self.started[idx].as_ref() {
                        (self.cx.progress)(&format!("[{stop_t:>5}s] {}: steady state reached", l.w.name));
                    }
                    self.stop_at(idx, stop_t)?;
                    self.open_phase(stop_t, None)?;
                }
            }
            self.end_due(now, t)?;
            let finished = done.is_some_and(|d| self.started[d].as_ref().is_none_or(|l| l.over));
            if finished || now >= until {
                return Ok(());
            }
            let next_ramp = self.ramps.iter().map(|r| self.cx.clock_start + Duration::from_secs(r.next_t)).min();
            let wake = [Some(until), next_ramp].into_iter().flatten().min().unwrap_or(until);
            // a bounded workload ends when its workers do: look more often while one runs,
            // so its measured window ends within a few ms of its last IO
            let bounded = self.started.iter().flatten().any(|l| !l.over && l.w.bound().is_some());
            let poll = Duration::from_millis(if bounded { 5 } else { 50 });
            std::thread::sleep(wake.saturating_duration_since(now).min(poll));
        }
    }

    /// Adds the workers of ramps whose next step is due by second `t`, each step
    /// opening its phase. One step per ramp and pass, so a stop is seen between steps.
    fn add_due_workers(&mut self, t: u64) -> Result<()> {
        let mut due = Vec::new();
        for r in self.ramps.iter_mut().filter(|r| r.next_t <= t) {
            let count = r.add.min(r.left);
            due.push((r.next_t, r.workload, count));
            r.left -= count;
            r.next_t += r.every;
        }
        self.ramps.retain(|r| r.left > 0);
        for (at, workload, count) in due {
            if let Some(l) = self.started[workload].as_mut().filter(|l| !l.over) {
                l.add_workers(self.cx, count, at, Duration::ZERO)?;
                (self.cx.progress)(&format!("[{at:>5}s] {}: {} of {} workers", l.w.name, l.workers, l.planned));
            }
            self.open_phase(at, None)?;
        }
        Ok(())
    }

    /// Ends the workloads past their end, or bounded ones that did all their IO, and
    /// opens a phase with the second each ended in.
    fn end_due(&mut self, now: Instant, t: u64) -> Result<()> {
        let ended: Vec<usize> = self
            .started
            .iter()
            .flatten()
            .filter(|l| !l.over && (now >= l.end(self.cx) || l.done()))
            .map(|l| l.idx)
            .collect();
        for idx in ended {
            let end_t = self.started[idx].as_ref().map(|l| l.end_t).unwrap_or(t);
            let now_s = self.cx.clock_start.elapsed().as_secs_f64();
            // a program's own end of IO, when it gave one, comes before its exit
            let io_end = self.started[idx].as_ref().and_then(|l| l.io_end.get());
            let at = io_end.map_or(now_s, |e| e.min(now_s));
            if at < end_t as f64 {
                let name = &self.scenario.workloads[idx].name;
                (self.cx.progress)(&format!("[{:>5}s] {name}: done after {at:.1} s", at.ceil()));
                self.end_workload(idx, Some(at))?;
                self.cx.sink.send(Record::WorkloadDone { idx, at });
                self.open_phase(at.ceil() as u64, None)?;
            } else {
                self.end_workload(idx, None)?;
                self.open_phase(end_t, None)?;
            }
        }
        Ok(())
    }

    /// Workloads with `stop_when_steady` whose IOPS, per second up to second `t`, have
    /// reached steady state after their minimum time.
    fn steady_now(&self, t: u64) -> Result<Vec<usize>> {
        let mut out = Vec::new();
        for l in self.started.iter().flatten().filter(|l| !l.over) {
            let Some(rule) = l.w.io().and_then(|io| io.stop_when_steady) else { continue };
            let measure_t = l.start_t + l.w.ramp.as_secs();
            if t < measure_t + rule.min.as_secs() {
                continue;
            }
            let seconds = self.cx.store.per_second(self.cx.run, l.idx as i64, measure_t as i64, t as i64)?;
            let iops: Vec<f64> = seconds.iter().map(|s| s.1 as f64).collect();
            let rounds = steady_state::rounds(&iops, rule.round_s);
            if steady_state::reached(&rounds, rule.round_s as f64).is_some() {
                out.push(l.idx);
            }
        }
        Ok(out)
    }

    /// Stops workload `idx` on second `t` (waiting for it) and joins it.
    fn stop_at(&mut self, idx: usize, t: u64) -> Result<()> {
        crate::clock::sleep_until(self.cx.clock_start + Duration::from_secs(t), &self.cx.stop);
        if let Some(l) = self.started[idx].as_ref() {
            l.stop.store(true, Ordering::Relaxed);
        }
        self.end_workload(idx, Some(t as f64))
    }

    /// Joins a workload's threads and records when it stopped (`at`: a timeline stop,
    /// else its end, a failure, or a full filesystem).
    fn end_workload(&mut self, idx: usize, at: Option<f64>) -> Result<()> {
        let cx = self.cx;
        let Some(l) = self.started[idx].as_mut().filter(|l| !l.over) else { return Ok(()) };
        if let Some(msg) = l.join() {
            self.fail(msg);
        }
        let l = self.started[idx].as_ref().expect("just joined");
        let mut stopped = at.unwrap_or(l.end_t as f64).min(cx.clock_start.elapsed().as_secs_f64()).min(l.end_t as f64);
        // an appending workload has one file (a driver's, none)
        let full = cx.files[idx].first().map(|data| (data, data.full_at_ms.load(Ordering::Relaxed)));
        if let Some((data, full_at_ms)) = full.filter(|(_, ms)| *ms > 0) {
            stopped = stopped.min((full_at_ms - 1) as f64 / 1000.0);
            warn(cx, &Warning::TargetFull { workload: l.w.name.clone(), path: data.path.clone(), at_s: stopped });
        }
        let unsent = l.unsent.load(Ordering::Relaxed);
        if let Some(rate_iops) = l.w.io().and_then(|io| io.rate_iops).filter(|_| unsent > 0) {
            warn(cx, &Warning::RateNotKept { workload: l.w.name.clone(), unsent, rate_iops });
        }
        cx.sink.send(Record::WorkloadStopped { idx, at: stopped });
        Ok(())
    }

    /// Opens a phase at second `t` if what runs differs from the open phase's. Changes
    /// within one second (workloads starting together) make one phase, not several.
    fn open_phase(&mut self, t: u64, label: Option<String>) -> Result<()> {
        let running: Running = self
            .started
            .iter()
            .flatten()
            .filter(|l| !l.over && l.end_t > t && !l.stop.load(Ordering::Relaxed))
            .map(|l| (l.idx, l.workers))
            .collect();
        if self.phase.as_ref().is_some_and(|(_, _, r, _)| *r == running) && label.is_none() {
            return Ok(());
        }
        let (reuse, label) = match &self.phase {
            // a second workload starting in the same second keeps the phase and its label
            Some((idx, start_t, _, given)) if *start_t == t => (Some(*idx), label.or(given.clone())),
            _ => {
                self.close_phase(t)?;
                (None, label)
            }
        };
        if running.is_empty() {
            if let Some(idx) = reuse {
                self.cx.sink.send(Record::PhaseDropped(idx));
                self.phase = None;
                self.phases -= 1;
            }
            return Ok(());
        }
        let given = label.clone();
        let label = label.unwrap_or_else(|| {
            let names: Vec<String> = running
                .iter()
                .map(|&(i, n)| {
                    let l = self.started[i].as_ref().expect("running");
                    if l.ramped || l.planned > running::workers_of(&l.w, &self.cx.files[i]) || n < l.planned {
                        format!("{} x{n}", l.w.name)
                    } else {
                        l.w.name.clone()
                    }
                })
                .collect();
            phase_name::auto_label(&names)
        });
        let idx = match reuse {
            Some(idx) => {
                self.cx.sink.send(Record::PhaseDropped(idx));
                idx
            }
            None => {
                self.phases += 1;
                self.phases - 1
            }
        };
        (self.cx.on_phase)(&label, t, &running);
        let ran = running.iter().map(|&(i, n)| (i as i64, n as i64)).collect();
        self.cx.sink.send(Record::PhaseOpened(PhaseRow { idx, label, start_t: t as i64, end_t: None, running: ran }));
        self.phase = Some((idx, t, running, given));
        Ok(())
    }

    fn close_phase(&mut self, t: u64) -> Result<()> {
        if let Some((idx, ..)) = self.phase.take() {
            self.cx.sink.send(Record::PhaseEnded { idx, end_t: t as i64 });
        }
        Ok(())
    }

    /// Stops and joins everything still running (background commands too), and closes
    /// the last phase.
    fn finish(&mut self) -> Result<()> {
        for report in self.background.stop() {
            self.record(report);
        }
        for l in self.started.iter().flatten() {
            if self.cx.stop.load(Ordering::Relaxed) {
                l.stop.store(true, Ordering::Relaxed);
            }
        }
        let now = self.cx.clock_start.elapsed().as_secs_f64();
        let mut result = Ok(());
        for idx in 0..self.started.len() {
            let r = self.end_workload(idx, Some(now));
            if result.is_ok() {
                result = r;
            }
        }
        let end = self.started.iter().flatten().map(|l| l.end_t).max().unwrap_or(0).min(now.floor() as u64);
        let closed = if self.cx.stop.load(Ordering::Relaxed) { now.floor() as u64 } else { end };
        result.and(self.close_phase(closed))
    }
}

/// Records a warning with the run and says it on the terminal.
fn warn(cx: &Context, w: &Warning) {
    cx.sink.send(Record::Warning { code: w.code().into(), message: w.message() });
    w.say();
}

/// A step that starts a workload.
fn starts(step: &Step) -> bool {
    matches!(step.action, Action::Start { .. } | Action::Ramp { .. })
}

/// A start that does not wait for its workload.
fn is_async(step: &Step) -> bool {
    matches!(step.action, Action::Start { wait: false, .. } | Action::Ramp { wait: false, .. })
}
