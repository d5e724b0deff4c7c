//! A workload's headline read back from its run: the values of the figures its program
//! declared ([`crate::metrics::headline`]), worded as its program's users say them
//! (`42,590 NOPM from 101,575 TPM`, `query set 45.2 s, geometric mean 1.31 s`).

use super::measured::WorkloadSummary;
use crate::metrics::format::{count, rate_in, sig3};
use crate::metrics::headline::{Better, Figure, Headline, Source};
use crate::store::Observed;
use serde::Serialize;

/// One workload's headline figure, with what is quoted beside it.
#[derive(Debug, Clone, Serialize)]
pub struct Quoted {
    pub workload: String,
    /// `NOPM`, `TPS`, `IOPS`, `query set`.
    pub label: String,
    pub value: f64,
    pub better: Better,
    /// Whether its program declared a figure of its own (not only its ops' rate).
    pub declared: bool,
    /// The figure and those beside it, in words.
    pub text: String,
    /// Those beside it alone (`from 101,575 TPM`), empty when none.
    pub beside: String,
}

/// The headline of `w` as its program declared it (an older store's workload: its ops'
/// rate); None when the run holds none of its figure (a run that failed first).
pub fn of(w: &WorkloadSummary, observed: &[Observed]) -> Option<Quoted> {
    let unit = w.ops.first().map(|o| o.unit)?;
    let mut headline = w.stored.headline.clone().unwrap_or_else(|| Headline::rate(unit));
    // a pass cut short (by its duration, a stop) did not touch every block: its rate stands
    if headline.figure.from == Source::Pass && !w.workload.ended_by_itself() {
        headline = Headline::rate(unit);
    }
    let leading = headline.leading_op.as_deref();
    let (value, figure) = figure_value(w, observed, &headline.figure, leading)?;
    // a count is quoted from the count it is part of (NOPM from TPM), a time beside another
    let beside: Vec<String> = headline
        .beside
        .iter()
        .filter_map(|b| figure_value(w, observed, b, leading).map(|(_, said)| (b, said)))
        .map(|(b, said)| if matches!(b.from, Source::Count { .. }) { format!("from {said}") } else { said })
        .collect();
    let beside = beside.join(", ");
    Some(Quoted {
        workload: w.workload.name.clone(),
        label: headline.figure.label.clone(),
        value,
        better: headline.figure.better,
        declared: headline.figure.from != Source::Rate,
        text: match (beside.is_empty(), beside.starts_with("from ")) {
            (true, _) => figure,
            (false, true) => format!("{figure} {beside}"),
            (false, false) => format!("{figure}, {beside}"),
        },
        beside,
    })
}

/// The value of `figure` in the run of `w`, and its words.
fn figure_value(
    w: &WorkloadSummary,
    observed: &[Observed],
    figure: &Figure,
    leading: Option<&str>,
) -> Option<(f64, String)> {
    let recorded = |program: &str, name: &str| {
        let source = format!("{program}:{}", w.workload.name);
        observed.iter().find(|o| o.source == source && o.name == name).map(|o| o.mean)
    };
    match &figure.from {
        Source::Rate => {
            let ops: Vec<_> = w.ops.iter().filter(|o| o.op != "sync" && leading.is_none_or(|l| o.op == l)).collect();
            let unit = ops.first()?.unit;
            let rate: f64 = ops.iter().map(|o| o.rate()).sum();
            // one op is named: `1,870 TPS txn`, `27,747 IOPS read`
            let op = if let [one] = ops.as_slice() { format!(" {}", one.op) } else { String::new() };
            Some((rate, format!("{}{op}", rate_in(rate, unit))))
        }
        Source::Count { program, name } => {
            recorded(program, name).map(|v| (v, format!("{} {}", count(v), figure.label)))
        }
        Source::Seconds { program, name } => {
            recorded(program, name).map(|v| (v, format!("{} {} s", figure.label, sig3(v))))
        }
        Source::Pass => {
            let ops = w.ops.iter().filter(|o| o.op != "sync");
            let (ios, seconds) = ops.fold((0, 0.0f64), |(n, s), o| (n + o.ops, s.max(o.seconds)));
            // a long pass in minutes and hours, as people say it
            let took = if seconds >= 60.0 { super::format::seconds(seconds) } else { format!("{} s", sig3(seconds)) };
            (ios > 0).then(|| (seconds, format!("{} ({} IOs) in {took}", figure.label, count(ios as f64))))
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::report::summary::RunSummary;
    use crate::store::ObservationRow;
    use crate::store::fixture::{Fixture, Second};
    use crate::store::sink::Record;

    #[test]
    fn a_declared_figure_is_quoted_in_its_programs_words_and_io_by_its_rate() {
        let fx = Fixture::new("headline");
        let io = fx
            .run("name: io\nworkloads:\n  w: {engine: null, rw: randread, duration: 2s}\n")
            .phase("w", &[("w", 1)], 2, |_| Second::new(1000, 50_000))
            .finish();
        let figure =
            |name: &str, value: f64| ObservationRow { t: 0, source: "tpcc:oltp".into(), name: name.into(), value };
        let tpcc = fx
            .run("name: t\nworkloads:\n  oltp: {driver: tpcc, duration: 2s}\n")
            .phase("oltp", &[("oltp", 1)], 2, |_| Second::new(400, 5_000_000))
            .record(Record::Observations(vec![figure("nopm", 42_590.0), figure("tpm", 101_575.0)]))
            .finish();
        let store = fx.store();
        let q = RunSummary::load(&store, &tpcc.to_string()).unwrap().headline.unwrap();
        assert_eq!(q.text, "42,590 NOPM from 101,575 TPM");
        assert!(q.declared && q.value == 42_590.0 && q.label == "NOPM", "{q:?}");
        let q = RunSummary::load(&store, &io.to_string()).unwrap().headline.unwrap();
        assert_eq!(q.text, "1,000 IOPS read");
        assert!(!q.declared && q.label == "IOPS", "{q:?}");
    }

    /// A pass over every block is read by its time only when it ended by itself: cut
    /// short (its duration ran out first, as here), it touched some blocks only.
    #[test]
    fn a_pass_cut_short_is_read_by_its_rate() {
        let fx = Fixture::new("headline-pass");
        let pass = fx
            .run("name: p\nworkloads:\n  w: {engine: null, rw: randread, bs: 4k, size: 8m, randommap: true, loops: 1, duration: 2s}\n")
            .phase("w", &[("w", 1)], 2, |_| Second::new(1000, 50_000))
            .finish();
        let s = RunSummary::load(&fx.store(), &pass.to_string()).unwrap();
        assert_eq!(s.workloads[0].stored.headline.as_ref().unwrap().figure.label, "every block once");
        let q = s.headline.unwrap();
        assert_eq!((q.text.as_str(), q.declared), ("1,000 IOPS read", false), "{q:?}");
    }
}
