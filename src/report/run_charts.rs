//! The charts of one run's page, built from its [`RunSummary`]: IOPS, MB/s and latency
//! over time with the timeline's phases and marks, what the observers saw, the
//! concurrency curves and the latency histograms. `html.rs` lays them out; `fathom fit`
//! and `compare` draw with the same pieces.

use super::chart::{Axis, Band, Chart, Mark, Style, Unit};
use super::format::{rate_in, sig3};
use super::summary::RunSummary;
use crate::analysis::usl::{Peak, Usl, Verdict};
use crate::error::Result;
use crate::metrics::Op;
use crate::metrics::summary::Throughput;
use crate::store::{Observed, Store};
use hdrhistogram::Histogram;
use std::collections::{BTreeMap, BTreeSet};

/// The phases as shaded bands and the marks as lines, for every time-series chart.
pub(super) fn timeline_decor(s: &RunSummary) -> (Vec<Band>, Vec<Mark>) {
    let end = s.workloads.iter().map(|w| w.workload.end_t).max().unwrap_or(0) as f64;
    let bands = if s.phases.len() > 1 {
        s.phases
            .iter()
            .map(|p| Band {
                from: p.phase.start_t as f64,
                to: p.phase.end_t.map(|e| e as f64).unwrap_or(end),
                label: p.phase.label.clone(),
            })
            .collect()
    } else {
        Vec::new()
    };
    // a server's checkpoints are named by kind (their label is the server), the
    // server's name added when the run has several
    let servers = s.events.iter().filter(|e| e.kind == "checkpoint").map(|e| &e.label).collect::<BTreeSet<_>>().len();
    let first_autovacuum = s.events.iter().position(|e| e.kind == "autovacuum");
    let marks = s
        .events
        .iter()
        .enumerate()
        .filter(|(_, e)| ["mark", "exec", "hook", "host-lost", "checkpoint", "autovacuum"].contains(&e.kind.as_str()))
        .map(|(i, e)| {
            // autovacuum runs come by the dozen a minute: the first is named, which
            // says what the others (drawn alike) are, and the rest go unlabelled
            let label = match e.kind.as_str() {
                "autovacuum" if Some(i) == first_autovacuum => e.kind.clone(),
                "autovacuum" => String::new(),
                "checkpoint" if servers > 1 => format!("checkpoint {}", e.label),
                "checkpoint" => e.kind.clone(),
                _ => e.label.clone(),
            };
            // a checkpoint's length is what a stall is read against
            let until = e.took_ms.filter(|_| e.kind == "checkpoint").map(|t| (e.at_ms + t) as f64 / 1000.0);
            Mark { x: e.at_ms as f64 / 1000.0, label, until }
        })
        .collect();
    (bands, marks)
}

