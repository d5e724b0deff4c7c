//! `driver: iperf3`: the real iperf3 client with `streams` parallel streams; each
//! stream is a worker whose bytes per second (op `send`, or `recv` with `reverse`) come
//! from iperf3's interval lines, and each second's retransmits and its streams'
//! round-trip time (from the kernel, [`super::tcp_rtt`]) go to the observations.
//! Without a `server`, fathom starts `iperf3 -s` on loopback for the workload before the
//! run clock starts and stops it afterwards.
//!
//! iperf3 prints each interval's line as it ends (`--forceflush`), so a workload's
//! seconds reach the store, the live view and the Prometheus endpoint while it runs. Its
//! JSON (`-J`) would come only when the test ends (Debian's iperf3 3.12 has no
//! `--json-stream`), so the text is read, with bitrates in whole Kbit/s (`-f k`).

use super::driver::{Driver, LaunchContext, OVERRUN, Ready, bad_input, finish_program, overran, spawn_program};
use crate::children::Group;
use crate::clock::sleep_until;
use crate::engine::WorkerThread;
use crate::engine::target::DataFile;
use crate::error::{Error, Result};
use crate::metrics::{Op, OpStats, Sample};
use crate::scenario::program::iperf3::Iperf3;
use crate::scenario::units::Span;
use crate::scenario::{EngineKind, Scenario, Workload};
use crate::store::ObservationRow;
use crate::store::sink::Record;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
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
        let Some(spec) = spec_of(w) else { continue };
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
                wait_until(stop, || loopback_listening(port))
                    .map_err(|e| Error::failed(format!("{}: iperf3 server 127.0.0.1:{port}: {e}", w.name)))?;
                ("127.0.0.1".to_string(), port)
            }
        };
        if spec.server.is_some() {
            wait_listening(&host, port, stop)
                .map_err(|e| Error::failed(format!("{}: iperf3 server {host}:{port}: {e}", w.name)))?;
        }
        servers.address.insert(idx, (host, port));
    }
    Ok(servers)
}

