//! `vars`: named values a scenario uses as `${name}` in any value, with defaults in the
//! file and `--set name=value` to change them, so one built-in scenario runs short in CI
//! and at field length with one flag (`--set duration=30m`).
//!
//! Substitution is textual and happens before the YAML is read, so a variable can stand
//! for any part of a value (`size: ${scale}g`) and line numbers of errors stay right.

use super::overrides::Override;
use indexmap::IndexMap;
use serde_yaml::Value;

/// The variables after `--set`, and the text with them substituted. `sets` that named a
/// variable are removed (they are spent). Errors name the line of a `${name}` that is
/// not defined.
pub fn substitute(text: &str, sets: &mut Vec<Override>) -> Result<(String, IndexMap<String, String>), String> {
    let mut vars = declared(text);
    sets.retain(|s| match s.path.as_slice() {
        [name] if vars.contains_key(name) => {
            vars.insert(name.clone(), s.value.clone());
            false
        }
        _ => true,
    });
    let mut out = String::with_capacity(text.len());
    for (n, line) in text.split_inclusive('\n').enumerate() {
        let mut rest = line;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let end = after.find('}').ok_or_else(|| format!("line {}: `${{` without a closing `}}`", n + 1))?;
            let name = after[..end].trim();
            let value = vars.get(name).ok_or_else(|| {
                let known: Vec<&str> = vars.keys().map(String::as_str).collect();
                format!(
                    "line {}: `${{{name}}}` is not a variable (vars: {})",
                    n + 1,
                    if known.is_empty() { "none".to_string() } else { known.join(", ") }
                )
            })?;
            out.push_str(value);
            rest = &after[end + 1..];
        }
        out.push_str(rest);
    }
    Ok((out, vars))
}

/// The `vars` mapping of the file with its values as text; empty if there is none or
/// the file does not parse (the caller reports that with its line).
fn declared(text: &str) -> IndexMap<String, String> {
    let Ok(Value::Mapping(top)) = serde_yaml::from_str::<Value>(&blank_out_references(text)) else {
        return IndexMap::new();
    };
    let Some(Value::Mapping(vars)) = top.get("vars") else { return IndexMap::new() };
    vars.iter()
        .filter_map(|(k, v)| {
            let value = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => return None,
            };
            Some((k.as_str()?.to_string(), value))
        })
        .collect()
}

/// The text with each `${...}` replaced by `0`, so it parses as YAML before the values
/// are known (`size: ${scale}g` would otherwise be fine, but `iodepth: ${d}` is a flow
/// mapping to YAML).
fn blank_out_references(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        match rest[start..].find('}') {
            Some(end) => {
                out.push('0');
                rest = &rest[start + end + 1..];
            }
            None => {
                rest = &rest[start..];
                break;
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

    #[test]
    fn defaults_and_sets_are_substituted() {
        let mut sets = vec!["seconds=600".parse().unwrap(), "a.bs=8k".parse().unwrap()];
        let (text, vars) = substitute(TEXT, &mut sets).unwrap();
        assert!(text.contains("size: '2g', duration: 600s"), "{text}");
        assert_eq!(vars["seconds"], "600");
        assert_eq!(sets.len(), 1, "the var's --set is spent, the other stays");
    }

    #[test]
    fn an_unknown_reference_names_its_line() {
        let err = substitute("name: x\nworkloads:\n  a: {bs: ${blocks}}\n", &mut vec![]).unwrap_err();
        assert!(err.starts_with("line 3: `${blocks}` is not a variable (vars: none)"), "{err}");
    }
}
