//! Plain-text tables for the terminal: the per-step results of a run and the run list.

use super::format::{count, latency_us, rate, rate_in, seconds, sig3};
use super::measured::Pair;
use super::summary::RunSummary;
use crate::analysis::usl::Verdict;
use crate::metrics::summary::{OpSummary, Throughput};
use crate::scenario::units::Size;
use crate::store::RunRow;

/// Left-aligns the first `left` columns, right-aligns the rest, two spaces apart.
pub fn render(header: &[&str], rows: &[Vec<String>], left: usize) -> String {
    let widths: Vec<usize> = (0..header.len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).chain([header[i].len()]).max().unwrap_or(0))
        .collect();
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let pad = widths[i] - c.chars().count();
                if i < left { format!("{c}{}", " ".repeat(pad)) } else { format!("{}{c}", " ".repeat(pad)) }
            })
            .collect();
        padded.join("  ").trim_end().to_string()
    };
    let mut out = line(header.to_vec());
    out.push('\n');
    for r in rows {
        out.push_str(&line(r.iter().map(String::as_str).collect()));
        out.push('\n');
    }
    out
}

/// The rate column of a table of `ops`: headed by their unit when they share one
/// (`IOPS`, `TPS`), else `rate` with each cell naming its own (`4,602 TPS`).
struct RateColumn(Option<Throughput>);

impl RateColumn {
    fn of<'a>(ops: impl Iterator<Item = &'a OpSummary>) -> RateColumn {
        RateColumn::of_units(ops.map(|o| o.unit))
    }

    fn of_units(mut units: impl Iterator<Item = Throughput>) -> RateColumn {
        let first = units.next();
        RateColumn(first.filter(|f| units.all(|u| u == *f)))
    }

    fn header(&self) -> &'static str {
        self.0.map_or("rate", Throughput::label)
    }

    fn cell(&self, o: &OpSummary) -> String {
        self.value(o.rate(), o.unit)
    }

    fn value(&self, v: f64, unit: Throughput) -> String {
        match self.0 {
            Some(_) => rate(v, unit),
            None => rate_in(v, unit),
        }
    }
}

/// The programs (what ran them, as stored) of the workloads `which` picks, joined.
fn programs(s: &RunSummary, which: impl Fn(&super::measured::WorkloadSummary) -> bool) -> String {
    let mut names: Vec<&str> = Vec::new();
    for w in s.workloads.iter().filter(|w| which(w)) {
        if !names.contains(&w.workload.engine.as_str()) {
            names.push(&w.workload.engine);
        }
    }
    names.join(", ")
}

/// The results table of one run: one row per workload and op.
pub fn results(s: &RunSummary) -> String {
    let measured = || s.workloads.iter().flat_map(|w| &w.ops).filter(|o| !o.is_network());
    let column = RateColumn::of(measured());
    let little = format!("{} x mean", column.header());
    let header = ["workload", "op", "depth", column.header(), "MB/s", "mean", "p50", "p99", "p99.9", "max", &little];
    let mut rows = Vec::new();
    for w in &s.workloads {
        if w.ops.is_empty() {
            rows.push(
                vec![w.workload.name.clone(), "-".into(), w.concurrency.to_string(), "no measured IO".into()]
                    .into_iter()
                    .chain(std::iter::repeat_n(String::new(), header.len() - 4))
                    .collect(),
            );
        }
        // network streams move bytes, not counted ops: they have a table of their own
        for o in w.ops.iter().filter(|o| !o.is_network()) {
            rows.push(vec![
                w.workload.name.clone(),
                o.op.to_string(),
                w.concurrency.to_string(),
                column.cell(o),
                if o.unit.counts_bytes() { sig3(o.mb_per_s) } else { "-".into() },
                latency_us(o.latency.mean_us),
                latency_us(o.latency.p50_us),
                latency_us(o.latency.p99_us),
                latency_us(o.latency.p99_9_us),
                latency_us(o.latency.max_us),
                format!("{:.2}", o.littles_n),
            ]);
        }
    }
    let mut out = if rows.is_empty() { String::new() } else { render(&header, &rows, 2) };
    let transacting = programs(s, |w| w.ops.iter().any(|o| o.unit == Throughput::Tps));
    if !transacting.is_empty() {
        out.push_str(&format!("txn: {transacting} transactions (depth: its clients)\n"));
    }
    out.push_str(&network(s));
    out.push_str(&hosts(s));
    out.push_str(&phases(s));
    out.push_str(&events(s));
    out.push_str(&open_loop(s));
    out.push_str(&fidelity(s));
    out.push_str(&checked(s));
    out
}