/// IOPS, MB/s and latency (p50 and p99) per workload over the run, in bins of `bin` s.
pub(super) fn time_series(s: &RunSummary, bin: i64) -> Vec<Chart> {
    let per = if bin == 1 { "per second".to_string() } else { format!("per {} bin", Unit::Seconds.label(bin as f64)) };
    let time = || Axis::new("time into the run", Unit::Seconds);
    // IOs and transactions are counted per second alike; the chart is named after each
    let mut counted: Vec<&str> = Vec::new();
    for u in s.workloads.iter().flat_map(|w| &w.ops).map(|o| o.unit).filter(|u| u.counts_ops()) {
        if !counted.contains(&u.label()) {
            counted.push(u.label());
        }
    }
    let counted = if counted.is_empty() { "IOPS".to_string() } else { counted.join(" and ") };
    let mut iops = Chart::new("ts-iops", &format!("{counted} ({per})"), time(), Axis::new(&counted, Unit::Count));
    let mut mbps = Chart::new("ts-mbps", &format!("Throughput ({per})"), time(), Axis::new("MB/s", Unit::Count));
    let mut lat =
        Chart::new("ts-latency", &format!("Latency p50 and p99 ({per})"), time(), Axis::log("latency", Unit::Micros));
    let mut tail =
        Chart::new("ts-p99-9", &format!("Latency p99.9 ({per})"), time(), Axis::log("latency", Unit::Micros));
    let mid = |t: i64| t as f64 + bin as f64 / 2.0;
    let several_ops = s.workloads.iter().any(|w| w.ops.len() > 1);
    for (i, (w, scan)) in s.workloads.iter().zip(&s.scans).enumerate() {
        let mut totals: BTreeMap<i64, (u64, u64)> = BTreeMap::new();
        let mut per_op: BTreeMap<Op, BTreeMap<i64, u64>> = BTreeMap::new();
        let mut p: BTreeMap<Op, Vec<(f64, f64, f64, f64)>> = BTreeMap::new();
        // ops counted but not timed (HammerDB's calls) have no latency to draw
        let timed = |op: Op| w.ops.iter().any(|o| o.op == op.as_str() && o.timed());
        for b in &scan.bins {
            if b.op != Op::Sync {
                let t = totals.entry(b.t).or_default();
                t.0 += b.ops;
                t.1 += b.bytes;
                *per_op.entry(b.op).or_default().entry(b.t).or_default() += b.ops;
            }
            if b.p50_us.is_finite() && !b.op.is_network() && timed(b.op) {
                p.entry(b.op).or_default().push((mid(b.t), b.p50_us, b.p99_us, b.p99_9_us));
            }
        }
        let name = &w.workload.name;
        // transactions of different types are never summed into one line (TPC-C's
        // payments are not its new orders); reads and writes of IO are
        let types = w.ops.len() > 1 && w.ops.iter().all(|o| o.unit == Throughput::Tps);
        if !w.rated() {
            // a query run once a stream has a time, not a rate to draw
        } else if types {
            for (op, seconds) in &per_op {
                let points = seconds.iter().map(|(t, n)| (mid(*t), *n as f64 / bin as f64)).collect();
                iops.add(&format!("{name} {}", op.as_str()), Style::Line, points);
            }
        } else if w.ops.iter().any(|o| !o.is_network()) {
            iops.add(name, Style::Line, totals.iter().map(|(t, v)| (mid(*t), v.0 as f64 / bin as f64)).collect());
        }
        // pgbench's transactions move no bytes fathom counts
        if w.ops.iter().any(|o| o.bytes > 0) {
            mbps.add(name, Style::Line, totals.iter().map(|(t, v)| (mid(*t), v.1 as f64 / bin as f64 / 1e6)).collect());
        }
        // p50 (solid) and p99 (dashed) of one workload and op share a colour: the
        // workload's own in the other charts when every workload has one op
        let ops = p.len();
        for (op, points) in p {
            let label = if ops > 1 { format!("{name} {}", op.as_str()) } else { name.clone() };
            let colour = if several_ops { lat.series.len() / 2 } else { i };
            lat.add_coloured(&format!("{label} p50"), Style::Line, points.iter().map(|q| (q.0, q.1)).collect(), colour);
            lat.add_coloured(
                &format!("{label} p99"),
                Style::Dashed,
                points.iter().map(|q| (q.0, q.2)).collect(),
                colour,
            );
            tail.add_coloured(&label, Style::Line, points.iter().map(|q| (q.0, q.3)).collect(), colour);
        }
    }
    let (bands, marks) = timeline_decor(s);
    let mut charts = vec![iops, mbps, lat, tail];
    for c in &mut charts {
        c.bands = bands.clone();
        c.marks = marks.clone();
        c.step = Some(bin as f64);
    }
    charts.into_iter().filter(|c| !c.is_empty()).collect()
}

