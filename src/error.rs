//! Errors and the exit status each one maps to.
//!
//! fathom's exit statuses are part of its interface (scripts and CI depend on them):
//! 0 success, 1 a run that failed mid-way, 2 bad input (nothing was measured),
//! 130 interrupted; 3 is reserved for failed expectations, which scenarios will gain.
//! Keeping the mapping in one enum means a module deep in the stack decides *what kind*
//! of failure it saw, and `main` alone turns that into a status.

use std::fmt;

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
            Error::Input(_) => 2,
            Error::Failed(_) => 1,
            Error::Interrupted => 130,
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
