//! How long a timeline is planned to take, from the scenario's schedule: before the run
//! (its announced length) and again before each step (the live view's ETA).

use crate::scenario::Scenario;
use crate::scenario::schedule::Plan;

/// About how long the timeline takes, in seconds: what it waits for, ramps and
/// workload durations (hooks and fills count as instant). `None` when a workload that
/// ends by itself, with no duration to cap it, decides when the run ends: its length is
/// not known in advance.
pub fn planned_seconds(scenario: &Scenario) -> Option<u64> {
    planned_from(scenario, 0, 0, vec![Some(0); scenario.workloads.len()])
}

/// When the run is planned to end if its steps `from` on begin at second `now`, with
/// the workloads already started ending at `ends` (0 for the others, `None` for one
/// whose end is not known).
pub(super) fn planned_from(scenario: &Scenario, from: usize, now: u64, ends: Vec<Option<u64>>) -> Option<u64> {
    Plan::from_step(scenario, from, now, ends).end
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Source;

    #[test]
    fn the_plan_is_replanned_from_where_the_timeline_stands() {
        let text = "name: t\ndefaults: {target: /tmp/x, size: 1m, ramp: 2s, duration: 4s}\n\
                    workloads:\n  a: {rw: randread}\n  b: {rw: randread}\n  c: {rw: randread}\n\
                    timeline:\n  - start: a\n  - start: b\n  - wait: 3s\n  - start: c\n    async: true\n";
        let s = Scenario::load(&Source { origin: "t".into(), text }, &[]).unwrap();
        assert_eq!(planned_seconds(&s), Some(6 + 6 + 3 + 6));
        // b started a second late (a's end, then the next whole second): all after it moves
        assert_eq!(planned_from(&s, 2, 13, vec![Some(6), Some(13), Some(0)]), Some(13 + 3 + 6));
        // c running async to second 23, nothing left to step through
        assert_eq!(planned_from(&s, 4, 17, vec![Some(6), Some(13), Some(23)]), Some(23));
    }

    /// A workload that ends by itself with no duration makes the run's end unknown
    /// while it runs; with a duration, that caps it and counts in the plan.
    #[test]
    fn a_bounded_workload_without_duration_has_no_planned_end() {
        let text = "name: t\ndefaults: {target: /tmp/x, size: 1m}\n\
                    workloads:\n  a: {rw: read, loops: 1}\n  b: {rw: read, duration: 4s}\n  c: {rw: read, io_size: 1m, duration: 5s}\n\
                    timeline:\n  - start: a\n  - start: b\n  - start: c\n";
        let s = Scenario::load(&Source { origin: "t".into(), text }, &[]).unwrap();
        assert_eq!(planned_seconds(&s), None);
        // once `a` is done, the rest is known again: b's 4 s and c's cap of 5 s
        assert_eq!(planned_from(&s, 1, 3, vec![Some(0); 3]), Some(3 + 4 + 5));
        // `a` running async with no end: unknown until it ends, even after the others
        assert_eq!(planned_from(&s, 3, 10, vec![None, Some(7), Some(10)]), None);
    }

    /// A `wait_for` with a timeout goes on after it: the plan counts the shorter.
    #[test]
    fn a_wait_for_with_a_timeout_waits_no_longer() {
        let text = "name: t\ndefaults: {target: /tmp/x, size: 1m}\n\
                    workloads:\n  a: {rw: read, duration: 60s}\n  b: {rw: read, duration: 5s}\n\
                    timeline:\n  - start: a\n    async: true\n  - wait_for: a\n    timeout: 10s\n  - start: b\n";
        let s = Scenario::load(&Source { origin: "t".into(), text }, &[]).unwrap();
        // b starts at 10 s and ends at 15 s, before a at 60 s (without the timeout: 65 s)
        assert_eq!(planned_seconds(&s), Some(60));
        let waited = s.text.replace("    timeout: 10s\n", "");
        let s = Scenario::load(&Source { origin: "t".into(), text: &waited }, &[]).unwrap();
        assert_eq!(planned_seconds(&s), Some(65));
    }
}
