//! The analysis of a stored run, as `show` and the report present it: Little's law per
//! workload, steady state and settling per phase, each workload's change from its
//! first phase (interference), and for runs of several phases the latency–throughput
//! curve with its knee and a Universal Scalability Law fit.

use super::checkpoints::Checkpoints;
use super::measured::{PhaseSummary, WorkloadSummary};
use super::views::{self, InterferenceRow, Sweep};
use crate::analysis::interference::{self, Change, Figures};
use crate::analysis::knee::{self, CurvePoint, Knee};
use crate::analysis::noise;
use crate::analysis::steady_state::{self, Steady};
use crate::analysis::usl::{self, Point, Usl};
use crate::error::Result;
use crate::metrics::littles_law;
use crate::metrics::summary::Throughput;
use crate::store::read::{PhaseFacts, Setting};
use crate::store::{RunRow, Store};
use serde::Serialize;

/// Per-second values are averaged into rounds of this many seconds for steady state.
pub const ROUND_S: usize = 5;

#[derive(Debug, Serialize)]
pub struct Analysis {
    pub littles_law: Vec<Little>,
    pub phases: Vec<PhaseAnalysis>,
    /// One point per phase, when the phases are a concurrency curve (see
    /// [`curve_precondition`]).
    pub curve: Option<Curve>,
    /// Why there is no curve (`phases differ in block size`), so a reader of `--json`
    /// knows it was not forgotten.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub curve_reason: Option<String>,
    /// One row per phase when the phases are a sweep of what is done (block size,
    /// working set, distribution, op), with its figure of merit: see [`super::views`].
    pub sweep: Option<Sweep>,
    /// When workloads join or leave: each one's first phase against those it shared.
    pub interference: Vec<InterferenceRow>,
    /// The scenario's `compare:` workloads, each against the first.
    pub compared: Vec<Compared>,
    /// Each database workload's checkpoints against its rate, and its rate's variation
    /// per phase (see docs/databases.md).
    pub checkpoints: Vec<Checkpoints>,
}

/// One workload of `compare:` against the first (the baseline), over their measured
/// windows.
#[derive(Debug, Serialize)]
pub struct Compared {
    pub workload: String,
    pub baseline: String,
    pub figures: Figures,
    pub baseline_figures: Figures,
    pub change: Change,
    /// Each change judged as `fathom compare` judges a run against another: better or
    /// worse only beyond the noise of the two workloads' per-bin samples, else `~`.
    pub verdict: Verdicts,
}

/// [`Compared`]'s figures judged against the noise, named as [`Figures`]' are.
#[derive(Debug, Serialize)]
pub struct Verdicts {
    pub iops: noise::Change,
    pub p50_us: noise::Change,
    pub p99_us: noise::Change,
}

/// A workload's per-bin samples over its measured window, as `fathom compare` takes
/// them (whole bins of the report's width): its rate over every op but syncs, and the
/// latency of its busiest op, the ops [`Figures`] are of.
struct Samples {
    iops: Vec<f64>,
    p50_us: Vec<f64>,
    p99_us: Vec<f64>,
}

impl Samples {
    fn of(store: &Store, run: i64, w: &WorkloadSummary, bin: i64) -> Result<Samples> {
        let (from, to) = w.workload.measured_window();
        let scan = store.windows(run, w.workload.idx, &[(from as i64, to.ceil() as i64)], Some(bin))?;
        let busiest = w.ops.iter().filter(|o| o.op != "sync").max_by_key(|o| o.ops).map(|o| o.op);
        let whole: Vec<_> = scan.bins.iter().filter(|b| b.t as f64 >= from && (b.t + bin) as f64 <= to).collect();
        let mut ops: std::collections::BTreeMap<i64, u64> =
            super::bins::whole_bins(from, to, bin).map(|t| (t, 0)).collect();
        for b in whole.iter().filter(|b| b.op.as_str() != "sync") {
            *ops.entry(b.t).or_default() += b.ops;
        }
        let latency = |f: fn(&crate::store::Bin) -> f64| -> Vec<f64> {
            whole.iter().filter(|b| Some(b.op.as_str()) == busiest).map(|b| f(b)).filter(|v| v.is_finite()).collect()
        };
        Ok(Samples {
            iops: ops.into_values().map(|n| n as f64 / bin as f64).collect(),
            p50_us: latency(|b| b.p50_us),
            p99_us: latency(|b| b.p99_us),
        })
    }
}

