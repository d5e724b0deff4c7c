//! Secrets in what users hand fathom. Everything a run is given is kept (the scenario,
//! the command line, the programs' own error messages) and shown again (`fathom show`,
//! reports), so a password must never get in. Two lines of defence, both here:
//!
//! - [`dsn_secret`] reads a PostgreSQL connection string exactly as libpq does
//!   (`conninfo_parse` and `conninfo_uri_parse` in libpq's fe-connect.c), so a password
//!   is found in whatever form libpq would take it from, and the scenario is refused;
//! - [`redact`] masks anything that looks like a password in text on its way to the
//!   store or the terminal, for what the first line cannot see (a password in an
//!   `exec:` command line, a form no parser here knows).

use crate::error::{Error, Result};
use std::borrow::Cow;

/// The keyword of a secret that connection string `dsn` hands libpq, if any:
/// `password` (`password=...`, `user:password@` or `?password=` of a URI, percent-
/// encoded or not) or `sslpassword` (the passphrase of the client's key). An empty
/// value is no secret. `Err` (bad input): libpq would refuse the string's syntax; the
/// message quotes nothing of it, since it may hold a secret.
pub fn dsn_secret(dsn: &str) -> Result<Option<&'static str>> {
    let secret = conninfo(dsn.as_bytes())?.into_iter().find_map(|(key, value)| match key.as_str() {
        _ if value.is_empty() => None,
        "password" => Some("password"),
        "sslpassword" => Some("sslpassword"),
        _ => None,
    });
    Ok(secret)
}

/// A connection string's keyword/value pairs in the order written, as libpq reads them:
/// a URI (`postgresql://` or `postgres://`), else keyword/value pairs when it holds an
/// `=`, else a database name (what psql's `-d` and pgbench's argument make of it). A
/// URI's host list is skipped: it holds no secret.
fn conninfo(dsn: &[u8]) -> Result<Vec<(String, String)>> {
    if let Some(rest) = [&b"postgresql://"[..], b"postgres://"].iter().find_map(|p| dsn.strip_prefix(*p)) {
        uri(rest)
    } else if dsn.contains(&b'=') {
        keyword_value(dsn)
    } else {
        Ok(vec![("dbname".into(), text(dsn))])
    }
}

/// What C's `isspace` is in the C locale, which libpq uses (Rust's ASCII whitespace
/// leaves out the vertical tab).
fn space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `key = value ...`: blanks around `=` allowed; a value is single-quoted (`\'` and
/// `\\` escape) or runs to the next blank (a backslash escapes there too, blanks
/// included).
fn keyword_value(s: &[u8]) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut i = 0;
    let skip_blanks = |i: &mut usize| {
        while s.get(*i).copied().is_some_and(space) {
            *i += 1;
        }
    };
    loop {
        skip_blanks(&mut i);
        if i == s.len() {
            return Ok(out);
        }
        let start = i;
        while s.get(i).is_some_and(|&c| c != b'=' && !space(c)) {
            i += 1;
        }
        let key = &s[start..i];
        skip_blanks(&mut i);
        if s.get(i) != Some(&b'=') {
            return Err(Error::input("a keyword without `=` after it (give keyword=value pairs)"));
        }
        i += 1;
        skip_blanks(&mut i);
        let mut value = Vec::new();
        if s.get(i) == Some(&b'\'') {
            i += 1;
            loop {
                match s.get(i) {
                    None => return Err(Error::input("a quoted value without its closing quote")),
                    Some(b'\'') => break i += 1,
                    Some(b'\\') => {
                        i += 1;
                        if let Some(&c) = s.get(i) {
                            value.push(c);
                            i += 1;
                        }
                    }
                    Some(&c) => {
                        value.push(c);
                        i += 1;
                    }
                }
            }
        } else {
            while let Some(&c) = s.get(i) {
                i += 1;
                if space(c) {
                    break;
                }
                if c == b'\\' {
                    if let Some(&next) = s.get(i) {
                        value.push(next);
                        i += 1;
                    }
                } else {
                    value.push(c);
                }
            }
        }
        out.push((text(key), text(&value)));
    }
}

