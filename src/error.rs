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

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Input(m) | Error::Failed(m) => f.write_str(m),
            Error::Interrupted => f.write_str("interrupted"),
        }
    }
}

impl std::error::Error for Error {}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        Error::Failed(format!("results store: {e}"))
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
}
