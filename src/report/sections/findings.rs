//! The tables of what the analysis and the timeline found: workloads compared, Little's
//! law, the timeline's events, what the observers saw, and the run list.

use crate::analysis::noise::Change;
use crate::metrics::format::counted;
use crate::metrics::summary::Throughput;
use crate::report::format::{count, latency_us, seconds, sig3};
use crate::report::summary::RunSummary;
use crate::report::table::{Cell, Column, Mark, Row, Table};
use crate::store::{Observed, RunRow};
use std::collections::BTreeMap;

/// The scenario's `compare:` workloads, each against the first, over their measured
/// windows.
pub fn compared(s: &RunSummary) -> Table {
    let unit = compared_unit(s);
    let columns = vec![
        Column::name("workload"),
        Column::name("against"),
        Column::figure(unit.label()).metric(unit.key()),
        // an A/B is answered by its rate, then its tail: p50 gives way first
        Column::figure("p50").metric("p50_us").drop_at(1),
        Column::figure("p99").metric("p99_us").drop_at(0),
    ];
    let mut t = Table::new("compared", "compared", columns).note(
        "the scenario's `compare:`, each against the first: better or worse only where the 95% confidence intervals \
         of the mean of each one's per-second samples do not overlap (as `fathom compare` judges), ~ within that noise",
    );
    for c in &s.analysis.compared {
        let (f, b, ch, v) = (&c.figures, &c.baseline_figures, &c.change, &c.verdict);
        let pair = |a: f64, z: f64, show: &dyn Fn(f64) -> String, pct: f64, verdict: Change| {
            Cell::change(a, z, format!("{} -> {} ({pct:+.1}% {})", show(a), show(z), verdict.as_str()))
        };
        let cells = vec![
            c.workload.as_str().into(),
            c.baseline.as_str().into(),
            pair(b.iops, f.iops, &count, ch.iops_percent, v.iops),
            pair(b.p50_us, f.p50_us, &latency_us, ch.p50_percent, v.p50_us),
            pair(b.p99_us, f.p99_us, &latency_us, ch.p99_percent, v.p99_us),
        ];
        t.push(Row::new(cells).key("workload", &c.workload));
    }
    t
}

/// What the `compare:` rows count: the first compared workload's unit (TPS for
/// pgbench's a/b, else IOPS).
fn compared_unit(s: &RunSummary) -> Throughput {
    let first = s.analysis.compared.first().map(|c| c.workload.as_str());
    s.workloads
        .iter()
        .find(|w| Some(w.workload.name.as_str()) == first)
        .and_then(|w| w.ops.first())
        .map_or(Throughput::Iops, |o| o.unit)
}

/// Little's law per workload: the ops in flight its rate and mean latency imply,
/// against the concurrency set.
pub fn littles_law(s: &RunSummary) -> Table {
    let columns = vec![
        Column::name("workload"),
        Column::name("loop"),
        Column::figure("expected"),
        Column::figure("measured").metric("littles_n"),
        Column::figure("gap").metric("gap_percent"),
    ];
    let mut t = Table::new("littles-law", "Little's law", columns).note(
        "rate x mean latency = ops in flight; a closed-loop workload should hold its configured depth, and a gap over \
         10% means time lost outside the device (the generator, or queueing above it)",
    );
    for l in &s.analysis.littles_law {
        let cells = vec![
            l.workload.as_str().into(),
            (if l.open_loop { "open" } else { "closed" }).into(),
            format!("{:.2}", l.expected).into(),
            Cell::figure(l.measured, format!("{:.2}", l.measured)),
            Cell::figure(l.gap_percent, format!("{:+.1}%", l.gap_percent)),
        ];
        t.push(Row::new(cells).key("workload", &l.workload).mark(if l.flagged { Mark::Flag } else { Mark::Plain }));
    }
    t
}

