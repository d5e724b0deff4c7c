//! A run's result views (the scenario's `results:`, see [`crate::scenario::results`]):
//! each view's per-second series read from the store, its figures over the window, and
//! its bands judged on the seconds, which join the run's expectations.

use super::format::{count, latency_us, sig3};
use crate::error::Result;
use crate::metrics::{Op, OpStats};
use crate::scenario::results::{Aggregate, Band, Measure, NET_RECEIVED, NET_TRANSMITTED, ResultMetric, ResultView};
use crate::store::{ExpectationRow, PhaseRow, RunRow, Store, WorkloadRow};
use serde::Serialize;
use std::collections::BTreeMap;

/// One second of a view: its value, and for latency the p50 and p99 of that second's IOs.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    pub t: i64,
    pub value: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p50: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p99: Option<f64>,
}

/// A band's verdict: the share of the window's seconds inside it.
#[derive(Debug, Clone, Serialize)]
pub struct BandVerdict {
    #[serde(flatten)]
    pub band: Band,
    /// 0..=1; None with no second to judge.
    pub inside: Option<f64>,
    pub seconds: usize,
    pub passed: bool,
}

/// A view as a run measured it.
#[derive(Debug, Clone, Serialize)]
pub struct ResultSeries {
    #[serde(flatten)]
    pub view: ResultView,
    /// The unit of `value`, `mean`, `p50`, `p99`, `expected` and the bands.
    pub unit: String,
    /// Over the window: the mean of the series; p50 and p99 of the series, or for
    /// latency of the IOs themselves (and the mean theirs).
    pub mean: Option<f64>,
    pub p50: Option<f64>,
    pub p99: Option<f64>,
    pub bands: Vec<BandVerdict>,
    pub series: Vec<Point>,
}

/// The views of a stored run's scenario text (its variables at their defaults); a run
/// stored before the key existed, or whose text no longer reads, has none.
pub fn stored_views(run: &RunRow) -> Vec<ResultView> {
    #[derive(serde::Deserialize)]
    struct Results {
        results: Option<Vec<crate::scenario::results::ResultFile>>,
    }
    let files = super::analysis::stored::<Results>(run).and_then(|r| r.results);
    files.iter().flatten().filter_map(|f| crate::scenario::results::view(f).ok()).collect()
}

/// Each view of run `run` measured.
pub fn measure(store: &Store, run: i64, views: &[ResultView]) -> Result<Vec<ResultSeries>> {
    let workloads = store.workloads(run)?;
    let phases = store.phases(run)?;
    views.iter().map(|v| measure_one(store, run, v, &workloads, &phases)).collect()
}

/// The band verdicts of `results` as expectation rows: `measured` the share of seconds
/// inside, `reference` the seconds judged.
pub fn band_rows(results: &[ResultSeries]) -> Vec<ExpectationRow> {
    results
        .iter()
        .flat_map(|r| {
            r.bands.iter().map(|b| ExpectationRow {
                text: band_text(r, &b.band),
                measured: b.inside,
                reference: Some(b.seconds as f64),
                passed: b.passed,
                noise: None,
                beyond_noise: None,
            })
        })
        .collect()
}

/// A figure without its unit: IOPS whole (`4,200`); others thousands separated from 100
/// up (`1,425`), three significant digits below (`42.5`).
pub fn number(r: &ResultSeries, v: f64) -> String {
    let iops = matches!(r.view.measure, Measure::Workloads { metric: ResultMetric::Iops, .. });
    if iops || v.abs() >= 100.0 { count(v) } else { sig3(v) }
}

/// A band as an expectation's text, its bounds in the view's unit: `OLTP IOPS in 95% band
/// [4,073, 4,327] IOPS >= 95%`, `DSS Throughput in 95% band [1,425, 1,621] MB/s >= 95%`.
pub fn band_text(r: &ResultSeries, band: &Band) -> String {
    format!("{} in {} band {} >= {}%", r.view.name, band.name, bounds(r, band), band.share * 100.0)
}

