//! The checker: turns a [`ScenarioFile`](crate::scenario::file::ScenarioFile) into a [`Scenario`](crate::scenario::model::Scenario) with errors located at the
//! key that is wrong (`FILE:LINE: workloads.a.iodepth: ...`, or the `--set` that changed
//! it). Its checks are split by topic: the whole file ([`super::scenario`]), the timeline
//! ([`super::timeline`]), IO workloads ([`super::io`]) and program workloads
//! ([`super::programs`]).

use crate::error::{Error, Result};
use crate::scenario::file::{Group, Profile};
use crate::scenario::model::Source;
use crate::scenario::text;
use crate::scenario::yaml::Lines;
use indexmap::IndexMap;
use std::path::Path;

/// Resolves and validates, producing errors located at the key that is wrong.
pub struct Checker<'a> {
    pub src: &'a Source<'a>,
    /// The scenario file, when the scenario is one: the files it names are read from its
    /// directory.
    pub file: Option<&'a Path>,
    /// Where each key of the source text was written.
    pub lines: Lines,
    /// The file's worker groups, for `group:`.
    pub groups: IndexMap<String, Group>,
    /// Each `--set` (as written) with the dotted paths it changed.
    pub touched: Vec<(String, Vec<String>)>,
    /// An inventory of hosts is given (`--hosts`, or an agent loading it): a workload of
    /// fathom's engine that says no `hosts:` then runs on every host (see docs/hosts.md).
    pub on_hosts: bool,
}

impl Checker<'_> {
    /// An error about the key at `path` (e.g. `["workloads", "qd1", "iodepth"]`).
    pub fn err(&self, path: &[&str], msg: impl std::fmt::Display) -> Error {
        Error::input(format!("{}: {msg}", self.at(path)))
    }

    /// [`Checker::err`] for a path built at run time (a key of the workload or of the
    /// defaults, see [`Layers`]).
    pub fn fail(&self, path: &[String], msg: impl std::fmt::Display) -> Error {
        let keys: Vec<&str> = path.iter().map(String::as_str).collect();
        self.err(&keys, msg)
    }

    /// Where the key at `path` was written: `FILE:LINE: dotted.path`, or the `--set`
    /// that changed it.
    pub fn at(&self, path: &[&str]) -> String {
        let dotted = path.join(".");
        if let Some((set, _)) = self.touched.iter().find(|(_, paths)| paths.contains(&dotted)) {
            return format!("--set {set}: {dotted}");
        }
        match self.lines.line_of(path) {
            Some(line) => format!("{}:{line}: {dotted}", self.src.origin),
            None => format!("{}: {dotted}", self.src.origin),
        }
    }

    /// Where a key of the mapping at `shown` was written: `FILE:LINE: shown`, the line
    /// the key's (`line_path`). An unknown key is the mapping's fault, found at its line,
    /// as serde's own errors say it.
    pub fn at_line_of(&self, line_path: &[&str], shown: &[&str]) -> String {
        let dotted = line_path.join(".");
        if let Some((set, _)) = self.touched.iter().find(|(_, paths)| paths.contains(&dotted)) {
            return format!("--set {set}: {}", shown.join("."));
        }
        match self.lines.line_of(line_path) {
            Some(line) => format!("{}:{line}: {}", self.src.origin, shown.join(".")),
            None => format!("{}: {}", self.src.origin, shown.join(".")),
        }
    }

    /// Refuses a line break in a value that is one line by nature: a name, a path, an
    /// address (see [`text`]).
    pub fn one_line(&self, path: &[&str], value: &str) -> Result<()> {
        if !text::one_line(value) {
            // the value itself is not shown: it may be a DSN with a secret
            return Err(self.err(path, "is more than one line: expected one line"));
        }
        Ok(())
    }

    /// Refuses a name that becomes part of a file's name ([`text::file_name_part`]):
    /// `at` is where it was written, `shown` the key the message names.
    pub fn file_name_part(&self, at: &[&str], shown: &[&str], name: &str) -> Result<()> {
        text::file_name_part(name).map_err(|why| Error::input(format!("{}: {why}", self.at_line_of(at, shown))))
    }

    /// The text keys of a profile (`at` is `defaults` or `workloads.NAME`): each one line.
    /// Targets are checked as paths where they are resolved ([`text::plain_text`]).
    pub fn profile_text(&self, at: &[&str], p: &Profile) -> Result<()> {
        for value in p.hosts.iter().flatten() {
            self.one_line(&[at, &["hosts"]].concat(), value)?;
        }
        let texts =
            [("group", &p.group), ("bssplit", &p.bssplit), ("bsrange", &p.bsrange), ("distribution", &p.distribution)];
        for (key, value) in texts {
            if let Some(value) = value {
                self.one_line(&[at, &[key]].concat(), value)?;
            }
        }
        Ok(())
    }
}

/// A workload's own profile over the defaults: the value each key takes and where it
/// was written, so an error points at the line that set it (the workload's, or the
/// defaults' it inherited).
pub struct Layers<'a> {
    pub name: &'a str,
    pub own: &'a Profile,
    pub defaults: &'a Profile,
}

impl Layers<'_> {
    /// The path of `key`: the workload's own if it sets it (`own`), else the defaults'.
    pub fn at(&self, key: &str, own: bool) -> Vec<String> {
        if own { vec!["workloads".into(), self.name.into(), key.into()] } else { vec!["defaults".into(), key.into()] }
    }

    /// The value of `key` (read by `get`), the workload's own over the defaults', and its
    /// path. [`pick!`] names the key once.
    pub fn pick<T: Clone>(&self, key: &str, get: impl Fn(&Profile) -> &Option<T>) -> (Option<T>, Vec<String>) {
        let own = get(self.own);
        (own.clone().or_else(|| get(self.defaults).clone()), self.at(key, own.is_some()))
    }
}

/// `pick!(layers, iodepth)`: [`Layers::pick`] of the profile key of that name.
macro_rules! pick {
    ($layers:expr, $key:ident) => {
        $layers.pick(stringify!($key), |p| &p.$key)
    };
}
pub(super) use pick;
