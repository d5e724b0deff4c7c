//! Sizes (`4k`, `1GiB`) and durations (`30s`, `5m`) as written in scenarios and `--set`.
//!
//! Conventions follow fio, which our users already write: size suffixes are binary
//! (k = KiB = 1024, as fio's default `kb_base=1024`), a bare number is bytes, and a bare
//! duration is seconds.

use crate::error::{Error, Result};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;
use std::time::Duration;

/// A number of bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Size(pub u64);

/// A span of time, parsed from `500ms`, `30s`, `5m`, `1h` or a bare number of seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Span(pub Duration);

/// Splits `"1.5GiB"` into `(1.5, "gib")`.
fn split_number(text: &str) -> Option<(f64, String)> {
    let t = text.trim();
    let end = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(end);
    let value: f64 = num.parse().ok()?;
    if !value.is_finite() || value < 0.0 {
        return None;
    }
    Some((value, unit.trim().to_ascii_lowercase()))
}

impl Size {
    pub fn parse(text: &str) -> Result<Size> {
        let bad = || {
            Error::input(format!(
                "invalid size `{text}`: expected a number with an optional unit, e.g. 4k, 512KiB, 1g, 2GiB"
            ))
        };
        let (value, unit) = split_number(text).ok_or_else(bad)?;
        let mult: u64 = match unit.as_str() {
            "" | "b" => 1,
            "k" | "kb" | "kib" => 1 << 10,
            "m" | "mb" | "mib" => 1 << 20,
            "g" | "gb" | "gib" => 1 << 30,
            "t" | "tb" | "tib" => 1 << 40,
            _ => return Err(bad()),
        };
        let bytes = value * mult as f64;
        if bytes > u64::MAX as f64 / 2.0 {
            return Err(Error::input(format!("invalid size `{text}`: too large")));
        }
        if bytes.fract() != 0.0 {
            return Err(Error::input(format!("invalid size `{text}`: not a whole number of bytes")));
        }
        Ok(Size(bytes as u64))
    }
}

impl Size {
    /// For people: `1 GiB`, `64 MiB`, `1.5 GiB`, `512 B`.
    pub fn human(self) -> String {
        let units = [(1u64 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
        for (mult, unit) in units {
            if self.0 >= mult {
                let v = self.0 as f64 / mult as f64;
                return if v.fract() == 0.0 { format!("{v} {unit}") } else { format!("{v:.1} {unit}") };
            }
        }
        format!("{} B", self.0)
    }
}

impl fmt::Display for Size {
    /// The largest binary unit that divides the size exactly, so `Display` round-trips.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let units = [(1u64 << 40, "t"), (1 << 30, "g"), (1 << 20, "m"), (1 << 10, "k")];
        for (mult, suffix) in units {
            if self.0 >= mult && self.0.is_multiple_of(mult) {
                return write!(f, "{}{}", self.0 / mult, suffix);
            }
        }
        write!(f, "{}", self.0)
    }
}

impl Span {
    pub fn parse(text: &str) -> Result<Span> {
        let bad = || {
            Error::input(format!("invalid duration `{text}`: expected a number with a unit, e.g. 500ms, 30s, 5m, 1h"))
        };
        let (value, unit) = split_number(text).ok_or_else(bad)?;
        let secs = match unit.as_str() {
            "ms" => value / 1000.0,
            "" | "s" | "sec" => value,
            "m" | "min" => value * 60.0,
            "h" => value * 3600.0,
            _ => return Err(bad()),
        };
        if secs > 1e9 {
            return Err(Error::input(format!("invalid duration `{text}`: too long")));
        }
        Ok(Span(Duration::from_secs_f64(secs)))
    }
}

/// For command-line options (`--min 10s`).
impl std::str::FromStr for Span {
    type Err = Error;

    fn from_str(text: &str) -> Result<Span> {
        Span::parse(text)
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0.as_millis();
        if !ms.is_multiple_of(1000) {
            write!(f, "{ms}ms")
        } else if ms.is_multiple_of(3_600_000) && ms > 0 {
            write!(f, "{}h", ms / 3_600_000)
        } else if ms.is_multiple_of(60_000) && ms > 0 {
            write!(f, "{}m", ms / 60_000)
        } else {
            write!(f, "{}s", ms / 1000)
        }
    }
}

/// `jobs`: a number of workers, or `cores`: one per online CPU of the machine fathom
/// runs on, as vioperf runs a thread per core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Jobs {
    Count(u32),
    Cores,
}

