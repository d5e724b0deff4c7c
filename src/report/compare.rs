//! `fathom compare`: runs side by side, as a performance engineer can trust them. First
//! what differs between the runs' configurations (every workload setting, how long it
//! ran, the scenario, the host and fathom's version), then the figures of the phases
//! that ran the same workloads, each once, each change from the first run called better
//! or worse only when it exceeds the noise of the runs' own per-second samples
//! ([`crate::analysis::noise`]), `~` otherwise. Runs that share no phase are said to
//! have nothing in common instead of a table of dashes. The page overlays each matched
//! phase's time series aligned at the phase's start.

use super::bins::{lines, whole_bins};
use super::chart::{Axis, Chart, Style, Unit, esc};
use super::compare_config::{Configuration, configuration, difference_text, json_text};
use super::format::{count, latency_us, sig3};
use super::headline::Quoted;
use super::html::{Report, STYLE};
use super::node_scaling::{Scaling, scaling};
use super::repeats::{EventSpread, event_spreads};
use super::summary::{RunSummary, phase_window};
use super::table::{from_rows, text};
use crate::analysis::noise::{Change, Interval};
use crate::metrics::summary::{OpSummary, Throughput};
use crate::store::read::{Ran, StoredWorkload, differences};
use crate::store::{Bin, RunRow};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

#[derive(Debug, Serialize)]
pub struct Comparison {
    pub runs: Vec<RunRow>,
    /// Per later run, what differs from the first run's configuration.
    pub configuration: Vec<Configuration>,
    /// The stretches compared: the whole runs when none has phases, else each phase
    /// of the first run with the phase of each other run that ran the same workloads.
    pub scopes: Vec<Scope>,
    /// Phases of later runs that match no phase of the first.
    pub unmatched: Vec<Unmatched>,
    /// True when no figure is measured in the first run and another: no phase ran
    /// the same workloads.
    pub nothing_in_common: bool,
    pub rows: Vec<Row>,
    /// Per later run, each TPC-C workload run on another number of nodes than in the
    /// first: its scaling efficiency.
    pub scaling: Vec<Scaling>,
    /// Per run, the names of its workloads (what "nothing in common" names).
    #[serde(skip)]
    workloads: Vec<Vec<String>>,
    /// Per run, its headline (what its program declared it is read by).
    pub headlines: Vec<Option<Quoted>>,
    /// The timed events every run has, with how far their durations spread.
    pub events: Vec<EventSpread>,
}

/// A stretch compared: the first run's phase (or the whole run) and, per run, the
/// phase matched to it.
#[derive(Debug, Serialize)]
pub struct Scope {
    pub label: String,
    /// Per run, the label of its matched phase; None where no phase matches.
    pub phases: Vec<Option<String>>,
    #[serde(skip)]
    at: Vec<Option<Window>>,
}

#[derive(Debug, Serialize)]
pub struct Unmatched {
    pub run: i64,
    pub phase: String,
}

/// Where a scope lies in one run.
#[derive(Debug, Clone, Copy)]
enum Window {
    /// Each workload's measured window.
    Whole,
    /// Phase k of the run.
    Phase(usize),
}

/// One figure of one workload and op in one scope, in every run.
#[derive(Debug, Serialize)]
pub struct Row {
    /// `whole run`, or the first run's phase label.
    pub scope: String,
    pub workload: String,
    pub op: String,
    pub metric: &'static str,
    /// Per run; None where the run has no such workload, op or phase.
    pub values: Vec<Option<f64>>,
    /// Per run, the change from the first run in percent.
    pub change_percent: Vec<Option<f64>>,
    /// Per run, the 95% confidence interval of the mean of its per-second samples.
    pub intervals: Vec<Option<Interval>>,
    /// Per later run against the first: `better`, `worse` or `~` (within the noise).
    pub verdict: Vec<Option<Change>>,
}

/// The scope of a workload's figures over its whole measured window.
const WHOLE: &str = "whole run";

/// A figure compared: its name (`rate` stands for the op's own unit), whether more is
/// better, which ops have it, its value over a window, its value in one bin of `bin`
/// seconds (a per-second sample), and whether the figure shown is the window's own (a
/// percentile of every op in it) rather than the mean of its seconds (a rate).
struct Metric {
    name: &'static str,
    higher_is_better: bool,
    applies: fn(&OpSummary) -> bool,
    figure: fn(&OpSummary) -> f64,
    sample: fn(&Bin, f64, Throughput) -> f64,
    whole: bool,
}

