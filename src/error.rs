//! Errors and the exit status each one maps to.
//!
//! fathom's exit statuses are part of its interface (scripts and CI depend on them):
//! they are the constants of [`exit`], which the manual pages list from [`exit::ALL`].
//! Keeping the mapping in one enum means a module deep in the stack decides *what kind*
//! of failure it saw, and `main` alone turns that into a status.

use std::fmt;

/// The exit statuses, each once: the code returns these names, never the numbers.
pub mod exit {
    pub const SUCCESS: i32 = 0;
    pub const FAILED: i32 = 1;
    pub const BAD_INPUT: i32 = 2;
    pub const EXPECTATION_FAILED: i32 = 3;
    /// As a shell's Ctrl-C (128 + SIGINT).
    pub const INTERRUPTED: i32 = 130;

    /// Every status and what it tells a script, as `fathom man` prints them.
    pub const ALL: [(i32, &str); 5] = [
        (SUCCESS, "Success: the command did its work; a run completed and met its expectations."),
        (
            FAILED,
            "A run failed while it ran (a program or an IO failed, data verification failed, a host was \
             lost: the run is stored as failed or partial), or reading or writing results failed.",
        ),
        (
            BAD_INPUT,
            "Bad input: a scenario, flag, inventory or target was refused before anything was measured (the \
             message names the file, line and key); also `fathom lint --strict` when it found something.",
        ),
        (
            EXPECTATION_FAILED,
            "The run completed but an expectation (`expect:`, or a result view's band) failed; `--no-expect` \
             skips them.",
        ),
        (INTERRUPTED, "Interrupted by Ctrl-C, SIGTERM or SIGHUP; what was measured so far is stored."),
    ];
}

/// A failure that ends the command, with the exit status it implies.
#[derive(Debug)]
pub enum Error {
    /// The user's input is wrong (scenario, flag, target). Exit 2, nothing measured.
    Input(String),
    /// Something broke while running or reading results. Exit 1.
    Failed(String),
    /// Ctrl-C, SIGTERM or SIGHUP arrived. Exit 130, like a shell's Ctrl-C.
    Interrupted,
}

impl Error {
    pub fn input(msg: impl Into<String>) -> Self {
        Error::Input(msg.into())
    }

    pub fn failed(msg: impl Into<String>) -> Self {
        Error::Failed(msg.into())
    }

    /// The same message as bad input (exit 2); `Interrupted` stays as it is. For a
    /// caller that knows a failure came before anything was measured: a host lost while
    /// the run is being set up is the inventory's or the network's to fix (exit 2, as
    /// the run's docs promise), though the same loss during the run is a failed run.
    pub fn into_input(self) -> Self {
        match self {
            Error::Failed(m) => Error::Input(m),
            other => other,
        }
    }

    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Input(_) => exit::BAD_INPUT,
            Error::Failed(_) => exit::FAILED,
            Error::Interrupted => exit::INTERRUPTED,
        }
    }
}

/// The most characters of a message shown: a program's output or a file's content
/// inside an error must not bury what went wrong, nor fill a terminal or a stored row.
const MAX_MESSAGE: usize = 2000;

/// A message as one line of at most [`MAX_MESSAGE`] characters: line breaks and other
/// control characters read as spaces, so `FILE:LINE: key: ...` stays the first thing
/// seen and a stored error is one row of text.
fn one_line(m: &str) -> String {
    let mut out: String = m.chars().take(MAX_MESSAGE).map(|c| if c.is_control() { ' ' } else { c }).collect();
    let total = m.chars().count();
    if total > MAX_MESSAGE {
        out.push_str(&format!("... ({} more characters)", total - MAX_MESSAGE));
    }
    out
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Input(m) | Error::Failed(m) => f.write_str(&one_line(m)),
            Error::Interrupted => f.write_str("interrupted"),
        }
    }
}

impl std::error::Error for Error {}

/// How an error of the results store begins when SQLite found the file damaged: the
/// command, which knows the store's path, then says how to recover what it can.
pub const STORE_DAMAGED: &str = "results store: damaged";

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        use rusqlite::ErrorCode;
        match e.sqlite_error_code() {
            Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => {
                Error::Failed(format!("{STORE_DAMAGED} ({e})"))
            }
            _ => Error::Failed(format!("results store: {e}")),
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn into_input_keeps_the_message_and_makes_a_failure_exit_2() {
        let e = Error::failed("host n1: lost (Broken pipe)").into_input();
        assert_eq!((e.exit_code(), e.to_string()), (2, "host n1: lost (Broken pipe)".to_string()));
        assert_eq!(Error::input("bad").into_input().exit_code(), 2);
        assert_eq!(Error::Interrupted.into_input().exit_code(), 130);
    }

    #[test]
    fn a_message_is_one_line_and_cut() {
        let e = Error::failed(format!("fio: {}", "line of output\n".repeat(100_000)));
        let said = e.to_string();
        assert!(!said.contains('\n') && said.starts_with("fio: line of output line of"), "{}", &said[..80]);
        assert!(said.ends_with("... (1498005 more characters)") && said.chars().count() < 2100, "{}", &said[1990..]);
        assert_eq!(Error::input("a\tb\r\nc").to_string(), "a b  c");
    }
}
