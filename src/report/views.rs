//! The view that answers a run whose phases are not a concurrency curve
//! ([`super::analysis::curve_precondition`]): a sweep of what is done (block size,
//! working set, access distribution, op) as a table of the varied setting against IOPS,
//! MB/s and latency, with the figure of merit its kind of study is judged by; or, when
//! workloads join and leave, the before-vs-during table of each workload that ran in
//! both. A knee or a USL fit reads such phases as changes of load; these views read them
//! as what they are. Which settings vary comes from the store's typed
//! [`differences`](crate::store::read::differences), never from phase labels.

use super::measured::{PhaseSummary, WorkloadSummary};
use crate::analysis::interference::{self, Change, Figures, Ratio};
use crate::analysis::steady_state;
use crate::error::Result;
use crate::metrics::summary::Throughput;
use crate::scenario::units::Size;
use crate::store::Store;
use crate::store::read::{Difference, PhaseFacts, Setting};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// vioperf's MB/s per core: below this the storage cannot feed the database.
pub const PER_CORE_MINIMUM: f64 = 20.0;
/// vioperf's MB/s per core it recommends.
pub const PER_CORE_RECOMMENDED: f64 = 40.0;

/// Phases with IO a sweep needs: one is a measurement, not a comparison.
const MIN_SWEEP_ROWS: usize = 2;

/// A sweep: one row per phase with IO, each the one workload that ran in it.
#[derive(Debug, Serialize)]
pub struct Sweep {
    /// The settings that vary from phase to phase, as a reader names them: `block size`;
    /// `op mix, block size, depth`.
    pub setting: String,
    /// One per varied setting: the columns each row's `values` fill.
    pub columns: Vec<String>,
    pub rows: Vec<SweepRow>,
    /// The figure of merit of this kind of sweep, which its rows carry.
    pub merit: Merit,
    /// What each row's `iops` counts: IOPS, or TPS for pgbench's transactions.
    pub unit: Throughput,
}

/// What a kind of sweep is judged by, besides its rates and latency.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Merit {
    /// Rates and latency are the answer (four-corners, hotspot).
    Rates,
    /// Response time (mean latency) against working-set size, rows from the smallest
    /// set: the seek sweep of the field notes' SATA-vs-SAS table.
    ResponseTime,
    /// Seconds until latency settles, per block size: an ILM warm-up.
    Settle,
    /// MB/s per core of the host against vioperf's 20 (minimum) and 40 (recommended).
    PerCore,
}

/// One phase of a sweep: the value of each varied setting and what was measured.
#[derive(Debug, Serialize)]
pub struct SweepRow {
    pub phase: String,
    pub workload: String,
    /// The value of each of [`Sweep::columns`] in this phase (`16k`, `64m`, `randread`).
    pub values: Vec<String>,
    pub iops: f64,
    pub mb_per_s: f64,
    /// Latency of the phase's busiest op (reads or writes), as the interference figures.
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p99_9_us: f64,
    /// Whether that op was timed (HammerDB's transactions are counted, not timed): its
    /// latency is then none, not 0.
    pub timed: bool,
    /// With [`Merit::Settle`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settle: Option<Settle>,
    /// With [`Merit::PerCore`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_core: Option<PerCore>,
}

/// When a phase's per-second latency became steady by the SNIA rule
/// ([`steady_state`]), in rounds short enough that a phase holds two windows of them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Settle {
    pub round_s: usize,
    /// Seconds of the phase with latency.
    pub seconds: usize,
    /// Seconds from the phase's start to the first steady window; None: it did not
    /// settle (or the phase was too short to tell, see [`Settle::text`]).
    pub steady_from_s: Option<usize>,
}

