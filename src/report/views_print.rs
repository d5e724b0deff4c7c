//! The sweep and interference views ([`super::views`]) as the terminal, the report's
//! page and its charts show them: one table each, with the sweep's figure of merit,
//! and the sweep's setting charted against IOPS, MB/s and latency.

use super::chart::{Axis, Chart, Style, Unit, esc};
use super::format::{count, latency_us, sig3};
use super::summary::RunSummary;
use super::table::html::capitalised;
use super::table::{Cell, Column, Mark, Row, Table, text};
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
    let busiest = "rate and latency are of the op a program leads with (TPC-C's new-order), else latency is of each phase's busiest op";
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
        Merit::PerCore => {
            let cores: Vec<f64> = sw.rows.iter().filter_map(|r| r.per_core).map(|p| p.cores).collect();
            let ran = match cores.first() {
                Some(&n) if cores.iter().all(|&c| c == n) => format!("the {n} cores that ran it"),
                _ => "the cores that ran it".into(),
            };
            format!(
                "MB/s per core: the test's MB/s over {ran}, a thread each (vioperf runs a thread per core); \
                 {PER_CORE_MINIMUM} is its minimum, {PER_CORE_RECOMMENDED} its recommendation. fathom CPU: the \
                 cores fathom kept busy (its CRC and IO)."
            )
        }
        Merit::Rates => format!("Each phase ran one workload; {busiest}."),
    }
}

/// The sweep's table: phase, the varied settings, rates, latency, and the figure of
/// merit's columns; every cell carries its phase and metric on the page.
fn table(sw: &Sweep) -> Table {
    let mean = if sw.merit == Merit::ResponseTime { "response time" } else { "mean" };
    // vioperf's tests are named for what they do: their settings' columns would only crowd
    let settings = if sw.merit == Merit::PerCore { &[][..] } else { &sw.columns[..] };
    let named = |h: &str| Column::name(h).metric(&metric_of(h));
    let figure = |h: &str| Column::figure(h).metric(&metric_of(h));
    let mut columns: Vec<Column> = vec![named("phase")];
    columns.extend(settings.iter().map(|s| named(s)));
    columns.extend([figure(sw.unit.label()), figure("MB/s").drop_at(2), figure(mean).drop_at(3), figure("p50")]);
    columns.extend([figure("p99"), figure("p99.9")]);
    match sw.merit {
        Merit::Settle => columns.push(figure("latency steady from")),
        Merit::PerCore => columns.extend([figure("MB/s per core"), figure("fathom CPU"), named("verdict")]),
        Merit::ResponseTime | Merit::Rates => {}
    }
    let mut t = Table::new("sweep", &title(sw), columns).note(note(sw));
    let shown = |v: f64, f: &dyn Fn(f64) -> String| Cell::figure(v, f(v));
    for r in &sw.rows {
        let latency = |v: f64| if r.timed { shown(v, &latency_us) } else { "-".into() };
        let mut cells = vec![Cell::from(r.phase.as_str())];
        cells.extend(r.values.iter().take(settings.len()).map(|v| Cell::from(v.as_str())));
        cells.extend([
            shown(r.iops, &count),
            // a transaction's bytes are not counted: absent, not 0
            if sw.unit.counts_bytes() { shown(r.mb_per_s, &sig3) } else { "-".into() },
            latency(r.mean_us),
            latency(r.p50_us),
            latency(r.p99_us),
            latency(r.p99_9_us),
        ]);
        if let Some(s) = r.settle {
            cells.push(Cell { text: s.text(), value: s.steady_from_s.map(|v| v as f64), before: None });
        }
        if let Some(p) = r.per_core {
            cells.push(shown(p.mb_per_s_per_core, &sig3));
            cells.push(match p.fathom_cores {
                Some(c) => shown(c, &|c| format!("{c:.2} cores")),
                None => "-".into(),
            });
            cells.push(p.verdict_text().into());
        }
        let fail = r.per_core.is_some_and(|p| p.verdict == super::views::PerCoreVerdict::BelowMinimum);
        t.push(Row::new(cells).key("phase", &r.phase).mark(if fail { Mark::Fail } else { Mark::Plain }));
    }
    t
}

