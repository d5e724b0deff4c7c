//! The checkpoints of each database workload's server against its rate
//! ([`crate::analysis::stalls`]): a workload whose PostgreSQL server was observed
//! (`postgres:NAME` observations, `checkpoint` events labelled with the workloads the
//! server serves). TPC-C's rate is its new orders (NOPM), pgbench's its transactions
//! (TPS).

use super::measured::{PhaseSummary, WorkloadSummary};
use crate::analysis::stalls::{self, Checkpoint, Effect};
use crate::error::Result;
use crate::store::{EventRow, Store};
use serde::Serialize;

/// One database workload's checkpoints and how its rate wandered.
#[derive(Debug, Serialize)]
pub struct Checkpoints {
    pub workload: String,
    /// What its rate is: `NOPM` (TPC-C's new orders per minute) or `TPS`.
    pub unit: String,
    /// The op whose rate it is (`new-order`), when its program leads with one.
    pub rate: Option<String>,
    /// Each checkpoint of its server while it was measured, with what it did to the
    /// rate (rates per second, in new orders or transactions).
    pub effects: Vec<Effect>,
    /// Per phase it ran in: (phase, coefficient of variation of its per-second rate).
    pub variation: Vec<(String, f64)>,
}

impl Checkpoints {
    /// The rate in its unit, from a per-second figure.
    pub fn in_unit(&self, per_second: f64) -> f64 {
        if self.unit.ends_with("PM") { per_second * 60.0 } else { per_second }
    }

    /// What fell, in words: `new-order transactions`, `TPS`.
    fn what(&self) -> String {
        self.rate.as_ref().map_or_else(|| self.unit.clone(), |op| format!("{op} transactions"))
    }

    /// "tight: new-order transactions fell 62% for 14 s during the checkpoint at 143 s",
    /// for each stall.
    pub fn findings(&self) -> Vec<String> {
        let rate = self.what();
        self.effects
            .iter()
            .filter_map(|e| {
                let s = e.stall.as_ref()?;
                Some(format!(
                    "{}: {rate} fell {:.0}% for {} s during the checkpoint at {:.0} s ({} before, it took {:.1} s)",
                    self.workload,
                    s.drop_percent,
                    s.seconds,
                    e.at_s,
                    format_rate(self.in_unit(e.before), &self.unit),
                    e.took_s
                ))
            })
            .collect()
    }
}

fn format_rate(v: f64, unit: &str) -> String {
    format!("{} {unit}", crate::metrics::format::count(v))
}

/// The answer's words on checkpoints, when any fell in a measured window: per
/// workload, how many of its checkpoints stalled its rate and the worst stall
/// (`checkpoints stalled new-order transactions in tight 2 of 3 times (at worst 83% down
/// for 3 s), in spread none of 3`).
pub fn clause(all: &[Checkpoints]) -> Option<String> {
    let judged: Vec<&Checkpoints> = all.iter().filter(|c| !c.effects.is_empty()).collect();
    let what = judged.first()?.what();
    let parts: Vec<String> = judged
        .iter()
        .map(|c| {
            let stalls: Vec<_> = c.effects.iter().filter_map(|e| e.stall.as_ref()).collect();
            let worst = stalls.iter().max_by(|a, b| a.drop_percent.total_cmp(&b.drop_percent));
            match worst {
                Some(s) => format!(
                    "in {} {} of {} times (at worst {:.0}% down for {} s)",
                    c.workload,
                    stalls.len(),
                    c.effects.len(),
                    s.drop_percent,
                    s.seconds
                ),
                None => format!("in {} none of {}", c.workload, c.effects.len()),
            }
        })
        .collect();
    Some(format!("checkpoints stalled {what} {}", parts.join(", ")))
}

/// Whether event `e` is a checkpoint of the server of `workload` (its label names the
/// workloads the server serves).
fn of_workload(e: &EventRow, workload: &str) -> bool {
    e.kind == "checkpoint" && e.label.split(',').any(|n| n == workload)
}

