//! The tables about each workload over its measured window: its ops' rates and
//! latency, open-loop ops against their targets, network streams, each host's share,
//! and what was asked against what was achieved.

use crate::metrics::summary::{OpSummary, Throughput};
use crate::report::format::{count, latency_us, rate, rate_in, sig3};
use crate::report::measured::{Pair, WorkloadSummary};
use crate::report::summary::RunSummary;
use crate::report::table::{Cell, Column, Row, Table};
use crate::scenario::units::Size;

/// The rate column of a table of ops: headed by their unit when they share one
/// (`IOPS`, `TPS`), else `rate` with each cell naming its own (`4,602 TPS`).
pub struct RateColumn(Option<Throughput>);

impl RateColumn {
    pub fn of<'a>(ops: impl Iterator<Item = &'a OpSummary>) -> RateColumn {
        RateColumn::of_units(ops.map(|o| o.unit))
    }

    fn of_units(mut units: impl Iterator<Item = Throughput>) -> RateColumn {
        let first = units.next();
        RateColumn(first.filter(|f| units.all(|u| u == *f)))
    }

    pub fn header(&self) -> &'static str {
        self.0.map_or("rate", Throughput::label)
    }

    pub fn cell(&self, o: &OpSummary) -> Cell {
        Cell::figure(o.rate(), self.value(o.rate(), o.unit))
    }

    pub fn value(&self, v: f64, unit: Throughput) -> String {
        match self.0 {
            Some(_) => rate(v, unit),
            None => rate_in(v, unit),
        }
    }
}

/// A latency cell, `-` for what has none (network streams count bytes, not ops; some
/// programs' transactions are counted, not timed).
pub fn latency(o: &OpSummary, us: f64) -> Cell {
    match o.timed() {
        true => Cell::figure(us, latency_us(us)),
        false => "-".into(),
    }
}

/// MB/s, `-` for ops whose bytes are not counted (a transaction's).
pub fn mb_per_s(o: &OpSummary) -> Cell {
    match o.unit.counts_bytes() {
        true => Cell::figure(o.mb_per_s, sig3(o.mb_per_s)),
        // blank: a table whose ops move no bytes fathom counts leaves the column out
        false => Cell::default(),
    }
}

/// The programs (what ran them, as stored) of the workloads `which` picks, joined.
pub fn programs(s: &RunSummary, which: impl Fn(&WorkloadSummary) -> bool) -> String {
    let mut names: Vec<&str> = Vec::new();
    for w in s.workloads.iter().filter(|w| which(w)) {
        if !names.contains(&w.workload.engine.as_str()) {
            names.push(&w.workload.engine);
        }
    }
    names.join(", ")
}

/// One row per workload and op, over each workload's measured window; network streams
/// have [`network`] instead.
pub fn results(s: &RunSummary) -> Table {
    let column = RateColumn::of(s.workloads.iter().flat_map(|w| &w.ops).filter(|o| !o.is_network()));
    let columns = vec![
        Column::name("workload"),
        Column::name("op"),
        Column::figure("depth").drop_at(4),
        Column::figure(column.header()).metric(column.0.map_or("rate", Throughput::key)),
        Column::figure("MB/s").metric("mb_per_s").drop_at(5),
        Column::figure("mean").metric("mean_us").drop_at(7),
        Column::figure("p50").metric("p50_us"),
        Column::figure("p90").metric("p90_us").drop_at(9),
        Column::figure("p99").metric("p99_us"),
        Column::figure("p99.9").metric("p99_9_us").drop_at(6),
        Column::figure("max").metric("max_us").drop_at(8),
        Column::figure(&format!("{} x mean", column.header())).drop_at(3),
    ];
    let mut t = Table::new("results", "", columns);
    for w in &s.workloads {
        let name = &w.workload.name;
        if w.ops.is_empty() {
            let mut cells = vec![Cell::from(name.as_str()), "-".into(), w.concurrency.to_string().into()];
            cells.push("no measured IO".into());
            cells.resize(t.columns.len(), Cell::default());
            t.push(Row::new(cells));
        }
        for o in w.ops.iter().filter(|o| !o.is_network()) {
            let l = &o.latency;
            // blank, not `-`: a column no workload rates is then left out
            let rated = |cell: Cell| if w.rated() { cell } else { Cell::default() };
            let cells = vec![
                Cell::from(name.as_str()),
                o.op.to_string().into(),
                w.concurrency.to_string().into(),
                rated(column.cell(o)),
                mb_per_s(o),
                latency(o, l.mean_us),
                latency(o, l.p50_us),
                latency(o, l.p90_us),
                latency(o, l.p99_us),
                latency(o, l.p99_9_us),
                latency(o, l.max_us),
                match (o.timed(), w.rated()) {
                    (true, true) => Cell::figure(o.littles_n, format!("{:.2}", o.littles_n)),
                    (_, false) => Cell::default(),
                    (false, true) => "-".into(),
                },
            ];
            t.push(Row::new(cells).key("workload", name).key("op", o.op));
        }
    }
    let transacting = programs(s, |w| w.rated() && w.ops.iter().any(|o| o.unit == Throughput::Tps));
    if !transacting.is_empty() {
        // each program's own word for its sessions (sysbench's threads)
        let words: Vec<&str> = transacting
            .split(", ")
            .map(|name| crate::scenario::program::find(name).and_then(|p| p.concurrency().first().copied()))
            .map(|word| word.unwrap_or("clients"))
            .collect();
        let word = if words.iter().all(|w| *w == words[0]) { words[0] } else { "clients" };
        t.after.push(format!("txn: {transacting} transactions (depth: its {word})"));
    }
    t
}

