//! The one mask for secrets in text and values fathom keeps or prints. A secret is the
//! value under a secret-like key ([`secret_key`]) or in a secret-like argument form (a
//! command line's `-P`, `--password`, `-u user:`, an `Authorization:` header, a URL's
//! `user:password@`). The rules err towards masking too much: a mask costs a little
//! reading, a password in the store is there for good.

use super::dsn::{percent, space};
use std::borrow::Cow;

/// What a secret is replaced with.
const MASK: &str = "***";

/// Words that make a key secret-like wherever they stand in it (`PGPASSWORD`,
/// `ipmi_password`, `access_token`, `client_secret`).
const SECRET_WORDS: [&str; 16] = [
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "api_key",
    "api-key",
    "accesskey",
    "access_key",
    "access-key",
    "privatekey",
    "private_key",
    "private-key",
    "credential",
    "authorization",
];

/// Words that make a key secret-like only as a whole part of it between `_`, `-` or
/// `.`: `remote_pass` and `db_pwd` are secrets, `passfile` and `compass` are not.
const SECRET_PARTS: [&str; 3] = ["pass", "pwd", "pw"];

/// Whether a key (a YAML or JSON key, a `KEY=` name, a long option's name, a hook's
/// argument) names a secret, in any case. The one predicate every mask here asks.
pub fn secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    SECRET_WORDS.iter().any(|w| key.contains(w)) || key.split(['_', '-', '.']).any(|p| SECRET_PARTS.contains(&p))
}

/// Whether `url` carries credentials (`scheme://user[:password]@host`). A URL in a
/// scenario is stored with it, so fathom refuses these rather than keep them.
pub fn url_has_credentials(url: &str) -> bool {
    let Some((_, rest)) = url.split_once("://") else { return false };
    rest.split(['/', '?', '#']).next().unwrap_or("").contains('@')
}

/// Why a URL with credentials is refused (the URL itself is not quoted: it holds them).
pub const URL_CREDENTIALS: &str = "credentials in a URL (`user:password@`) would be stored with the scenario: \
     give the address without them, and the credentials in `basic_auth` (`password_file` or `password_env`) or `bearer_token_file` (or `bearer_token_env`)";

/// A masked value's byte range; `quote` when the mask must be written `"***"` (a bare
/// `***` where a YAML value begins would be read as an alias).
#[derive(Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
    quote: bool,
}

/// `text` with every secret replaced by `***`. A quoted value keeps its quotes, and an
/// unquoted one stops before a quote that closes the string around it, so a masked YAML
/// or JSON text still parses. Text without a secret is returned as it was.
pub fn redact(text: &str) -> Cow<'_, str> {
    let s = text.as_bytes();
    let mut spans: Vec<Span> = Vec::new();
    let mut i = 0;
    while i < s.len() {
        if let Some(mut span) = secret_at(s, i) {
            while !text.is_char_boundary(span.end) {
                span.end += 1;
            }
            spans.push(span);
            i = span.end.max(i + 1);
        } else {
            i += 1;
        }
    }
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for span in spans {
        out.push_str(&text[from..span.start]);
        out.push_str(if span.quote { "\"***\"" } else { MASK });
        from = span.end;
    }
    out.push_str(&text[from..]);
    Cow::Owned(out)
}

/// [`redact`] applied to every string in a JSON value, and the whole value under a
/// secret-like key replaced by `"***"`, whatever it is (keys and structure kept).
pub fn redact_json(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(s) => Value::String(redact(s).into_owned()),
        Value::Array(items) => Value::Array(items.iter().map(redact_json).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), if secret_key(k) { Value::String(MASK.into()) } else { redact_json(v) }))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// [`redact`] for a YAML text that must still parse once stored (a scenario): when
/// `read` (the caller's YAML reader: this leaf reads no YAML) reads the text and not its
/// masked form, the value read is written instead, as JSON (which YAML reads), with
/// [`redact_json`]'s masks. A fallback that always parses.
pub fn redact_yaml<'a>(text: &'a str, read: impl Fn(&str) -> Option<serde_json::Value>) -> Cow<'a, str> {
    let masked = redact(text);
    if matches!(masked, Cow::Borrowed(_)) || read(&masked).is_some() {
        return masked;
    }
    let Some(value) = read(text) else { return masked };
    let body = serde_json::to_string_pretty(&redact_json(&value)).unwrap_or_default();
    Cow::Owned(format!("# the scenario as read, secrets masked (its masked text would not parse)\n{body}\n"))
}

fn secret_at(s: &[u8], at: usize) -> Option<Span> {
    keyword_secret(s, at).or_else(|| option_secret(s, at)).or_else(|| userinfo_secret(s, at))
}

/// What may stand in a key: letters, digits, `_`, `-`, `.` and `%` (a URI's encoded
/// letter).
fn key_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.' | b'%')
}

