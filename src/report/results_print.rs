//! The result views ([`super::results`]) as the terminal and the report's page show
//! them: one table row per view (its figure over the window, expected, each band's share
//! of seconds inside, the hint), and on the page a chart per view of its per-second
//! series with the expected line and its bands shaded, the hint under it.

use super::chart::{Axis, Chart, Level, Style, Unit, esc};
use super::format::latency_us;
use super::results::{ResultSeries, bounds, number};
use super::summary::RunSummary;
use super::table::text::wrap;
use crate::scenario::results::{Measure, ResultMetric};
use std::fmt::Write;

const HEADER: [&str; 5] = ["result", "over the window", "expected", "bands (share of seconds inside)", "hint"];

/// A value in the view's unit: `4,200 IOPS`, `1.20 ms`, `1,425 MB/s`.
fn value(r: &ResultSeries, v: f64) -> String {
    match &r.view.measure {
        Measure::Workloads { metric: ResultMetric::Latency, .. } => latency_us(v),
        _ => format!("{} {}", number(r, v), r.unit),
    }
}

/// A view's cells: name, figures, expected, bands, hint.
fn cells(r: &ResultSeries) -> Vec<String> {
    let figures = match (&r.view.measure, r.mean) {
        (Measure::NotMeasured(why), _) => format!("not measured: {why}"),
        (_, None) => "nothing measured".to_string(),
        (Measure::Workloads { metric: ResultMetric::Latency, .. }, Some(m)) => format!(
            "mean {} · p50 {} · p99 {} (of the IOs)",
            value(r, m),
            r.p50.map_or("-".into(), |v| value(r, v)),
            r.p99.map_or("-".into(), |v| value(r, v))
        ),
        (_, Some(m)) => format!(
            "mean {} · p50 {} · p99 {} (of {} s)",
            value(r, m),
            r.p50.map_or("-".into(), |v| value(r, v)),
            r.p99.map_or("-".into(), |v| value(r, v)),
            r.series.len()
        ),
    };
    let bands: Vec<String> = r
        .bands
        .iter()
        .map(|b| {
            let share = b.inside.map_or("-".into(), |s| format!("{:.1}%", s * 100.0));
            let verdict = if b.passed { "pass" } else { "FAIL" };
            format!("{} {} {share} >= {}% {verdict}", b.band.name, bounds(r, &b.band), b.band.share * 100.0)
        })
        .collect();
    vec![
        r.view.name.clone(),
        figures,
        r.view.expected.map_or("-".into(), |e| value(r, e)),
        if bands.is_empty() { "-".into() } else { bands.join("; ") },
        r.view.hint.clone().unwrap_or_default(),
    ]
}

/// The views for the terminal (`fathom show`, the end of `fathom run`): a block per
/// view, its lines wrapped to `width` (a band's verdict is never cut off).
pub fn terminal(s: &RunSummary, width: usize) -> String {
    if s.results.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nresults (the scenario's views, per second):\n");
    for r in &s.results {
        let [name, figures, expected, bands, hint] = <[String; 5]>::try_from(cells(r)).expect("five cells");
        out.push_str(&wrap(&format!("  {name}: {figures}; expected {expected}"), width));
        for band in bands.split("; ").filter(|b| *b != "-") {
            out.push_str(&wrap(&format!("    {band}"), width));
        }
        if !hint.is_empty() {
            out.push_str(&wrap(&format!("    {hint}"), width));
        }
    }
    out
}

/// The views as a section of the report's page, each with its chart (`result-N`).
pub fn html(s: &RunSummary, charts: &[Chart], h: &mut String) {
    if s.results.is_empty() {
        return;
    }
    h.push_str(
        "<section id=\"result-views\"><h2>Result views</h2><p class=\"note\">The scenario's result views: a value per \
         second of the workloads (or hosts) they name; a band passes when enough of the seconds lie in it.</p>\
         <table><thead><tr>",
    );
    for c in HEADER {
        let _ = write!(h, "<th>{c}</th>");
    }
    h.push_str("</tr></thead><tbody>");
    for r in &s.results {
        let failed = r.bands.iter().any(|b| !b.passed);
        h.push_str(if failed { "<tr class=\"fail\">" } else { "<tr>" });
        let mean = r.mean.map(|m| format!(" data-value=\"{m}\"")).unwrap_or_default();
        for (i, cell) in cells(r).iter().enumerate() {
            let data = if i == 1 { mean.as_str() } else { "" };
            let _ = write!(h, "<td data-result=\"{}\"{data}>{}</td>", esc(&r.view.name), esc(cell));
        }
        h.push_str("</tr>");
    }
    h.push_str("</tbody></table>");
    for (i, r) in s.results.iter().enumerate() {
        if let Some(c) = charts.iter().find(|c| c.id == chart_id(i)) {
            let _ = write!(h, "<figure>{}", c.svg());
            if let Some(hint) = &r.view.hint {
                let _ = write!(h, "<figcaption class=\"note\">{}</figcaption>", esc(hint));
            }
            h.push_str("</figure>");
        }
    }
    h.push_str("</section>\n");
}

fn chart_id(i: usize) -> String {
    format!("result-{i}")
}

/// A chart per measured view: its per-second series (for latency p50 and p99 beside
/// the mean), the expected value as a dashed line, its bands shaded.
pub fn charts(s: &RunSummary) -> Vec<Chart> {
    let mut out = Vec::new();
    for (i, r) in s.results.iter().enumerate() {
        if r.series.is_empty() {
            continue;
        }
        let (unit, label) = match &r.view.measure {
            Measure::Workloads { metric: ResultMetric::Latency, .. } => (Unit::Micros, "latency".to_string()),
            _ => (Unit::Count, r.unit.clone()),
        };
        let time = Axis::new("time into the run", Unit::Seconds);
        let mut c = Chart::new(&chart_id(i), &r.view.name, time, Axis::new(&label, unit));
        c.step = Some(1.0);
        let points = |f: &dyn Fn(&super::results::Point) -> Option<f64>| {
            r.series.iter().filter_map(|p| Some((p.t as f64, f(p)?))).collect::<Vec<_>>()
        };
        let latency = matches!(r.view.measure, Measure::Workloads { metric: ResultMetric::Latency, .. });
        c.add(if latency { "mean" } else { &label }, Style::Line, points(&|p| Some(p.value)));
        if latency {
            c.add("p50", Style::Line, points(&|p| p.p50));
            c.add("p99", Style::Dashed, points(&|p| p.p99));
        }
        if let Some(e) = r.view.expected {
            let (from, to) = (r.series[0].t as f64, r.series[r.series.len() - 1].t as f64);
            c.add(&format!("expected {}", value(r, e)), Style::Dashed, vec![(from, e), (to, e)]);
        }
        c.levels = r
            .bands
            .iter()
            .map(|b| Level { from: b.band.lower, to: b.band.upper, label: format!("{} band", b.band.name) })
            .collect();
        out.push(c);
    }
    out
}