/// A band's bounds in the view's unit: `[4,073, 4,327] IOPS`, `[1.00 ms, 2.00 ms]`.
pub fn bounds(r: &ResultSeries, band: &Band) -> String {
    match &r.view.measure {
        Measure::Workloads { metric: ResultMetric::Latency, .. } => {
            format!("[{}, {}]", latency_us(band.lower), latency_us(band.upper))
        }
        _ => format!("[{}, {}] {}", number(r, band.lower), number(r, band.upper), r.unit),
    }
}

/// Whether second `t` is in one of the phases labelled `labels` (every second when none).
fn in_phases(t: i64, labels: &[String], phases: &[PhaseRow]) -> bool {
    labels.is_empty()
        || phases.iter().any(|p| labels.contains(&p.label) && p.start_t <= t && p.end_t.is_none_or(|e| t < e))
}

fn measure_one(
    store: &Store,
    run: i64,
    view: &ResultView,
    workloads: &[WorkloadRow],
    phases: &[PhaseRow],
) -> Result<ResultSeries> {
    let keep = |t: i64| in_phases(t, &view.phases, phases);
    let (unit, series, over) = match &view.measure {
        Measure::NotMeasured(_) => (String::new(), Vec::new(), None),
        Measure::Workloads { names, metric } => {
            let used: Vec<&WorkloadRow> = workloads.iter().filter(|w| names.contains(&w.name)).collect();
            let (series, over) = workload_series(store, run, &used, *metric, view.aggregate, &keep)?;
            (metric.unit().to_string(), series, over)
        }
        Measure::Observed(what) => {
            let (unit, series) = observed_series(store, run, what, view.aggregate, &keep)?;
            (unit, series, None)
        }
    };
    let values: Vec<f64> = series.iter().map(|p| p.value).collect();
    let (mean, p50, p99) = match over {
        Some(s) if s.ops > 0 => {
            let q = |p: f64| s.latency.value_at_quantile(p) as f64 / 1000.0;
            (Some(s.latency_sum_ns as f64 / s.ops as f64 / 1000.0), Some(q(0.5)), Some(q(0.99)))
        }
        _ if values.is_empty() => (None, None, None),
        _ => (Some(values.iter().sum::<f64>() / values.len() as f64), quantile(&values, 0.5), quantile(&values, 0.99)),
    };
    let bands = view
        .bands
        .iter()
        .map(|b| {
            let inside = values.iter().filter(|v| b.lower <= **v && **v <= b.upper).count();
            let share = (!values.is_empty()).then(|| inside as f64 / values.len() as f64);
            // a share printed rounded must not pass where the exact one fails
            let passed = share.is_some_and(|s| s + 1e-9 >= b.share);
            BandVerdict { band: b.clone(), inside: share, seconds: values.len(), passed }
        })
        .collect();
    Ok(ResultSeries { view: view.clone(), unit, mean, p50, p99, bands, series })
}

/// The value at quantile `q` of `values` (nearest rank).
fn quantile(values: &[f64], q: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    Some(sorted[rank - 1])
}

