//! One long-lived client program fathom asks its questions through (psql, the `mariadb`
//! client), fed statements on its standard input, each batch followed by a statement
//! that prints a numbered sentinel line marking the end of its answer. One connection
//! for as long as it is needed (an observer's run, a load, a sampler), as the Prometheus
//! exporters keep one: a new connection each second would be a session made each second,
//! seen in the very figures observed, and a program started per statement is most of a
//! short statement's time. A client program rather than a client library keeps fathom
//! free of an async runtime and of a second way to reach each database; a thread reads
//! its answers so that a server that stops answering never holds fathom.

use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStderr, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError, channel};
use std::time::{Duration, Instant};

/// What [`Session::ask`] says when the answer did not come in time (it is dropped when
/// it comes, and that second has no values).
pub const LATE: &str = "late";

/// The line that ends each answer, followed by its number.
pub const SENTINEL: &str = "fathom-answer-end";

/// What [`Session::run`] says when it was stopped (the session is then given up).
pub const STOPPED: &str = "stopped";

/// How long a second's questions may take before that second is left out.
const ANSWER_WITHIN: Duration = Duration::from_secs(2);

/// How long a session at rest may take to end once its input is closed.
const CLOSE_WITHIN: Duration = Duration::from_millis(500);

/// How often a wait for an answer looks at its `stop`.
const POLL: Duration = Duration::from_millis(50);

/// A client program answering on its standard output.
pub struct Session {
    /// Its name in messages (`psql`).
    what: &'static str,
    /// The statement that prints [`SENTINEL`] and the number it is given.
    sentinel: fn(u64) -> String,
    /// None once the session is being closed.
    stdin: Option<ChildStdin>,
    answers: Receiver<(u64, Vec<String>)>,
    asked: u64,
    /// The answer to the last batch has not come yet.
    late: bool,
    stderr: Option<ChildStderr>,
    /// Its input closed, then killed if need be, when dropped.
    group: crate::children::Group,
}

impl Session {
    /// Starts `cmd` (`what` names it) with its standard streams piped to this session.
    pub fn start(cmd: &mut Command, what: &'static str, sentinel: fn(u64) -> String) -> Result<Session, String> {
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut group = crate::children::Group::spawn(cmd, what).map_err(|e| format!("starting {what}: {e}"))?;
        let (stdin, stdout, stderr) = (group.stdin(), group.stdout(), group.stderr());
        let (Some(stdin), Some(stdout)) = (stdin, stdout) else { return Err(format!("{what} has no pipes")) };
        let (tx, answers) = channel();
        std::thread::Builder::new()
            .name(format!("observe-{what}"))
            .spawn(move || {
                let mut lines = Vec::new();
                for line in BufReader::new(stdout).lines().map_while(|l| l.ok()) {
                    match line.strip_prefix(SENTINEL).map(|n| n.trim().parse::<u64>()) {
                        Some(Ok(n)) if tx.send((n, std::mem::take(&mut lines))).is_err() => return,
                        Some(Ok(_)) => {}
                        _ => lines.push(line),
                    }
                }
            })
            .map_err(|e| format!("starting a thread: {e}"))?;
        Ok(Session { what, sentinel, stdin: Some(stdin), answers, asked: 0, late: false, stderr, group })
    }

    /// The lines `sql` printed within a second's questions' time, or why there are none:
    /// the program ended (its error), or [`LATE`]. While an answer is late nothing more
    /// is sent: a server that stops answering for minutes never fills the program's
    /// input, so the observer always stops.
    pub fn ask(&mut self, sql: &str) -> Result<Vec<String>, String> {
        self.run(sql, Some(Instant::now() + ANSWER_WITHIN), &AtomicBool::new(false))
    }

