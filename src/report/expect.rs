//! Checks a scenario's expectations against what a run stored: each one's metric over
//! its workload's measured window, or over the phases it names with `during`; a
//! relative one against the same metric in another phase or of another workload. The
//! verdicts together make the run's one-line answer to its scenario's `question`.

use super::headline::Quoted;
use crate::analysis::noise::{Change, Interval};
use crate::error::Result;
use crate::metrics::summary::Throughput;
use crate::metrics::{Op, OpStats};
use crate::scenario::expect::{self, Cmp, Expectation, Metric, Reference};
use crate::store::read::StoredWorkload;
use crate::store::{ExpectationRow, PhaseRow, Store, WorkloadRow};
use serde::Serialize;
use std::collections::BTreeMap;

/// Evaluates every expectation of run `run`; the rows say what was measured.
pub fn check(store: &Store, run: i64, expect: &[Expectation]) -> Result<Vec<ExpectationRow>> {
    let workloads = store.workloads(run)?;
    let phases = store.phases(run)?;
    // one workload's figure (op, metric) over the phases `during` names, and with
    // `samples` its per-second samples there
    let figure = |workload: usize, op: Option<Op>, metric: Metric, during: Option<&str>, samples: bool| {
        let Some(w) = workloads.iter().find(|w| w.idx == workload as i64) else {
            return Ok((None, Vec::new())); // never started (the run stopped early)
        };
        let spans = windows(during, w, &workloads, &phases, samples);
        let subject = Subject { store, run, op, metric, w, spans: &spans };
        let seconds = if samples { subject.per_second()? } else { Vec::new() };
        Result::Ok((subject.measure()?, seconds))
    };
    let mut rows = Vec::new();
    for e in expect {
        let (measured, own) = figure(e.workload, e.op, e.metric, e.during.as_deref(), e.beyond_noise)?;
        let (reference, theirs) = match &e.relative {
            // a rate per core keeps the cores it was divided by, which its verdict says
            None if e.metric == Metric::MbPerSPerCore => {
                (workloads.iter().find(|w| w.idx == e.workload as i64).map(|w| w.workers as f64), Vec::new())
            }
            None => (None, Vec::new()),
            Some(Reference::Phase(p)) => figure(e.workload, e.op, e.metric, Some(p), e.beyond_noise)?,
            Some(Reference::Workload { workload, op, .. }) => figure(*workload, *op, e.metric, None, e.beyond_noise)?,
        };
        let noise = e.beyond_noise.then(|| Noise::of(&own, &theirs, e.threshold));
        rows.push(judge(e, measured, reference, noise));
    }
    Ok(rows)
}

/// What `beyond noise` found: an expectation's per-second samples against those of
/// its reference times its factor, by the test `fathom compare` calls a change with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Noise {
    /// Better: the subject is above the scaled reference beyond the noise; Worse:
    /// below it; Noise: within it, or too few seconds to tell.
    pub change: Change,
    /// The difference the noise hides, in the metric's unit (the two intervals'
    /// half-widths summed); None with under two seconds of either.
    pub margin: Option<f64>,
}

impl Noise {
    pub fn of(subject: &[f64], reference: &[f64], factor: f64) -> Noise {
        let scaled: Vec<f64> = reference.iter().map(|r| r * factor).collect();
        let margin = match (Interval::of(&scaled), Interval::of(subject)) {
            (Some(r), Some(s)) => Some(r.margin(&s)),
            _ => None,
        };
        Noise { change: Change::judge(&scaled, subject, true), margin }
    }
}

