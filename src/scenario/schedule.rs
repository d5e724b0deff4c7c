//! The timeline as planned, before anything runs: when each workload starts, is
//! measured and ends, and when each labelled phase begins and ends. The executor keeps
//! its own clock; this plan is what `lint` and `run` check a scenario against (an
//! expectation on a phase its workload never reaches) and what the live view is told
//! the run's end from. Hooks, fills and probes count as instant, so the plan is a lower
//! bound where they take time.

use super::model::Scenario;
use super::steps::Action;

/// Seconds of one workload as planned. `end` is `None` when the workload ends by itself
/// and nothing caps it: how long it runs is not known in advance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlannedRun {
    pub start: u64,
    /// When its measured window begins: after its `ramp`.
    pub measure: u64,
    pub end: Option<u64>,
}

/// The plan of a scenario's steps.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// Per workload, its seconds; `None` for one no step starts, or that starts after a
    /// step whose end is not known.
    pub runs: Vec<Option<PlannedRun>>,
    /// Each phase a step names (`phase:`) or a ramp's step names (`vm x3`), with the
    /// second it opens, in the order planned.
    pub labels: Vec<(String, u64)>,
    /// The seconds at which what runs changes: a phase ends at the first after it opens.
    changes: Vec<u64>,
    /// When the run ends; `None` when a workload's end is not known.
    pub end: Option<u64>,
}

impl Plan {
    /// The plan of the whole timeline from second 0.
    pub fn of(scenario: &Scenario) -> Plan {
        Plan::from_step(scenario, 0, 0, vec![Some(0); scenario.workloads.len()])
    }

    /// The plan of steps `from` on, begun at second `now`, with the workloads already
    /// started ending at `ends` (0 for the others, `None` for one whose end is not known).
    pub fn from_step(scenario: &Scenario, from: usize, now: u64, mut ends: Vec<Option<u64>>) -> Plan {
        let mut plan = Plan { runs: vec![None; scenario.workloads.len()], ..Plan::default() };
        let mut now = Some(now);
        for step in &scenario.steps[from..] {
            if let Some(at) = step.at {
                now = now.map(|n| n.max(at.as_secs()));
            }
            // a start, a ramp, a stop or a wait opens its phase as it begins; any other step
            // as it ends (`wait_for: dss` with `phase: after`)
            let opens_first = matches!(
                step.action,
                Action::Start { .. } | Action::Ramp { .. } | Action::Stop { .. } | Action::Wait(_)
            );
            if opens_first {
                plan.label(step.phase.as_deref(), now);
            }
            match step.action {
                Action::Start { workload, wait, .. } | Action::Ramp { workload, wait, .. } => {
                    let w = &scenario.workloads[workload];
                    let length = (w.ramp + w.duration).as_secs();
                    ends[workload] = now.filter(|_| !w.open_ended()).map(|n| n + length);
                    plan.runs[workload] =
                        now.map(|start| PlannedRun { start, measure: start + w.ramp.as_secs(), end: ends[workload] });
                    plan.changes.extend(now.into_iter().chain(ends[workload]));
                    if let (Action::Ramp { add, every, until, .. }, Some(start)) = (&step.action, now) {
                        plan.ramp(&w.name, start, (*add, every.as_secs(), *until), step.phase.is_some());
                    }
                    if wait {
                        now = ends[workload];
                    }
                }
                Action::Stop { workload } => {
                    ends[workload] = match (ends[workload], now) {
                        (Some(end), Some(n)) => Some(end.min(n)),
                        (end, n) => end.or(n),
                    };
                    if let Some(run) = &mut plan.runs[workload] {
                        run.end = ends[workload];
                    }
                    plan.changes.extend(now);
                }
                Action::Wait(d) => now = now.map(|n| n + d.as_secs()),
                Action::WaitFor { workload, timeout } => {
                    let limit = |n: u64| timeout.map_or(u64::MAX, |t| n + t.as_secs());
                    now = now.zip(ends[workload]).map(|(n, end)| n.max(end.min(limit(n))))
                }
                _ => {}
            }
            if !opens_first {
                plan.label(step.phase.as_deref(), now);
            }
        }
        plan.end = now.and_then(|n| ends.into_iter().try_fold(n, |last, end| Some(last.max(end?))));
        plan
    }

    /// A phase a step names, opening at `at` (when known).
    fn label(&mut self, label: Option<&str>, at: Option<u64>) {
        if let (Some(label), Some(at)) = (label, at) {
            self.labels.push((label.to_string(), at));
            self.changes.push(at);
        }
    }

    /// A ramp's phases, `NAME xN` as its workers grow, one every `every` seconds from
    /// `start` (the first one the step's own label, when it has one).
    fn ramp(&mut self, name: &str, start: u64, (add, every, until): (u32, u64, u32), labelled: bool) {
        for k in 1..=until.div_ceil(add.max(1)) {
            let at = start + (k as u64 - 1) * every;
            self.changes.push(at);
            if k > 1 || !labelled {
                self.labels.push((format!("{name} x{}", (k * add).min(until)), at));
            }
        }
    }

    /// The seconds `[from, to)` of each phase labelled `label`, as planned; `to` is
    /// `None` for one that lasts until a workload whose end is not known.
    pub fn phase(&self, label: &str) -> Vec<(u64, Option<u64>)> {
        self.labels
            .iter()
            .filter(|(l, _)| l == label)
            .map(|&(_, from)| {
                let next = self.changes.iter().copied().filter(|&c| c > from).min();
                (from, next.or(self.end))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Source;

    fn plan(text: &str) -> Plan {
        Plan::of(&Scenario::load(&Source { origin: "s.yaml".into(), text }, &[]).unwrap())
    }

    #[test]
    fn a_timeline_plans_each_workload_and_phase() {
        let p = plan(
            "name: s\ndefaults: {engine: null, target: /tmp, duration: 60s, rw: read}\nworkloads:\n  oltp: {}\n  dss: \
             {duration: 20s, ramp: 2s}\ntimeline:\n  - {start: oltp, async: true, phase: before}\n  - wait: 20s\n  \
             - {start: dss, async: true, phase: during}\n  - {wait_for: dss, phase: after}\n  - wait_for: oltp\n",
        );
        assert_eq!(p.runs[0], Some(PlannedRun { start: 0, measure: 0, end: Some(60) }));
        assert_eq!(p.runs[1], Some(PlannedRun { start: 20, measure: 22, end: Some(42) }));
        assert_eq!(p.phase("before"), vec![(0, Some(20))]);
        assert_eq!(p.phase("during"), vec![(20, Some(42))]);
        assert_eq!(p.phase("after"), vec![(42, Some(60))]);
        assert_eq!(p.end, Some(60));
    }

    #[test]
    fn a_ramp_names_every_step_its_last_included() {
        let p = plan(
            "name: s\ndefaults: {engine: null, target: /tmp, rw: read}\nworkloads:\n  vm: {jobs: 4}\ntimeline:\n  - ramp: vm\n    \
             add: 2\n    every: 5s\n    until: 5\n",
        );
        let labels: Vec<(&str, u64)> = p.labels.iter().map(|(l, t)| (l.as_str(), *t)).collect();
        assert_eq!(labels, vec![("vm x2", 0), ("vm x4", 5), ("vm x5", 10)]);
        assert_eq!(p.phase("vm x5"), vec![(10, Some(15))]);
    }
}
