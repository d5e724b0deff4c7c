//! fio's value syntax: sizes and times with fio's suffixes, arithmetic (`$mb_memory*2/4`,
//! `((1+1)*4k)`), `read,write[,trim]` pairs, lists of paths and zones; and the YAML
//! text of the values a mapping writes. Errors are plain messages; the caller puts the
//! file, line and option in front.

/// The unit a number is read in: sizes take `k`/`m`/`g`/... (with `kb_base`), times
/// take `us`/`ms`/`s`/`m`/`h`/`d` (a bare number is seconds), counts take neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Bytes; the `u64` is fio's `kb_base` (1024 unless the job says 1000).
    Size(u64),
    /// Microseconds (a bare number is seconds, as fio reads `runtime`).
    Time,
    /// Microseconds, a bare number too (as fio reads `thinktime`).
    Micros,
    /// A plain number.
    Count,
}

/// A value in `unit` (bytes, microseconds or a count), arithmetic and suffixes
/// evaluated as fio does: `4k` is 4096, `1KiB` always 1024, `2m` of time is 120 s.
pub fn number(text: &str, unit: Unit) -> Result<f64, String> {
    let t = text.trim();
    let t = t.strip_prefix("((").and_then(|s| s.strip_suffix("))")).unwrap_or(t);
    if t.is_empty() {
        return Err("expected a value".into());
    }
    let mut p = Expr { s: t.as_bytes(), at: 0, unit, depth: 0 };
    let v = p.sum()?;
    p.blank();
    if p.at != p.s.len() {
        return Err(format!("`{text}` is not a {}", unit.what()));
    }
    if !v.is_finite() || v < 0.0 {
        return Err(format!("`{text}` is not a {} (negative or out of range)", unit.what()));
    }
    Ok(v)
}

impl Unit {
    fn what(self) -> &'static str {
        match self {
            Unit::Size(_) => "size (e.g. 4k, 1g, 1GiB)",
            Unit::Time => "time (e.g. 30, 500ms, 2m)",
            Unit::Micros => "time (e.g. 2000 microseconds, 10ms)",
            Unit::Count => "number",
        }
    }

    /// What one of `suffix` is worth in this unit, if it is one.
    fn suffix(self, suffix: &str) -> Option<f64> {
        let s = suffix.to_ascii_lowercase();
        match self {
            Unit::Count => s.is_empty().then_some(1.0),
            Unit::Micros if s.is_empty() => Some(1.0),
            Unit::Time | Unit::Micros => Some(match s.as_str() {
                "" | "s" | "sec" => 1e6,
                "us" | "usec" => 1.0,
                "ms" | "msec" => 1e3,
                "m" | "min" => 60e6,
                "h" | "hour" => 3600e6,
                "d" | "day" => 86400e6,
                _ => return None,
            }),
            Unit::Size(base) => {
                let powers = ["", "k", "m", "g", "t", "p"];
                let (stem, binary) = if let Some(stem) = s.strip_suffix("ib") {
                    (stem, true)
                } else if let Some(stem) = s.strip_suffix('b').filter(|st| !st.is_empty()) {
                    (stem, base == 1024)
                } else {
                    (s.strip_suffix('b').unwrap_or(&s), base == 1024)
                };
                let power = powers.iter().position(|p| *p == stem)? as i32;
                Some(if binary { 1024f64.powi(power) } else { 1000f64.powi(power) })
            }
        }
    }
}

/// How deep parentheses, signs and powers may nest in one value. Each level is a call
/// of the reader below, so 50,000 `(` would overflow the stack and abort the process.
const MAX_NESTING: usize = 64;

/// A small recursive-descent reader of fio's arithmetic: `+ - * / % ^` and parentheses,
/// each number with an optional suffix of the option's unit.
struct Expr<'a> {
    s: &'a [u8],
    at: usize,
    unit: Unit,
    /// How many nested readings are under way (see [`MAX_NESTING`]).
    depth: usize,
}

