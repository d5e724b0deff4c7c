//! `driver: iperf3`: the real iperf3 client with `streams` parallel streams; each
//! stream is a worker whose bytes per second (op `send`, or `recv` with `reverse`) come
//! from iperf3's JSON report (`-J`), and each second's retransmits go to the
//! observations. Without a `server`, fathom starts `iperf3 -s` on loopback for the
//! workload before the run clock starts and stops it afterwards.
//!
//! iperf3 writes its JSON when the test ends, so a workload's seconds reach the store
//! then (Debian's iperf3 3.12 has no `--json-stream`).

use super::driver::{Driver, LaunchContext, Ready, bad_input, spawn_program};
use crate::children::Group;
use crate::engine::target::DataFile;
use crate::engine::{WorkerThread, sleep_until};
use crate::error::{Error, Result};
use crate::metrics::{Op, OpStats, Sample};
use crate::scenario::driver::{Driver as Spec, Iperf3};
use crate::scenario::units::Span;
use crate::scenario::{EngineKind, Scenario, Workload};
use crate::store::sink::Record;
use crate::store::{EventRow, ObservationRow};
use serde::Deserialize;
use std::collections::HashMap;
use std::net::{TcpStream, ToSocketAddrs};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// iperf3's default port.
const DEFAULT_PORT: u16 = 5201;

/// The installed iperf3's version line, or why it cannot be run.
fn version() -> Result<String> {
    let out = Command::new("iperf3").arg("--version").output().map_err(|e| {
        Error::input(format!("`driver: iperf3` runs the iperf3 program, which could not be started ({e}); install it (Debian: apt-get install iperf3)"))
    })?;
    Ok(String::from_utf8_lossy(&out.stdout).lines().next().unwrap_or_default().trim().to_string())
}

/// The servers a run's iperf3 workloads talk to: `host:port` per workload index, and the
/// `iperf3 -s` processes fathom started (killed when this is dropped).
#[derive(Default)]
pub struct Servers {
    pub address: HashMap<usize, (String, u16)>,
    _started: Vec<Group>,
}

/// Finds or starts the server of every iperf3 workload: one `iperf3 -s` of fathom's own
/// per workload without a `server` (an iperf3 server runs one test at a time). Checks
/// that each server accepts connections (or `stop` is set).
fn prepare(scenario: &Scenario, stop: &AtomicBool, progress: &dyn Fn(&str)) -> Result<Servers> {
    let mut servers = Servers::default();
    for (idx, w) in scenario.workloads.iter().enumerate() {
        let Some(Spec::Iperf3(spec)) = w.driver() else { continue };
        let (host, port) = match &spec.server {
            Some(server) => split_host_port(server),
            None => {
                let port = std::net::TcpListener::bind("127.0.0.1:0")
                    .and_then(|l| l.local_addr())
                    .map(|a| a.port())
                    .map_err(|e| Error::failed(format!("{}: finding a free port: {e}", w.name)))?;
                let mut server = Command::new("iperf3");
                server.args(["-s", "-B", "127.0.0.1", "-p", &port.to_string()]);
                server.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
                let child = Group::spawn(&mut server, "iperf3 -s")
                    .map_err(|e| Error::failed(format!("{}: starting iperf3 -s: {e}", w.name)))?;
                servers._started.push(child);
                progress(&format!("{}: iperf3 server on 127.0.0.1:{port}", w.name));
                ("127.0.0.1".to_string(), port)
            }
        };
        wait_listening(&host, port, stop)
            .map_err(|e| Error::failed(format!("{}: iperf3 server {host}:{port}: {e}", w.name)))?;
        servers.address.insert(idx, (host, port));
    }
    Ok(servers)
}

fn split_host_port(server: &str) -> (String, u16) {
    match server.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') || host.ends_with(']') => match port.parse() {
            Ok(port) => (host.trim_matches(['[', ']']).to_string(), port),
            Err(_) => (server.to_string(), DEFAULT_PORT),
        },
        _ => (server.to_string(), DEFAULT_PORT),
    }
}

