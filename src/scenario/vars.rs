//! `vars`: named values a scenario uses as `${name}` in any value, with defaults in the
//! file and `--set name=value` to change them, so one built-in scenario runs short in CI
//! and at field length with one flag (`--set duration=30m`).
//!
//! Substitution is textual and happens before the YAML is read, so a variable can stand
//! for any part of a value (`size: ${scale}g`) and line numbers of errors stay right (a
//! value is one line, so substituting it never moves a line). A variable's value may
//! name other variables (`mix: ${reads}`); they are resolved first, and a reference that
//! cannot be resolved (unknown, or a cycle) is an error, never an empty or zero value.

use super::overrides::Override;
use super::prescan;
use super::yaml::{self, Lines, Value};
use crate::error::{Error, Result};
use indexmap::IndexMap;

/// How many variables a value may reach through others (`a: ${b}`, `b: ${c}`, ...):
/// far more than a scenario needs, and few enough that resolving cannot exhaust the stack.
const MAX_CHAIN: usize = 64;

/// The variables after `--set`, and the text with them substituted. `sets` that named a
/// variable are removed (they are spent). Errors name the file and line of a `${name}`
/// that is not defined, or the variable (or `--set`) whose value cannot be resolved.
pub fn substitute(origin: &str, text: &str, sets: &mut Vec<Override>) -> Result<(String, IndexMap<String, String>)> {
    let (declared, lines) = declared(origin, text)?;
    // where each value was written, for errors
    let mut given: IndexMap<String, (String, String)> = declared
        .into_iter()
        .map(|(name, value)| {
            let line = lines.line_of(&["vars", &name]).map(|l| format!(":{l}")).unwrap_or_default();
            let at = format!("{origin}{line}: vars.{name}");
            (name, (value, at))
        })
        .collect();
    sets.retain(|s| match s.path.as_slice() {
        [name] if given.contains_key(name) => {
            given.insert(name.clone(), (s.value.clone(), format!("--set {s}")));
            false
        }
        _ => true,
    });
    for (name, (value, at)) in &given {
        if value.contains(['\n', '\r']) {
            return Err(Error::input(format!(
                "{at}: is more than one line: a variable's value takes the place of `${{{name}}}` in a line, so \
                 it must be one line"
            )));
        }
    }
    let mut vars = IndexMap::new();
    for name in given.keys() {
        resolve(name, &given, &mut vars, &mut Vec::new())?;
    }
    let vars: IndexMap<String, String> = given.keys().map(|n| (n.clone(), vars[n].clone())).collect();
    let mut out = String::with_capacity(text.len());
    for (n, line) in text.split_inclusive('\n').enumerate() {
        let at = format!("{origin}:{}", n + 1);
        let line = expand(line, &at, &mut |name| {
            vars.get(name).cloned().ok_or_else(|| Error::input(format!("{at}: {}", not_a_variable(name, &given))))
        })?;
        out.push_str(&line);
        if out.len() > prescan::MAX_BYTES {
            return Err(Error::input(format!(
                "{at}: with its variables substituted the scenario grows past {}",
                prescan::LIMIT
            )));
        }
    }
    Ok((out, vars))
}

/// The value of variable `name` with the variables it names resolved (into `done`);
/// `chain` holds the variables being resolved that led here, to find a cycle.
fn resolve(
    name: &str,
    given: &IndexMap<String, (String, String)>,
    done: &mut IndexMap<String, String>,
    chain: &mut Vec<String>,
) -> Result<String> {
    if let Some(v) = done.get(name) {
        return Ok(v.clone());
    }
    let (value, at) = &given[name];
    if let Some(first) = chain.iter().position(|n| n == name) {
        let mut cycle = chain[first..].to_vec();
        cycle.push(name.to_string());
        let (_, first_at) = &given[&chain[first]];
        let last = &chain[chain.len() - 1];
        let msg = if cycle.len() == 2 {
            format!("`{name}` refers to itself")
        } else {
            format!("`{name}` and `{last}` refer to each other ({})", cycle.join(" -> "))
        };
        return Err(Error::input(format!("{first_at}: {msg}: give one of them a value of its own")));
    }
    if chain.len() >= MAX_CHAIN {
        return Err(Error::input(format!("{at}: refers through more than {MAX_CHAIN} other variables")));
    }
    chain.push(name.to_string());
    let resolved = expand(value, at, &mut |r| {
        if !given.contains_key(r) {
            return Err(Error::input(format!("{at}: {}", not_a_variable(r, given))));
        }
        resolve(r, given, done, chain)
    })?;
    chain.pop();
    if resolved.len() > prescan::MAX_BYTES {
        return Err(Error::input(format!("{at}: with the variables it names, grows past {}", prescan::LIMIT)));
    }
    done.insert(name.to_string(), resolved.clone());
    Ok(resolved)
}

