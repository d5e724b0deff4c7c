//! The sweep and interference views ([`super::views`]) as the terminal, the report's
//! page and its charts show them: one table each, with the sweep's figure of merit,
//! and the sweep's setting charted against IOPS, MB/s and latency.

use super::chart::{Axis, Chart, Style, Unit, esc};
use super::format::{count, latency_us, sig3};
use super::summary::RunSummary;
use super::table::render;
use super::views::{InterferenceRow, Merit, PER_CORE_MINIMUM, PER_CORE_RECOMMENDED, Sweep, SweepRow};
use std::fmt::Write;

/// What the sweep's table says it is.
fn title(sw: &Sweep) -> String {
    match sw.merit {
        Merit::ResponseTime => format!("response time against {} (one row per phase, smallest first)", sw.setting),
        Merit::Settle => format!("time for latency to settle per {} (one row per phase)", sw.setting),
        Merit::PerCore => "MB/s per core per test, vioperf's figure of merit".to_string(),
        Merit::Rates => format!("sweep over {} (one row per phase)", sw.setting),
    }
}

/// The note under the table: how to read its figure of merit.
fn note(sw: &Sweep) -> String {
    let busiest = "latency is of each phase's busiest op";
    match sw.merit {
        Merit::ResponseTime => {
            format!("Response time is the mean latency; at depth 1, IOPS = 1 / response time; {busiest}.")
        }
        Merit::Settle => format!(
            "Latency steady from: seconds into the phase to the first window of {} rounds of {} s whose per-second \
             latency is steady (SNIA rule); {busiest}.",
            crate::analysis::steady_state::WINDOW,
            sw.rows.iter().find_map(|r| r.settle).map_or(1, |s| s.round_s)
        ),
        Merit::PerCore => format!(
            "MB/s per core: the test's MB/s over the host's {} cores (vioperf runs a thread per core); \
             {PER_CORE_MINIMUM} is its minimum, {PER_CORE_RECOMMENDED} its recommendation. fathom CPU: the cores \
             fathom kept busy (its CRC and IO).",
            sw.rows.first().and_then(|r| r.per_core).map_or(1.0, |p| p.cores)
        ),
        Merit::Rates => format!("Each phase ran one workload; {busiest}."),
    }
}

/// A cell of a table: its text, and its exact value when it is a figure.
type Cell = (String, Option<f64>);

/// The table's header and cells: phase, the varied settings, rates, latency, and the
/// figure of merit's columns.
fn table(sw: &Sweep) -> (Vec<String>, Vec<Vec<Cell>>) {
    let mean = if sw.merit == Merit::ResponseTime { "response time" } else { "mean" };
    // vioperf's tests are named for what they do: their settings' columns would only crowd
    let settings = if sw.merit == Merit::PerCore { &[][..] } else { &sw.columns[..] };
    let mut header: Vec<String> = ["phase"].iter().map(|s| s.to_string()).chain(settings.iter().cloned()).collect();
    header.extend([sw.unit.label(), "MB/s", mean, "p50", "p99", "p99.9"].map(String::from));
    match sw.merit {
        Merit::Settle => header.push("latency steady from".into()),
        Merit::PerCore => header.extend(["MB/s per core", "fathom CPU", "verdict"].map(String::from)),
        Merit::ResponseTime | Merit::Rates => {}
    }
    let text = |t: String| (t, None);
    let figure = |v: f64, f: &dyn Fn(f64) -> String| (f(v), Some(v));
    let rows = sw
        .rows
        .iter()
        .map(|r| {
            let mut cells = vec![text(r.phase.clone())];
            cells.extend(r.values.iter().take(settings.len()).cloned().map(text));
            cells.extend([
                figure(r.iops, &count),
                // a transaction's bytes are not counted: absent, not 0
                if sw.unit.counts_bytes() { figure(r.mb_per_s, &sig3) } else { text("-".into()) },
                figure(r.mean_us, &latency_us),
                figure(r.p50_us, &latency_us),
                figure(r.p99_us, &latency_us),
                figure(r.p99_9_us, &latency_us),
            ]);
            if let Some(s) = r.settle {
                cells.push((s.text(), s.steady_from_s.map(|v| v as f64)));
            }
            if let Some(p) = r.per_core {
                cells.push(figure(p.mb_per_s_per_core, &sig3));
                cells.push(match p.fathom_cores {
                    Some(c) => figure(c, &|c| format!("{c:.2} cores")),
                    None => text("-".into()),
                });
                cells.push(text(p.verdict_text()));
            }
            cells
        })
        .collect();
    (header, rows)
}