/// The workloads a run's scenario names in `compare:` (runs stored before the key
/// existed have none).
pub fn compare_list(run: &RunRow) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Compared {
        compare: Option<Vec<String>>,
    }
    stored::<Compared>(run).and_then(|d| d.compare).unwrap_or_default()
}

/// The scenario's `question:` as the run read it (None for runs stored before the key
/// existed).
pub fn question(run: &RunRow) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Asked {
        question: Option<String>,
    }
    stored::<Asked>(run).and_then(|d| d.question)
}

/// Keys of the scenario as run `run` read it, into `T` (its other keys ignored): the
/// text after its variables and `--set`s, so the read side says what the run was judged
/// by. A run stored before that text was kept has its variables take their default
/// values (`[${dir}/a]` is no YAML). None when the text no longer reads.
pub fn stored<T: serde::de::DeserializeOwned>(run: &RunRow) -> Option<T> {
    let text = match &run.resolved_text {
        Some(text) => text.clone(),
        None => crate::scenario::vars::substitute("scenario", &run.scenario_text, &mut Vec::new()).ok()?.0,
    };
    crate::scenario::yaml::from_str::<T>("scenario", &text).ok()
}

/// A workload's figures over its measured window.
fn figures_of(w: &WorkloadSummary) -> Option<Figures> {
    Figures::of(&w.ops, w.workload.rate_iops, w.timed_op())
}

fn compared(store: &Store, run: i64, workloads: &[WorkloadSummary], names: &[String]) -> Result<Vec<Compared>> {
    let find = |name: &str| workloads.iter().find(|w| w.workload.name == name).and_then(|w| Some((w, figures_of(w)?)));
    let Some((base, base_figures)) = names.first().and_then(|n| find(n)) else { return Ok(Vec::new()) };
    // the bins `fathom compare` would judge this run in
    let bin = super::bins::bin_for(workloads.iter().map(|w| w.workload.end_t).max().unwrap_or(0));
    let before = Samples::of(store, run, base, bin)?;
    let mut out = Vec::new();
    for (w, figures) in names[1..].iter().filter_map(|n| find(n)) {
        let after = Samples::of(store, run, w, bin)?;
        out.push(Compared {
            workload: w.workload.name.clone(),
            baseline: base.workload.name.clone(),
            figures,
            baseline_figures: base_figures,
            change: interference::change(&base_figures, &figures),
            verdict: Verdicts {
                iops: noise::Change::judge(&before.iops, &after.iops, true),
                p50_us: noise::Change::judge(&before.p50_us, &after.p50_us, false),
                p99_us: noise::Change::judge(&before.p99_us, &after.p99_us, false),
            },
        });
    }
    Ok(out)
}

/// Little's law for one workload: the concurrency it was configured for (closed loop)
/// or that its rate implies at the measured latency (open loop), against N = X × R.
#[derive(Debug, Serialize)]
pub struct Little {
    pub workload: String,
    pub open_loop: bool,
    /// depth × workers (closed loop), or rate × mean latency (open loop).
    pub expected: f64,
    pub measured: f64,
    /// (measured − expected) / expected, in percent.
    pub gap_percent: f64,
    /// A closed-loop gap over 10%: time lost outside the device, or a measurement error.
    pub flagged: bool,
}