/// The rest of a URI after its scheme: `[user[:password]@][netloc][,...][/dbname][?param=value&...]`.
fn uri(s: &[u8]) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    // credentials: up to an `@` seen before any `/`
    let mut i = 0;
    if let Some(at) = s.iter().position(|&c| c == b'@' || c == b'/').filter(|&p| s[p] == b'@') {
        let info = &s[..at];
        let (user, password) = match info.iter().position(|&c| c == b':') {
            Some(colon) => (&info[..colon], Some(&info[colon + 1..])),
            None => (info, None),
        };
        if !user.is_empty() {
            out.push(("user".into(), decode(user)?));
        }
        if let Some(password) = password.filter(|p| !p.is_empty()) {
            out.push(("password".into(), decode(password)?));
        }
        i = at + 1;
    }
    // hosts, each `name[:port]` or `[v6][:port]`, separated by commas
    loop {
        if s.get(i) == Some(&b'[') {
            let close = s[i..]
                .iter()
                .position(|&c| c == b']')
                .ok_or_else(|| Error::input("an IPv6 host without its closing `]`"))?;
            if close == 1 {
                return Err(Error::input("an empty IPv6 host `[]`"));
            }
            i += close + 1;
            if s.get(i).is_some_and(|c| !b":/?,".contains(c)) {
                return Err(Error::input("a character after an IPv6 host other than `:`, `/`, `?` or `,`"));
            }
        } else {
            while s.get(i).is_some_and(|c| !b":/?,".contains(c)) {
                i += 1;
            }
        }
        if s.get(i) == Some(&b':') {
            while s.get(i).is_some_and(|c| !b"/?,".contains(c)) {
                i += 1;
            }
        }
        if s.get(i) != Some(&b',') {
            break;
        }
        i += 1;
    }
    if s.get(i) == Some(&b'/') {
        let start = i + 1;
        let end = s[start..].iter().position(|&c| c == b'?').map_or(s.len(), |p| start + p);
        if end > start {
            out.push(("dbname".into(), decode(&s[start..end])?));
        }
        i = end;
    }
    if s.get(i) == Some(&b'?') {
        let query = &s[i + 1..];
        // a trailing `&` ends the list; an empty parameter (`&&`) is an error
        let query = query.strip_suffix(b"&").unwrap_or(query);
        for param in query.split(|&c| c == b'&').filter(|_| !query.is_empty()) {
            let eq = param
                .iter()
                .position(|&c| c == b'=')
                .ok_or_else(|| Error::input("a URI query parameter without `=`"))?;
            let (key, value) = (&param[..eq], &param[eq + 1..]);
            if value.contains(&b'=') {
                return Err(Error::input("a URI query parameter with a second `=`"));
            }
            out.push((decode(key)?, decode(value)?));
        }
    }
    Ok(out)
}

/// A byte of `%XX` at the start of `s`, if it is one.
fn percent(s: &[u8]) -> Option<u8> {
    match s {
        [b'%', hi, lo, ..] => {
            let hex = |c: u8| (c as char).to_digit(16);
            Some((hex(*hi)? * 16 + hex(*lo)?) as u8)
        }
        _ => None,
    }
}

/// Percent-decoding as libpq does it in URIs: `%XX` only (`+` stays), `%00` refused.
fn decode(s: &[u8]) -> Result<String> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'%' {
            match percent(&s[i..]) {
                Some(0) => return Err(Error::input("`%00` in a URI")),
                Some(c) => out.push(c),
                None => return Err(Error::input("a `%` not followed by two hex digits in a URI")),
            }
            i += 3;
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    Ok(text(&out))
}

/// What a secret is replaced with.
const MASK: &str = "***";

/// `text` with anything that looks like a password replaced by `***`: the value after
/// `password=` (any case, blanks around `=`, quoted or not, the keyword percent-
/// encoded or not, so `sslpassword=`, `PGPASSWORD=`, `?%70assword=` too) and the
/// password of a URI's `user:password@`. Text without one is returned as it was.
/// Errs towards masking too much: a mask in an error message costs a little reading, a
/// password in the store is there for good.
pub fn redact(text: &str) -> Cow<'_, str> {
    let s = text.as_bytes();
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < s.len() {
        if let Some(span) = keyword_secret(s, i).or_else(|| userinfo_secret(s, i)) {
            spans.push(span);
            i = span.1.max(i + 1);
        } else {
            i += 1;
        }
    }
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for (start, end) in spans {
        out.push_str(&text[from..start]);
        out.push_str(MASK);
        from = end;
    }
    out.push_str(&text[from..]);
    Cow::Owned(out)
}

