//! A Prometheus endpoint for a running run: `GET /metrics` in the text exposition
//! format (0.0.4), with the metric names of the design (base units, `_total` counters):
//! `fathom_ops_total` and `fathom_bytes_total` per worker and op,
//! `fathom_latency_seconds` and `fathom_service_time_seconds` histograms per workload
//! and op (buckets from 10 µs to 10 s), `fathom_target_iops`, `fathom_workers`,
//! `fathom_run_info`, and the process's own CPU and memory. Served by [`crate::http`]'s
//! small server: a connection per thread, bounded, so idle or slow clients cannot make
//! Prometheus miss its scrapes.

use crate::http::{self, Limits, Request, Response};
use crate::metrics::totals::{State, Totals, WorkloadInfo};
use hdrhistogram::Histogram;
use std::fmt::Write as _;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// Room for Prometheus, a Grafana or two and curl; a scrape's request arrives at once,
/// so 3 s for its head is generous, and then the slot is free for another.
const LIMITS: Limits = Limits {
    connections: 32,
    head_bytes: 16 << 10,
    head_time: Duration::from_secs(3),
    write_time: Duration::from_secs(10),
};

/// Histogram bucket bounds in seconds: 10 µs to 10 s, 1-2.5-5 per decade.
pub const BUCKETS: [f64; 19] = [
    10e-6, 25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 500e-3, 1.0,
    2.5, 5.0, 10.0,
];

/// A running endpoint; dropping it does not stop it, `stop` does.
pub struct Endpoint {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: JoinHandle<()>,
}

impl Endpoint {
    /// Binds `addr` and serves `live` until stopped.
    pub fn start(addr: &str, live: Arc<Totals>) -> std::io::Result<Endpoint> {
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        // a blocking accept costs nothing between scrapes; `stop` wakes it with a
        // connection of its own
        let thread = std::thread::Builder::new()
            .name("prometheus".into())
            .spawn(move || http::serve(listener, &flag, LIMITS, move |r| answer(r, &live)))?;
        Ok(Endpoint { addr, stop, thread })
    }

    pub fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        let wake = if self.addr.ip().is_unspecified() {
            SocketAddr::new(std::net::Ipv4Addr::LOCALHOST.into(), self.addr.port())
        } else {
            self.addr
        };
        if TcpStream::connect_timeout(&wake, Duration::from_secs(1)).is_ok() {
            let _ = self.thread.join();
        }
    }
}

/// The metrics for `GET /metrics`, 404 or 405 otherwise.
fn answer(request: &Request, live: &Totals) -> Response {
    let path = request.target.as_str();
    if request.method != "GET" {
        return Response {
            status: "405 Method Not Allowed",
            content_type: "text/plain; charset=utf-8",
            body: "fathom serves GET /metrics\n".into(),
        };
    }
    if path != "/metrics" && !path.starts_with("/metrics?") {
        return Response {
            status: "404 Not Found",
            content_type: "text/plain; charset=utf-8",
            body: "fathom serves /metrics\n".into(),
        };
    }
    let text = live.with(render);
    // Prometheus asks for OpenMetrics first; anything else gets the classic text format
    let openmetrics = request.header("accept").is_some_and(|a| a.contains("application/openmetrics-text"));
    if openmetrics {
        Response {
            status: "200 OK",
            content_type: "application/openmetrics-text; version=1.0.0; charset=utf-8",
            body: to_openmetrics(&text),
        }
    } else {
        Response { status: "200 OK", content_type: "text/plain; version=0.0.4; charset=utf-8", body: text }
    }
}