/// The host's CPU, fathom's own, and each device's IOPS and latency, as observed, in
/// bins of `bin` seconds (each the mean of its seconds).
pub(super) fn observed_charts(store: &Store, s: &RunSummary, bin: i64) -> Result<Vec<Chart>> {
    if s.observed.is_empty() {
        return Ok(Vec::new());
    }
    let mid = bin as f64 / 2.0;
    // seconds between phases (a workload being laid out) ran nothing: left out, so a
    // line breaks there instead of dipping to 0
    let end = s.workloads.iter().map(|w| w.workload.end_t).max().unwrap_or(0);
    let phases: Vec<(i64, i64)> = s.phases.iter().map(|p| (p.phase.start_t, p.phase.end_t.unwrap_or(end))).collect();
    let series = |source: &str, name: &str| -> Result<Vec<(f64, f64)>> {
        Ok(store
            .observation_series(s.run.id, source, name, bin)?
            .into_iter()
            .filter(|(t, _)| in_a_phase(&phases, *t, bin))
            .map(|(t, v)| (t as f64 + mid, v))
            .collect())
    };
    let time = || Axis::new("time into the run", Unit::Seconds);
    let mut cpu = Chart::new("obs-cpu", "Host CPU (percent of all cores)", time(), Axis::new("CPU", Unit::Percent));
    for (name, label) in [("usr_pct", "usr"), ("sys_pct", "sys"), ("iowait_pct", "iowait"), ("steal_pct", "steal")] {
        cpu.add(label, Style::Line, series("host", name)?);
    }
    let cores = s.run.environment.get("cpus").and_then(|v| v.as_f64()).unwrap_or(1.0).max(1.0);
    // fathom's own CPU, each agent's (`fathom:HOST`) and the programs it runs (pgbench,
    // PostgreSQL, fio, iperf3): every source that counts `cpu_cores`
    let counted = s.observed.iter().filter(|o| o.name == "cpu_cores" && !o.source.starts_with("host"));
    for o in counted {
        let points = series(&o.source, "cpu_cores")?.into_iter().map(|(t, v)| (t, v * 100.0 / cores)).collect();
        cpu.add(&o.source, Style::Dashed, points);
    }
    let (bands, marks) = timeline_decor(s);
    let mut charts = vec![cpu];
    let devices: Vec<&Observed> =
        s.observed.iter().filter(|o| o.source.starts_with("device:") && o.name == "r_s").collect();
    for d in devices {
        let dev = d.source.trim_start_matches("device:");
        // one unit per axis: requests per second, their wait, their size
        let chart = |id: &str, title: &str, y: Axis| {
            Chart::new(&format!("obs-{dev}-{id}"), &format!("Device {dev}: {title}"), time(), y)
        };
        let mut io = chart("iops", "requests per second", Axis::new("requests/s", Unit::Count));
        io.add("r/s", Style::Line, series(&d.source, "r_s")?);
        io.add("w/s", Style::Line, series(&d.source, "w_s")?);
        let mut wait =
            chart("await", "await (time a request spends, queued and served)", Axis::new("await", Unit::Micros));
        let micros = |points: Vec<(f64, f64)>| points.into_iter().map(|(t, ms)| (t, ms * 1000.0)).collect();
        wait.add("r_await", Style::Line, micros(series(&d.source, "r_await_ms")?));
        wait.add("w_await", Style::Line, micros(series(&d.source, "w_await_ms")?));
        let mut size = chart("size", "average request size", Axis::new("areq-sz (kB)", Unit::Count));
        size.add("areq-sz", Style::Line, series(&d.source, "areq_sz_kB")?);
        charts.extend([io, wait, size]);
    }
    charts.extend(numa_chart(s, &series)?);
    charts.extend(network_charts(store, s, bin)?);
    charts.extend(postgres_charts(store, s, bin)?);
    charts.extend(mariadb_charts(store, s, bin)?);
    for c in &mut charts {
        c.bands = bands.clone();
        c.marks = marks.clone();
        c.step = Some(bin as f64);
    }
    Ok(charts.into_iter().filter(|c| !c.is_empty()).collect())
}

