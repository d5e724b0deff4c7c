//! Expectations: thresholds a run is judged against at its end, k6-style, written as
//! `WORKLOAD[.OP].METRIC CMP VALUE [during PHASE]`, e.g. `oltp.read.iops >= 3900 during
//! dss`, `oltp.write.p99 < 5ms`, `oltp.achieved_rate >= 0.98`; or relative to the same
//! metric elsewhere, `WORKLOAD[.OP].METRIC [during PHASE] CMP FACTOR x REF`, e.g.
//! `oltp.p99 during dss <= 2 x before` (the same workload in another phase) or
//! `qd64.iops >= 2 x qd1.iops` (another workload), because a study's question is often
//! "did it hold up against itself", which no absolute threshold can say for every machine.
//!
//! A relative expectation on a rate may end in `beyond noise` (`b.tps > 1 x a.tps beyond
//! noise`): it then holds only when the difference also exceeds the noise of the two
//! figures' per-second samples, by the test `fathom compare` calls a change with (see
//! [`crate::analysis::noise`]). Without it, an A/B "passes" on a difference of 0.2% that
//! two runs of the same thing show every time.

use crate::error::{Error, Result};
use crate::metrics::Op;
use crate::metrics::summary::Throughput;
use crate::suggest;
use std::fmt;

/// What an expectation measures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Metric {
    /// The workload's own rate, in its unit: IOPS, TPS or Gbit/s (`iops`, `tps`,
    /// `gbit_per_s`), so a verdict is given in the unit the study measured in.
    Rate(Throughput),
    MbPerS,
    /// MB/s over the workload's workers (`mb_per_s_per_core`): vioperf's MB/s per core,
    /// as `jobs: cores` runs a worker per core.
    MbPerSPerCore,
    /// Latency at a quantile (0.5, 0.99, ...) in ns; 1.0 is the maximum.
    Latency(f64),
    MeanLatency,
    /// Achieved IOPS over the asked rate (open-loop workloads).
    AchievedRate,
}

impl Metric {
    /// A latency is a figure of ops; a rate or a byte count is one of seconds, so a second
    /// that moved nothing measures it as zero.
    pub fn needs_ops(self) -> bool {
        !matches!(self, Metric::Rate(_) | Metric::MbPerS | Metric::MbPerSPerCore)
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    pub fn holds(self, measured: f64, threshold: f64) -> bool {
        match self {
            Cmp::Lt => measured < threshold,
            Cmp::Le => measured <= threshold,
            Cmp::Gt => measured > threshold,
            Cmp::Ge => measured >= threshold,
        }
    }
}

impl fmt::Display for Cmp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Cmp::Lt => "<",
            Cmp::Le => "<=",
            Cmp::Gt => ">",
            Cmp::Ge => ">=",
        })
    }
}

/// What a relative expectation's figure is compared with (times its factor).
#[derive(Debug, Clone, PartialEq)]
pub enum Reference {
    /// The same workload, op and metric in another phase: a phase label, or a
    /// workload's measured window, as `during` takes.
    Phase(String),
    /// The same metric of another workload (and op) over its measured window.
    Workload { name: String, workload: usize, op: Option<Op> },
}

/// One checked expectation.
#[derive(Debug, Clone)]
pub struct Expectation {
    /// As written, for messages.
    pub text: String,
    /// The workload's name as written, for the run's one-line answer.
    pub name: String,
    pub workload: usize,
    /// One op, or all of the workload's (IOPS summed, latency merged).
    pub op: Option<Op>,
    pub metric: Metric,
    pub cmp: Cmp,
    /// In the metric's base unit: the workload's rate (IOs/s, TPS, Gbit/s), MB/s, ns,
    /// or a ratio; for a relative
    /// expectation, the factor the reference is multiplied by.
    pub threshold: f64,
    /// A phase label or a workload name (the phases it runs in); the workload's whole
    /// measured window when absent.
    pub during: Option<String>,
    /// Set for the relative form (`<= 2 x before`).
    pub relative: Option<Reference>,
    /// `beyond noise`: the comparison must also hold beyond the noise of the per-second
    /// samples of both figures (rates of the relative form only).
    pub beyond_noise: bool,
}

impl fmt::Display for Expectation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

const EXAMPLE: &str =
    "e.g. `oltp.read.iops >= 3900 during dss`, `oltp.write.p99 < 5ms` or `oltp.p99 during dss <= 2 x before`";

/// The qualifier's words, last in an expectation.
const BEYOND_NOISE: [&str; 2] = ["beyond", "noise"];

