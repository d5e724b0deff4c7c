//! The one place fathom reads YAML (scenarios, the hosts inventory, hooks): serde-saphyr
//! for the values, its parser's positions for where each key was written, and every
//! error as `FILE:LINE: path: message`.
//!
//! YAML is read as YAML 1.2 core: only `true` and `false` are booleans, so `on` and `yes`
//! stay text for the options fathom passes through (PostgreSQL settings). A key given
//! twice in one mapping is refused at that mapping, as a typo there would otherwise
//! silently win.

use super::yaml_words::{innermost, message, syntax};
use crate::error::{Error, Result};
use indexmap::IndexMap;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_saphyr::granit_parser::{Event, Parser};
use std::collections::{HashMap, HashSet};

/// A YAML document before its types are known, in the order written: what `vars` and
/// `--set` work on, and what a driver's pass-through settings hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(String),
    Sequence(Vec<Value>),
    Mapping(IndexMap<String, Value>),
}

impl Value {
    /// A scalar as the text it stands for (`5`, `0.9`, `true`, `1GB`); `None` for null
    /// and collections.
    pub fn as_text(&self) -> Option<String> {
        match self {
            Value::Bool(b) => Some(b.to_string()),
            Value::Int(n) => Some(n.to_string()),
            // as YAML writes it: `1.0`, not `1`
            Value::Float(x) => Some(format!("{x:?}")),
            Value::String(s) => Some(s.clone()),
            Value::Null | Value::Sequence(_) | Value::Mapping(_) => None,
        }
    }
}

/// Reads `text` (from `origin`, for messages) as a `T`, with errors located.
pub fn from_str<T: DeserializeOwned>(origin: &str, text: &str) -> Result<T> {
    read(origin, text).map(|(value, _)| value)
}

/// [`from_str`], with where each key was written, for errors found later.
pub fn read<T: DeserializeOwned>(origin: &str, text: &str) -> Result<(T, Lines)> {
    let lines = Lines::read(origin, text)?;
    match serde_saphyr::from_str_with_options(text, options()) {
        Ok(value) => Ok((value, lines)),
        Err(e) => Err(lines.error(Some(origin), &e)),
    }
}

/// [`from_str`] of text fathom wrote itself (a document with `--set` applied): errors
/// name the key (`workloads.a.iodepth: ...`) but no line, which would be nowhere in the
/// user's file.
pub fn from_written<T: DeserializeOwned>(text: &str) -> Result<T> {
    let lines = Lines::read("", text)?;
    serde_saphyr::from_str_with_options(text, options()).map_err(|e| lines.error(None, &e))
}

/// A value as YAML text (a `--set` applied to the document is read again as text).
pub fn to_string<T: Serialize>(value: &T) -> Result<String> {
    serde_saphyr::to_string(value).map_err(|e| Error::failed(format!("writing YAML: {e}")))
}

/// YAML 1.2 core as fathom has always read it: `yes` is text, and a text key reads
/// `null`, `~` or nothing as that text (`name: null` names a scenario "null").
fn options() -> serde_saphyr::Options {
    let mut options = serde_saphyr::Options::default();
    options.strict_booleans = true;
    options.null_as_string = true;
    options
}

/// One step of a path: a mapping's key or a sequence's index.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