/// The verdict on one expectation given its figure, for a relative one the figure it
/// is compared with, and for `beyond noise` what their samples say; nothing measured
/// fails. With `beyond noise`, the comparison must hold on the figures and the samples
/// must differ beyond their noise in its direction: above for `>` and `>=`, below for
/// `<` and `<=` (so `>=` reads as `>`: a tie is never beyond the noise).
pub fn judge(e: &Expectation, measured: Option<f64>, reference: Option<f64>, noise: Option<Noise>) -> ExpectationRow {
    let holds = match (&e.relative, measured, reference) {
        (None, Some(m), _) => e.cmp.holds(m, e.threshold),
        (Some(_), Some(m), Some(r)) => e.cmp.holds(m, e.threshold * r),
        _ => false,
    };
    let noise = noise.filter(|_| e.beyond_noise && measured.is_some() && reference.is_some());
    let beyond = match (e.beyond_noise, noise) {
        (false, _) => true,
        (true, None) => false,
        (true, Some(n)) => n.change == if matches!(e.cmp, Cmp::Gt | Cmp::Ge) { Change::Better } else { Change::Worse },
    };
    ExpectationRow {
        text: e.text.clone(),
        measured,
        reference: reference.filter(|_| e.relative.is_some() || e.metric == Metric::MbPerSPerCore),
        passed: holds && beyond,
        noise: noise.and_then(|n| n.margin),
        beyond_noise: e.beyond_noise.then(|| noise.is_some_and(|n| n.change != Change::Noise)),
    }
}

/// The seconds `[from, to)` a figure looks at: the workload's measured window, cut to
/// the phases labelled `during` or, if none is, to the measured window of the workload
/// of that name.
fn windows(during: Option<&str>, w: &WorkloadRow, all: &[WorkloadRow], phases: &[PhaseRow], whole: bool) -> Vec<Span> {
    let (from, to) = w.measured_window();
    let own = (from as i64, to.floor() as i64);
    let Some(during) = during else {
        // the workload's own figures as `fathom show` gives them: a last second it ended
        // in (its query sets done, say) counts for the part of it that it ran; unless the
        // figure is the mean of whole seconds, judged against their noise
        let span = if whole {
            Span::whole(own.0, own.1)
        } else {
            Span { from: own.0, to: to.ceil() as i64, seconds: to - from }
        };
        return vec![span].into_iter().filter(|s| s.seconds > 0.0).collect();
    };
    let labelled: Vec<(i64, i64)> =
        phases.iter().filter(|p| p.label == during).map(|p| (p.start_t, p.end_t.unwrap_or(own.1))).collect();
    let spans = if labelled.is_empty() {
        all.iter()
            .filter(|o| o.name == during)
            .map(|o| {
                let (f, t) = o.measured_window();
                (f as i64, t.floor() as i64)
            })
            .collect()
    } else {
        labelled
    };
    spans
        .into_iter()
        .map(|(f, t)| (f.max(own.0), t.min(own.1)))
        .filter(|(f, t)| t > f)
        .map(|(from, to)| Span::whole(from, to))
        .collect()
}

/// A stretch an expectation is measured over: the store's seconds `[from, to)`, and how
/// long the workload ran in them (less than `to - from` when it ended within the last).
#[derive(Debug, Clone, Copy)]
struct Span {
    from: i64,
    to: i64,
    seconds: f64,
}

impl Span {
    /// The seconds `[from, to)`, each run in whole.
    fn whole(from: i64, to: i64) -> Span {
        Span { from, to, seconds: (to - from) as f64 }
    }
}

/// What an expectation measures: a metric of one op (or all but syncs) of workload `w`
/// of run `run` over `spans`.
struct Subject<'a> {
    store: &'a Store,
    run: i64,
    op: Option<Op>,
    metric: Metric,
    w: &'a WorkloadRow,
    spans: &'a [Span],
}