/// What the qualifier is written as and on what, for its errors.
const BEYOND_FORM: &str = "`beyond noise` ends a relative expectation on a rate, \
     WORKLOAD[.OP].METRIC [during PHASE] CMP FACTOR x REF beyond noise (e.g. `b.tps > 1 x a.tps beyond noise`)";

/// Parses one expectation; `index_of` resolves workload names.
pub fn parse(text: &str, index_of: &dyn Fn(&str) -> Option<usize>) -> Result<Expectation> {
    parse_named(text, &Lookup { index_of, names: &[] })
}

/// Parses one expectation of a scenario whose workloads are `names`, in its order: a
/// name that is none of them is offered the nearest.
pub fn parse_among(text: &str, names: &[&str]) -> Result<Expectation> {
    parse_named(text, &Lookup { index_of: &|n| names.iter().position(|w| *w == n), names })
}

/// How workload names resolve, and the names to offer for one that does not.
struct Lookup<'a> {
    index_of: &'a dyn Fn(&str) -> Option<usize>,
    names: &'a [&'a str],
}

fn parse_named(text: &str, names: &Lookup) -> Result<Expectation> {
    let form = || {
        Error::input(format!(
            "`{text}` is not WORKLOAD[.OP].METRIC CMP VALUE [during PHASE] or WORKLOAD[.OP].METRIC [during PHASE] \
             CMP FACTOR x REF [beyond noise] ({EXAMPLE})"
        ))
    };
    let mut words = words(text)?;
    let beyond_noise = beyond_noise(text, &mut words)?;
    // `during PHASE` right after the subject or at the end
    let at = if words.get(1).is_some_and(|w| w == "during") {
        Some(1)
    } else {
        words.len().checked_sub(2).filter(|&i| i > 0 && words[i] == "during")
    };
    let during = at.map(|i| {
        let phase = words.remove(i + 1);
        words.remove(i);
        phase
    });
    let w: Vec<&str> = words.iter().map(String::as_str).collect();
    let (subject, cmp, value, reference) = match w.as_slice() {
        [s, c, v] => (*s, *c, *v, None),
        [s, c, f, "x", r] => (*s, *c, *f, Some(*r)),
        [s, c, f, r] if f.len() > 1 && f.ends_with('x') => (*s, *c, &f[..f.len() - 1], Some(*r)),
        // a misspelt qualifier is named as such, not as a malformed expectation
        _ if w.contains(&BEYOND_NOISE[0]) => return Err(Error::input(format!("`{text}`: {BEYOND_FORM}"))),
        _ => return Err(form()),
    };
    let cmp = match cmp {
        "<" => Cmp::Lt,
        "<=" => Cmp::Le,
        ">" => Cmp::Gt,
        ">=" => Cmp::Ge,
        other => return Err(Error::input(format!("`{other}` is not a comparison: use <, <=, > or >="))),
    };
    let (name, workload, op, metric) = parse_subject(subject, names)?;
    let relative = match reference.map(|r| (r, parse_subject(r, names))) {
        None => None,
        // another workload's figure when it reads as one (`qd1.iops`), else a phase
        Some((r, Ok((other, workload, op, m)))) => {
            if m != metric {
                return Err(Error::input(format!(
                    "`x {r}`: compare like with like: `{subject}` and `{r}` measure different metrics"
                )));
            }
            Some(Reference::Workload { name: other, workload, op })
        }
        Some((r, Err(_))) => Some(Reference::Phase(r.to_string())),
    };
    let threshold = match metric {
        _ if relative.is_some() => count(value)?,
        Metric::Latency(_) | Metric::MeanLatency => latency_ns(value)?,
        _ => count(value)?,
    };
    // every metric is a count, a rate or a time: never below zero, never infinite, and a
    // `nan` would fail whatever was measured
    if !(threshold.is_finite() && threshold >= 0.0) {
        return Err(Error::input(format!(
            "`{value}` is not a threshold: expected a finite number, 0 or more ({EXAMPLE})"
        )));
    }
    if beyond_noise {
        noise_judges(text, subject, metric, relative.is_some())?;
    }
    Ok(Expectation {
        text: text.to_string(),
        name,
        workload,
        op,
        metric,
        cmp,
        threshold,
        during,
        relative,
        beyond_noise,
    })
}

/// Takes `beyond noise` off the end of `words`: whether it was there. `beyond` followed
/// by anything else at the end is that qualifier misspelt (no valid expectation ends so).
fn beyond_noise(text: &str, words: &mut Vec<String>) -> Result<bool> {
    let n = words.len();
    if n < 2 || words[n - 2] != BEYOND_NOISE[0] {
        return Ok(false);
    }
    if words[n - 1] != BEYOND_NOISE[1] {
        return Err(Error::input(format!("`{text}`: `beyond {}` is not a qualifier: {BEYOND_FORM}", words[n - 1])));
    }
    words.truncate(n - 2);
    Ok(true)
}

