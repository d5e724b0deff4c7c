//! Whether each expectation can be measured as the scenario will run: its workload has
//! the op and the figure it asks for, in the unit asked, and is measured in the phase
//! it names. A run would otherwise end with "nothing measured" and fail on a figure it
//! never had, a defect of the scenario that `lint` and `run` can name before anything
//! runs.

use super::checker::Checker;
use crate::error::Result;
use crate::metrics::Op;
use crate::scenario::expect::{Expectation, Metric, Reference};
use crate::scenario::model::{Scenario, Workload};
use crate::scenario::schedule::Plan;

/// What a user who shortened a study by one of its durations should do instead.
const SHORTEN: &str = "to shorten a study, scale its whole timeline with `--time-scale` (e.g. --time-scale 0.1) \
                       rather than setting one of its durations";

impl Checker<'_> {
    /// Refuses the first expectation of `s` that cannot be measured, naming it and why.
    pub fn measurable(&self, s: &Scenario) -> Result<()> {
        let plan = Plan::of(s);
        for (i, e) in s.expect.iter().enumerate() {
            let at = ["expect", &i.to_string()];
            let why = figure(&s.workloads[e.workload], e.op, e.metric)
                .map_err(|why| format!("`{}`: {why}", e.text))
                .and_then(|_| match &e.relative {
                    Some(Reference::Workload { workload, op, .. }) => {
                        figure(&s.workloads[*workload], *op, e.metric).map_err(|why| format!("`{}`: {why}", e.text))
                    }
                    _ => Ok(()),
                })
                .and_then(|_| {
                    timing(s, &plan, e).map_err(|why| format!("`{}` cannot be measured: {why}; {SHORTEN}", e.text))
                });
            if let Err(why) = why {
                return Err(self.err(&at, why));
            }
        }
        Ok(())
    }
}

/// Whether `w` has `op` and `metric`, in the unit asked; else why not.
fn figure(w: &Workload, op: Option<Op>, metric: Metric) -> std::result::Result<(), String> {
    let m = w.measures();
    let name = &w.name;
    if let Some(op) = op.filter(|op| !m.ops.contains(op)) {
        let ops: Vec<&str> = m.ops.iter().map(|o| o.as_str()).collect();
        return Err(format!("`{name}` does no {} ops (its ops: {})", op.as_str(), ops.join(", ")));
    }
    let rate = format!("`{name}.{}`", m.unit.key());
    match metric {
        Metric::Rate(unit) if unit != m.unit => {
            Err(format!("`{name}` is measured in {}, not {}: write {rate}", m.unit.label(), unit.label()))
        }
        Metric::MbPerS | Metric::MbPerSPerCore if !m.mb_per_s => {
            Err(format!("`{name}` is measured in {}, not MB/s: write {rate}", m.unit.label()))
        }
        Metric::Latency(_) | Metric::MeanLatency if !m.latency => {
            Err(format!("`{name}` has no per-op latency (its program reports only throughput): use {rate}"))
        }
        Metric::AchievedRate if !m.rate => Err(format!("`{name}` is asked no rate to compare with")),
        _ => Ok(()),
    }
}

/// Whether the seconds `e` looks at are planned to overlap its workload's measured
/// window; else what keeps them apart.
fn timing(s: &Scenario, plan: &Plan, e: &Expectation) -> std::result::Result<(), String> {
    let own = window(s, plan, e.workload)?;
    let phases = e.during.iter().chain(match &e.relative {
        Some(Reference::Phase(p)) => Some(p),
        _ => None,
    });
    for label in phases {
        let Some(own) = own else { continue };
        let spans = match plan.phase(label) {
            spans if !spans.is_empty() => spans,
            // a workload's name: its measured window
            _ => match s.workloads.iter().position(|w| w.name == *label) {
                Some(other) => window(s, plan, other)?.map(|(from, to)| vec![(from, to)]).unwrap_or_default(),
                None => continue,
            },
        };
        if !spans.is_empty() && !spans.iter().any(|&span| overlap(own, span)) {
            return Err(apart(&s.workloads[e.workload].name, own, label, &spans));
        }
    }
    if let Some(Reference::Workload { workload, .. }) = &e.relative {
        window(s, plan, *workload)?;
    }
    Ok(())
}

/// A workload's planned measured window `[from, to)` (`to` unknown: `None`); `None`
/// when the plan cannot say; an error when it is never measured.
fn window(s: &Scenario, plan: &Plan, workload: usize) -> std::result::Result<Option<(u64, Option<u64>)>, String> {
    let name = &s.workloads[workload].name;
    let Some(run) = plan.runs[workload] else { return Ok(None) };
    if run.end.is_some_and(|end| end <= run.measure) {
        return Err(format!("`{name}` has no measured second: its ramp lasts as long as its run"));
    }
    Ok(Some((run.measure, run.end)))
}