/// The classic text format as OpenMetrics: a counter's family is named without its
/// `_total` suffix (its samples keep it), an untyped family is `unknown`, and the text
/// ends with `# EOF`.
fn to_openmetrics(text: &str) -> String {
    let counters: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE ")?.strip_suffix(" counter"))
        .filter(|name| name.ends_with("_total"))
        .collect();
    let mut out = String::with_capacity(text.len() + 8);
    for line in text.lines() {
        let family = line.strip_prefix("# TYPE ").or(line.strip_prefix("# HELP ")).and_then(|r| r.split(' ').next());
        match family.filter(|f| counters.contains(f)) {
            Some(f) => out.push_str(&line.replacen(f, f.trim_end_matches("_total"), 1)),
            None if line.starts_with("# TYPE ") && line.ends_with(" untyped") => {
                out.push_str(&line.replace(" untyped", " unknown"))
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out.push_str("# EOF\n");
    out
}

/// Escapes a label value.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// The exposition text of the run so far.
pub fn render(s: &State) -> String {
    let mut out = String::new();
    let run = s.run;
    // the labels that say whose a series is: its workload and worker group
    let whose = |i: &WorkloadInfo| format!("workload=\"{}\",group=\"{}\"", label(&i.name), label(&i.group));
    let name = |w: usize| s.workloads.get(w).map(whose).unwrap_or_default();
    let merged = |w: usize| {
        let host = if s.workloads.get(w).is_some_and(|i| i.placed) { "all" } else { "localhost" };
        format!("{},host=\"{host}\"", name(w))
    };
    let _ = writeln!(out, "# HELP fathom_run_info The run being measured.\n# TYPE fathom_run_info gauge");
    let _ = writeln!(out, "fathom_run_info{{run=\"{run}\",scenario=\"{}\"}} 1", label(&s.scenario));
    if let Some(phase) = &s.phase {
        let _ = writeln!(
            out,
            "# HELP fathom_phase_info The phase of the timeline in force.\n# TYPE fathom_phase_info gauge"
        );
        let _ = writeln!(out, "fathom_phase_info{{run=\"{run}\",phase=\"{}\"}} 1", label(phase));
    }
    let _ = writeln!(out, "# HELP fathom_workers Workers of each workload running now.\n# TYPE fathom_workers gauge");
    for (i, w) in s.workloads.iter().enumerate() {
        // the phase in force says who runs: a ramp's workers as it adds them
        let now = s.running.iter().find(|r| r.0 == i).map_or(0, |r| r.1);
        let _ = writeln!(out, "fathom_workers{{run=\"{run}\",{}}} {now}", whose(w));
    }
    let _ = writeln!(
        out,
        "# HELP fathom_target_iops Asked IOs per second of open-loop workloads.\n# TYPE fathom_target_iops gauge"
    );
    for w in s.workloads.iter().filter(|w| w.target_iops.is_some()) {
        let _ = writeln!(out, "fathom_target_iops{{run=\"{run}\",{}}} {}", whose(w), w.target_iops.unwrap_or(0.0));
    }
    for (metric, help, pick) in
        [("fathom_ops_total", "IOs completed.", 0), ("fathom_bytes_total", "Bytes transferred.", 1)]
    {
        let _ = writeln!(out, "# HELP {metric} {help}\n# TYPE {metric} counter");
        for (&(w, worker, op), &(ops, bytes)) in &s.workers {
            let v = if pick == 0 { ops } else { bytes };
            let host = s.hosts.get(&worker).map(|h| label(h)).unwrap_or_else(|| "localhost".into());
            let _ = writeln!(
                out,
                "{metric}{{run=\"{run}\",{},worker=\"{worker}\",host=\"{host}\",op=\"{}\"}} {v}",
                name(w),
                op.as_str()
            );
        }
    }
    let _ = writeln!(
        out,
        "# HELP fathom_latency_seconds IO latency from the intended start (open loop) or submission.\n# TYPE fathom_latency_seconds histogram"
    );
    for (&(w, op), stats) in &s.totals {
        histogram(
            &mut out,
            "fathom_latency_seconds",
            &stats.latency,
            stats.latency_sum_ns as f64 / 1e9,
            run,
            &merged(w),
            op.as_str(),
        );
    }
    let _ = writeln!(
        out,
        "# HELP fathom_service_time_seconds IO time from submission (open-loop workloads).\n# TYPE fathom_service_time_seconds histogram"
    );
    for (&(w, op), stats) in &s.totals {
        if let Some(h) = &stats.service {
            let sum = h.mean() * h.len() as f64 / 1e9;
            histogram(&mut out, "fathom_service_time_seconds", h, sum, run, &merged(w), op.as_str());
        }
    }
    exported(&mut out, s);
    process(&mut out);
    out
}

/// The database servers' series, under their exporters' names, each family with its
/// help and type, with the run and the server (`postgres:NAME`'s NAME) as labels beside
/// their own.
fn exported(out: &mut String, s: &State) {
    // a family's lines together, whichever server they are of
    let mut series: Vec<(&String, &String, &f64)> = s.exported.iter().map(|((src, n), v)| (n, src, v)).collect();
    series.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    let mut last = "";
    for (name, source, value) in series {
        let (metric, labels) = name.split_once('{').unwrap_or((name, ""));
        if metric != last {
            let help = crate::observe::help(metric).unwrap_or("A database server's series, as observed.");
            let _ = writeln!(out, "# HELP {metric} {help}\n# TYPE {metric} {}", observed_type(metric));
            last = metric;
        }
        let server = label(source.split_once(':').map_or(source.as_str(), |(_, n)| n));
        let ours = format!("run=\"{}\",server=\"{server}\"", s.run);
        match labels {
            "" => writeln!(out, "{metric}{{{ours}}} {value}"),
            labels => writeln!(out, "{metric}{{{ours},{labels} {value}"),
        }
        .unwrap_or_default();
    }
}

/// The TYPE an observed family is served with: a gauge, a counter when its name ends in
/// `_total`, and untyped when its exporter named a counter without that suffix
/// (postgres_exporter's `pg_stat_database_xact_commit`, mysqld_exporter's
/// `mysql_global_status_queries`). The exporter's name is kept so that one dashboard
/// reads fathom and the exporter alike; typed a counter, Prometheus's own check
/// (`promtool check metrics`) would refuse it. `rate()` reads an untyped series as it
/// reads a counter.
pub fn observed_type(family: &str) -> &'static str {
    match (crate::observe::counter(family), family.ends_with("_total")) {
        (false, _) => "gauge",
        (true, true) => "counter",
        (true, false) => "untyped",
    }
}

/// One histogram's series; `workload` is its workload, group and host labels (a
/// workload's histogram merges all its hosts': `host="all"` for one on other hosts).
fn histogram(out: &mut String, metric: &str, h: &Histogram<u64>, sum_s: f64, run: i64, workload: &str, op: &str) {
    let labels = format!("run=\"{run}\",{workload},op=\"{op}\"");
    for (le, count) in BUCKETS.iter().zip(cumulative_buckets(h)) {
        let _ = writeln!(out, "{metric}_bucket{{{labels},le=\"{le}\"}} {count}");
    }
    let _ = writeln!(out, "{metric}_bucket{{{labels},le=\"+Inf\"}} {}", h.len());
    let _ = writeln!(out, "{metric}_sum{{{labels}}} {sum_s}");
    let _ = writeln!(out, "{metric}_count{{{labels}}} {}", h.len());
}

/// Cumulative counts of `h` (in ns) at or below each of [`BUCKETS`], in one pass over
/// its recorded values rather than one per bucket.
pub fn cumulative_buckets(h: &Histogram<u64>) -> [u64; BUCKETS.len()] {
    let mut counts = [0u64; BUCKETS.len()];
    for v in h.iter_recorded() {
        // as `count_between(0, le)`: a value counts where its HDR bucket starts
        let lowest = h.lowest_equivalent(v.value_iterated_to());
        if let Some(i) = BUCKETS.iter().position(|&le| lowest <= (le * 1e9) as u64) {
            counts[i] += v.count_at_value();
        }
    }
    for i in 1..counts.len() {
        counts[i] += counts[i - 1];
    }
    counts
}

/// The standard process metrics: CPU seconds and resident memory of fathom itself.
fn process(out: &mut String) {
    let _ = writeln!(
        out,
        "# HELP process_cpu_seconds_total User and system CPU time of fathom.\n# TYPE process_cpu_seconds_total counter"
    );
    let _ = writeln!(out, "process_cpu_seconds_total {}", crate::observe::host::process_cpu_seconds());
    let rss = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1).and_then(|p| p.parse::<u64>().ok()))
        .map(|pages| pages * 4096)
        .unwrap_or(0);
    let _ = writeln!(
        out,
        "# HELP process_resident_memory_bytes Resident memory of fathom.\n# TYPE process_resident_memory_bytes gauge"
    );
    let _ = writeln!(out, "process_resident_memory_bytes {rss}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::totals::WorkloadInfo;
    use crate::metrics::{Op, OpStats};

    #[test]
    fn counters_and_histograms_render_as_prometheus_reads_them() {
        let live = Totals::new(
            7,
            "demo",
            vec![WorkloadInfo {
                name: "oltp".into(),
                group: "db".into(),
                target_iops: Some(100.0),
                placed: false,
                ramp_s: 0,
            }],
        );
        let mut stats = OpStats::new(false);
        for us in [20u64, 40, 200, 3000] {
            stats.record(4096, us * 1000, 0);
        }
        live.add_one(0, 1, 0, Op::Read, stats.clone());
        live.add_one(0, 1, 1, Op::Read, stats.clone());
        let mut doubled = stats.clone();
        doubled.merge(&stats);
        let one_pass = cumulative_buckets(&doubled.latency);
        for (le, n) in BUCKETS.iter().zip(one_pass) {
            assert_eq!(n, doubled.latency.count_between(0, (le * 1e9) as u64), "le {le}");
        }
        let text = live.with(render);
        let om = to_openmetrics(&text);
        assert!(om.contains("# TYPE fathom_ops counter\n") && om.contains("# HELP fathom_ops IOs completed."));
        assert!(om.contains("\nfathom_ops_total{") && om.ends_with("# EOF\n"));
        assert!(om.contains("# TYPE fathom_latency_seconds histogram"));
        assert!(
            text.contains(
                "fathom_ops_total{run=\"7\",workload=\"oltp\",group=\"db\",worker=\"1\",host=\"localhost\",op=\"read\"} 8"
            ),
            "{text}"
        );
        assert!(text.contains(
            "fathom_bytes_total{run=\"7\",workload=\"oltp\",group=\"db\",worker=\"1\",host=\"localhost\",op=\"read\"} 32768"
        ));
        let bucket = |le: &str| {
            let key = format!(
                "fathom_latency_seconds_bucket{{run=\"7\",workload=\"oltp\",group=\"db\",host=\"localhost\",op=\"read\",le=\"{le}\"}} "
            );
            text.lines()
                .find_map(|l| l.strip_prefix(&key))
                .unwrap_or_else(|| panic!("no bucket {le}"))
                .parse::<u64>()
                .unwrap()
        };
        // 20 and 40 µs are under 50 µs, 200 µs under 250 µs, 3 ms under 5 ms
        assert_eq!(
            (bucket("0.00001"), bucket("0.00005"), bucket("0.00025"), bucket("0.005"), bucket("+Inf")),
            (0, 4, 6, 8, 8)
        );
        assert!(text.contains(
            "fathom_latency_seconds_count{run=\"7\",workload=\"oltp\",group=\"db\",host=\"localhost\",op=\"read\"} 8"
        ));
        assert!(text.contains("fathom_target_iops{run=\"7\",workload=\"oltp\",group=\"db\"} 100"));
        assert!(text.contains("# TYPE fathom_ops_total counter") && text.contains("process_cpu_seconds_total "));
    }

    /// The gauge follows the timeline: a ramp's workers as it adds them, and 0 for a
    /// workload not running, not the count it started with.
    #[test]
    fn postgres_series_are_served_under_their_exporters_names() {
        let live = Totals::new(3, "s", Vec::new());
        let rows = [
            ("postgres:b", "pg_stat_database_xact_commit{datname=\"x\"}", 5.0),
            ("postgres:a", "fathom_pg_stat_wal_bytes_total", 9.0),
            ("postgres:a", "pg_stat_database_xact_commit{datname=\"x\"}", 7.0),
            ("postgres:a", "fathom_pg_stat_wal_bytes_total", 10.0),
            ("mariadb:m", "mysql_global_status_threads_running", 4.0),
        ];
        live.set_exported(rows.iter().map(|(s, n, v)| (*s, *n, *v)));
        let text = live.with(render);
        let ours: Vec<&str> =
            text.lines().filter(|l| ["pg_", "fathom_pg_", "mysql_"].iter().any(|p| l.contains(p))).collect();
        // the latest value of each, a family's lines together under its help and type,
        // the server a label
        assert_eq!(
            ours,
            [
                "# HELP fathom_pg_stat_wal_bytes_total Bytes of WAL generated.",
                "# TYPE fathom_pg_stat_wal_bytes_total counter",
                "fathom_pg_stat_wal_bytes_total{run=\"3\",server=\"a\"} 10",
                "# HELP mysql_global_status_threads_running A variable of MariaDB's SHOW GLOBAL STATUS, under mysqld_exporter's name.",
                "# TYPE mysql_global_status_threads_running gauge",
                "mysql_global_status_threads_running{run=\"3\",server=\"m\"} 4",
                "# HELP pg_stat_database_xact_commit Transactions committed in the database.",
                "# TYPE pg_stat_database_xact_commit untyped",
                "pg_stat_database_xact_commit{run=\"3\",server=\"a\",datname=\"x\"} 7",
                "pg_stat_database_xact_commit{run=\"3\",server=\"b\",datname=\"x\"} 5",
            ]
        );
        let om = to_openmetrics(&text);
        assert!(om.contains("# TYPE pg_stat_database_xact_commit unknown\n"), "{om}");
        assert!(om.contains("# TYPE fathom_pg_stat_wal_bytes counter\n"), "{om}");
    }

    /// Every family the database observers may store passes Prometheus's own check of
    /// an exposition (`promtool check metrics`: help, type, a counter's `_total`, no
    /// `_count` outside a histogram), as the endpoint serves them.
    #[test]
    fn every_observed_family_passes_promtool() {
        let live = Totals::new(1, "all", Vec::new());
        let postgres = crate::observe::postgres::every_series();
        let mariadb = crate::observe::mariadb::every_series();
        let rows = postgres.iter().map(|n| ("postgres:p", n.as_str(), 1.0));
        live.set_exported(rows.chain(mariadb.iter().map(|n| ("mariadb:m", n.as_str(), 1.0))));
        let text = live.with(render);
        assert!(postgres.len() > 40 && mariadb.len() > 40, "{} {}", postgres.len(), mariadb.len());
        let mut promtool = std::process::Command::new("promtool")
            .args(["check", "metrics"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("promtool (Debian's prometheus, scripts/install-deps.sh test)");
        std::io::Write::write_all(&mut promtool.stdin.take().unwrap(), text.as_bytes()).unwrap();
        let out = promtool.wait_with_output().unwrap();
        let said = String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{said}\n{text}");
    }

    #[test]
    fn workers_are_those_running_now() {
        let info = |name: &str| WorkloadInfo {
            name: name.into(),
            group: String::new(),
            target_iops: None,
            placed: false,
            ramp_s: 0,
        };
        let live = Totals::new(3, "ramp", vec![info("r"), info("other")]);
        let workers = |live: &Totals| {
            let text = live.with(render);
            ["r", "other"].map(|w| {
                let key = format!("fathom_workers{{run=\"3\",workload=\"{w}\",group=\"\"}} ");
                text.lines().find_map(|l| l.strip_prefix(&key).map(str::to_string)).unwrap_or_default()
            })
        };
        assert_eq!(workers(&live), ["0", "0"]);
        live.set_phase("r x1", 0, &[(0, 1)]);
        assert_eq!(workers(&live), ["1", "0"]);
        live.set_phase("r x6", 5, &[(0, 6)]);
        assert_eq!(workers(&live), ["6", "0"]);
    }
}
