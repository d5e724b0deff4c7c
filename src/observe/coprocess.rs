//! One long-lived client program an observer asks its questions through (psql, the
//! `mariadb` client), fed statements on its standard input, each batch followed by a
//! statement that prints a numbered sentinel line marking the end of its answer. One
//! connection for the whole run, as the Prometheus exporters keep one: a new connection
//! each second would be a session made each second, seen in the very figures observed.
//! A client program rather than a client library keeps fathom free of an async runtime
//! and of a second way to reach each database; a thread reads its answers so that a
//! server that stops answering never holds the observer.

use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStderr, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError, channel};
use std::time::Duration;

/// What [`Session::ask`] says when the answer did not come in time (it is dropped when
/// it comes, and that second has no values).
pub const LATE: &str = "late";

/// The line that ends each answer, followed by its number.
pub const SENTINEL: &str = "fathom-observe-end";

/// How long a second's questions may take before that second is left out.
const ANSWER_WITHIN: Duration = Duration::from_secs(2);

/// A client program answering on its standard output.
pub struct Session {
    /// Its name in messages (`psql`).
    what: &'static str,
    /// The statement that prints [`SENTINEL`] and the number it is given.
    sentinel: fn(u64) -> String,
    stdin: ChildStdin,
    answers: Receiver<(u64, Vec<String>)>,
    asked: u64,
    /// The answer to the last batch has not come yet.
    late: bool,
    stderr: Option<ChildStderr>,
    /// Killed when dropped.
    _group: crate::children::Group,
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
        Ok(Session { what, sentinel, stdin, answers, asked: 0, late: false, stderr, _group: group })
    }

    /// The lines `sql` printed, or why there are none: the program ended (its error), or
    /// [`LATE`]. While an answer is late nothing more is sent: a server that stops
    /// answering for minutes never fills the program's input, so the observer always
    /// stops.
    pub fn ask(&mut self, sql: &str) -> Result<Vec<String>, String> {
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
        writeln!(self.stdin, "{sql}\n{}", (self.sentinel)(n)).map_err(|_| self.ended())?;
        self.stdin.flush().map_err(|_| self.ended())?;
        match self.answers.recv_timeout(ANSWER_WITHIN) {
            Ok((_, lines)) => Ok(lines),
            Err(RecvTimeoutError::Timeout) => {
                self.late = true;
                Err(LATE.into())
            }
            Err(RecvTimeoutError::Disconnected) => Err(self.ended()),
        }
    }

    /// Why the program ended: the last line it said on stderr (it has ended, so reading
    /// to the end does not wait).
    fn ended(&mut self) -> String {
        let mut text = String::new();
        if let Some(mut e) = self.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut text);
        }
        let last = text.lines().map(str::trim).rfind(|l| !l.is_empty()).unwrap_or("").to_string();
        if last.is_empty() { format!("{} ended", self.what) } else { format!("{}: {last}", self.what) }
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
}