/// Whether two spans of seconds share at least one (an unknown end lasts).
fn overlap((a_from, a_to): (u64, Option<u64>), (b_from, b_to): (u64, Option<u64>)) -> bool {
    a_to.is_none_or(|a_to| a_to > b_from) && b_to.is_none_or(|b_to| b_to > a_from)
}

/// Why a workload measured over `own` sees nothing of phase `label`: it ends before
/// the phase starts, or starts after it ends.
fn apart(name: &str, (from, to): (u64, Option<u64>), label: &str, spans: &[(u64, Option<u64>)]) -> String {
    let start = spans.iter().map(|s| s.0).min().unwrap_or_default();
    let end = spans.iter().try_fold(0, |last, s| Some(last.max(s.1?)));
    if let Some(to) = to.filter(|&to| to <= start) {
        return format!("`{name}` ends at {to} s, before phase `{label}` starts at {start} s");
    }
    match end.filter(|&end| from >= end) {
        Some(end) => format!("`{name}` is measured from {from} s, after phase `{label}` ends at {end} s"),
        None => format!("`{name}` is not measured while phase `{label}` runs"),
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::{Override, Scenario, Source, builtin};

    fn load(name: &str, text: &str, sets: &[&str]) -> Result<Scenario, String> {
        let sets: Vec<Override> = sets.iter().map(|s| s.parse().unwrap()).collect();
        Scenario::load(&Source { origin: name.into(), text }, &sets).map_err(|e| e.to_string())
    }

    fn builtin(name: &str, sets: &[&str]) -> Result<Scenario, String> {
        load(&format!("builtin:{name}"), builtin::find(name).unwrap(), sets)
    }

    #[test]
    fn a_phase_its_workload_never_reaches_is_refused_before_the_run() {
        let e = builtin("db-colocation", &["duration=3s"]).unwrap_err();
        assert!(e.contains("expect.0: `oltp-data.achieved_rate >= 0.95 during during` cannot be measured"), "{e}");
        assert!(e.contains("`oltp-data` ends at 3 s, before phase `during` starts at 20 s"), "{e}");
        assert!(e.contains("--time-scale"), "{e}");
        // shortened by its whole timeline, the study keeps its shape
        assert!(builtin("db-colocation", &["time_scale=0.1"]).is_ok());
        // a workload measured only after the phase it is judged in
        let text = "name: s\ndefaults: {engine: null, target: /tmp, duration: 5s, rw: read}\nworkloads:\n  a: {}\n  b: {}\n\
                    timeline:\n  - {start: a, phase: first}\n  - {start: b}\nexpect:\n  - b.iops during first > 0\n";
        let e = load("s.yaml", text, &[]).unwrap_err();
        assert!(
            e.contains("s.yaml:10: expect.0:")
                && e.contains("`b` is measured from 5 s, after phase `first` ends at 5 s"),
            "{e}"
        );
    }

    #[test]
    fn a_figure_a_program_does_not_have_is_refused_naming_the_one_it_has() {
        for (set, says) in [
            ("s8.mb_per_s >= 1 x s1.mb_per_s", "`s8` is measured in Gbit/s, not MB/s: write `s8.gbit_per_s`"),
            ("s8.iops >= 1", "`s8` is measured in Gbit/s, not IOPS: write `s8.gbit_per_s`"),
            ("s8.p99 < 1ms", "`s8` has no per-op latency"),
            ("s8.read.gbit_per_s > 0", "`s8` does no read ops (its ops: send)"),
        ] {
            let text =
                builtin::find("net-streams").unwrap().replace("s8.gbit_per_s >= ${min_gain} x s1.gbit_per_s", set);
            let e = load("net.yaml", &text, &[]).unwrap_err();
            assert!(e.contains(says), "{set}: {e}");
        }
        let text = "name: s\ndefaults: {engine: null, target: /tmp, duration: 5s}\nworkloads:\n  r: {rw: randread}\n  \
                    pg: {driver: pgbench}\nexpect:\n  - X\n";
        for (x, says) in [
            ("r.write.iops > 0", "`r` does no write ops (its ops: read)"),
            ("r.tps > 0", "`r` is measured in IOPS, not TPS: write `r.iops`"),
            ("r.achieved_rate >= 0.9", "`r` is asked no rate"),
            ("r.mb_per_s > 1 x pg.mb_per_s", "`pg` is measured in TPS, not MB/s: write `pg.tps`"),
        ] {
            let e = load("s.yaml", &text.replace('X', x), &[]).unwrap_err();
            assert!(e.contains(says), "{x}: {e}");
        }
        assert!(load("s.yaml", &text.replace('X', "r.read.p99 < 1ms"), &[]).is_ok());
    }

    #[test]
    fn every_builtin_shortened_by_its_time_scale_measures_every_expectation() {
        for (name, _) in builtin::list() {
            builtin(name, &["time_scale=0.05"]).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }
}
