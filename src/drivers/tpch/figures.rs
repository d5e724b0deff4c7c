//! TPC-H's figures as HammerDB's TPROC-H prints them: each query's seconds, each
//! stream's query-set time, and the geometric mean of the power run's query times. No
//! QphH: the refresh functions are not run, and a composite of this run's times would
//! read as a TPC-H result it is not.

use super::stream::Outcome;
use crate::drivers::tpch::load::Loaded;

/// Which run a pass of a stream was part of.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Run {
    Power,
    Throughput,
}

/// One pass of one stream through its queries.
#[derive(Debug, Clone, PartialEq)]
pub struct Pass {
    pub run: Run,
    /// Its stream: 0 for the power run, 1 to N in the throughput run.
    pub stream: u32,
    /// Each query run, in order, and how it ended.
    pub queries: Vec<(u8, Outcome)>,
    /// From its first query sent to its last done.
    pub seconds: f64,
}

impl Pass {
    /// Every query of the set completed.
    pub fn complete(&self, of: usize) -> bool {
        self.queries.len() == of && self.queries.iter().all(|(_, o)| matches!(o, Outcome::Done(_)))
    }
}

/// What a run's passes came to.
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    pub passes: Vec<Pass>,
    /// The queries of a set, by number.
    pub set: Vec<u8>,
    /// The throughput run's time, from its streams' start to the last one's end.
    pub throughput_seconds: Option<f64>,
}

/// Queries whose text departs from TPC-H's, and how.
pub const DEPARTS: [(u8, &str); 3] =
    [(15, "view as WITH"), (17, "decorrelated (pre-aggregated join)"), (20, "decorrelated (pre-aggregated join)")];

impl Figures {
    fn power(&self) -> Option<&Pass> {
        self.passes.iter().find(|p| p.run == Run::Power)
    }

    /// The power run's query-set time, if every query completed.
    pub fn power_seconds(&self) -> Option<f64> {
        self.power().filter(|p| p.complete(self.set.len())).map(|p| p.seconds)
    }

    /// The geometric mean of the power run's completed query times, and how many.
    pub fn geomean(&self) -> Option<(f64, usize)> {
        let times: Vec<f64> = self.power()?.queries.iter().filter_map(|(_, o)| done(o)).collect();
        if times.is_empty() {
            return None;
        }
        let logs: f64 = times.iter().map(|t| t.max(1e-6).ln()).sum();
        Some(((logs / times.len() as f64).exp(), times.len()))
    }

    /// The queries that failed (not timed out nor stopped), with PostgreSQL's message.
    pub fn failures(&self) -> Vec<String> {
        let failed = self.passes.iter().flat_map(|p| p.queries.iter().map(move |q| (p.stream, q)));
        failed
            .filter_map(|(s, (n, o))| match o {
                Outcome::Failed(why) => Some(format!("q{n} of stream {s}: {why}")),
                _ => None,
            })
            .collect()
    }

    /// The figures as `fathom show` prints them: the power run, the throughput run,
    /// then a line per query.
    pub fn describe(&self, loaded: &Loaded) -> String {
        let mut out = Vec::new();
        if let Some(p) = self.power() {
            let order: Vec<String> = p.queries.iter().map(|(n, _)| n.to_string()).collect();
            let set = match self.power_seconds() {
                Some(s) => format!("query set {}", secs(s)),
                None => format!(
                    "{} of {} completed",
                    p.queries.iter().filter(|q| done(&q.1).is_some()).count(),
                    crate::metrics::format::counted(self.set.len() as u64, "query")
                ),
            };
            let mean = match self.geomean() {
                Some((g, n)) => format!(", geometric mean {} of {n} queries", secs(g)),
                None => String::new(),
            };
            out.push(format!("power run (stream 0, in the order {}): {set}{mean}", order.join(" ")));
        }
        let streams: Vec<&Pass> = self.passes.iter().filter(|p| p.run == Run::Throughput).collect();
        if let Some(t) = self.throughput_seconds {
            let n = streams.iter().map(|p| p.stream).max().unwrap_or(0);
            let sets: Vec<String> = (1..=n).map(|s| self.stream_sets(s, &streams)).collect();
            out.push(format!("throughput run: {n} streams in {}; query sets: {}", secs(t), sets.join(", ")));
        }
        out.push(["query", "power s", "streams: mean s", "max s", "note"].join("\t"));
        // every query of the set, those no pass reached too (said so, never left out)
        let mut order = self.set.clone();
        order.sort_unstable();
        for n in order {
            out.push(self.query_line(n, &streams));
        }
        let load = match loaded.reused {
            true => "the loaded database reused".to_string(),
            false => format!("loaded in {:.1} s", loaded.seconds),
        };
        out.push(format!("scale {}: {load}, {:.0} MB", loaded.scale, loaded.bytes / 1e6));
        out.join("\n")
    }

    /// Stream `s`'s query-set times: one, or (`repeat`) how many with their mean and
    /// range; and how far a pass the workload's end cut had come.
    fn stream_sets(&self, s: u32, streams: &[&Pass]) -> String {
        let passes: Vec<&&Pass> = streams.iter().filter(|p| p.stream == s).collect();
        let done: Vec<f64> = passes.iter().filter(|p| p.complete(self.set.len())).map(|p| p.seconds).collect();
        let mut text = match done[..] {
            [] => format!("stream {s} none complete"),
            [one] => format!("stream {s} {}", secs(one)),
            _ => {
                let mean = done.iter().sum::<f64>() / done.len() as f64;
                let (lo, hi) =
                    (done.iter().cloned().fold(f64::MAX, f64::min), done.iter().cloned().fold(0.0, f64::max));
                format!("stream {s} {} sets, mean {} ({} to {})", done.len(), secs(mean), secs(lo), secs(hi))
            }
        };
        if let Some(cut) = passes.iter().find(|p| !p.complete(self.set.len())) {
            text.push_str(&format!(" then {} of {} queries", cut.queries.len(), self.set.len()));
        }
        text
    }

