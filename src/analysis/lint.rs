//! Lint: the benchmarking mistakes that make numbers lie, caught before a run (from the
//! scenario and the machine) and after it (from what was measured). Each finding says
//! what is wrong, why it distorts the result, and what to change, like hyperfine's
//! warnings. `fathom lint` prints them; `fathom run` prints and stores them (code
//! `lint-...`); `--strict` makes a warning stop the run (exit 2).

use crate::metrics::summary::Throughput;
use crate::scenario::program::ProgramSpec;
use crate::scenario::steps::Action;
use crate::scenario::units::Size;
use crate::scenario::yaml::{self, Value};
use crate::scenario::{IoProfile, Kind, Queue, Scenario, Workload};
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; the numbers are still what they say.
    Info,
    /// The numbers probably do not mean what the scenario's author thinks.
    Warning,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Finding {
    pub severity: Severity,
    /// Stable, for scripts and the store (`warnings.code` is `lint-` + this).
    pub code: &'static str,
    /// The workloads it is about (none for one about the whole run): one finding covers
    /// every workload it says the same of, so a run says it once.
    pub workloads: Vec<String>,
    pub message: String,
}

impl Finding {
    /// A finding about one workload: `message` says what, without the name, which
    /// `grouped` puts before it with the others it is true of.
    fn about(workload: &str, severity: Severity, code: &'static str, message: String) -> Finding {
        Finding { severity, code, workloads: vec![workload.to_string()], message }
    }

    /// A finding about the whole run.
    fn run(severity: Severity, code: &'static str, message: String) -> Finding {
        Finding { severity, code, workloads: Vec::new(), message }
    }
}

/// One finding per code and message, over all the workloads it is true of, in the
/// order first found, each message led by its workloads' names.
fn grouped(found: Vec<Finding>) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    for f in found {
        match out.iter_mut().find(|o| o.code == f.code && o.message == f.message && !o.workloads.is_empty()) {
            Some(o) if !f.workloads.is_empty() => o.workloads.extend(f.workloads),
            _ => out.push(f),
        }
    }
    for f in out.iter_mut().filter(|f| !f.workloads.is_empty()) {
        f.message = format!("{}: {}", f.workloads.join(", "), f.message);
    }
    out
}

/// What lint needs to know about the machine and the targets before a run, gathered
/// by `crate::observe::preflight` so that lint itself reads nothing.
pub struct Facts {
    pub memory_bytes: Option<u64>,
    /// Per workload: its working set in bytes (None: unknown before layout) and the free
    /// space where it writes.
    pub working_set: Vec<Option<u64>>,
    pub free_bytes: Vec<Option<u64>>,
    /// Per workload: the files its IO goes to, as its targets resolve (a directory
    /// target holds `fathom-FILE.dat`); none for a program's workload.
    pub data_files: Vec<Vec<PathBuf>>,
    /// The Prometheus endpoint's address resolves to an address beyond loopback.
    pub endpoint_beyond_loopback: bool,
}

/// Below this, a measured duration rarely reaches steady state (SSDs, caches, tiering).
const STEADY_STATE_S: u64 = 60;

/// What a program's workload risks measuring instead of what it is meant to, as its
/// program says (a pgbench database that fits in memory, iperf3 on loopback).
fn program_findings(w: &Workload, program: &ProgramSpec, memory_bytes: Option<u64>) -> Vec<Finding> {
    let severity = |warning: bool| if warning { Severity::Warning } else { Severity::Info };
    let (name, risks) = (&w.name, program.risks(memory_bytes, w.ramp).into_iter());
    risks.map(|r| Finding::about(name, severity(r.warning), r.rule, r.message)).collect()
}

/// `warning [page-cache]: ...` lines.
pub fn describe(found: &[Finding]) -> String {
    let mut out = String::new();
    for f in found {
        let level = match f.severity {
            Severity::Warning => "warning",
            Severity::Info => "note",
        };
        out.push_str(&format!("lint {level} [{}]: {}\n", f.code, f.message));
    }
    out
}