/// Each observed PostgreSQL server's figures over the run, per second: commits and
/// rollbacks, blocks read, buffers written by whom, WAL written, and its client backends
/// by what they wait on. The views' counters are stored as they are (cumulative, as
/// postgres_exporter serves them); a chart draws their change per second.
fn postgres_charts(store: &Store, s: &RunSummary, bin: i64) -> Result<Vec<Chart>> {
    let mut sources: Vec<&str> =
        s.observed.iter().map(|o| o.source.as_str()).filter(|x| x.starts_with("postgres:")).collect();
    sources.dedup();
    let time = || Axis::new("time into the run", Unit::Seconds);
    let mut charts = Vec::new();
    for source in sources {
        let server = source.trim_start_matches("postgres:");
        let named = |prefix: &str| -> Vec<String> {
            s.observed
                .iter()
                .filter(|o| o.source == source && o.name.starts_with(prefix))
                .map(|o| o.name.clone())
                .collect()
        };
        let per_second = |names: &[String], scale: f64| rise_per_second(store, s, source, names, bin, scale);
        let chart = |id: &str, title: &str, y: &str| {
            Chart::new(
                &format!("obs-pg-{server}-{id}"),
                &format!("PostgreSQL {server}: {title}"),
                time(),
                Axis::new(y, Unit::Count),
            )
        };
        let mut xact = chart("xact", "transactions per second", "per second");
        xact.add("commits", Style::Line, per_second(&named("pg_stat_database_xact_commit"), 1.0)?);
        xact.add("rollbacks", Style::Line, per_second(&named("pg_stat_database_xact_rollback"), 1.0)?);
        let mut blocks = chart("blocks", "blocks read and hit in shared buffers per second", "blocks/s");
        blocks.add("read", Style::Line, per_second(&named("pg_stat_database_blks_read"), 1.0)?);
        blocks.add("hit", Style::Dashed, per_second(&named("pg_stat_database_blks_hit"), 1.0)?);
        let mut buffers = chart("buffers", "buffers written per second, by whom", "buffers/s");
        for (label, names) in [
            (
                "checkpointer",
                ["pg_stat_bgwriter_buffers_checkpoint_total", "pg_stat_checkpointer_buffers_written_total"],
            ),
            ("bgwriter", ["pg_stat_bgwriter_buffers_clean_total", ""]),
            ("backends", ["pg_stat_bgwriter_buffers_backend_total", ""]),
        ] {
            let names: Vec<String> = names.iter().filter(|n| !n.is_empty()).flat_map(|n| named(n)).collect();
            buffers.add(label, Style::Line, per_second(&names, 1.0)?);
        }
        let mut wal = chart("wal", "WAL written (MB/s)", "MB/s");
        wal.add("WAL", Style::Line, per_second(&named("fathom_pg_stat_wal_bytes_total"), 1e-6)?);
        let mut waits = chart("waits", "client backends at work, by wait event type", "backends");
        for name in named("fathom_pg_stat_activity_backends") {
            let label = name.split('"').nth(1).unwrap_or(&name).to_string();
            let points = store.observation_series(s.run.id, source, &name, bin)?;
            if points.iter().any(|p| p.1 > 0.0) {
                waits.add(
                    &label,
                    Style::Line,
                    points.into_iter().map(|(t, v)| (t as f64 + bin as f64 / 2.0, v)).collect(),
                );
            }
        }
        charts.extend([xact, blocks, buffers, wal, waits]);
    }
    Ok(charts)
}

/// An observed series' points by source and name, as a chart draws them.
type SeriesOf<'a> = dyn Fn(&str, &str) -> Result<Vec<(f64, f64)>> + 'a;

/// Each NUMA node's CPU busy (the controller's, on a machine of several), in percent of
/// the node's CPUs: a chart of its own, as the host's is in percent of all cores.
fn numa_chart(s: &RunSummary, series: &SeriesOf) -> Result<Option<Chart>> {
    let nodes: Vec<&Observed> =
        s.observed.iter().filter(|o| o.source == "host" && o.name.starts_with("numa_node_busy_pct{")).collect();
    if nodes.is_empty() {
        return Ok(None);
    }
    let time = Axis::new("time into the run", Unit::Seconds);
    let title = "CPU busy per NUMA node (usr + sys, percent of the node's CPUs)";
    let mut chart = Chart::new("obs-numa", title, time, Axis::new("CPU", Unit::Percent));
    for o in nodes {
        let node = o.name.trim_start_matches("numa_node_busy_pct{node=").trim_end_matches('}').trim_matches('"');
        chart.add(&format!("node {node}"), Style::Line, series("host", &o.name)?);
    }
    Ok(Some(chart))
}

