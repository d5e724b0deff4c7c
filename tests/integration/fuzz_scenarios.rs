//! The scenario loader under mutation: the built-in scenarios with lines deleted or
//! duplicated, characters swapped and hostile values put in, each fed to the real
//! `fathom lint`. Whatever the text, lint ends with 0, 2 or 3 (never a panic) within a
//! bound per case, and an error reads in fathom's words, not its libraries'. 64 cases
//! keep it to seconds in a debug build; set PROPTEST_CASES to run more.

use crate::common::{Bound, Scratch, within};
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How far one `fathom lint` may go: a debug build lints in well under a second of CPU;
/// the quadratic parse this guards against took 28 s.
const PER_CASE: Bound = Bound { cpu: Duration::from_secs(10), clock: Duration::from_secs(120) };

/// Values a careless or hostile author puts where a number, a size or a name goes.
const HOSTILE: &[&str] = &[
    "4294967295",
    "18446744073709551616",
    "-1",
    "0",
    "nan",
    ".inf",
    "1e400",
    "[[[[",
    "{",
    "''",
    "~",
    "${nope}",
    "${",
    "*alias",
    "&anchor",
    "!!binary x",
    "\u{feff}",
    "\"\\n\"",
    "- - - -",
    "a: b: c",
];

/// Phrases of the YAML and serde libraries (Rust types, their functions, their parser's
/// terms): an error a user can get reads in fathom's words, none of these.
pub const LIBRARY_WORDS: &[&str] = &[
    "from_str",
    "expected u8",
    "expected u16",
    "expected u32",
    "expected u64",
    "expected usize",
    "expected i64",
    "expected f64",
    "invalid type",
    "invalid value",
    "unknown field",
    "unknown variant",
    "missing field",
    "unit value",
    "expected a map",
    "expected a sequence",
    "expected a string",
    "expected a boolean",
    "expected struct",
    "untagged enum",
    "while parsing",
    "while scanning",
    "in this context",
    "did not find expected",
    "configured policy",
    "scalar",
    "duplicate entry",
    "serde",
    "saphyr",
];

/// The first of [`LIBRARY_WORDS`] in `text` as a word of its own (`expected a map`, not
/// fathom's `expected a mapping`).
pub fn library_words(text: &str) -> Option<&'static str> {
    let whole = |w: &str| {
        text.match_indices(w).any(|(i, _)| !text[i + w.len()..].starts_with(|c: char| c.is_ascii_alphanumeric()))
    };
    LIBRARY_WORDS.iter().copied().find(|w| whole(w))
}

/// One change to a scenario's text; positions are taken modulo its length.
#[derive(Debug, Clone)]
enum Mutation {
    DeleteLine(usize),
    DuplicateLine(usize),
    SwapChars(usize),
    /// Replaces the value after the first `:` of a line (or appends) with a hostile one.
    Value(usize, usize),
    /// Deep brackets or a long string at a line's value.
    Long(usize, bool, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::DeleteLine),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        any::<usize>().prop_map(Mutation::SwapChars),
        (any::<usize>(), 0..HOSTILE.len()).prop_map(|(l, v)| Mutation::Value(l, v)),
        (any::<usize>(), any::<bool>(), 1usize..200_000).prop_map(|(l, b, n)| Mutation::Long(l, b, n)),
    ]
}

fn apply(text: &str, m: &Mutation) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.is_empty() {
        return text.to_string();
    }
    let n = lines.len();
    let set_value = |line: &mut String, value: &str| {
        *line = match line.find(':') {
            Some(colon) => format!("{} {value}", &line[..=colon]),
            None => format!("{line}{value}"),
        }
    };
    match *m {
        Mutation::DeleteLine(i) => {
            lines.remove(i % n);
        }
        Mutation::DuplicateLine(i) => {
            let line = lines[i % n].clone();
            lines.insert(i % n, line);
        }
        Mutation::SwapChars(i) => {
            let mut chars: Vec<char> = lines.join("\n").chars().collect();
            let at = i % chars.len().saturating_sub(1).max(1);
            if at + 1 < chars.len() {
                chars.swap(at, at + 1);
            }
            return chars.into_iter().collect::<String>() + "\n";
        }
        Mutation::Value(i, v) => set_value(&mut lines[i % n], HOSTILE[v]),
        Mutation::Long(i, deep, len) => {
            let value = if deep { "[".repeat(len) } else { "x".repeat(len) };
            set_value(&mut lines[i % n], &value);
        }
    }
    lines.join("\n") + "\n"
}

fn builtins() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/scenario/builtin");
    let mut all: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    all.sort();
    all.into_iter()
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(p).unwrap()))
        .collect()
}

/// Runs `fathom lint` on `text`: its exit status and stderr, or an error if it went
/// past [`PER_CASE`] (then it is killed).
fn lint(s: &Scratch, text: &str) -> Result<(Option<i32>, String), String> {
    let path = s.dir.join("mutant.yaml");
    std::fs::write(&path, text).unwrap();
    // as a file, not a built-in, nothing creates the built-ins' target: lint, as run,
    // refuses a target in a directory that does not exist
    std::fs::create_dir_all(s.dir.join("fathom-data")).unwrap();
    let out = within(s, s.fathom(&["lint", path.to_str().unwrap()]), PER_CASE)?;
    Ok((out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned()))
}

#[test]
fn every_builtin_lints_cleanly_unmutated() {
    let s = Scratch::new("fuzz-builtins");
    for (name, text) in builtins() {
        let (code, err) = lint(&s, &text).unwrap();
        assert_eq!(code, Some(0), "{name}: {err}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(64),
        max_shrink_iters: 64,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn mutated_builtins_end_in_0_2_or_3_without_a_panic(
        which in any::<usize>(),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let all = builtins();
        let (name, text) = &all[which % all.len()];
        let mutant = mutations.iter().fold(text.clone(), |t, m| apply(&t, m));
        let s = Scratch::new("fuzz-mutant");
        let result = lint(&s, &mutant);
        prop_assert!(result.is_ok(), "{name} {mutations:?}: {}", result.unwrap_err());
        let (code, err) = result.unwrap();
        prop_assert!(matches!(code, Some(0 | 2 | 3)), "{name} {mutations:?}: exit {code:?}: {err}");
        prop_assert!(!err.contains("panicked") && !err.contains("RUST_BACKTRACE"), "{name} {mutations:?}: {err}");
        prop_assert!(code != Some(2) || library_words(&err).is_none(), "{name} {mutations:?}: {err}");
    }
}