/// Findings about a scenario before it runs.
pub fn before(s: &Scenario, facts: &Facts) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, w) in s.workloads.iter().enumerate() {
        let io = match &w.kind {
            Kind::Program(program) => {
                out.extend(program_findings(w, program, facts.memory_bytes));
                continue;
            }
            Kind::FioSection(_) => continue,
            Kind::Io(io) => io,
        };
        let set = facts.working_set.get(i).copied().flatten();
        if let (false, Some(set), Some(ram)) = (io.direct, set, facts.memory_bytes)
            && set < ram
        {
            out.push(Finding::about(
                &w.name,
                Severity::Warning,
                "page-cache",
                format!(
                    "buffered IO (direct: false) on a {} working set, smaller than the {} of RAM: \
                     after the first pass reads come from the page cache, so this measures memory, not storage. \
                     Use direct: true, or a working set several times RAM",
                    Size(set).human(),
                    Size(ram).human()
                ),
            ));
        }
        if io.targets.len() > 1 && io.queue == Queue::Shared && io.iodepth < io.targets.len() as u32 {
            out.push(Finding::about(
                &w.name,
                Severity::Warning,
                "depth-across-targets",
                format!(
                    "iodepth {} is one queue per job shared by {} targets (queue: shared): some targets \
                     have no IO in flight at any moment. Raise iodepth to at least the number of targets, or use \
                     queue: per_target for a depth on each",
                    io.iodepth,
                    io.targets.len()
                ),
            ));
        }
        if let Some(volume) = write_volume(w, io)
            && let Some(free) = facts.free_bytes.get(i).copied().flatten()
            && volume > free
        {
            out.push(Finding::about(
                &w.name,
                Severity::Warning,
                "write-volume",
                format!(
                    "appending at the asked rate for {} s writes about {}, more than the {} free: \
                     the workload will stop early when the filesystem fills. Lower the rate or the duration",
                    (w.ramp + w.duration).as_secs(),
                    Size(volume).human(),
                    Size(free).human()
                ),
            ));
        }
    }
    out.extend(short_runs(s));
    out.extend(reads_of_zeros(s, facts));
    out.extend(one_zone(s, facts));
    out.extend(exposed_endpoint(s, facts));
    out.extend(flattened(s));
    grouped(out)
}

/// Workloads the file keeps apart that the run's `--set`s made identical: the phases of
/// the sweep they step through compare nothing, and their names no longer say what ran.
fn flattened(s: &Scenario) -> Option<Finding> {
    (!s.flattened.is_empty()).then(|| {
        Finding::run(
            Severity::Warning,
            "flattened-sweep",
            format!(
                "the --set given makes {} identical but for their names: the phases they run in compare nothing, \
                 and their names no longer say what ran. Change what the study sweeps through its own variables, \
                 or leave that key to the scenario",
                s.flattened.join(", ")
            ),
        )
    })
}

/// Workloads measured for less than `STEADY_STATE_S` at a time: their whole duration,
/// or each step of the ramp that starts them (which sets their duration, so `--set
/// duration` would not change it). What settles, and the advice, depend on the kind.
fn short_runs(s: &Scenario) -> Vec<Finding> {
    let doc = yaml::from_written::<Value>(&s.text).unwrap_or(Value::Null);
    let mut out = Vec::new();
    for (i, w) in s.workloads.iter().enumerate() {
        let ramp = s.steps.iter().find_map(|st| match st.action {
            Action::Ramp { workload, every, .. } if workload == i => Some(every),
            _ => None,
        });
        // a workload that ends after its IO, with no duration to cap it, is judged on the
        // seconds it measured, after the run (`short-io`)
        let bound = w.bound();
        if bound.is_some_and(|b| !b.capped) {
            continue;
        }
        let (seconds, change) = match ramp {
            Some(every) => (every.as_secs(), format!("lengthen each step of its ramp ({})", ramp_var(&doc, &w.name))),
            None if timed(s) => (w.duration.as_secs(), stretch(s, w.duration.as_secs())),
            None if bound.is_some() => (w.duration.as_secs(), RUN_FOR_A_TIME.to_string()),
            None => (w.duration.as_secs(), "lengthen it (e.g. --set duration=5m)".to_string()),
        };
        if seconds >= STEADY_STATE_S {
            continue;
        }
        let per_step = if ramp.is_some() { " per step of its ramp" } else { "" };
        // its duration caps it: it ends when its IO is done, if that is sooner
        let measured = match bound_text(w) {
            Some(io) => format!("at most {seconds} s of measurement, less if its IO ({io}) is done sooner,"),
            None => format!("{seconds} s of measurement{per_step}"),
        };
        let settles = match w.program() {
            Some(p) => p.program().settles(),
            None => "flash garbage collection, caches and tiers settle over minutes",
        };
        out.push(Finding::about(
            &w.name,
            Severity::Info,
            "short-run",
            format!(
                "{measured} is short for steady state ({settles}): read it as a first look, and {change} for numbers \
                 to quote"
            ),
        ));
    }
    out
}