/// What the timeline did besides running workloads, in order (`exec `x` ok`,
/// `pgbench closed ok`); under them, what a program said as it closed (its own
/// figures) and why a host was lost, whole.
pub fn events(s: &RunSummary) -> Table {
    let columns = vec![Column::figure("at"), Column::name("event"), Column::figure("took")];
    let mut t = Table::new("events", "timeline events", columns);
    // autovacuum runs come by the dozen a minute: counted per server, listed in --json
    let mut vacuums: BTreeMap<&str, (usize, i64)> = BTreeMap::new();
    // in the order they happened (a program's closing event is written as it ends)
    let mut events: Vec<&crate::store::EventRow> = s.events.iter().collect();
    events.sort_by_key(|e| e.at_ms);
    for e in events {
        if e.kind == "autovacuum" {
            let (n, longest) = vacuums.entry(&e.label).or_default();
            (*n, *longest) = (*n + 1, (*longest).max(e.took_ms.unwrap_or(0)));
            continue;
        }
        let status = match (e.kind.as_str(), e.status) {
            ("mark" | "checkpoint", _) => String::new(),
            (_, Some(0)) => " ok".into(),
            (_, Some(n)) => format!(" failed ({n})"),
            (_, None) => " failed".into(),
        };
        if ["host-lost", "checkpoint"].contains(&e.kind.as_str()) || crate::scenario::program::find(&e.kind).is_some() {
            // its lines in tabs are a table of their own (`event_tables`)
            let mut lines = e.detail.lines().filter(|l| !l.contains('\t'));
            t.after.push(format!("  {} {}: {}", e.kind, e.label, lines.next().unwrap_or_default()));
            t.after.extend(lines.map(|l| format!("    {l}")));
        }
        let cells = vec![
            format!("{:.1} s", e.at_ms as f64 / 1000.0).into(),
            format!("{} {}{status}", e.kind, e.label).into(),
            e.took_ms.map(|ms| format!("{:.1} s", ms as f64 / 1000.0)).unwrap_or_default().into(),
        ];
        t.push(Row::new(cells).mark(if e.status.is_some_and(|n| n != 0) { Mark::Fail } else { Mark::Plain }));
    }
    for (server, (n, longest)) in vacuums {
        t.after.push(format!("  autovacuum {server}: {n} runs, the longest {:.1} s", longest as f64 / 1000.0));
    }
    t
}

/// The tables a program's closing event carries (TPC-H's per-query seconds): its lines
/// with tabs, the first of them the header; the first and last columns are names.
pub fn event_tables(s: &RunSummary) -> Vec<Table> {
    let mut out = Vec::new();
    for e in s.events.iter().filter(|e| crate::scenario::program::find(&e.kind).is_some()) {
        let mut lines = e.detail.lines().filter(|l| l.contains('\t'));
        let Some(header) = lines.next() else { continue };
        let headers: Vec<&str> = header.split('\t').collect();
        let last = headers.len() - 1;
        let columns = headers
            .iter()
            .enumerate()
            .map(|(i, h)| if i == 0 || i == last { Column::name(h) } else { Column::figure(h) })
            .collect();
        let mut t = Table::new("event-table", &format!("{} {}", e.kind, e.label), columns);
        for l in lines {
            let mut cells: Vec<Cell> = l.split('\t').map(|c| Cell::from(c.to_string())).collect();
            cells.resize(headers.len(), Cell::from(String::new()));
            t.push(Row::new(cells));
        }
        out.push(t);
    }
    out
}