impl Expr<'_> {
    /// `read` one level deeper, or the error of a value nested past [`MAX_NESTING`].
    fn nested(&mut self, read: impl FnOnce(&mut Self) -> Result<f64, String>) -> Result<f64, String> {
        if self.depth >= MAX_NESTING {
            return Err(format!("expression nests deeper than {MAX_NESTING}"));
        }
        self.depth += 1;
        let v = read(self);
        self.depth -= 1;
        v
    }

    fn blank(&mut self) {
        while self.s.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.blank();
        self.s.get(self.at).copied()
    }

    fn sum(&mut self) -> Result<f64, String> {
        let mut v = self.product()?;
        while let Some(op @ (b'+' | b'-')) = self.peek() {
            self.at += 1;
            let r = self.product()?;
            v = if op == b'+' { v + r } else { v - r };
        }
        Ok(v)
    }

    fn product(&mut self) -> Result<f64, String> {
        let mut v = self.power()?;
        while let Some(op @ (b'*' | b'/' | b'%')) = self.peek() {
            self.at += 1;
            let r = self.power()?;
            if op != b'*' && r == 0.0 {
                return Err("division by zero".into());
            }
            v = match op {
                b'*' => v * r,
                // fio's arithmetic is on integers
                b'/' => (v / r).trunc(),
                _ => v % r,
            };
        }
        Ok(v)
    }

    fn power(&mut self) -> Result<f64, String> {
        let base = self.atom()?;
        if self.peek() == Some(b'^') {
            self.at += 1;
            return Ok(base.powf(self.nested(Self::power)?));
        }
        Ok(base)
    }

    fn atom(&mut self) -> Result<f64, String> {
        match self.peek() {
            Some(b'(') => {
                self.at += 1;
                let v = self.nested(Self::sum)?;
                if self.peek() != Some(b')') {
                    return Err("unbalanced parentheses".into());
                }
                self.at += 1;
                Ok(v)
            }
            Some(b'-') => {
                self.at += 1;
                Ok(-self.nested(Self::atom)?)
            }
            _ => {
                let start = self.at;
                while self.s.get(self.at).is_some_and(|c| c.is_ascii_digit() || *c == b'.') {
                    self.at += 1;
                }
                let digits = std::str::from_utf8(&self.s[start..self.at]).unwrap_or_default();
                let n: f64 = digits.parse().map_err(|_| format!("expected a {}", self.unit.what()))?;
                let from = self.at;
                while self.s.get(self.at).is_some_and(u8::is_ascii_alphabetic) {
                    self.at += 1;
                }
                let suffix = std::str::from_utf8(&self.s[from..self.at]).unwrap_or_default();
                let mult = self
                    .unit
                    .suffix(suffix)
                    .ok_or_else(|| format!("`{digits}{suffix}`: unknown suffix for a {}", self.unit.what()))?;
                Ok(n * mult)
            }
        }
    }
}

/// fio's `read,write[,trim]` value: `bs=4k,64k`. A single value stands for every
/// direction; an empty one (`rate_iops=,200`) leaves that direction unset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair {
    pub read: Option<String>,
    pub write: Option<String>,
    pub trim: Option<String>,
}

/// A percentage, 0 to 100 as fio takes it: fio refuses a value beyond its range, so
/// one is refused here rather than clamped into a job the file did not ask for.
pub fn percent(text: &str) -> Result<u64, String> {
    match number(text, Unit::Count)? as u64 {
        v if v > 100 => Err(format!("{v} is out of range: expected a percentage, 0 to 100")),
        v => Ok(v),
    }
}

/// Splits a value at commas into its directions.
pub fn pair(text: &str) -> Result<Pair, String> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let part = |i: usize| parts.get(i).filter(|p| !p.is_empty()).map(|p| p.to_string());
    match parts.len() {
        1 => Ok(Pair { read: part(0), write: part(0), trim: part(0) }),
        2 | 3 => Ok(Pair { read: part(0), write: part(1), trim: part(2) }),
        _ => Err(format!("`{text}`: expected READ,WRITE[,TRIM]")),
    }
}

/// YAML text for a string: a JSON string is a YAML string.
pub fn quote(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

/// fio's zones `IO%/SPACE%:...`, a blank space share taking what the others leave.
pub fn zones(text: &str) -> Result<String, String> {
    let parts: Vec<(&str, &str)> = text.split(':').map(|z| z.split_once('/').unwrap_or((z, ""))).collect();
    let given: f64 = parts.iter().filter_map(|(_, space)| space.trim().parse::<f64>().ok()).sum();
    let blank = parts.iter().filter(|(_, space)| space.trim().is_empty()).count();
    if blank > 1 {
        return Err("only one zone may leave its share of the space blank".into());
    }
    let out: Vec<String> = parts
        .iter()
        .map(|(io, space)| match space.trim() {
            "" => format!("{io}/{}", trim_float((100.0 - given).max(0.0))),
            s => format!("{io}/{s}"),
        })
        .collect();
    Ok(out.join(":"))
}

/// fio's list of paths: `a:b`, a colon written `\:` staying in the name.
pub fn split_paths(text: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = text.trim().chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => out.last_mut().expect("one").push(chars.next().expect(":")),
            ':' => out.push(String::new()),
            c => out.last_mut().expect("one").push(c),
        }
    }
    out.retain(|p| !p.is_empty());
    out
}

