//! Result views (`results:`): named per-second series a study is read by, e.g. "OLTP
//! IOPS", the iops of two workloads summed each second, with the figure it should reach
//! and value bands judged as expectations. X-Ray scenarios define their results this
//! way; any scenario may. The file's form ([`ResultFile`]) becomes a [`ResultView`] here,
//! once, both when a scenario is checked and when a stored run's text is read back.

use serde::{Deserialize, Serialize};

/// The observed view of every host's CPU busy %.
pub const CPU: &str = "cpu";
/// The observed view of every host's bytes received over its network interfaces, KiB/s.
pub const NET_RECEIVED: &str = "net_received";
/// The observed view of every host's bytes transmitted over its network interfaces, KiB/s.
pub const NET_TRANSMITTED: &str = "net_transmitted";

/// What a view's series is per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultMetric {
    Iops,
    /// Per-second mean latency (with p50 and p99), in µs.
    Latency,
    /// MB/s, as everywhere in fathom.
    Bandwidth,
}

impl ResultMetric {
    /// The unit its figures are printed in.
    pub fn unit(self) -> &'static str {
        match self {
            ResultMetric::Iops => "IOPS",
            ResultMetric::Latency => "µs",
            ResultMetric::Bandwidth => "MB/s",
        }
    }
}

/// How the workloads' (or hosts') values of one second become the view's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Aggregate {
    Sum,
    Mean,
}

/// `share: 95%` or `share: 0.95`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ShareFile {
    Fraction(f64),
    Percent(String),
}

/// A band as written.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BandFile {
    pub name: String,
    pub lower: f64,
    pub upper: f64,
    pub share: Option<ShareFile>,
}

/// One `results:` entry as written.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultFile {
    pub name: String,
    pub workloads: Option<Vec<String>>,
    pub metric: Option<ResultMetric>,
    pub aggregate: Option<Aggregate>,
    pub phases: Option<Vec<String>>,
    pub hint: Option<String>,
    pub expected: Option<f64>,
    pub bands: Option<Vec<BandFile>>,
    /// An observed series instead of workloads: `cpu`, `net_received`, `net_transmitted`,
    /// or `SOURCE.NAME` as stored.
    pub observed: Option<String>,
    /// Why fathom cannot show this result (a result X-Ray measured that fathom has no
    /// observer for): listed, so that nothing the study asked for disappears silently.
    pub not_measured: Option<String>,
}

/// What a view shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    Workloads {
        names: Vec<String>,
        metric: ResultMetric,
    },
    /// `cpu` (host CPU busy %, every host) or `SOURCE.NAME` of the observations.
    Observed(String),
    NotMeasured(String),
}

/// A band the series should stay in: [lower, upper] for at least `share` of the seconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Band {
    pub name: String,
    pub lower: f64,
    pub upper: f64,
    /// 0..=1.
    pub share: f64,
}

/// One checked `results:` entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResultView {
    pub name: String,
    pub measure: Measure,
    pub aggregate: Aggregate,
    /// Only the seconds of phases with these labels; empty: every second measured.
    pub phases: Vec<String>,
    pub hint: Option<String>,
    pub expected: Option<f64>,
    /// Not serialized: a measured view shows each band with its verdict instead.
    #[serde(skip)]
    pub bands: Vec<Band>,
}

/// A mistake in an entry: the key under the entry (`["bands", "0", "share"]`) and what
/// was expected.
pub type Mistake = (Vec<String>, String);