/// Whether an iperf3 workload of `scenario` talks over this machine's loopback: to the
/// server fathom starts on 127.0.0.1, or to a `server` that names a loopback address.
pub fn on_loopback(scenario: &Scenario) -> bool {
    let loopback = |server: &String| {
        let (host, port) = split_host_port(server);
        (host.as_str(), port).to_socket_addrs().is_ok_and(|mut a| a.any(|a| a.ip().is_loopback()))
    };
    scenario.workloads.iter().filter_map(spec_of).any(|spec| spec.server.as_ref().is_none_or(loopback))
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

/// Waits up to 5 s for `host:port` to accept a connection, unless `stop` is set: for a
/// server of the user's, which fathom sees only through the network. iperf3 takes the
/// probe for a client that left and reopens its listener, so a server fathom started is
/// watched without connecting ([`loopback_listening`]).
fn wait_listening(host: &str, port: u16, stop: &AtomicBool) -> Result<()> {
    let addrs: Vec<_> = (host, port).to_socket_addrs().map_err(|e| Error::failed(e.to_string()))?.collect();
    wait_until(stop, || addrs.iter().any(|a| TcpStream::connect_timeout(a, Duration::from_millis(500)).is_ok()))
}

/// Waits up to 5 s for `ready`, unless `stop` is set.
fn wait_until(stop: &AtomicBool, ready: impl Fn() -> bool) -> Result<()> {
    let until = Instant::now() + Duration::from_secs(5);
    while !ready() {
        if Instant::now() > until || stop.load(Ordering::Relaxed) {
            return Err(Error::failed("not accepting connections"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

/// Whether a socket of this machine listens on 127.0.0.1:`port`, from /proc/net/tcp
/// (`0100007F:PORT` in hex, state `0A`).
fn loopback_listening(port: u16) -> bool {
    let local = format!("0100007F:{port:04X}");
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    table.lines().skip(1).any(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        fields.get(1) == Some(&local.as_str()) && fields.get(3) == Some(&"0A")
    })
}

/// A line of iperf3's text output (`-f k`: bitrates in whole Kbit/s) fathom reads. The
/// `[SUM]` lines of several streams are not read: fathom sums the streams itself.
#[derive(Debug, PartialEq)]
pub enum Line {
    /// One stream's interval (`[  5]   0.00-1.00   sec   966 MBytes  8105379 Kbits/sec
    /// 7   1023 KBytes`): its id, when it began in seconds of the test, its bytes (the
    /// bitrate over its length: the transfer column has three digits) and, on the
    /// sending side, its retransmits.
    Interval { stream: u32, start: f64, bytes: u64, retransmits: Option<u64> },
    /// One stream's closing line, the sender's or the receiver's: its length in seconds,
    /// its bitrate and (the sender's) retransmits.
    Closing { sender: bool, seconds: f64, bits_per_second: f64, retransmits: Option<u64> },
}

impl Line {
    pub fn parse(line: &str) -> Option<Line> {
        let (id, rest) = line.trim_start().strip_prefix('[')?.split_once(']')?;
        let stream: u32 = id.trim().parse().ok()?;
        let f: Vec<&str> = rest.split_whitespace().collect();
        let (start, end) = f.first()?.split_once('-')?;
        let (start, end): (f64, f64) = (start.parse().ok()?, end.parse().ok()?);
        if f.get(1) != Some(&"sec") || f.get(5) != Some(&"Kbits/sec") {
            return None;
        }
        let kbits: f64 = f.get(4)?.parse().ok()?;
        let number = |i: usize| f.get(i).and_then(|n| n.parse::<u64>().ok());
        match f.last() {
            Some(&"sender") | Some(&"receiver") => Some(Line::Closing {
                sender: f.last() == Some(&"sender"),
                seconds: end - start,
                bits_per_second: kbits * 1000.0,
                retransmits: number(6),
            }),
            _ => Some(Line::Interval {
                stream,
                start,
                bytes: (kbits * 1000.0 / 8.0 * (end - start)).round() as u64,
                retransmits: number(6),
            }),
        }
    }
}

/// iperf3's intervals as fathom's seconds, as its lines come: stream n (in the order
/// iperf3 first names them) is worker `first_worker + n`; interval i of the test is
/// second `start_t + i` of the run clock; retransmits are summed per second.
pub struct Seconds {
    workload: usize,
    first_worker: u32,
    start_t: u64,
    end_t: u64,
    op: Op,
    streams: Vec<u32>,
    pub retransmits: std::collections::BTreeMap<u64, u64>,
    /// Per closing line, sender's and receiver's: (seconds, bit/s summed over streams, retransmits).
    pub sender: Option<(f64, f64, Option<u64>)>,
    pub receiver: Option<(f64, f64)>,
}

impl Seconds {
    pub fn new(workload: usize, first_worker: u32, start_t: u64, end_t: u64, op: Op) -> Seconds {
        Seconds {
            workload,
            first_worker,
            start_t,
            end_t,
            op,
            streams: Vec::new(),
            retransmits: Default::default(),
            sender: None,
            receiver: None,
        }
    }

    /// Reads one line of iperf3's output: the sample it gives, if it gives one.
    pub fn add(&mut self, line: &str) -> Option<Sample> {
        match Line::parse(line)? {
            Line::Interval { stream, start, bytes, retransmits } => {
                let t = self.start_t + start.round() as u64;
                if t >= self.end_t {
                    return None;
                }
                let n = match self.streams.iter().position(|x| *x == stream) {
                    Some(n) => n,
                    None => {
                        self.streams.push(stream);
                        self.streams.len() - 1
                    }
                };
                if let Some(r) = retransmits {
                    *self.retransmits.entry(t).or_default() += r;
                }
                let mut stats = OpStats::new(false);
                stats.bytes = bytes;
                let worker = self.first_worker + n as u32;
                Some(Sample { workload: self.workload, worker, t: t as u32, op: self.op, stats })
            }
            Line::Closing { sender: true, seconds, bits_per_second, retransmits } => {
                let (_, bits, retrans) = self.sender.get_or_insert((seconds, 0.0, None));
                *bits += bits_per_second;
                if let Some(r) = retransmits {
                    *retrans.get_or_insert(0) += r;
                }
                None
            }
            Line::Closing { sender: false, seconds, bits_per_second, .. } => {
                self.receiver.get_or_insert((seconds, 0.0)).1 += bits_per_second;
                None
            }
        }
    }
}

/// `driver: iperf3`.
pub struct Iperf3Driver;

/// The iperf3 settings of workload `w`, if iperf3 runs it.
fn spec_of(w: &Workload) -> Option<&Iperf3> {
    w.program()?.get::<Iperf3>()
}

impl Driver for Iperf3Driver {
    fn name(&self) -> &'static str {
        "iperf3"
    }

    fn runs(&self, w: &Workload, _: Option<EngineKind>) -> bool {
        spec_of(w).is_some()
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

    fn describe(&self, w: &Workload, _: &[Arc<DataFile>], _: u32, _: Option<EngineKind>) -> String {
        let Some(i) = spec_of(w) else { return w.runner() };
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
        let Some(spec) = spec_of(&cx.workload) else {
            return Err(Error::failed(format!("{}: not an iperf3 workload", cx.workload.name)));
        };
        let spec = spec.clone();
        let server = self.address.get(&cx.workload_idx).cloned().unwrap_or_default();
        spawn_program(cx, "iperf3", move |l| run(l, &spec, &server))
    }
}

fn run(l: &LaunchContext, spec: &Iperf3, server: &(String, u16)) -> Result<()> {
    let w = &l.workload;
    let dir = l.run_dir()?;
    let seconds = (w.ramp + w.duration).as_secs();
    let mut cmd = Command::new("iperf3");
    // each interval's line as it ends (--forceflush), its bitrate in whole Kbit/s
    cmd.args(["-c", &server.0, "-p", &server.1.to_string(), "-i", "1", "--forceflush", "-f", "k"]);
    cmd.args(["-P", &spec.streams.to_string(), "-t", &seconds.to_string()]);
    if spec.reverse {
        cmd.arg("-R");
    }
    if let Some(total) = spec.bitrate_bps {
        let per_stream = (total / spec.streams as f64).round().max(1.0);
        cmd.args(["-b", &format!("{per_stream:.0}")]);
    }
    let (mut copy, _) = dir.create_file(&format!("{}.iperf3.out", w.name))?;
    let (err, err_path) = dir.create_file(&format!("{}.iperf3.stderr", w.name))?;
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(err);
    sleep_until(l.begin, &l.stop);
    if l.stop.load(Ordering::Relaxed) {
        return Ok(());
    }
    let started = Instant::now();
    let mut child =
        Group::spawn(&mut cmd, "iperf3").map_err(|e| Error::failed(format!("{}: starting iperf3: {e}", w.name)))?;
    let deadline = l.end() + OVERRUN;
    // stopped with SIGINT, iperf3 still prints its closing lines
    let stopped = || l.stop.load(Ordering::Relaxed) || l.abort.load(Ordering::Relaxed);
    let op = if spec.reverse { Op::Recv } else { Op::Send };
    let mut intervals = Seconds::new(l.workload_idx, l.first_worker, l.begin_t(), l.end_t, op);
    let stdout = child.stdout();
    let ended = AtomicBool::new(false);
    // each interval's samples are sent as iperf3 prints it; its output is kept as it was
    let (waited, took) = std::thread::scope(|scope| {
        if !spec.reverse {
            scope.spawn(|| sample_rtt(l, server, spec.streams, &ended));
        }
        scope.spawn(|| {
            let Some(stdout) = stdout else { return };
            for line in BufReader::new(stdout).lines().map_while(std::io::Result::ok) {
                let _ = writeln!(copy, "{line}");
                if let Some(sample) = intervals.add(&line) {
                    // The collector outlives the drivers; if it failed, the run reports that.
                    let _ = l.tx.send(sample);
                }
            }
        });
        let waited = child.wait_stopping(Some(libc::SIGINT), Some(deadline), &stopped);
        ended.store(true, Ordering::Relaxed);
        (waited, started.elapsed())
    });
    let (status, signalled) = waited.map_err(|e| Error::failed(format!("{}: waiting for iperf3: {e}", w.name)))?;
    record_closing(l, &intervals, started, took, status);
    if signalled && !stopped() {
        return Err(overran(l, "iperf3"));
    }
    if !status.success() && !signalled {
        let err = std::fs::read_to_string(&err_path).unwrap_or_default();
        let err = err.lines().map(|l| l.trim_start_matches("iperf3: ")).collect::<Vec<_>>().join(" / ");
        return Err(Error::failed(format!("{}: iperf3 {status}: {err} (output in {})", w.name, l.dir.display())));
    }
    Ok(())
}

/// The round-trip time of iperf3's streams to `server`, sampled from the kernel at each
/// whole second of the run clock until `ended`: per second `[t, t+1)`, `rtt_ms` (their
/// mean) and `rtt_max_ms` (the highest), as iperf3's JSON gives a sender's `mean_rtt` and
/// `max_rtt` (its text, which fathom reads as it comes, has none). Its control
/// connection, to the same port, is the one that carried the fewest bytes: left out.
fn sample_rtt(l: &LaunchContext, server: &(String, u16), streams: u32, ended: &AtomicBool) {
    let Some(peer) = (server.0.as_str(), server.1).to_socket_addrs().ok().and_then(|mut a| a.next()) else { return };
    let source = format!("iperf3:{}", l.workload.name);
    for t in l.begin_t() + 1.. {
        if !sleep_until(l.clock_start + Duration::from_secs(t), ended) {
            return;
        }
        let Ok(mut found) = super::tcp_rtt::connections(peer) else { return };
        found.sort_by_key(|c| std::cmp::Reverse(c.bytes));
        found.truncate(streams as usize);
        if found.is_empty() {
            continue;
        }
        let rtts: Vec<f64> = found.iter().map(|c| c.rtt_us as f64 / 1000.0).collect();
        let row = |name: &str, value: f64| ObservationRow {
            t: t as i64 - 1,
            source: source.clone(),
            name: name.into(),
            value,
        };
        let mean = rtts.iter().sum::<f64>() / rtts.len() as f64;
        l.sink.send(Record::Observations(vec![
            row("rtt_ms", mean),
            row("rtt_max_ms", rtts.iter().copied().fold(0.0, f64::max)),
        ]));
    }
}

/// Records what iperf3's run said as it closed: each second's retransmits as
/// observations, and its closing report as an event.
fn record_closing(
    l: &LaunchContext,
    intervals: &Seconds,
    started: Instant,
    took: Duration,
    status: std::process::ExitStatus,
) {
    let source = format!("iperf3:{}", l.workload.name);
    let rows: Vec<ObservationRow> = intervals
        .retransmits
        .iter()
        .map(|(t, n)| ObservationRow {
            t: *t as i64,
            source: source.clone(),
            name: "retransmits".into(),
            value: *n as f64,
        })
        .collect();
    l.sink.send(Record::Observations(rows));
    let detail = match (intervals.sender, intervals.receiver) {
        (Some((seconds, sent, retransmits)), Some((_, received))) => format!(
            "sender {:.3} Gbit/s, receiver {:.3} Gbit/s over {}, {} retransmits",
            sent / 1e9,
            received / 1e9,
            Span(Duration::from_secs_f64(seconds.max(0.0))),
            retransmits.map(|r| r.to_string()).unwrap_or_else(|| "no count of".into())
        ),
        _ => "no closing report".into(),
    };
    finish_program(l, "iperf3", started, took, status, detail);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_become_seconds_per_stream() {
        let out = "Connecting to host 127.0.0.1, port 5399
[  5] local 127.0.0.1 port 37236 connected to 127.0.0.1 port 5399
[  7] local 127.0.0.1 port 37252 connected to 127.0.0.1 port 5399
[ ID] Interval           Transfer     Bitrate         Retr  Cwnd
[  5]   0.00-1.00   sec   966 MBytes  8 Kbits/sec    1   1023 KBytes
[  7]   0.00-1.00   sec   961 MBytes  16 Kbits/sec    2   1023 KBytes
[SUM]   0.00-1.00   sec  1.88 GBytes  24 Kbits/sec   3
- - - - - - - - - - - - - - - - - - - - - - - - -
[  5]   1.00-2.00   sec   911 MBytes  24 Kbits/sec    0   1023 KBytes
[  7]   1.00-2.00   sec   882 MBytes  32 Kbits/sec    0   1023 KBytes
[  5]   2.00-2.50   sec   911 MBytes  24 Kbits/sec    0   1023 KBytes
- - - - - - - - - - - - - - - - - - - - - - - - -
[ ID] Interval           Transfer     Bitrate         Retr
[  5]   0.00-2.00   sec  1.83 GBytes  7874507 Kbits/sec   10             sender
[  5]   0.00-2.00   sec  1.83 GBytes  7843296 Kbits/sec                  receiver
[  7]   0.00-2.00   sec  1.80 GBytes  7732954 Kbits/sec   12             sender
[  7]   0.00-2.00   sec  1.79 GBytes  7706991 Kbits/sec                  receiver
[SUM]   0.00-2.00   sec  3.63 GBytes  15607461 Kbits/sec   22             sender
";
        // the test's second 0 is second 10 of the run clock; the workload ends at 12
        let mut s = Seconds::new(2, 40, 10, 12, Op::Send);
        let samples: Vec<Sample> = out.lines().filter_map(|l| s.add(l)).collect();
        let got: Vec<(u32, u32, u64)> = samples.iter().map(|s| (s.worker, s.t, s.stats.bytes)).collect();
        // Kbit/s over the interval, in bytes
        assert_eq!(got, vec![(40, 10, 1000), (41, 10, 2000), (40, 11, 3000), (41, 11, 4000)]);
        assert!(samples.iter().all(|s| s.op == Op::Send && s.workload == 2));
        assert_eq!(s.retransmits.into_iter().collect::<Vec<_>>(), vec![(10, 3), (11, 0)]);
        assert_eq!(s.sender, Some((2.0, 15_607_461_000.0, Some(22))));
        assert_eq!(s.receiver, Some((2.0, 15_550_287_000.0)));
    }

    #[test]
    fn reverse_intervals_have_no_retransmits() {
        let line = "[  5]   0.00-1.00   sec  2.21 GBytes  19007519 Kbits/sec                  ";
        let parsed = Line::parse(line);
        assert_eq!(parsed, Some(Line::Interval { stream: 5, start: 0.0, bytes: 2_375_939_875, retransmits: None }));
    }

    #[test]
    fn server_addresses() {
        assert_eq!(split_host_port("10.0.0.2"), ("10.0.0.2".to_string(), 5201));
        assert_eq!(split_host_port("10.0.0.2:5300"), ("10.0.0.2".to_string(), 5300));
        assert_eq!(split_host_port("[::1]:5300"), ("::1".to_string(), 5300));
    }

    #[test]
    fn a_loopback_listener_is_seen_without_connecting_to_it() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        assert!(loopback_listening(port));
        drop(listener);
        assert!(!loopback_listening(port));
    }
}
