//! `fathom compare`: runs side by side. Workloads, ops and phases are matched by name;
//! each figure gets its change from the first run in percent and the better value is
//! marked (more IOPS and MB/s, less latency), so "AES on vs off: throughput 2x" or
//! "hugepages: +7.5% tps" is one glance away, in the terminal, as JSON or as a page.

use super::chart::{Chart, esc};
use super::format::{count, latency_us, sig3};
use super::html::{Report, STYLE};
use super::table::render;
use crate::metrics::summary::OpSummary;
use crate::store::RunRow;
use serde::Serialize;
use std::fmt::Write;

#[derive(Debug, Serialize)]
pub struct Comparison {
    pub runs: Vec<RunRow>,
    pub rows: Vec<Row>,
}

/// One figure of one workload and op (over the run, or within a phase) in every run.
#[derive(Debug, Serialize)]
pub struct Row {
    /// `whole run` for the measured window, else the phase's label.
    pub scope: String,
    pub workload: String,
    pub op: String,
    pub metric: &'static str,
    /// Per run; None where the run has no such workload, op or phase.
    pub values: Vec<Option<f64>>,
    /// Per run, the change from the first run in percent.
    pub change_percent: Vec<Option<f64>>,
    /// The run with the better value, when they differ.
    pub better: Option<usize>,
}

/// The scope of a workload's figures over its whole measured window.
const WHOLE: &str = "whole run";