impl Jobs {
    pub fn parse(text: &str) -> Result<Jobs> {
        match text.trim() {
            "cores" => Ok(Jobs::Cores),
            t => t.parse().map(Jobs::Count).map_err(|_| {
                Error::input(format!("`{text}` is not a number of jobs: expected a whole number, or `cores`"))
            }),
        }
    }
}

impl<'de> Deserialize<'de> for Jobs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(TextOrNumber(Jobs::parse, "a number of jobs, or `cores`"))
    }
}

impl Serialize for Jobs {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Jobs::Count(n) => s.serialize_u32(*n),
            Jobs::Cores => s.serialize_str("cores"),
        }
    }
}

/// Deserializes from a YAML string or a bare number, so `bs: 4096` and `bs: 4k` both work.
struct TextOrNumber<T>(fn(&str) -> Result<T>, &'static str);

impl<'de, T> Visitor<'de> for TextOrNumber<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.1)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<T, E> {
        (self.0)(v).map_err(E::custom)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<T, E> {
        (self.0)(&v.to_string()).map_err(E::custom)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<T, E> {
        (self.0)(&v.to_string()).map_err(E::custom)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<T, E> {
        (self.0)(&v.to_string()).map_err(E::custom)
    }
}

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(TextOrNumber(Size::parse, "a size such as 4k or 1GiB"))
    }
}

impl<'de> Deserialize<'de> for Span {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(TextOrNumber(Span::parse, "a duration such as 30s or 5m"))
    }
}

impl Serialize for Size {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl Serialize for Span {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

/// Serializes a `Duration` the way scenarios write it (`30s`), for stored profiles.
pub fn serialize_duration<S: Serializer>(d: &Duration, s: S) -> std::result::Result<S::Ok, S::Error> {
    Span(*d).serialize(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_use_binary_suffixes_like_fio() {
        assert_eq!(Size::parse("4096").unwrap(), Size(4096));
        assert_eq!(Size::parse("4k").unwrap(), Size(4096));
        assert_eq!(Size::parse("4K").unwrap(), Size(4096));
        assert_eq!(Size::parse("512KiB").unwrap(), Size(512 << 10));
        assert_eq!(Size::parse("1m").unwrap(), Size(1 << 20));
        assert_eq!(Size::parse("2GiB").unwrap(), Size(2 << 30));
        assert_eq!(Size::parse("1.5g").unwrap(), Size(3 << 29));
        assert_eq!(Size::parse("1t").unwrap(), Size(1 << 40));
        assert_eq!(Size::parse(" 8 k ").unwrap(), Size(8192));
    }

    #[test]
    fn bad_sizes_say_what_was_expected() {
        for bad in ["", "k", "4q", "-1k", "1.2.3k", "abc", "0.3"] {
            let err = Size::parse(bad).unwrap_err().to_string();
            assert!(err.contains("size"), "{bad}: {err}");
        }
    }

    #[test]
    fn durations() {
        assert_eq!(Span::parse("30s").unwrap().0, Duration::from_secs(30));
        assert_eq!(Span::parse("30").unwrap().0, Duration::from_secs(30));
        assert_eq!(Span::parse("500ms").unwrap().0, Duration::from_millis(500));
        assert_eq!(Span::parse("5m").unwrap().0, Duration::from_secs(300));
        assert_eq!(Span::parse("1.5h").unwrap().0, Duration::from_secs(5400));
        assert!(Span::parse("5d").is_err());
        assert!(Span::parse("fast").is_err());
    }

    #[test]
    fn human_sizes() {
        assert_eq!(Size(1 << 30).human(), "1 GiB");
        assert_eq!(Size(3 << 29).human(), "1.5 GiB");
        assert_eq!(Size(4096).human(), "4 KiB");
        assert_eq!(Size(100).human(), "100 B");
    }

    #[test]
    fn display_round_trips() {
        for text in ["4k", "1g", "3m", "4097", "2t"] {
            assert_eq!(Size::parse(text).unwrap().to_string(), text);
        }
        for text in ["500ms", "30s", "5m", "2h"] {
            assert_eq!(Span::parse(text).unwrap().to_string(), text);
        }
    }

    #[test]
    fn yaml_numbers_and_strings_both_deserialize() {
        let s: Size = crate::scenario::yaml::from_str("s.yaml", "4096").unwrap();
        assert_eq!(s, Size(4096));
        let s: Size = crate::scenario::yaml::from_str("s.yaml", "64k").unwrap();
        assert_eq!(s, Size(65536));
        let d: Span = crate::scenario::yaml::from_str("s.yaml", "10").unwrap();
        assert_eq!(d.0, Duration::from_secs(10));
    }
}