const METRICS: [Metric; 5] = [
    Metric {
        name: "rate",
        higher_is_better: true,
        applies: |_| true,
        figure: |o| o.rate(),
        sample: |b, s, unit| unit.rate(b.ops as f64 / s, b.bytes as f64 / s / 1e6),
        whole: false,
    },
    // transactions and streams move no bytes of their own to count beside their rate
    Metric {
        name: "mb_per_s",
        higher_is_better: true,
        applies: |o| o.unit == Throughput::Iops,
        figure: |o| o.mb_per_s,
        sample: |b, s, _| b.bytes as f64 / s / 1e6,
        whole: false,
    },
    Metric {
        name: "p50_us",
        higher_is_better: false,
        applies: OpSummary::timed,
        figure: |o| o.latency.p50_us,
        sample: |b, _, _| b.p50_us,
        whole: true,
    },
    Metric {
        name: "p99_us",
        higher_is_better: false,
        applies: OpSummary::timed,
        figure: |o| o.latency.p99_us,
        sample: |b, _, _| b.p99_us,
        whole: true,
    },
    Metric {
        name: "p99_9_us",
        higher_is_better: false,
        applies: OpSummary::timed,
        figure: |o| o.latency.p99_9_us,
        sample: |b, _, _| b.p99_9_us,
        whole: true,
    },
];

impl Comparison {
    pub fn of(reports: &[Report]) -> Comparison {
        let first = &reports[0].summary;
        let configuration = reports[1..].iter().map(|r| configuration(first, &r.summary)).collect();
        let (scopes, unmatched) = scopes(reports);
        let mut rows = Vec::new();
        for scope in &scopes {
            let found = |r: usize| -> Vec<&OpSummary> {
                let s = &reports[r].summary;
                match scope.at[r] {
                    None => Vec::new(),
                    Some(Window::Whole) => s.workloads.iter().flat_map(|w| &w.ops).collect(),
                    Some(Window::Phase(k)) => s.phases[k].ops.iter().collect(),
                }
            };
            for base in found(0) {
                let ops: Vec<Option<&OpSummary>> = (0..reports.len())
                    .map(|r| found(r).into_iter().find(|o| o.workload == base.workload && o.op == base.op))
                    .collect();
                if ops[1..].iter().all(Option::is_none) {
                    continue;
                }
                for m in METRICS.iter().filter(|m| (m.applies)(base)) {
                    rows.push(row(reports, scope, &ops, m));
                }
            }
        }
        Comparison {
            runs: reports.iter().map(|r| r.summary.run.clone()).collect(),
            configuration,
            scopes,
            unmatched,
            nothing_in_common: rows.is_empty(),
            rows,
            scaling: reports[1..]
                .iter()
                .flat_map(|r| scaling(r.summary.run.id, &first.observed, &r.summary.observed))
                .collect(),
            workloads: reports
                .iter()
                .map(|r| r.summary.workloads.iter().map(|w| w.workload.name.clone()).collect())
                .collect(),
            headlines: reports.iter().map(|r| r.summary.headline.clone()).collect(),
            events: event_spreads(&reports.iter().map(|r| &r.summary).collect::<Vec<_>>()),
        }
    }