impl Subject<'_> {
    /// The metric over the spans, or None if nothing was measured there.
    fn measure(&self) -> Result<Option<f64>> {
        let (op, metric, w) = (self.op, self.metric, self.w);
        let mut all: Option<OpStats> = None;
        let mut seconds = 0.0;
        for span in self.spans {
            seconds += span.seconds;
            for (seen, stats) in self.store.window(self.run, w.idx, span.from, span.to)? {
                if !counted(op, seen) {
                    continue;
                }
                match &mut all {
                    Some(acc) => acc.merge(&stats),
                    None => all = Some(stats),
                }
            }
        }
        // a rate or a byte count is measured by any second stored; a latency needs ops
        let Some(s) = all.filter(|s| s.ops > 0 || !metric.needs_ops()) else { return Ok(None) };
        let iops = s.ops as f64 / seconds;
        let mb_per_s = s.bytes as f64 / seconds / 1e6;
        Ok(match metric {
            Metric::Rate(unit) => Some(unit.rate(iops, mb_per_s)),
            Metric::MbPerS => Some(mb_per_s),
            Metric::MbPerSPerCore => Some(mb_per_s / w.workers.max(1) as f64),
            Metric::MeanLatency => Some(s.latency_sum_ns as f64 / s.ops as f64),
            Metric::Latency(q) if q >= 1.0 => Some(s.latency.max() as f64),
            Metric::Latency(q) => Some(s.latency.value_at_quantile(q) as f64),
            Metric::AchievedRate => w.rate_iops.map(|rate| {
                let share = op.map(|op| op.rate_share(StoredWorkload::decode(w).read_share())).unwrap_or(1.0);
                if share > 0.0 { iops / (rate * share) } else { 0.0 }
            }),
        })
    }

    /// A rate's per-second samples over the spans, every second of them, those that
    /// moved nothing as 0: their mean is the figure [`Subject::measure`] gives. Empty
    /// for a metric that is no rate.
    fn per_second(&self) -> Result<Vec<f64>> {
        let rate = |ops: u64, bytes: u64| match self.metric {
            Metric::Rate(unit) => Some(unit.rate(ops as f64, bytes as f64 / 1e6)),
            Metric::MbPerS => Some(bytes as f64 / 1e6),
            Metric::MbPerSPerCore => Some(bytes as f64 / 1e6 / self.w.workers.max(1) as f64),
            _ => None,
        };
        let mut out = Vec::new();
        for span in self.spans {
            // whole seconds only: a part of one is no sample of a rate
            let (from, to) = (span.from, span.from + span.seconds.floor() as i64);
            let mut seconds: BTreeMap<i64, (u64, u64)> = (from..to).map(|t| (t, (0, 0))).collect();
            for (t, seen, ops, bytes) in self.store.per_second_by_op(self.run, self.w.idx, from, to)? {
                if counted(self.op, seen) {
                    let s = seconds.entry(t).or_default();
                    (s.0, s.1) = (s.0 + ops, s.1 + bytes);
                }
            }
            out.extend(seconds.into_values().filter_map(|(ops, bytes)| rate(ops, bytes)));
        }
        Ok(out)
    }
}

/// Whether an op seen is one a figure of `op` counts: syncs are not IOs of the mix,
/// only counted when asked for.
fn counted(op: Option<Op>, seen: Op) -> bool {
    match op {
        Some(o) => o == seen,
        None => seen != Op::Sync,
    }
}

/// An expectation as stored, its text parsed again with the run's workload names (any
/// name will do where only its metric matters: `names` empty).
fn parsed(row: &ExpectationRow, names: &[String]) -> Option<Expectation> {
    let index_of = |n: &str| if names.is_empty() { Some(0) } else { names.iter().position(|w| w == n) };
    expect::parse(&row.text, &index_of).ok()
}

/// A figure in its metric's unit: `3.15 ms`, `4,000`, `9.41 Gbit/s`, `1.000`.
fn value(v: f64, metric: Option<Metric>) -> String {
    match metric {
        Some(Metric::Latency(_) | Metric::MeanLatency) => super::format::latency_us(v / 1000.0),
        Some(Metric::AchievedRate) => format!("{v:.3}"),
        Some(Metric::MbPerS | Metric::MbPerSPerCore) => format!("{} MB/s", super::format::sig3(v)),
        Some(Metric::Rate(unit @ Throughput::Gbits)) => super::format::rate_in(v, unit),
        _ => super::format::count(v),
    }
}

/// `pass oltp.read.iops >= 3900 during dss: 3,950` lines (a relative one with the figure
/// it was compared with).
pub fn describe(rows: &[ExpectationRow]) -> String {
    let mut out = String::from("\nexpectations:\n");
    for row in rows {
        let verdict = if row.passed { "pass" } else { "FAIL" };
        match band(row) {
            Some((within, limit)) => out.push_str(&format!("  {verdict} {within} {limit}: {}\n", band_share(row))),
            None => out.push_str(&format!("  {verdict} {}: {}\n", row.text, measured_text(row))),
        }
    }
    out
}

