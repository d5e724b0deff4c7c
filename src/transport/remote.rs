//! The controller's side of an agent: the transport's process, the line protocol, the
//! clock offset, and what happens when the host goes away. Samples go straight to the
//! collector as they arrive; other replies wait in a mailbox for whoever asked.

use super::Host;
use super::protocol::{AHEAD_S, BoundedLines};
use super::protocol::{Command, Reply, VERSION};
use crate::error::{Error, Result};
use crate::metrics::Sample;
use std::io::{BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long an agent has to say hello (an ssh login included).
const HELLO_TIMEOUT: Duration = Duration::from_secs(20);

/// Replies other than samples, until taken; and whether the agent is gone.
#[derive(Default)]
struct Mailbox {
    replies: Vec<Reply>,
    closed: bool,
}

/// Lags from a sample's second closing (on the run clock) to its arrival here, in ms.
pub type Lags = Arc<Mutex<Vec<f64>>>;

/// A connected agent.
pub struct Remote {
    pub host: Host,
    child: Mutex<Child>,
    stdin: Mutex<Option<ChildStdin>>,
    mailbox: Arc<(Mutex<Mailbox>, Condvar)>,
    stderr: Arc<Mutex<String>>,
    /// Set once this side said bye: the end of the agent's output is then expected.
    leaving: Arc<AtomicBool>,
    /// When the agent's output ended without a bye (the host was lost).
    pub lost_at: Arc<Mutex<Option<Instant>>>,
    /// The agent's clock minus ours, and the round trip it was measured with, in ms.
    pub offset_ms: f64,
    pub rtt_ms: f64,
    pub cores: usize,
    /// The machine it runs on ([`crate::observe::environment::machine`]), if it said.
    pub machine: Option<String>,
    /// Its CPUs' shape, as its hello said ([`crate::observe::environment::cpu_topology`]).
    pub cpu_topology: serde_json::Value,
    /// Ids of clock requests, so a late answer is never taken for a later request's.
    next_clock: std::sync::atomic::AtomicU64,
}

impl Remote {
    /// Starts the transport, reads the agent's hello and measures its clock. Errors
    /// name the host and carry the transport's own words (ssh's message); they are bad
    /// input (exit 2): a host that cannot be reached stops a run before it starts.
    pub fn connect(
        host: &Host,
        program: &str,
        samples: Sender<Sample>,
        clock_unix_ms: Arc<Mutex<i64>>,
        lags: Lags,
    ) -> Result<Remote> {
        let who = format!("host {} ({})", host.name, host.transport_name());
        let (mut child, stderr) = spawn_transport(host, program, &who)?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let (first, lines) = await_hello(&mut child, stdout, &stderr, program, &who)?;
        let Said { cores, machine, cpu_topology } = check_hello(&mut child, &first, program, &who)?;
        let stdin = child.stdin.take();
        let (mailbox, leaving, lost_at) = read_replies(&host.name, &who, lines, samples, clock_unix_ms, lags)?;
        let mut remote = Remote {
            host: host.clone(),
            child: Mutex::new(child),
            stdin: Mutex::new(stdin),
            mailbox,
            stderr,
            leaving,
            lost_at,
            offset_ms: 0.0,
            rtt_ms: 0.0,
            cores,
            machine,
            cpu_topology,
            next_clock: Default::default(),
        };
        let (offset, rtt) = remote.measure_clock().map_err(Error::into_input)?;
        remote.offset_ms = offset;
        remote.rtt_ms = rtt;
        Ok(remote)
    }

    /// Sends `command`; a host that left or was lost is a failure (exit 1), which a
    /// caller still setting up the run makes bad input ([`Error::into_input`]).
    pub fn send(&self, command: &Command) -> Result<()> {
        let line = serde_json::to_string(command).expect("commands serialize");
        let mut stdin = self.stdin.lock().unwrap_or_else(|e| e.into_inner());
        let Some(pipe) = stdin.as_mut() else {
            return Err(Error::failed(format!("host {}: already left", self.host.name)));
        };
        writeln!(pipe, "{line}")
            .and_then(|_| pipe.flush())
            .map_err(|e| Error::failed(format!("host {}: lost ({e}){}", self.host.name, self.said())))
    }

    /// The transport's last words on stderr, if any, as ` (ssh: ...)`.
    fn said(&self) -> String {
        let text = self.stderr.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let last = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or_default().trim().to_string();
        if last.is_empty() { String::new() } else { format!(": {last}") }
    }

    /// Waits up to `timeout` for a reply `pick` takes (and removes it); None when the
    /// time is up or the agent is gone.
    pub fn take<T>(&self, timeout: Duration, mut pick: impl FnMut(&Reply) -> Option<T>) -> Option<T> {
        let deadline = Instant::now() + timeout;
        let (m, cv) = &*self.mailbox;
        let mut mb = m.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(i) = mb.replies.iter().position(|r| pick(r).is_some()) {
                let reply = mb.replies.remove(i);
                return pick(&reply);
            }
            let now = Instant::now();
            if mb.closed || now >= deadline {
                return None;
            }
            mb = cv.wait_timeout(mb, deadline - now).unwrap_or_else(|e| e.into_inner()).0;
        }
    }

    /// Whether the agent's output has ended (lost, or left after bye).
    pub fn gone(&self) -> bool {
        self.mailbox.0.lock().unwrap_or_else(|e| e.into_inner()).closed
    }

    /// The agent's clock offset from ours and the round trip, in ms: the exchange with
    /// the shortest round trip of five, its midpoint taken as when the agent read its
    /// clock (NTP's assumption of a symmetric path).
    pub fn measure_clock(&self) -> Result<(f64, f64)> {
        let mut best: Option<(f64, f64)> = None;
        for _ in 0..5 {
            let id = self.next_clock.fetch_add(1, Ordering::Relaxed);
            let sent = crate::clock::unix_ns();
            self.send(&Command::Clock { id })?;
            let theirs = self
                .take(Duration::from_secs(10), |r| match r {
                    Reply::Clock { id: got, unix_ns } if *got == id => Some(*unix_ns),
                    _ => None,
                })
                .ok_or_else(|| {
                    Error::failed(format!("host {}: no answer to a clock request{}", self.host.name, self.said()))
                })?;
            let back = crate::clock::unix_ns();
            let rtt = (back - sent) as f64 / 1e6;
            let offset = (theirs as f64 - (sent as f64 + back as f64) / 2.0) / 1e6;
            if best.is_none_or(|(_, r)| rtt < r) {
                best = Some((offset, rtt));
            }
        }
        Ok(best.expect("five exchanges"))
    }

    /// Says bye and waits up to 5 s for the agent to exit, then kills the transport.
    pub fn leave(&self) {
        self.leaving.store(true, Ordering::Relaxed);
        let _ = self.send(&Command::Bye);
        self.stdin.lock().unwrap_or_else(|e| e.into_inner()).take();
        let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        let until = Instant::now() + Duration::from_secs(5);
        while Instant::now() < until {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for Remote {
    fn drop(&mut self) {
        if !self.leaving.load(Ordering::Relaxed) {
            self.leave();
        }
    }
}
/// What the reader thread shares with its `Remote`: the mailbox, the flag saying this
/// side left, and when the host was lost.
type Shared = (Arc<(Mutex<Mailbox>, Condvar)>, Arc<AtomicBool>, Arc<Mutex<Option<Instant>>>);

/// Starts the transport's process, with a thread keeping what it says on stderr.
/// It is in a process group of its own, so Ctrl-C reaches only the controller, which
/// tells the agent to stop: the agent is not killed before its last samples are sent.
fn spawn_transport(host: &Host, program: &str, who: &str) -> Result<(Child, Arc<Mutex<String>>)> {
    let mut child = host
        .command(program)
        .map_err(|e| Error::input(format!("{who}: {e}")))?
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Error::input(format!("{who}: cannot start its transport: {e}")))?;
    let stderr = Arc::new(Mutex::new(String::new()));
    if let Some(mut err) = child.stderr.take() {
        let stderr = stderr.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                stderr.lock().unwrap_or_else(|e| e.into_inner()).push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
    }
    Ok((child, stderr))
}

/// The transport's last three lines on stderr, joined.
fn last_words(stderr: &Arc<Mutex<String>>) -> String {
    let text = stderr.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    lines[lines.len().saturating_sub(3)..].join(" / ")
}

/// The agent's first line, and the rest of its output to read on.
/// The hello is read on a thread, so that a transport that hangs cannot hang the run;
/// a transport that ends or says nothing in time is killed, and its words reported.
fn await_hello(
    child: &mut Child,
    stdout: ChildStdout,
    stderr: &Arc<Mutex<String>>,
    program: &str,
    who: &str,
) -> Result<(String, BoundedLines<BufReader<ChildStdout>>)> {
    let mut lines = BoundedLines::new(BufReader::new(stdout));
    let (hello_tx, hello_rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let first = lines.next();
        let _ = hello_tx.send(first);
        lines
    });
    let first = match hello_rx.recv_timeout(HELLO_TIMEOUT) {
        Ok(Some(Ok(line))) => line,
        Ok(_) => {
            let status = child.wait().ok().and_then(|s| s.code());
            std::thread::sleep(Duration::from_millis(50)); // the rest of its stderr
            let msg = last_words(stderr);
            let hint = if status == Some(127) || msg.contains("not found") {
                format!(": `{program}` is not on that host (install it, or use --push-agent)")
            } else {
                String::new()
            };
            let _ = child.kill();
            return Err(Error::input(format!(
                "{who}: {}{hint}",
                if msg.is_empty() { format!("the transport exited ({status:?}) without a word") } else { msg }
            )));
        }
        Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Error::input(format!("{who}: no hello from the agent within {} s", HELLO_TIMEOUT.as_secs())));
        }
    };
    let lines = reader.join().map_err(|_| Error::input(format!("{who}: reader panicked")))?;
    Ok((first, lines))
}

