//! One query stream: a psql session of its own (one connection, as a HammerDB virtual
//! user has) that runs its queries one by one, their results discarded, each timed from
//! when it was sent to when psql said it was done. A query past `query_timeout` is
//! cancelled by the server (`statement_timeout`); when the workload stops, psql is
//! interrupted, which cancels the query running, and ends.

use crate::children::Group;
use crate::drivers::postgres;
use crate::error::{Error, Result};
use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What psql prints after each query, and whether it failed.
const DONE: &str = "@fathom-done";
const FAILED: &str = "@fathom-failed";

/// How a query ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// It completed, in this many seconds.
    Done(f64),
    /// `statement_timeout` cancelled it after this many seconds.
    TimedOut(f64),
    /// PostgreSQL refused it, with its message.
    Failed(String),
    /// The workload stopped while it ran.
    Stopped,
}

/// A psql session running one stream's queries.
pub struct Session {
    group: Group,
    stdin: ChildStdin,
    lines: Receiver<String>,
    /// What psql said on stderr since the last query began.
    said: Arc<Mutex<String>>,
    /// Each query's `statement_timeout`.
    timeout: Option<Duration>,
}

impl Session {
    /// Connects to `dsn`, queries' results discarded, each limited to `timeout`.
    pub fn open(dsn: &str, timeout: Option<Duration>) -> Result<Session> {
        let mut cmd = Command::new(postgres::client("psql")?);
        cmd.args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=0", "-d", dsn]);
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut group = Group::spawn(&mut cmd, "psql").map_err(|e| Error::failed(format!("starting psql: {e}")))?;
        let (Some(stdin), Some(stdout), Some(stderr)) = (group.stdin(), group.stdout(), group.stderr()) else {
            return Err(Error::failed("psql's input and output were not pipes"));
        };
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(std::io::Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let said = Arc::new(Mutex::new(String::new()));
        let heard = said.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(std::io::Result::ok) {
                let mut said = heard.lock().unwrap_or_else(|e| e.into_inner());
                said.push_str(line.trim());
                said.push(' ');
            }
        });
        let mut session = Session { group, stdin, lines, said, timeout };
        let ms = timeout.map_or(0, |t| t.as_millis().max(1));
        session.send(&format!("SET statement_timeout = {ms};\n\\o /dev/null\n"))?;
        Ok(session)
    }

    fn send(&mut self, text: &str) -> Result<()> {
        self.stdin.write_all(text.as_bytes()).and_then(|()| self.stdin.flush()).map_err(|e| {
            let said = self.said.lock().unwrap_or_else(|e| e.into_inner()).clone();
            Error::failed(format!("psql ended: {}", if said.is_empty() { e.to_string() } else { said }))
        })
    }

    /// Runs `sql` (one statement ending with `;`) and waits until it is done or `stop`
    /// says to stop, which interrupts it.
    pub fn run(&mut self, sql: &str, stop: &dyn Fn() -> bool) -> Result<Outcome> {
        self.said.lock().unwrap_or_else(|e| e.into_inner()).clear();
        let began = Instant::now();
        self.send(&format!("{sql}\n\\if :ERROR\n\\echo {FAILED}\n\\else\n\\echo {DONE}\n\\endif\n"))?;
        loop {
            if stop() {
                // psql asks the server to cancel the query on SIGINT
                self.group.signal(libc::SIGINT);
                return Ok(Outcome::Stopped);
            }
            let line = match self.lines.recv_timeout(Duration::from_millis(20)) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => {
                    let said = self.said.lock().unwrap_or_else(|e| e.into_inner()).clone();
                    return Err(Error::failed(format!("psql ended: {said}")));
                }
            };
            let seconds = began.elapsed().as_secs_f64();
            match line.trim() {
                DONE => return Ok(Outcome::Done(seconds)),
                FAILED => return Ok(failed(self.error(), seconds, self.timeout)),
                _ => {}
            }
        }
    }

    /// What psql said of the query that failed: its stderr, which another thread reads
    /// and may still be reading when the line after it arrives (a second at most).
    fn error(&self) -> String {
        let until = Instant::now() + Duration::from_secs(1);
        loop {
            let said = self.said.lock().unwrap_or_else(|e| e.into_inner()).trim().to_string();
            if !said.is_empty() || Instant::now() >= until {
                return said;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Ends the session: psql quits, or is killed a moment later.
    pub fn close(mut self) {
        let _ = self.send("\\q\n");
        let deadline = Some(Instant::now() + Duration::from_secs(2));
        let _ = self.group.wait_stopping(None, deadline, &|| false);
    }
}

/// How a query that failed ended. A query cut by its `statement_timeout` is said so by
/// the server, or, when a parallel worker's cancel reaches the leader first, as a cancel
/// "due to user request" that fathom never sent (it stops a query only when the
/// workload stops): a cancel once the timeout has passed is the timeout's.
fn failed(said: String, seconds: f64, timeout: Option<Duration>) -> Outcome {
    let cancelled = said.contains("canceling statement");
    let timed_out =
        said.contains("statement timeout") || (cancelled && timeout.is_some_and(|t| seconds >= t.as_secs_f64()));
    match timed_out {
        true => Outcome::TimedOut(seconds),
        false => Outcome::Failed(said),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancel_past_the_timeout_is_the_timeout_and_any_other_failure_is_said() {
        let ms = Some(Duration::from_millis(1));
        let user = "ERROR:  canceling statement due to user request".to_string();
        assert_eq!(failed(user.clone(), 0.004, ms), Outcome::TimedOut(0.004));
        let timeout = "ERROR:  canceling statement due to statement timeout".to_string();
        assert_eq!(failed(timeout, 0.004, ms), Outcome::TimedOut(0.004));
        // before its timeout, or without one, a cancel is no timeout
        assert_eq!(failed(user.clone(), 0.5, Some(Duration::from_secs(1))), Outcome::Failed(user.clone()));
        assert_eq!(failed(user.clone(), 0.5, None), Outcome::Failed(user));
        let syntax = "ERROR:  syntax error at or near \"x\"".to_string();
        assert_eq!(failed(syntax.clone(), 2.0, ms), Outcome::Failed(syntax));
    }
}