/// The per-second series of some workloads, each second of any of their measured
/// windows that `keep` keeps; for latency, also the stats of all their IOs there.
fn workload_series(
    store: &Store,
    run: i64,
    used: &[&WorkloadRow],
    metric: ResultMetric,
    aggregate: Aggregate,
    keep: &dyn Fn(i64) -> bool,
) -> Result<(Vec<Point>, Option<OpStats>)> {
    // per second: each workload's (value, and for latency its IOs)
    let mut seconds: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
    let mut ios: BTreeMap<i64, OpStats> = BTreeMap::new();
    let mut over: Option<OpStats> = None;
    for w in used {
        let (from, to) = w.measured_window();
        let (from, to) = (from as i64, to.floor() as i64);
        let kept: Vec<i64> = (from..to).filter(|t| keep(*t)).collect();
        if metric == ResultMetric::Latency {
            for &t in &kept {
                let mut second: Option<OpStats> = None;
                // syncs are not IOs of the mix
                for (_, s) in store.window(run, w.idx, t, t + 1)?.into_iter().filter(|(op, _)| *op != Op::Sync) {
                    match &mut second {
                        Some(acc) => acc.merge(&s),
                        None => second = Some(s),
                    }
                }
                let Some(s) = second else { continue };
                for acc in [
                    ios.entry(t).or_insert_with(|| OpStats::new(false)),
                    over.get_or_insert_with(|| OpStats::new(false)),
                ] {
                    acc.merge(&s);
                }
            }
            continue;
        }
        let scan = store.windows(run, w.idx, &[(from, to)], Some(1))?;
        let mut per_second: BTreeMap<i64, f64> = kept.iter().map(|t| (*t, 0.0)).collect();
        for b in scan.bins.iter().filter(|b| b.op != Op::Sync) {
            if let Some(v) = per_second.get_mut(&b.t) {
                *v += match metric {
                    ResultMetric::Bandwidth => b.bytes as f64 / 1e6,
                    _ => b.ops as f64,
                };
            }
        }
        for (t, v) in per_second {
            seconds.entry(t).or_default().push(v);
        }
    }
    let points = if metric == ResultMetric::Latency {
        ios.into_iter()
            .filter(|(_, s)| s.ops > 0)
            .map(|(t, s)| {
                let q = |p: f64| Some(s.latency.value_at_quantile(p) as f64 / 1000.0);
                Point { t, value: s.latency_sum_ns as f64 / s.ops as f64 / 1000.0, p50: q(0.5), p99: q(0.99) }
            })
            .collect()
    } else {
        seconds.into_iter().map(|(t, vs)| Point { t, value: combine(&vs, aggregate), p50: None, p99: None }).collect()
    };
    Ok((points, over))
}

fn combine(values: &[f64], aggregate: Aggregate) -> f64 {
    let sum: f64 = values.iter().sum();
    match aggregate {
        Aggregate::Sum => sum,
        Aggregate::Mean => sum / values.len().max(1) as f64,
    }
}

/// An observed series, its unit and its values per second across the sources it names:
/// `cpu` is every host's CPU busy % (100 - idle), `net_received` and `net_transmitted`
/// every host's bytes over its interfaces but the loopback, else `SOURCE.NAME` as stored.
fn observed_series(
    store: &Store,
    run: i64,
    what: &str,
    aggregate: Aggregate,
    keep: &dyn Fn(i64) -> bool,
) -> Result<(String, Vec<Point>)> {
    let mut seconds: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
    let unit = match what {
        "cpu" | NET_RECEIVED | NET_TRANSMITTED => {
            let (unit, per_host) = per_machine(store, run, what, aggregate)?;
            for (source, names) in per_host {
                let series = match what {
                    "cpu" => store.observation_series(run, &source, "idle_pct", 1)?,
                    _ => store.observation_rises(run, &source, &names, 1)?,
                };
                for (t, v) in series.into_iter().filter(|(t, _)| keep(*t)) {
                    seconds.entry(t).or_default().push(if what == "cpu" { 100.0 - v } else { v / 1024.0 });
                }
            }
            unit
        }
        _ => {
            let (source, name) = what.rsplit_once('.').unwrap_or((what, ""));
            for (t, v) in store.observation_series(run, source, name, 1)?.into_iter().filter(|(t, _)| keep(*t)) {
                seconds.entry(t).or_default().push(v);
            }
            name.to_string()
        }
    };
    let points = seconds.into_iter().map(|(t, vs)| Point { t, value: combine(&vs, aggregate), p50: None, p99: None });
    Ok((unit, points.collect()))
}

/// A host source and the observed series a view sums of it.
type HostSeries = (String, Vec<String>);