/// [`redact`] applied to every string in a JSON value (keys and structure kept).
pub fn redact_json(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(s) => Value::String(redact(s).into_owned()),
        Value::Array(items) => Value::Array(items.iter().map(redact_json).collect()),
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), redact_json(v))).collect()),
        other => other.clone(),
    }
}

/// The value's byte range when `password`, each letter as itself (any case) or
/// percent-encoded, then `=` with optional blanks around it, begins at `at`.
fn keyword_secret(s: &[u8], at: usize) -> Option<(usize, usize)> {
    let mut i = at;
    for letter in b"password" {
        match s.get(i) {
            Some(c) if c.eq_ignore_ascii_case(letter) => i += 1,
            _ => match percent(&s[i..]) {
                Some(c) if c.eq_ignore_ascii_case(letter) => i += 3,
                _ => return None,
            },
        }
    }
    while s.get(i).copied().is_some_and(space) {
        i += 1;
    }
    if s.get(i) != Some(&b'=') {
        return None;
    }
    i += 1;
    while s.get(i).copied().is_some_and(space) {
        i += 1;
    }
    let start = i;
    // in a URI's query a value ends at `&`; elsewhere `&` may be part of it
    let in_query = at > 0 && matches!(s[at - 1], b'?' | b'&');
    match s.get(i) {
        Some(&quote @ (b'\'' | b'"')) => {
            i += 1;
            while let Some(&c) = s.get(i) {
                i += 1;
                if c == b'\\' {
                    i += 1;
                } else if c == quote {
                    break;
                }
            }
        }
        _ => {
            while let Some(&c) = s.get(i) {
                if space(c) || (in_query && c == b'&') {
                    break;
                }
                i += if c == b'\\' { 2 } else { 1 };
            }
        }
    }
    let end = i.min(s.len());
    (end > start).then_some((start, end))
}

/// The password's byte range of a URI's `scheme://user:password@` whose `://` is at
/// `at`: up to the first `@` before any `/` or blank, as libpq reads it (any scheme:
/// an `http://user:secret@host` is a secret too).
fn userinfo_secret(s: &[u8], at: usize) -> Option<(usize, usize)> {
    let rest = s.get(at..)?.strip_prefix(b"://")?;
    let start = at + 3;
    let end = rest.iter().position(|&c| c == b'@' || c == b'/' || space(c)).filter(|&p| rest[p] == b'@')?;
    let colon = rest[..end].iter().position(|&c| c == b':')?;
    (colon + 1 < end).then_some((start + colon + 1, start + end))
}

/// The connection strings here were each checked against libpq's own `PQconninfoParse`
/// (libpq 5.15, PostgreSQL 15): same password found, same strings refused.
#[cfg(test)]
mod tests {
    use super::*;

