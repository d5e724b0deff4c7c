//! The timeline's hooks into the world outside the workloads: `exec` runs a local
//! command (a fault injection, a power cycle, a setting change), `hook` the command the
//! hooks file gives a name, either in the timeline or in the background ([`Background`]:
//! `async`, `every`), and `wait_until` polls until something is ready (a service back
//! after a failover), timing how long it took.

use super::context::Context;
use crate::children::Group;
use crate::error::{Error, Result};
use crate::http;
use crate::scenario::Scenario;
use crate::scenario::step_env;
use crate::scenario::steps::{self, Action, CommandStep, Probe, Repeat};
use crate::transport::Inventory;
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How much of a command's output is kept with the run.
const KEEP_OUTPUT: usize = 4096;

/// What a command did: its exit status (None if it was killed at the timeout or could
/// not start), the end of its output, and how long it took.
pub struct Ran {
    pub status: Option<i32>,
    pub output: String,
    pub took: Duration,
}

/// Runs `command` with `sh -c` and `env` added to its environment, stdout and stderr
/// together, killing it (and whatever it started: its process group) at `timeout` or
/// once `stop` says so.
pub fn exec(command: &str, env: &[(String, String)], timeout: Duration, stop: &dyn Fn() -> bool) -> Ran {
    let started = Instant::now();
    let out = tempfile();
    let child = out.as_ref().ok().and_then(|f| {
        let mut sh = Command::new("sh");
        sh.args(["-c", command]).stdin(Stdio::null()).stdout(f.try_clone().ok()?).stderr(f.try_clone().ok()?);
        sh.envs(env.iter().map(|(k, v)| (k, v)));
        Group::spawn(&mut sh, "exec").ok()
    });
    let Some(mut child) = child else {
        return Ran { status: None, output: "could not start `sh`".into(), took: started.elapsed() };
    };
    let status = match child.wait_stopping(None, Some(started + timeout), stop) {
        Ok((status, false)) => status.code(),
        _ => None,
    };
    let took = started.elapsed();
    let mut output = String::new();
    if let Ok(mut f) = out {
        use std::io::Seek;
        let _ = f.seek(std::io::SeekFrom::Start(0));
        let mut bytes = Vec::new();
        let _ = f.read_to_end(&mut bytes);
        let tail = &bytes[bytes.len().saturating_sub(KEEP_OUTPUT)..];
        output = String::from_utf8_lossy(tail).into_owned();
    }
    if status.is_none() && took >= timeout {
        output.push_str(&format!("\n(killed after the {} s timeout)", timeout.as_secs_f64()));
    }
    Ran { status, output, took }
}

/// An unnamed temporary file for a command's output (no pipe to fill and block on).
fn tempfile() -> std::io::Result<std::fs::File> {
    let dir = std::env::temp_dir();
    let path = dir.join(format!("fathom-exec-{}-{:?}", std::process::id(), std::thread::current().id()));
    // create_new: never through a symlink planted at this guessable name
    let file = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&path)?;
    let _ = std::fs::remove_file(&path);
    Ok(file)
}

/// A command step ready to run: what it runs, with what environment, and how the run
/// names it.
#[derive(Clone)]
pub struct Ready {
    /// `exec` or `hook`: its events' kind.
    pub kind: &'static str,
    /// Its events' label: an `exec`'s command, a hook's name and arguments.
    pub label: String,
    /// How progress lines and failures name it.
    pub shown: String,
    command: String,
    env: Vec<(String, String)>,
    timeout: Duration,
}

