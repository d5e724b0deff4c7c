//! `test.yml` as X-Ray renders it: a Jinja template whose `vars` (each with a `default`
//! and maybe a `min` and `max`) are its variables, `--set NAME=VALUE` changing them.
//! The `vars` block is read from the text before rendering (it holds no Jinja), so its
//! errors name the lines of the file; the rest is rendered by `minijinja` with undefined
//! names refused, never rendered empty.

use crate::error::{Error, Result};
use crate::scenario::yaml::{self, Value};
use crate::scenario::{Override, time_scale};
use indexmap::IndexMap;
use serde::Deserialize;

/// A var as written: `{default: D, min: A, max: B}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VarSpec {
    pub default: Value,
    pub min: Option<Value>,
    pub max: Option<Value>,
    /// Shown by X-Ray's UI only.
    #[serde(rename = "display_name")]
    pub _display_name: Option<serde::de::IgnoredAny>,
    #[serde(rename = "description")]
    pub _description: Option<serde::de::IgnoredAny>,
    /// The values X-Ray's UI offers to pick from; `--set` takes any.
    #[serde(rename = "options")]
    pub _options: Option<serde::de::IgnoredAny>,
}

/// The rendered text and the vars' values it was rendered with (in the order written).
#[derive(Debug, Clone)]
pub struct Rendered {
    pub text: String,
    pub vars: IndexMap<String, Value>,
}

/// Renders `text` (the `test.yml` at `origin`) with its vars' defaults, the `sets` that
/// name a var replacing them; those sets are removed from `sets` (the rest are fathom's).
pub fn render(origin: &str, text: &str, sets: &mut Vec<Override>) -> Result<Rendered> {
    let specs = var_specs(origin, text)?;
    let mut vars: IndexMap<String, Value> = specs.iter().map(|(n, s)| (n.clone(), s.default.clone())).collect();
    let mut given_at: IndexMap<String, String> = IndexMap::new();
    sets.retain(|s| match s.path.as_slice() {
        [name] if vars.contains_key(name) => {
            given_at.insert(name.clone(), format!("--set {s}"));
            vars.insert(name.clone(), scalar(&s.value));
            false
        }
        _ => true,
    });
    // the time scale is fathom's, taken by the loader before any key is read
    let unknown = sets.iter().find_map(|s| s.unknown_name().filter(|n| *n != time_scale::KEY).map(|n| (s, n)));
    if let Some((set, name)) = unknown {
        return Err(Error::input(format!("--set {set}: {}", not_a_var(name, &specs))));
    }
    for (name, spec) in &specs {
        let at = given_at.get(name).cloned().unwrap_or_else(|| format!("{origin}: vars.{name}.default"));
        in_bounds(name, &vars[name], spec).map_err(|why| Error::input(format!("{at}: {why}")))?;
    }
    let text = bounded(origin, text, minijinja::Value::from_serialize(&vars))?;
    Ok(Rendered { text, vars })
}

/// Why a `--set` name that is no key of fathom's is none of this scenario's vars
/// either: the nearest var offered, then every var.
fn not_a_var(name: &str, specs: &IndexMap<String, VarSpec>) -> String {
    let hint = crate::suggest::hint(name, specs.keys().map(String::as_str));
    let vars: Vec<String> = specs.keys().map(|n| format!("`{n}`")).collect();
    let vars = if vars.is_empty() { "it has none".to_string() } else { format!("its vars: {}", vars.join(", ")) };
    format!("`{name}`{hint} is not a var of this X-Ray scenario ({vars}) nor a key of fathom's")
}

/// How many steps of the template engine one rendering may take. An X-Ray test's
/// loops take thousands; nested loops over `range(100000)` would take hours.
const FUEL: u64 = 5_000_000;

/// How long the rendered text may be: it is read as a scenario, which is bounded the
/// same, so a loop writing without end stops here rather than filling memory.
const MAX_RENDERED: usize = crate::scenario::MAX_BYTES;