/// The open-loop workloads' ops against their target rates, with service time (from
/// submission), since their latency counts from each op's scheduled start.
fn open_loop(s: &RunSummary) -> String {
    let mut out = String::new();
    if s.workloads.iter().any(|w| w.ops.iter().any(|o| o.service_time.is_some())) {
        out.push_str("\nopen-loop workloads (latency counts from each op's scheduled start):\n");
        let mut rows = Vec::new();
        let column = RateColumn::of(s.workloads.iter().flat_map(|w| &w.ops).filter(|o| o.service_time.is_some()));
        let target = format!("target {}", column.header());
        for w in &s.workloads {
            for o in w.ops.iter().filter(|o| o.service_time.is_some()) {
                let svc = o.service_time.as_ref().expect("filtered");
                let target = o.target_iops.unwrap_or(0.0);
                rows.push(vec![
                    w.workload.name.clone(),
                    o.op.to_string(),
                    column.value(target, o.unit),
                    column.cell(o),
                    format!("{:.1}%", if target > 0.0 { o.iops / target * 100.0 } else { 0.0 }),
                    latency_us(svc.p50_us),
                    latency_us(svc.p99_us),
                ]);
            }
        }
        out.push_str(&render(
            &["workload", "op", &target, "achieved", "of target", "service p50", "service p99"],
            &rows,
            2,
        ));
    }
    out
}

/// What reads checked against the blocks' crc32c header found, per workload.
fn checked(s: &RunSummary) -> String {
    let mut out = String::new();
    let checked: Vec<String> = s
        .workloads
        .iter()
        .flat_map(|w| w.ops.iter().filter_map(|o| o.verify).map(move |v| (w, v)))
        .map(|(w, v)| {
            format!(
                "{}: {} good, {} corrupt, {} misplaced{}\n",
                w.workload.name,
                count(v.good as f64),
                count(v.corrupt as f64),
                count(v.misplaced as f64),
                if v.failures() > 0 { "  <- the storage returned wrong data" } else { "" }
            )
        })
        .collect();
    if !checked.is_empty() {
        out.push_str("\nblocks read and checked against their crc32c header:\n");
        out.push_str(&checked.concat());
    }
    out
}

/// Per phase, when the timeline had more than one: each op's figures in it, so any
/// workload can be compared before, during and after.
fn phases(s: &RunSummary) -> String {
    if s.phases.len() < 2 {
        return String::new();
    }
    let column = RateColumn::of(s.phases.iter().flat_map(|p| &p.ops));
    let little = format!("{} x mean", column.header());
    let header = ["phase", "seconds", "workload", "op", column.header(), "MB/s", "p50", "p99", &little];
    let mut rows = Vec::new();
    for p in &s.phases {
        let span = match p.phase.end_t {
            Some(end) => format!("{}-{end}", p.phase.start_t),
            None => format!("{}-", p.phase.start_t),
        };
        if p.ops.is_empty() {
            rows.push(
                vec![p.phase.label.clone(), span.clone(), "-".into(), "-".into(), "ramp only".into()]
                    .into_iter()
                    .chain(std::iter::repeat_n(String::new(), 4))
                    .collect(),
            );
        }
        for (i, o) in p.ops.iter().enumerate() {
            let first = i == 0;
            // network streams count bytes, with no per-op latency
            let network = !o.unit.has_latency();
            rows.push(vec![
                if first { p.phase.label.clone() } else { String::new() },
                if first { span.clone() } else { String::new() },
                o.workload.clone(),
                o.op.to_string(),
                column.cell(o),
                if o.unit.counts_bytes() { sig3(o.mb_per_s) } else { "-".into() },
                if network { "-".into() } else { latency_us(o.latency.p50_us) },
                if network { "-".into() } else { latency_us(o.latency.p99_us) },
                if network { "-".into() } else { format!("{:.2}", o.littles_n) },
            ]);
        }
    }
    let mut out = format!("\nphases (seconds of the run; ramps excluded):\n{}", render(&header, &rows, 4));
    let changes: Vec<String> = s
        .phases
        .iter()
        .filter(|p| !p.facts.differs.is_empty())
        .map(|p| format!("  {}: {}", p.phase.label, p.facts.differs_text()))
        .collect();
    if !changes.is_empty() {
        out.push_str(&format!("what differs from the phase before:\n{}\n", changes.join("\n")));
    }
    out
}