#[derive(Debug, Serialize)]
pub struct PhaseAnalysis {
    pub phase: String,
    pub workload: String,
    /// When IOPS reached steady state (SNIA rule, 5 s rounds), None if they did not.
    pub steady_state: Option<Steady>,
    /// Seconds of the workload in the phase: under 5 rounds the rule cannot be met.
    pub seconds: f64,
    /// Seconds per steady-state round: `ROUND_S`, or the round a sweep stopped the
    /// workload by (its profile's `stop_when_steady`), so both verdicts agree.
    pub round_s: usize,
    /// Seconds until latency reached and stayed within 10% of its final level.
    pub settle_s: Option<usize>,
    /// Change from the workload's first phase (None in that phase).
    pub change: Option<Change>,
}

impl PhaseAnalysis {
    /// Steady state as a reader wants it: `at 35 s`, `too short` (under 5 rounds), or
    /// `not reached`.
    pub fn steady_text(&self) -> String {
        match self.steady_state {
            Some(st) => format!("at {:.0} s", st.at_s),
            None if self.seconds < (steady_state::WINDOW * self.round_s) as f64 => "too short".into(),
            None => "not reached".into(),
        }
    }

    /// The change from the workload's first phase: `IOPS -12%, p99 +40%`, or nothing.
    pub fn change_text(&self) -> String {
        self.change.map(|c| format!("IOPS {:+.0}%, p99 {:+.0}%", c.iops_percent, c.p99_percent)).unwrap_or_default()
    }
}

#[derive(Debug, Serialize)]
pub struct Curve {
    /// What the throughput is counted in: IOPS, TPS (pgbench) or Gbit/s (iperf3).
    pub unit: Throughput,
    /// Per phase: configured concurrency, throughput in `unit`, mean latency (µs; None
    /// where no latency is measured per op: network streams).
    pub points: Vec<(f64, f64, Option<f64>)>,
    /// The index in `points` of the lowest-concurrency point (the first of equals): what a
    /// one-point test would have reported. The terminal, `--json` and the report all mark
    /// this one.
    pub you_are_here: usize,
    pub knee: Option<Knee>,
    /// The USL fitted to the points, with its verdict (good, poor, no meaningful fit).
    pub usl: Usl,
    /// What N, the concurrency of each point, counts, in one line.
    pub counts: String,
    /// Per point, its throughput over what the lowest-concurrency point's would give at
    /// its concurrency (1 is perfect scaling; one node's VMs joined by three more at 0.8:
    /// the cluster does 3.2 times one node's).
    pub efficiency: Vec<f64>,
}

impl Curve {
    /// The index in `points` of the highest-concurrency point (the first of equals):
    /// where the terminal and the report's cards quote the scaling efficiency.
    pub fn highest(&self) -> usize {
        (0..self.points.len()).fold(0, |top, i| if self.points[i].0 > self.points[top].0 { i } else { top })
    }
}