/// The key beginning at `at` (quoted, or a run of key characters), lower-cased and
/// percent-decoded, with where it ends and whether it was quoted.
fn key_at(s: &[u8], at: usize) -> Option<(String, usize, bool)> {
    if let q @ (b'"' | b'\'') = s[at] {
        let len = s[at + 1..].iter().position(|&c| c == q || c == b'\n')?;
        let end = at + 1 + len;
        return (s[end] == q && len > 0).then(|| (decoded(&s[at + 1..end]), end + 1, true));
    }
    let len = s[at..].iter().position(|&c| !key_char(c)).unwrap_or(s.len() - at);
    (len > 0).then(|| (decoded(&s[at..at + len]), at + len, false))
}

fn decoded(key: &[u8]) -> String {
    let mut out = Vec::with_capacity(key.len());
    let mut i = 0;
    while i < key.len() {
        match percent(&key[i..]) {
            Some(c) => {
                out.push(c);
                i += 3;
            }
            None => {
                out.push(key[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).to_ascii_lowercase()
}

/// Where a `key:` stands: at a line's start (after indentation and `- `), in a flow
/// mapping (after `{`, `[` or `,`), or at a string's start (after a quote: `-H
/// 'X-Api-Key: ...'`). Elsewhere it is prose ("holds a password: give it ...").
#[derive(Clone, Copy, PartialEq)]
enum Place {
    Block,
    Flow,
    Quote,
}

fn place(s: &[u8], at: usize) -> Option<Place> {
    let mut j = at;
    loop {
        while j > 0 && matches!(s[j - 1], b' ' | b'\t') {
            j -= 1;
        }
        match j.checked_sub(1).map(|p| s[p]) {
            None | Some(b'\n' | b'\r') => return Some(Place::Block),
            Some(b'{' | b'[' | b',') => return Some(Place::Flow),
            Some(b'"' | b'\'') => return Some(Place::Quote),
            Some(b'-') if j < at && (j == 1 || matches!(s[j - 2], b' ' | b'\t' | b'\n' | b'\r')) => j -= 1,
            _ => return None,
        }
    }
}

/// How an unquoted value ends: a word at a blank (`KEY=value`, an option's value; `&`
/// too in a URI's query), a block YAML value at the line's end or a comment, a flow
/// value at `,`, `}` or `]` as well.
#[derive(Clone, Copy, PartialEq)]
enum Ends {
    Word { query: bool },
    Line,
    Flow,
}

/// The value's byte range after `KEY=` or `KEY:` when the key at `at` is secret-like.
fn keyword_secret(s: &[u8], at: usize) -> Option<Span> {
    if at > 0 && key_char(s[at - 1]) {
        return None;
    }
    let (key, after, quoted_key) = key_at(s, at)?;
    if !secret_key(&key) {
        return None;
    }
    let header = key.ends_with("authorization");
    let skip = |mut i: usize, blank: fn(u8) -> bool| {
        while s.get(i).copied().is_some_and(blank) {
            i += 1;
        }
        i
    };
    let eq = skip(after, space);
    if !quoted_key && s.get(eq) == Some(&b'=') {
        let query = at > 0 && matches!(s[at - 1], b'?' | b'&');
        let (start, end, _) = value(s, scheme(s, skip(eq + 1, space), header), Ends::Word { query })?;
        return Some(Span { start, end, quote: false });
    }
    if s.get(after) != Some(&b':') {
        return None;
    }
    let place = place(s, at).or(header.then_some(Place::Quote))?;
    if !quoted_key && s.get(after + 1).is_some_and(|&c| !matches!(c, b' ' | b'\t')) {
        return None;
    }
    let from = skip(after + 1, |c| matches!(c, b' ' | b'\t'));
    let begin = scheme(s, from, header);
    let ends = if place == Place::Flow || quoted_key { Ends::Flow } else { Ends::Line };
    let (start, end, quoted) = value(s, begin, ends)?;
    Some(Span { start, end, quote: !quoted && begin == from && place != Place::Quote })
}

/// Past an `Authorization` value's scheme word (`Bearer `, `Basic `), so the mask falls
/// on the credential.
fn scheme(s: &[u8], at: usize, header: bool) -> usize {
    let len = s[at.min(s.len())..].iter().position(|c| !c.is_ascii_alphabetic()).unwrap_or(0);
    if header && len > 0 && s.get(at + len) == Some(&b' ') && s.get(at + len + 1).is_some_and(|&c| !space(c)) {
        at + len + 1
    } else {
        at
    }
}

/// Whether the byte at `j` ends an unquoted value. A quote (or `,`, `}`, `]` in a word)
/// ends it only when the string around it ends there too (a blank, a `,`, `}`, `]`, a
/// quote or the text's end follows), so that a mask never swallows a closing quote.
fn ends_here(s: &[u8], j: usize, ends: Ends) -> bool {
    let closes = s.get(j + 1).is_none_or(|&n| space(n) || b",}]\"'".contains(&n));
    let word = matches!(ends, Ends::Word { .. });
    match s[j] {
        b'\n' | b'\r' => true,
        b'"' | b'\'' => closes,
        b',' | b'}' | b']' => ends == Ends::Flow || (word && closes),
        // a list in prose, `(user=a, password: x) on h1`: the parenthesis closes it,
        // and the rest of the line is not the secret's
        b')' => ends == Ends::Flow && closes,
        b'&' => ends == Ends::Word { query: true },
        b'#' => !word && j > 0 && matches!(s[j - 1], b' ' | b'\t'),
        c => word && space(c),
    }
}

/// A value's byte range from `i` and whether it was quoted: inside its quotes (`'...'`,
/// `"..."`, or `\"...\"` within a double-quoted string), else to where it ends. `None`
/// when empty: an empty value is no secret.
fn value(s: &[u8], i: usize, ends: Ends) -> Option<(usize, usize, bool)> {
    let escaped = s.get(i) == Some(&b'\\') && matches!(s.get(i + 1), Some(b'"' | b'\''));
    if let Some(&q @ (b'"' | b'\'')) = s.get(i + usize::from(escaped)) {
        let start = i + 1 + usize::from(escaped);
        let mut j = start;
        while let Some(&c) = s.get(j) {
            let doubled = c == q && q == b'\'' && !matches!(ends, Ends::Word { .. }) && s.get(j + 1) == Some(&q);
            if escaped && c == b'\\' && s.get(j + 1) == Some(&q) || !escaped && c == q && !doubled {
                break;
            }
            j += if c == b'\\' || doubled { 2 } else { 1 };
        }
        let end = j.min(s.len());
        return (end > start).then_some((start, end, true));
    }
    let mut j = i;
    while j < s.len() && !ends_here(s, j, ends) {
        j += if s[j] == b'\\' && matches!(ends, Ends::Word { .. }) { 2 } else { 1 };
    }
    let mut end = j.min(s.len());
    while end > i && !matches!(ends, Ends::Word { .. }) && matches!(s[end - 1], b' ' | b'\t') {
        end -= 1;
    }
    (end > i).then_some((i, end, false))
}

/// A command line's option beginning at `at` (after a blank, a quote or a bracket):
/// its name's bytes.
fn option_at(s: &[u8], at: usize) -> Option<&[u8]> {
    if s[at] != b'-' || at > 0 && !(space(s[at - 1]) || b"'\"([{,=".contains(&s[at - 1])) {
        return None;
    }
    let len = s[at..].iter().position(|&c| !(c.is_ascii_alphanumeric() || c == b'-' || c == b'_'));
    Some(&s[at..at + len.unwrap_or(s.len() - at)])
}

/// The secret of a command line's option at `at`: `-P VALUE`, `-PVALUE`, `-pVALUE`
/// (`-p 5432` is a port), `--NAME VALUE` for a secret-like NAME (`--NAME=` is a
/// keyword), and the password of `-u user:VALUE`, `-uuser:VALUE`, `--user user:VALUE`.
fn option_secret(s: &[u8], at: usize) -> Option<Span> {
    let name = option_at(s, at)?;
    let next = at + name.len();
    // a separate value: after blanks on the same line, not another option
    let separate = || {
        let j = next + s[next..].iter().position(|&c| !matches!(c, b' ' | b'\t')).unwrap_or(s.len() - next);
        (j > next && s.get(j).is_some_and(|&c| c != b'-')).then_some(j)
    };
    let word = Ends::Word { query: false };
    let whole = |j: usize| value(s, j, word).map(|(start, end, _)| Span { start, end, quote: false });
    let after_colon = |j: usize| {
        let (start, end, _) = value(s, j, word)?;
        let colon = start + s[start..end].iter().position(|&c| c == b':')? + 1;
        (colon < end).then_some(Span { start: colon, end, quote: false })
    };
    match name {
        b"-u" | b"-U" | b"--user" | b"--proxy-user" => match s.get(next) {
            Some(b'=') if name.starts_with(b"--") => after_colon(next + 1),
            _ => after_colon(separate()?),
        },
        [b'-', b'u', ..] => after_colon(at + 2),
        b"-P" => whole(separate()?),
        [b'-', b'P' | b'p', _, ..] => whole(at + 2),
        [b'-', b'-', rest @ ..] if secret_key(&String::from_utf8_lossy(rest)) => whole(separate()?),
        _ => None,
    }
}

/// The password's byte range of a URI's `scheme://user:password@` whose `://` is at
/// `at`: up to the first `@` before any `/` or blank, as libpq reads it (any scheme:
/// an `http://user:secret@host` is a secret too).
fn userinfo_secret(s: &[u8], at: usize) -> Option<Span> {
    let rest = s.get(at..)?.strip_prefix(b"://")?;
    let start = at + 3;
    let end = rest.iter().position(|&c| c == b'@' || c == b'/' || space(c)).filter(|&p| rest[p] == b'@')?;
    let colon = rest[..end].iter().position(|&c| c == b':')?;
    (colon + 1 < end).then_some(Span { start: start + colon + 1, end: start + end, quote: false })
}

#[cfg(test)]
mod tests;
