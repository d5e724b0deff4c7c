//! Checks of the timeline: each step resolved, each workload started once, before it
//! is stopped or waited for, and none left unstarted.

use super::checker::Checker;
use crate::error::Result;
use crate::scenario::steps;

impl Checker<'_> {
    /// Checks the timeline: each step, each workload started once before it is stopped
    /// or waited for, and none left unstarted.
    pub(super) fn timeline(&self, raw: &[steps::StepFile], names: &[&str]) -> Result<Vec<steps::Step>> {
        if raw.is_empty() {
            return Err(self.err(&["timeline"], "the timeline is empty"));
        }
        let mut started: Vec<Option<usize>> = vec![None; names.len()];
        let mut out = Vec::new();
        for (i, r) in raw.iter().enumerate() {
            let n = i.to_string();
            let step = steps::resolve(r, names).map_err(|(key, msg)| {
                let mut path = vec!["timeline", n.as_str()];
                path.extend(key.split('.').filter(|k| !k.is_empty()));
                self.err(&path, msg)
            })?;
            match step.action {
                steps::Action::Start { workload, .. } | steps::Action::Ramp { workload, .. } => {
                    let verb = if matches!(step.action, steps::Action::Start { .. }) { "start" } else { "ramp" };
                    if let Some(first) = started[workload] {
                        return Err(self.err(
                            &["timeline", &n, verb],
                            format!(
                                "`{}` already started at timeline step {first}; define another workload to run it again",
                                names[workload]
                            ),
                        ));
                    }
                    started[workload] = Some(i);
                }
                steps::Action::Stop { workload } | steps::Action::WaitFor { workload, .. }
                    if started[workload].is_none() =>
                {
                    let verb = if matches!(step.action, steps::Action::Stop { .. }) { "stop" } else { "wait_for" };
                    return Err(self.err(
                        &["timeline", &n, verb],
                        format!("`{}` has not been started by this step", names[workload]),
                    ));
                }
                _ => {}
            }
            out.push(step);
        }
        if let Some(idle) = (0..names.len()).find(|&w| started[w].is_none()) {
            let name = names[idle];
            return Err(self.err(
                &["workloads", name],
                format!("`{name}` is never started: add `- start: {name}` to the timeline, or remove it"),
            ));
        }
        Ok(out)
    }
}
