//! `--time-scale F`: every duration of the timeline multiplied by F, so that a study of
//! hours is rehearsed in minutes (F = 0.01) with the same shape. Applied once, to the
//! file as written, where `--set` is applied ([`super::load`]), so every later stage
//! (checks, plan, executor, agents) sees the scaled durations. It travels as the set
//! `time_scale=F` ([`KEY`]), as `--engine` travels as `engine=E`, so agents on other
//! hosts load the scenario the same way.
//!
//! Each scaled duration is rounded to what its key takes: whole seconds for a
//! workload's `duration` and `ramp`, a step's `duration` and a ramp's `every` (fathom
//! samples every second), milliseconds for the others. One that would round to less
//! than its key's least (1 s; 1 ms) is raised to it and said (see [`TimeScale::raised`]).

use super::file::{Profile, ScenarioFile};
use super::model::TimeScale;
use super::overrides::Override;
use super::units::Span;
use crate::error::{Error, Result};
use std::time::Duration;

/// The `--set` key `--time-scale` stands for.
pub const KEY: &str = "time_scale";

/// The largest factor taken: enough to stretch a rehearsal back out, small enough that
/// no duration a scenario may write overflows.
const MAX_FACTOR: f64 = 1000.0;

/// The smallest factor taken: a year's study in half a minute. Below it every duration
/// is raised to its least anyway, and the factor itself no longer prints as a number a
/// person reads (`0.000...0001`, hundreds of digits).
const MIN_FACTOR: f64 = 1e-6;

/// How much of a refused value an error echoes: enough to recognise it.
const ECHOED: usize = 24;

/// The `--set` that `--time-scale F` stands for: appended to the user's sets, it
/// reaches the loader and the agents as they do.
pub fn as_set(factor: f64) -> Override {
    Override { path: vec![KEY.to_string()], value: factor.to_string() }
}

/// How a run's headline says its scale: `time scale 0.01 (durations ×0.01)`.
pub fn describe(factor: f64) -> String {
    format!("time scale {factor} (durations ×{factor})")
}

/// Splits the time scale (the last `time_scale=F` set) from the other sets, checking F.
pub fn take(sets: &mut Vec<Override>) -> Result<Option<f64>> {
    let mut factor = None;
    let mut error = None;
    sets.retain(|s| {
        if s.path.len() != 1 || s.path[0] != KEY {
            return true;
        }
        match s.value.trim().parse::<f64>() {
            Ok(f) if (MIN_FACTOR..=MAX_FACTOR).contains(&f) => factor = Some(f),
            _ => {
                let value = s.value.trim();
                let shown = match value.char_indices().nth(ECHOED) {
                    Some((cut, _)) => format!("{}...", &value[..cut]),
                    None => value.to_string(),
                };
                error.get_or_insert(Error::input(format!(
                    "--time-scale {shown}: expected a number from {MIN_FACTOR} to {MAX_FACTOR} (e.g. 0.01: durations \
                     x0.01)"
                )));
            }
        }
        false
    });
    match error {
        Some(e) => Err(e),
        None => Ok(factor),
    }
}

/// How a key's durations round.
#[derive(Clone, Copy)]
pub enum Unit {
    /// Whole seconds, the least given (1 s, or 0 for a warm-up `ramp`).
    Seconds(u64),
    /// Milliseconds, at least 1 ms unless written as 0.
    Millis,
}

/// A duration scaling raised, as the warning says it: what scaling made of it, then
/// what it became (`workloads.b.duration 4s: 0.4 s, raised to 1s`).
pub fn raised_text(path: &str, d: Duration, factor: f64, scaled: Duration) -> String {
    format!("{path} {}: {} s, raised to {}", Span(d), sig(d.as_secs_f64() * factor), Span(scaled))
}