/// What an agent's hello says of its host.
struct Said {
    cores: usize,
    machine: Option<String>,
    cpu_topology: serde_json::Value,
}

/// What an agent's hello says of its host.
/// Anything but a hello from an agent of this very build kills the transport.
fn check_hello(child: &mut Child, first: &str, program: &str, who: &str) -> Result<Said> {
    let hello: Reply = serde_json::from_str(first).map_err(|_| {
        let _ = child.kill();
        Error::input(format!(
            "{who}: `{program} agent` answered `{}`, not a fathom agent's hello",
            first.chars().take(120).collect::<String>()
        ))
    })?;
    let Reply::Hello { protocol, version, cores, machine, cpu_topology, .. } = hello else {
        let _ = child.kill();
        return Err(Error::input(format!("{who}: the agent did not begin with hello")));
    };
    if let Err(e) = same_build(who, protocol, &version, env!("BUILD_IDENTITY")) {
        let _ = child.kill();
        return Err(e);
    }
    Ok(Said { cores, machine, cpu_topology })
}

/// Reads the agent's output on a thread of its own until it ends.
/// Samples go straight to the collector, with their lag; other replies wait in the
/// mailbox. An end without a bye marks the host lost.
fn read_replies(
    name: &str,
    who: &str,
    lines: BoundedLines<BufReader<ChildStdout>>,
    samples: Sender<Sample>,
    clock_unix_ms: Arc<Mutex<i64>>,
    lags: Lags,
) -> Result<Shared> {
    let mailbox: Arc<(Mutex<Mailbox>, Condvar)> = Arc::default();
    let leaving = Arc::new(AtomicBool::new(false));
    let lost_at = Arc::new(Mutex::new(None));
    {
        let (mailbox, leaving, lost_at) = (mailbox.clone(), leaving.clone(), lost_at.clone());
        let host = who.to_string();
        std::thread::Builder::new()
            .name(format!("agent-{name}"))
            .spawn(move || {
                for line in lines {
                    let line = match line {
                        Ok(line) => line,
                        Err(why) => {
                            dropped(&host, &why);
                            break;
                        }
                    };
                    match serde_json::from_str::<Reply>(&line) {
                        Ok(Reply::Sample(w)) => {
                            let zero = *clock_unix_ms.lock().unwrap_or_else(|e| e.into_inner());
                            match w.to_sample().map_err(|e| e.to_string()).and_then(|s| in_time(s, zero)) {
                                Ok(s) => {
                                    let closed = zero + (s.t as i64 + 1) * 1000;
                                    lags.lock()
                                        .unwrap_or_else(|e| e.into_inner())
                                        .push((crate::clock::unix_ms() - closed) as f64);
                                    let _ = samples.send(s);
                                }
                                Err(why) => {
                                    dropped(&host, &why);
                                    break;
                                }
                            }
                        }
                        Ok(Reply::Alive) => {} // the stream is open: nothing to keep
                        Ok(reply) => {
                            let (m, cv) = &*mailbox;
                            m.lock().unwrap_or_else(|e| e.into_inner()).replies.push(reply);
                            cv.notify_all();
                        }
                        Err(_) => {} // not ours: ignore rather than stop the run
                    }
                }
                if !leaving.load(Ordering::Relaxed) {
                    *lost_at.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
                }
                let (m, cv) = &*mailbox;
                m.lock().unwrap_or_else(|e| e.into_inner()).closed = true;
                cv.notify_all();
            })
            .map_err(|e| Error::input(format!("{who}: {e}")))?;
    }
    Ok((mailbox, leaving, lost_at))
}

