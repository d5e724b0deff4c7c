//! fio's job order as fathom's timeline: `stonewall` (a job starts when every one before
//! it has ended), `wait_for=JOB` and `startdelay`, each a step between `async` starts.

use super::reader::Job;
use super::values::{Unit, number, quote};
use crate::error::Result;

/// `stonewall` (a job starts when every one before it has ended), `wait_for=JOB` and
/// `startdelay` as timeline steps; none when every job starts at once.
pub fn timeline(jobs: &[Job]) -> Result<Vec<String>> {
    let ordered = jobs.iter().any(|j| ["stonewall", "wait_for", "startdelay"].iter().any(|k| j.get(k).is_some()));
    if !ordered {
        return Ok(Vec::new());
    }
    let mut steps = Vec::new();
    let mut running: Vec<&str> = Vec::new();
    let mut delayed = 0u64;
    for (i, job) in jobs.iter().enumerate() {
        if let Some(o) = job.get("stonewall")
            && o.flag()?
            && i > 0
        {
            for r in running.drain(..) {
                steps.push(format!("{{wait_for: {}}}", quote(r)));
            }
            delayed = 0;
        }
        if let Some(o) = job.get("wait_for") {
            let name = o.text()?.trim();
            if !jobs[..i].iter().any(|j| j.name == name) {
                return Err(o.err(format!("`{name}` is not a job before this one")));
            }
            if let Some(at) = running.iter().position(|r| *r == name) {
                running.remove(at);
                steps.push(format!("{{wait_for: {}}}", quote(name)));
            }
        }
        if let Some(o) = job.get("startdelay") {
            let us = number(o.text()?, Unit::Time).map_err(|e| o.err(e))?;
            if us % 1e6 != 0.0 {
                return Err(o.err("fathom starts workloads on whole seconds: give a whole number of seconds"));
            }
            let secs = (us / 1e6) as u64;
            if secs > delayed {
                steps.push(format!("{{wait: {}s}}", secs - delayed));
                delayed = secs;
            }
        }
        steps.push(format!("{{start: {}, async: true}}", quote(&job.name)));
        running.push(&job.name);
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::fio_job::reader::read;
    use std::path::Path;

    fn mapped(text: &str) -> Result<Vec<String>> {
        timeline(&read(Path::new("t.fio"), text)?)
    }

    const TIMED: &str = "[global]\nruntime=2\ntime_based\n";

    #[test]
    fn stonewall_wait_for_and_startdelay_make_the_timeline() {
        let text = format!("{TIMED}[a]\n[b]\nstartdelay=3\n[c]\nstonewall\n[d]\nwait_for=c\n");
        let m = mapped(&text).unwrap();
        assert_eq!(
            m,
            [
                r#"{start: "a", async: true}"#,
                "{wait: 3s}",
                r#"{start: "b", async: true}"#,
                r#"{wait_for: "a"}"#,
                r#"{wait_for: "b"}"#,
                r#"{start: "c", async: true}"#,
                r#"{wait_for: "c"}"#,
                r#"{start: "d", async: true}"#,
            ]
        );
        assert!(mapped(&format!("{TIMED}[a]\n[b]\n")).unwrap().is_empty(), "all at once");
    }
}