/// How to make a workload that ends after its IO run long enough: give it a time,
/// which a fio job file says with `time_based`.
const RUN_FOR_A_TIME: &str = "run it for a time (a fio job file: `time_based` with a `runtime` such as 5m; a \
     scenario: a `duration` without `loops`, `io_size` or `number_ios`), or give it far more IO (e.g. --set loops=100)";

/// How to make workload `w`, which ends by itself, run long enough: a program says how.
pub fn lengthen(w: &Workload) -> &'static str {
    w.program().and_then(|p| p.ends_after()).map_or(RUN_FOR_A_TIME, |(_, how)| how)
}

/// How much IO a workload that ends by itself does before it does: `4 MiB per
/// worker`, `2 x 1 MiB or 500 IOs per worker`; a working set known only once laid out
/// stays `one pass`; fio's own sections are fio's to bound. `None`: it runs its time.
pub fn bound_text(w: &Workload) -> Option<String> {
    let b = w.bound()?;
    if let Some((work, _)) = w.program().and_then(|p| p.ends_after()) {
        return Some(work.to_string());
    }
    if w.io().is_none() {
        return Some("as fio's size, io_size, loops or number_ios have it".into());
    }
    let pass = w.io().and_then(|io| io.size).filter(|_| b.io_size.is_none());
    let text = match (pass.and_then(|p| b.bytes(p)), b.number_ios) {
        (Some(bytes), None) => format!("{} per worker", Size(bytes).human()),
        (Some(bytes), Some(n)) => format!("{} or {n} IOs per worker", Size(bytes).human()),
        (None, _) => b.to_string().trim_start_matches("until ").to_string(),
    };
    Some(text)
}

/// A timeline with waits, stops or steps at set seconds: lengthening one workload's
/// duration would move it out of the phases the study compares.
fn timed(s: &Scenario) -> bool {
    s.steps.iter().any(|st| st.at.is_some() || matches!(st.action, Action::Wait(_) | Action::Stop { .. }))
}

/// How to lengthen a workload of a timed study to five minutes and keep its shape: its
/// whole timeline scaled (`--time-scale`, times the scale it already ran at).
fn stretch(s: &Scenario, seconds: u64) -> String {
    let factor = (300.0 / seconds.max(1) as f64).ceil() * s.time_scale.as_ref().map_or(1.0, |t| t.factor);
    let factor = (factor * 1000.0).round() / 1000.0;
    format!("lengthen the whole study, its shape kept (e.g. --time-scale {factor})")
}

/// How to lengthen the steps of `workload`'s ramp: `--set VAR=5m` when the scenario
/// writes its `every` as one variable (a built-in's `step`), else the key itself.
fn ramp_var(doc: &Value, workload: &str) -> String {
    fn key<'v>(v: &'v Value, k: &str) -> Option<&'v Value> {
        match v {
            Value::Mapping(m) => m.get(k),
            _ => None,
        }
    }
    let steps = match key(doc, "timeline") {
        Some(Value::Sequence(steps)) => steps.as_slice(),
        _ => &[],
    };
    steps
        .iter()
        .filter(|st| key(st, "ramp").and_then(Value::as_text).as_deref() == Some(workload))
        .find_map(|st| key(st, "every")?.as_text()?.strip_prefix("${")?.strip_suffix('}').map(str::to_string))
        .map_or_else(|| "its `every`, e.g. every: 5m".to_string(), |var| format!("e.g. --set {var}=5m"))
}