/// The open-loop workloads' ops against their target rates, with service time (from
/// submission), since their latency counts from each op's scheduled start.
pub fn open_loop(s: &RunSummary) -> Table {
    let paced =
        || s.workloads.iter().flat_map(|w| w.ops.iter().map(move |o| (w, o))).filter(|(_, o)| o.service_time.is_some());
    let column = RateColumn::of(paced().map(|(_, o)| o));
    let columns = vec![
        Column::name("workload"),
        Column::name("op"),
        Column::figure(&format!("target {}", column.header())).metric("target"),
        Column::figure("achieved").metric(column.0.map_or("rate", Throughput::key)),
        Column::figure("of target").metric("achieved_percent"),
        Column::figure("service p50").metric("service_p50_us").drop_at(1),
        Column::figure("service p99").metric("service_p99_us"),
    ];
    let mut t =
        Table::new("open-loop", "open-loop workloads", columns).note("latency counts from each op's scheduled start");
    for (w, o) in paced() {
        let svc = o.service_time.as_ref().expect("picked for it");
        let target = o.target_iops.unwrap_or(0.0);
        let share = if target > 0.0 { o.iops / target * 100.0 } else { 0.0 };
        let cells = vec![
            Cell::from(w.workload.name.as_str()),
            o.op.to_string().into(),
            Cell::figure(target, column.value(target, o.unit)),
            column.cell(o),
            Cell::figure(share, format!("{share:.1}%")),
            Cell::figure(svc.p50_us, latency_us(svc.p50_us)),
            Cell::figure(svc.p99_us, latency_us(svc.p99_us)),
        ];
        t.push(Row::new(cells).key("workload", &w.workload.name).key("op", o.op));
    }
    t
}

/// Network streams: throughput per workload and direction, as a share of the link when
/// the scenario gave its speed (a share of a speed nobody gave is not a figure), and
/// retransmits per second.
pub fn network(s: &RunSummary) -> Table {
    let columns = vec![
        Column::name("workload"),
        Column::name("op"),
        Column::figure("streams"),
        Column::figure("Gbit/s").metric("gbit_per_s"),
        Column::figure("of link").metric("link_percent"),
        Column::figure("retransmits/s").metric("retransmits"),
    ];
    let title = format!("network ({})", programs(s, |w| w.ops.iter().any(|o| o.is_network())));
    let mut t = Table::new("network", &title, columns);
    for w in &s.workloads {
        for o in w.ops.iter().filter(|o| o.is_network()) {
            let gbit = o.rate();
            let source = format!("{}:{}", w.workload.engine, w.workload.name);
            let retransmits = s.observed.iter().find(|x| x.source == source && x.name == "retransmits");
            let share = w.stored.link_bps.map(|l| gbit * 1e9 / l * 100.0);
            let cells = vec![
                Cell::from(w.workload.name.as_str()),
                o.op.to_string().into(),
                w.workload.workers.to_string().into(),
                Cell::figure(gbit, format!("{gbit:.3}")),
                share.map_or(Cell::default(), |p| Cell::figure(p, format!("{p:.1}%"))),
                retransmits.map_or("-".into(), |x| Cell::figure(x.mean, format!("{:.1}", x.mean))),
            ];
            t.push(Row::new(cells).key("workload", &w.workload.name).key("op", o.op));
        }
    }
    t
}

