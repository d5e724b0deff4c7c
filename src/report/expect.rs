//! Checks a scenario's expectations against what a run stored: each one's metric over
//! its workload's measured window, or over the phases it names with `during`.

use crate::error::Result;
use crate::metrics::{Op, OpStats};
use crate::scenario::expect::{Expectation, Metric};
use crate::store::read::StoredWorkload;
use crate::store::{ExpectationRow, PhaseRow, Store, WorkloadRow};

/// Evaluates every expectation of run `run`; the rows say what was measured.
pub fn check(store: &Store, run: i64, expect: &[Expectation]) -> Result<Vec<ExpectationRow>> {
    let workloads = store.workloads(run)?;
    let phases = store.phases(run)?;
    let mut rows = Vec::new();
    for e in expect {
        let measured = match workloads.iter().find(|w| w.idx == e.workload as i64) {
            Some(w) => measure(store, run, e, w, &windows(e, w, &workloads, &phases))?,
            None => None, // never started (the run stopped early)
        };
        let passed = measured.is_some_and(|m| e.cmp.holds(m, e.threshold));
        rows.push(ExpectationRow { text: e.text.clone(), measured, passed });
    }
    Ok(rows)
}

/// The seconds `[from, to)` an expectation looks at: the workload's measured window, cut
/// to the phases labelled `during` or, if none is, to the measured window of the
/// workload of that name.
fn windows(e: &Expectation, w: &WorkloadRow, all: &[WorkloadRow], phases: &[PhaseRow]) -> Vec<(i64, i64)> {
    let (from, to) = w.measured_window();
    let own = (from as i64, to.floor() as i64);
    let Some(during) = &e.during else { return vec![own] };
    let labelled: Vec<(i64, i64)> =
        phases.iter().filter(|p| &p.label == during).map(|p| (p.start_t, p.end_t.unwrap_or(own.1))).collect();
    let spans = if labelled.is_empty() {
        all.iter()
            .filter(|o| &o.name == during)
            .map(|o| {
                let (f, t) = o.measured_window();
                (f as i64, t.floor() as i64)
            })
            .collect()
    } else {
        labelled
    };
    spans.into_iter().map(|(f, t)| (f.max(own.0), t.min(own.1))).filter(|(f, t)| t > f).collect()
}

/// The expectation's metric over `spans`, or None if nothing was measured there.
fn measure(store: &Store, run: i64, e: &Expectation, w: &WorkloadRow, spans: &[(i64, i64)]) -> Result<Option<f64>> {
    let mut all: Option<OpStats> = None;
    let mut seconds = 0.0;
    let mut ops_seen: Vec<Op> = Vec::new();
    for &(from, to) in spans {
        seconds += (to - from) as f64;
        for (op, stats) in store.window(run, w.idx, from, to)? {
            // syncs are not IOs of the mix: only counted when asked for
            if e.op.is_some_and(|o| o != op) || (e.op.is_none() && op == Op::Sync) {
                continue;
            }
            ops_seen.push(op);
            match &mut all {
                Some(acc) => acc.merge(&stats),
                None => all = Some(stats),
            }
        }
    }
    let Some(s) = all.filter(|s| s.ops > 0) else { return Ok(None) };
    let iops = s.ops as f64 / seconds;
    Ok(match e.metric {
        Metric::Iops => Some(iops),
        Metric::MbPerS => Some(s.bytes as f64 / seconds / 1e6),
        Metric::MeanLatency => Some(s.latency_sum_ns as f64 / s.ops as f64),
        Metric::Latency(q) if q >= 1.0 => Some(s.latency.max() as f64),
        Metric::Latency(q) => Some(s.latency.value_at_quantile(q) as f64),
        Metric::AchievedRate => w.rate_iops.map(|rate| {
            let share = e.op.map(|op| op.rate_share(StoredWorkload::decode(w).read_share())).unwrap_or(1.0);
            if share > 0.0 { iops / (rate * share) } else { 0.0 }
        }),
    })
}

/// `pass oltp.read.iops >= 3900 during dss: 3,950` lines.
pub fn describe(rows: &[ExpectationRow]) -> String {
    let mut out = String::from("\nexpectations:\n");
    for row in rows {
        // the metric decides the unit; the text parsed again says which it is
        let metric = crate::scenario::expect::parse(&row.text, &|_| Some(0)).map(|e| e.metric).ok();
        let value = match (row.measured, metric) {
            (None, _) => "nothing measured".to_string(),
            (Some(v), Some(Metric::Latency(_) | Metric::MeanLatency)) => super::format::latency_us(v / 1000.0),
            (Some(v), Some(Metric::AchievedRate)) => format!("{v:.3}"),
            (Some(v), _) => super::format::count(v),
        };
        out.push_str(&format!("  {} {}: {value}\n", if row.passed { "pass" } else { "FAIL" }, row.text));
    }
    out
}