/// The unit of a view over hosts (`cpu`, `net_received`, `net_transmitted`) and its host
/// sources, one per machine, each with the series it sums: the host's CPU, or its
/// interfaces' byte counters (the loopback aside: what the machine says to itself).
fn per_machine(store: &Store, run: i64, what: &str, aggregate: Aggregate) -> Result<(String, Vec<HostSeries>)> {
    let family = match what {
        NET_RECEIVED => "node_network_receive_bytes_total",
        _ => "node_network_transmit_bytes_total",
    };
    let observed = store.observation_summary(run, crate::observe::counter)?;
    let on_host = |o: &&crate::store::Observed| o.source == "host" || o.source.starts_with("host:");
    let counted = |o: &&crate::store::Observed| match what {
        "cpu" => o.name == "idle_pct",
        _ => o.name.starts_with(family) && crate::observe::network::device(&o.name).is_some_and(|d| d != "lo"),
    };
    let mut sources: Vec<String> = observed.iter().filter(on_host).filter(counted).map(|o| o.source.clone()).collect();
    sources.dedup();
    let machines = one_per_machine(sources, &store.run(&run.to_string())?.environment);
    let unit = match what {
        "cpu" => cpu_unit(machines.len(), aggregate),
        _ => "KiB/s".to_string(),
    };
    let names = |source: &String| -> Vec<String> {
        observed.iter().filter(|o| &o.source == source).filter(counted).map(|o| o.name.clone()).collect()
    };
    Ok((unit, machines.iter().map(|m| (m.clone(), names(m))).collect()))
}

/// The host CPU sources of a run, one per machine: hosts on one machine (local agents,
/// containers on one kernel) report the same CPU, which a sum must count once. The
/// controller's `host` comes first; a host whose machine is not known counts alone.
fn one_per_machine(sources: Vec<String>, environment: &serde_json::Value) -> Vec<String> {
    let machine = |source: &str| {
        let m = match source.strip_prefix("host:") {
            Some(name) => &environment["hosts"][name]["machine"],
            None => &environment["machine"],
        };
        m.as_str().filter(|m| !m.is_empty()).map(str::to_string)
    };
    let mut seen: Vec<String> = Vec::new();
    let mut sorted = sources;
    sorted.sort_by_key(|s| s != "host");
    sorted
        .into_iter()
        .filter(|s| match machine(s) {
            Some(m) if seen.contains(&m) => false,
            Some(m) => {
                seen.push(m);
                true
            }
            None => true,
        })
        .collect()
}

