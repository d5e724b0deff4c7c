//! fathom's own statements to a database server of any DBMS (a load, its checks, what a
//! sampler counts each second) through one long-lived client program per purpose
//! ([`Client`], over `coprocess::Session`): a load's statements share one session per
//! parallel stream, a sampler keeps one for its run. Each DBMS's module starts its own
//! client program (`postgres::session`, `mariadb::session`); what a client answers,
//! and how its failures read, is said here once for all of them.

use crate::coprocess::{LATE, STOPPED, Session};
use crate::error::{Error, Result};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// What a database step says when `stop` was set while it waited.
pub const INTERRUPTED: &str = "interrupted";

/// How long a question fathom asks a server for itself ([`Client::ask`]) may take.
pub const ANSWER_WITHIN: Duration = Duration::from_secs(30);

/// How long a question goes unanswered before fathom says what it waits for.
const SAY_WAITING: Duration = Duration::from_secs(2);

/// One session with a server, kept while its purpose lasts; dropped, it ends.
pub struct Client {
    session: Session,
    /// The server in messages (a dsn without its secrets, a socket).
    server: String,
    /// How long the program may take to open its session (said when it did not).
    connect_within_s: u64,
}

impl Client {
    /// Starts `cmd` (`what` names it: psql, mariadb), whose `sentinel` statement prints
    /// its argument, on the server `server` names; its session opens within
    /// `connect_within_s`.
    pub fn start(
        cmd: &mut Command,
        what: &'static str,
        sentinel: fn(u64) -> String,
        server: String,
        connect_within_s: u64,
    ) -> Result<Client> {
        let session = Session::start(cmd, what, sentinel).map_err(Error::failed)?;
        Ok(Client { session, server, connect_within_s })
    }

    /// Runs `sql` with no deadline, as a load's statements take as long as their data;
    /// its output (trimmed), or the server's own error. Ends with [`INTERRUPTED`] when
    /// `stop` is set.
    pub fn run(&mut self, sql: &str, stop: &AtomicBool) -> Result<String> {
        self.answer(sql, None, stop)
    }

    /// [`Client::run`] for a question fathom asks a server for itself (a check, a size, a
    /// record of a load), `what` naming it: bounded by [`ANSWER_WITHIN`] whatever the
    /// server does, and said on the terminal once it has waited a couple of seconds.
    pub fn ask(&mut self, sql: &str, what: &str, stop: &AtomicBool) -> Result<String> {
        let waiting = format!("waiting for the server at {} to answer ({what})", self.server);
        let deadline = Instant::now() + ANSWER_WITHIN;
        crate::terminal::said_if_slow(SAY_WAITING, Some(waiting), || self.answer(sql, Some((deadline, what)), stop))
    }

    fn answer(&mut self, sql: &str, within: Option<(Instant, &str)>, stop: &AtomicBool) -> Result<String> {
        let sql = terminated(sql);
        let lines = self.session.run(&sql, within.map(|(d, _)| d), stop).map_err(|e| self.failed(&e, within))?;
        Ok(lines.join("\n").trim().to_string())
    }

    /// The error of a question that got no answer, in words that say whose fault it was.
    fn failed(&self, said: &str, within: Option<(Instant, &str)>) -> Error {
        let about = within.map(|(_, w)| format!(" ({w})")).unwrap_or_default();
        let server = &self.server;
        if said == STOPPED {
            return Error::failed(INTERRUPTED);
        }
        if said == LATE {
            let s = ANSWER_WITHIN.as_secs();
            return Error::failed(format!("the server at {server} did not answer within {s} s{about}"));
        }
        if said.contains("timeout expired") {
            return Error::failed(format!(
                "the server at {server} did not open a session within {} s{about}: it accepted no connection, or \
                 accepted it and never answered ({said})",
                self.connect_within_s
            ));
        }
        Error::failed(without_place(said))
    }
}

/// `sql` ended as a script's statement must be, so that the client runs it before the
/// sentinel that follows: with a semicolon, unless it ends with one or with a client's
/// own command (psql's `\echo`, a line of its own). The semicolon goes on a line of its
/// own, after any comment that ends the script.
fn terminated(sql: &str) -> String {
    let sql = sql.trim_end();
    let code = |l: &&str| !l.trim().is_empty() && !l.trim_start().starts_with("--");
    let last = sql.lines().rfind(code).unwrap_or_default().trim();
    if last.ends_with(';') || last.starts_with('\\') { sql.to_string() } else { format!("{sql}\n;") }
}

/// A client's error without the places in its script the client adds (`psql:<stdin>:3:
/// ERROR: ...`): fathom's statements are its own, the server's words are what matter.
fn without_place(said: &str) -> String {
    const PLACE: &str = "psql:<stdin>:";
    let mut out = String::new();
    let mut rest = said;
    while let Some(at) = rest.find(PLACE) {
        out.push_str(&rest[..at]);
        rest = &rest[at + PLACE.len()..];
        if let Some((_, after)) = rest.split_once(": ").filter(|(n, _)| n.parse::<u32>().is_ok()) {
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_statement_is_ended_before_the_sentinel_that_follows_it() {
        assert_eq!(terminated("SELECT 1"), "SELECT 1\n;");
        assert_eq!(terminated("SELECT 1\n-- the last"), "SELECT 1\n-- the last\n;");
        assert_eq!(terminated("SELECT 1;\n-- the last"), "SELECT 1;\n-- the last");
        assert_eq!(terminated("SELECT 1;\n"), "SELECT 1;");
        assert_eq!(
            terminated("DELIMITER //\nCREATE PROCEDURE p() BEGIN SELECT 1; END //\nDELIMITER ;"),
            "DELIMITER //\nCREATE PROCEDURE p() BEGIN SELECT 1; END //\nDELIMITER ;"
        );
        assert_eq!(terminated("\\echo :HOST :PORT"), "\\echo :HOST :PORT");
    }

    #[test]
    fn a_clients_place_in_its_script_is_left_out_of_its_error() {
        let said = "psql:<stdin>:3: ERROR:  duplicate key / DETAIL:  Key (k)=(1) already exists.";
        assert_eq!(without_place(said), "ERROR:  duplicate key / DETAIL:  Key (k)=(1) already exists.");
        let said = "mariadb: ERROR 1062 (23000) at line 3: Duplicate entry '1' for key 'PRIMARY'";
        assert_eq!(without_place(said), said);
    }
}