pub fn in_dir(dir: Option<&str>, name: &str) -> String {
    match dir {
        Some(d) if !name.starts_with('/') => format!("{}/{name}", d.trim_end_matches('/')),
        _ => name.to_string(),
    }
}

pub fn list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| quote(s)).collect();
    format!("[{}]", quoted.join(", "))
}

pub fn trim_float(v: f64) -> String {
    if v.fract() == 0.0 { format!("{}", v as u64) } else { format!("{v}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIZE: Unit = Unit::Size(1024);

    #[test]
    fn size_suffixes_follow_kb_base() {
        assert_eq!(number("4k", SIZE), Ok(4096.0));
        assert_eq!(number("1M", SIZE), Ok(1048576.0));
        assert_eq!(number("2g", SIZE), Ok(2.0 * 1073741824.0));
        assert_eq!(number("1KiB", SIZE), Ok(1024.0));
        assert_eq!(number("512", SIZE), Ok(512.0));
        assert_eq!(number("4k", Unit::Size(1000)), Ok(4000.0));
        assert_eq!(number("4KiB", Unit::Size(1000)), Ok(4096.0), "kib is binary whatever kb_base says");
        assert!(number("4q", SIZE).unwrap_err().contains("unknown suffix"));
    }

    #[test]
    fn times_default_to_seconds() {
        assert_eq!(number("30", Unit::Time), Ok(30e6));
        assert_eq!(number("500ms", Unit::Time), Ok(500e3));
        assert_eq!(number("2m", Unit::Time), Ok(120e6));
        assert_eq!(number("1h", Unit::Time), Ok(3600e6));
        assert_eq!(number("250us", Unit::Time), Ok(250.0));
        assert_eq!(number("2000", Unit::Micros), Ok(2000.0), "thinktime's bare number");
        assert_eq!(number("10ms", Unit::Micros), Ok(10e3));
    }

    #[test]
    fn arithmetic_as_fio_evaluates_it() {
        assert_eq!(number("2048*2/4", SIZE), Ok(1024.0));
        assert_eq!(number("((1+1)*4k)", SIZE), Ok(8192.0));
        assert_eq!(number("(10-4)%4", Unit::Count), Ok(2.0));
        assert_eq!(number("2^10", Unit::Count), Ok(1024.0));
        assert_eq!(number("7/2", Unit::Count), Ok(3.0), "integer division");
        assert!(number("1/0", Unit::Count).is_err());
        assert!(number("(1+2", Unit::Count).is_err());
        assert!(number("1-5", Unit::Count).is_err(), "negative");
    }

    #[test]
    fn nesting_is_bounded_not_a_stack_overflow() {
        let deep = |n: usize| format!("{}4k{}", "(".repeat(n), ")".repeat(n));
        assert_eq!(number(&deep(MAX_NESTING - 1), SIZE), Ok(4096.0));
        let nests = Err(format!("expression nests deeper than {MAX_NESTING}"));
        assert_eq!(number(&deep(50_000), SIZE), nests);
        assert_eq!(number(&("-".repeat(50_000) + "4k"), SIZE), nests);
        assert_eq!(number(&("2^".repeat(50_000) + "2"), Unit::Count), nests);
    }

    #[test]
    fn pairs_split_by_direction() {
        let p = pair("500,200").unwrap();
        assert_eq!((p.read.as_deref(), p.write.as_deref(), p.trim), (Some("500"), Some("200"), None));
        let p = pair("4k").unwrap();
        assert_eq!((p.read.as_deref(), p.write.as_deref()), (Some("4k"), Some("4k")));
        let p = pair(",64k").unwrap();
        assert_eq!((p.read, p.write.as_deref()), (None, Some("64k")));
        assert!(pair("1,2,3,4").is_err());
    }

    #[test]
    fn a_percentage_is_0_to_100() {
        assert_eq!((percent("0"), percent("100")), (Ok(0), Ok(100)));
        assert_eq!(percent("200"), Err("200 is out of range: expected a percentage, 0 to 100".to_string()));
    }
}