    /// Per later run, its headline against the first's where its program declared one
    /// (`oltp NOPM 14,720 -> 5,300, -64.0%`), and its rate against the first's in one
    /// line over every scope: `run 14: IOPS 26-46% lower in every scope (3 of 4 beyond
    /// the noise)`.
    pub fn summary_lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (i, r) in self.runs.iter().enumerate().skip(1) {
            out.extend(self.headline_line(i));
            // the first rate row's unit: IOPS, TPS or Gbit/s, never one across units
            let Some(unit) = self.rows.iter().find_map(|row| Throughput::from_key(row.metric)) else { continue };
            let rows: Vec<&Row> = self.rows.iter().filter(|row| row.metric == unit.key()).collect();
            let changes: Vec<f64> = rows.iter().filter_map(|row| row.change_percent[i]).collect();
            if changes.is_empty() {
                continue;
            }
            let beyond =
                rows.iter().filter(|row| matches!(row.verdict[i], Some(Change::Better | Change::Worse))).count();
            let (lo, hi) = changes.iter().fold((f64::MAX, f64::MIN), |(lo, hi), &c| (lo.min(c), hi.max(c)));
            let spread =
                |a: f64, b: f64| if (a - b).abs() < 0.5 { format!("{a:.0}%") } else { format!("{a:.0}-{b:.0}%") };
            let moved = match (lo, hi) {
                (lo, hi) if hi < 0.0 => format!("{} lower", spread(-hi, -lo)),
                (lo, _) if lo > 0.0 => format!("{} higher", spread(lo, hi)),
                (lo, hi) => format!("from {lo:+.0}% to {hi:+.0}%"),
            };
            let every = if changes.len() > 1 { " in every scope" } else { "" };
            let noise = format!("{beyond} of {} beyond the noise", changes.len());
            let what = unit.label();
            out.push(format!("run {} against run {}: {what} {moved}{every} ({noise})", r.id, self.runs[0].id));
        }
        out.extend(self.scaling_lines());
        out
    }

    /// Run `i`'s declared headline against the first run's, when both have the same
    /// one: one figure per run, so no noise to judge it by, and it says so.
    fn headline_line(&self, i: usize) -> Option<String> {
        let (a, b) = (self.headlines[0].as_ref()?, self.headlines[i].as_ref()?);
        if !a.declared || a.label != b.label || a.workload != b.workload || a.value == 0.0 {
            return None;
        }
        let change = (b.value / a.value - 1.0) * 100.0;
        let shown = |q: &Quoted| q.text.split(" from ").next().unwrap_or(&q.text).to_string();
        Some(format!(
            "run {} against run {}: {} {} -> {}, {change:+.1}% (one figure per run: no noise to judge it by)",
            self.runs[i].id,
            self.runs[0].id,
            a.workload,
            shown(a),
            shown(b)
        ))
    }

    /// Per later run, each TPC-C workload's scaling efficiency against the first run.
    fn scaling_lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for sc in &self.scaling {
            let (nodes, base) = (sc.nodes, sc.base_nodes);
            let figures = format!("{} NOPM against {}", count(sc.nopm), count(sc.base_nopm));
            let per_node = "NOPM per node over that of the first run";
            out.push(format!(
                "run {} against run {}: tpcc {} on {nodes} nodes against {base}: {figures}, scaling efficiency {:.2} ({per_node})",
                sc.run, self.runs[0].id, sc.workload, sc.efficiency
            ));
        }
        out
    }

    /// The terminal: the runs, the summary, what differs in their configuration, which
    /// phases were matched, then one line per figure with each run's value and its change.
    pub fn text(&self, width: usize) -> String {
        let mut out = String::new();
        // sentences wrap at the terminal's width, a hanging indent under each
        let said =
            |out: &mut String, line: &str| out.push_str(&crate::terminal::wrap(line, crate::terminal::prose_width()));
        for r in &self.runs {
            let _ = writeln!(out, "run {}: {} · {} · {}", r.id, r.scenario, r.started_at, r.status);
        }
        for line in self.summary_lines() {
            said(&mut out, &line);
        }
        out.push('\n');
        for line in self.configuration_lines() {
            said(&mut out, &line);
        }
        for line in self.matching_lines() {
            said(&mut out, &line);
        }
        out.push('\n');
        let events = super::repeats::table(&self.events, &self.runs.iter().map(|r| r.id).collect::<Vec<_>>());
        if !events.is_empty() {
            out.push_str(text::render(&events, width).trim_start_matches('\n'));
            out.push('\n');
        }
        if self.nothing_in_common {
            let _ = writeln!(out, "{}", self.nothing_in_common_text());
            return out;
        }
        let mut header: Vec<String> = vec!["scope".into(), "workload".into(), "op".into(), "figure".into()];
        for (i, r) in self.runs.iter().enumerate() {
            header.push(format!("run {}", r.id));
            if i > 0 {
                header.push("change".into());
            }
        }
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|row| {
                let mut cells = vec![row.scope.clone(), row.workload.clone(), row.op.clone(), label(row.metric).into()];
                for (i, v) in row.values.iter().enumerate() {
                    cells.push(v.map(|v| value(row.metric, v)).unwrap_or_else(|| "-".into()));
                    if i > 0 {
                        cells.push(change_text(row, i));
                    }
                }
                cells
            })
            .collect();
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        out.push_str(&text::render(&from_rows(&header, rows, 4), width));
        out.push('\n');
        said(&mut out, NOTE);
        out
    }

    /// What differs from the first run, a line each, headed; or that nothing does.
    fn configuration_lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for c in &self.configuration {
            let base = self.runs[0].id;
            if c.workloads.is_empty() && c.facts.is_empty() {
                out.push(format!("run {} against run {base}: the same configuration", c.run));
                continue;
            }
            out.push(format!("run {} against run {base}, what differs:", c.run));
            for d in &c.workloads {
                out.push(format!("  {}", difference_text(d)));
            }
            for f in &c.facts {
                out.push(format!("  {}: {} -> {}", f.key, json_text(&f.before), json_text(&f.after)));
            }
        }
        out
    }

    /// Which phase of each run was compared with which, when phases were matched and
    /// any differs in label or found no match.
    fn matching_lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        let plain = self.scopes.iter().all(|s| s.phases.iter().all(|p| p.as_deref().is_none_or(|p| p == s.label)));
        if !plain || !self.unmatched.is_empty() {
            out.push("phases compared (by the workloads they ran):".to_string());
            for s in &self.scopes {
                let each: Vec<String> = s
                    .phases
                    .iter()
                    .zip(&self.runs)
                    .map(|(p, r)| format!("run {}: {}", r.id, p.as_deref().unwrap_or("no match")))
                    .collect();
                out.push(format!("  {}", each.join(" · ")));
            }
        }
        for u in &self.unmatched {
            out.push(format!("  run {}: phase {} matches no phase of run {}", u.run, u.phase, self.runs[0].id));
        }
        out
    }

    fn nothing_in_common_text(&self) -> String {
        let ran: Vec<String> = self
            .runs
            .iter()
            .zip(&self.workloads)
            .map(|(r, names)| {
                format!("run {} ran {}", r.id, if names.is_empty() { "nothing".into() } else { names.join(", ") })
            })
            .collect();
        format!("nothing in common: no phase of these runs ran the same workloads ({}).", ran.join("; "))
    }

    /// A self-contained page: what differs, the table, and each matched phase's time
    /// series overlaid from the phase's start.
    pub fn html(&self, reports: &[Report]) -> String {
        let mut h = String::new();
        let ids: Vec<String> = self.runs.iter().map(|r| r.id.to_string()).collect();
        let _ = write!(
            h,
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">{}<title>fathom: runs {} compared</title>\
             <style>{STYLE} td.better{{font-weight:bold;color:#2e7d32}} td.worse{{font-weight:bold;color:#c62828}} \
             #configuration li{{list-style:none}} #configuration li.item{{margin-left:2em;list-style:disc}}</style>\
             </head>\n<body>\n<header><h1>Runs {} compared</h1><ul class=\"sub\">",
            super::html::content_security_policy(None),
            ids.join(", "),
            ids.join(" vs ")
        );
        for r in &self.runs {
            let _ = write!(
                h,
                "<li>run {}: {} · {} · <span class=\"status {}\">{}</span></li>",
                r.id,
                esc(&r.scenario),
                esc(&r.started_at),
                esc(&r.status),
                esc(&r.status)
            );
        }
        h.push_str("</ul>");
        for line in self.summary_lines() {
            let _ = write!(h, "<p class=\"answer\" id=\"summary\">{}</p>", esc(&line));
        }
        h.push_str("</header>\n<section id=\"configuration\"><h2>What differs</h2><ul>");
        for line in self.configuration_lines().iter().chain(&self.matching_lines()) {
            match line.strip_prefix("  ") {
                Some(item) => write!(h, "<li class=\"item\">{}</li>", esc(item)),
                None => write!(h, "<li><b>{}</b></li>", esc(line)),
            }
            .unwrap_or_default();
        }
        h.push_str("</ul></section>\n");
        let events = super::repeats::table(&self.events, &self.runs.iter().map(|r| r.id).collect::<Vec<_>>());
        if !events.is_empty() {
            h.push_str("<section id=\"repeats\"><h2>Timed events</h2>");
            super::table::html::render(&events, &mut h);
            h.push_str("</section>\n");
        }
        h.push_str("<section id=\"comparison\"><h2>Figures</h2>");
        if self.nothing_in_common {
            let _ = writeln!(h, "<p class=\"nothing\">{}</p></section>", esc(&self.nothing_in_common_text()));
        } else {
            self.table_html(&mut h);
        }
        let overlaid = overlay(self, reports);
        if !overlaid.is_empty() {
            h.push_str("<section id=\"overlaid\"><h2>Over time and curves, overlaid</h2>");
            for c in overlaid {
                let _ = write!(h, "<figure>{}</figure>", c.svg());
            }
            h.push_str("</section>\n");
        }
        let _ = write!(h, "<footer>fathom {}</footer>\n</body></html>\n", esc(env!("BUILD_IDENTITY")));
        h
    }

    fn table_html(&self, h: &mut String) {
        h.push_str("<table><thead><tr><th>scope</th><th>workload</th><th>op</th><th>figure</th>");
        for (i, r) in self.runs.iter().enumerate() {
            let _ = write!(h, "<th>run {}</th>", r.id);
            if i > 0 {
                h.push_str("<th>change</th>");
            }
        }
        h.push_str("</tr></thead><tbody>");
        for row in &self.rows {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
                esc(&row.scope),
                esc(&row.workload),
                esc(&row.op),
                label(row.metric)
            );
            for (i, v) in row.values.iter().enumerate() {
                let text = v.map(|v| value(row.metric, v)).unwrap_or_else(|| "-".into());
                let _ = write!(h, "<td data-value=\"{}\">{text}</td>", v.unwrap_or(f64::NAN));
                if i > 0 {
                    let class = match row.verdict[i] {
                        Some(Change::Better) => "better",
                        Some(Change::Worse) => "worse",
                        _ => "noise",
                    };
                    let _ = write!(h, "<td class=\"{class}\">{}</td>", esc(&change_text(row, i)));
                }
            }
            h.push_str("</tr>");
        }
        let _ = writeln!(h, "</tbody></table><p class=\"note\">{}</p></section>", esc(NOTE));
    }
}