/// Readies command step `c` of the run in `cx` of `scenario`: a hook's command from the
/// hooks file, told its name, arguments, hosts and run in `FATHOM_*` variables. Hooks
/// and their hosts were checked before the run ([`check`]). Both are told how to reach
/// the PostgreSQL servers of the workloads ([`pg_env`]).
pub fn ready(c: &CommandStep, cx: &Context, scenario: &Scenario) -> Ready {
    match &c.command {
        steps::Command::Exec(command) => Ready {
            kind: "exec",
            label: command.clone(),
            shown: c.command.to_string(),
            command: command.clone(),
            env: pg_env(cx, scenario),
            timeout: c.timeout,
        },
        steps::Command::Hook { name, args, hosts } => {
            let mut env = vec![("FATHOM_HOOK".to_string(), name.clone()), ("FATHOM_RUN_ID".into(), cx.run.to_string())];
            env.extend(pg_env(cx, scenario));
            for (key, value) in args {
                env.push((format!("FATHOM_ARG_{}", step_env::env_name(key)), value.clone()));
            }
            let chosen = hook_hosts(hosts, cx.inventory).unwrap_or_default();
            let names: Vec<&str> = chosen.iter().map(|h| h.name.as_str()).collect();
            let addresses: Vec<&str> = chosen.iter().map(|h| h.spec.address.as_deref().unwrap_or(&h.name)).collect();
            env.push(("FATHOM_HOSTS".into(), names.join(" ")));
            env.push(("FATHOM_HOST_ADDRESSES".into(), addresses.join(" ")));
            let shown = crate::secrets::redact(&c.command.to_string()).into_owned();
            Ready {
                kind: "hook",
                label: shown.trim_start_matches("hook ").to_string(),
                shown,
                command: cx.hooks.command(name).unwrap_or_default().to_string(),
                env,
                timeout: c.timeout,
            }
        }
    }
}

/// How a command reaches each workload's PostgreSQL server (a throwaway cluster's
/// address is known only once it runs): `FATHOM_DSN_<WORKLOAD>` for each, and
/// `FATHOM_DSN` for the first, so that a step can act on the server (a `CHECKPOINT`,
/// a setting changed) while the workloads run.
fn pg_env(cx: &Context, scenario: &Scenario) -> Vec<(String, String)> {
    let mut env = Vec::new();
    for pg in cx.drivers.servers().into_iter().filter_map(crate::drivers::DbServer::postgres) {
        let Some(w) = scenario.workloads.get(pg.workload) else { continue };
        if env.is_empty() {
            env.push((step_env::DSN.to_string(), pg.dsn.clone()));
        }
        env.push((step_env::dsn_of(&w.name), pg.dsn));
    }
    env
}

/// The hosts a hook acts on: those `selector` names, all of the inventory's without one,
/// none without an inventory.
fn hook_hosts<'i>(
    selector: &Option<Vec<String>>,
    inventory: Option<&'i Inventory>,
) -> Result<Vec<&'i crate::transport::Host>> {
    match (selector, inventory) {
        (_, None) => Ok(Vec::new()),
        (None, Some(inv)) => Ok(inv.hosts.iter().collect()),
        (Some(s), Some(inv)) => inv.select(s),
    }
}

/// Refuses (bad input), before the run, a hook step whose `hosts:` names no host of the
/// inventory, or names hosts without one.
pub fn check_hosts(scenario: &Scenario, inventory: Option<&Inventory>) -> Result<()> {
    for (i, step) in scenario.steps.iter().enumerate() {
        if let Action::Command(c) = &step.action
            && let steps::Command::Hook { name, hosts: Some(selector), .. } = &c.command
        {
            let at = format!("{}: timeline.{i}.hosts (hook {name})", scenario.origin);
            match inventory {
                None => {
                    return Err(Error::input(format!("{at}: names hosts, but no inventory is given (--hosts FILE)")));
                }
                Some(inv) => {
                    inv.select(selector).map_err(|e| Error::input(format!("{at}: {e}")))?;
                }
            }
        }
    }
    Ok(())
}

impl Ready {
    /// Runs it once, now.
    pub fn run(&self, stop: &dyn Fn() -> bool) -> Ran {
        exec(&self.command, &self.env, self.timeout, stop)
    }
}

/// One run of a command step, for the timeline to record: when it began on the run
/// clock, what it did, and whether the run's end stopped it (no failure then).
pub struct Report {
    pub ready: Ready,
    pub at_ms: i64,
    pub ran: Ran,
    pub stopped: bool,
}

/// Command steps running in the background (`async: true`, `every:`), each on a thread
/// of its own, while the timeline goes on. Their runs come back as [`Report`]s for the
/// timeline to record on its own thread; [`Background::stop`] ends them at the run's end.
pub struct Background {
    halt: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    tx: Sender<Report>,
    rx: Receiver<Report>,
}

