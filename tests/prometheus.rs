//! `fathom run --prometheus`, scraped by the real Prometheus (Debian's `prometheus`,
//! installed by `scripts/install-deps.sh test`) on loopback: what Prometheus stored
//! and computes agrees with fathom's own store.

mod common;

use common::servers::{free_port, prometheus, query};
use common::{Scratch, text};

#[test]
fn prometheus_scrapes_what_fathom_stores() {
    let s = Scratch::new("prometheus");
    let (fathom_port, prom_port) = (free_port(), free_port());
    let prom = prometheus(&s.dir, prom_port, "fathom", &[format!("127.0.0.1:{fathom_port}")]);
    // the scenario asks for the endpoint itself; two workers of group db share the rate
    let scenario = s.scenario(&format!(
        "name: scraped\nprometheus: 127.0.0.1:{fathom_port}\ngroups:\n  db: {{count: 2}}\nworkloads:\n  \
         w: {{target: TARGET, size: 16m, rw: randread, iodepth: 4, rate_iops: 1500, duration: 10s, group: db}}\n"
    ));
    let out = s.run(&["run", scenario.to_str().unwrap(), "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let workers = query(prom_port, "count(last_over_time(fathom_ops_total{group=\"db\",workload=\"w\"}[1m]))");
    assert_eq!(workers[0]["value"][1], "2", "one series per worker, labelled with its group");

    // The last counter Prometheus scraped is exactly a prefix of the seconds fathom
    // stored: every second is exposed as it is written.
    let last = query(prom_port, "sum(last_over_time(fathom_ops_total[1m]))");
    let scraped: u64 = last[0]["value"][1].as_str().unwrap().parse().unwrap();
    let db = s.db();
    let mut stmt = db.prepare("SELECT t, sum(ops) FROM samples WHERE op = 0 GROUP BY t ORDER BY t").unwrap();
    let per_second: Vec<(i64, u64)> =
        stmt.query_map([], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as u64))).unwrap().map(|r| r.unwrap()).collect();
    let mut prefix = 0;
    let mut k = None;
    for (t, ops) in &per_second {
        prefix += ops;
        if prefix == scraped {
            k = Some(*t);
        }
    }
    let k = k.unwrap_or_else(|| panic!("scraped {scraped} is no prefix of {per_second:?}"));
    assert!(k >= 7, "Prometheus saw most of the run (up to second {k})");

    // The IOPS Prometheus computes agree with fathom's (1,500 asked).
    let rate = query(prom_port, "max_over_time(sum(rate(fathom_ops_total[3s]))[1m:1s])");
    let prom_iops: f64 = rate[0]["value"][1].as_str().unwrap().parse().unwrap();
    let stored_max = per_second.iter().map(|p| p.1 as f64).fold(0.0, f64::max);
    assert!((prom_iops / stored_max - 1.0).abs() < 0.2, "prometheus {prom_iops} IOPS, fathom at most {stored_max}");

    // The latency buckets of that last scrape are exactly those of fathom's stored
    // histograms over the same seconds, merged
    let mut merged = hdrhistogram::Histogram::<u64>::new(2).unwrap();
    let mut stmt = db.prepare("SELECT hist FROM histograms WHERE kind = 0 AND op = 0 AND t <= ?1").unwrap();
    for blob in stmt.query_map([k], |r| r.get::<_, Vec<u8>>(0)).unwrap() {
        let h: hdrhistogram::Histogram<u64> =
            hdrhistogram::serialization::Deserializer::new().deserialize(&mut &blob.unwrap()[..]).unwrap();
        merged.add(h).unwrap();
    }
    for le in [50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3] {
        let q = query(prom_port, &format!("sum(last_over_time(fathom_latency_seconds_bucket{{le=\"{le}\"}}[1m]))"));
        let scraped: u64 = q[0]["value"][1].as_str().unwrap().parse().unwrap();
        assert_eq!(scraped, merged.count_between(0, (le * 1e9) as u64), "bucket le={le}");
    }
    // and the p99 Prometheus computes from them lies in the bucket of the stored p99
    let q =
        query(prom_port, "histogram_quantile(0.99, sum by (le) (last_over_time(fathom_latency_seconds_bucket[1m])))");
    let prom_p99: f64 = q[0]["value"][1].as_str().unwrap().parse().unwrap();
    let p99 = merged.value_at_quantile(0.99) as f64 / 1e9;
    let bounds = [0.0, 10e-6, 25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 0.1];
    let upper = bounds.iter().position(|&b| prom_p99 <= b).expect("p99 under 100 ms");
    let (lo, hi) = (bounds[upper.saturating_sub(1)], bounds[upper]);
    assert!(p99 >= lo / 1.02 && p99 <= hi * 1.02, "prometheus p99 {prom_p99} s (bucket {lo}..{hi}), fathom {p99} s");

    // every panel of the Grafana dashboard is a query Prometheus answers with data
    let dashboard: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{}/deploy/grafana/fathom.json", env!("CARGO_MANIFEST_DIR"))).unwrap(),
    )
    .unwrap();
    let panels =
        dashboard["panels"].as_array().unwrap().iter().map(|p| (p["title"].as_str().unwrap(), &p["targets"][0]));
    let annotations =
        dashboard["annotations"]["list"].as_array().unwrap().iter().map(|a| (a["name"].as_str().unwrap(), a));
    for (title, target) in panels.chain(annotations) {
        let expr = target["expr"].as_str().unwrap().replace("$run", ".*").replace("$__rate_interval", "3s");
        // over the run's last minute, the panel's query had values
        let result = query(prom_port, &format!("max_over_time(({expr})[1m:1s])"));
        assert!(!result.as_array().unwrap().is_empty(), "panel {title}: no data for {expr}");
    }
    drop(prom);
}

#[test]
fn a_stored_run_backfills_into_prometheus_with_promtool() {
    let s = Scratch::new("backfill");
    let scenario = s.scenario(
        "name: past\ndefaults: {target: TARGET, size: 16m, duration: 2s}\nworkloads:\n  \
         a: {rw: randrw, iodepth: 2, rate_iops: 800}\n  b: {rw: read, bs: 64k}\n\
         timeline:\n  - start: a\n    async: true\n    phase: alone\n  - wait: 1s\n  - start: b\n    phase: both\n  - wait_for: a\n",
    );
    let out = s.run(&["run", scenario.to_str().unwrap(), "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let file = s.dir.join("run.om");
    let out = s.run(&["export", "last", "--format", "openmetrics", "-o", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(std::fs::read_to_string(&file).unwrap().ends_with("# EOF\n"));
    // Debian's promtool (in the prometheus package) turns it into TSDB blocks
    let made = std::process::Command::new("promtool")
        .args(["tsdb", "create-blocks-from", "openmetrics"])
        .arg(&file)
        .arg(s.dir.join("tsdb"))
        .output()
        .expect("promtool is installed with prometheus by scripts/install-deps.sh test");
    assert!(made.status.success(), "{}", text(&made));

    // a Prometheus on those blocks answers with what fathom stored
    let port = free_port();
    let _prom = prometheus(&s.dir, port, "none", &[]);
    let db = s.db();
    for (workload, op, code) in [("a", "read", 0), ("a", "write", 1), ("b", "read", 0)] {
        let stored: i64 = db
            .query_row(
                "SELECT sum(ops) FROM samples JOIN workloads w ON w.run_id = samples.run_id AND w.idx = workload_idx \
                 WHERE w.name = ?1 AND op = ?2",
                rusqlite::params![workload, code],
                |r| r.get(0),
            )
            .unwrap();
        let q = query(port, &format!("last_over_time(fathom_ops_total{{workload=\"{workload}\",op=\"{op}\"}}[1h])"));
        let v: f64 = q[0]["value"][1].as_str().unwrap().parse().unwrap();
        assert_eq!(v as i64, stored, "{workload} {op}");
    }
    let phases = query(port, "count by (phase) (count_over_time(fathom_phase_info[1h]))");
    let mut labels: Vec<&str> =
        phases.as_array().unwrap().iter().map(|p| p["metric"]["phase"].as_str().unwrap()).collect();
    labels.sort();
    assert_eq!(labels, vec!["alone", "b", "both"], "b runs on alone after a ends");
    let p99 =
        query(port, "histogram_quantile(0.99, last_over_time(fathom_latency_seconds_bucket{workload=\"b\"}[1h]))");
    let p99: f64 = p99[0]["value"][1].as_str().unwrap().parse().unwrap();
    assert!(p99 > 0.0 && p99 < 10.0, "{p99}");
}