/// Waits up to 5 s for `host:port` to accept a connection, unless `stop` is set.
fn wait_listening(host: &str, port: u16, stop: &AtomicBool) -> Result<()> {
    let until = Instant::now() + Duration::from_secs(5);
    let addrs: Vec<_> = (host, port).to_socket_addrs().map_err(|e| Error::failed(e.to_string()))?.collect();
    loop {
        let err = match addrs.iter().find_map(|a| TcpStream::connect_timeout(a, Duration::from_millis(500)).ok()) {
            Some(_) => return Ok(()),
            None => "not accepting connections",
        };
        if Instant::now() > until || stop.load(Ordering::Relaxed) {
            return Err(Error::failed(err));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The parts of `iperf3 -J` fathom reads.
#[derive(Debug, Deserialize)]
pub struct Report {
    #[serde(default)]
    pub intervals: Vec<Interval>,
    #[serde(default)]
    pub end: Option<End>,
    /// iperf3's own error message, when the test failed.
    pub error: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct Interval {
    pub streams: Vec<StreamInterval>,
}

#[derive(Debug, Deserialize)]
pub struct StreamInterval {
    pub socket: i64,
    pub start: f64,
    pub bytes: u64,
    #[serde(default)]
    pub retransmits: Option<u64>,
}

#[derive(Debug, Deserialize)]
pub struct End {
    pub sum_sent: Option<Sum>,
    pub sum_received: Option<Sum>,
}

#[derive(Debug, Deserialize)]
pub struct Sum {
    pub seconds: f64,
    pub bits_per_second: f64,
    #[serde(default)]
    pub retransmits: Option<u64>,
}

/// `driver: iperf3`.
pub struct Iperf3Driver;

impl Driver for Iperf3Driver {
    fn name(&self) -> &'static str {
        "iperf3"
    }

    fn runs(&self, engine: EngineKind) -> bool {
        engine == EngineKind::Iperf3
    }

    fn check(&self, _: &Scenario, _: &AtomicBool) -> Result<()> {
        version().map(drop)
    }

    fn prepare(
        &self,
        scenario: &Scenario,
        _: &std::path::Path,
        stop: &AtomicBool,
        progress: &dyn Fn(&str),
    ) -> Result<Box<dyn Ready>> {
        Ok(Box::new(prepare(scenario, stop, progress).map_err(bad_input)?))
    }

    fn describe(&self, w: &Workload, _: &[Arc<DataFile>], _: u32, _: EngineKind) -> String {
        let Some(Spec::Iperf3(i)) = w.driver() else { return "iperf3".into() };
        format!(
            "iperf3, {} stream{}{}",
            i.streams,
            if i.streams == 1 { "" } else { "s" },
            if i.reverse { ", reverse (server sends)" } else { "" }
        )
    }
}

impl Ready for Servers {
    fn start(&self, cx: &LaunchContext) -> Result<Vec<(WorkerThread, String)>> {
        let Some(Spec::Iperf3(spec)) = cx.workload.driver() else {
            return Err(Error::failed(format!("{}: not an iperf3 workload", cx.workload.name)));
        };
        let spec = spec.clone();
        let server = self.address.get(&cx.workload_idx).cloned().unwrap_or_default();
        spawn_program(cx, "iperf3", move |l| run(l, &spec, &server))
    }
}

fn run(l: &LaunchContext, spec: &Iperf3, server: &(String, u16)) -> Result<()> {
    crate::nofollow::create_dir(&l.dir).map_err(|e| Error::failed(format!("{}: {e}", l.dir.display())))?;
    let seconds = (l.workload.ramp + l.workload.duration).as_secs();
    let json_path = l.dir.join(format!("{}.iperf3.json", l.workload.name));
    let mut cmd = Command::new("iperf3");
    cmd.args(["-c", &server.0, "-p", &server.1.to_string(), "-J", "-i", "1"]);
    cmd.args(["-P", &spec.streams.to_string(), "-t", &seconds.to_string()]);
    if spec.reverse {
        cmd.arg("-R");
    }
    let out =
        crate::nofollow::create_file(&json_path).map_err(|e| Error::failed(format!("{}: {e}", json_path.display())))?;
    cmd.stdin(Stdio::null()).stdout(out).stderr(Stdio::null());
    sleep_until(l.begin, &l.stop);
    if l.stop.load(Ordering::Relaxed) {
        return Ok(());
    }
    let started = Instant::now();
    let mut child = Group::spawn(&mut cmd, "iperf3")
        .map_err(|e| Error::failed(format!("{}: starting iperf3: {e}", l.workload.name)))?;
    let deadline = l.clock_start + Duration::from_secs(l.end_t + 30);
    // stopped with SIGINT, iperf3 still writes its JSON, the seconds so far included
    let stopped = || l.stop.load(Ordering::Relaxed) || l.abort.load(Ordering::Relaxed);
    let (status, signalled) = child
        .wait_stopping(Some(libc::SIGINT), Some(deadline), &stopped)
        .map_err(|e| Error::failed(format!("{}: waiting for iperf3: {e}", l.workload.name)))?;
    let text = std::fs::read_to_string(&json_path).unwrap_or_default();
    let report: Report = serde_json::from_str(&text).map_err(|e| {
        Error::failed(format!(
            "{}: iperf3 ({status}) wrote no report fathom can read ({e}); see {}",
            l.workload.name,
            json_path.display()
        ))
    })?;
    if let Some(err) = &report.error
        && !signalled
    {
        return Err(Error::failed(format!("{}: iperf3: {err}", l.workload.name)));
    }
    let start_t = l.begin.saturating_duration_since(l.clock_start).as_secs();
    let op = if spec.reverse { Op::Recv } else { Op::Send };
    let (samples, retransmits) = per_second(&report, l.workload_idx, l.first_worker, start_t, l.end_t, op);
    for s in samples {
        let _ = l.tx.send(s);
    }
    let source = format!("iperf3:{}", l.workload.name);
    let rows: Vec<ObservationRow> = retransmits
        .iter()
        .map(|(t, n)| ObservationRow {
            t: *t as i64,
            source: source.clone(),
            name: "retransmits".into(),
            value: *n as f64,
        })
        .collect();
    l.sink.send(Record::Observations(rows));
    let detail = match report.end.as_ref().and_then(|e| e.sum_sent.as_ref().zip(e.sum_received.as_ref())) {
        Some((sent, received)) => format!(
            "sender {:.3} Gbit/s, receiver {:.3} Gbit/s over {}, {} retransmits",
            sent.bits_per_second / 1e9,
            received.bits_per_second / 1e9,
            Span(Duration::from_secs_f64(sent.seconds.max(0.0))),
            sent.retransmits.map(|r| r.to_string()).unwrap_or_else(|| "no count of".into())
        ),
        None => "no closing report".into(),
    };
    l.sink.send(Record::Event(EventRow {
        at_ms: started.saturating_duration_since(l.clock_start).as_millis() as i64,
        kind: "iperf3".into(),
        label: l.workload.name.clone(),
        status: status.code().map(i64::from),
        took_ms: Some(started.elapsed().as_millis() as i64),
        detail,
    }));
    Ok(())
}

/// Each stream's bytes per second as samples (stream n is worker `first_worker + n`,
/// in the order iperf3 lists them), and retransmits per second summed over streams.
/// Interval i of the test is second `start_t + i` of the run clock.
pub fn per_second(
    report: &Report,
    workload: usize,
    first_worker: u32,
    start_t: u64,
    end_t: u64,
    op: Op,
) -> (Vec<Sample>, Vec<(u64, u64)>) {
    let mut sockets: Vec<i64> = Vec::new();
    let mut samples = Vec::new();
    let mut retransmits = Vec::new();
    for interval in &report.intervals {
        let Some(first) = interval.streams.first() else { continue };
        let t = start_t + first.start.round() as u64;
        if t >= end_t {
            continue;
        }
        let mut retrans = None;
        for s in &interval.streams {
            let n = match sockets.iter().position(|x| *x == s.socket) {
                Some(n) => n,
                None => {
                    sockets.push(s.socket);
                    sockets.len() - 1
                }
            };
            let mut stats = OpStats::new(false);
            stats.bytes = s.bytes;
            samples.push(Sample { workload, worker: first_worker + n as u32, t: t as u32, op, stats });
            if let Some(r) = s.retransmits {
                *retrans.get_or_insert(0) += r;
            }
        }
        if let Some(r) = retrans {
            retransmits.push((t, r));
        }
    }
    (samples, retransmits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_become_seconds_per_stream() {
        let report: Report = serde_json::from_value(serde_json::json!({
            "start": {},
            "intervals": [
                {"streams": [{"socket": 5, "start": 0, "bytes": 100, "retransmits": 1},
                             {"socket": 7, "start": 0, "bytes": 200, "retransmits": 2}], "sum": {}},
                {"streams": [{"socket": 5, "start": 1.0001, "bytes": 300, "retransmits": 0},
                             {"socket": 7, "start": 1.0001, "bytes": 400, "retransmits": 0}], "sum": {}},
                {"streams": [{"socket": 5, "start": 2.0, "bytes": 1, "retransmits": 0}], "sum": {}}
            ],
            "end": {}
        }))
        .unwrap();
        let (samples, retrans) = per_second(&report, 2, 40, 10, 12, Op::Send);
        assert_eq!(samples.len(), 4);
        let got: Vec<(u32, u32, u64)> = samples.iter().map(|s| (s.worker, s.t, s.stats.bytes)).collect();
        assert_eq!(got, vec![(40, 10, 100), (41, 10, 200), (40, 11, 300), (41, 11, 400)]);
        assert_eq!(retrans, vec![(10, 3), (11, 0)]);
    }

    #[test]
    fn server_addresses() {
        assert_eq!(split_host_port("10.0.0.2"), ("10.0.0.2".to_string(), 5201));
        assert_eq!(split_host_port("10.0.0.2:5300"), ("10.0.0.2".to_string(), 5300));
        assert_eq!(split_host_port("[::1]:5300"), ("::1".to_string(), 5300));
    }
}