/// Workloads placed on hosts: each host's share, with its own percentiles.
pub fn hosts(s: &RunSummary) -> Table {
    // IOPS, or TPS for a program's transactions on hosts (tpcc)
    let column = RateColumn::of_units(s.workloads.iter().filter(|w| !w.hosts.is_empty()).map(|w| w.fidelity.unit));
    let columns = vec![
        Column::name("workload"),
        Column::name("host"),
        Column::figure("workers").drop_at(2),
        Column::figure(column.header()).metric("iops"),
        Column::figure("MB/s").metric("mb_per_s").drop_at(3),
        Column::figure("mean").metric("mean_us").drop_at(4),
        Column::figure("p50").metric("p50_us"),
        Column::figure("p99").metric("p99_us"),
        Column::figure("p99.9").metric("p99_9_us").drop_at(1),
    ];
    let mut t = Table::new("per-host", "per host", columns)
        .note("the workload's percentiles above merge every host's histograms");
    let percentile = |v: Option<f64>| v.map_or(Cell::default(), |v| Cell::figure(v, latency_us(v)));
    for w in s.workloads.iter().filter(|w| !w.hosts.is_empty()) {
        for h in &w.hosts {
            let cells = vec![
                Cell::from(w.workload.name.as_str()),
                h.host.as_str().into(),
                h.workers.to_string().into(),
                Cell::figure(h.iops, column.value(h.iops, w.fidelity.unit)),
                Cell::figure(h.mb_per_s, sig3(h.mb_per_s)),
                Cell::figure(h.mean_us, latency_us(h.mean_us)),
                percentile(h.p50_us),
                percentile(h.p99_us),
                percentile(h.p99_9_us),
            ];
            t.push(Row::new(cells).key("workload", &w.workload.name).key("host", &h.host));
        }
    }
    t
}

/// Asked vs achieved, for workloads with a rate, a read/write mix or several block
/// sizes: `asked -> achieved` per column; what the workload's unit does not measure is `-`.
pub fn fidelity(s: &RunSummary) -> Table {
    let shown = || s.workloads.iter().filter(|w| w.fidelity.worth_showing() && !w.ops.is_empty());
    let column = RateColumn::of_units(shown().filter(|w| w.fidelity.rate().is_some()).map(|w| w.fidelity.unit));
    let columns = vec![
        Column::name("workload"),
        Column::figure(column.header()),
        Column::figure("MB/s").drop_at(2),
        Column::figure("reads"),
        Column::name("block sizes").drop_at(1).metric("block_sizes"),
    ];
    let mut t = Table::new("fidelity", "asked -> achieved", columns).note("over the measured window");
    for w in shown() {
        let (f, unit) = (&w.fidelity, w.fidelity.unit);
        let pair = |asked: Option<f64>, achieved: String, fmt: &dyn Fn(f64) -> String| match asked {
            Some(a) => format!("{} -> {achieved}", fmt(a)),
            None => achieved,
        };
        let or_none = |p: Option<&Pair>, shown: &dyn Fn(&Pair) -> String| p.map_or("-".to_string(), shown);
        let sizes: Vec<String> = f
            .block_sizes
            .iter()
            .map(|b| match b.achieved_percent {
                Some(got) => format!("{} {:.0}% -> {got:.1}%", Size(b.bytes), b.asked_percent),
                None => format!("{} {:.0}% -> ?", Size(b.bytes), b.asked_percent),
            })
            .collect();
        let cells = vec![
            w.workload.name.clone(),
            or_none(f.rate(), &|r| pair(r.asked, column.value(r.achieved, unit), &|v| column.value(v, unit))),
            or_none(f.mb_per_s.as_ref(), &|m| pair(m.asked, sig3(m.achieved), &sig3)),
            or_none(f.read_percent.as_ref(), &|r| {
                pair(r.asked, format!("{:.1}%", r.achieved), &|v| format!("{v:.0}%"))
            }),
            if sizes.is_empty() { "-".into() } else { sizes.join(", ") },
        ];
        t.push(Row::new(cells.into_iter().map(Cell::from).collect()).key("workload", &w.workload.name));
    }
    if s.workloads.iter().flat_map(|w| &w.fidelity.block_sizes).any(|b| b.achieved_percent.is_none()) {
        t.after.push("? = not known: fio does not report IOs per block size".into());
    }
    t
}

/// What reads checked against the blocks' crc32c header found, per workload.
pub fn checked(s: &RunSummary) -> Table {
    let columns = vec![
        Column::name("workload"),
        Column::figure("good").metric("verify_good"),
        Column::figure("corrupt").metric("verify_corrupt"),
        Column::figure("misplaced").metric("verify_misplaced"),
        Column::name(""),
    ];
    let mut t = Table::new("checked", "blocks read and checked against their crc32c header", columns);
    for (w, v) in s.workloads.iter().flat_map(|w| w.ops.iter().filter_map(|o| o.verify).map(move |v| (w, v))) {
        let figure = |n: u64| Cell::figure(n as f64, count(n as f64));
        let said = if v.failures() > 0 { "<- the storage returned wrong data" } else { "" };
        let cells =
            vec![w.workload.name.as_str().into(), figure(v.good), figure(v.corrupt), figure(v.misplaced), said.into()];
        t.push(Row::new(cells).key("workload", &w.workload.name));
    }
    t
}
