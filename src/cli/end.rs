//! How a run's end is told, by `run` and `sweep`: the summary people read, and the
//! run as JSON where `--json` asks.

use crate::error::{Error, Result};
use crate::session::Ended;
use std::path::{Path, PathBuf};

/// How a run's end is told (also `sweep`'s): the summary people read, unless `quiet`
/// only the final one, and the run as JSON where `--json` asks.
pub(super) struct End {
    quiet: bool,
    json: Option<Json>,
}

/// Where `--json` writes.
enum Json {
    Stdout,
    File(PathBuf),
}

impl End {
    /// Refuses a `--json` file fathom would not write (a symbolic link, a missing
    /// directory) before the run, not after it.
    pub(super) fn new(quiet: bool, json: Option<PathBuf>) -> Result<End> {
        let json = match json {
            None => None,
            Some(p) if p.as_os_str() == "-" => Some(Json::Stdout),
            Some(p) => {
                let bad = |e: String| Error::input(format!("--json {}: {e}", p.display()));
                crate::nofollow::not_a_symlink(&p).map_err(|e| bad(e.to_string()))?;
                let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
                if !dir.is_dir() {
                    return Err(bad(format!("no directory {}", dir.display())));
                }
                Some(Json::File(p))
            }
        };
        Ok(End { quiet, json })
    }

    /// Prints the summary a run ends with and writes its JSON; returns its exit status.
    /// Lint's findings before the run were printed as it started, unless `quiet`: each
    /// is said once. With the JSON on stdout, the summary goes to stderr, so stdout parses.
    pub(super) fn print(&self, ended: &Ended, width: usize) -> Result<i32> {
        let said = |code: &str| !self.quiet && crate::analysis::lint::said_before_run(code);
        let mut text = format!("\n{}", super::show::text(&ended.summary, &said, width, super::show::prose(width)));
        if ended.code == crate::error::exit::EXPECTATION_FAILED {
            text.push_str("\nsome expectations failed (exit 3); `--no-expect` skips them\n");
        }
        if ended.code == crate::error::exit::SUCCESS {
            text.push_str(&format!("\nsee it again with `fathom show {}`; all runs: `fathom runs`\n", ended.run));
        }
        let json = || serde_json::to_string_pretty(&ended.summary).expect("a summary serializes") + "\n";
        match &self.json {
            None => crate::terminal::print(&text),
            Some(Json::Stdout) => {
                crate::terminal::eprint(&text);
                crate::terminal::print(json());
            }
            Some(Json::File(p)) => {
                crate::terminal::print(&text);
                crate::nofollow::write(p, json()).map_err(|e| Error::input(format!("--json {}: {e}", p.display())))?;
            }
        }
        Ok(ended.code)
    }
}