/// Whether `beyond noise` can judge `metric`: the test compares the means of per-second
/// samples, and only a rate's figure over a window is the mean of its seconds' figures.
/// A second's p99 is no sample of the window's p99 (nor is a second's mean latency,
/// weighted by that second's ops, one of the window's mean), so latency is refused
/// rather than judged by a test that does not describe it.
fn noise_judges(text: &str, subject: &str, metric: Metric, relative: bool) -> Result<()> {
    if !relative {
        return Err(Error::input(format!(
            "`{text}`: `beyond noise` compares the per-second samples of two figures, and a fixed threshold has none: \
             {BEYOND_FORM}"
        )));
    }
    match metric {
        Metric::Rate(_) | Metric::MbPerS => Ok(()),
        _ => Err(Error::input(format!(
            "`{text}`: `beyond noise` judges rates, whose figure is the mean of their per-second samples (iops, tps, \
             gbit_per_s, mb_per_s); `{subject}` is not one: {BEYOND_FORM}"
        ))),
    }
}

/// The words of an expectation; `"..."` keeps a phase label with spaces (`"vm x6"`) one word.
fn words(text: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let (word, after) = match rest.strip_prefix('"') {
            Some(quoted) => {
                let end = quoted.find('"').ok_or_else(|| Error::input(format!("`{text}`: a `\"` is not closed")))?;
                (&quoted[..end], &quoted[end + 1..])
            }
            None => rest.split_at(rest.find(char::is_whitespace).unwrap_or(rest.len())),
        };
        out.push(word.to_string());
        rest = after.trim_start();
    }
    Ok(out)
}

