//! The tables about a timeline of several phases: each op's figures per phase, what
//! ran in each, and per phase its steady state, settling and change.

use crate::metrics::summary::{OpSummary, Throughput};
use crate::report::format::{latency_us, rate_in};
use crate::report::sections::workloads::{RateColumn, latency, mb_per_s};
use crate::report::summary::RunSummary;
use crate::report::table::{Cell, Column, Row, Table};

/// Per phase, when the timeline had more than one: each op's figures in it, so any
/// workload can be compared before, during and after.
pub fn figures(s: &RunSummary) -> Table {
    let column = RateColumn::of(s.phases.iter().flat_map(|p| &p.ops));
    let columns = vec![
        Column::name("phase"),
        Column::figure("seconds").drop_at(4),
        Column::name("workload"),
        Column::name("op"),
        Column::figure(column.header()).metric("rate"),
        Column::figure("MB/s").metric("mb_per_s").drop_at(3),
        Column::figure("p50").metric("p50_us").drop_at(2),
        Column::figure("p99").metric("p99_us"),
        Column::figure(&format!("{} x mean", column.header())).drop_at(1),
    ];
    let mut t = Table::new("phase-figures", "phases", columns).note("seconds of the run; ramps excluded");
    if s.phases.len() < 2 {
        return t;
    }
    for p in &s.phases {
        let label = p.phase.label.as_str();
        let span = match p.phase.end_t {
            Some(end) => format!("{}-{end}", p.phase.start_t),
            None => format!("{}-", p.phase.start_t),
        };
        if p.ops.is_empty() {
            let mut cells: Vec<Cell> =
                vec![label.into(), span.as_str().into(), "-".into(), "-".into(), "ramp only".into()];
            cells.resize(t.columns.len(), Cell::default());
            t.push(Row::new(cells).key("phase", label));
        }
        for (i, o) in p.ops.iter().enumerate() {
            // the phase named once, on its first row
            let first = |text: &str| Cell::from(if i == 0 { text } else { "" });
            let little = match o.timed() {
                true => Cell::figure(o.littles_n, format!("{:.2}", o.littles_n)),
                false => "-".into(),
            };
            let cells = vec![
                first(label),
                first(&span),
                o.workload.as_str().into(),
                o.op.to_string().into(),
                column.cell(o),
                mb_per_s(o),
                latency(o, o.latency.p50_us),
                latency(o, o.latency.p99_us),
                little,
            ];
            t.push(Row::new(cells).key("phase", label).key("workload", &o.workload).key("op", o.op));
        }
    }
    let changes: Vec<String> = s
        .phases
        .iter()
        .filter(|p| !p.facts.differs.is_empty())
        .map(|p| format!("  {}: {}", p.phase.label, p.facts.differs_text()))
        .collect();
    if !changes.is_empty() {
        t.after.push("what differs from the phase before:".into());
        t.after.extend(changes);
    }
    t
}

/// With several phases: what ran in each (workers and depth per workload) and what
/// differs from the phase before, so a reader sees which phases are comparable.
pub fn ran(s: &RunSummary) -> Table {
    let columns = vec![Column::name("phase"), Column::name("ran"), Column::name("differs").metric("differs")];
    let mut t = Table::new("ran", "what ran", columns)
        .note("per phase: each workload's workers and depth, and what differs from the phase before");
    if s.phases.len() < 2 {
        return t;
    }
    for p in &s.phases {
        let ran: Vec<String> =
            p.facts.ran.iter().map(|r| format!("{} ×{} at depth {}", r.workload, r.workers, r.depth)).collect();
        let cells = vec![p.phase.label.as_str().into(), ran.join(", ").into(), p.facts.differs_text().into()];
        t.push(Row::new(cells).key("phase", &p.phase.label));
    }
    t
}

/// Per phase and workload: its rate and p99, steady state (SNIA rounds), when latency
/// settled, and the change from the workload's first phase.
pub fn steadiness(s: &RunSummary) -> Table {
    let a = &s.analysis;
    let round = a.phases.first().map_or(crate::report::analysis::ROUND_S, |p| p.round_s);
    let columns = vec![
        Column::name("phase"),
        Column::name("workload"),
        Column::figure("seconds").drop_at(3),
        Column::figure("rate").metric("rate").drop_at(2),
        Column::figure("p99").metric("p99_us").drop_at(1),
        Column::name("steady state"),
        Column::figure("settled"),
        Column::name("change"),
    ];
    let title = format!(
        "per phase: steady state (SNIA: {} rounds of {round} s), latency settled after, change from the workload's \
         first phase",
        crate::analysis::steady_state::WINDOW
    );
    let mut t = Table::new("steadiness", &title, columns);
    if s.phases.len() < 2 {
        return t;
    }
    for p in &a.phases {
        let ops: Vec<&OpSummary> = s
            .phases
            .iter()
            .filter(|ps| ps.phase.label == p.phase)
            .flat_map(|ps| &ps.ops)
            .filter(|o| o.workload == p.workload && o.op != "sync")
            .collect();
        let unit = ops.first().map_or(Throughput::Iops, |o| o.unit);
        let rate: f64 = ops.iter().map(|o| o.rate()).sum();
        let p99 = ops.iter().map(|o| o.latency.p99_us).fold(0.0, f64::max);
        let change = p.change_text();
        let cells = vec![
            p.phase.as_str().into(),
            p.workload.as_str().into(),
            format!("{:.0}", p.seconds).into(),
            Cell::figure(rate, rate_in(rate, unit)),
            if ops.iter().any(|o| o.timed()) { Cell::figure(p99, latency_us(p99)) } else { "-".into() },
            p.steady_text().into(),
            p.settle_s.map(|t| format!("{t} s")).unwrap_or_default().into(),
            if change.is_empty() { "-".into() } else { change.into() },
        ];
        t.push(Row::new(cells).key("phase", &p.phase).key("workload", &p.workload));
    }
    t
}
