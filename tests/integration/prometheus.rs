//! `fathom run --prometheus`, scraped by the real Prometheus (Debian's `prometheus`,
//! installed by `scripts/install-deps.sh test`) on loopback: what Prometheus stored
//! and computes agrees with fathom's own store.

use crate::common::servers::{assert_answered, dashboard_queries, free_port, get, prometheus, query};
use crate::common::{Scratch, text};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

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
    // each network interface's counters, under node_exporter's names with the host's label
    let received: Vec<(String, f64)> = db
        .prepare(
            "SELECT name, max(value) FROM observations \
             WHERE source = 'host' AND name LIKE 'node_network_receive_bytes_total%' GROUP BY name",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for (name, stored) in received {
        let series = name.replace('{', "{host=\"localhost\",");
        let q = query(port, &format!("last_over_time({series}[1h])"));
        let v: f64 = q[0]["value"][1].as_str().unwrap_or_else(|| panic!("{series}: {q}")).parse().unwrap();
        assert_eq!(v, stored, "{series}");
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

/// Keeps `n` connections to 127.0.0.1:`port` open that never send a byte (opening a new
/// one for each the server closes), until dropped: what a port scanner or a stuck client
/// does to an endpoint.
struct Idlers {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Idlers {
    fn start(port: u16, n: usize) -> Idlers {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut open: Vec<TcpStream> = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                // a closed one reads 0 (or an error); an idle one would block
                open.retain(|c| {
                    c.set_nonblocking(true).unwrap();
                    matches!(c.peek(&mut [0u8; 1]), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
                });
                while open.len() < n {
                    match TcpStream::connect(("127.0.0.1", port)) {
                        Ok(c) => open.push(c),
                        Err(_) => break,
                    }
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        std::thread::sleep(Duration::from_millis(500));
        Idlers { stop, thread: Some(thread) }
    }
}

impl Drop for Idlers {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.thread.take().map(|t| t.join());
    }
}

/// GET /metrics as HTTP/1.1 in three writes 200 ms apart, read to the end; the status
/// line and body, and how long it took.
fn split_scrape(port: u16) -> (String, Duration) {
    let started = Instant::now();
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    for part in ["GET /met", "rics HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/plain\r\n", "\r\n"] {
        s.write_all(part.as_bytes()).unwrap();
        std::thread::sleep(Duration::from_millis(200));
    }
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    (answer, started.elapsed())
}

/// A 40 s run serving /metrics on 127.0.0.1:`port`, once the endpoint answers.
fn besieged_run(s: &Scratch, port: u16) -> std::process::Child {
    let scenario =
        s.scenario("name: besieged\nworkloads:\n  w: {engine: null, rw: randread, rate_iops: 500, duration: 40s}\n");
    let addr = format!("127.0.0.1:{port}");
    let run = s
        .fathom(&["run", scenario.to_str().unwrap(), "-q", "--prometheus", &addr])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !get(port, "/metrics").is_some_and(|m| m.contains("fathom_run_info")) {
        assert!(started.elapsed() < Duration::from_secs(60), "the endpoint never answered");
        std::thread::sleep(Duration::from_millis(100));
    }
    run
}

#[test]
fn idle_connections_past_the_cap_do_not_starve_a_scrape() {
    let s = Scratch::new("prometheus-idle-cap");
    let port = free_port();
    let mut run = besieged_run(&s, port);
    // more idle connections than the endpoint serves at once, reopened as they close
    let idle = Idlers::start(port, 40);
    let (answer, took) = split_scrape(port);
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer:?}");
    assert!(answer.contains("\r\n\r\n# HELP fathom_run_info"), "{answer}");
    assert!(took < Duration::from_secs(10), "a scrape behind 40 idle connections took {took:?}");
    drop(idle);
    let _ = run.kill();
    let _ = run.wait();
}

/// Idle clients that reconnect the moment they are closed (a scanner, a pool of broken
/// clients: each a thread that connects, waits to be closed, and connects again) never
/// cost a scrape its answer: each of 30 scrapes, sent as Prometheus sends one, gets the
/// whole page.
#[test]
fn reconnecting_idle_clients_never_cost_a_scrape_its_answer() {
    let s = Scratch::new("prometheus-reconnecting");
    let port = free_port();
    let mut run = besieged_run(&s, port);
    let stop = Arc::new(AtomicBool::new(false));
    let idlers: Vec<_> = (0..128)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    match TcpStream::connect(("127.0.0.1", port)) {
                        Ok(mut c) => {
                            let _ = c.set_read_timeout(Some(Duration::from_secs(1)));
                            let _ = c.read(&mut [0u8; 1]);
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(10)),
                    }
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let answered = (0..30)
        .filter(|_| {
            let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
            c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
            c.write_all(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/plain\r\n\r\n").unwrap();
            let mut answer = String::new();
            let _ = c.read_to_string(&mut answer);
            answer.starts_with("HTTP/1.1 200 OK\r\n") && answer.contains("# HELP fathom_run_info")
        })
        .count();
    stop.store(true, Ordering::Relaxed);
    idlers.into_iter().for_each(|t| t.join().unwrap());
    let _ = run.kill();
    let _ = run.wait();
    assert_eq!(answered, 30, "scrapes answered behind 128 reconnecting idle clients");
}

#[test]
fn idle_connections_do_not_stall_a_scrape() {
    let s = Scratch::new("prometheus-idle");
    let (fathom_port, prom_port) = (free_port(), free_port());
    let addr = format!("127.0.0.1:{fathom_port}");
    let mut run = besieged_run(&s, fathom_port);
    let idle = Idlers::start(fathom_port, 20);
    // a request split over several writes, behind 20 idle connections, is served at once
    // (600 ms of it are the test's own pauses between writes)
    let (answer, took) = split_scrape(fathom_port);
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(answer.contains("\r\n\r\n# HELP fathom_run_info"), "{answer}");
    assert!(took < Duration::from_secs(5), "a scrape behind 20 idle connections took {took:?}");
    // and the real Prometheus, scraping every second with its timeout of a second,
    // gets its scrapes while they stay there
    let prom = prometheus(&s.dir, prom_port, "fathom", &[addr]);
    let since = Instant::now();
    let ok = loop {
        let up = query(prom_port, "sum_over_time(up{job=\"fathom\"}[1h])");
        let ok: f64 = up.get(0).map(|u| u["value"][1].as_str().unwrap().parse().unwrap()).unwrap_or(0.0);
        if ok >= 3.0 || since.elapsed() > Duration::from_secs(15) {
            break ok;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    assert!(ok >= 3.0, "Prometheus scraped fathom {ok} times in 15 s");
    drop(idle);
    drop(prom);
    let _ = run.kill();
    let _ = run.wait();
}

#[test]
fn an_endpoint_on_a_non_loopback_address_is_warned_about() {
    let s = Scratch::new("prometheus-exposed");
    let port = free_port();
    let scenario = s.scenario(&format!(
        "name: exposed\nprometheus: 0.0.0.0:{port}\nworkloads:\n  w: {{engine: null, rw: randread, duration: 1s}}\n"
    ));
    let out = s.run(&["lint", scenario.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    let warning = format!("lint warning [prometheus-exposed]: the Prometheus endpoint at 0.0.0.0:{port} ");
    assert!(said.contains(&warning), "{said}");
    // loopback, by address or name, is quiet; --prometheus, which wins, is checked too
    for addr in [format!("127.0.0.1:{port}"), format!("localhost:{port}"), format!("[::1]:{port}")] {
        let quiet = s.scenario(&format!(
            "name: local\nprometheus: '{addr}'\nworkloads:\n  w: {{engine: null, rw: randread, duration: 1s}}\n"
        ));
        let out = s.run(&["lint", quiet.to_str().unwrap()]);
        assert!(!text(&out).contains("prometheus-exposed"), "{addr}: {}", text(&out));
        let out = s.run(&["run", quiet.to_str().unwrap(), "--prometheus", &format!("0.0.0.0:{port}"), "--strict"]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(text(&out).contains(&warning), "{}", text(&out));
    }
}

/// The tests that judge a rate or a time, and so hold the machine alone: `make test` runs
/// them last, one at a time (see `Scratch::alone`).
mod alone {
    use super::*;

    #[test]
    fn prometheus_scrapes_what_fathom_stores() {
        // alone: Prometheus's rate is compared with fathom's busiest seconds, and a stall on a
        // busy machine makes seconds that Prometheus's scrapes, a second apart, sample unevenly
        let s = Scratch::alone("prometheus");
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
        // rate() over 3 s of 1 s scrapes is the mean of about two seconds, so it is compared
        // with the busiest two seconds fathom stored: an open-loop schedule catching up after
        // a stall (a loaded machine) fills one second beyond the rate and leaves the one before
        // short, and neither alone is what a 3 s rate shows
        let stored_max = per_second.windows(2).map(|w| (w[0].1 + w[1].1) as f64 / 2.0).fold(0.0, f64::max);
        assert!(
            (prom_iops / stored_max - 1.0).abs() < 0.2,
            "prometheus {prom_iops} IOPS, fathom's busiest two seconds {stored_max}: {per_second:?}"
        );

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
        let q = query(
            prom_port,
            "histogram_quantile(0.99, sum by (le) (last_over_time(fathom_latency_seconds_bucket[1m])))",
        );
        let prom_p99: f64 = q[0]["value"][1].as_str().unwrap().parse().unwrap();
        let p99 = merged.value_at_quantile(0.99) as f64 / 1e9;
        // the endpoint's bucket bounds (10 µs to 10 s): a loaded machine's p99 may pass 100 ms
        let bounds = [
            0.0, 10e-6, 25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 0.1, 0.25, 0.5,
            1.0, 2.5, 5.0, 10.0,
        ];
        let upper = bounds.iter().position(|&b| prom_p99 <= b).expect("p99 under 10 s");
        let (lo, hi) = (bounds[upper.saturating_sub(1)], bounds[upper]);
        assert!(
            p99 >= lo / 1.02 && p99 <= hi * 1.02,
            "prometheus p99 {prom_p99} s (bucket {lo}..{hi}), fathom {p99} s"
        );

        // every panel of the Grafana dashboard above its database row is a query
        // Prometheus answers with data (tests/integration/databases.rs checks that row)
        assert_answered(prom_port, &dashboard_queries(""));
        drop(prom);
    }
}