/// A Prometheus endpoint on an address other hosts can reach: it answers anyone, with
/// no authentication or TLS (the run's names, hosts and rates), and each client takes one
/// of its few connections.
fn exposed_endpoint(s: &Scenario, facts: &Facts) -> Option<Finding> {
    let addr = s.prometheus.as_deref().filter(|_| facts.endpoint_beyond_loopback)?;
    Some(Finding::run(
        Severity::Warning,
        "prometheus-exposed",
        format!(
            "the Prometheus endpoint at {addr} listens beyond loopback: anyone who can reach that port reads the \
             run's metrics (scenario, workload and host names, rates), without authentication or TLS, and can \
             hold its connections. Listen on 127.0.0.1 and let Prometheus reach it through an ssh tunnel or a \
             proxy, or firewall the port"
        ),
    ))
}

/// Bytes an appending workload writes, when its rate says.
fn write_volume(w: &Workload, io: &IoProfile) -> Option<u64> {
    let rate = io.rate_iops?;
    let volume = (rate * io.bs.mean() * (w.ramp + w.duration).as_secs_f64()) as u64;
    // a bounded appender writes its `io_size` (x `loops`) at most
    io.extend.then(|| volume.min(io.bound.and_then(|b| b.bytes(0)).unwrap_or(u64::MAX)))
}

/// Zones whose stride the working set cannot hold (`--set size=32m` on zones of 2 GiB
/// every 32 GiB): the walk never leaves the first zone, so every IO goes there.
fn one_zone(s: &Scenario, facts: &Facts) -> Vec<Finding> {
    let found = |(i, w): (usize, &Workload)| {
        let z = w.io()?.zones?;
        let set = facts.working_set.get(i).copied().flatten()?;
        let stride = z.range + z.skip;
        let cut = if z.range >= set { ", cut to the working set" } else { "" };
        (stride >= set).then(|| {
            Finding::about(
                &w.name,
                Severity::Info,
                "one-zone",
                format!(
                    "its working set of {} holds one of its zones ({} every {}): every IO goes to the first{cut}. \
                     A working set of at least {} holds two",
                    Size(set).human(),
                    Size(z.range).human(),
                    Size(stride).human(),
                    Size(stride + z.range).human()
                ),
            )
        })
    };
    s.workloads.iter().enumerate().filter_map(found).collect()
}

/// A workload that reads a file a `zero` step left zeroed (no prefill since): thin and
/// deduplicating storage answers reads of zero blocks without touching media.
fn reads_of_zeros(s: &Scenario, facts: &Facts) -> Vec<Finding> {
    let data_files = |w: usize| facts.data_files.get(w).cloned().unwrap_or_default();
    let mut zeroed: Vec<PathBuf> = Vec::new();
    let mut out = Vec::new();
    for step in &s.steps {
        match step.action {
            Action::Fill { workload, zero } => {
                for f in data_files(workload) {
                    zeroed.retain(|z| *z != f);
                    if zero {
                        zeroed.push(f);
                    }
                }
            }
            Action::Start { workload, .. } | Action::Ramp { workload, .. } => {
                let w = &s.workloads[workload];
                let reads = w.io().is_some_and(|io| io.rw.read_percent(io.rwmixread) > 0);
                if reads && data_files(workload).iter().any(|f| zeroed.contains(f)) {
                    out.push(Finding::about(
                        &w.name,
                        Severity::Warning,
                        "reads-zeros",
                        "reads a working set a `zero` step filled with zeros: thin or deduplicating storage returns \
                         zero blocks without reading media, so this measures zero detection. Add a `prefill` step \
                         before it"
                            .to_string(),
                    ));
                }
            }
            _ => {}
        }
    }
    out
}

/// The codes of the findings only a run can make (`after`); `fathom run` prints the
/// others as it starts, so its closing summary need not say them again.
const AFTER_RUN: [&str; 3] = ["depth-limits-rate", "generator-bound", "short-io"];