/// How a change is judged, under every table.
const NOTE: &str = "change is from the first run: better or worse only where the two figures differ by more than \
                    their noise, the half-widths of the 95% confidence intervals of the mean of each run's \
                    per-second samples (a rate is that mean; a percentile is the whole window's, judged \
                    against its per-second spread); more ops and MB/s, less latency are better; ~ within that noise";

/// One figure's row: values, changes, intervals of the per-second samples, verdicts,
/// each verdict on the figure the row shows.
fn row(reports: &[Report], scope: &Scope, ops: &[Option<&OpSummary>], m: &Metric) -> Row {
    let values: Vec<Option<f64>> = ops.iter().map(|o| o.map(m.figure)).collect();
    let samples: Vec<Vec<f64>> = ops
        .iter()
        .enumerate()
        .map(|(r, o)| match (o, scope.at[r]) {
            (Some(o), Some(at)) => samples(&reports[r], o, at, m),
            _ => Vec::new(),
        })
        .collect();
    let base = values[0].filter(|b| *b != 0.0);
    let change_percent = values.iter().map(|v| Some((v.as_ref()? / base? - 1.0) * 100.0)).collect();
    let verdict = values
        .iter()
        .zip(&samples)
        .enumerate()
        .map(|(r, (v, s))| {
            let (a, b) = (values[0]?, (*v)?);
            (r > 0).then(|| match m.whole {
                true => Change::judge_figures(a, b, &samples[0], s, m.higher_is_better),
                false => Change::judge(&samples[0], s, m.higher_is_better),
            })
        })
        .collect();
    let unit = ops[0].map_or(Throughput::Iops, |o| o.unit);
    Row {
        scope: scope.label.clone(),
        workload: ops[0].map(|o| o.workload.clone()).unwrap_or_default(),
        op: ops[0].map(|o| o.op.to_string()).unwrap_or_default(),
        metric: if m.name == "rate" { unit.key() } else { m.name },
        values,
        change_percent,
        intervals: samples.iter().map(|s| Interval::of(s)).collect(),
        verdict,
    }
}

