//! The timeline's hooks into the world outside the workloads: `exec` runs a local
//! command (a fault injection, a power cycle, a setting change) and `wait_until` polls
//! until something is ready (a service back after a failover), timing how long it took.

use crate::children::Group;
use crate::error::{Error, Result};
use crate::http;
use crate::scenario::steps::Probe;
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
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

/// Runs `command` with `sh -c`, stdout and stderr together, killing it (and whatever
/// it started: its process group) at `timeout` or when `stop` is set.
pub fn exec(command: &str, timeout: Duration, stop: &AtomicBool) -> Ran {
    let started = Instant::now();
    let out = tempfile();
    let child = out.as_ref().ok().and_then(|f| {
        let mut sh = Command::new("sh");
        sh.args(["-c", command]).stdin(Stdio::null()).stdout(f.try_clone().ok()?).stderr(f.try_clone().ok()?);
        Group::spawn(&mut sh, "exec").ok()
    });
    let Some(mut child) = child else {
        return Ran { status: None, output: "could not start `sh`".into(), took: started.elapsed() };
    };
    let status = match child.wait_stopping(None, Some(started + timeout), &|| stop.load(Ordering::Relaxed)) {
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

/// Polls `probe` every `interval` until it succeeds (Ok: how long it took) or
/// `timeout` passes or `stop` is set (Err: the last failure, a failure of the run).
pub fn wait_until(probe: &Probe, timeout: Duration, interval: Duration, stop: &AtomicBool) -> Result<Duration> {
    let started = Instant::now();
    loop {
        let attempt = Instant::now();
        let left = timeout.saturating_sub(started.elapsed()).max(Duration::from_millis(100));
        let result = match probe {
            Probe::Command(c) => {
                let ran = exec(c, left, stop);
                match ran.status {
                    Some(0) => Ok(()),
                    Some(n) => Err(Error::failed(format!("exit status {n}: {}", ran.output.trim()))),
                    None => Err(Error::failed(ran.output.trim())),
                }
            }
            Probe::Tcp(addr) => http::connect(addr, left.min(interval.max(Duration::from_secs(1)))).map(|_| ()),
            Probe::Http(url) => match http::get(url, left.min(Duration::from_secs(5))) {
                Ok((code, _)) if (200..300).contains(&code) => Ok(()),
                Ok((code, _)) => Err(Error::failed(format!("{url}: HTTP {code}"))),
                Err(e) => Err(e),
            },
        };
        match result {
            Ok(()) => return Ok(started.elapsed()),
            Err(e) if started.elapsed() >= timeout || stop.load(Ordering::Relaxed) => return Err(e),
            Err(_) => {}
        }
        let next = attempt + interval;
        while Instant::now() < next && !stop.load(Ordering::Relaxed) && started.elapsed() < timeout {
            std::thread::sleep(Duration::from_millis(20).min(next.saturating_duration_since(Instant::now())));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_keeps_status_and_output_and_honours_its_timeout() {
        let stop = AtomicBool::new(false);
        let ran = exec("echo out; echo err >&2; exit 3", Duration::from_secs(5), &stop);
        assert_eq!(ran.status, Some(3));
        assert!(ran.output.contains("out") && ran.output.contains("err"), "{}", ran.output);
        let ran = exec("sleep 5", Duration::from_millis(200), &stop);
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
}