/// What the observers saw, one row per source with each figure's mean over the run:
/// the host's CPU (as mpstat), fathom's own, and each device (as `iostat -x`).
pub fn observed(s: &RunSummary) -> Table {
    let mut t = Table::new("observed", "observed", vec![Column::name("source"), Column::name("figures")])
        .note("mean over the run");
    let mut sources: Vec<&String> = Vec::new();
    // remote series and the databases' are many, named as their exporters name them:
    // their charts and the checkpoints table show them
    let listed = |src: &&String| *src != "prometheus" && !src.starts_with("postgres:") && !src.starts_with("mariadb:");
    let rows: Vec<(String, &Observed)> = s.observed.iter().map(|o| (row_of(o), o)).collect();
    for source in rows.iter().map(|(row, _)| row).filter(listed) {
        if !sources.contains(&source) {
            sources.push(source);
        }
    }
    // a program's sources (`sysbench:t16`) in the order of their workloads, not their names
    let workload = |src: &str| {
        let name = src.split_once(':').map(|(_, name)| name);
        s.workloads.iter().position(|w| Some(w.workload.name.as_str()) == name).unwrap_or(usize::MAX)
    };
    sources.sort_by_key(|src| match src.as_str() {
        "host" => (0, 0),
        "fathom" => (1, 0),
        "programs" => (2, 0),
        other => (3, workload(other)),
    });
    for source in sources {
        let mut figures: Vec<_> = rows.iter().filter(|(row, _)| row == source).map(|(_, o)| *o).collect();
        figures.sort_by_key(|o| observed_label(&o.name).0);
        let figures: Vec<String> = figures
            .iter()
            .map(|o| format!("{} {}", observed_label(&o.name).1, observed_value(&o.name, o.mean)))
            .collect();
        // a few figures a row, so that a row fits 80 columns without losing one
        for (i, some) in figures.chunks(FIGURES_A_ROW).enumerate() {
            let name = if i == 0 { source.as_str() } else { "" };
            t.push(Row::new(vec![name.into(), some.join("  ").into()]));
        }
    }
    let remote = s.observed.iter().filter(|o| o.source == "prometheus").count();
    if remote > 0 {
        t.after.push(format!("prometheus: {remote} series stored (`fathom export RUN --samples`)"));
    }
    t
}

/// The row a figure is shown on: its source's, but a network interface's own
/// (`net:eth0`, an agent's `net:eth0@HOST`), as a device under a target has its own.
fn row_of(o: &Observed) -> String {
    match crate::observe::network::device(&o.name) {
        Some(dev) => match o.source.strip_prefix("host:") {
            Some(host) => format!("net:{dev}@{host}"),
            None => format!("net:{dev}"),
        },
        None => o.source.clone(),
    }
}

/// Observed figures on one row of the terminal's table.
const FIGURES_A_ROW: usize = 4;

/// The stored figure names with iostat's, mpstat's and `sar -n DEV,EDEV`'s column
/// names (a link's bytes in its own unit, Mbit/s), in their order.
const OBSERVED_LABELS: [(&str, &str); 26] = [
    ("usr_pct", "%usr"),
    ("sys_pct", "%sys"),
    ("iowait_pct", "%iowait"),
    ("steal_pct", "%steal"),
    ("idle_pct", "%idle"),
    ("cpu_cores", "cpu (cores)"),
    (crate::analysis::lint::GENERATOR_BUSY, "%generator busy"),
    ("r_s", "r/s"),
    ("w_s", "w/s"),
    ("rkB_s", "rkB/s"),
    ("wkB_s", "wkB/s"),
    ("areq_sz_kB", "areq-sz"),
    ("aqu_sz", "aqu-sz"),
    ("r_await_ms", "r_await"),
    ("w_await_ms", "w_await"),
    ("util_pct", "%util"),
    ("rtt_ms", "rtt"),
    ("rtt_max_ms", "rtt max"),
    ("node_network_receive_bytes_total", "rxMbit/s"),
    ("node_network_transmit_bytes_total", "txMbit/s"),
    ("node_network_receive_packets_total", "rxpck/s"),
    ("node_network_transmit_packets_total", "txpck/s"),
    ("node_network_receive_errs_total", "rxerr/s"),
    ("node_network_transmit_errs_total", "txerr/s"),
    ("node_network_receive_drop_total", "rxdrop/s"),
    ("node_network_transmit_drop_total", "txdrop/s"),
];