/// A path as messages show it: `workloads.a.iodepth`, `timeline[1].start`.
fn dotted(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(k) if out.is_empty() => out.push_str(k),
            Step::Key(k) => {
                out.push('.');
                out.push_str(k);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// A mapping or sequence being read.
enum Frame {
    Map {
        path: Vec<Step>,
        line: usize,
        /// The key whose value comes next; `None` while a key is awaited.
        key: Option<String>,
        seen: HashSet<String>,
    },
    Seq {
        path: Vec<Step>,
        next: usize,
    },
}

/// Where the keys and values of a YAML text were written, from the parser's positions:
/// an error found after parsing (a depth of zero, a workload missing its target) points
/// at the text the user wrote, and the deserializer's errors name the key they are at.
#[derive(Debug, Default)]
pub struct Lines {
    /// Each mapping key and sequence item: its path and its line.
    keys: Vec<(Vec<Step>, usize)>,
    /// Where each node starts (line, column): the path it is at (a key's, its mapping's).
    nodes: HashMap<(usize, usize), String>,
    /// Where each key starts that no collection starts at: the path of its value (the
    /// parser places an error about an empty or null value at its key).
    key_values: HashMap<(usize, usize), String>,
    /// Where each scalar value starts: its text, for messages about it.
    scalars: HashMap<(usize, usize), String>,
    /// The first key given twice: the mapping's path and line, and the key.
    duplicate: Option<(String, usize, String)>,
}

impl Lines {
    /// The positions of `text`, or its syntax error located (`origin` is for messages).
    pub fn read(origin: &str, text: &str) -> Result<Lines> {
        let mut lines = Lines::default();
        let mut stack: Vec<Frame> = Vec::new();
        for event in Parser::new_from_str(text) {
            let (event, span) =
                event.map_err(|e| Error::input(format!("{origin}:{}: {}", e.marker().line(), syntax(e.kind()))))?;
            let at = (span.start.line(), span.start.col() + 1);
            match event {
                Event::Scalar(text, ..) => lines.node(&mut stack, at, Some(text.to_string())),
                Event::Alias(_) => lines.node(&mut stack, at, None),
                Event::MappingStart(..) | Event::SequenceStart(..) => {
                    let (path, item) = Lines::child(&stack);
                    lines.nodes.entry(at).or_insert_with(|| dotted(&path));
                    if item {
                        lines.keys.push((path.clone(), at.0));
                    }
                    stack.push(match event {
                        Event::MappingStart(..) => Frame::Map { path, line: at.0, key: None, seen: HashSet::new() },
                        _ => Frame::Seq { path, next: 0 },
                    });
                }
                Event::MappingEnd | Event::SequenceEnd => {
                    stack.pop();
                    done(&mut stack, None);
                }
                _ => {}
            }
        }
        match &lines.duplicate {
            Some((path, line, key)) if path.is_empty() => {
                Err(Error::input(format!("{origin}:{line}: `{key}` is given twice: a key once per mapping")))
            }
            Some((path, line, key)) => {
                Err(Error::input(format!("{origin}:{line}: {path}: `{key}` is given twice: a key once per mapping")))
            }
            None => Ok(lines),
        }
    }

    /// The path of the node about to be read, and whether it is a sequence item.
    fn child(stack: &[Frame]) -> (Vec<Step>, bool) {
        match stack.last() {
            None => (Vec::new(), false),
            Some(Frame::Map { path, key: None, .. }) => (path.clone(), false),
            Some(Frame::Map { path, key: Some(k), .. }) => ([&path[..], &[Step::Key(k.clone())]].concat(), false),
            Some(Frame::Seq { path, next }) => ([&path[..], &[Step::Index(*next)]].concat(), true),
        }
    }

    /// A scalar (or alias) node: a mapping's key, or a value.
    fn node(&mut self, stack: &mut [Frame], at: (usize, usize), text: Option<String>) {
        if let Some(Frame::Map { path, line, key: None, seen }) = stack.last_mut() {
            let key = text.unwrap_or_default();
            let key_path = [&path[..], &[Step::Key(key.clone())]].concat();
            if !self.nodes.contains_key(&at) {
                self.key_values.insert(at, dotted(&key_path));
            }
            self.nodes.entry(at).or_insert_with(|| dotted(path));
            self.keys.push((key_path, at.0));
            if !seen.insert(key.clone()) && self.duplicate.is_none() {
                self.duplicate = Some((dotted(path), *line, key.clone()));
            }
            done(stack, Some(key));
            return;
        }
        let (path, item) = Lines::child(stack);
        if item {
            self.keys.push((path.clone(), at.0));
        }
        self.nodes.entry(at).or_insert_with(|| dotted(&path));
        if let Some(text) = text {
            self.scalars.insert(at, text);
        }
        done(stack, None);
    }

    /// The 1-based line of the key at `path` (a sequence item by its index), or of its
    /// deepest ancestor that was written.
    pub fn line_of(&self, path: &[&str]) -> Option<usize> {
        let matched = |keys: &[Step]| {
            keys.len() <= path.len()
                && keys.iter().zip(path).all(|(k, p)| match k {
                    Step::Key(k) => k == p,
                    Step::Index(i) => i.to_string() == *p,
                })
        };
        let mut best: Option<(usize, usize)> = None; // (depth, line)
        for (keys, line) in &self.keys {
            if matched(keys) && best.is_none_or(|(d, _)| keys.len() > d) {
                best = Some((keys.len(), *line));
            }
        }
        best.map(|(_, line)| line)
    }

    /// A deserializer's error as `FILE:LINE: path: message`, in fathom's words.
    fn error(&self, origin: Option<&str>, e: &serde_saphyr::Error) -> Error {
        let at = e.location().filter(|l| l.line() > 0).map(|l| (l.line() as usize, l.column() as usize));
        // an unknown or missing field is the mapping's fault; anything else at a key, its value's
        let of_mapping = matches!(
            innermost(e),
            serde_saphyr::Error::SerdeUnknownField { .. } | serde_saphyr::Error::SerdeMissingField { .. }
        );
        let value_at = at.filter(|_| !of_mapping).and_then(|at| self.key_values.get(&at));
        let path = value_at.or_else(|| at.and_then(|at| self.nodes.get(&at))).filter(|p| !p.is_empty());
        let scalar = at.and_then(|at| self.scalars.get(&at)).map(String::as_str);
        let msg = message(e, scalar);
        let msg = match path {
            Some(path) => format!("{path}: {msg}"),
            None => msg,
        };
        Error::input(match (origin, at) {
            (Some(origin), Some((line, _))) => format!("{origin}:{line}: {msg}"),
            (Some(origin), None) => format!("{origin}: {msg}"),
            (None, _) => msg,
        })
    }
}

/// After a node was read: the mapping it belongs to awaits its value or its next key,
/// the sequence its next item. `key` is the text of a node that was a key.
fn done(stack: &mut [Frame], key: Option<String>) {
    match stack.last_mut() {
        Some(Frame::Map { key: awaited, .. }) => {
            *awaited = match awaited {
                None => Some(key.unwrap_or_else(|| "?".into())),
                Some(_) => None,
            }
        }
        Some(Frame::Seq { next, .. }) => *next += 1,
        None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "\
name: x
# comment
defaults:
  bs: 4k
workloads:
  a:
    iodepth: 4
  b: {iodepth: 0, bs: 4k}
timeline:
  - start: a
  - start: b
expect:
  - a.iops > 1
";

    #[test]
    fn finds_nested_keys_flow_mappings_and_sequence_items() {
        let lines = Lines::read("s.yaml", TEXT).unwrap();
        assert_eq!(lines.line_of(&["defaults", "bs"]), Some(4));
        assert_eq!(lines.line_of(&["workloads", "a", "iodepth"]), Some(7));
        assert_eq!(lines.line_of(&["workloads", "b", "iodepth"]), Some(8));
        assert_eq!(lines.line_of(&["timeline", "1", "start"]), Some(11));
        assert_eq!(lines.line_of(&["expect", "0"]), Some(13), "a new key starts a new sequence");
        assert_eq!(lines.line_of(&["workloads", "a", "rw"]), Some(6), "falls back to the parent");
    }

    #[test]
    fn a_key_given_twice_is_refused_at_its_mapping() {
        let err = Lines::read("s.yaml", "name: x\nvars:\n  a: 1\n  a: 2\n").unwrap_err().to_string();
        assert_eq!(err, "s.yaml:3: vars: `a` is given twice: a key once per mapping");
        let err = Lines::read("s.yaml", "name: x\nname: y\n").unwrap_err().to_string();
        assert_eq!(err, "s.yaml:1: `name` is given twice: a key once per mapping");
    }

    #[test]
    fn on_and_yes_stay_text() {
        let v: IndexMap<String, Value> = from_str("s.yaml", "a: on\nb: yes\nc: true\nd: 0.9\ne: 5\nf: 1.0\n").unwrap();
        let texts: Vec<String> = v.values().filter_map(Value::as_text).collect();
        assert_eq!(texts, ["on", "yes", "true", "0.9", "5", "1.0"]);
        assert_eq!(v["c"], Value::Bool(true));
    }

    #[test]
    fn errors_name_the_key_they_are_at_in_fathoms_words() {
        let err = |text: &str| from_str::<crate::scenario::file::ScenarioFile>("s.yaml", text).unwrap_err().to_string();
        assert_eq!(
            err("name: x\nworkloads:\n  a:\n    rw: read\n    target:\n"),
            "s.yaml:5: workloads.a.target: has no value: expected a path, or a list of paths"
        );
        let e = err("name: x\nworkloads:\n  a: {rw: raed}\n");
        let raed = "s.yaml:3: workloads.a.rw: unknown choice `raed` (did you mean `read`?): expected one of `read`, ";
        assert!(e.starts_with(raed), "{e}");
        assert_eq!(err("name: x\nworkloads: 5\n"), "s.yaml:2: workloads: expected a mapping of `key: value`, not `5`");
        assert_eq!(
            err("name: x\nworkloads:\n  a: {iodepth: deep}\n"),
            "s.yaml:3: workloads.a.iodepth: expected a whole number from 0 to 4294967295, not \"deep\""
        );
        assert_eq!(err("workloads: {}\n"), "s.yaml:1: missing key `name`");
        assert_eq!(
            err("name: x\nworkloads: {}\n---\nname: y\n"),
            "s.yaml:4: holds more than one YAML document (`---`): fathom reads one"
        );
        assert_eq!(err("name: x\ndescription: @x\n"), "s.yaml:2: '@' cannot start an unquoted value: quote the value");
    }
}