    fn query_line(&self, n: u8, streams: &[&Pass]) -> String {
        let power = self.power().and_then(|p| p.queries.iter().find(|q| q.0 == n)).map(|q| cell(&q.1));
        let times: Vec<f64> =
            streams.iter().flat_map(|p| p.queries.iter()).filter(|q| q.0 == n).filter_map(|q| done(&q.1)).collect();
        let (mean, max) = match times.is_empty() {
            true => (String::new(), String::new()),
            false => {
                let mean = times.iter().sum::<f64>() / times.len() as f64;
                (format!("{mean:.3}"), format!("{:.3}", times.iter().cloned().fold(0.0, f64::max)))
            }
        };
        let cut: Vec<String> = streams
            .iter()
            .flat_map(|p| p.queries.iter())
            .filter(|q| q.0 == n && done(&q.1).is_none())
            .map(|q| cell(&q.1))
            .collect();
        let mut notes: Vec<&str> = DEPARTS.iter().filter(|d| d.0 == n).map(|d| d.1).collect();
        let cut = match cut.is_empty() {
            true => String::new(),
            false => format!("streams: {}", cut.join(", ")),
        };
        if !cut.is_empty() {
            notes.push(&cut);
        }
        if !self.passes.iter().any(|p| p.queries.iter().any(|q| q.0 == n)) {
            notes.push("not reached: the workload ended first");
        }
        [format!("q{n}"), power.unwrap_or_default(), mean, max, notes.join("; ")].join("\t")
    }
}

/// A query's seconds, if it completed.
fn done(o: &Outcome) -> Option<f64> {
    match o {
        Outcome::Done(s) => Some(*s),
        _ => None,
    }
}

/// A query's cell in the table: its seconds, or how it ended.
fn cell(o: &Outcome) -> String {
    match o {
        Outcome::Done(s) => format!("{s:.3}"),
        Outcome::TimedOut(_) => "timed out".into(),
        Outcome::Failed(_) => "failed".into(),
        Outcome::Stopped => "cut".into(),
    }
}

/// Seconds to the hundredth under a minute (a small scale's queries take milliseconds).
fn secs(s: f64) -> String {
    match s < 60.0 {
        true => format!("{s:.2} s"),
        false => crate::metrics::format::seconds(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pass(run: Run, stream: u32, times: &[(u8, Outcome)]) -> Pass {
        Pass { run, stream, queries: times.to_vec(), seconds: 3.0 }
    }

    #[test]
    fn the_geometric_mean_is_of_the_power_runs_completed_queries() {
        let power =
            pass(Run::Power, 0, &[(6, Outcome::Done(1.0)), (1, Outcome::Done(4.0)), (3, Outcome::TimedOut(60.0))]);
        let stream =
            pass(Run::Throughput, 1, &[(1, Outcome::Done(100.0)), (6, Outcome::Done(3.0)), (3, Outcome::Done(5.0))]);
        let f = Figures { passes: vec![power, stream], set: vec![1, 3, 6], throughput_seconds: Some(108.0) };
        let (g, n) = f.geomean().unwrap();
        assert!((g - 2.0).abs() < 1e-9 && n == 2, "{g} {n}");
        assert_eq!(f.power_seconds(), None);
        assert!(f.failures().is_empty());
        let loaded = Loaded { scale: 0.01, seconds: 2.0, bytes: 3e7, reused: false };
        let text = f.describe(&loaded);
        assert!(text.contains("2 of 3 queries completed, geometric mean"), "{text}");
        assert!(text.contains("stream 1 3.00 s"), "{text}");
        assert!(text.lines().any(|l| l == "q3\ttimed out\t5.000\t5.000\t"), "{text}");
        let again = Pass { seconds: 5.0, ..f.passes[1].clone() };
        let cut = Pass { queries: vec![(1, Outcome::Stopped)], ..f.passes[1].clone() };
        let f = Figures { passes: vec![f.passes[1].clone(), again, cut], ..f };
        let text = f.describe(&loaded);
        assert!(text.contains("stream 1 2 sets, mean 4.00 s (3.00 s to 5.00 s) then 1 of 3 queries"), "{text}");
    }

    /// A query no pass reached (the workload ended first) is listed as such, never left
    /// out of the table.
    #[test]
    fn a_query_never_reached_is_listed_as_not_reached() {
        let power = pass(Run::Power, 0, &[(6, Outcome::Done(1.0)), (1, Outcome::Stopped)]);
        let f = Figures { passes: vec![power], set: vec![6, 1, 4], throughput_seconds: None };
        let loaded = Loaded { scale: 0.01, seconds: 2.0, bytes: 3e7, reused: false };
        let text = f.describe(&loaded);
        assert!(text.contains("1 of 3 queries completed"), "{text}");
        assert!(text.lines().any(|l| l == "q1\tcut\t\t\t"), "{text}");
        assert!(text.lines().any(|l| l == "q4\t\t\t\tnot reached: the workload ended first"), "{text}");
    }
}