/// `text` rendered with `ctx`, undefined names refused, its steps and its length bounded.
fn bounded(origin: &str, text: &str, ctx: minijinja::Value) -> Result<String> {
    let mut env = minijinja::Environment::new();
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    env.set_fuel(Some(FUEL));
    let mut out = Capped { text: Vec::new(), over: false };
    let rendered = env.template_from_str(text).and_then(|t| t.render_captured_to(ctx, &mut out).map(drop));
    rendered.map_err(|e| {
        let line = e.line().map(|l| format!(":{l}")).unwrap_or_default();
        let why = match e.kind() {
            minijinja::ErrorKind::OutOfFuel => format!("runs past {FUEL} steps: a loop without end is refused"),
            minijinja::ErrorKind::WriteFailure if out.over => {
                format!("the rendered text passes {} MiB", MAX_RENDERED >> 20)
            }
            kind => format!("{kind}{}", e.detail().map(|d| format!(": {d}")).unwrap_or_default()),
        };
        Error::input(format!("{origin}{line}: rendering the template: {why}"))
    })?;
    String::from_utf8(out.text).map_err(|_| Error::input(format!("{origin}: rendering the template: not UTF-8")))
}

/// The rendered text, refusing to grow past [`MAX_RENDERED`] (`over` once it would).
struct Capped {
    text: Vec<u8>,
    over: bool,
}