/// `text` with each `${name}` replaced by `value_of(name)`; `at` locates an unclosed `${`.
fn expand(text: &str, at: &str, value_of: &mut dyn FnMut(&str) -> Result<String>) -> Result<String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find('}').ok_or_else(|| Error::input(format!("{at}: `${{` without a closing `}}`")))?;
        out.push_str(&value_of(after[..end].trim())?);
        if out.len() > prescan::MAX_BYTES {
            return Err(Error::input(format!("{at}: with its variables substituted grows past {}", prescan::LIMIT)));
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn not_a_variable(name: &str, given: &IndexMap<String, (String, String)>) -> String {
    let known: Vec<&str> = given.keys().map(String::as_str).collect();
    format!(
        "`${{{name}}}` is not a variable{} (vars: {})",
        crate::suggest::hint(name, known.iter().copied()),
        if known.is_empty() { "none".to_string() } else { known.join(", ") }
    )
}

/// The `vars` mapping of the file with its values as written (references to other
/// variables kept). A file that does not parse is reported here, with its line: reading
/// on would only blame the variables it failed to define. With where the keys of the
/// file are (a value never moves a line, so they stay right after substitution).
fn declared(origin: &str, text: &str) -> Result<(IndexMap<String, String>, Lines)> {
    let (text, names) = hide_references(text);
    let (top, lines): (Value, Lines) = yaml::read(origin, &text)?;
    let vars = match &top {
        Value::Mapping(top) => top.get("vars"),
        _ => None,
    };
    let Some(vars) = vars else { return Ok((IndexMap::new(), lines)) };
    let at = |key: &str| {
        let line = lines.line_of(&["vars", key]).map(|l| format!(":{l}")).unwrap_or_default();
        format!("{origin}{line}: vars")
    };
    let vars = match vars {
        Value::Mapping(m) => m,
        Value::Null => return Ok((IndexMap::new(), lines)),
        _ => return Err(Error::input(format!("{}: expected a mapping of names to values", at("")))),
    };
    let mut out = IndexMap::new();
    for (name, v) in vars {
        let value = match v.as_text() {
            Some(text) => text,
            None => {
                return Err(Error::input(format!(
                    "{}.{name}: expected one value (text, a number or true/false), not a list or mapping",
                    at(name)
                )));
            }
        };
        out.insert(restore_references(name, &names), restore_references(&value, &names));
    }
    Ok((out, lines))
}

/// Each reference to hide is replaced by `__fathom_var_N__`, N its index in the list
/// returned. The stand-in is a plain word, so the text parses as YAML before the values
/// are known (`iodepth: ${d}` in a flow mapping would otherwise close it at the `}`).
fn hide_references(text: &str) -> (String, Vec<String>) {
    let mut out = String::with_capacity(text.len());
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        match rest[start..].find('}') {
            Some(end) => {
                out.push_str(&format!("__fathom_var_{}__", names.len()));
                names.push(rest[start..start + end + 1].to_string());
                rest = &rest[start + end + 1..];
            }
            None => {
                rest = &rest[start..];
                break;
            }
        }
    }
    out.push_str(rest);
    (out, names)
}