/// What an expectation measured, in its metric's unit (`4.11 ms`, `3,950`), with the
/// figure a relative one was compared with, or a band's share of seconds: the words
/// of the run's summary, which the report's table repeats.
pub fn measured_text(row: &ExpectationRow) -> String {
    if band(row).is_some() {
        return band_share(row);
    }
    let e = parsed(row, &[]);
    let metric = e.as_ref().map(|e| e.metric);
    let mut measured = match row.measured {
        None => "nothing measured".to_string(),
        Some(v) => value(v, metric),
    };
    match (row.reference, e.as_ref().and_then(|e| cores(row, e))) {
        (_, Some(cores)) => {
            measured.push_str(&format!(" over {}", crate::metrics::format::counted(cores as u64, "core")))
        }
        (Some(r), None) => measured.push_str(&format!(" against {}", value(r, metric))),
        (None, None) => {}
    }
    if let (Some(_), Some(e)) = (row.beyond_noise, &e) {
        measured.push_str(&format!(", {}", noise_text(row, e)));
    }
    measured
}

/// The cores an absolute rate per core was divided by (the workload's workers).
fn cores(row: &ExpectationRow, e: &Expectation) -> Option<f64> {
    row.reference.filter(|_| e.relative.is_none() && e.metric == Metric::MbPerSPerCore)
}

/// What `beyond noise` found, in words: `within the noise of their per-second samples
/// (±2.1%)`, in % of the reference times its factor (in the metric's unit when that is 0).
fn noise_text(row: &ExpectationRow, e: &Expectation) -> String {
    let scaled = row.reference.map(|r| r * e.threshold).filter(|s| *s > 0.0);
    match (row.beyond_noise, row.noise) {
        (Some(beyond), Some(n)) => {
            let side = if beyond { "beyond" } else { "within" };
            let margin = match scaled {
                Some(s) => percent(n / s * 100.0),
                None => value(n, Some(e.metric)),
            };
            format!("{side} the noise of their per-second samples (±{margin})")
        }
        (Some(_), None) => "too few seconds to tell from the noise (under 2 of one of them)".to_string(),
        (None, _) => "the noise not judged".to_string(),
    }
}

/// `0.4% above`, `12% below`, `level with`: a figure against what it is compared with.
fn difference(m: f64, against: f64) -> String {
    if m == against {
        return "level with".into();
    }
    let side = if m > against { "above" } else { "below" };
    if against > 0.0 { format!("{} {side}", percent((m / against - 1.0).abs() * 100.0)) } else { side.into() }
}

/// A percentage to read at a glance: `0.42%`, `2.1%`, `12%`.
fn percent(p: f64) -> String {
    if p >= 10.0 {
        format!("{p:.0}%")
    } else if p >= 1.0 {
        format!("{p:.1}%")
    } else {
        format!("{p:.2}%")
    }
}

/// A run's answer to its scenario's question, in one line: every expectation's verdict
/// with the figures that decided it, then PASS or FAIL for them all.
#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    /// The scenario's `question:`, when it has one.
    pub question: Option<String>,
    /// `oltp-data kept 100% of its rate in phase during; oltp-data p99 rose 84x from before
    /// to during, 3.15 ms -> 266 ms (limit <= 2x): FAIL`
    pub answer: String,
    pub passed: bool,
}

impl Answer {
    /// None for a run that was not judged (it did not complete, or `--no-expect`).
    pub fn of(question: Option<String>, rows: &[ExpectationRow], names: &[String]) -> Option<Answer> {
        if rows.is_empty() {
            return None;
        }
        let passed = rows.iter().all(|r| r.passed);
        let answer = format!("{}: {}", clauses(rows, names).join("; "), if passed { "PASS" } else { "FAIL" });
        Some(Answer { question, answer, passed })
    }

    /// Leads the answer with the run's headline (`42,590 NOPM from 101,575 TPM; ...`)
    /// unless an expectation already judges its rate: the figure the question asks
    /// about comes first, even when what is judged is only its response times.
    pub fn lead(&mut self, headline: &Quoted, rows: &[ExpectationRow], names: &[String]) {
        let rated = |r: &ExpectationRow| {
            parsed(r, names).is_some_and(|e| {
                matches!(e.metric, Metric::Rate(_) | Metric::MbPerS | Metric::MbPerSPerCore | Metric::AchievedRate)
            })
        };
        if headline.declared || !rows.iter().any(rated) {
            self.answer = format!("{}; {}", headline.text, self.answer);
        }
    }