    /// The lines `sql` printed, waiting until they come, the program ends (its error),
    /// `deadline` passes ([`LATE`]) or `stop` is set ([`STOPPED`]).
    pub fn run(&mut self, sql: &str, deadline: Option<Instant>, stop: &AtomicBool) -> Result<Vec<String>, String> {
        if self.late {
            loop {
                match self.answers.try_recv() {
                    Ok((m, _)) if m == self.asked => break,
                    Ok(_) => {}
                    Err(TryRecvError::Empty) => return Err(LATE.into()),
                    Err(TryRecvError::Disconnected) => return Err(self.ended()),
                }
            }
            self.late = false;
        }
        self.asked += 1;
        let n = self.asked;
        let Some(stdin) = self.stdin.as_mut() else { return Err(self.ended()) };
        let sent = writeln!(stdin, "{sql}\n{}", (self.sentinel)(n)).and_then(|()| stdin.flush());
        if sent.is_err() {
            return Err(self.ended());
        }
        loop {
            let wait = deadline.map_or(POLL, |d| d.saturating_duration_since(Instant::now()).min(POLL));
            match self.answers.recv_timeout(wait) {
                Ok((m, lines)) if m == n => return Ok(lines),
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) if stop.load(Ordering::Relaxed) => {
                    self.late = true;
                    return Err(STOPPED.into());
                }
                Err(RecvTimeoutError::Timeout) if deadline.is_some_and(|d| Instant::now() >= d) => {
                    self.late = true;
                    return Err(LATE.into());
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Err(self.ended()),
            }
        }
    }

    /// Why the program ended: the last lines it said on stderr, joined (an error and its
    /// detail); it has ended, so reading to the end does not wait.
    fn ended(&mut self) -> String {
        let mut text = String::new();
        if let Some(mut e) = self.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut text);
        }
        let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        let last = lines[lines.len().saturating_sub(5)..].join(" / ");
        if last.is_empty() { format!("{} ended", self.what) } else { last }
    }
}

impl Drop for Session {
    /// A session at rest ends as its program does at the end of a script, its input
    /// closed, so the server sees a session ended rather than a broken connection; one
    /// still waiting on its server is killed.
    fn drop(&mut self) {
        self.stdin = None;
        if !self.late {
            let _ = self.group.wait_stopping(None, Some(Instant::now() + CLOSE_WITHIN), &|| false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in for psql that answers `SELECT` with a row, sleeps 4 s on `SLOW` and
    /// echoes what `\echo` asks, as psql does.
    const FAKE: &str = "#!/bin/sh\nwhile read -r line; do case \"$line\" in\n\
        '\\echo '*) echo \"${line#??????}\";;\n SLOW*) sleep 4;;\n SELECT*) echo row;;\n esac; done\n";

    #[test]
    fn one_batch_is_outstanding_at_most_and_a_late_answer_is_dropped() {
        use std::os::unix::fs::PermissionsExt;
        let fake = std::env::temp_dir().join(format!("fathom-fake-psql-{}", std::process::id()));
        std::fs::write(&fake, FAKE).unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut p = Session::start(&mut Command::new(&fake), "psql", |n| format!("\\echo {SENTINEL} {n}")).unwrap();
        assert_eq!(p.ask("SELECT 1;"), Ok(vec!["row".to_string()]));
        assert_eq!(p.ask("SLOW;"), Err(LATE.to_string()));
        // nothing is sent while the slow answer is out; once it is in, asking goes on
        assert_eq!(p.ask("SELECT 2;"), Err(LATE.to_string()));
        let mut tries = 0;
        let answer = loop {
            std::thread::sleep(Duration::from_millis(500));
            tries += 1;
            match p.ask("SELECT 3;") {
                Err(e) if e == LATE && tries < 60 => continue,
                other => break other,
            }
        };
        assert_eq!(answer, Ok(vec!["row".to_string()]));
        drop(p);
        let _ = std::fs::remove_file(&fake);
    }

    #[test]
    fn a_run_waits_past_a_second_until_stopped_and_an_ended_program_says_why() {
        use std::os::unix::fs::PermissionsExt;
        let fake = std::env::temp_dir().join(format!("fathom-fake-psql-run-{}", std::process::id()));
        let script = FAKE.replace(" SLOW*) sleep 4;;", " SLOW*) sleep 4;;\n FAIL*) echo 'ERROR: no' >&2; exit 3;;");
        std::fs::write(&fake, script).unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let start = || Session::start(&mut Command::new(&fake), "psql", |n| format!("\\echo {SENTINEL} {n}")).unwrap();
        let mut p = start();
        let never = AtomicBool::new(false);
        // no deadline: the slow answer (4 s) is waited for, where `ask` gives up at 2 s
        assert_eq!(p.run("SLOW;", None, &never), Ok(vec![]));
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(300));
                stop.store(true, Ordering::Relaxed);
            });
            assert_eq!(p.run("SLOW;", None, &stop), Err(STOPPED.to_string()));
        });
        let mut p = start();
        assert_eq!(p.run("FAIL;", None, &never), Err("ERROR: no".to_string()));
        let _ = std::fs::remove_file(&fake);
    }
}