/// `WORKLOAD[.OP].METRIC`: (name, workload index, op, metric). A workload's name may
/// hold dots (`zipf-1.2`): the first prefix that names one, with an op and metric after
/// it, is the workload.
fn parse_subject(subject: &str, names: &Lookup) -> Result<(String, usize, Option<Op>, Metric)> {
    let form = || Error::input(format!("`{subject}` is not WORKLOAD[.OP].METRIC ({EXAMPLE})"));
    let mut first_error = None;
    for (dot, _) in subject.match_indices('.') {
        let (name, rest) = (&subject[..dot], &subject[dot + 1..]);
        let parsed = match (names.index_of)(name) {
            Some(workload) => op_metric(rest, subject).map(|(op, metric)| (name.to_string(), workload, op, metric)),
            None => Err(Error::input(format!("`{subject}`: {}", suggest::no_workload(name, names.names)))),
        };
        match parsed {
            Ok(p) => return Ok(p),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    Err(first_error.unwrap_or_else(form))
}

/// `[OP.]METRIC` after a workload's name.
fn op_metric(rest: &str, subject: &str) -> Result<(Option<Op>, Metric)> {
    let parts: Vec<&str> = rest.split('.').collect();
    // `p99.9` has a dot of its own
    let (op, metric) = match parts.as_slice() {
        [m] => (None, m.to_string()),
        ["p99", "9"] => (None, "p99.9".to_string()),
        [o, m] => (Some(*o), m.to_string()),
        [o, "p99", "9"] => (Some(*o), "p99.9".to_string()),
        _ => return Err(Error::input(format!("`{subject}` is not WORKLOAD[.OP].METRIC ({EXAMPLE})"))),
    };
    let op = match op {
        None => None,
        Some(o) => match Op::find(o) {
            Some(op) => Some(op),
            None => {
                let ops: Vec<&str> = Op::all().into_iter().map(Op::as_str).collect();
                return Err(Error::input(format!("`{subject}`: `{o}` is not an op ({})", ops.join(", "))));
            }
        },
    };
    let metric = match metric.as_str() {
        "iops" => Metric::Rate(Throughput::Iops),
        // a database's transactions are its ops
        "tps" => Metric::Rate(Throughput::Tps),
        "gbit_per_s" | "gbps" => Metric::Rate(Throughput::Gbits),
        "mb_per_s" | "mbps" => Metric::MbPerS,
        "mb_per_s_per_core" => Metric::MbPerSPerCore,
        "mean" => Metric::MeanLatency,
        "p50" => Metric::Latency(0.5),
        "p90" => Metric::Latency(0.9),
        "p99" => Metric::Latency(0.99),
        "p99.9" => Metric::Latency(0.999),
        "max" => Metric::Latency(1.0),
        "achieved_rate" => Metric::AchievedRate,
        m => {
            return Err(Error::input(format!(
                "`{m}` is not a metric: iops, tps, gbit_per_s, mb_per_s, mb_per_s_per_core, mean, p50, p90, p99, p99.9, \
                 max or achieved_rate"
            )));
        }
    };
    Ok((op, metric))
}

/// `5ms`, `250us`, `250µs`, `1.5s`, `800ns` in ns (a bare number is rejected: say the unit).
fn latency_ns(v: &str) -> Result<f64> {
    let units = [("ns", 1.0), ("us", 1e3), ("µs", 1e3), ("ms", 1e6), ("s", 1e9)];
    for (unit, mult) in units {
        if let Some(n) = v.strip_suffix(unit)
            && let Ok(x) = n.parse::<f64>()
        {
            return Ok(x * mult);
        }
    }
    Err(Error::input(format!("`{v}` is not a latency with a unit (ns, us, ms, s), e.g. 5ms")))
}

/// `3900`, `3.9k`, `1.2M`, `0.98`.
fn count(v: &str) -> Result<f64> {
    let (n, mult) = match v.chars().last() {
        Some('k') => (&v[..v.len() - 1], 1e3),
        Some('M') => (&v[..v.len() - 1], 1e6),
        _ => (v, 1.0),
    };
    n.parse::<f64>().map(|x| x * mult).map_err(|_| Error::input(format!("`{v}` is not a number (3900, 3.9k, 0.98)")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: &[&str] = &["oltp", "dss"];

    #[test]
    fn the_issue_examples_parse() {
        let e = parse_among("oltp.read.iops >= 3900 during dss", NAMES).unwrap();
        assert_eq!(
            (e.workload, e.op, e.metric, e.cmp, e.threshold),
            (0, Some(Op::Read), Metric::Rate(Throughput::Iops), Cmp::Ge, 3900.0)
        );
        assert_eq!(e.during.as_deref(), Some("dss"));
        let e = parse_among("oltp.write.p99 < 5ms", NAMES).unwrap();
        assert_eq!((e.metric, e.threshold, e.cmp), (Metric::Latency(0.99), 5e6, Cmp::Lt));
        let e = parse_among("dss.achieved_rate >= 0.98", NAMES).unwrap();
        assert_eq!((e.workload, e.op, e.metric), (1, None, Metric::AchievedRate));
        let e = parse_among("oltp.read.p99.9 <= 250us", NAMES).unwrap();
        assert_eq!((e.metric, e.threshold), (Metric::Latency(0.999), 250_000.0));
        assert_eq!(parse_among("oltp.iops > 3.9k", NAMES).unwrap().threshold, 3900.0);
        assert!(Cmp::Ge.holds(3900.0, 3900.0) && !Cmp::Gt.holds(3900.0, 3900.0));
    }

    #[test]
    fn mistakes_say_what_was_expected() {
        for (text, says) in [
            ("oltp.read.iops => 3900", "comparison"),
            ("web.iops > 1", "no workload named `web`"),
            ("oltp.trim.iops > 1", "not an op"),
            ("oltp.read.p98 < 1ms", "not a metric"),
            ("oltp.read.p99 < 5", "with a unit"),
            ("oltp.read.iops >= lots", "not a number"),
            ("oltp.read.iops >= 1 while dss", "is not WORKLOAD"),
            ("oltp.read.iops >= nan", "not a threshold"),
            ("oltp.read.iops >= -1", "not a threshold"),
            ("oltp.read.iops >= inf", "not a threshold"),
            ("oltp.read.iops >= 1e400", "not a threshold"),
            ("oltp.read.p99 < -5ms", "not a threshold"),
            ("oltp.read.p99 < 1e300s", "not a threshold"),
            ("oltp.p99 during dss <= 2 x", "is not WORKLOAD"),
            ("oltp.p99 <= two x before", "not a number"),
            ("oltp.p99 <= -2 x before", "not a threshold"),
            ("oltp.p99 <= 2 x dss.iops", "like with like"),
            ("oltp.p99 <= 2 x \"vm x1", "not closed"),
        ] {
            let e = parse_among(text, NAMES).unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn relative_forms_compare_with_another_phase_or_workload() {
        // the issue's form: the same metric in another phase, times a factor
        let e = parse_among("oltp.p99 during dss <= 2 x before", NAMES).unwrap();
        assert_eq!((e.workload, e.op, e.metric, e.cmp, e.threshold), (0, None, Metric::Latency(0.99), Cmp::Le, 2.0));
        assert_eq!(e.during.as_deref(), Some("dss"));
        assert_eq!(e.relative, Some(Reference::Phase("before".into())));
        // `during` at the end, `2x` as one word, a phase named like the keyword
        let e = parse_among("oltp.p99 <= 2x before during during", NAMES).unwrap();
        assert_eq!((e.threshold, e.during.as_deref()), (2.0, Some("during")));
        assert_eq!(e.relative, Some(Reference::Phase("before".into())));
        let e = parse_among("oltp.p99 <= 1.5 x during", NAMES).unwrap();
        assert_eq!((e.during, e.relative), (None, Some(Reference::Phase("during".into()))));
        // another workload's figure: a workload name and a dot; `tps` is IOPS
        let e = parse_among("dss.tps >= 1 x oltp.tps", NAMES).unwrap();
        assert_eq!((e.workload, e.metric), (1, Metric::Rate(Throughput::Tps)));
        assert_eq!(e.relative, Some(Reference::Workload { name: "oltp".into(), workload: 0, op: None }));
        let e = parse_among("oltp.read.p99 <= 3 x dss.read.p99", NAMES).unwrap();
        assert_eq!(e.relative, Some(Reference::Workload { name: "dss".into(), workload: 1, op: Some(Op::Read) }));
        // a label with spaces or dots is a phase
        let e = parse_among("oltp.p99 during \"vm x6\" <= 4 x \"vm x1\"", NAMES).unwrap();
        assert_eq!((e.during.as_deref(), e.relative), (Some("vm x6"), Some(Reference::Phase("vm x1".into()))));
        let e = parse_among("oltp.iops >= 1 x pareto-0.8", NAMES).unwrap();
        assert_eq!(e.relative, Some(Reference::Phase("pareto-0.8".into())));
        // a workload's name may hold dots
        let e = parse_among("zipf-1.2.read.iops >= 1.1 x uniform.read.iops", &["uniform", "zipf-1.2"]).unwrap();
        assert_eq!((e.name.as_str(), e.workload, e.op), ("zipf-1.2", 1, Some(Op::Read)));
        // a factor has no unit, whatever the metric
        assert!(parse_among("oltp.p99 <= 2ms x before", NAMES).is_err());
    }

    #[test]
    fn beyond_noise_qualifies_a_relative_expectation_on_a_rate() {
        let e = parse_among("dss.tps > 1 x oltp.tps beyond noise", NAMES).unwrap();
        assert!(e.beyond_noise);
        assert_eq!((e.workload, e.cmp, e.threshold), (1, Cmp::Gt, 1.0));
        assert_eq!(e.relative, Some(Reference::Workload { name: "oltp".into(), workload: 0, op: None }));
        // with `during` before or after the comparison, on another phase, in MB/s
        let e = parse_among("oltp.read.iops <= 0.9x before during dss beyond noise", NAMES).unwrap();
        assert!(e.beyond_noise && e.during.as_deref() == Some("dss"));
        assert_eq!(e.relative, Some(Reference::Phase("before".into())));
        assert!(parse_among("oltp.mb_per_s during dss < 1 x before beyond noise", NAMES).unwrap().beyond_noise);
        // without it, nothing changes; a phase may still be named `beyond`
        assert!(!parse_among("dss.tps > 1 x oltp.tps", NAMES).unwrap().beyond_noise);
        let e = parse_among("oltp.iops >= 1 x beyond", NAMES).unwrap();
        assert_eq!((e.beyond_noise, e.relative), (false, Some(Reference::Phase("beyond".into()))));
    }

    #[test]
    fn beyond_noise_refuses_what_it_cannot_judge() {
        for (text, says) in [
            ("oltp.iops > 3900 beyond noise", "a fixed threshold has none"),
            ("oltp.p99 <= 2 x before beyond noise", "`oltp.p99` is not one"),
            ("oltp.mean <= 1 x dss.mean beyond noise", "judges rates"),
            ("dss.achieved_rate >= 1 x before beyond noise", "judges rates"),
            ("dss.tps > 1 x oltp.tps beyond the noise", "`beyond noise` ends a relative expectation"),
            ("dss.tps > 1 x oltp.tps beyond doubt", "`beyond doubt` is not a qualifier"),
            ("dss.tps > 1 x oltp.tps noise", "is not WORKLOAD"),
        ] {
            let e = parse_among(text, NAMES).unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
        // each says how it is written
        let e = parse_among("oltp.p99 <= 2 x before beyond noise", NAMES).unwrap_err().to_string();
        assert!(e.contains("e.g. `b.tps > 1 x a.tps beyond noise`"), "{e}");
    }
}