    /// The line printed first: the question, then its answer.
    pub fn line(&self) -> String {
        match &self.question {
            Some(q) => format!("{q} {}", self.answer),
            None => self.answer.clone(),
        }
    }
}

/// One clause per expectation, but a workload's absolute limits on one latency figure of
/// its ops, all holding, read as one (`oltp: every transaction type's p90 within its
/// limit`): five passing limits in a row hide the figure the answer is about.
fn clauses(rows: &[ExpectationRow], names: &[String]) -> Vec<String> {
    let limit = |r: &ExpectationRow| {
        let e = parsed(r, names).filter(|e| e.relative.is_none() && e.during.is_none())?;
        let (op, Metric::Latency(q)) = (e.op?, e.metric) else { return None };
        Some((e.name, q, op.unit()))
    };
    let mut out = Vec::new();
    let mut said: Vec<(String, f64)> = Vec::new();
    for r in rows {
        if let Some((name, q, unit)) = limit(r) {
            let same: Vec<&ExpectationRow> =
                rows.iter().filter(|o| limit(o).is_some_and(|(n, p, _)| n == name && p == q)).collect();
            if same.len() >= 2 && same.iter().all(|o| o.passed) {
                if !said.contains(&(name.clone(), q)) {
                    let kind = if unit == Throughput::Tps { "transaction type" } else { "op" };
                    out.push(format!("{name}: every {kind}'s p{} within its limit", q * 100.0));
                    said.push((name, q));
                }
                continue;
            }
        }
        out.push(clause(r, names));
    }
    out
}

/// One expectation's verdict in words, with its deciding figures.
fn clause(row: &ExpectationRow, names: &[String]) -> String {
    if let Some((within, limit)) = band(row) {
        return format!("{within} for {} {limit}", band_share(row));
    }
    let Some(e) = parsed(row, names) else {
        return format!("{}: {}", row.text, if row.passed { "pass" } else { "FAIL" });
    };
    let op = e.op.map(|o| format!(" {}", o.as_str())).unwrap_or_default();
    let word = match e.metric {
        Metric::Rate(unit) => unit.label().to_string(),
        Metric::MbPerS => "MB/s".to_string(),
        Metric::MbPerSPerCore => "MB/s per core".to_string(),
        Metric::MeanLatency => "mean latency".to_string(),
        Metric::Latency(q) if q >= 1.0 => "max latency".to_string(),
        Metric::Latency(q) => format!("p{}", q * 100.0),
        Metric::AchievedRate => "rate".to_string(),
    };
    let subject = format!("{}{op} {word}", e.name);
    // phases are named by the user (db-colocation's is `during`): "in phase during"
    let during = e.during.as_deref().map(|d| format!(" in phase {d}")).unwrap_or_default();
    let Some(m) = row.measured else { return format!("{subject}{during}: nothing measured") };
    let metric = Some(e.metric);
    match (&e.relative, row.reference) {
        (None, _) if e.metric == Metric::AchievedRate => format!(
            "{}{op} kept {:.0}% of its rate{during} (limit {} {:.0}%)",
            e.name,
            m * 100.0,
            e.cmp,
            e.threshold * 100.0
        ),
        (None, Some(cores)) if e.metric == Metric::MbPerSPerCore => format!(
            "{subject}{during} {} over {} (limit {} {})",
            value(m, metric),
            crate::metrics::format::counted(cores as u64, "core"),
            e.cmp,
            value(e.threshold, metric)
        ),
        (None, _) => format!("{subject}{during} {} (limit {} {})", value(m, metric), e.cmp, value(e.threshold, metric)),
        (Some(_), None) => format!("{subject}{during} {}; nothing measured to compare with", value(m, metric)),
        (Some(reference), Some(r)) if e.beyond_noise => {
            let compared = match reference {
                Reference::Phase(p) => format!("its own in phase {p}"),
                Reference::Workload { name, .. } => format!("{name}'s"),
            };
            let scaled = if e.threshold == 1.0 { compared } else { format!("{}x {compared}", e.threshold) };
            format!(
                "{subject}{during} is {} {scaled}, {}, {} -> {} (limit {} {}x beyond noise)",
                difference(m, e.threshold * r),
                noise_text(row, &e),
                value(r, metric),
                value(m, metric),
                e.cmp,
                e.threshold
            )
        }
        (Some(reference), Some(r)) => {
            let ratio = if r > 0.0 { format!("{}x", ratio(m / r)) } else { "infinitely".into() };
            let limit = format!("limit {} {}x", e.cmp, e.threshold);
            let (from, to) = (value(r, metric), value(m, metric));
            match reference {
                Reference::Phase(p) => {
                    let verb = if m > r {
                        "rose"
                    } else if m < r {
                        "fell"
                    } else {
                        "held"
                    };
                    let to_phase = e.during.as_deref().unwrap_or("its measured window");
                    format!("{subject} {verb} {ratio} from {p} to {to_phase}, {from} -> {to} ({limit})")
                }
                Reference::Workload { name, .. } => {
                    format!("{subject}{during} is {ratio} {name}'s, {from} -> {to} ({limit})")
                }
            }
        }
    }
}