/// What the timeline did besides running workloads, in order.
/// iperf3 workloads: throughput per workload and direction, as a share of the link
/// when the scenario gave its speed (the column only then: a share of a speed nobody
/// gave is not a figure), and retransmits per second.
fn network(s: &RunSummary) -> String {
    let linked = s.workloads.iter().any(|w| w.stored.link_bps.is_some() && w.ops.iter().any(|o| o.is_network()));
    let mut rows = Vec::new();
    for w in &s.workloads {
        for o in w.ops.iter().filter(|o| o.is_network()) {
            let gbit = o.rate();
            let link = w.stored.link_bps;
            let retransmits = s
                .observed
                .iter()
                .find(|x| x.source == format!("{}:{}", w.workload.engine, w.workload.name) && x.name == "retransmits")
                .map(|x| format!("{:.1}", x.mean))
                .unwrap_or_else(|| "-".into());
            let share = link.map(|l| format!("{:.1}%", gbit * 1e9 / l * 100.0)).unwrap_or_else(|| "-".into());
            let row = [w.workload.name.clone(), o.op.to_string(), w.workload.workers.to_string(), format!("{gbit:.3}")];
            rows.push(row.into_iter().chain(linked.then_some(share)).chain([retransmits]).collect::<Vec<_>>());
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    let mut out = format!("\nnetwork ({}):\n", programs(s, |w| w.ops.iter().any(|o| o.is_network())));
    let header: Vec<&str> = ["workload", "op", "streams", "Gbit/s"]
        .into_iter()
        .chain(linked.then_some("of link"))
        .chain(["retransmits/s"])
        .collect();
    out.push_str(&render(&header, &rows, 2));
    out
}

/// Workloads placed on hosts: each host's share.
fn hosts(s: &RunSummary) -> String {
    let mut rows = Vec::new();
    for w in s.workloads.iter().filter(|w| !w.hosts.is_empty()) {
        for h in &w.hosts {
            rows.push(vec![
                w.workload.name.clone(),
                h.host.clone(),
                h.workers.to_string(),
                count(h.iops),
                sig3(h.mb_per_s),
                latency_us(h.mean_us),
                h.p50_us.map(latency_us).unwrap_or_default(),
                h.p99_us.map(latency_us).unwrap_or_default(),
                h.p99_9_us.map(latency_us).unwrap_or_default(),
            ]);
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nper host (the workload's percentiles above merge every host's histograms):\n");
    out.push_str(&render(&["workload", "host", "workers", "IOPS", "MB/s", "mean", "p50", "p99", "p99.9"], &rows, 2));
    out
}

fn events(s: &RunSummary) -> String {
    let mut out = String::new();
    if !s.events.is_empty() {
        out.push_str("\ntimeline events:\n");
        for e in &s.events {
            let took = e.took_ms.map(|ms| format!(" ({:.1} s)", ms as f64 / 1000.0)).unwrap_or_default();
            let status = match (e.kind.as_str(), e.status) {
                ("mark", _) => String::new(),
                (_, Some(0)) => " ok".into(),
                (_, Some(n)) => format!(" failed ({n})"),
                (_, None) => " failed".into(),
            };
            // a driver's event carries its program's own closing figures
            let said = match e.kind.as_str() {
                kind if kind == "host-lost" || crate::scenario::program::find(kind).is_some() => {
                    format!(": {}", e.detail)
                }
                _ => String::new(),
            };
            out.push_str(&format!("  {:>7.1}s  {} {}{status}{took}{said}\n", e.at_ms as f64 / 1000.0, e.kind, e.label));
        }
    }
    out
}

/// Asked vs achieved, for workloads with a rate, a read/write mix or several block
/// sizes: `asked -> achieved` per column.
fn fidelity(s: &RunSummary) -> String {
    let shown = || s.workloads.iter().filter(|w| w.fidelity.worth_showing() && !w.ops.is_empty());
    let column = RateColumn::of_units(shown().filter(|w| w.fidelity.rate().is_some()).map(|w| w.fidelity.unit));
    let rows: Vec<Vec<String>> = shown()
        .map(|w| {
            let f = &w.fidelity;
            let unit = f.unit;
            let pair = |asked: Option<f64>, achieved: String, fmt: &dyn Fn(f64) -> String| match asked {
                Some(a) => format!("{} -> {achieved}", fmt(a)),
                None => achieved,
            };
            // what the workload's unit does not measure is `-`
            let or_none = |p: Option<&Pair>, shown: &dyn Fn(&Pair) -> String| p.map_or("-".to_string(), shown);
            let sizes: Vec<String> = f
                .block_sizes
                .iter()
                .map(|b| match b.achieved_percent {
                    Some(got) => format!("{} {:.0}% -> {got:.1}%", Size(b.bytes), b.asked_percent),
                    None => format!("{} {:.0}% -> ?", Size(b.bytes), b.asked_percent),
                })
                .collect();
            vec![
                w.workload.name.clone(),
                or_none(f.rate(), &|r| pair(r.asked, column.value(r.achieved, unit), &|v| column.value(v, unit))),
                or_none(f.mb_per_s.as_ref(), &|m| pair(m.asked, sig3(m.achieved), &sig3)),
                or_none(f.read_percent.as_ref(), &|r| {
                    pair(r.asked, format!("{:.1}%", r.achieved), &|v| format!("{v:.0}%"))
                }),
                if sizes.is_empty() { "-".into() } else { sizes.join(", ") },
            ]
        })
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let unknown = s.workloads.iter().flat_map(|w| &w.fidelity.block_sizes).any(|b| b.achieved_percent.is_none());
    format!(
        "\nasked -> achieved (over the measured window):\n{}{}",
        render(&["workload", column.header(), "MB/s", "reads", "block sizes"], &rows, 1),
        if unknown { "? = not known: fio does not report IOs per block size\n" } else { "" }
    )
}

/// The run list.
pub fn runs(list: &[(RunRow, Option<String>)]) -> String {
    let rows: Vec<Vec<String>> = list
        .iter()
        .map(|(r, headline)| {
            vec![
                r.id.to_string(),
                r.scenario.clone(),
                r.started_at.clone(),
                r.duration_s.map(seconds).unwrap_or_else(|| "-".into()),
                r.status.clone(),
                headline.clone().unwrap_or_default(),
            ]
        })
        .collect();
    render(&["id", "scenario", "started", "duration", "status", "headline"], &rows, 6)
}

/// The analysis under the results: Little's law gaps, steady state, settling and change
/// per phase, and the curve's knee and USL fit.
pub fn analysis(s: &RunSummary) -> String {
    let a = &s.analysis;
    let mut out = String::new();
    for l in a.littles_law.iter().filter(|l| l.flagged) {
        out.push_str(&format!(
            "\nLittle's law: {} held {:.1} IOs in flight for {} configured ({:+.0}%): time is lost outside the device \
             (the generator, or queueing above it), or the measurement is off\n",
            l.workload, l.measured, l.expected, l.gap_percent
        ));
    }
    if s.phases.len() > 1 {
        let rows: Vec<Vec<String>> = a
            .phases
            .iter()
            .map(|p| {
                let change = p.change_text();
                vec![
                    p.phase.clone(),
                    p.workload.clone(),
                    p.steady_text(),
                    p.settle_s.map(|t| format!("{t} s")).unwrap_or_default(),
                    if change.is_empty() { "-".into() } else { change },
                ]
            })
            .collect();
        let round = a.phases.first().map_or(super::analysis::ROUND_S, |p| p.round_s);
        out.push_str(&format!(
            "\nper phase: steady state (SNIA: {} rounds of {round} s), latency settled after, change from the \
             workload's first phase:\n{}",
            crate::analysis::steady_state::WINDOW,
            render(&["phase", "workload", "steady state", "settled", "change"], &rows, 2)
        ));
    }
    if !a.compared.is_empty() {
        let rows: Vec<Vec<String>> = a
            .compared
            .iter()
            .map(|c| {
                let pair =
                    |a: f64, b: f64, f: &dyn Fn(f64) -> String, pct: f64| format!("{} -> {} ({pct:+.1}%)", f(a), f(b));
                vec![
                    format!("{} vs {}", c.workload, c.baseline),
                    pair(c.baseline_figures.iops, c.figures.iops, &count, c.change.iops_percent),
                    pair(c.baseline_figures.p50_us, c.figures.p50_us, &latency_us, c.change.p50_percent),
                    pair(c.baseline_figures.p99_us, c.figures.p99_us, &latency_us, c.change.p99_percent),
                ]
            })
            .collect();
        out.push_str(&format!(
            "\ncompared (the scenario's `compare:`, each against the first):\n{}",
            render(&["", compared_unit(s).label(), "p50", "p99"], &rows, 2)
        ));
    }
    out.push_str(&curve(s));
    out
}

/// The curve over the phases: its knee, where a one-point test would stand, and the
/// USL fit. Empty without a curve.
fn curve(s: &RunSummary) -> String {
    let mut out = String::new();
    if let Some(c) = &s.analysis.curve {
        let label = |i: usize| s.phases.get(i).map(|p| p.phase.label.clone()).unwrap_or_default();
        out.push_str("\ncurve over the phases:");
        if let Some(k) = c.knee {
            out.push_str(&format!(" knee (most {} per µs of latency) at {}", c.unit.label(), label(k.max_power)));
            if let Some(d) = k.latency_doubled {
                out.push_str(&format!("; latency doubled from {} at {}", label(0), label(d)));
            }
        }
        out.push_str(&format!(
            "; you are here (the lowest concurrency, what a one-point test reports): {}\n",
            rate_in(c.points[c.you_are_here].1, c.unit)
        ));
        let u = &c.usl;
        match (&u.fit, u.verdict) {
            (Some(f), Verdict::Good | Verdict::Poor) => out.push_str(&format!(
                "USL fit: sigma {:.4}, kappa {:.2e}, lambda {}, R² {:.3}; {} (`fathom fit --run {}` for more)\n",
                f.sigma.value,
                f.kappa.value,
                sig3(f.lambda.value),
                f.r_squared,
                u.headline(),
                s.run.id
            )),
            _ => out.push_str(&format!("USL: {}\n", u.headline())),
        }
    }
    out
}

/// What the observers saw, one line per source with each figure's mean over the run:
/// the host's CPU (as mpstat), fathom's own, and each device (as `iostat -x`).
pub fn observed(s: &RunSummary) -> String {
    let mut rows: Vec<Vec<String>> = Vec::new();
    for source in s.observed.iter().map(|o| &o.source).filter(|src| *src != "prometheus") {
        if rows.iter().any(|r| &r[0] == source) {
            continue;
        }
        let mut figures: Vec<_> = s.observed.iter().filter(|o| &o.source == source).collect();
        figures.sort_by_key(|o| observed_label(&o.name).0);
        let figures: Vec<String> = figures
            .iter()
            .map(|o| format!("{} {}", observed_label(&o.name).1, observed_value(&o.name, o.mean)))
            .collect();
        rows.push(vec![source.clone(), figures.join("  ")]);
    }
    rows.sort_by_key(|r| match r[0].as_str() {
        "host" => 0,
        "fathom" => 1,
        "programs" => 2,
        _ => 3,
    });
    let remote = s.observed.iter().filter(|o| o.source == "prometheus").count();
    if rows.is_empty() && remote == 0 {
        return String::new();
    }
    let mut out = format!("\nobserved (mean over the run)\n{}", render(&["source", "figures"], &rows, 2));
    if remote > 0 {
        out.push_str(&format!("prometheus: {remote} series stored (`fathom export RUN --samples`)\n"));
    }
    out
}

/// The stored figure names with iostat's and mpstat's column names, in their order.
const OBSERVED_LABELS: [(&str, &str); 16] = [
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
];

/// A figure's label and its place among the others. A figure not in
/// [`OBSERVED_LABELS`] is named without its unit (`clock_offset_ms`: `clock offset`),
/// which its value carries (`-4.67 ms`): one unit per figure.
fn observed_label(name: &str) -> (usize, String) {
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
    match name {
        n if n.ends_with("_ms") && v < 0.0 => format!("-{}", latency_us(-v * 1000.0)),
        n if n.ends_with("_ms") => latency_us(v * 1000.0),
        n if n.ends_with("_pct") => format!("{v:.1}"),
        "areq_sz_kB" => format!("{} kB", sig3(v)),
        _ if v >= 1000.0 => count(v),
        _ => sig3(v),
    }
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
    }
}