/// The checkpoints of every database workload of `run`.
pub fn analyze(
    store: &Store,
    run: i64,
    workloads: &[WorkloadSummary],
    phases: &[PhaseSummary],
) -> Result<Vec<Checkpoints>> {
    let observed = store.observation_summary(run, crate::observe::counter)?;
    let events = store.events(run)?;
    let mut out = Vec::new();
    for w in workloads {
        let name = &w.workload.name;
        let served = |source: &str| source.strip_prefix("postgres:").is_some_and(|s| s.split(',').any(|n| n == name));
        // a workload whose ops have no rate to read (TPC-H's queries) has none to stall
        if !observed.iter().any(|o| served(&o.source)) || !w.rated() {
            continue;
        }
        // the rate its program leads with: the leading op's (TPC-C's new orders, read
        // per minute as its NOPM), else every op's but a sync
        let leading = w.leading_op();
        // NOPM: a count per minute, as its program labels it
        let per_minute = w.stored.headline.as_ref().map(|h| h.figure.label.as_str()).filter(|l| l.ends_with("PM"));
        let (from, to) = w.workload.measured_window();
        let (from, to) = (from.ceil() as i64, to.floor() as i64);
        let mut per_second: Vec<(i64, f64)> = (from..to).map(|t| (t, 0.0)).collect();
        for (t, op, ops, _) in store.per_second_by_op(run, w.workload.idx, from, to)? {
            if leading.map_or(op.as_str() != "sync", |l| op.as_str() == l) {
                per_second[(t - from) as usize].1 += ops as f64;
            }
        }
        let effects = events
            .iter()
            .filter(|e| of_workload(e, name))
            .map(|e| {
                let start_s = e.at_ms as f64 / 1000.0;
                Checkpoint { start_s, end_s: start_s + e.took_ms.unwrap_or(0) as f64 / 1000.0 }
            })
            .filter_map(|c| stalls::effect(&per_second, c))
            .collect();
        let variation = phases
            .iter()
            .filter_map(|p| {
                let end = p.phase.end_t.unwrap_or(to);
                let seconds: Vec<f64> =
                    per_second.iter().filter(|(t, _)| (p.phase.start_t..end).contains(t)).map(|s| s.1).collect();
                Some((p.phase.label.clone(), stalls::variation(&seconds)?))
            })
            .collect();
        out.push(Checkpoints {
            workload: name.clone(),
            unit: per_minute.unwrap_or("TPS").to_string(),
            rate: leading.map(str::to_string),
            effects,
            variation,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::report::summary::RunSummary;
    use crate::store::fixture::{Fixture, Second};
    use crate::store::sink::Record;
    use crate::store::{EventRow, ObservationRow};

    const TWO: &str = "name: two\ndefaults: {target: /tmp, size: 1m, duration: 40s}\nworkloads:\n  w: {rw: randrw}\n  other: {rw: read}\n";

    fn checkpoint(at_ms: i64, took_ms: i64, label: &str) -> Record {
        let e = EventRow {
            at_ms,
            kind: "checkpoint".into(),
            label: label.into(),
            status: None,
            took_ms: Some(took_ms),
            detail: String::new(),
        };
        Record::Event(e)
    }

    /// A workload observed on its server: its checkpoints judged against its rate (a
    /// second that stored nothing counted as 0), another server's left alone.
    #[test]
    fn a_servers_checkpoints_are_judged_against_its_workloads_seconds() {
        let fx = Fixture::new("checkpoints-judged");
        let seen = ObservationRow {
            t: 1,
            source: "postgres:w".into(),
            name: "fathom_pg_stat_wal_bytes_total".into(),
            value: 1.0,
        };
        // 100 a second, but none at 22 and 23 (nothing stored) and 50 at 24
        let run = fx
            .run(TWO)
            .phase("p", &[("w", 1), ("other", 1)], 40, |at| match at.t {
                22 | 23 => Second::new(0, 0),
                24 => Second::new(50, 1_000),
                _ => Second::new(100, 1_000),
            })
            .record(Record::Observations(vec![seen]))
            .record(checkpoint(21_500, 2_000, "w"))
            .record(checkpoint(30_000, 1_000, "w"))
            .record(checkpoint(10_000, 9_000, "x,other"))
            .finish();
        let s = RunSummary::load(&fx.store(), &run.to_string()).unwrap();
        let c = &s.analysis.checkpoints;
        // only w's server was observed
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!((c[0].workload.as_str(), c[0].unit.as_str()), ("w", "TPS"));
        assert_eq!(c[0].effects.len(), 2);
        let stall = c[0].effects[0].stall.as_ref().unwrap();
        assert_eq!((stall.seconds, stall.from_s), (3, 22));
        assert!((stall.drop_percent - 100.0 * (1.0 - 50.0 / 300.0)).abs() < 1e-9, "{stall:?}");
        assert_eq!(c[0].effects[1].stall, None);
        assert_eq!(c[0].variation.len(), 1);
        let found = c[0].findings();
        assert_eq!(found.len(), 1);
        assert!(
            found[0].starts_with("w: TPS fell 83% for 3 s during the checkpoint at 22 s (100 TPS before"),
            "{found:?}"
        );
        // the answer's words: how many stalled, and the worst
        assert_eq!(super::clause(c).unwrap(), "checkpoints stalled TPS in w 1 of 2 times (at worst 83% down for 3 s)");
        assert_eq!(super::clause(&[]), None);
    }
}