pub fn analyze(
    store: &Store,
    run: i64,
    workloads: &[WorkloadSummary],
    phases: &[PhaseSummary],
    compare: &[String],
) -> Result<Analysis> {
    let littles = workloads.iter().filter_map(|w| little(w, phases)).collect();
    let checkpoints = super::checkpoints::analyze(store, run, workloads, phases)?;
    let phases = studied(phases);
    let mut per_phase = Vec::new();
    let mut firsts: Vec<(String, Figures)> = Vec::new();
    // per phase, its per-second throughput over all its workloads: the noise of its point
    let mut spreads = Vec::new();
    let mut latencies = std::collections::BTreeMap::new();
    for (k, p) in phases.iter().enumerate() {
        let mut per_second: std::collections::BTreeMap<i64, f64> = Default::default();
        for w in workloads {
            let Some(figures) =
                Figures::of(p.ops.iter().filter(|o| o.workload == w.workload.name), w.workload.rate_iops, w.timed_op())
            else {
                continue;
            };
            let change = match firsts.iter().find(|(n, _)| *n == w.workload.name) {
                Some((_, first)) => Some(interference::change(first, &figures)),
                None => {
                    firsts.push((w.workload.name.clone(), figures));
                    None
                }
            };
            let (from, to) = w.workload.measured_window();
            let end = p.phase.end_t.map(|e| e as f64).unwrap_or(to);
            let (from, to) = ((p.phase.start_t as f64).max(from) as i64, end.min(to).floor() as i64);
            let seconds = store.per_second(run, w.workload.idx, from, to)?;
            for &(t, ops, _) in &seconds {
                *per_second.entry(t).or_default() += ops as f64;
            }
            let iops_series: Vec<f64> = seconds.iter().map(|s| s.1 as f64).collect();
            let round_s = w.workload.profile["stop_when_steady"]["round_s"].as_u64().map_or(ROUND_S, |r| r as usize);
            let latency: Vec<f64> = seconds.iter().filter(|s| s.1 > 0).map(|s| s.2 as f64 / s.1 as f64).collect();
            per_phase.push(PhaseAnalysis {
                phase: p.phase.label.clone(),
                workload: w.workload.name.clone(),
                steady_state: steady_state::reached(&steady_state::rounds(&iops_series, round_s), round_s as f64),
                seconds: (to - from) as f64,
                round_s,
                settle_s: interference::time_to_settle(&latency),
                change,
            });
            latencies.insert((k, w.workload.name.clone()), latency);
        }
        spreads.push(std_dev(&per_second.into_values().collect::<Vec<_>>()));
    }
    let (curve, curve_reason) = match curve(workloads, phases, &spreads) {
        Ok(c) => (Some(c), None),
        Err(reason) => (None, Some(reason)),
    };
    let (sweep, interference) = views::build(store, run, workloads, phases, &latencies, ROUND_S)?;
    Ok(Analysis {
        littles_law: littles,
        phases: per_phase,
        curve,
        curve_reason,
        sweep,
        interference,
        compared: compared(store, run, workloads, compare)?,
        checkpoints,
    })
}

fn little(w: &WorkloadSummary, phases: &[PhaseSummary]) -> Option<Little> {
    let ops: Vec<_> = w.ops.iter().filter(|o| o.op != "sync").collect();
    let n: u64 = ops.iter().map(|o| o.ops).sum();
    // a fio job run as written: its depth and think time are the file's, not known here;
    // ops counted without a latency have no time in flight to compare
    // and ops run once each (a TPC-H stream's queries, cut at the phase's end) have no
    // steady number in flight
    if n == 0 || w.stored.as_written || !ops.iter().any(|o| o.timed()) || !w.rated() {
        return None;
    }
    let measured: f64 = ops.iter().map(|o| o.littles_n).sum();
    let mean_s = ops.iter().map(|o| o.latency.mean_us * o.ops as f64).sum::<f64>() / n as f64 / 1e6;
    let (open_loop, expected) = match w.workload.rate_iops {
        Some(rate) => (true, littles_law::concurrency(rate, mean_s)),
        None => (false, configured(w, phases)),
    };
    let gap_percent = if expected > 0.0 { (measured - expected) / expected * 100.0 } else { 0.0 };
    Some(Little {
        workload: w.workload.name.clone(),
        open_loop,
        expected,
        measured,
        gap_percent,
        flagged: !open_loop && gap_percent.abs() > littles_law::TOLERANCE * 100.0,
    })
}

/// IOs in flight a closed-loop workload was configured for over its window: depth ×
/// workers, averaged over its phases when a ramp changed the workers.
fn configured(w: &WorkloadSummary, phases: &[PhaseSummary]) -> f64 {
    let (mut weighted, mut seconds) = (0.0, 0.0);
    for p in phases {
        if let Some(o) = p.ops.iter().find(|o| o.workload == w.workload.name) {
            weighted += in_flight(p, w) * o.seconds;
            seconds += o.seconds;
        }
    }
    if seconds > 0.0 { weighted / seconds } else { w.concurrency as f64 }
}

/// IOs `w` was configured to keep in flight in phase `p`: its depth × the workers that
/// ran there (a ramp's phases have fewer than planned).
fn in_flight(p: &PhaseSummary, w: &WorkloadSummary) -> f64 {
    let workers = p.facts.ran.iter().find(|r| r.idx == w.workload.idx).map(|r| r.workers).unwrap_or(w.workload.workers);
    w.stored.iodepth as f64 * workers as f64
}