/// `a -> b (+12%, x1.12)`.
fn before_after(a: f64, b: f64, percent: f64, ratio: Option<f64>, f: &dyn Fn(f64) -> String) -> String {
    let ratio = ratio.map(|r| format!(", x{}", sig3(r))).unwrap_or_default();
    format!("{} -> {} ({percent:+.0}%{ratio})", f(a), f(b))
}

/// The interference table's cells: workload, phases, IOPS, achieved rate, p50, p99.
fn interference_cells(r: &InterferenceRow) -> Vec<String> {
    let (b, d, c, x) = (&r.before_figures, &r.during_figures, &r.change, &r.ratio);
    let percent = |v: f64| format!("{:.0}%", v * 100.0);
    let achieved = match (b.attainment, d.attainment, c.attainment_percent) {
        (Some(a), Some(z), Some(pct)) => before_after(a, z, pct, x.attainment, &percent),
        _ => "-".into(),
    };
    vec![
        r.workload.clone(),
        format!("{} -> {}", r.before, r.during),
        before_after(b.iops, d.iops, c.iops_percent, x.iops, &count),
        achieved,
        before_after(b.p50_us, d.p50_us, c.p50_percent, x.p50, &latency_us),
        before_after(b.p99_us, d.p99_us, c.p99_percent, x.p99, &latency_us),
    ]
}

const INTERFERENCE_HEADER: [&str; 6] = ["workload", "phases", "IOPS", "achieved rate", "p50", "p99"];

/// The views for the terminal (`fathom show`, the end of `fathom run`).
pub fn terminal(s: &RunSummary) -> String {
    let a = &s.analysis;
    let mut out = String::new();
    if let Some(sw) = &a.sweep {
        let (header, rows) = table(sw);
        // the phase and its settings to the left, figures to the right
        let left = if sw.merit == Merit::PerCore { 1 } else { 1 + sw.columns.len() };
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let rows: Vec<Vec<String>> = rows.into_iter().map(|r| r.into_iter().map(|c| c.0).collect()).collect();
        out.push_str(&format!("\n{}:\n{}{}\n", title(sw), render(&header, &rows, left), note(sw)));
    }
    if !a.interference.is_empty() {
        let rows: Vec<Vec<String>> = a.interference.iter().map(interference_cells).collect();
        out.push_str(&format!(
            "\nbefore -> during: each workload in its first phase against a phase others joined \
             (change, and during / before):\n{}",
            render(&INTERFERENCE_HEADER, &rows, 2)
        ));
    }
    out
}

/// The views as sections of the report's page, the sweep with its charts (`sweep-`).
pub fn html(s: &RunSummary, charts: &[Chart], h: &mut String) {
    let a = &s.analysis;
    if let Some(sw) = &a.sweep {
        let _ = write!(
            h,
            "<section id=\"sweep\"><h2>{}</h2><p class=\"note\">{}</p><table style=\"white-space:nowrap\"><thead><tr>",
            esc(&capitalised(&title(sw))),
            esc(&note(sw))
        );
        let (header, rows) = table(sw);
        for c in &header {
            let _ = write!(h, "<th>{}</th>", esc(c));
        }
        h.push_str("</tr></thead><tbody>");
        for (r, cells) in sw.rows.iter().zip(rows) {
            let fail = r.per_core.is_some_and(|p| p.verdict == super::views::PerCoreVerdict::BelowMinimum);
            h.push_str(if fail { "<tr class=\"fail\">" } else { "<tr>" });
            for (i, (cell, value)) in cells.iter().enumerate() {
                let value = value.map(|v| format!(" data-value=\"{v}\"")).unwrap_or_default();
                let _ = write!(
                    h,
                    "<td data-phase=\"{}\" data-metric=\"{}\"{value}>{}</td>",
                    esc(&r.phase),
                    esc(&metric_of(&header[i])),
                    esc(cell)
                );
            }
            h.push_str("</tr>");
        }
        h.push_str("</tbody></table>");
        for c in charts.iter().filter(|c| c.id.starts_with("sweep-")) {
            let _ = write!(h, "<figure>{}</figure>", c.svg());
        }
        h.push_str("</section>\n");
    }
    if !a.interference.is_empty() {
        h.push_str(
            "<section id=\"interference\"><h2>Before and during</h2><p class=\"note\">Each workload in its first \
             phase against a phase other workloads joined: its figures before → during, the change in percent and \
             the ratio during / before. Latency is of its busiest op.</p><table><thead><tr>",
        );
        for c in INTERFERENCE_HEADER {
            let _ = write!(h, "<th>{c}</th>");
        }
        h.push_str("</tr></thead><tbody>");
        for r in &a.interference {
            h.push_str("<tr>");
            let (b, d) = (&r.before_figures, &r.during_figures);
            // each figure's exact value during, and before
            let values = [
                None,
                None,
                Some((b.iops, d.iops)),
                b.attainment.zip(d.attainment),
                Some((b.p50_us, d.p50_us)),
                Some((b.p99_us, d.p99_us)),
            ];
            for (i, cell) in interference_cells(r).iter().enumerate() {
                let value =
                    values[i].map(|(b, d)| format!(" data-before=\"{b}\" data-value=\"{d}\"")).unwrap_or_default();
                let _ = write!(
                    h,
                    "<td data-workload=\"{}\" data-view=\"before-during\" data-metric=\"{}\"{value}>{}</td>",
                    esc(&r.workload),
                    metric_of(INTERFERENCE_HEADER[i]),
                    esc(&cell.replace("->", "→"))
                );
            }
            h.push_str("</tr>");
        }
        h.push_str("</tbody></table></section>\n");
    }
}