    fn secret(dsn: &str) -> Option<&'static str> {
        dsn_secret(dsn).unwrap_or_else(|e| panic!("{dsn}: {e}"))
    }

    #[test]
    fn keyword_value_passwords_in_every_spelling() {
        for dsn in [
            "host=db user=a password=x",
            "password=x",
            "host=db password = 'x'",
            "host=db password =x",
            "host=db password= x",
            "host=db\tpassword\n=\x0bx",
            "password='pass word' host=db",
            "password='it\\'s' host=db",
            "password=a\\ b host=db",
            "host=db password='x'dbname=y",
            // the last one wins in libpq, but the first is in the text all the same
            "password=x password=''",
        ] {
            assert_eq!(secret(dsn), Some("password"), "{dsn}");
        }
        assert_eq!(secret("host=db sslpassword=phrase"), Some("sslpassword"));
    }

    #[test]
    fn uri_passwords_in_every_spelling() {
        for dsn in [
            "postgresql://u:p@h/db",
            "postgres://u:p@h",
            "postgresql://u:p%40ss@h:5432/db",
            "postgresql://u:p?x@h/db",
            "postgres://h/db?sslmode=require&password=x",
            "postgres://h/db?%70assword=x",
            "postgres://h/db?p%61ss%77ord=x",
            "postgres://h?password=x",
            "postgres://h1:5432,h2:5433/db?password=x",
            "postgres://[::1]:5432/db?password=x",
            "postgres://h/db?password=pass%20word&",
            "postgresql://h/db?passfile=/dev/null&password=x",
        ] {
            assert_eq!(secret(dsn), Some("password"), "{dsn}");
        }
        assert_eq!(secret("postgres://h/db?sslpassword=x"), Some("sslpassword"));
    }

    #[test]
    fn what_is_no_password_is_let_through() {
        for dsn in [
            "host=db user=passwordless dbname=passwords",
            "host=db user=a dbname='password=x'",
            "host=db passfile=/root/.pgpass",
            "host=db password=",
            "host=db password=''",
            "mydb",
            "postgresql://bench@db/bench",
            "postgresql://u:@h/db",
            "postgresql://h/db?user=passwordless",
            "postgresql://h/db?password=",
            // a URI's password is in its credentials only: this `:` is a port
            "postgresql://h:5432/db",
            // libpq reads the `@` after a `/` as part of the database name
            "postgresql://h/u:p@db",
            // libpq's keywords and schemes are case-sensitive: these are an unknown
            // keyword and a database name to it (the redaction masks them all the same)
            "host=db PASSWORD=x",
            "POSTGRES://u:p@h/db",
        ] {
            assert_eq!(secret(dsn), None, "{dsn}");
        }
    }

    #[test]
    fn what_libpq_refuses_is_refused_without_quoting_it() {
        for dsn in [
            "host=db password 'hunter2'",
            "host=db password='hunter2",
            "postgres://h/db?password",
            "postgres://h/db?password=a=hunter2",
            "postgres://h/db?password=hunter2%zz",
            "postgres://h/db?password=hunter2%00",
            "postgres://[::1/db?password=hunter2",
            "postgres://h/db?a=1&&password=hunter2",
        ] {
            let err = dsn_secret(dsn).unwrap_err().to_string();
            assert!(!err.contains("hunter2"), "{dsn}: {err}");
        }
    }

    #[test]
    fn redaction_masks_every_form() {
        let cases = [
            ("host=db password=x user=a", "host=db password=*** user=a"),
            ("password = 'pass word' user=a", "password = *** user=a"),
            ("password='it\\'s a' user=a", "password=*** user=a"),
            ("password=a\\ b user=a", "password=*** user=a"),
            ("postgresql://u:secret@h/db", "postgresql://u:***@h/db"),
            (
                "postgres://h/db?sslmode=require&password=x&user=a",
                "postgres://h/db?sslmode=require&password=***&user=a",
            ),
            ("postgres://h/db?%70assword=x", "postgres://h/db?%70assword=***"),
            ("PGPASSWORD=\"a b\" psql -c 1", "PGPASSWORD=*** psql -c 1"),
            ("sslpassword=x", "sslpassword=***"),
            ("cannot connect to `http://u:p@h:9090/`", "cannot connect to `http://u:***@h:9090/`"),
            ("dsn: host=h password=x\nname: y", "dsn: host=h password=***\nname: y"),
            ("password='unterminated", "password=***"),
            ("é password=pässwörd\\é x ü", "é password=*** x ü"),
            ("password='ß\\", "password=***"),
        ];
        for (text, want) in cases {
            assert_eq!(redact(text), want, "{text}");
        }
    }

    #[test]
    fn redaction_leaves_other_text_alone() {
        for text in [
            "user=passwordless dbname=x",
            "holds a password: give it in PGPASSWORD or ~/.pgpass",
            "postgresql://bench@db/bench",
            "postgresql://db:5432/bench",
            "http://localhost:9090/api/v1/query",
            "password=",
            "a :// b:c @d",
        ] {
            assert!(matches!(redact(text), Cow::Borrowed(_)), "{text} became {}", redact(text));
        }
    }

    #[test]
    fn json_strings_are_redacted_in_place() {
        let v = serde_json::json!({"dsn": "host=h password=x", "n": [1, "postgres://u:p@h"]});
        let want = serde_json::json!({"dsn": "host=h password=***", "n": [1, "postgres://u:***@h"]});
        assert_eq!(redact_json(&v), want);
    }
}