impl Settle {
    /// Rounds of at most `max_round_s` seconds (the SNIA 5 s), shorter for a short
    /// phase so that two windows fit: a 12 s phase is judged in 1 s rounds.
    pub fn of(latency: &[f64], max_round_s: usize) -> Settle {
        let round_s = (latency.len() / (2 * steady_state::WINDOW)).clamp(1, max_round_s.max(1));
        let rounds = steady_state::rounds(latency, round_s);
        let steady = steady_state::reached(&rounds, round_s as f64);
        Settle { round_s, seconds: latency.len(), steady_from_s: steady.map(|s| s.first_round * round_s) }
    }

    /// `3 s`, `did not settle`, or `too short` (fewer seconds than one window of rounds).
    pub fn text(&self) -> String {
        match self.steady_from_s {
            Some(s) => format!("{s} s"),
            None if self.seconds < steady_state::WINDOW * self.round_s => "too short".into(),
            None => "did not settle".into(),
        }
    }
}

/// vioperf's figure of merit for one test.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PerCore {
    /// MB/s over the workers that ran the test (vioperf runs a thread per core, which
    /// `jobs: cores` does).
    pub mb_per_s_per_core: f64,
    /// The cores (workers, a thread each) that ran the test.
    pub cores: f64,
    /// Cores fathom itself kept busy in the phase (its CRC and IO), when observed.
    pub fathom_cores: Option<f64>,
    pub verdict: PerCoreVerdict,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PerCoreVerdict {
    BelowMinimum,
    Minimum,
    Recommended,
}

impl PerCore {
    pub fn of(mb_per_s: f64, cores: f64, fathom_cores: Option<f64>) -> PerCore {
        let per_core = mb_per_s / cores.max(1.0);
        let verdict = match per_core {
            v if v >= PER_CORE_RECOMMENDED => PerCoreVerdict::Recommended,
            v if v >= PER_CORE_MINIMUM => PerCoreVerdict::Minimum,
            _ => PerCoreVerdict::BelowMinimum,
        };
        PerCore { mb_per_s_per_core: per_core, cores: cores.max(1.0), fathom_cores, verdict }
    }

    /// `pass: >= 40 recommended`, `pass: >= 20 minimum`, `FAIL: < 20 minimum`.
    pub fn verdict_text(&self) -> String {
        match self.verdict {
            PerCoreVerdict::BelowMinimum => format!("FAIL: < {PER_CORE_MINIMUM} minimum"),
            PerCoreVerdict::Minimum => format!("pass: >= {PER_CORE_MINIMUM} minimum"),
            PerCoreVerdict::Recommended => format!("pass: >= {PER_CORE_RECOMMENDED} recommended"),
        }
    }
}

/// One workload in a phase where others joined (or left) against its first phase.
#[derive(Debug, Serialize)]
pub struct InterferenceRow {
    pub workload: String,
    /// The workload's first phase with IO.
    pub before: String,
    /// A later phase in which a different set of workloads ran with it.
    pub during: String,
    /// The workloads that ran with it during and not before.
    pub with: Vec<String>,
    pub before_figures: Figures,
    pub during_figures: Figures,
    /// In percent of before.
    pub change: Change,
    /// During over before.
    pub ratio: Ratio,
}

/// A setting as the sweep's columns tell them apart: a [`Setting`] and, for another
/// key of the profile, that key.
type Column = (Setting, Option<String>);

/// The columns of a sweep over `phases` (all of the run's, in order) and each phase's
/// value of each, or why the phases are not a sweep: workloads join or leave (the
/// interference view answers those), or only concurrency differs (the curve does).
pub fn sweep_precondition(phases: &[&PhaseFacts]) -> std::result::Result<Vec<(Column, Vec<Value>)>, String> {
    let differs = || phases.iter().flat_map(|p| &p.differs);
    if differs().any(|d| matches!(d.setting, Setting::Added | Setting::Removed)) {
        return Err("workloads are added or removed between phases".into());
    }
    if phases.iter().any(|p| p.ran.len() > 1) {
        return Err("phases run several workloads at once".into());
    }
    if differs().all(Difference::is_concurrency) {
        return Err("phases do not differ in what is done".into());
    }
    let mut columns: Vec<(Column, Vec<Value>)> = Vec::new();
    for d in differs() {
        let column = (d.setting.clone(), d.key.clone());
        if columns.iter().any(|(c, _)| *c == column) {
            continue;
        }
        // the value before its first change holds from the first phase; each change after
        let mut value = d.before.clone();
        let values = phases
            .iter()
            .map(|p| {
                if let Some(change) = p.differs.iter().find(|x| x.setting == column.0 && x.key == column.1) {
                    value = change.after.clone();
                }
                value.clone()
            })
            .collect();
        columns.push((column, values));
    }
    Ok(columns)
}