impl Background {
    pub fn new() -> Background {
        let (tx, rx) = channel();
        Background { halt: Arc::new(AtomicBool::new(false)), threads: Vec::new(), tx, rx }
    }

    /// Starts `ready`'s runs: `repeat.times` of them, `repeat.every` apart (from one
    /// start to the next), the first at once; `stop` (the run's) or the run's end ends
    /// them, killing one under way.
    pub fn start(&mut self, ready: Ready, repeat: Repeat, clock_start: Instant, stop: Arc<AtomicBool>) {
        let (halt, tx) = (self.halt.clone(), self.tx.clone());
        self.threads.push(std::thread::spawn(move || {
            let halted = || halt.load(Ordering::Relaxed) || stop.load(Ordering::Relaxed);
            let first = Instant::now();
            for n in 0..repeat.times {
                let due = first + repeat.every * n;
                while Instant::now() < due && !halted() {
                    std::thread::sleep(Duration::from_millis(20).min(due.saturating_duration_since(Instant::now())));
                }
                if halted() {
                    return;
                }
                let at_ms = clock_start.elapsed().as_millis() as i64;
                let ran = ready.run(&halted);
                let stopped = ran.status.is_none() && halted();
                if tx.send(Report { ready: ready.clone(), at_ms, ran, stopped }).is_err() {
                    return;
                }
            }
        }));
    }

    /// The runs that ended since the last call.
    pub fn ended(&self) -> Vec<Report> {
        self.rx.try_iter().collect()
    }

    /// Ends every background run (one under way is killed) and returns the runs not yet
    /// collected.
    pub fn stop(&mut self) -> Vec<Report> {
        self.halt.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        self.ended()
    }
}

/// Polls `probe` every `interval` until it succeeds (Ok: how long it took) or
/// `timeout` passes or `stop` is set (Err: the last failure, with the last answer seen
/// before it; a failure of the run).
pub fn wait_until(probe: &Probe, timeout: Duration, interval: Duration, stop: &AtomicBool) -> Result<Duration> {
    let started = Instant::now();
    let mut answered = None;
    loop {
        let attempt = Instant::now();
        let left = timeout.saturating_sub(started.elapsed()).max(Duration::from_millis(100));
        let failed = match try_probe(probe, left, interval, stop) {
            Attempt::Ready => return Ok(started.elapsed()),
            Attempt::Answered(e) => {
                answered = Some(e.to_string());
                e
            }
            Attempt::Unanswered(e) => e,
        };
        if started.elapsed() >= timeout || stop.load(Ordering::Relaxed) {
            return Err(gave_up(failed, answered));
        }
        let next = attempt + interval;
        while Instant::now() < next && !stop.load(Ordering::Relaxed) && started.elapsed() < timeout {
            std::thread::sleep(Duration::from_millis(20).min(next.saturating_duration_since(Instant::now())));
        }
    }
}

/// What one attempt of a probe saw.
enum Attempt {
    Ready,
    /// What was probed answered, but not ready: an HTTP status, a command's exit status.
    Answered(Error),
    /// No answer: a refused connection, or an attempt out of time.
    Unanswered(Error),
}

fn try_probe(probe: &Probe, left: Duration, interval: Duration, stop: &AtomicBool) -> Attempt {
    match probe {
        Probe::Command(c) => {
            let ran = exec(c, &[], left, &|| stop.load(Ordering::Relaxed));
            match ran.status {
                Some(0) => Attempt::Ready,
                Some(n) => Attempt::Answered(Error::failed(format!("exit status {n}: {}", ran.output.trim()))),
                None => Attempt::Unanswered(Error::failed(ran.output.trim())),
            }
        }
        Probe::Tcp(addr) => match http::connect(addr, left.min(interval.max(Duration::from_secs(1)))) {
            Ok(_) => Attempt::Ready,
            Err(e) => Attempt::Unanswered(e),
        },
        Probe::Http { url, auth } => {
            match http::Client::new(auth, left.min(Duration::from_secs(5))).and_then(|c| c.get(url)) {
                Ok((code, _)) if (200..300).contains(&code) => Attempt::Ready,
                Ok((code, _)) => Attempt::Answered(Error::failed(format!("{url}: HTTP {code}"))),
                Err(e) => Attempt::Unanswered(e),
            }
        }
    }
}