/// A figure's label and its place among the others. A figure not in
/// [`OBSERVED_LABELS`] is named without its unit (`clock_offset_ms`: `clock offset`),
/// which its value carries (`-4.67 ms`): one unit per figure.
fn observed_label(name: &str) -> (usize, String) {
    // a NUMA node's busy follows the host's idle; a series' labels name its row or its node
    if let Some(node) = name.strip_prefix("numa_node_busy_pct{node=") {
        return (5, format!("%busy node{}", node.trim_end_matches('}').trim_matches('"')));
    }
    let name = name.split('{').next().unwrap_or(name);
    match OBSERVED_LABELS.iter().enumerate().find(|(_, (n, _))| *n == name) {
        Some((i, (_, label))) => (i, label.to_string()),
        None => {
            let bare = name.strip_suffix("_ms").unwrap_or(name);
            let label = match bare.strip_suffix("_pct") {
                Some(pct) => format!("%{pct}"),
                None => bare.to_string(),
            };
            (99, label.replace('_', " "))
        }
    }
}

fn observed_value(name: &str, v: f64) -> String {
    match name.split('{').next().unwrap_or(name) {
        n if n.ends_with("_bytes_total") => sig3_or_count(v * 8.0 / 1e6),
        n if n.ends_with("_ms") && v < 0.0 => format!("-{}", latency_us(-v * 1000.0)),
        n if n.ends_with("_ms") => latency_us(v * 1000.0),
        n if n.ends_with("_pct") => format!("{v:.1}"),
        "areq_sz_kB" => format!("{} kB", sig3(v)),
        _ => sig3_or_count(v),
    }
}

/// A figure with its thousands grouped, or three significant digits below 1,000.
fn sig3_or_count(v: f64) -> String {
    if v >= 1000.0 { count(v) } else { sig3(v) }
}

/// A run's headline in the run list: the study's deciding figure, the first clause of
/// its answer (`qd64 IOPS is 5.4x qd1's, 5,151 -> 27,747`, or the figure its program is
/// read by, `42,590 NOPM from 101,575 TPM`); without an answer, that figure of its
/// headline workload, with its p99 where its ops were timed (`27,747 IOPS (qd64), p99
/// 13.5 ms`).
pub fn headline(s: &RunSummary) -> Option<String> {
    if let Some(a) = &s.answer {
        let first = a.answer.split("; ").next().unwrap_or_default();
        let figure =
            first.split(" (limit").next().unwrap_or(first).trim_end_matches(": PASS").trim_end_matches(": FAIL");
        return Some(figure.to_string());
    }
    let q = s.headline.as_ref()?;
    let w = s.workloads.iter().find(|w| w.workload.name == q.workload)?;
    let p99 = w.ops.iter().filter(|o| o.timed()).map(|o| o.latency.p99_us).reduce(f64::max);
    Some(match (q.declared, p99) {
        (false, Some(p99)) => format!("{} ({}), p99 {}", q.text, q.workload, latency_us(p99)),
        _ => format!("{} ({})", q.text, q.workload),
    })
}

/// The run list, with each run's headline: every column kept (scripts read it line by
/// line), a long scenario name or headline shortened to fit instead.
pub fn runs(list: &[(RunRow, Option<String>)]) -> Table {
    let columns = vec![
        Column::name("id"),
        Column::name("scenario"),
        Column::name("started"),
        Column::name("duration"),
        Column::name("status").whole(),
        Column::name("headline"),
    ];
    let mut t = Table::new("runs", "", columns);
    for (r, headline) in list {
        let cells = vec![
            r.id.to_string(),
            r.scenario.clone(),
            started(&r.started_at),
            r.duration_s.map(seconds).unwrap_or_else(|| "-".into()),
            r.status.clone(),
            headline.clone().unwrap_or_default(),
        ];
        t.push(Row::new(cells.into_iter().map(Cell::from).collect()));
    }
    t
}

