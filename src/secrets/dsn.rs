//! Reading a PostgreSQL connection string as libpq does, to find a password in it.

use crate::error::{Error, Result};

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

/// The server connection string `dsn` reaches, as `host:port` (libpq's defaults for
/// what it leaves out: PGHOST and PGPORT, else the local socket and 5432): what an error
/// or a wait about it names.
pub fn dsn_server(dsn: &str) -> String {
    let pairs = conninfo(dsn.as_bytes()).unwrap_or_default();
    let value = |key: &str, env: &str, default: &str| {
        let given = pairs.iter().rev().find(|(k, v)| k == key && !v.is_empty()).map(|(_, v)| v.clone());
        given.or_else(|| std::env::var(env).ok()).unwrap_or_else(|| default.to_string())
    };
    format!("{}:{}", value("host", "PGHOST", "the local socket"), value("port", "PGPORT", "5432"))
}

/// A connection string's keyword/value pairs in the order written, as libpq reads them:
/// a URI (`postgresql://` or `postgres://`), else keyword/value pairs when it holds an
/// `=`, else a database name (what psql's `-d` and pgbench's argument make of it). A
/// URI's first host and port are kept, the others skipped: they hold no secret.
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
pub(super) fn space(c: u8) -> bool {
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
    let first = i;
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
    // the first host and port, to say which server a wait is for
    let netloc = &s[first..i];
    let netloc = &netloc[..netloc.iter().position(|&c| c == b',').unwrap_or(netloc.len())];
    let colon = netloc.iter().rposition(|&c| c == b':').filter(|&c| !netloc[c..].contains(&b']'));
    let (host, port) = colon.map_or((netloc, &b""[..]), |c| (&netloc[..c], &netloc[c + 1..]));
    for (key, value) in [("host", host), ("port", port)].into_iter().filter(|(_, v)| !v.is_empty()) {
        out.push((key.into(), decode(value)?));
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
pub(super) fn percent(s: &[u8]) -> Option<u8> {
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
}
