//! `--set KEY=VALUE`: change any scenario value from the command line.
//!
//! Forms, most specific first:
//! - a full path: `defaults.bs=8k`, `workloads.qd1.iodepth=32`, `name=mine`;
//! - `WORKLOAD.KEY=VALUE`: one key of one workload (`qd1.iodepth=32`);
//! - `KEY=VALUE`: a profile key everywhere — in `defaults` and in every workload that
//!   sets it itself — because `--set bs=8k` means "run it all at 8k".
//!
//! Values are read as YAML scalars, so `32` is a number and `true` a boolean, exactly
//! as if written in the file.

use super::file::Profile;
use super::yaml::{self, Value};
use crate::error::{Error, Result};
use crate::suggest;
use indexmap::IndexMap;
use std::fmt;
use std::str::FromStr;

const TOP_LEVEL: [&str; 12] = [
    "name",
    "description",
    "question",
    "defaults",
    "workloads",
    "timeline",
    "vars",
    "expect",
    "groups",
    "observe",
    "prometheus",
    "compare",
];

/// One `--set` argument.
#[derive(Debug, Clone)]
pub struct Override {
    pub path: Vec<String>,
    pub value: String,
}

impl FromStr for Override {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let (key, value) = s.split_once('=').ok_or_else(|| {
            Error::input(format!("`{s}` is not KEY=VALUE (e.g. --set iodepth=32 or --set qd1.bs=8k)"))
        })?;
        let path: Vec<String> = key.trim().split('.').map(str::to_string).collect();
        if path.iter().any(String::is_empty) {
            return Err(Error::input(format!("`{s}`: empty key")));
        }
        Ok(Override { path, value: value.to_string() })
    }
}

impl fmt::Display for Override {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.path.join("."), self.value)
    }
}

/// All overrides, for an error that cannot be pinned on one.
pub fn describe(sets: &[Override]) -> String {
    let all: Vec<String> = sets.iter().map(|s| format!("--set {s}")).collect();
    all.join(" ")
}

impl Override {
    /// Keys whose values are always text, so `--target 123` or `--set name=true` mean
    /// the text the user typed.
    const TEXT_KEYS: [&'static str; 5] = ["target", "file", "name", "description", "start"];

    fn parsed_value(&self) -> Value {
        let key = self.path.last().map(String::as_str).unwrap_or_default();
        if Self::TEXT_KEYS.contains(&key) {
            return Value::String(self.value.clone());
        }
        if self.value.trim().is_empty() {
            return Value::Null;
        }
        yaml::from_str("--set", &self.value).unwrap_or_else(|_| Value::String(self.value.clone()))
    }

    /// The name of a one-name `--set` that is no key of a scenario's (a top-level key or
    /// a profile key): an importer with variables of its own (X-Ray's) says it is none of
    /// those either.
    pub fn unknown_name(&self) -> Option<&str> {
        let [name] = self.path.as_slice() else { return None };
        let known = TOP_LEVEL.contains(&name.as_str()) || Profile::io_keys().contains(name);
        (!known).then_some(name.as_str())
    }

    /// Applies this override to the scenario document, returning the dotted paths it
    /// changed (so a later error about one of them can name this `--set`).
    pub fn apply(&self, doc: &mut Value, workloads: &[String]) -> Result<Vec<String>> {
        // the value is read as YAML: as deep as a file may be, no deeper
        if super::prescan::too_deep(&self.value).is_some() {
            return Err(Error::input(format!("--set {}: {}", self.path.join("."), super::prescan::deep_message())));
        }
        let first = self.path[0].as_str();
        let targets: Vec<Vec<String>> = if TOP_LEVEL.contains(&first) {
            vec![self.path.clone()]
        } else if workloads.iter().any(|w| w == first) {
            let mut p = vec!["workloads".to_string()];
            p.extend(self.path.iter().cloned());
            vec![p]
        } else if self.path.len() == 1 {
            let mut all = vec![vec!["defaults".to_string(), first.to_string()]];
            for w in workloads {
                let path = vec!["workloads".to_string(), w.clone(), first.to_string()];
                if get(doc, &path).is_some() {
                    all.push(path);
                }
            }
            all
        } else {
            let hint = suggest::hint(first, workloads.iter().map(String::as_str).chain(TOP_LEVEL));
            return Err(Error::input(format!(
                "--set {self}: `{first}`{hint} is neither a workload ({}) nor a top-level key",
                workloads.join(", ")
            )));
        };
        let mut touched = Vec::new();
        for path in targets {
            set(doc, &path, self.parsed_value()).map_err(|m| Error::input(format!("--set {self}: {m}")))?;
            touched.push(path.join("."));
        }
        Ok(touched)
    }
}

fn get<'a>(doc: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(doc, |v, k| match v {
        Value::Mapping(m) => m.get(k.as_str()),
        _ => None,
    })
}

/// Sets `path` in `doc`, creating mappings on the way (so `defaults` may be absent).
fn set(doc: &mut Value, path: &[String], value: Value) -> Result<()> {
    let mut cur = doc;
    for (i, key) in path.iter().enumerate() {
        if *cur == Value::Null {
            *cur = Value::Mapping(IndexMap::new());
        }
        let map = match cur {
            Value::Mapping(m) => m,
            Value::Sequence(seq) => {
                let idx: usize = key.parse().map_err(|_| Error::input(format!("`{key}` is not a list index")))?;
                let len = seq.len();
                cur = seq
                    .get_mut(idx)
                    .ok_or_else(|| Error::input(format!("index {idx} is past the end ({len} items)")))?;
                if i + 1 == path.len() {
                    *cur = value;
                    return Ok(());
                }
                continue;
            }
            _ => return Err(Error::input(format!("`{}` is not a mapping", path[..i].join(".")))),
        };
        if i + 1 == path.len() {
            map.insert(key.clone(), value);
            return Ok(());
        }
        cur = map.entry(key.clone()).or_insert(Value::Null);
    }
    Ok(())
}

/// The `--set`s a scenario is loaded with: the user's, then `--target` and `--engine`
/// as the sets they stand for (agents on other hosts load it with the same).
pub fn applied_sets(
    sets: &[Override],
    target: Option<&std::path::Path>,
    engine: Option<&str>,
) -> Result<Vec<Override>> {
    let mut sets = sets.to_vec();
    if let Some(t) = target {
        sets.push(format!("target={}", t.display()).parse()?);
    }
    if let Some(e) = engine {
        sets.push(format!("engine={e}").parse()?);
    }
    Ok(sets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_and_engine_follow_the_users_sets() {
        let user: Vec<Override> = vec!["iodepth=4".parse().unwrap()];
        let sets = applied_sets(&user, Some(std::path::Path::new("/tmp/t")), Some("psync")).unwrap();
        let texts: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        assert_eq!(texts, ["iodepth=4", "target=/tmp/t", "engine=psync"]);
    }
}