/// Each observed network interface's bytes received and transmitted per second, in
/// Mbit/s (a link's unit): one chart per interface of each host, as a device has its own.
fn network_charts(store: &Store, s: &RunSummary, bin: i64) -> Result<Vec<Chart>> {
    use crate::observe::network;
    let received = s.observed.iter().filter(|o| o.name.starts_with("node_network_receive_bytes_total{"));
    let mut charts = Vec::new();
    for o in received {
        let Some(dev) = network::device(&o.name) else { continue };
        let at = match o.source.strip_prefix("host:") {
            Some(host) => format!("{dev}@{host}"),
            None => dev.to_string(),
        };
        let time = Axis::new("time into the run", Unit::Seconds);
        let title = format!("Network {at}: received and transmitted");
        let mut chart = Chart::new(&format!("obs-net-{at}"), &title, time, Axis::new("Mbit/s", Unit::Count));
        for (family, label) in [("node_network_receive_bytes_total", "rx"), ("node_network_transmit_bytes_total", "tx")]
        {
            let names = [network::series(family, dev)];
            chart.add(label, Style::Line, rise_per_second(store, s, &o.source, &names, bin, 8.0 / 1e6)?);
        }
        charts.push(chart);
    }
    Ok(charts)
}

/// The change per second of the sum of counters `names` of observed `source`, between
/// bins of `bin` seconds, times `scale`, as a chart's points.
fn rise_per_second(
    store: &Store,
    s: &RunSummary,
    source: &str,
    names: &[String],
    bin: i64,
    scale: f64,
) -> Result<Vec<(f64, f64)>> {
    let rises = store.observation_rises(s.run.id, source, names, bin)?;
    Ok(rises.into_iter().map(|(t, v)| (t as f64, v * scale)).collect())
}

/// Each observed MariaDB server's figures over the run, per second: commits and
/// rollbacks, InnoDB's redo written and its checkpoint age against the most it may
/// reach, dirty pages and pages flushed, and data reads, writes and fsyncs.
fn mariadb_charts(store: &Store, s: &RunSummary, bin: i64) -> Result<Vec<Chart>> {
    let mut sources: Vec<&str> =
        s.observed.iter().map(|o| o.source.as_str()).filter(|x| x.starts_with("mariadb:")).collect();
    sources.dedup();
    let mut charts = Vec::new();
    for source in sources {
        let server = source.trim_start_matches("mariadb:");
        let status = |name: &str| vec![format!("mysql_global_status_{name}")];
        let per_second = |name: &str, scale: f64| rise_per_second(store, s, source, &status(name), bin, scale);
        let gauge = |name: &str, scale: f64| -> Result<Vec<(f64, f64)>> {
            let points = store.observation_series(s.run.id, source, &status(name)[0], bin)?;
            Ok(points.into_iter().map(|(t, v)| (t as f64 + bin as f64 / 2.0, v * scale)).collect())
        };
        let chart = |id: &str, title: &str, y: &str| {
            let time = Axis::new("time into the run", Unit::Seconds);
            Chart::new(
                &format!("obs-mariadb-{server}-{id}"),
                &format!("MariaDB {server}: {title}"),
                time,
                Axis::new(y, Unit::Count),
            )
        };
        let mut xact = chart("xact", "transactions per second", "per second");
        xact.add("commits", Style::Line, per_second("commands_total{command=\"commit\"}", 1.0)?);
        xact.add("rollbacks", Style::Line, per_second("commands_total{command=\"rollback\"}", 1.0)?);
        let mut redo = chart("redo", "InnoDB redo log written (MB/s)", "MB/s");
        redo.add("redo", Style::Line, per_second("innodb_os_log_written", 1e-6)?);
        let mut age = chart("checkpoint", "InnoDB checkpoint age (MB): redo not yet checkpointed", "MB");
        age.add("checkpoint age", Style::Line, gauge("innodb_checkpoint_age", 1e-6)?);
        age.add("max age", Style::Dashed, gauge("innodb_checkpoint_max_age", 1e-6)?);
        let mut pages = chart("pages", "buffer pool pages: dirty, and flushed per second", "pages");
        pages.add("dirty", Style::Line, gauge("buffer_pool_dirty_pages", 1.0)?);
        pages.add(
            "flushed/s",
            Style::Dashed,
            per_second("buffer_pool_page_changes_total{operation=\"flushed\"}", 1.0)?,
        );
        let mut io = chart("io", "InnoDB data reads, writes and fsyncs per second", "per second");
        for (label, name) in
            [("reads", "innodb_data_reads"), ("writes", "innodb_data_writes"), ("fsyncs", "innodb_data_fsyncs")]
        {
            io.add(label, Style::Line, per_second(name, 1.0)?);
        }
        charts.extend([xact, redo, age, pages, io]);
    }
    Ok(charts)
}