/// A figure's per-second samples (per bin, for runs long enough to be binned) of one
/// workload and op over its part of a scope: whole bins only. A bin that stored nothing
/// of the op is a rate of 0 (a stall is a sample, as the expectations count it) and has
/// no latency.
fn samples(r: &Report, o: &OpSummary, at: Window, m: &Metric) -> Vec<f64> {
    let (workload, op, unit) = (o.workload.as_str(), o.op, o.unit);
    let s = &r.summary;
    let Some(i) = s.workloads.iter().position(|w| w.workload.name == workload) else {
        return Vec::new();
    };
    let w = &s.workloads[i].workload;
    let (from, to) = match at {
        Window::Whole => w.measured_window(),
        Window::Phase(k) => phase_window(w, &s.phases[k].phase),
    };
    let Some(kind) = s.scans[i].bins.iter().map(|b| b.op).find(|o| o.as_str() == op) else {
        return Vec::new();
    };
    let stored: BTreeMap<i64, &Bin> = s.scans[i].bins.iter().filter(|b| b.op == kind).map(|b| (b.t, b)).collect();
    let empty = |t| Bin { t, op: kind, ops: 0, bytes: 0, p50_us: f64::NAN, p99_us: f64::NAN, p99_9_us: f64::NAN };
    let bin = r.bin as f64;
    whole_bins(from, to, r.bin)
        .map(|t| stored.get(&t).map_or_else(|| (m.sample)(&empty(t), bin, unit), |b| (m.sample)(b, bin, unit)))
        .filter(|v| v.is_finite())
        .collect()
}