/// The view an entry describes, or the first mistake in it. Names of workloads and
/// phases are checked by the caller, which knows them.
pub fn view(f: &ResultFile) -> std::result::Result<ResultView, Mistake> {
    let at = |k: &[&str]| k.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let sources = [f.workloads.is_some(), f.observed.is_some(), f.not_measured.is_some()];
    if sources.iter().filter(|s| **s).count() != 1 {
        return Err((
            at(&["name"]),
            format!("`{}`: give exactly one of `workloads`, `observed` or `not_measured`", f.name),
        ));
    }
    let measure = if let Some(names) = &f.workloads {
        if names.is_empty() {
            return Err((at(&["workloads"]), "expected at least one workload".into()));
        }
        let Some(metric) = f.metric else {
            return Err((at(&["workloads"]), "a view of workloads needs `metric: iops | latency | bandwidth`".into()));
        };
        Measure::Workloads { names: names.clone(), metric }
    } else if let Some(o) = &f.observed {
        if f.metric.is_some() {
            return Err((at(&["metric"]), "is for `workloads`: an observed series is its own metric".into()));
        }
        if ![CPU, NET_RECEIVED, NET_TRANSMITTED].contains(&o.as_str()) && !o.contains('.') {
            let expected = format!("expected `{CPU}`, `{NET_RECEIVED}`, `{NET_TRANSMITTED}` or SOURCE.NAME");
            return Err((at(&["observed"]), format!("`{o}`: {expected} (e.g. `host.usr_pct`)")));
        }
        Measure::Observed(o.clone())
    } else {
        Measure::NotMeasured(f.not_measured.clone().unwrap_or_default())
    };
    if f.aggregate == Some(Aggregate::Sum)
        && matches!(measure, Measure::Workloads { metric: ResultMetric::Latency, .. })
    {
        return Err((at(&["aggregate"]), "latency is of its workloads' IOs together: `aggregate: mean`".into()));
    }
    let aggregate = f.aggregate.unwrap_or(match measure {
        Measure::Workloads { metric: ResultMetric::Latency, .. } => Aggregate::Mean,
        _ => Aggregate::Sum,
    });
    let mut bands = Vec::new();
    for (i, b) in f.bands.iter().flatten().enumerate() {
        let key = |k: &str| at(&["bands", &i.to_string(), k]);
        if !(b.lower.is_finite() && b.upper.is_finite() && b.lower <= b.upper) {
            return Err((key("upper"), format!("[{}, {}]: expected lower <= upper, both finite", b.lower, b.upper)));
        }
        let share = match &b.share {
            Some(ShareFile::Fraction(x)) => Some(*x),
            Some(ShareFile::Percent(p)) => match percent(p) {
                Some(x) => Some(x),
                None => return Err((key("share"), format!("`{p}`: expected a percent (95%) or a fraction (0.95)"))),
            },
            // the name's percent if it is one (`95%`), else 95%
            None => Some(percent(&b.name).unwrap_or(0.95)),
        };
        let share = share.filter(|s| (0.0..=1.0).contains(s));
        let Some(share) = share else { return Err((key("share"), "expected a share between 0% and 100%".into())) };
        bands.push(Band { name: b.name.clone(), lower: b.lower, upper: b.upper, share });
    }
    if !bands.is_empty() && matches!(measure, Measure::NotMeasured(_)) {
        return Err((at(&["bands"]), "a result fathom does not measure cannot be judged".into()));
    }
    if let Some(e) = f.expected.filter(|e| !e.is_finite()) {
        return Err((at(&["expected"]), format!("`{e}`: expected a finite number")));
    }
    Ok(ResultView {
        name: f.name.clone(),
        measure,
        aggregate,
        phases: f.phases.clone().unwrap_or_default(),
        hint: f.hint.clone(),
        expected: f.expected,
        bands,
    })
}

/// `95%` as 0.95.
fn percent(text: &str) -> Option<f64> {
    text.trim().strip_suffix('%')?.trim().parse::<f64>().ok().map(|p| p / 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(yaml: &str) -> ResultFile {
        super::super::yaml::from_str("t", yaml).unwrap()
    }

    #[test]
    fn a_band_takes_its_share_from_its_name_or_says_it() {
        let v = view(&file(
            "name: OLTP IOPS\nworkloads: [a, b]\nmetric: iops\nbands:\n  - {name: 95%, lower: 1, upper: 2}\n  - {name: wide, lower: 0, upper: 9, share: 80%}\n  - {name: x, lower: 0, upper: 9}\n",
        ))
        .unwrap();
        let shares: Vec<f64> = v.bands.iter().map(|b| b.share).collect();
        assert_eq!(shares, [0.95, 0.8, 0.95]);
        assert_eq!(v.aggregate, Aggregate::Sum);
        assert_eq!((v.bands[0].lower, v.bands[0].upper), (1.0, 2.0));
        let latency = view(&file("name: L\nworkloads: [a]\nmetric: latency\n")).unwrap();
        assert_eq!(latency.aggregate, Aggregate::Mean);
    }

    #[test]
    fn mistakes_name_their_key() {
        for (yaml, key, says) in [
            ("name: x\n", "name", "exactly one"),
            ("name: x\nworkloads: [a]\n", "workloads", "needs `metric"),
            ("name: x\nobserved: cpu\nmetric: iops\n", "metric", "its own metric"),
            ("name: x\nobserved: nothing\n", "observed", "SOURCE.NAME"),
            ("name: x\nworkloads: [a]\nmetric: latency\naggregate: sum\n", "aggregate", "aggregate: mean"),
            (
                "name: x\nworkloads: [a]\nmetric: iops\nbands: [{name: b, lower: 5, upper: 1}]\n",
                "bands.0.upper",
                "lower <= upper",
            ),
            (
                "name: x\nworkloads: [a]\nmetric: iops\nbands: [{name: b, lower: 1, upper: 5, share: 150%}]\n",
                "bands.0.share",
                "between",
            ),
            (
                "name: x\nworkloads: [a]\nmetric: iops\nbands: [{name: b, lower: 1, upper: 5, share: most}]\n",
                "bands.0.share",
                "a percent",
            ),
            (
                "name: x\nnot_measured: no observer\nbands: [{name: b, lower: 1, upper: 5}]\n",
                "bands",
                "cannot be judged",
            ),
        ] {
            let (at, msg) = view(&file(yaml)).unwrap_err();
            assert_eq!(at.join("."), key, "{yaml}");
            assert!(msg.contains(says), "{yaml}: {msg}");
        }
    }
}