/// True when the bin of `bin` seconds from `t` overlaps a phase (`[start, end)`), or
/// there are no phases: the seconds between phases ran nothing.
fn in_a_phase(phases: &[(i64, i64)], t: i64, bin: i64) -> bool {
    phases.is_empty() || phases.iter().any(|&(start, end)| start < t + bin && t < end)
}

/// Latency vs throughput with the knee, and concurrency vs throughput with the USL fit,
/// N* and "you are here" (the lowest-concurrency point), for runs with a curve of phases.
pub(super) fn curves(s: &RunSummary) -> Vec<Chart> {
    let Some(curve) = &s.analysis.curve else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let rate = curve.unit.label();
    let mut ux = Chart::new(
        "curve-usl",
        "Throughput vs concurrency: Universal Scalability Law",
        Axis::new("concurrency N (IOs in flight, workers)", Unit::Count),
        Axis::new(rate, Unit::Count),
    );
    ux.add("measured", Style::Dots, curve.points.iter().map(|p| (p.0, p.1)).collect());
    add_usl(&mut ux, &curve.usl);
    if let Some(here) = curve.points.get(curve.you_are_here) {
        ux.marks.push(Mark { x: here.0, label: "you are here".into(), until: None });
    }
    // throughput against load answers the study: its chart comes first
    out.push(ux);
    // network streams measure no latency per op: no latency curve, no knee
    if curve.unit.has_latency() {
        let mut lx = Chart::new(
            "curve-latency",
            "Latency vs throughput (one point per phase)",
            Axis::new(rate, Unit::Count),
            Axis::new("mean latency", Unit::Micros),
        );
        lx.add("measured", Style::LineDots, latency_line(&curve.points));
        if let Some(k) = &curve.knee
            && let Some(p) = curve.points.get(k.max_power)
        {
            lx.marks.push(Mark {
                x: p.1,
                label: format!("knee (max {rate}/latency) at {}", rate_in(p.1, curve.unit)),
                until: None,
            });
        }
        out.push(lx);
    }
    out
}

/// A curve's (concurrency, throughput, latency) points as (throughput, latency) in
/// concurrency order: throughput can fall past the peak, and a line joined in order of
/// throughput would zigzag between the steps.
fn latency_line(points: &[(f64, f64, Option<f64>)]) -> Vec<(f64, f64)> {
    let mut by_n: Vec<&(f64, f64, Option<f64>)> = points.iter().collect();
    by_n.sort_by(|a, b| a.0.total_cmp(&b.0));
    by_n.iter().filter_map(|p| Some((p.1, p.2?))).collect()
}

/// The fitted USL curve, N* and the fit's parameters on a concurrency–throughput chart
/// (also `fathom fit --svg`), as its verdict allows: a poor fit's curve without N*, and
/// for no meaningful fit only the reason.
pub fn add_usl(chart: &mut Chart, usl: &Usl) {
    let (Some(fit), Verdict::Good | Verdict::Poor) = (&usl.fit, usl.verdict) else {
        chart.note = Some(usl.headline());
        return;
    };
    let max_n = fit.points.iter().map(|p| p.n).fold(0.0, f64::max) * 1.1;
    let n_star = match (usl.verdict, fit.peak) {
        (Verdict::Good, Peak::At { n, .. }) => Some(n),
        _ => None,
    };
    let max_n = n_star.map(|n| max_n.max(n * 1.1)).unwrap_or(max_n);
    let steps = 200;
    let curve = (1..=steps)
        .map(|i| {
            let n = max_n * i as f64 / steps as f64;
            (n, crate::analysis::usl::model(fit.sigma.value, fit.kappa.value, fit.lambda.value, n))
        })
        .collect();
    chart.add("USL fit", Style::Dashed, curve);
    if let Some(n) = n_star {
        chart.marks.push(Mark { x: n, label: format!("N* = {n:.1}"), until: None });
    }
    chart.note = Some(format!(
        "σ (contention) {:.4} · κ (coherency) {} · λ {} per unit · R² {:.3}{}",
        fit.sigma.value,
        if fit.kappa.value == 0.0 { "0".to_string() } else { format!("{:.2e}", fit.kappa.value) },
        sig3(fit.lambda.value),
        fit.r_squared,
        if usl.verdict == Verdict::Poor { format!(" · {}", usl.headline()) } else { String::new() }
    ));
}