/// A scaled length in seconds as a person reads it: `0.4`, `0.05`, `12`.
fn sig(secs: f64) -> String {
    let text = format!("{secs:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// `d` times `factor`, rounded to `unit`, and whether it was raised to the unit's least
/// (a duration written as 0 stays 0).
pub fn scale(d: Duration, factor: f64, unit: Unit) -> (Duration, bool) {
    let secs = d.as_secs_f64() * factor;
    let (rounded, least) = match unit {
        Unit::Seconds(least) => (Duration::from_secs(secs.round() as u64), Duration::from_secs(least)),
        Unit::Millis => (Duration::from_millis((secs * 1000.0).round() as u64), Duration::from_millis(1)),
    };
    let scaled = if d.is_zero() { d } else { rounded.max(least) };
    (scaled, scaled > rounded)
}

/// Multiplies every duration of `file`'s timeline by `factor`.
pub fn apply(file: &mut ScenarioFile, factor: f64) -> TimeScale {
    let mut raised = Vec::new();
    let mut scale_key = |span: &mut Option<Span>, path: String, unit: Unit| {
        let Some(Span(d)) = *span else { return };
        let (scaled, was_raised) = scale(d, factor, unit);
        if was_raised {
            raised.push(raised_text(&path, d, factor, scaled));
        }
        *span = Some(Span(scaled));
    };
    let mut profile = |p: &mut Profile, at: &str| {
        scale_key(&mut p.duration, format!("{at}.duration"), Unit::Seconds(1));
        scale_key(&mut p.ramp, format!("{at}.ramp"), Unit::Seconds(0));
    };
    if let Some(d) = file.defaults.as_mut() {
        profile(d, "defaults");
    }
    for (name, w) in file.workloads.iter_mut() {
        profile(w, &format!("workloads.{name}"));
    }
    for (i, step) in file.timeline.iter_mut().flatten().enumerate() {
        let at = |key: &str| format!("timeline.{i}.{key}");
        let every = if step.ramp.is_some() { Unit::Seconds(1) } else { Unit::Millis };
        scale_key(&mut step.at, at("at"), Unit::Millis);
        scale_key(&mut step.wait, at("wait"), Unit::Millis);
        scale_key(&mut step.duration, at("duration"), Unit::Seconds(1));
        scale_key(&mut step.stagger, at("stagger"), Unit::Millis);
        scale_key(&mut step.every, at("every"), every);
        scale_key(&mut step.timeout, at("timeout"), Unit::Millis);
        if let Some(p) = step.wait_until.as_mut() {
            scale_key(&mut p.timeout, at("wait_until.timeout"), Unit::Millis);
            scale_key(&mut p.interval, at("wait_until.interval"), Unit::Millis);
        }
    }
    TimeScale { factor, raised }
}

#[cfg(test)]
mod tests {
    use crate::scenario::steps::{Action, Command};
    use crate::scenario::{Override, Scenario, Source};
    use std::time::Duration;

    fn load(text: &str, sets: &[&str]) -> crate::error::Result<Scenario> {
        let sets: Vec<Override> = sets.iter().map(|s| s.parse().unwrap()).collect();
        Scenario::load(&Source { origin: "s.yaml".into(), text }, &sets)
    }

    const TEXT: &str = "name: t\ndefaults: {target: /tmp, ramp: 10s, duration: 30s}\n\
                        workloads:\n  a: {rw: read}\n  b: {rw: read, duration: 4s}\n  c: {rw: read}\n\
                        timeline:\n  - start: a\n    async: true\n    stagger: 2s\n  - wait: 20s\n    at: 1m\n  \
                        - exec: 'true'\n    every: 90s\n    times: 2\n    timeout: 5m\n  - start: b\n  \
                        - wait_until: {command: 'true', timeout: 1m, interval: 5s}\n  - ramp: c\n    every: 20s\n    until: 2\n";

    #[test]
    fn every_duration_of_the_timeline_is_scaled_and_rounded_to_its_key() {
        let s = load(TEXT, &["time_scale=0.1"]).unwrap();
        let secs = |n| Duration::from_secs(n);
        let (a, b, c) = (&s.workloads[0], &s.workloads[1], &s.workloads[2]);
        assert_eq!((a.ramp, a.duration), (secs(1), secs(3)));
        // 0.4 s is less than a workload's least: raised to 1 s, and said
        assert_eq!((b.ramp, b.duration), (secs(1), secs(1)));
        assert_eq!(c.duration, secs(4), "a ramp's two steps of 2 s");
        let scaled = s.time_scale.as_ref().unwrap();
        assert_eq!(scaled.factor, 0.1);
        assert_eq!(scaled.raised, vec!["workloads.b.duration 4s: 0.4 s, raised to 1s".to_string()]);
        assert!(matches!(s.steps[0].action, Action::Start { stagger, .. } if stagger == Duration::from_millis(200)));
        assert_eq!(s.steps[1].at, Some(secs(6)));
        assert!(matches!(s.steps[1].action, Action::Wait(d) if d == secs(2)));
        let Action::Command(c) = &s.steps[2].action else { panic!("exec") };
        assert!(matches!(c.command, Command::Exec(_)));
        assert_eq!((c.timeout, c.repeat.unwrap().every), (secs(30), secs(9)));
        let Action::WaitUntil { timeout, interval, .. } = s.steps[4].action else { panic!("wait_until") };
        assert_eq!((timeout, interval), (secs(6), Duration::from_millis(500)));
        assert!(matches!(s.steps[5].action, Action::Ramp { every, .. } if every == secs(2)));
        // unscaled without it
        let s = load(TEXT, &[]).unwrap();
        assert!(s.time_scale.is_none());
        assert_eq!(s.workloads[0].duration, secs(30));
    }

    #[test]
    fn a_scale_must_be_above_zero() {
        for bad in ["0", "-1", "fast", "1e9", "NaN", "1e-7"] {
            let err = load(TEXT, &[&format!("time_scale={bad}")]).unwrap_err();
            assert_eq!(err.exit_code(), 2);
            assert!(err.to_string().starts_with(&format!("--time-scale {bad}: expected a number from")), "{err}");
        }
        // a value of hundreds of digits is refused, and echoed only in part
        let tiny = format!("0.{}1", "0".repeat(320));
        let err = load(TEXT, &[&format!("time_scale={tiny}")]).unwrap_err().to_string();
        assert!(err.starts_with("--time-scale 0.0000000000000000000000...: expected") && err.len() < 120, "{err}");
        // with other sets, in any order
        let s = load(TEXT, &["iodepth=2", "time_scale=2"]).unwrap();
        assert_eq!(s.workloads[0].duration, Duration::from_secs(60));
    }
}