/// (name, higher is better, value of an op's figures)
type Metric = (&'static str, bool, fn(&OpSummary) -> f64);

const METRICS: [Metric; 5] = [
    ("iops", true, |o| o.iops),
    ("mb_per_s", true, |o| o.mb_per_s),
    ("p50_us", false, |o| o.latency.p50_us),
    ("p99_us", false, |o| o.latency.p99_us),
    ("p99_9_us", false, |o| o.latency.p99_9_us),
];

impl Comparison {
    pub fn of(reports: &[Report]) -> Comparison {
        // every (scope, workload, op) in any run, in the order first seen
        let mut keys: Vec<(String, String, String)> = Vec::new();
        for r in reports {
            let s = &r.summary;
            let whole = s.workloads.iter().flat_map(|w| &w.ops).map(|o| (WHOLE.to_string(), o));
            let phased = s.phases.iter().flat_map(|p| p.ops.iter().map(move |o| (p.phase.label.clone(), o)));
            for (scope, o) in whole.chain(phased) {
                let key = (scope, o.workload.clone(), o.op.to_string());
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
        }
        let find = |r: &Report, (scope, workload, op): &(String, String, String)| -> Option<OpSummary> {
            let s = &r.summary;
            let ops: Vec<&OpSummary> = if scope == WHOLE {
                s.workloads.iter().flat_map(|w| &w.ops).collect()
            } else {
                s.phases.iter().filter(|p| &p.phase.label == scope).flat_map(|p| &p.ops).collect()
            };
            ops.into_iter().find(|o| &o.workload == workload && o.op == op).cloned()
        };
        let mut rows = Vec::new();
        for key in &keys {
            let found: Vec<Option<OpSummary>> = reports.iter().map(|r| find(r, key)).collect();
            for (metric, higher_better, get) in METRICS {
                let values: Vec<Option<f64>> = found.iter().map(|o| o.as_ref().map(get)).collect();
                let base = values[0].filter(|b| *b != 0.0);
                let change_percent = values.iter().map(|v| Some((v.as_ref()? / base? - 1.0) * 100.0)).collect();
                let present: Vec<(usize, f64)> =
                    values.iter().enumerate().filter_map(|(i, v)| Some((i, (*v)?))).collect();
                let best = if higher_better {
                    present.iter().max_by(|a, b| a.1.total_cmp(&b.1))
                } else {
                    present.iter().min_by(|a, b| a.1.total_cmp(&b.1))
                };
                let differ = present.iter().any(|p| p.1 != present[0].1);
                let better = best.filter(|_| present.len() > 1 && differ).map(|b| b.0);
                rows.push(Row {
                    scope: key.0.clone(),
                    workload: key.1.clone(),
                    op: key.2.clone(),
                    metric,
                    values,
                    change_percent,
                    better,
                });
            }
        }
        Comparison { runs: reports.iter().map(|r| r.summary.run.clone()).collect(), rows }
    }

    /// The terminal table: one line per figure, each run's value, its change from the
    /// first, and `*` on the better one.
    pub fn text(&self) -> String {
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
                    let star = if row.better == Some(i) { " *" } else { "  " };
                    cells.push(v.map(|v| format!("{}{star}", value(row.metric, v))).unwrap_or_else(|| "-  ".into()));
                    if i > 0 {
                        cells.push(row.change_percent[i].map(|c| format!("{c:+.1}%")).unwrap_or_default());
                    }
                }
                cells
            })
            .collect();
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let mut out = String::new();
        for r in &self.runs {
            let _ = writeln!(out, "run {}: {} · {} · {}", r.id, r.scenario, r.started_at, r.status);
        }
        out.push('\n');
        out.push_str(&render(&header, &rows, 4));
        out.push_str("\n* the better value: more IOPS and MB/s, less latency; change is from the first run\n");
        out
    }

    /// A self-contained page: the table, and each run's time series and curves overlaid.
    pub fn html(&self, reports: &[Report]) -> String {
        let mut h = String::new();
        let ids: Vec<String> = self.runs.iter().map(|r| r.id.to_string()).collect();
        let _ = write!(
            h,
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>fathom: runs {} compared</title>\
             <style>{STYLE} td.better{{font-weight:bold;color:#2e7d32}}</style></head>\n<body>\n\
             <header><h1>Runs {} compared</h1><ul class=\"sub\">",
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
        h.push_str("</ul></header>\n<section id=\"comparison\"><h2>Figures</h2><table><thead><tr><th>scope</th><th>workload</th><th>op</th><th>figure</th>");
        for (i, id) in ids.iter().enumerate() {
            let _ = write!(h, "<th>run {id}</th>");
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
                let class = if row.better == Some(i) { " class=\"better\"" } else { "" };
                let text = v.map(|v| value(row.metric, v)).unwrap_or_else(|| "-".into());
                let _ = write!(h, "<td{class} data-value=\"{}\">{text}</td>", v.unwrap_or(f64::NAN));
                if i > 0 {
                    let _ = write!(
                        h,
                        "<td>{}</td>",
                        row.change_percent[i].map(|c| format!("{c:+.1}%")).unwrap_or_default()
                    );
                }
            }
            h.push_str("</tr>");
        }
        h.push_str("</tbody></table><p class=\"note\">Bold: the better value (more IOPS and MB/s, less latency). Change is from the first run.</p></section>\n");
        let overlaid = overlay(reports);
        if !overlaid.is_empty() {
            h.push_str("<section id=\"overlaid\"><h2>Over time and curves, overlaid</h2>");
            for c in overlaid {
                let _ = write!(h, "<figure>{}</figure>", c.svg());
            }
            h.push_str("</section>\n");
        }
        let _ = write!(h, "<footer>fathom {}</footer>\n</body></html>\n", env!("CARGO_PKG_VERSION"));
        h
    }
}

/// Each run's charts of the same kind in one chart, series named after their run.
fn overlay(reports: &[Report]) -> Vec<Chart> {
    let mut out = Vec::new();
    for id in ["ts-iops", "ts-mbps", "ts-latency", "curve-latency", "curve-usl"] {
        let mut merged: Option<Chart> = None;
        for r in reports {
            let Some(c) = r.charts.iter().find(|c| c.id == id) else { continue };
            let m = merged.get_or_insert_with(|| {
                let mut m = Chart::new(&format!("cmp-{id}"), &c.title, c.x.clone(), c.y.clone());
                m.note = Some("series are prefixed with their run".into());
                m
            });
            for s in &c.series {
                m.add(&format!("run {}: {}", r.summary.run.id, s.name), s.style, s.points.clone());
            }
        }
        out.extend(merged);
    }
    out
}

fn label(metric: &str) -> &str {
    match metric {
        "iops" => "IOPS",
        "mb_per_s" => "MB/s",
        "p50_us" => "p50",
        "p99_us" => "p99",
        "p99_9_us" => "p99.9",
        other => other,
    }
}

fn value(metric: &str, v: f64) -> String {
    match metric {
        "iops" => count(v),
        "mb_per_s" => sig3(v),
        _ => latency_us(v),
    }
}