/// Latency histograms: with several phases first one chart of them all overlaid on one
/// latency range (each phase's IOs of every workload merged), so a shift between phases
/// shows at a glance; then per phase (or for the whole run) each workload and op.
pub(super) fn histograms(s: &RunSummary) -> Vec<Chart> {
    // window 0 of each scan is the measured window, window 1 + k its part of phase k
    let windows: Vec<(usize, String)> = if s.phases.len() > 1 {
        s.phases.iter().enumerate().map(|(k, p)| (k + 1, p.phase.label.clone())).collect()
    } else {
        vec![(0, "the run".into())]
    };
    let mut out = Vec::new();
    if windows.len() > 1 {
        let mut c = histogram_chart("hist-0", "Latency distribution per phase (every workload's IOs)");
        for (window, label) in &windows {
            let mut merged: Option<Histogram<u64>> = None;
            for (op, stats) in s.scans.iter().flat_map(|scan| &scan.windows[*window]) {
                if *op == Op::Sync || stats.latency.is_empty() {
                    continue;
                }
                match merged.as_mut() {
                    Some(m) => {
                        let _ = m.add(&stats.latency);
                    }
                    None => merged = Some(stats.latency.clone()),
                }
            }
            if let Some(m) = merged {
                c.add(label, Style::Line, buckets(&m));
            }
        }
        if !c.is_empty() {
            out.push(c);
        }
    }
    for (window, label) in windows {
        let mut c = histogram_chart(&format!("hist-{}", out.len()), &format!("Latency distribution: {label}"));
        for (w, scan) in s.workloads.iter().zip(&s.scans) {
            for (op, stats) in &scan.windows[window] {
                if *op == Op::Sync || stats.latency.is_empty() {
                    continue;
                }
                c.add(&format!("{} {}", w.workload.name, op.as_str()), Style::Line, buckets(&stats.latency));
            }
        }
        if !c.is_empty() {
            out.push(c);
        }
    }
    out
}

/// A chart of latency histograms: log latency, and a log share so the tail behind p99
/// (0.01% of IOs) shows.
fn histogram_chart(id: &str, title: &str) -> Chart {
    Chart::new(id, title, Axis::log("latency", Unit::Micros), Axis::log("share of IOs", Unit::Percent))
}