/// Host CPU busy % over `machines`: a sum states its ceiling (`% busy of 300 %`, 100 %
/// a machine), as a figure of 250 means nothing without it; a mean, or one machine, is
/// plain `% busy`.
fn cpu_unit(machines: usize, aggregate: Aggregate) -> String {
    match aggregate {
        Aggregate::Sum if machines > 1 => format!("% busy of {} %", machines * 100),
        _ => "% busy".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_and_aggregates_of_a_series() {
        let values: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(quantile(&values, 0.5), Some(50.0));
        assert_eq!(quantile(&values, 0.99), Some(99.0));
        assert_eq!(quantile(&[], 0.5), None);
        assert_eq!(combine(&[200.0, 300.0], Aggregate::Sum), 500.0);
        assert_eq!(combine(&[200.0, 300.0], Aggregate::Mean), 250.0);
    }

    /// A band reads in its view's unit, as X-Ray's converted figures are judged.
    #[test]
    fn a_bands_bounds_are_in_its_views_unit() {
        let series = |metric: ResultMetric| ResultSeries {
            view: ResultView {
                name: "DSS Throughput".into(),
                measure: Measure::Workloads { names: vec!["dss".into()], metric },
                aggregate: Aggregate::Sum,
                phases: Vec::new(),
                hint: None,
                expected: None,
                bands: Vec::new(),
            },
            unit: metric.unit().into(),
            mean: None,
            p50: None,
            p99: None,
            bands: Vec::new(),
            series: Vec::new(),
        };
        let band = |lower, upper| Band { name: "95%".into(), lower, upper, share: 0.95 };
        let text = band_text(&series(ResultMetric::Bandwidth), &band(1424.637806, 1621.4754719999999));
        assert_eq!(text, "DSS Throughput in 95% band [1,425, 1,621] MB/s >= 95%");
        let text = band_text(&series(ResultMetric::Iops), &band(4072.977482311206, 4327.022517688794));
        assert!(text.contains("band [4,073, 4,327] IOPS >= 95%"), "{text}");
        let text = band_text(&series(ResultMetric::Latency), &band(800.0, 1500.0));
        assert!(text.contains("band [800 µs, 1.50 ms] >= 95%"), "{text}");
        assert_eq!(bounds(&series(ResultMetric::Bandwidth), &band(12.5, 42.25)), "[12.5, 42.2] MB/s");
    }

    /// Four local agents and the controller on one machine are one machine's CPU; a
    /// host on another machine adds its own, and the sum says its ceiling.
    #[test]
    fn host_cpu_counts_each_machine_once_and_a_sum_its_ceiling() {
        let env = serde_json::json!({"machine": "m1", "hosts": {
            "a": {"machine": "m1"}, "b": {"machine": "m1"}, "c": {"machine": "m2"}, "d": {"machine": "m1"}}});
        let sources = ["host:a", "host", "host:b", "host:c", "host:d", "host:old"].map(String::from).to_vec();
        let kept = one_per_machine(sources, &env);
        assert_eq!(kept, ["host", "host:c", "host:old"], "an agent that did not say its machine counts alone");
        assert_eq!(cpu_unit(2, Aggregate::Sum), "% busy of 200 %");
        assert_eq!((cpu_unit(1, Aggregate::Sum), cpu_unit(4, Aggregate::Mean)), ("% busy".into(), "% busy".into()));
    }

    /// The hosts' bytes received are their interfaces' rises per second summed, in KiB/s,
    /// each host's loopback left out.
    #[test]
    fn network_views_sum_every_hosts_interfaces_but_the_loopback() {
        use crate::store::ObservationRow;
        use crate::store::fixture::{Fixture, Second};
        use crate::store::sink::Record;
        let fx = Fixture::new("net-view");
        let rx = |dev: &str| format!("node_network_receive_bytes_total{{device=\"{dev}\"}}");
        let row =
            |t: i64, source: &str, name: String, value: f64| ObservationRow { t, source: source.into(), name, value };
        let mut rows = Vec::new();
        for t in 1..=3 {
            let k = (t - 1) as f64;
            rows.push(row(t, "host", rx("eth0"), 2048.0 * k));
            rows.push(row(t, "host", rx("lo"), 1e9 * k));
            rows.push(row(t, "host:b", rx("eth1"), 1024.0 * (k + 1.0)));
        }
        let run = fx
            .run("name: o\nworkloads:\n  w: {engine: null, rw: read, duration: 3s}\n")
            .phase("w", &[("w", 1)], 3, |_| Second::new(10, 1_000))
            .record(Record::Observations(rows))
            .finish();
        let store = fx.store();
        let (unit, points) = observed_series(&store, run, NET_RECEIVED, Aggregate::Sum, &|_| true).unwrap();
        let got: Vec<(i64, f64)> = points.iter().map(|p| (p.t, p.value)).collect();
        assert_eq!((unit.as_str(), got), ("KiB/s", vec![(2, 3.0), (3, 3.0)]));
        let (_, mean) = observed_series(&store, run, NET_RECEIVED, Aggregate::Mean, &|_| true).unwrap();
        assert_eq!(mean.iter().map(|p| p.value).collect::<Vec<_>>(), [1.5, 1.5]);
        let (_, sent) = observed_series(&store, run, NET_TRANSMITTED, Aggregate::Sum, &|_| true).unwrap();
        assert!(sent.is_empty(), "nothing transmitted was observed: {}", sent.len());
    }
}