/// The scopes compared and the later runs' phases left unmatched. Runs without
/// several phases compare as wholes; otherwise each phase of the first run is matched,
/// in each other run, to an unused phase that ran the same workloads (by name), the one
/// whose settings differ least, then the one of the same label, then the earliest.
fn scopes(reports: &[Report]) -> (Vec<Scope>, Vec<Unmatched>) {
    let summaries: Vec<&RunSummary> = reports.iter().map(|r| &r.summary).collect();
    if summaries.iter().all(|s| s.phases.len() <= 1) {
        let whole = Scope {
            label: WHOLE.into(),
            phases: summaries.iter().map(|_| Some(WHOLE.to_string())).collect(),
            at: summaries.iter().map(|_| Some(Window::Whole)).collect(),
        };
        return (vec![whole], Vec::new());
    }
    let first = summaries[0];
    let mut at: Vec<Vec<Option<Window>>> = (0..first.phases.len()).map(|k| vec![Some(Window::Phase(k))]).collect();
    let mut unmatched = Vec::new();
    for other in &summaries[1..] {
        let mut used = vec![false; other.phases.len()];
        for (k, scope) in at.iter_mut().enumerate() {
            let a = ran_in(first, k);
            let names: BTreeSet<&str> = a.iter().map(|(r, _)| r.workload.as_str()).collect();
            let best = (0..other.phases.len())
                .filter(|&j| !used[j])
                .map(|j| (j, ran_in(other, j)))
                .filter(|(_, b)| {
                    !names.is_empty() && b.iter().map(|(r, _)| r.workload.as_str()).collect::<BTreeSet<_>>() == names
                })
                .min_by_key(|(j, b)| {
                    (differences(&a, b).len(), other.phases[*j].phase.label != first.phases[k].phase.label, *j)
                })
                .map(|(j, _)| j);
            if let Some(j) = best {
                used[j] = true;
            }
            scope.push(best.map(Window::Phase));
        }
        for (j, _) in used.iter().enumerate().filter(|(_, u)| !**u) {
            unmatched.push(Unmatched { run: other.run.id, phase: other.phases[j].phase.label.clone() });
        }
    }
    let scopes = at
        .into_iter()
        .enumerate()
        .map(|(k, at)| Scope {
            label: first.phases[k].phase.label.clone(),
            phases: at
                .iter()
                .zip(&summaries)
                .map(|(w, s)| match w {
                    Some(Window::Phase(j)) => Some(s.phases[*j].phase.label.clone()),
                    _ => None,
                })
                .collect(),
            at,
        })
        .collect();
    (scopes, unmatched)
}

/// What ran in phase `k` of a run, with each workload's settings.
fn ran_in(s: &RunSummary, k: usize) -> Vec<(Ran, &StoredWorkload)> {
    s.phases[k]
        .facts
        .ran
        .iter()
        .filter_map(|r| Some((r.clone(), &s.workloads.iter().find(|w| w.stored.idx == r.idx)?.stored)))
        .collect()
}