/// A setting's stored value as a reader writes it: `16k`, `64m`, `randrw 70% read`,
/// `whole file`, `zipf:1.2`, `500 IOPS`.
pub fn value_text(setting: &Setting, v: &Value) -> String {
    match (setting, v) {
        (Setting::Size, Value::Null) => "whole file".into(),
        (Setting::Size, v) => v.as_u64().map(|b| Size(b).to_string()).unwrap_or_else(|| v.to_string()),
        (Setting::Rw, v) => {
            let rw = v["rw"].as_str().unwrap_or("-");
            match v["read_percent"].as_u64() {
                Some(p) if p > 0 && p < 100 => format!("{rw} {p}% read"),
                _ => rw.to_string(),
            }
        }
        (Setting::Rate, v) => match (v["rate_iops"].as_f64(), v["rate_mbps"].as_f64()) {
            (Some(iops), _) => format!("{} IOPS", super::format::count(iops)),
            (None, Some(mbps)) => format!("{} MB/s", super::format::sig3(mbps)),
            (None, None) => "unlimited".into(),
        },
        (Setting::Hosts, Value::Array(a)) => a.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" "),
        (_, Value::Null) => "-".into(),
        (_, Value::String(s)) => s.clone(),
        // a driver's settings: `shared_buffers=128MB`
        (_, Value::Object(map)) => {
            map.iter().map(|(k, v)| format!("{k}={}", value_text(setting, v))).collect::<Vec<_>>().join(" ")
        }
        // ... also when stored as ordered `[key, value]` pairs
        (_, Value::Array(pairs))
            if pairs.iter().all(|p| p.as_array().is_some_and(|p| p.len() == 2 && p[0].is_string())) =>
        {
            pairs
                .iter()
                .map(|p| format!("{}={}", p[0].as_str().unwrap_or_default(), value_text(setting, &p[1])))
                .collect::<Vec<_>>()
                .join(" ")
        }
        (_, v) => v.to_string(),
    }
}

/// The figure of merit a sweep of these columns answers with: vioperf's MB/s per core
/// for the vioperf study, response time for working-set sweeps, time to settle for
/// block-size sweeps, rates and latency for the rest.
pub fn merit(scenario: &str, columns: &[Column]) -> Merit {
    let done: Vec<&Setting> =
        columns.iter().filter(|(s, key)| !s.is_concurrency(key.as_deref())).map(|(s, _)| s).collect();
    match done.as_slice() {
        _ if scenario == "vioperf" => Merit::PerCore,
        [Setting::Size] => Merit::ResponseTime,
        [Setting::BlockSize] => Merit::Settle,
        _ => Merit::Rates,
    }
}

/// What the sweep view needs of the run besides its phases.
pub struct RunFacts<'a> {
    pub scenario: &'a str,
    /// Per phase index and workload name, its per-second mean latency in the phase.
    pub latency: &'a BTreeMap<(usize, String), Vec<f64>>,
    /// Per phase index, the cores fathom kept busy (mean), when observed.
    pub fathom_cores: Vec<Option<f64>>,
    /// The longest steady-state round (the SNIA 5 s).
    pub max_round_s: usize,
    /// Per workload, the op its program leads with (TPC-C's new-order), when one leads:
    /// a row's rate and latency are that op's, never summed over transaction types.
    pub leading: BTreeMap<String, String>,
}