/// A column's header as a `data-metric` name: `MB/s per core` → `mb_s_per_core`.
fn metric_of(header: &str) -> String {
    let lower = header.to_lowercase().replace(['/', '.', ' '], "_");
    lower.split('_').filter(|p| !p.is_empty()).collect::<Vec<_>>().join("_")
}

fn capitalised(text: &str) -> String {
    let mut c = text.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

/// The sweep's setting against IOPS, MB/s and latency percentiles, one point per row,
/// and for vioperf MB/s per core against its thresholds.
pub fn charts(s: &RunSummary) -> Vec<Chart> {
    let Some(sw) = &s.analysis.sweep else { return Vec::new() };
    // one varied setting names its points; several, the phase does
    let names: Vec<String> =
        sw.rows.iter().map(|r| if r.values.len() == 1 { r.values[0].clone() } else { r.phase.clone() }).collect();
    let subject = if sw.columns.len() == 1 { sw.setting.as_str() } else { "phase" };
    let x = || Axis::categories(subject, names.clone());
    // a line joins the points of an ordered setting (sizes); op or distribution are not a scale
    let style = if matches!(sw.merit, Merit::ResponseTime | Merit::Settle) { Style::LineDots } else { Style::Dots };
    let points = |f: &dyn Fn(&SweepRow) -> f64| sw.rows.iter().enumerate().map(|(i, r)| (i as f64, f(r))).collect();
    let rate = sw.unit.label();
    let mut iops = Chart::new("sweep-iops", &format!("{rate} by {subject}"), x(), Axis::new(rate, Unit::Count));
    iops.add(rate, style, points(&|r| r.iops));
    let mut mbps = Chart::new("sweep-mbps", &format!("Throughput by {subject}"), x(), Axis::new("MB/s", Unit::Count));
    mbps.add("MB/s", style, points(&|r| r.mb_per_s));
    let mut lat =
        Chart::new("sweep-latency", &format!("Latency by {subject}"), x(), Axis::log("latency", Unit::Micros));
    if sw.merit == Merit::ResponseTime {
        lat.add("response time (mean)", style, points(&|r| r.mean_us));
    }
    lat.add("p50", style, points(&|r| r.p50_us));
    lat.add("p99", style, points(&|r| r.p99_us));
    lat.add("p99.9", style, points(&|r| r.p99_9_us));
    let mut out = vec![iops];
    if sw.unit.counts_bytes() {
        out.push(mbps);
    }
    out.push(lat);
    if sw.merit == Merit::PerCore {
        let mut per_core =
            Chart::new("sweep-per-core", "MB/s per core per test", x(), Axis::new("MB/s per core", Unit::Count));
        per_core.add("MB/s per core", style, points(&|r| r.per_core.map_or(0.0, |p| p.mb_per_s_per_core)));
        let across = |v: f64| vec![(-0.5, v), (sw.rows.len() as f64 - 0.5, v)];
        per_core.add(&format!("minimum {PER_CORE_MINIMUM}"), Style::Dashed, across(PER_CORE_MINIMUM));
        per_core.add(&format!("recommended {PER_CORE_RECOMMENDED}"), Style::Dashed, across(PER_CORE_RECOMMENDED));
        out.push(per_core);
    }
    out.into_iter().filter(|c| !c.is_empty()).collect()
}