impl std::io::Write for Capped {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.text.len() + buf.len() > MAX_RENDERED {
            self.over = true;
            return Err(std::io::Error::other("the rendered text is too long"));
        }
        self.text.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A `--set` value as YAML reads a scalar: `32` a number, `true` a boolean.
fn scalar(text: &str) -> Value {
    yaml::from_written::<Value>(text).unwrap_or_else(|_| Value::String(text.to_string()))
}

/// Whether `value` is within the var's `min` and `max` (numbers only), and a number
/// where the default is one, saying why not: a text where the template does arithmetic
/// would fail at the template's line, blaming it and not the `--set`.
fn in_bounds(name: &str, value: &Value, spec: &VarSpec) -> std::result::Result<(), String> {
    let num = |v: &Value| match v {
        Value::Int(n) => Some(*n as f64),
        Value::Float(x) => Some(*x),
        Value::String(s) => s.trim().parse::<f64>().ok().filter(|x| x.is_finite()),
        _ => None,
    };
    // a bound that is no number would otherwise bound nothing, silently
    let bound = |key: &str, b: &Option<Value>| match b {
        None => Ok(None),
        Some(b) => num(b)
            .map(Some)
            .ok_or_else(|| format!("var `{name}`: its {key} `{}` is not a number", b.as_text().unwrap_or_default())),
    };
    let (min, max) = (bound("min", &spec.min)?, bound("max", &spec.max)?);
    let shown = value.as_text().unwrap_or_default();
    if matches!(spec.default, Value::Int(_) | Value::Float(_)) && num(value).is_none() {
        let default = spec.default.as_text().unwrap_or_default();
        return Err(format!("var `{name}` is `{shown}`: expected a number, as its default {default} is"));
    }
    if min.is_none() && max.is_none() {
        return Ok(());
    }
    let Some(v) = num(value) else {
        return Err(format!("var `{name}` is `{shown}`: expected a number (it has a min or max)"));
    };
    if let Some(min) = min.filter(|&m| v < m) {
        return Err(format!("var `{name}` is {shown}: below its min {min}"));
    }
    if let Some(max) = max.filter(|&m| v > m) {
        return Err(format!("var `{name}` is {shown}: above its max {max}"));
    }
    Ok(())
}

/// The top-level `vars:` block, read on its own from the unrendered text (line numbers
/// kept: the lines before it are left blank).
fn var_specs(origin: &str, text: &str) -> Result<IndexMap<String, VarSpec>> {
    let lines: Vec<&str> = text.lines().collect();
    let Some(start) = lines.iter().position(|l| l.trim_end() == "vars:") else {
        return Ok(IndexMap::new());
    };
    let end = (start + 1..lines.len())
        .find(|&i| {
            let l = lines[i];
            !l.is_empty() && !l.starts_with([' ', '\t', '#'])
        })
        .unwrap_or(lines.len());
    let block = format!("{}{}\n", "\n".repeat(start), lines[start..end].join("\n"));
    #[derive(Deserialize)]
    struct Block {
        vars: Option<IndexMap<String, VarSpec>>,
    }
    Ok(yaml::from_str::<Block>(origin, &block)?.vars.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &str = "name: t\nvars:\n  n:\n    default: 2\n    min: 1\n    max: 4\n\nvms:\n{% for i in range(n) %}  - G{{ i }}: {nodes: {{ i }}}\n{% endfor %}";

    #[test]
    fn a_loop_runs_over_a_var_set_on_the_command_line() {
        let mut sets: Vec<Override> = vec!["n=3".parse().unwrap(), "size=64m".parse().unwrap()];
        let r = render("t/test.yml", T, &mut sets).unwrap();
        assert!(r.text.contains("G2: {nodes: 2}"), "{}", r.text);
        assert_eq!(sets.len(), 1, "the var's set is spent, fathom's kept");
        assert_eq!(r.vars["n"], Value::Int(3));
    }

    #[test]
    fn a_name_neither_a_var_nor_fathoms_is_offered_the_vars() {
        let mut sets: Vec<Override> = vec!["m=3".parse().unwrap(), "bs=8k".parse().unwrap()];
        let e = render("t/test.yml", T, &mut sets).unwrap_err().to_string();
        assert_eq!(e, "--set m=3: `m` is not a var of this X-Ray scenario (its vars: `n`) nor a key of fathom's");
        let mut sets: Vec<Override> = vec!["N=3".parse().unwrap()];
        let e = render("t/test.yml", T, &mut sets).unwrap_err().to_string();
        assert!(e.contains("`N` (did you mean `n`?) is not a var"), "{e}");
        let mut sets: Vec<Override> = vec!["time_scale=0.1".parse().unwrap(), "name=x".parse().unwrap()];
        assert!(render("t/test.yml", T, &mut sets).is_ok(), "fathom's keys are fathom's");
    }

    #[test]
    fn a_text_for_a_number_var_is_blamed_on_its_set() {
        let t = T.replace("    min: 1\n    max: 4\n", "");
        let mut sets: Vec<Override> = vec!["n=many".parse().unwrap(), "bs=8k".parse().unwrap()];
        let e = render("t/test.yml", &t, &mut sets).unwrap_err().to_string();
        assert_eq!(e, "--set n=many: var `n` is `many`: expected a number, as its default 2 is");
    }

    #[test]
    fn a_var_outside_its_bounds_is_named() {
        let mut sets: Vec<Override> = vec!["n=9".parse().unwrap()];
        let e = render("t/test.yml", T, &mut sets).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("--set n=9: var `n` is 9: above its max 4"), "{e}");
        // a bound that is no number is refused, not ignored; one written as text is read
        let e = render("t/test.yml", &T.replace("min: 1", "min: few"), &mut Vec::new()).unwrap_err();
        assert!(e.to_string().contains("var `n`: its min `few` is not a number"), "{e}");
        let mut sets: Vec<Override> = vec!["n=0".parse().unwrap()];
        let e = render("t/test.yml", &T.replace("min: 1", "min: '1'"), &mut sets).unwrap_err();
        assert!(e.to_string().contains("var `n` is 0: below its min 1"), "{e}");
    }

    #[test]
    fn arithmetic_and_powers_render_as_x_ray_writes_them() {
        let t = "vars:\n  iops:\n    default: 100\nx: {{ iops + 1.96 * iops ** (1/2) }}\n";
        let r = render("t", t, &mut Vec::new()).unwrap();
        assert!(r.text.contains("x: 119.6"), "{}", r.text);
    }

    #[test]
    fn a_template_is_bounded_in_steps_and_in_length() {
        let spins = "a: 1\n{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}\n";
        let e = render("t/test.yml", spins, &mut Vec::new()).unwrap_err();
        assert!(e.to_string().contains(&format!("rendering the template: runs past {FUEL} steps")), "{e}");
        let grows = "a: 1\n{% for i in range(100000) %}# a line of padding, written again and again\n{% endfor %}";
        let e = render("t/test.yml", grows, &mut Vec::new()).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("the rendered text passes 1 MiB"), "{e}");
    }

    #[test]
    fn an_undefined_name_is_an_error_at_its_line() {
        let e = render("t/test.yml", "a: 1\nb: {{ nope }}\n", &mut Vec::new()).unwrap_err();
        assert!(e.to_string().starts_with("t/test.yml:2: rendering the template"), "{e}");
    }
}