/// Per scope, IOPS and p99 of each run's workloads over seconds since the scope began
/// in that run (each phase aligned at its own start), then the runs' curves overlaid.
fn overlay(c: &Comparison, reports: &[Report]) -> Vec<Chart> {
    let mut out = Vec::new();
    // the rate in the ops' own units: TPS for transactions, IOPS for IO
    let mut units: Vec<&str> = Vec::new();
    let ops = reports.iter().flat_map(|r| &r.summary.workloads).flat_map(|w| &w.ops);
    for u in ops.map(|o| o.unit).filter(|u| u.counts_ops()) {
        if !units.contains(&u.label()) {
            units.push(u.label());
        }
    }
    let rate = if units.is_empty() { "IOPS".to_string() } else { units.join(" and ") };
    for (i, scope) in c.scopes.iter().enumerate() {
        let since = || Axis::new("seconds since the phase began", Unit::Seconds);
        let what = if scope.label == WHOLE { "the whole run".to_string() } else { format!("phase {}", scope.label) };
        let title = format!("{rate}: {what}");
        let mut iops = Chart::new(&format!("cmp-{i}-iops"), &title, since(), Axis::new(&rate, Unit::Count));
        let mut p99 = Chart::new(
            &format!("cmp-{i}-p99"),
            &format!("Latency p99: {what}"),
            since(),
            Axis::log("p99", Unit::Micros),
        );
        for (r, report) in reports.iter().enumerate() {
            let Some(at) = scope.at[r] else { continue };
            let s = &report.summary;
            let (start, end) = match at {
                Window::Whole => (
                    s.workloads.iter().map(|w| w.workload.start_t).min().unwrap_or(0),
                    s.workloads.iter().map(|w| w.workload.end_t).max().unwrap_or(0),
                ),
                Window::Phase(k) => {
                    let p = &s.phases[k].phase;
                    (p.start_t, p.end_t.unwrap_or(i64::MAX))
                }
            };
            for (w, scan) in s.workloads.iter().zip(&s.scans) {
                let name = format!("run {}: {}", s.run.id, w.workload.name);
                for (line, rate, lat) in lines(scan, (start, end), report.bin as f64) {
                    let line = if line.is_empty() { name.clone() } else { format!("{name} {line}") };
                    if !rate.is_empty() {
                        iops.add(&line, Style::Line, rate);
                    }
                    if !lat.is_empty() {
                        p99.add(&line, Style::Line, lat);
                    }
                }
            }
        }
        out.extend([iops, p99].into_iter().filter(|c| !c.is_empty()));
    }
    for id in ["curve-latency", "curve-usl"] {
        let mut merged: Option<Chart> = None;
        // a run keeps one colour for its points and its fit; the style tells them apart
        for (k, r) in reports.iter().enumerate() {
            let Some(c) = r.charts.iter().find(|c| c.id == id) else { continue };
            let m = merged.get_or_insert_with(|| Chart::new(&format!("cmp-{id}"), &c.title, c.x.clone(), c.y.clone()));
            for s in &c.series {
                m.add_coloured(&format!("run {}: {}", r.summary.run.id, s.name), s.style, s.points.clone(), k);
            }
        }
        out.extend(merged);
    }
    out
}

/// `+12.3% better`, `-0.7% ~`.
fn change_text(row: &Row, i: usize) -> String {
    let pct = row.change_percent[i].map(|c| format!("{c:+.1}% ")).unwrap_or_default();
    row.verdict[i].map(|v| format!("{pct}{}", v.as_str())).unwrap_or_default()
}

fn label(metric: &str) -> &str {
    if let Some(unit) = Throughput::from_key(metric) {
        return unit.label();
    }
    match metric {
        "mb_per_s" => "MB/s",
        "p50_us" => "p50",
        "p99_us" => "p99",
        "p99_9_us" => "p99.9",
        other => other,
    }
}

fn value(metric: &str, v: f64) -> String {
    if let Some(unit) = Throughput::from_key(metric) {
        return super::format::rate(v, unit);
    }
    match metric {
        "mb_per_s" => sig3(v),
        _ => latency_us(v),
    }
}