/// The sweep over a run's phases, or why there is none.
pub fn sweep(phases: &[PhaseSummary], run: &RunFacts) -> std::result::Result<Sweep, String> {
    let facts: Vec<&PhaseFacts> = phases.iter().map(|p| &p.facts).collect();
    let columns = sweep_precondition(&facts)?;
    let names: Vec<Column> = columns.iter().map(|(c, _)| c.clone()).collect();
    let merit = merit(run.scenario, &names);
    let mut rows = Vec::new();
    let mut unit = Throughput::Iops;
    for (k, p) in phases.iter().enumerate() {
        let ops: Vec<_> = p.ops.iter().filter(|o| o.op != "sync" && !o.is_network()).collect();
        let Some(busiest) = ops.iter().max_by_key(|o| o.ops).copied() else { continue };
        // a program's leading op stands for its workload alone; IO's ops add up
        let leading = run.leading.get(&busiest.workload);
        let led = leading.and_then(|l| ops.iter().find(|o| o.workload == busiest.workload && o.op == l)).copied();
        let heaviest = led.unwrap_or(busiest);
        let rated: Vec<_> = if led.is_some() { vec![heaviest] } else { ops.clone() };
        unit = heaviest.unit;
        let mb_per_s: f64 = ops.iter().map(|o| o.mb_per_s).sum();
        let l = &heaviest.latency;
        let settle = (merit == Merit::Settle)
            .then(|| run.latency.get(&(k, heaviest.workload.clone())).map(|s| Settle::of(s, run.max_round_s)))
            .flatten();
        let fathom = run.fathom_cores.get(k).copied().flatten();
        rows.push((
            k,
            SweepRow {
                phase: p.phase.label.clone(),
                workload: heaviest.workload.clone(),
                values: columns.iter().map(|((s, _), values)| value_text(s, &values[k])).collect(),
                iops: rated.iter().map(|o| o.iops).sum(),
                mb_per_s,
                mean_us: l.mean_us,
                p50_us: l.p50_us,
                p99_us: l.p99_us,
                p99_9_us: l.p99_9_us,
                timed: heaviest.timed(),
                settle,
                // vioperf's threads, one per core: the workers that ran the phase
                per_core: (merit == Merit::PerCore)
                    .then(|| PerCore::of(mb_per_s, p.facts.ran.iter().map(|r| r.workers).sum::<i64>() as f64, fathom)),
            },
        ));
    }
    if rows.len() < MIN_SWEEP_ROWS {
        return Err(format!("fewer than {MIN_SWEEP_ROWS} phases with IO"));
    }
    if merit == Merit::ResponseTime {
        // from the smallest set, as the field notes' table; the whole file last
        let sizes = columns.iter().find(|((s, _), _)| *s == Setting::Size).map(|(_, v)| v);
        rows.sort_by_key(|(k, _)| sizes.and_then(|v| v[*k].as_u64()).unwrap_or(u64::MAX));
    }
    let rows: Vec<SweepRow> = rows.into_iter().map(|(_, r)| r).collect();
    let columns: Vec<String> = names.iter().map(|(s, key)| s.named(key.as_deref())).collect();
    Ok(Sweep { setting: columns.join(", "), columns, rows, merit, unit })
}

/// One phase of an interference study: its label, the workloads that ran in it, and
/// the figures of each that did IO there.
pub struct Stretch {
    pub label: String,
    pub ran: Vec<String>,
    pub figures: Vec<(String, Figures)>,
}