/// Undoes [`hide_references`] in one value.
fn restore_references(value: &str, names: &[String]) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("__fathom_var_") {
        out.push_str(&rest[..start]);
        let after = &rest[start + "__fathom_var_".len()..];
        let digits = after.find("__").map(|end| (&after[..end], end));
        match digits.and_then(|(d, end)| Some((names.get(d.parse::<usize>().ok()?)?, end))) {
            Some((name, end)) => {
                out.push_str(name);
                rest = &after[end + 2..];
            }
            None => {
                out.push_str("__fathom_var_");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str =
        "name: x\nvars:\n  seconds: 10\n  scale: 2\nworkloads:\n  a: {size: '${scale}g', duration: ${seconds}s}\n";

    fn sub(text: &str, sets: &[&str]) -> Result<(String, IndexMap<String, String>)> {
        let mut sets: Vec<Override> = sets.iter().map(|s| s.parse().unwrap()).collect();
        substitute("s.yaml", text, &mut sets)
    }

    #[test]
    fn defaults_and_sets_are_substituted() {
        let mut sets = vec!["seconds=600".parse().unwrap(), "a.bs=8k".parse().unwrap()];
        let (text, vars) = substitute("s.yaml", TEXT, &mut sets).unwrap();
        assert!(text.contains("size: '2g', duration: 600s"), "{text}");
        assert_eq!(vars["seconds"], "600");
        assert_eq!(sets.len(), 1, "the var's --set is spent, the other stays");
    }

    #[test]
    fn an_unknown_reference_names_its_line() {
        let err = sub("name: x\nworkloads:\n  a: {bs: ${blocks}}\n", &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:3: `${blocks}` is not a variable (vars: none)"), "{err}");
    }

    #[test]
    fn a_variable_may_name_others_and_a_set_reaches_through() {
        let text =
            "name: x\nvars: {reads: 70, mix: '${reads}', label: 'r${mix}w'}\nworkloads:\n  a: {rwmixread: ${mix}}\n";
        let (out, vars) = sub(text, &[]).unwrap();
        assert!(out.contains("rwmixread: 70}"), "{out}");
        assert_eq!((vars["mix"].as_str(), vars["label"].as_str()), ("70", "r70w"));
        let (out, _) = sub(text, &["reads=90"]).unwrap();
        assert!(out.contains("rwmixread: 90}"), "{out}");
        // unquoted, as in the issue
        let (out, _) =
            sub("name: x\nvars: {reads: 70, mix: ${reads}}\nworkloads: {a: {rwmixread: ${mix}}}\n", &[]).unwrap();
        assert!(out.contains("rwmixread: 70"), "{out}");
    }

    #[test]
    fn cycles_and_unknown_names_in_values_are_located() {
        let err = sub("name: x\nvars:\n  a: ${b}\n  b: x${a}\nworkloads: {}\n", &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:3: vars.a: `a` and `b` refer to each other (a -> b -> a)"), "{err}");
        let err = sub("name: x\nvars:\n  a: 1\n  b: ${b}\n", &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:4: vars.b: `b` refers to itself"), "{err}");
        let err = sub("name: x\nvars:\n  a: 1\n  b: ${c}\n", &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:4: vars.b: `${c}` is not a variable (vars: a, b)"), "{err}");
        let err = sub("name: x\nvars:\n  a: 1\n", &["a=${a}"]).unwrap_err().to_string();
        assert!(err.starts_with("--set a=${a}: `a` refers to itself"), "{err}");
    }

    #[test]
    fn a_long_chain_or_an_exploding_value_is_refused() {
        let mut text = String::from("name: x\nvars:\n");
        for i in 0..100 {
            text.push_str(&format!("  v{i}: ${{v{}}}\n", i + 1));
        }
        text.push_str("  v100: 1\n");
        let err = sub(&text, &[]).unwrap_err().to_string();
        assert!(err.contains("more than 64 other variables"), "{err}");
        let mut text = String::from("name: x\nvars:\n  v0: xxxxxxxxxxxxxxxx\n");
        for i in 1..40 {
            text.push_str(&format!("  v{i}: ${{v{}}}${{v{}}}\n", i - 1, i - 1));
        }
        let err = sub(&text, &[]).unwrap_err().to_string();
        assert!(err.contains("grows past 1 MiB"), "{err}");
    }

    #[test]
    fn duplicates_and_multi_line_values_are_refused_at_their_line() {
        let err = sub("name: x\nvars:\n  a: 1\n  a: 2\nworkloads: {w: {duration: ${a}s}}\n", &[]).unwrap_err();
        let err = err.to_string();
        assert!(err.starts_with("s.yaml:") && err.contains("`a` is given twice"), "{err}");
        let err = sub("name: x\nvars:\n  a: |\n    1\n    2\n", &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:3: vars.a: is more than one line"), "{err}");
        let err = sub("name: x\nvars:\n  a: 1\n", &["a=1\n  b: 2"]).unwrap_err().to_string();
        assert!(err.starts_with("--set a=1"), "{err}");
        let err = sub("name: x\nvars:\n  a: [1, 2]\n", &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:3: vars.a: expected one value"), "{err}");
    }
}
