//! A stored run in the OpenMetrics text format with timestamps, for
//! `promtool tsdb create-blocks-from openmetrics` to backfill into Prometheus: past runs
//! then show in the same Grafana dashboard as live ones. The families and labels are the
//! live endpoint's (`export::prometheus`) plus `job="fathom"`, per workload rather than
//! per worker, one sample per second of the run, stamped at the end of its second.
//! The database servers' observed series are there as the endpoint serves them (a
//! counter as its running total, which the dashboard's `rate()` reads); the other
//! observed series (the host's, the devices', remote queries') as one gauge family,
//! `fathom_observed`, labelled by source and series.

use super::prometheus::{BUCKETS, cumulative_buckets, observed_type};
use super::seam::{Format, Source};
use crate::error::{Error, Result};
use crate::metrics::{Op, OpStats};
use crate::store::{Observed, Store};
use std::collections::BTreeMap;
use std::fmt::Write;

pub struct OpenMetrics;

impl Format for OpenMetrics {
    fn name(&self) -> &'static str {
        "openmetrics"
    }

    fn about(&self) -> &'static str {
        "Timestamped, for `promtool tsdb create-blocks-from openmetrics`"
    }

    /// Always per second: `--samples` changes nothing here.
    fn render(&self, run: &Source) -> Result<String> {
        render(run.store, run.summary.run.id, &run.summary.observed)
    }
}

/// Each family's OpenMetrics type and help, by family name.
type Meta = BTreeMap<String, (&'static str, &'static str)>;

/// The observed series' points, through `put` (family, series, line), each family's type
/// and help into `meta`: a database server's series under its exporter's name with the
/// endpoint's `server` label, a network interface's under node_exporter's with a `host`
/// label (`localhost`, the controller's), the others as `fathom_observed{source, series}`.
fn observed(
    store: &Store,
    run: i64,
    seen: &[Observed],
    (base, stamp): (&str, &dyn Fn(i64) -> String),
    put: &mut dyn FnMut(String, String, String),
    meta: &mut Meta,
) -> Result<()> {
    for o in seen {
        let server = ["postgres:", "mariadb:"].iter().find_map(|p| o.source.strip_prefix(p));
        let whose = match server {
            Some(server) => Some(format!("server=\"{}\"", label(server))),
            None if crate::observe::network::counter(&o.name) => {
                Some(format!("host=\"{}\"", label(o.source.strip_prefix("host:").unwrap_or("localhost"))))
            }
            None => None,
        };
        let (family, sample, labels) = match whose {
            Some(whose) => {
                let (metric, own) = o.name.split_once('{').map_or((o.name.as_str(), ""), |(m, l)| (m, l));
                let own = own.strip_suffix('}').map(|l| format!(",{l}")).unwrap_or_default();
                let kind = match observed_type(metric) {
                    "untyped" => "unknown",
                    kind => kind,
                };
                let family = if kind == "counter" { metric.trim_end_matches("_total") } else { metric };
                let help = crate::observe::help(metric).unwrap_or("A database server's series, as observed.");
                meta.insert(family.to_string(), (kind, help));
                (family.to_string(), metric.to_string(), format!("{base},{whose}{own}"))
            }
            None => {
                let help = "A figure observed around the run (fathom show's \"observed\"), per second.";
                meta.insert("fathom_observed".into(), ("gauge", help));
                let labels = format!("{base},source=\"{}\",series=\"{}\"", label(&o.source), label(&o.name));
                ("fathom_observed".into(), "fathom_observed".into(), labels)
            }
        };
        for (t, v) in store.observation_series(run, &o.source, &o.name, 1)? {
            put(family.clone(), labels.clone(), format!("{sample}{{{labels}}} {v} {}", stamp(t)));
        }
    }
    Ok(())
}