/// Whether a stored warning (`lint-` + code) is a finding `fathom run` printed before
/// the run began.
pub fn said_before_run(stored_code: &str) -> bool {
    stored_code.strip_prefix("lint-").is_some_and(|code| !AFTER_RUN.contains(&code))
}

/// What a run measured, for the findings only a run can make.
pub struct Measured {
    pub name: String,
    /// Operations per second asked (open loop) and achieved, in `unit` (IOPS, or a
    /// pgbench workload's TPS).
    pub rate: Option<f64>,
    pub iops: f64,
    pub unit: Throughput,
    pub mean_latency_s: f64,
    /// Operations the workload can have in flight: iodepth x workers (a pgbench
    /// client keeps one transaction in flight).
    pub concurrency: f64,
    pub workers: u32,
    /// Seconds of its measured window.
    pub seconds: f64,
    /// For a workload that ends after an amount of IO: how much ([`bound_text`]).
    pub bound: Option<String>,
    /// How to make it run long enough ([`lengthen`]).
    pub lengthen: &'static str,
    /// The busiest device's mean %util over the run, where devices were observed.
    pub device_busy_pct: Option<f64>,
    /// The kind of file whose definition its depth is (an imported X-Ray scenario or fio
    /// job file), where changing it would no longer be that study.
    pub defined_by: Option<&'static str>,
}

/// A device this busy (%util, mean over the run) is the limit: more IOs in flight would
/// only queue longer in it.
const SATURATED_PCT: f64 = 90.0;

/// How busy fathom's IO generator was over a run, as a share (1.0: all the time).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GeneratorBusy {
    /// The share of their lives the worker threads wanted a CPU (on one or waiting for
    /// one) for fathom's own code, not the kernel's: what the generator asked for,
    /// whatever other load let it have.
    Wanted(f64),
    /// Without the scheduler's figures: fathom's CPU time over the wall time and the
    /// cores its worker threads could use, which other load on the machine lowers.
    Cpu(f64),
}

impl GeneratorBusy {
    /// The share, whichever way it was measured.
    pub fn share(self) -> f64 {
        match self {
            GeneratorBusy::Wanted(share) | GeneratorBusy::Cpu(share) => share,
        }
    }
}

/// The observation (source `fathom`) under which a run keeps its [`GeneratorBusy`]
/// share in percent: the figure `generator-bound` is judged on.
pub const GENERATOR_BUSY: &str = "generator_busy_pct";

/// The share of the time at which the generator, not the storage, may be the limit.
pub const GENERATOR_BOUND: f64 = 0.9;

/// What `depth-limits-rate` says: the figures in fathom's units, and the change the
/// user can make without editing the file they were given (a fio job file, an X-Ray
/// scenario or fathom's own): `--set NAME.KEY`, which every kind of scenario takes.
fn depth_limits_rate(m: &Measured, rate: f64, needed: f64) -> String {
    use crate::metrics::format::{count, latency_us, rate_in, sig3};
    let figure = |v: f64| if v >= 100.0 { count(v) } else { sig3(v) };
    // a pgbench client keeps one transaction in flight; an IO worker its iodepth
    let what = if m.unit == Throughput::Tps { "transactions" } else { "IOs" };
    let change = match (m.device_busy_pct.filter(|b| *b >= SATURATED_PCT), m.defined_by) {
        // a deeper queue on a saturated device only waits longer
        (Some(busy), _) => {
            format!("The device was busy {busy:.0}% of the time (%util): the storage, not the depth, limits this rate")
        }
        // the depth is the study's own: a deeper queue would be another study
        (None, Some(kind)) => {
            format!("Its depth is the {kind}'s own: at that depth this storage does not deliver the rate it asks")
        }
        (None, None) if m.unit == Throughput::Tps => {
            format!("Raise its clients, e.g. --set {}.clients={}", m.name, needed.ceil())
        }
        (None, None) => {
            let depth = (needed / m.workers.max(1) as f64).ceil();
            format!("Raise its depth, e.g. --set {}.iodepth={depth}", m.name)
        }
    };
    format!(
        "{} at the measured {} mean latency needs {} {what} in flight (Little's law), but depth x workers \
         allows {}: it got {}. {change}",
        rate_in(rate, m.unit),
        latency_us(m.mean_latency_s * 1e6),
        figure(needed),
        count(m.concurrency),
        rate_in(m.iops, m.unit),
    )
}