/// Sample standard deviation, None under two values.
fn std_dev(values: &[f64]) -> Option<f64> {
    let k = values.len() as f64;
    let mean = values.iter().sum::<f64>() / k;
    (values.len() >= 2).then(|| (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (k - 1.0)).sqrt())
}

/// Phases shorter than this at the end of a run, where workloads end one after
/// another, are its tail: seconds of winding down, not steps of the study.
const TAIL_S: i64 = 3;

/// The phases a study compares: all but the tail, the last phases that only lose
/// workloads and last under [`TAIL_S`] seconds each.
fn studied(phases: &[PhaseSummary]) -> &[PhaseSummary] {
    let mut n = phases.len();
    while n > 1 {
        let p = &phases[n - 1];
        let short = p.phase.end_t.is_some_and(|end| end - p.phase.start_t < TAIL_S);
        let ending = !p.facts.differs.is_empty() && p.facts.differs.iter().all(|d| d.setting == Setting::Removed);
        if !(short && ending) {
            break;
        }
        n -= 1;
    }
    &phases[..n]
}

/// Phases with IO a curve needs: a knee and a fit need a shape, not a line.
const MIN_CURVE_POINTS: usize = 3;

/// Whether a run's phases are points of one concurrency curve: steps of one workload
/// profile that differ from phase to phase only in concurrency (depth, jobs, workers,
/// hosts, a driver's clients: [`crate::store::read::Difference::is_concurrency`]).
/// Otherwise a knee or a USL fit would read a change of block size or op mix as a
/// change of load; the error is the reason, naming the first other setting that differs
/// (`phases differ in block size`). Such phases get a view of their own instead
/// ([`super::views`]).
pub fn curve_precondition<'a>(phases: impl IntoIterator<Item = &'a PhaseFacts>) -> std::result::Result<(), String> {
    match phases.into_iter().flat_map(|f| &f.differs).find(|d| !d.is_concurrency()) {
        None => Ok(()),
        Some(d) if matches!(d.setting, Setting::Added | Setting::Removed) => {
            Err("workloads are added or removed between phases".to_string())
        }
        Some(d) => Err(format!("phases differ in {}", d.name())),
    }
}

/// The latency–throughput curve over phases, when they meet [`curve_precondition`] and
/// three or more had IO, else why not; `spreads`: per phase, the standard deviation of
/// its per-second throughput, which the USL's residuals are judged by.
pub fn curve(
    workloads: &[WorkloadSummary],
    phases: &[PhaseSummary],
    spreads: &[Option<f64>],
) -> std::result::Result<Curve, String> {
    curve_precondition(phases.iter().map(|p| &p.facts))?;
    let mut points = Vec::new();
    let mut noise = Vec::new();
    let mut unit = Throughput::Iops;
    for (p, spread) in phases.iter().zip(spreads) {
        let ops: Vec<_> = p.ops.iter().filter(|o| o.op != "sync" && o.rate() > 0.0).collect();
        let Some(first) = ops.first() else { continue };
        // a phase's ops share a unit (the precondition keeps one workload profile)
        unit = first.unit;
        let x: f64 = ops.iter().map(|o| o.rate()).sum();
        let n_ops: u64 = ops.iter().map(|o| o.ops).sum();
        let mean = (unit.has_latency() && n_ops > 0)
            .then(|| ops.iter().map(|o| o.latency.mean_us * o.ops as f64).sum::<f64>() / n_ops as f64);
        let n: f64 = workloads
            .iter()
            .filter(|w| ops.iter().any(|o| o.workload == w.workload.name))
            .map(|w| in_flight(p, w))
            .sum();
        points.push((n, x, mean));
        noise.push(*spread);
    }
    if points.len() < MIN_CURVE_POINTS {
        return Err(format!("fewer than {MIN_CURVE_POINTS} phases with IO"));
    }
    // a knee and "you are here" are points on a line of load: one concurrency has none
    let mut distinct: Vec<f64> = points.iter().map(|p| p.0).collect();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    if distinct.len() < 2 {
        return Err(format!(
            "every phase runs at one concurrency ({}): a curve needs at least two",
            distinct.first().copied().unwrap_or_default()
        ));
    }
    let you_are_here = (0..points.len()).fold(0, |low, i| if points[i].0 < points[low].0 { i } else { low });
    // a knee needs a latency at every point
    let latencies: Option<Vec<CurvePoint>> = points.iter().map(|&(_, x, r)| r.map(|r| CurvePoint { x, r })).collect();
    let knee = latencies.and_then(|l| knee::find(&l));
    let usl =
        usl::fit(&points.iter().zip(noise).map(|(&(n, x, _), spread)| Point { n, x, spread }).collect::<Vec<_>>());
    let (n0, x0, _) = points[you_are_here];
    let efficiency =
        points.iter().map(|&(n, x, _)| if n0 > 0.0 && x0 > 0.0 { x / x0 / (n / n0) } else { 0.0 }).collect();
    let joined = phases.iter().flat_map(|p| &p.facts.differs).any(|d| d.like.is_some());
    // the program's own word for its sessions (sysbench's threads), as its users say it
    let program = workloads.first().and_then(|w| crate::scenario::program::find(&w.stored.engine));
    let sessions = program.and_then(|p| p.concurrency().first().copied());
    let counts = counted(unit, sessions, joined);
    Ok(Curve { unit, points, you_are_here, knee, usl, counts, efficiency })
}