/// A run's start as a table shows it, to the minute (`2026-11-28 20:00`): the seconds
/// and the zone (UTC, always) take a narrow terminal's room from the headline;
/// `runs --json` keeps the whole time.
fn started(at: &str) -> String {
    match at.get(..16) {
        Some(minute) if at.len() >= 16 => minute.replacen('T', " ", 1),
        _ => at.to_string(),
    }
}

/// Each database workload's checkpoints that stalled it: when, how long, its rate before
/// and during, how far it fell; then per workload how many checkpoints were judged and
/// stalled, each stall in a sentence, and the rate's coefficient of variation per phase.
pub fn checkpoints(s: &RunSummary) -> Table {
    let columns = vec![
        Column::name("workload"),
        Column::figure("checkpoint at"),
        Column::figure("took"),
        Column::figure("rate before"),
        Column::figure("during"),
        Column::name("stall"),
    ];
    let mut t = Table::new("checkpoints", "checkpoints that stalled the rate", columns)
        .note("rate: new orders per minute (TPC-C) or transactions per second");
    let rate = |c: &crate::report::checkpoints::Checkpoints, v: f64| {
        format!("{} {}", crate::metrics::format::count(c.in_unit(v)), c.unit)
    };
    for c in &s.analysis.checkpoints {
        for e in &c.effects {
            let Some(st) = &e.stall else { continue };
            let cells = vec![
                c.workload.clone().into(),
                format!("{:.1} s", e.at_s).into(),
                format!("{:.1} s", e.took_s).into(),
                rate(c, e.before).into(),
                rate(c, e.during).into(),
                format!("fell {:.0}% for {} s", st.drop_percent, st.seconds).into(),
            ];
            t.push(Row::new(cells).mark(Mark::Fail));
        }
        let stalled = c.effects.iter().filter(|e| e.stall.is_some()).count();
        if !c.effects.is_empty() {
            t.after.push(format!(
                "{}: {} judged, {stalled} stalled its rate",
                c.workload,
                counted(c.effects.len() as u64, "checkpoint")
            ));
        }
        t.after.extend(c.findings());
        for (phase, cv) in &c.variation {
            t.after.push(format!(
                "{}: {} varies {:.0}% second to second in {phase} (CoV)",
                c.workload,
                c.unit,
                cv * 100.0
            ));
        }
    }
    if t.rows.is_empty() {
        // no stall to list: what is left to say is how the rate wandered
        t.title = "the rate second to second".into();
        t.note = None;
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `host:h1 clock_offset_ms -4672.00 ns` named the unit twice, and the wrong one.
    #[test]
    fn an_observed_figure_carries_one_unit() {
        let shown = |name: &str, v: f64| format!("{} {}", observed_label(name).1, observed_value(name, v));
        assert_eq!(shown("clock_offset_ms", -4.672), "clock offset -4.67 ms");
        assert_eq!(shown("clock_offset_ms", 0.25), "clock offset 250 µs");
        assert_eq!(shown("rtt_ms", 0.08), "rtt 80.0 µs");
        assert_eq!(shown("sample_lag_p99_ms", 12.0), "sample lag p99 12.0 ms");
        assert_eq!(shown("r_await_ms", 1.5), "r_await 1.50 ms");
        assert_eq!(shown("generator_busy_pct", 97.0), "%generator busy 97.0");
        assert_eq!(shown("retransmits", 3.0), "retransmits 3.00");
        // a counter's figure is its rise per second: bytes as the link's Mbit/s
        assert_eq!(shown("node_network_receive_bytes_total{device=\"eth0\"}", 1.25e9), "rxMbit/s 10,000");
        assert_eq!(shown("node_network_transmit_drop_total{device=\"eth0\"}", 2.0), "txdrop/s 2.00");
        assert_eq!(shown("numa_node_busy_pct{node=\"1\"}", 97.04), "%busy node1 97.0");
    }
}