/// A latency histogram as (bucket lower bound in µs, percent of IOs), 10 buckets per
/// decade from the smallest to the largest value seen.
fn buckets(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    let total = h.len() as f64;
    let decile = |ns: u64| ((ns.max(1) as f64).log10() * 10.0).floor() as i32;
    let mut counts: BTreeMap<i32, u64> = BTreeMap::new();
    for v in h.iter_recorded() {
        *counts.entry(decile(v.value_iterated_to())).or_default() += v.count_at_value();
    }
    let (Some(&first), Some(&last)) = (counts.keys().next(), counts.keys().last()) else {
        return Vec::new();
    };
    (first..=last)
        .map(|k| (10f64.powf(k as f64 / 10.0) / 1000.0, counts.get(&k).copied().unwrap_or(0) as f64 * 100.0 / total))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::OpStats;

    #[test]
    fn seconds_between_phases_are_not_drawn() {
        // quickstart: qd4 ends at 8, qd16 begins at 9 (its file laid out between)
        let phases = [(0, 4), (4, 8), (9, 13)];
        assert!(in_a_phase(&phases, 7, 1) && in_a_phase(&phases, 9, 1));
        assert!(!in_a_phase(&phases, 8, 1), "nothing ran in second 8");
        assert!(!in_a_phase(&phases, 13, 1) && !in_a_phase(&phases, -1, 1));
        assert!(in_a_phase(&phases, 8, 2), "a bin that holds part of a phase");
        assert!(in_a_phase(&[], 8, 1), "a run without phases draws every second");
    }

    #[test]
    fn latency_against_throughput_follows_concurrency() {
        // pgbench-clients on a busy machine: 16 clients gave less TPS than 8
        let points =
            [(16.0, 700.0, Some(23.0)), (1.0, 200.0, Some(5.0)), (8.0, 850.0, Some(9.4)), (4.0, 600.0, Some(6.7))];
        let line = latency_line(&points);
        assert_eq!(line, [(200.0, 5.0), (600.0, 6.7), (850.0, 9.4), (700.0, 23.0)]);
    }

    #[test]
    fn histogram_buckets_hold_every_io() {
        let mut s = OpStats::new(false);
        for v in [20_000u64, 25_000, 30_000, 900_000, 1_000_000] {
            s.latency.record(v).unwrap();
        }
        let b = buckets(&s.latency);
        let total: f64 = b.iter().map(|p| p.1).sum();
        assert!((total - 100.0).abs() < 1e-9, "{b:?}");
        assert!(b.first().unwrap().0 <= 20.0 && b.last().unwrap().0 <= 1000.0);
    }

    /// Every mark's meaning is on the chart: the first autovacuum line is named, the
    /// dozens after it drawn alike without a label.
    #[test]
    fn the_first_autovacuum_is_named_and_the_rest_drawn_alike() {
        use crate::store::EventRow;
        use crate::store::fixture::{Fixture, Second};
        use crate::store::sink::Record;
        let fx = Fixture::new("marks");
        let vacuum = |at_ms: i64| EventRow {
            at_ms,
            kind: "autovacuum".into(),
            label: "w".into(),
            status: None,
            took_ms: Some(10),
            detail: "table stock".into(),
        };
        let mut run = fx.run("name: m\nworkloads:\n  w: {engine: null, rw: read, duration: 3s}\n").phase(
            "w",
            &[("w", 1)],
            3,
            |_| Second::new(10, 1_000),
        );
        for at in [500, 1_500, 2_500] {
            run = run.record(Record::Event(vacuum(at)));
        }
        let id = run.finish();
        let s = RunSummary::load(&fx.store(), &id.to_string()).unwrap();
        let (_, marks) = timeline_decor(&s);
        let labels: Vec<&str> = marks.iter().map(|m| m.label.as_str()).collect();
        assert_eq!(labels, ["autovacuum", "", ""]);
    }

    /// The host's observed NUMA nodes and network interfaces each have a chart: a node's
    /// busy as stored, an interface's bytes as their rise per second in Mbit/s.
    #[test]
    fn numa_nodes_and_network_interfaces_are_charted() {
        use crate::store::ObservationRow;
        use crate::store::fixture::{Fixture, Second};
        use crate::store::sink::Record;
        let fx = Fixture::new("numa-net");
        let row =
            |t: i64, name: &str, value: f64| ObservationRow { t, source: "host".into(), name: name.into(), value };
        let mut rows = Vec::new();
        for t in 0..3 {
            rows.push(row(t, "numa_node_busy_pct{node=\"0\"}", 90.0));
            rows.push(row(t, "numa_node_busy_pct{node=\"1\"}", 10.0));
            rows.push(row(t, "node_network_receive_bytes_total{device=\"eth0\"}", 1.25e8 * t as f64));
            rows.push(row(t, "node_network_transmit_bytes_total{device=\"eth0\"}", 0.0));
        }
        let run = fx
            .run("name: n\nworkloads:\n  w: {engine: null, rw: read, duration: 3s}\n")
            .phase("w", &[("w", 1)], 3, |_| Second::new(10, 1_000))
            .record(Record::Observations(rows))
            .finish();
        let s = RunSummary::load(&fx.store(), &run.to_string()).unwrap();
        let charts = observed_charts(&fx.store(), &s, 1).unwrap();
        let chart = |id: &str| charts.iter().find(|c| c.id == id).unwrap_or_else(|| panic!("no {id}"));
        let numa = chart("obs-numa");
        let names: Vec<&str> = numa.series.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, ["node 0", "node 1"]);
        assert!(numa.series[0].points.iter().all(|p| p.1 == 90.0), "{:?}", numa.series[0].points);
        let net = chart("obs-net-eth0");
        // 125 MB a second is 1,000 Mbit/s
        assert_eq!(net.series[0].points.iter().map(|p| p.1).collect::<Vec<_>>(), [1000.0, 1000.0]);
        assert_eq!(net.series[1].points.iter().map(|p| p.1).collect::<Vec<_>>(), [0.0, 0.0]);
    }
}