/// The run `run` as OpenMetrics text, ending with `# EOF`.
fn render(store: &Store, run: i64, seen: &[Observed]) -> Result<String> {
    let row = store.run(&run.to_string())?;
    let start_ms = store
        .clock_start(run)?
        .ok_or_else(|| Error::input(format!("run {run} has no samples to export (its timeline never began)")))?;
    let stamp = |t: i64| format!("{:.3}", (start_ms + (t + 1) * 1000) as f64 / 1000.0);
    // family -> series labels -> lines in time order: OpenMetrics wants each family, and
    // each series within it, in one piece
    let mut families: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut put = |family: String, series: String, line: String| {
        let s = families.entry(family).or_default().entry(series).or_default();
        s.push_str(&line);
        s.push('\n');
    };
    let base = format!("job=\"fathom\",run=\"{run}\"");
    let workloads = store.workloads(run)?;
    for w in &workloads {
        let name = label(&w.name);
        let mut totals: BTreeMap<Op, OpStats> = BTreeMap::new();
        for t in w.start_t..w.end_t {
            for (op, s) in store.window(run, w.idx, t, t + 1)? {
                let total = totals.entry(op).or_insert_with(|| OpStats::new(false));
                total.merge(&s);
            }
            for (op, total) in &totals {
                let l = format!("{base},workload=\"{name}\",host=\"localhost\",op=\"{}\"", op.as_str());
                let ts = stamp(t);
                put("fathom_ops".into(), l.clone(), format!("fathom_ops_total{{{l}}} {} {ts}", total.ops));
                put("fathom_bytes".into(), l.clone(), format!("fathom_bytes_total{{{l}}} {} {ts}", total.bytes));
                // one point of the histogram: its buckets, count and sum together
                let h = &total.latency;
                let mut point = String::new();
                for (le, n) in BUCKETS.iter().zip(cumulative_buckets(h)) {
                    let _ = writeln!(point, "fathom_latency_seconds_bucket{{{l},le=\"{le}\"}} {n} {ts}");
                }
                let _ = writeln!(point, "fathom_latency_seconds_bucket{{{l},le=\"+Inf\"}} {} {ts}", h.len());
                let _ = writeln!(point, "fathom_latency_seconds_count{{{l}}} {} {ts}", h.len());
                let _ = write!(point, "fathom_latency_seconds_sum{{{l}}} {} {ts}", total.latency_sum_ns as f64 / 1e9);
                put("fathom_latency_seconds".into(), l, point);
            }
        }
    }
    // the phase in force each second, for Grafana annotations and `fathom_phase_info == 1`,
    // and the workers it ran (a ramp's as it added them), as the live endpoint says them
    for p in store.phases(run)? {
        let end = p.end_t.unwrap_or(p.start_t + 1);
        let l = format!("{base},phase=\"{}\"", label(&p.label));
        for t in p.start_t..end {
            put("fathom_phase".into(), l.clone(), format!("fathom_phase_info{{{l}}} 1 {}", stamp(t)));
        }
        for &(idx, workers) in &p.running {
            let Some(w) = workloads.iter().find(|w| w.idx == idx) else { continue };
            let l = format!("{base},workload=\"{}\"", label(&w.name));
            for t in p.start_t..end {
                put("fathom_workers".into(), l.clone(), format!("fathom_workers{{{l}}} {workers} {}", stamp(t)));
            }
        }
    }
    let l = format!("{base},scenario=\"{}\"", label(&row.scenario));
    put("fathom_run".into(), l.clone(), format!("fathom_run_info{{{l}}} 1 {}", stamp(0)));

    let mut meta: Meta = Meta::from(
        [
            ("fathom_ops", ("counter", "IOs completed.")),
            ("fathom_bytes", ("counter", "Bytes transferred.")),
            ("fathom_latency_seconds", ("histogram", "IO latency from the intended start (open loop) or submission.")),
            ("fathom_workers", ("gauge", "Workers of each workload running.")),
            ("fathom_phase", ("info", "The phase of the timeline in force.")),
            ("fathom_run", ("info", "The run.")),
        ]
        .map(|(family, m)| (family.to_string(), m)),
    );
    observed(store, run, seen, (&base, &stamp), &mut put, &mut meta)?;
    let mut out = String::new();
    for (family, series) in families {
        let (kind, help) = meta[&family];
        let _ = writeln!(out, "# TYPE {family} {kind}\n# HELP {family} {help}");
        for lines in series.values() {
            out.push_str(lines);
        }
    }
    out.push_str("# EOF\n");
    Ok(out)
}

/// Escapes a label value.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}