/// Per workload, its first phase with IO against each later phase in which another
/// set of workloads ran with it; empty unless workloads join or leave between phases.
pub fn before_during(phases: &[Stretch], joined_or_left: bool) -> Vec<InterferenceRow> {
    if !joined_or_left {
        return Vec::new();
    }
    let mut rows = Vec::new();
    let mut firsts: Vec<(&str, &Stretch, &Figures)> = Vec::new();
    for p in phases {
        for (name, during) in &p.figures {
            let Some(&(_, first, before)) = firsts.iter().find(|(n, _, _)| n == name) else {
                firsts.push((name, p, during));
                continue;
            };
            let with: Vec<String> = p.ran.iter().filter(|w| !first.ran.contains(w)).cloned().collect();
            if with.is_empty() && first.ran.iter().all(|w| p.ran.contains(w)) {
                continue;
            }
            rows.push(InterferenceRow {
                workload: name.clone(),
                before: first.label.clone(),
                during: p.label.clone(),
                with,
                before_figures: *before,
                during_figures: *during,
                change: interference::change(before, during),
                ratio: interference::ratio(before, during),
            });
        }
    }
    rows
}

/// The sweep (or None) and the interference rows of a stored run; `latency`: per phase
/// index and workload, its per-second mean latency there (the analysis reads it once).
pub fn build(
    store: &Store,
    run: i64,
    workloads: &[WorkloadSummary],
    phases: &[PhaseSummary],
    latency: &BTreeMap<(usize, String), Vec<f64>>,
    max_round_s: usize,
) -> Result<(Option<Sweep>, Vec<InterferenceRow>)> {
    let row = store.run(&run.to_string())?;
    let busy = store.observation_series(run, "fathom", "cpu_cores", 1)?;
    let fathom_cores = phases
        .iter()
        .map(|p| {
            let end = p.phase.end_t.unwrap_or(i64::MAX);
            let of: Vec<f64> = busy.iter().filter(|(t, _)| *t >= p.phase.start_t && *t < end).map(|s| s.1).collect();
            (!of.is_empty()).then(|| of.iter().sum::<f64>() / of.len() as f64)
        })
        .collect();
    let leading =
        workloads.iter().filter_map(|w| Some((w.workload.name.clone(), w.leading_op()?.to_string()))).collect();
    let facts = RunFacts { scenario: &row.scenario, latency, fathom_cores, max_round_s, leading };
    let sweep = sweep(phases, &facts).ok();
    let stretches: Vec<Stretch> = phases
        .iter()
        .map(|p| Stretch {
            label: p.phase.label.clone(),
            ran: p.facts.ran.iter().map(|r| r.workload.clone()).collect(),
            figures: workloads
                .iter()
                .filter_map(|w| {
                    let ops = p.ops.iter().filter(|o| o.workload == w.workload.name);
                    Some((w.workload.name.clone(), Figures::of(ops, w.workload.rate_iops, w.timed_op())?))
                })
                .collect(),
        })
        .collect();
    // other work joining or leaving: more of the same load is a scaling curve instead
    let joined = phases
        .iter()
        .flat_map(|p| &p.facts.differs)
        .any(|d| matches!(d.setting, Setting::Added | Setting::Removed) && d.like.is_none());
    Ok((sweep, before_during(&stretches, joined)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::read::Ran;
    use serde_json::json;

    /// A phase running `workloads` whose settings differ from the phase before as given.
    fn phase(workloads: &[&str], differs: &[(Setting, Option<&str>, Value, Value)]) -> PhaseFacts {
        let ran = workloads
            .iter()
            .map(|w| Ran { workload: w.to_string(), idx: 0, workers: 1, depth: 1, hosts: vec!["localhost".into()] })
            .collect();
        let differs = differs
            .iter()
            .map(|(setting, key, before, after)| Difference {
                setting: setting.clone(),
                workload: workloads.first().unwrap_or(&"w").to_string(),
                key: key.map(str::to_string),
                before: before.clone(),
                after: after.clone(),
                like: None,
            })
            .collect();
        PhaseFacts { ran, differs }
    }

    fn texts(columns: &[(Column, Vec<Value>)]) -> Vec<(String, Vec<String>)> {
        columns
            .iter()
            .map(|((s, _), values)| (s.describe().to_string(), values.iter().map(|v| value_text(s, v)).collect()))
            .collect()
    }

    #[test]
    fn a_sweep_has_a_column_per_varied_setting_and_a_value_per_phase() {
        let mix = |rw: &str, read: u32| json!({"rw": rw, "read_percent": read});
        // four-corners: 4k random read and write at depth 32, then 1m read and write at 8
        let phases = [
            phase(&["randread-4k"], &[]),
            phase(&["randwrite-4k"], &[(Setting::Rw, None, mix("randread", 100), mix("randwrite", 0))]),
            phase(
                &["read-1m"],
                &[
                    (Setting::Depth, None, json!(32), json!(8)),
                    (Setting::BlockSize, None, json!("4k"), json!("1m")),
                    (Setting::Rw, None, mix("randwrite", 0), mix("read", 100)),
                ],
            ),
            phase(&["write-1m"], &[(Setting::Rw, None, mix("read", 100), mix("write", 0))]),
        ];
        let columns = sweep_precondition(&phases.iter().collect::<Vec<_>>()).unwrap();
        assert_eq!(
            texts(&columns),
            [
                (
                    "op mix".to_string(),
                    vec!["randread", "randwrite", "read", "write"].into_iter().map(String::from).collect()
                ),
                ("depth".to_string(), vec!["32", "32", "8", "8"].into_iter().map(String::from).collect()),
                ("block size".to_string(), vec!["4k", "4k", "1m", "1m"].into_iter().map(String::from).collect()),
            ]
        );
        let names: Vec<Column> = columns.into_iter().map(|(c, _)| c).collect();
        assert_eq!(merit("four-corners", &names), Merit::Rates);
        assert_eq!(merit("vioperf", &names), Merit::PerCore);
    }

    #[test]
    fn each_kind_of_sweep_has_its_figure_of_merit() {
        let sizes = [
            phase(&["set-1g"], &[]),
            phase(&["set-16m"], &[(Setting::Size, None, json!(1u64 << 30), json!(16u64 << 20))]),
        ];
        let columns = sweep_precondition(&sizes.iter().collect::<Vec<_>>()).unwrap();
        assert_eq!(texts(&columns)[0].1, ["1g", "16m"]);
        assert_eq!(merit("seek-sweep", &[(Setting::Size, None)]), Merit::ResponseTime);
        assert_eq!(merit("ilm-warmup", &[(Setting::BlockSize, None)]), Merit::Settle);
        // with depth changing too, a block-size sweep is still one of block size
        assert_eq!(merit("x", &[(Setting::Depth, None), (Setting::BlockSize, None)]), Merit::Settle);
        assert_eq!(merit("hotspot", &[(Setting::Distribution, None)]), Merit::Rates);
        assert_eq!(value_text(&Setting::Size, &Value::Null), "whole file");
        assert_eq!(value_text(&Setting::Rw, &json!({"rw": "randrw", "read_percent": 70})), "randrw 70% read");
        assert_eq!(value_text(&Setting::Rate, &json!({"rate_iops": 1500.0, "rate_mbps": null})), "1,500 IOPS");
        let settings = json!([["shared_buffers", "128MB"], ["work_mem", "4MB"]]);
        assert_eq!(value_text(&Setting::Other, &settings), "shared_buffers=128MB work_mem=4MB");
        let settings = json!({"shared_buffers": "128MB", "work_mem": "4MB"});
        assert_eq!(value_text(&Setting::Other, &settings), "shared_buffers=128MB work_mem=4MB");
    }

    #[test]
    fn phases_that_are_not_a_sweep_say_why() {
        let added =
            [phase(&["oltp"], &[]), phase(&["oltp", "dss"], &[(Setting::Added, None, Value::Null, json!("dss"))])];
        let depth = [phase(&["qd1"], &[]), phase(&["qd4"], &[(Setting::Depth, None, json!(1), json!(4))])];
        let pair =
            [phase(&["a", "b"], &[]), phase(&["a", "b"], &[(Setting::BlockSize, None, json!("4k"), json!("8k"))])];
        let cases: [(&[PhaseFacts], &str); 3] = [
            (&added, "workloads are added or removed between phases"),
            (&depth, "phases do not differ in what is done"),
            (&pair, "phases run several workloads at once"),
        ];
        for (phases, reason) in cases {
            assert_eq!(sweep_precondition(&phases.iter().collect::<Vec<_>>()).unwrap_err(), reason);
        }
    }

    #[test]
    fn latency_settles_in_rounds_a_short_phase_can_hold() {
        // 12 s: 1 s rounds; latency falls for 4 s, then holds
        let warm = [900.0, 600.0, 400.0, 250.0, 100.0, 101.0, 99.0, 100.0, 100.0, 102.0, 98.0, 100.0];
        let s = Settle::of(&warm, 5);
        assert_eq!((s.round_s, s.steady_from_s, s.text().as_str()), (1, Some(4), "4 s"));
        // still falling at the end: it did not settle
        let falling: Vec<f64> = (0..12).map(|t| 1000.0 - 70.0 * t as f64).collect();
        assert_eq!(Settle::of(&falling, 5).text(), "did not settle");
        assert_eq!(Settle::of(&[100.0, 100.0], 5).text(), "too short");
        // a long phase is judged in SNIA's 5 s rounds
        assert_eq!(Settle::of(&[100.0; 300], 5).round_s, 5);
    }

    #[test]
    fn vioperf_judges_mb_per_s_per_core_against_20_and_40() {
        let cases = [
            (30.0, 2.0, PerCoreVerdict::BelowMinimum),
            (40.0, 2.0, PerCoreVerdict::Minimum),
            (80.0, 2.0, PerCoreVerdict::Recommended),
        ];
        for (mbps, cores, verdict) in cases {
            let p = PerCore::of(mbps, cores, None);
            assert_eq!((p.mb_per_s_per_core, p.verdict), (mbps / cores, verdict));
        }
        assert_eq!(PerCore::of(30.0, 2.0, None).verdict_text(), "FAIL: < 20 minimum");
    }

    #[test]
    fn each_workload_is_compared_with_its_first_phase_where_its_company_differs() {
        let f = |iops: f64, p99: f64| Figures { iops, attainment: Some(iops / 4000.0), p50_us: 200.0, p99_us: p99 };
        let stretch = |label: &str, ran: &[&str], figures: Vec<(&str, Figures)>| Stretch {
            label: label.into(),
            ran: ran.iter().map(|s| s.to_string()).collect(),
            figures: figures.into_iter().map(|(n, f)| (n.to_string(), f)).collect(),
        };
        let phases = [
            stretch("before", &["oltp"], vec![("oltp", f(4000.0, 3150.0))]),
            stretch("during", &["oltp", "dss"], vec![("oltp", f(4000.0, 266_000.0)), ("dss", f(1400.0, 9000.0))]),
            stretch("after", &["oltp"], vec![("oltp", f(4000.0, 3200.0))]),
        ];
        let rows = before_during(&phases, true);
        assert_eq!(rows.len(), 1, "only OLTP ran in both; after has the company of before");
        let r = &rows[0];
        assert_eq!((r.workload.as_str(), r.before.as_str(), r.during.as_str()), ("oltp", "before", "during"));
        assert_eq!(r.with, ["dss"]);
        assert_eq!(r.ratio.attainment, Some(1.0));
        assert!((r.ratio.p99.unwrap() - 84.44).abs() < 0.01 && (r.change.p99_percent - 8344.4).abs() < 0.1);
        assert!(before_during(&phases, false).is_empty(), "no workload joined or left: no study");
    }
}