/// `a -> b (+12%, x1.12)`.
fn before_after(a: f64, b: f64, percent: f64, ratio: Option<f64>, f: &dyn Fn(f64) -> String) -> Cell {
    let ratio = ratio.map(|r| format!(", x{}", sig3(r))).unwrap_or_default();
    Cell::change(a, b, format!("{} -> {} ({percent:+.0}%{ratio})", f(a), f(b)))
}

/// Each workload in its first phase against a phase others joined: IOPS, achieved
/// rate, p50 and p99 before and during.
fn interference(rows: &[InterferenceRow]) -> Table {
    let columns = vec![
        Column::name("workload").metric("workload"),
        Column::name("phases").metric("phases"),
        Column::figure("IOPS").metric("iops"),
        Column::figure("achieved rate").metric("achieved_rate").drop_at(2),
        Column::figure("p50").metric("p50").drop_at(1),
        Column::figure("p99").metric("p99"),
    ];
    let title = "before -> during: each workload in its first phase against a phase others joined";
    let mut t =
        Table::new("interference", title, columns).note("change, and during / before; latency is of its busiest op");
    for r in rows {
        let (b, d, c, x) = (&r.before_figures, &r.during_figures, &r.change, &r.ratio);
        let percent = |v: f64| format!("{:.0}%", v * 100.0);
        let achieved = match (b.attainment, d.attainment, c.attainment_percent) {
            (Some(a), Some(z), Some(pct)) => before_after(a, z, pct, x.attainment, &percent),
            _ => "-".into(),
        };
        let cells = vec![
            r.workload.as_str().into(),
            format!("{} -> {}", r.before, r.during).into(),
            before_after(b.iops, d.iops, c.iops_percent, x.iops, &count),
            achieved,
            before_after(b.p50_us, d.p50_us, c.p50_percent, x.p50, &latency_us),
            before_after(b.p99_us, d.p99_us, c.p99_percent, x.p99, &latency_us),
        ];
        t.push(Row::new(cells).key("workload", &r.workload).key("view", "before-during"));
    }
    t
}

/// The views for the terminal (`fathom show`, the end of `fathom run`).
pub fn terminal(s: &RunSummary, width: usize) -> String {
    let a = &s.analysis;
    let mut out = String::new();
    if let Some(sw) = &a.sweep {
        out.push_str(&text::render(&table(sw), width));
    }
    if !a.interference.is_empty() {
        out.push_str(&text::render(&interference(&a.interference), width));
    }
    out
}

/// The views as sections of the report's page, the sweep with its charts (`sweep-`).
pub fn html(s: &RunSummary, charts: &[Chart], h: &mut String) {
    let a = &s.analysis;
    if let Some(sw) = &a.sweep {
        let t = table(sw);
        let _ = write!(
            h,
            "<section id=\"sweep\"><h2>{}</h2><p class=\"note\">{}</p>",
            esc(&capitalised(&t.title)),
            esc(t.note.as_deref().unwrap_or_default())
        );
        super::table::html::table(&t, h);
        for c in charts.iter().filter(|c| c.id.starts_with("sweep-")) {
            let _ = write!(h, "<figure>{}</figure>", c.svg());
        }
        h.push_str("</section>\n");
    }
    if !a.interference.is_empty() {
        h.push_str(
            "<section id=\"interference\"><h2>Before and during</h2><p class=\"note\">Each workload in its first \
             phase against a phase other workloads joined: its figures before → during, the change in percent and \
             the ratio during / before. Latency is of its busiest op.</p>",
        );
        super::table::html::table(&interference(&a.interference), h);
        h.push_str("</section>\n");
    }
}

/// A column's header as a `data-metric` name: `MB/s per core` → `mb_s_per_core`.
fn metric_of(header: &str) -> String {
    let lower = header.to_lowercase().replace(['/', '.', ' '], "_");
    lower.split('_').filter(|p| !p.is_empty()).collect::<Vec<_>>().join("_")
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