/// Says that host `who` broke the protocol's bounds (`why`) and is dropped: what it sent
/// before is kept, the run goes on without it, and it ends up among the lost hosts.
fn dropped(who: &str, why: &str) {
    crate::terminal::say(&format!("{who}: {why}; the host is dropped"));
}

/// Sample `s` when its second can have closed on the run clock that began at
/// `zero_unix_ms` (unix ms; 0 before it is known): an agent's seconds are the run's, so a
/// second far beyond the controller's clock is no real one, and each would be held
/// in memory until then.
fn in_time(s: Sample, zero_unix_ms: i64) -> std::result::Result<Sample, String> {
    let now_s = (crate::clock::unix_ms() - zero_unix_ms).max(0) / 1000;
    if zero_unix_ms > 0 && i64::from(s.t) > now_s + i64::from(AHEAD_S) {
        return Err(format!("a sample of second {} at second {now_s} of the run, more than {AHEAD_S} s ahead", s.t));
    }
    Ok(s)
}

/// Refuses an agent of another protocol or another build (`theirs`, from its hello;
/// `ours`, this fathom's identity): one built from another commit or with other
/// changes may measure differently, so it is never used without a word. The message
/// names both builds; `--push-agent` mends it by copying this one there.
fn same_build(who: &str, protocol: u32, theirs: &str, ours: &str) -> Result<()> {
    if protocol == VERSION && theirs == ours {
        return Ok(());
    }
    Err(Error::input(format!(
        "{who}: its fathom is {theirs}, agent protocol {protocol}; this one is {ours}, protocol {VERSION}: \
         run the same build on every host, or use --push-agent to copy this one there"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_of_another_build_is_refused_naming_both() {
        let ours = "0.1.0 (7ab8b6a, modified 0c1d2e3f)";
        assert!(same_build("host a (ssh)", VERSION, ours, ours).is_ok());
        // an older commit, the same tree with other changes, a build of before identities
        for theirs in ["0.1.0 (0000000)", "0.1.0 (7ab8b6a, modified 99999999)", "0.1.0"] {
            let e = same_build("host a (ssh)", VERSION, theirs, ours).unwrap_err();
            let said = e.to_string();
            assert!(said.starts_with(&format!("host a (ssh): its fathom is {theirs}, ")), "{said}");
            assert!(said.contains(&format!("this one is {ours}")) && said.contains("--push-agent"), "{said}");
            assert_eq!(e.exit_code(), 2, "{said}");
        }
        assert!(same_build("host a (ssh)", VERSION + 1, ours, ours).is_err());
    }
}