/// What a curve's N counts, by the unit of its throughput (transactions: the program's
/// `sessions`, clients unless it names them); `joined` when like workloads joined (or
/// left) from phase to phase, summed over them.
fn counted(unit: Throughput, sessions: Option<&str>, joined: bool) -> String {
    let what = match unit {
        Throughput::Iops => "IOs in flight, workers x depth",
        Throughput::Tps => sessions.unwrap_or("clients"),
        Throughput::Gbits => "parallel streams",
    };
    match joined {
        true => format!("{what}, summed over the workloads running (each one joining is more of the same load)"),
        false => what.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::read::Difference;
    use serde_json::Value;

    /// A phase whose only facts are these settings differing from the phase before.
    fn phase(settings: &[(Setting, Option<&str>)]) -> PhaseFacts {
        let differs = settings
            .iter()
            .map(|(setting, key)| Difference {
                setting: setting.clone(),
                workload: "w".into(),
                key: key.map(str::to_string),
                before: Value::Null,
                after: Value::Null,
                like: None,
            })
            .collect();
        PhaseFacts { ran: Vec::new(), differs }
    }

    #[test]
    fn phases_that_differ_only_in_concurrency_make_a_curve() {
        let phases = [
            phase(&[]),
            phase(&[(Setting::Depth, None)]),
            phase(&[(Setting::Workers, None), (Setting::Hosts, None)]),
            phase(&[(Setting::Jobs, None)]),
            // pgbench's clients, spread over more threads
            phase(&[(Setting::Workers, None), (Setting::Other, Some("clients")), (Setting::Other, Some("threads"))]),
        ];
        assert_eq!(curve_precondition(&phases), Ok(()));
    }

    #[test]
    fn the_reason_names_the_first_other_setting_that_differs() {
        let cases = [
            (
                vec![(Setting::Depth, None), (Setting::BlockSize, None), (Setting::Rw, None)],
                "phases differ in block size",
            ),
            (vec![(Setting::Rw, None)], "phases differ in op mix"),
            (vec![(Setting::Rate, None)], "phases differ in rate"),
            (vec![(Setting::Other, Some("fsync_every"))], "phases differ in fsync_every"),
            (vec![(Setting::Added, None)], "workloads are added or removed between phases"),
            (vec![(Setting::Removed, None)], "workloads are added or removed between phases"),
        ];
        for (settings, reason) in cases {
            let phases = [phase(&[]), phase(&[(Setting::Workers, None)]), phase(&settings)];
            assert_eq!(curve_precondition(&phases), Err(reason.to_string()), "{settings:?}");
        }
    }
}