/// Findings after a run: rates the depth cannot carry, and a generator that was the
/// bottleneck.
pub fn after(workloads: &[Measured], generator: Option<GeneratorBusy>) -> Vec<Finding> {
    let mut out = Vec::new();
    for m in workloads {
        let Some(rate) = m.rate else { continue };
        // Little's law: the rate needs rate x latency IOs in flight
        let needed = rate * m.mean_latency_s;
        if m.iops < 0.95 * rate && needed > 0.9 * m.concurrency {
            out.push(Finding::about(
                &m.name,
                Severity::Warning,
                "depth-limits-rate",
                depth_limits_rate(m, rate, needed),
            ));
        }
    }
    for m in workloads.iter().filter(|m| m.seconds < STEADY_STATE_S as f64) {
        let Some(io) = &m.bound else { continue };
        out.push(Finding::about(
            &m.name,
            Severity::Warning,
            "short-io",
            format!(
                "its IO ({io}) was done after {} s of measurement: too short for steady state, and too short to \
                 quote. For numbers to quote, {}",
                crate::metrics::format::sig3(m.seconds),
                m.lengthen
            ),
        ));
    }
    let busy = generator.map(|g| match g {
        GeneratorBusy::Wanted(share) => (share, "its worker threads wanted a CPU"),
        GeneratorBusy::Cpu(share) => (share, "fathom kept its cores busy"),
    });
    if let Some((busy, how)) = busy
        && busy >= GENERATOR_BOUND
    {
        out.push(Finding::run(
            Severity::Warning,
            "generator-bound",
            format!(
                "{how} {:.0}% of the time: the generator, not the storage, may have been the limit \
                 (as vioperf's CRC was). Use more jobs on more cores, or a lighter profile (crc, small blocks)",
                busy * 100.0
            ),
        ));
    }
    grouped(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{Rw, Scenario, Source};
    use std::time::Duration;

    fn scenario(body: &str) -> Scenario {
        Scenario::load(&Source { origin: "t".into(), text: body }, &[]).unwrap()
    }

    #[test]
    fn buffered_small_sets_short_runs_and_shallow_shared_queues_are_found() {
        let s = scenario(
            "name: t\nworkloads:\n  a: {target: [/tmp/x, /tmp/y, /tmp/z], rw: randread, direct: false, size: 1g, \
             iodepth: 2, duration: 10s}\n",
        );
        let facts = Facts {
            memory_bytes: Some(8 << 30),
            working_set: vec![Some(1 << 30)],
            free_bytes: vec![None],
            data_files: vec![Vec::new()],
            endpoint_beyond_loopback: false,
        };
        let codes: Vec<&str> = before(&s, &facts).iter().map(|f| f.code).collect();
        assert_eq!(codes, vec!["page-cache", "depth-across-targets", "short-run"]);
        let big = Facts { memory_bytes: Some(512 << 20), ..facts };
        assert!(!before(&s, &big).iter().any(|f| f.code == "page-cache"));
    }

    #[test]
    fn appending_beyond_free_space_and_reading_zeros_are_found() {
        let s = scenario(
            "name: t\nworkloads:\n  log: {target: /tmp, rw: write, bs: 1m, extend: true, rate_iops: 100, duration: 60s}\n  \
             r: {target: /tmp, rw: randread, size: 1g, duration: 60s}\ntimeline:\n  - zero: r\n  - start: log\n  - start: r\n",
        );
        let files = |w: &str| vec![PathBuf::from(format!("/tmp/fathom-{w}.dat"))];
        let facts = Facts {
            memory_bytes: None,
            working_set: vec![None, Some(1 << 30)],
            free_bytes: vec![Some(1 << 30), None],
            data_files: vec![files("log"), files("r")],
            endpoint_beyond_loopback: false,
        };
        let codes: Vec<&str> = before(&s, &facts).iter().map(|f| f.code).collect();
        assert_eq!(codes, vec!["write-volume", "reads-zeros"]);
        assert_eq!(s.workloads[0].io().unwrap().rw, Rw::Write);
        assert_eq!(s.workloads[0].duration, Duration::from_secs(60));
    }

    #[test]
    fn zones_the_working_set_holds_one_of_are_found() {
        let s = scenario(
            "name: t\nworkloads:\n  dss: {target: /tmp, rw: read, bs: 1m, size: 32m, zonesize: 2g, zoneskip: 30g, \
             duration: 60s}\n",
        );
        let facts = |set: u64| Facts {
            memory_bytes: None,
            working_set: vec![Some(set)],
            free_bytes: vec![None],
            data_files: vec![Vec::new()],
            endpoint_beyond_loopback: false,
        };
        let found = before(&s, &facts(32 << 20));
        assert_eq!(found.iter().map(|f| f.code).collect::<Vec<_>>(), ["one-zone"]);
        assert!(
            found[0].message.contains("32 MiB holds one of its zones (2 GiB every 32 GiB)"),
            "{}",
            found[0].message
        );
        assert!(found[0].message.contains("first, cut to the working set. A working set of at least 34 GiB"));
        assert!(before(&s, &facts(512 << 30)).is_empty(), "512 GiB holds 16 zones");
    }

    #[test]
    fn an_endpoint_beyond_loopback_is_found() {
        let s =
            scenario("name: t\nprometheus: '0.0.0.0:9464'\nworkloads:\n  w: {engine: null, rw: read, duration: 60s}\n");
        let facts = |beyond| Facts {
            memory_bytes: None,
            working_set: vec![None],
            free_bytes: vec![None],
            data_files: vec![Vec::new()],
            endpoint_beyond_loopback: beyond,
        };
        let codes = |beyond| before(&s, &facts(beyond)).iter().map(|f| f.code).collect::<Vec<_>>();
        assert_eq!(codes(true), vec!["prometheus-exposed"]);
        assert!(codes(false).is_empty());
    }

    /// A workload of `workers` at depth 4 each, asked `rate` per second.
    fn measured(name: &str, rate: f64, got: f64, mean_latency_s: f64, unit: Throughput, workers: u32) -> Measured {
        let concurrency = if unit == Throughput::Tps { workers } else { 4 * workers } as f64;
        Measured {
            name: name.into(),
            rate: Some(rate),
            iops: got,
            unit,
            mean_latency_s,
            concurrency,
            workers,
            seconds: 60.0,
            bound: None,
            lengthen: RUN_FOR_A_TIME,
            device_busy_pct: None,
            defined_by: None,
        }
    }

    #[test]
    fn a_rate_beyond_the_depth_and_a_busy_generator_are_found() {
        let short = measured("w", 10_000.0, 4_000.0, 0.001, Throughput::Iops, 1);
        let fine = measured("v", 1_000.0, 1_000.0, 0.001, Throughput::Iops, 1);
        let found = after(&[short, fine], Some(GeneratorBusy::Wanted(0.97)));
        let codes: Vec<&str> = found.iter().map(|f| f.code).collect();
        assert_eq!(codes, vec!["depth-limits-rate", "generator-bound"]);
        // figures in fathom's units, and the change the user can make to the file as run
        assert_eq!(
            found[0].message,
            "w: 10,000 IOPS at the measured 1.00 ms mean latency needs 10.0 IOs in flight (Little's law), but \
             depth x workers allows 4: it got 4,000 IOPS. Raise its depth, e.g. --set w.iodepth=10"
        );
        let slow = measured("oltp/db", 1_500.0, 600.0, 0.676310, Throughput::Iops, 4);
        let said = &after(&[slow], None)[0].message;
        assert!(said.contains(" 676 ms mean latency needs 1,014 IOs") && said.ends_with("--set oltp/db.iodepth=254"));
        // on a saturated device the advice is not to deepen the queue
        let busy =
            Measured { device_busy_pct: Some(97.4), ..measured("w", 10_000.0, 4_000.0, 0.001, Throughput::Iops, 1) };
        let said = &after(&[busy], None)[0].message;
        assert!(
            said.ends_with("The device was busy 97% of the time (%util): the storage, not the depth, limits this rate"),
            "{said}"
        );
        assert!(!said.contains("Raise"), "{said}");
        // an imported study's depth is its definition: no advice to change it
        let xray = Measured {
            defined_by: Some("X-Ray scenario"),
            ..measured("OLTP:db-oltp1", 1_000.0, 537.0, 0.588, Throughput::Iops, 1)
        };
        let said = &after(&[xray], None)[0].message;
        assert!(
            said.ends_with(
                "Its depth is the X-Ray scenario's own: at that depth this storage does not deliver the rate it asks"
            ),
            "{said}"
        );
        let pg = measured("db", 800.0, 400.0, 0.01, Throughput::Tps, 2);
        let said = &after(&[pg], None)[0].message;
        assert!(said.starts_with("db: 800 TPS at") && said.ends_with("Raise its clients, e.g. --set db.clients=8"));
        assert!(codes.iter().all(|c| !said_before_run(&format!("lint-{c}"))), "AFTER_RUN lists them");
        assert!(said_before_run("lint-short-run") && !said_before_run("engine-fallback"));
        assert!(after(&[], Some(GeneratorBusy::Cpu(0.5))).is_empty());
    }

    /// A workload that ends after its IO is promised no more than that IO: lint says its
    /// bound before the run, and after it how long that IO measured.
    #[test]
    fn a_bounded_workload_is_judged_by_its_io_and_then_its_seconds() {
        let s = scenario("name: b\nworkloads:\n  job: {target: /tmp, size: 4m, rw: read, loops: 1, duration: 3s}\n");
        let facts = Facts {
            memory_bytes: None,
            working_set: vec![None],
            free_bytes: vec![None],
            data_files: vec![Vec::new()],
            endpoint_beyond_loopback: false,
        };
        let found = before(&s, &facts);
        let short = found.iter().find(|f| f.code == "short-run").expect("short-run");
        assert!(
            short
                .message
                .starts_with("job: at most 3 s of measurement, less if its IO (4 MiB per worker) is done sooner"),
            "{}",
            short.message
        );
        let mut m = measured("job", 0.0, 0.0, 0.0, Throughput::Iops, 1);
        m.rate = None;
        m.seconds = 0.1;
        m.bound = Some("4 MiB per worker".into());
        let said = after(std::slice::from_ref(&m), None);
        assert_eq!(said.iter().map(|f| f.code).collect::<Vec<_>>(), ["short-io"]);
        assert!(
            said[0].message.starts_with("job: its IO (4 MiB per worker) was done after 0.10 s of measurement"),
            "{}",
            said[0].message
        );
        assert!(!said_before_run("lint-short-io"));
        m.seconds = STEADY_STATE_S as f64;
        assert!(after(&[m], None).is_empty(), "long enough");
    }

    /// The rule on given figures, whatever a busy machine would let a run measure.
    #[test]
    fn the_generator_is_bound_from_the_threshold_on_either_figure() {
        let codes = |g| after(&[], g).iter().map(|f| f.code).collect::<Vec<_>>();
        for busy in [GeneratorBusy::Wanted, GeneratorBusy::Cpu] {
            assert_eq!(codes(Some(busy(GENERATOR_BOUND))), ["generator-bound"]);
            assert_eq!(codes(Some(busy(1.0))), ["generator-bound"]);
            assert!(codes(Some(busy(GENERATOR_BOUND - 0.01))).is_empty());
        }
        assert!(codes(None).is_empty(), "no figure, no finding");
        let said = after(&[], Some(GeneratorBusy::Wanted(0.97)));
        assert!(said[0].message.starts_with("its worker threads wanted a CPU 97% of the time"), "{}", said[0].message);
        let said = after(&[], Some(GeneratorBusy::Cpu(0.93)));
        assert!(said[0].message.starts_with("fathom kept its cores busy 93% of the time"), "{}", said[0].message);
    }
}