/// A result view's band as stored (`OLTP IOPS in 95% band [4,072, 4,327] IOPS >= 95%`, see
/// [`crate::report::results::band_rows`]): the band and its limit.
fn band(row: &ExpectationRow) -> Option<(&str, &str)> {
    let at = row.text.rfind(" >= ")?;
    let (within, limit) = (&row.text[..at], &row.text[at + 1..]);
    (within.contains(" band [") && parsed(row, &[]).is_none()).then_some((within, limit))
}

/// `97.0% of 312 s`: the share of a band's seconds inside it.
fn band_share(row: &ExpectationRow) -> String {
    let seconds = row.reference.unwrap_or(0.0);
    match row.measured {
        Some(share) => format!("{:.1}% of {seconds} s", share * 100.0),
        None => "no second measured".to_string(),
    }
}

/// A ratio to read at a glance: `84`, `2.1`, `1.03`.
fn ratio(r: f64) -> String {
    if r >= 10.0 {
        format!("{r:.0}")
    } else if r >= 2.0 {
        format!("{r:.1}")
    } else {
        format!("{r:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{Scenario, Source, builtin};

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|n| n.to_string()).collect()
    }

    fn expectations_of(name: &str) -> Vec<Expectation> {
        let text = builtin::find(name).unwrap();
        Scenario::load(&Source { origin: name.into(), text }, &[]).unwrap().expect
    }

    /// The figures of the db-colocation run: OLTP kept its whole rate while its
    /// p99 went from 3.15 ms before DSS to 266 ms during it.
    fn colocation_figures(e: &Expectation) -> (Option<f64>, Option<f64>) {
        let p99 = |phase: &str| if phase == "before" { 3.15e6 } else { 266e6 };
        match (&e.metric, &e.relative) {
            (Metric::AchievedRate, _) => (Some(1.0), None),
            (Metric::Latency(_), Some(Reference::Phase(reference))) => {
                (Some(p99(e.during.as_deref().unwrap())), Some(p99(reference)))
            }
            other => panic!("an expectation the study did not have: {other:?}"),
        }
    }

    #[test]
    fn db_colocation_fails_when_oltp_keeps_its_rate_but_not_its_latency() {
        let expect = expectations_of("db-colocation");
        // the verdict the issue read as green: rate alone
        let rate_only: Vec<ExpectationRow> = expect
            .iter()
            .filter(|e| e.metric == Metric::AchievedRate)
            .map(|e| {
                let (m, r) = colocation_figures(e);
                judge(e, m, r, None)
            })
            .collect();
        assert!(!rate_only.is_empty() && rate_only.iter().all(|r| r.passed));
        // the study's verdict: rate and latency
        let rows: Vec<ExpectationRow> = expect
            .iter()
            .map(|e| {
                let (m, r) = colocation_figures(e);
                judge(e, m, r, None)
            })
            .collect();
        let p99 = rows.iter().find(|r| r.text == "oltp-data.p99 during during <= 2 x before").expect("judged on p99");
        assert!(!p99.passed && p99.reference == Some(3.15e6), "{p99:?}");
        let answer = Answer::of(
            Some("does OLTP keep its rate and latency while DSS runs?".into()),
            &rows,
            &names(&["oltp-data"]),
        )
        .unwrap();
        assert!(!answer.passed);
        let line = answer.line();
        assert!(line.starts_with("does OLTP keep its rate and latency while DSS runs? "), "{line}");
        assert!(line.contains("oltp-data kept 100% of its rate in phase during"), "{line}");
        assert!(line.contains("p99 rose 84x from before to during, 3.15 ms -> 266 ms (limit <= 2x)"), "{line}");
        assert!(line.ends_with(": FAIL"), "{line}");
    }

    #[test]
    fn relative_expectations_scale_their_reference() {
        let index_of = |n: &str| ["qd1", "qd64"].iter().position(|w| *w == n);
        let e = expect::parse("qd64.iops >= 2 x qd1.iops", &index_of).unwrap();
        assert!(judge(&e, Some(2000.0), Some(1000.0), None).passed);
        assert!(!judge(&e, Some(1999.0), Some(1000.0), None).passed);
        // nothing to compare with fails, as nothing measured does
        assert!(!judge(&e, Some(2000.0), None, None).passed);
        assert!(!judge(&e, None, Some(1000.0), None).passed);
        let rows = [judge(&e, Some(45_000.0), Some(1500.0), None)];
        let answer = Answer::of(None, &rows, &names(&["qd1", "qd64"])).unwrap();
        assert_eq!(answer.line(), "qd64 IOPS is 30x qd1's, 1,500 -> 45,000 (limit >= 2x): PASS");
        // an absolute one keeps its unit; an unjudged run has no answer
        let e = expect::parse("qd1.p99 < 5ms", &index_of).unwrap();
        let rows = [judge(&e, Some(1.2e6), None, None)];
        assert_eq!(
            Answer::of(None, &rows, &names(&["qd1"])).unwrap().answer,
            "qd1 p99 1.20 ms (limit < 5.00 ms): PASS"
        );
        assert!(Answer::of(None, &[], &[]).is_none());
    }

    #[test]
    fn a_result_band_reads_with_its_share_of_seconds() {
        let band = |measured, passed| ExpectationRow {
            text: "OLTP IOPS in 95% band [4,072, 4,327] IOPS >= 95%".into(),
            measured,
            reference: Some(312.0),
            passed,
            noise: None,
            beyond_noise: None,
        };
        let answer = Answer::of(None, &[band(Some(0.97), true)], &names(&["oltp"])).unwrap();
        assert_eq!(answer.line(), "OLTP IOPS in 95% band [4,072, 4,327] IOPS for 97.0% of 312 s >= 95%: PASS");
        let text = describe(&[band(Some(0.5), false), band(None, false)]);
        assert!(text.contains("FAIL OLTP IOPS in 95% band [4,072, 4,327] IOPS >= 95%: 50.0% of 312 s"), "{text}");
        assert!(text.contains(">= 95%: no second measured"), "{text}");
    }

    /// Per-second TPS of an A side scattering by about 2%, and a B side `factor` times it.
    fn ab(factor: f64) -> (Vec<f64>, Vec<f64>) {
        let a = vec![1000.0, 1020.0, 980.0, 1010.0, 990.0];
        let b = a.iter().map(|x| x * factor).collect();
        (a, b)
    }

    fn mean(v: &[f64]) -> f64 {
        v.iter().sum::<f64>() / v.len() as f64
    }

    /// `text` judged on samples `b` (its subject) against `a` (its reference).
    fn judged(text: &str, a: &[f64], b: &[f64]) -> ExpectationRow {
        let e = expect::parse_among(text, &["a", "b"]).unwrap();
        judge(&e, Some(mean(b)), Some(mean(a)), Some(Noise::of(b, a, e.threshold)))
    }

    #[test]
    fn a_difference_within_the_noise_does_not_pass_and_says_so() {
        // 0.4% more TPS, with seconds scattering by 2%: more on the figures, but no more
        // than the same settings on both sides would give
        let (a, b) = ab(1.004);
        assert!(
            judge(
                &expect::parse_among("b.tps > 1 x a.tps", &["a", "b"]).unwrap(),
                Some(mean(&b)),
                Some(mean(&a)),
                None
            )
            .passed
        );
        let row = judged("b.tps > 1 x a.tps beyond noise", &a, &b);
        assert!(!row.passed, "{row:?}");
        assert_eq!(row.beyond_noise, Some(false));
        // s = 15.8 on either side, t(4) = 2.776: each half-width 1.96%, summed 3.9%
        assert!((row.noise.unwrap() - 39.3).abs() < 0.05, "{row:?}");
        let answer = Answer::of(None, std::slice::from_ref(&row), &names(&["a", "b"])).unwrap();
        assert_eq!(
            answer.line(),
            "b TPS is 0.40% above a's, within the noise of their per-second samples (±3.9%), 1,000 -> 1,004 \
             (limit > 1x beyond noise): FAIL"
        );
        let text = describe(&[row]);
        assert!(text.contains("FAIL b.tps > 1 x a.tps beyond noise: 1,004 against 1,000, within the noise"), "{text}");
    }

    #[test]
    fn a_difference_beyond_the_noise_passes_in_its_direction() {
        let (a, b) = ab(1.1);
        let row = judged("b.tps > 1 x a.tps beyond noise", &a, &b);
        assert!(row.passed && row.beyond_noise == Some(true), "{row:?}");
        let answer = Answer::of(None, &[row], &names(&["a", "b"])).unwrap();
        assert!(
            answer.line().starts_with("b TPS is 10% above a's, beyond the noise of their per-second samples (±4.1%)"),
            "{}",
            answer.line()
        );
        // `>=` needs the same: a tie is never beyond the noise
        assert!(judged("b.tps >= 1 x a.tps beyond noise", &a, &b).passed);
        assert!(!judged("b.tps >= 1 x a.tps beyond noise", &a, &a).passed);
        // the other direction: b above a beyond the noise fails `<`, a below b passes it
        let row = judged("b.tps < 1 x a.tps beyond noise", &a, &b);
        assert!(!row.passed && row.beyond_noise == Some(true), "{row:?}");
        assert!(judged("b.tps < 1 x a.tps beyond noise", &b, &a).passed);
        assert!(judged("b.tps <= 1 x a.tps beyond noise", &b, &a).passed);
        assert!(!judged("b.tps > 1 x a.tps beyond noise", &b, &a).passed);
    }

    #[test]
    fn beyond_noise_scales_the_reference_by_its_factor() {
        // twice and a bit on the figures: within the noise of twice a
        let (a, b) = ab(2.01);
        let row = judged("b.tps >= 2 x a.tps beyond noise", &a, &b);
        assert!(!row.passed && row.beyond_noise == Some(false), "{row:?}");
        let (a, b) = ab(2.5);
        let row = judged("b.tps >= 2 x a.tps beyond noise", &a, &b);
        assert!(row.passed, "{row:?}");
        let line = Answer::of(None, &[row], &names(&["a", "b"])).unwrap().line();
        assert!(line.starts_with("b TPS is 25% above 2x a's, beyond the noise"), "{line}");
        // a factor of 0 leaves no figure to take a percentage of: the noise in TPS
        let row = judged("b.tps > 0 x a.tps beyond noise", &a, &b);
        let line = Answer::of(None, &[row], &names(&["a", "b"])).unwrap().line();
        assert!(
            line.starts_with("b TPS is above 0x a's, beyond the noise of their per-second samples (±49)"),
            "{line}"
        );
    }

    #[test]
    fn too_few_seconds_cannot_pass_beyond_the_noise() {
        // a doubling measured for one second of each
        let row = judged("b.tps > 1 x a.tps beyond noise", &[1000.0], &[2000.0]);
        assert!(!row.passed && row.noise.is_none() && row.beyond_noise == Some(false), "{row:?}");
        let line = Answer::of(None, &[row], &names(&["a", "b"])).unwrap().line();
        assert!(line.contains("is 100% above a's, too few seconds to tell from the noise"), "{line}");
        // nothing measured on one side fails, as without the qualifier
        let e = expect::parse_among("b.tps > 1 x a.tps beyond noise", &["a", "b"]).unwrap();
        let row = judge(&e, Some(2000.0), None, Some(Noise::of(&[2000.0, 2001.0], &[], 1.0)));
        assert!(!row.passed, "{row:?}");
    }
}