/// Why a probe never became ready. The last attempt, cut short by the deadline, may have
/// seen nothing, so the last answer seen before it (an HTTP 401 says what to fix) is said
/// with it.
fn gave_up(last: Error, answered: Option<String>) -> Error {
    match answered {
        Some(answer) if answer != last.to_string() => Error::failed(format!("{answer} (its last attempt: {last})")),
        _ => last,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_keeps_status_and_output_and_honours_its_timeout() {
        let ran = exec("echo out; echo err >&2; exit 3", &[], Duration::from_secs(5), &|| false);
        assert_eq!(ran.status, Some(3));
        assert!(ran.output.contains("out") && ran.output.contains("err"), "{}", ran.output);
        let env = [("FATHOM_HOOK".to_string(), "x.Y".to_string())];
        let ran = exec("echo \"hook=$FATHOM_HOOK\"", &env, Duration::from_secs(5), &|| false);
        assert_eq!(ran.output.trim(), "hook=x.Y");
        let ran = exec("sleep 5", &[], Duration::from_millis(200), &|| false);
        assert_eq!(ran.status, None);
        assert!(ran.took < Duration::from_secs(2) && ran.output.contains("timeout"));
    }

    #[test]
    fn wait_until_times_recovery_and_gives_up() {
        let stop = AtomicBool::new(false);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let took =
            wait_until(&Probe::Tcp(addr.clone()), Duration::from_secs(2), Duration::from_millis(50), &stop).unwrap();
        assert!(took < Duration::from_secs(1));
        drop(listener);
        let err = wait_until(&Probe::Tcp(addr), Duration::from_millis(300), Duration::from_millis(50), &stop)
            .unwrap_err()
            .to_string();
        assert!(err.contains("refused"), "{err}");
        // a file that appears after 300 ms
        let dir = std::env::temp_dir().join(format!("fathom-wait-{}", std::process::id()));
        let _ = std::fs::remove_file(&dir);
        let probe = Probe::Command(format!("test -e {}", dir.display()));
        let d = dir.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            std::fs::write(d, b"").unwrap();
        });
        let took = wait_until(&probe, Duration::from_secs(5), Duration::from_millis(50), &stop).unwrap();
        t.join().unwrap();
        let _ = std::fs::remove_file(&dir);
        assert!(took >= Duration::from_millis(250) && took < Duration::from_secs(2), "{took:?}");
    }

    /// A server that answers its first two connections 401 and then holds every later one
    /// without a word, as a busy server may at the deadline.
    fn answers_twice_then_hangs() -> String {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for (n, stream) in listener.incoming().enumerate() {
                let mut stream = stream.unwrap();
                if n < 2 {
                    let _ = stream.read(&mut [0; 4096]);
                    let _ = stream
                        .write_all(b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
                } else {
                    held.push(stream);
                }
            }
        });
        addr
    }

    #[test]
    fn a_probe_that_gives_up_says_its_last_answer_though_its_last_attempt_saw_none() {
        let stop = AtomicBool::new(false);
        let url = format!("http://{}/-/ready", answers_twice_then_hangs());
        let probe = Probe::Http { url: url.clone(), auth: crate::http::Auth::default() };
        let err = wait_until(&probe, Duration::from_secs(1), Duration::from_millis(50), &stop).unwrap_err().to_string();
        assert!(err.starts_with(&format!("{url}: HTTP 401 (its last attempt: ")), "{err}");
        // a command's exit status is its answer; one killed at the deadline said nothing
        let flag = std::env::temp_dir().join(format!("fathom-probe-{}", std::process::id()));
        let _ = std::fs::remove_file(&flag);
        let probe = Probe::Command(format!("test -e {0} && exec sleep 5; touch {0}; exit 3", flag.display()));
        let err =
            wait_until(&probe, Duration::from_millis(600), Duration::from_millis(50), &stop).unwrap_err().to_string();
        let _ = std::fs::remove_file(&flag);
        assert!(err.starts_with("exit status 3") && err.contains("its last attempt: "), "{err}");
    }
}
