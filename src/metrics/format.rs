//! Human-readable numbers: 48,213 IOPS, 190 µs, 1.25 ms, 2.5 GB.

use super::summary::Throughput;

/// A count with thousands separators.
pub fn count(v: f64) -> String {
    let n = v.round() as i64;
    let digits = n.abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

/// `n` of `noun` as a sentence says it: `1 workload`, `2 workloads`, `3 queries` (the
/// noun given in the singular).
pub fn counted(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        return format!("1 {noun}");
    }
    let plural = match noun.strip_suffix('y') {
        Some(stem) if !stem.ends_with(['a', 'e', 'o', 'u']) => format!("{stem}ies"),
        _ if noun.ends_with(['s', 'x']) || noun.ends_with("ch") || noun.ends_with("sh") => format!("{noun}es"),
        _ => format!("{noun}s"),
    };
    format!("{n} {plural}")
}

/// A rate in its unit's precision, without the unit: `48,213` (IOPS, TPS), `9.41`
/// (Gbit/s).
pub fn rate(v: f64, unit: Throughput) -> String {
    match unit {
        Throughput::Gbits => format!("{v:.2}"),
        Throughput::Iops | Throughput::Tps => count(v),
    }
}

/// A rate with its unit: `48,213 IOPS`, `4,602 TPS`, `9.41 Gbit/s`.
pub fn rate_in(v: f64, unit: Throughput) -> String {
    format!("{} {}", rate(v, unit), unit.label())
}

/// A latency given in microseconds, in the unit that keeps 3 significant digits.
pub fn latency_us(us: f64) -> String {
    let (value, unit) = if us < 1.0 {
        (us * 1000.0, "ns")
    } else if us < 1000.0 {
        (us, "µs")
    } else if us < 1_000_000.0 {
        (us / 1000.0, "ms")
    } else {
        (us / 1e6, "s")
    };
    format!("{} {unit}", sig3(value))
}

/// Three significant digits, no trailing zeros beyond them.
pub fn sig3(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Seconds as `75 s`, `12 min 5 s`, `1 h 2 min`.
pub fn seconds(s: f64) -> String {
    let s = s.round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, s % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_count_says_its_noun_once_or_many() {
        assert_eq!(counted(1u32, "workload"), "1 workload");
        assert_eq!(counted(0u32, "workload"), "0 workloads");
        assert_eq!(counted(3u32, "query"), "3 queries");
        assert_eq!(counted(2u32, "day"), "2 days");
        assert_eq!(counted(2u32, "process"), "2 processes");
    }

    use super::*;

    #[test]
    fn formats() {
        assert_eq!(count(48213.4), "48,213");
        assert_eq!(count(999.0), "999");
        assert_eq!(count(1_000_000.0), "1,000,000");
        assert_eq!(latency_us(0.5), "500 ns");
        assert_eq!(latency_us(190.0), "190 µs");
        assert_eq!(latency_us(1250.0), "1.25 ms");
        assert_eq!(latency_us(12_500.0), "12.5 ms");
        assert_eq!(latency_us(2_000_000.0), "2.00 s");
        assert_eq!(seconds(75.2), "1 min 15 s");
        assert_eq!(rate_in(4602.3, Throughput::Tps), "4,602 TPS");
        assert_eq!(rate_in(9.4123, Throughput::Gbits), "9.41 Gbit/s");
    }
}
