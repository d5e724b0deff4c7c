//! `driver: tpch`: a TPC-H-like workload on PostgreSQL: the 22 queries, each its own op,
//! run by psql sessions ([`stream`]): first a power run (stream 0, one session), then a
//! throughput run (`streams` sessions at once), each stream in its order of TPC-H's
//! Appendix A.
//!
//! Before anything is recorded, [`Driver::check`] reaches each `dsn` and refuses a
//! database that holds tables other than fathom's. Before the run clock starts, each
//! workload's database is loaded ([`load`]): on a throwaway cluster once per scale
//! factor, which every workload of that scale on the cluster then queries (the queries
//! only read). After its run the runner stores HammerDB's figures ([`figures`]) as the
//! workload's `tpch` event and observations; a query PostgreSQL refused fails the run.

pub mod figures;
pub mod load;
pub mod stream;

use super::driver::{DbServer, Driver, LaunchContext, Ready, bad_input, spawn_program};
use super::postgres;
use super::throwaway::Clusters;
use crate::clock::sleep_until;
use crate::engine::WorkerThread;
use crate::engine::target::DataFile;
use crate::error::{Error, Result};
use crate::metrics::summary::Throughput;
use crate::metrics::{Op, OpStats, Sample};
use crate::scenario::program::seam::Spec;
use crate::scenario::program::tpch::{Tpch, op_name};
use crate::scenario::units::Size;
use crate::scenario::{EngineKind, Scenario, Workload};
use crate::store::sink::Record;
use crate::store::{EventRow, ObservationRow};
use figures::{Figures, Pass, Run};
use load::Loaded;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use stream::{Outcome, Session};

/// The queries' text, q1 to q22.
const QUERIES: [&str; 22] = [
    include_str!("sql/q1.sql"),
    include_str!("sql/q2.sql"),
    include_str!("sql/q3.sql"),
    include_str!("sql/q4.sql"),
    include_str!("sql/q5.sql"),
    include_str!("sql/q6.sql"),
    include_str!("sql/q7.sql"),
    include_str!("sql/q8.sql"),
    include_str!("sql/q9.sql"),
    include_str!("sql/q10.sql"),
    include_str!("sql/q11.sql"),
    include_str!("sql/q12.sql"),
    include_str!("sql/q13.sql"),
    include_str!("sql/q14.sql"),
    include_str!("sql/q15.sql"),
    include_str!("sql/q16.sql"),
    include_str!("sql/q17.sql"),
    include_str!("sql/q18.sql"),
    include_str!("sql/q19.sql"),
    include_str!("sql/q20.sql"),
    include_str!("sql/q21.sql"),
    include_str!("sql/q22.sql"),
];

/// TPC-H's Appendix A: the order of the queries in stream 0 (the power run) to 40.
const ORDERS: [[u8; 22]; 41] = [
    [14, 2, 9, 20, 6, 17, 18, 8, 21, 13, 3, 22, 16, 4, 11, 15, 1, 10, 19, 5, 7, 12],
    [21, 3, 18, 5, 11, 7, 6, 20, 17, 12, 16, 15, 13, 10, 2, 8, 14, 19, 9, 22, 1, 4],
    [6, 17, 14, 16, 19, 10, 9, 2, 15, 8, 5, 22, 12, 7, 13, 18, 1, 4, 20, 3, 11, 21],
    [8, 5, 4, 6, 17, 7, 1, 18, 22, 14, 9, 10, 15, 11, 20, 2, 21, 19, 13, 16, 12, 3],
    [5, 21, 14, 19, 15, 17, 12, 6, 4, 9, 8, 16, 11, 2, 10, 18, 1, 13, 7, 22, 3, 20],
    [21, 15, 4, 6, 7, 16, 19, 18, 14, 22, 11, 13, 3, 1, 2, 5, 8, 20, 12, 17, 10, 9],
    [10, 3, 15, 13, 6, 8, 9, 7, 4, 11, 22, 18, 12, 1, 5, 16, 2, 14, 19, 20, 17, 21],
    [18, 8, 20, 21, 2, 4, 22, 17, 1, 11, 9, 19, 3, 13, 5, 7, 10, 16, 6, 14, 15, 12],
    [19, 1, 15, 17, 5, 8, 9, 12, 14, 7, 4, 3, 20, 16, 6, 22, 10, 13, 2, 21, 18, 11],
    [8, 13, 2, 20, 17, 3, 6, 21, 18, 11, 19, 10, 15, 4, 22, 1, 7, 12, 9, 14, 5, 16],
    [6, 15, 18, 17, 12, 1, 7, 2, 22, 13, 21, 10, 14, 9, 3, 16, 20, 19, 11, 4, 8, 5],
    [15, 14, 18, 17, 10, 20, 16, 11, 1, 8, 4, 22, 5, 12, 3, 9, 21, 2, 13, 6, 19, 7],
    [1, 7, 16, 17, 18, 22, 12, 6, 8, 9, 11, 4, 2, 5, 20, 21, 13, 10, 19, 3, 14, 15],
    [21, 17, 7, 3, 1, 10, 12, 22, 9, 16, 6, 11, 2, 4, 5, 14, 8, 20, 13, 18, 15, 19],
    [2, 9, 5, 4, 18, 1, 20, 15, 16, 17, 7, 21, 13, 14, 19, 8, 22, 11, 10, 3, 12, 6],
    [16, 9, 17, 8, 14, 11, 10, 12, 6, 21, 7, 3, 15, 5, 22, 20, 1, 13, 19, 2, 4, 18],
    [1, 3, 6, 5, 2, 16, 14, 22, 17, 20, 4, 9, 10, 11, 15, 8, 12, 19, 18, 13, 7, 21],
    [3, 16, 5, 11, 21, 9, 2, 15, 10, 18, 17, 7, 8, 19, 14, 13, 1, 4, 22, 20, 6, 12],
    [14, 4, 13, 5, 21, 11, 8, 6, 3, 17, 2, 20, 1, 19, 10, 9, 12, 18, 15, 7, 22, 16],
    [4, 12, 22, 14, 5, 15, 16, 2, 8, 10, 17, 9, 21, 7, 3, 6, 13, 18, 11, 20, 19, 1],
    [16, 15, 14, 13, 4, 22, 18, 19, 7, 1, 12, 17, 5, 10, 20, 3, 9, 21, 11, 2, 6, 8],
    [20, 14, 21, 12, 15, 17, 4, 19, 13, 10, 11, 1, 16, 5, 18, 7, 8, 22, 9, 6, 3, 2],
    [16, 14, 13, 2, 21, 10, 11, 4, 1, 22, 18, 12, 19, 5, 7, 8, 6, 3, 15, 20, 9, 17],
    [18, 15, 9, 14, 12, 2, 8, 11, 22, 21, 16, 1, 6, 17, 5, 10, 19, 4, 20, 13, 3, 7],
    [7, 3, 10, 14, 13, 21, 18, 6, 20, 4, 9, 8, 22, 15, 2, 1, 5, 12, 19, 17, 11, 16],
    [18, 1, 13, 7, 16, 10, 14, 2, 19, 5, 21, 11, 22, 15, 8, 17, 20, 3, 4, 12, 6, 9],
    [13, 2, 22, 5, 11, 21, 20, 14, 7, 10, 4, 9, 19, 18, 6, 3, 1, 8, 15, 12, 17, 16],
    [14, 17, 21, 8, 2, 9, 6, 4, 5, 13, 22, 7, 15, 3, 1, 18, 16, 11, 10, 12, 20, 19],
    [10, 22, 1, 12, 13, 18, 21, 20, 2, 14, 16, 7, 15, 3, 4, 17, 5, 19, 6, 8, 9, 11],
    [10, 8, 9, 18, 12, 6, 1, 5, 20, 11, 17, 22, 16, 3, 13, 2, 15, 21, 14, 19, 7, 4],
    [7, 17, 22, 5, 3, 10, 13, 18, 9, 1, 14, 15, 21, 19, 16, 12, 8, 6, 11, 20, 4, 2],
    [2, 9, 21, 3, 4, 7, 1, 11, 16, 5, 20, 19, 18, 8, 17, 13, 10, 12, 15, 6, 14, 22],
    [15, 12, 8, 4, 22, 13, 16, 17, 18, 3, 7, 5, 6, 1, 9, 11, 21, 10, 14, 20, 19, 2],
    [15, 16, 2, 11, 17, 7, 5, 14, 20, 4, 21, 3, 10, 9, 12, 8, 13, 6, 18, 19, 22, 1],
    [1, 13, 11, 3, 4, 21, 6, 14, 15, 22, 18, 9, 7, 5, 10, 20, 12, 16, 17, 8, 19, 2],
    [14, 17, 22, 20, 8, 16, 5, 10, 1, 13, 2, 21, 12, 9, 4, 18, 3, 7, 6, 19, 15, 11],
    [9, 17, 7, 4, 5, 13, 21, 18, 11, 3, 22, 1, 6, 16, 20, 14, 15, 10, 8, 2, 12, 19],
    [13, 14, 5, 22, 19, 11, 9, 6, 18, 15, 8, 10, 7, 4, 17, 16, 3, 1, 12, 2, 21, 20],
    [20, 5, 4, 14, 11, 1, 6, 16, 8, 22, 7, 3, 2, 12, 21, 19, 17, 13, 10, 15, 18, 9],
    [3, 7, 14, 15, 6, 5, 21, 20, 18, 10, 4, 16, 19, 1, 13, 9, 8, 17, 11, 12, 22, 2],
    [13, 15, 17, 1, 22, 11, 3, 4, 7, 20, 14, 21, 9, 8, 2, 18, 16, 6, 10, 12, 5, 19],
];

pub struct TpchDriver;

/// The TPC-H settings of workload `w`, if tpch runs it.
fn spec(w: &Workload) -> Option<&Tpch> {
    w.program()?.get::<Tpch>()
}

/// Query `n`'s text at scale factor `scale` (Q11's fraction is 0.0001 / SF).
pub fn query(n: u8, scale: f64) -> String {
    QUERIES[n as usize - 1].replace("{FRACTION}", &format!("{}", 0.0001 / scale))
}

/// The queries of `stream` in its order, those asked only.
fn order(stream: u32, asked: &[u8]) -> Vec<u8> {
    ORDERS[stream as usize % ORDERS.len()].iter().copied().filter(|n| asked.contains(n)).collect()
}

/// Each workload's database, ready, and the clusters fathom started for them.
#[derive(Default)]
struct Databases {
    ready: HashMap<usize, (String, Loaded)>,
    clusters: Clusters,
}

/// Loads a database for every tpch workload: a `dsn`'s in place, else one per cluster
/// and scale factor, which the workloads of that scale share.
fn prepare(scenario: &Scenario, dir: &Path, stop: &AtomicBool, progress: &dyn Fn(&str)) -> Result<Databases> {
    let mut dbs = Databases::default();
    let mut loads: crate::drivers::loading::Loads<Loaded> = Default::default();
    for (idx, w) in scenario.workloads.iter().enumerate() {
        let Some(p) = spec(w) else { continue };
        let named = |e: Error| Error::failed(format!("{}: {e}", w.name));
        let say = |m: &str| progress(&format!("{}: {m}", w.name));
        let (dsn, tablespaces) = match &p.dsn {
            Some(dsn) => (dsn.clone(), Vec::new()),
            None => {
                let cluster = dbs.clusters.get((idx, &w.name), &p.server_dirs(), &p.settings, dir, stop, progress)?;
                let dsn = cluster.dsn(&p.database());
                if !loads.holds(&dsn) {
                    room(&cluster.dir, p).map_err(|e| bad_input(named(e)))?;
                }
                cluster.create_database(&p.database(), None, stop).map_err(|e| bad_input(named(e)))?;
                (dsn, cluster.tablespaces())
            }
        };
        let done = loads.once(
            &dsn,
            |l| l.scale == p.scale,
            || {
                let db = postgres::Database { dsn: &dsn, users: p.dsn.is_some(), tablespaces };
                let l = load::load(&db, p.scale, p.reuse, crate::drivers::loading::sessions(), stop, &say)
                    .map_err(named)?;
                if !l.reused {
                    say(&format!("loaded scale {} in {:.1} s, {:.0} MB", p.scale, l.seconds, l.bytes / 1e6));
                }
                Ok(l)
            },
        )?;
        dbs.ready.insert(idx, (dsn, done));
    }
    dbs.clusters.settle(stop)?;
    Ok(dbs)
}

/// Refuses, before anything is loaded, a cluster in `dir` whose storage has no room for
/// `p`'s database.
fn room(dir: &Path, p: &Tpch) -> Result<()> {
    match crate::nofollow::free_space(dir) {
        Some(free) if free < p.bytes() => Err(Error::failed(format!(
            "scale {} needs about {} in {}, which has {} free: give a smaller `scale` or a `target` with more room",
            p.scale,
            Size(p.bytes()).human(),
            dir.display(),
            Size(free).human()
        ))),
        _ => Ok(()),
    }
}

impl Driver for TpchDriver {
    fn name(&self) -> &'static str {
        "tpch"
    }

    fn runs(&self, w: &Workload, _: Option<EngineKind>) -> bool {
        spec(w).is_some()
    }

    fn check(&self, scenario: &Scenario, stop: &AtomicBool) -> Result<()> {
        postgres::client("psql").map_err(bad_input)?;
        for w in &scenario.workloads {
            let Some(Tpch { dsn: Some(dsn), .. }) = spec(w) else { continue };
            postgres::own_database(&w.name, dsn, &load::TABLES, "TPC-H", stop)
                .map_err(|e| super::driver::bad_input_unless(stop, e))?;
        }
        Ok(())
    }

    fn prepare(
        &self,
        scenario: &Scenario,
        dir: &Path,
        stop: &AtomicBool,
        progress: &dyn Fn(&str),
    ) -> Result<Box<dyn Ready>> {
        Ok(Box::new(prepare(scenario, dir, stop, progress)?))
    }

    fn describe(&self, w: &Workload, _: &[Arc<DataFile>], _: u32, _: Option<EngineKind>) -> String {
        let Some(p) = spec(w) else { return w.runner() };
        let first = if p.power { "a power run, then " } else { "" };
        let runs = match (p.streams, p.repeat) {
            (0, false) => "a power run".to_string(),
            (0, true) => "power runs repeated".to_string(),
            (n, false) => format!("{first}{}", crate::metrics::format::counted(n, "stream")),
            (n, true) => format!("{first}{} repeated", crate::metrics::format::counted(n, "stream")),
        };
        let server = if p.dsn.is_some() { "the given server" } else { "a throwaway PostgreSQL" };
        format!(
            "tpch, scale {}, {runs} of {}, on {server}",
            p.scale,
            crate::metrics::format::counted(p.queries.len() as u64, "query")
        )
    }
}

impl Ready for Databases {
    fn start(&self, cx: &LaunchContext) -> Result<Vec<(WorkerThread, String)>> {
        let Some((dsn, loaded)) = self.ready.get(&cx.workload_idx).cloned() else {
            return Err(Error::failed(format!("{}: its TPC-H database was not loaded", cx.workload.name)));
        };
        spawn_program(cx, "tpch", move |l| run(l, &dsn, loaded))
    }

    fn stop(mut self: Box<Self>) -> Result<()> {
        self.clusters.stop()
    }

    fn servers(&self) -> Vec<DbServer> {
        self.clusters.servers(self.ready.iter().map(|(workload, (dsn, _))| (*workload, dsn.as_str())))
    }

    fn retire(&self, over: &[usize]) -> Vec<String> {
        self.clusters.retire(over)
    }
}

/// Runs workload `l`'s power run, then its throughput run, then stores their figures.
fn run(l: &LaunchContext, dsn: &str, loaded: Loaded) -> Result<()> {
    let w = &l.workload;
    let Some(p) = spec(w) else { return Err(Error::failed(format!("{}: not a tpch workload", w.name))) };
    let named = |e: Error| Error::failed(format!("{}: {e}", w.name));
    sleep_until(l.begin, &l.stop);
    let mut all = match p.power {
        true => passes(l, dsn, p, 0, Run::Power, p.repeat && p.streams == 0).map_err(named)?,
        false => Vec::new(),
    };
    let mut throughput_seconds = None;
    if p.streams > 0 && !ending(l) {
        let began = Instant::now();
        let streams: Vec<Result<Vec<Pass>>> = std::thread::scope(|scope| {
            let each: Vec<_> =
                (1..=p.streams).map(|s| scope.spawn(move || passes(l, dsn, p, s, Run::Throughput, p.repeat))).collect();
            each.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(Error::failed("a stream panicked")))).collect()
        });
        throughput_seconds = Some(began.elapsed().as_secs_f64());
        for s in streams {
            all.extend(s.map_err(named)?);
        }
    }
    l.io_end.set(l.clock_start.elapsed().as_secs_f64());
    let f = Figures { passes: all, set: p.queries.clone(), throughput_seconds };
    record(l, &f, &loaded);
    let failures = f.failures();
    match failures.is_empty() {
        true => Ok(()),
        false => Err(named(Error::failed(format!("PostgreSQL refused {}", failures.join("; "))))),
    }
}

/// Whether workload `l` is to end: stopped, the run aborted, or its duration over.
fn ending(l: &LaunchContext) -> bool {
    l.stop.load(Ordering::Relaxed) || l.abort.load(Ordering::Relaxed) || Instant::now() >= l.end()
}

/// Stream `stream`'s passes through its queries, one or (`repeat`) until the workload
/// ends, each query's time sent as a sample of worker `stream - 1` (the power run's:
/// worker 0) in the second it ended.
fn passes(l: &LaunchContext, dsn: &str, p: &Tpch, stream: u32, run: Run, repeat: bool) -> Result<Vec<Pass>> {
    let mut session = Session::open(dsn, p.query_timeout)?;
    let worker = l.first_worker + stream.saturating_sub(1);
    let mut out = Vec::new();
    loop {
        let began = Instant::now();
        let mut queries = Vec::new();
        for n in order(stream, &p.queries) {
            let outcome = session.run(&query(n, p.scale), &|| ending(l))?;
            // a query cut by `query_timeout` took at least that long: its time counts
            if let Outcome::Done(seconds) | Outcome::TimedOut(seconds) = outcome {
                sample(l, worker, n, seconds);
            }
            let stopped = outcome == Outcome::Stopped;
            queries.push((n, outcome));
            if stopped {
                break;
            }
        }
        out.push(Pass { run, stream, queries, seconds: began.elapsed().as_secs_f64() });
        if !repeat || ending(l) {
            break;
        }
    }
    session.close();
    Ok(out)
}

/// Sends query `n`'s time as a sample of `worker`, in the second of the run clock it
/// ended in (none past the workload's end).
fn sample(l: &LaunchContext, worker: u32, n: u8, seconds: f64) {
    let t = l.clock_start.elapsed().as_secs();
    if t >= l.end_t {
        return;
    }
    let mut stats = OpStats::new(false);
    let ns = (seconds * 1e9).max(1.0) as u64;
    stats.ops = 1;
    stats.latency_sum_ns = ns;
    stats.latency.saturating_record(ns);
    let op = Op::named(&op_name(n), Throughput::Tps);
    let _ = l.tx.send(Sample { workload: l.workload_idx, worker, t: t as u32, op, stats });
}

/// Stores the figures as the workload's `tpch` event (what `fathom show` prints) and
/// observations, at the second the workload began.
fn record(l: &LaunchContext, f: &Figures, loaded: &Loaded) {
    let t = l.begin_t();
    let failed = f.failures();
    l.sink.send(Record::Event(EventRow {
        at_ms: (t as i64) * 1000,
        kind: "tpch".into(),
        label: l.workload.name.clone(),
        status: Some(if failed.is_empty() { 0 } else { 1 }),
        took_ms: None,
        detail: f.describe(loaded),
    }));
    let source = format!("tpch:{}", l.workload.name);
    let mut rows = vec![("load_s", loaded.seconds), ("bytes", loaded.bytes), ("failed", failed.len() as f64)];
    if let Some(s) = f.power_seconds() {
        rows.push(("power_s", s));
    }
    if let Some((g, _)) = f.geomean() {
        rows.push(("geomean_s", g));
    }
    if let Some(s) = f.throughput_seconds {
        rows.push(("throughput_s", s));
    }
    let rows: Vec<ObservationRow> = rows
        .into_iter()
        .map(|(name, value)| ObservationRow { t: t as i64, source: source.clone(), name: name.into(), value })
        .collect();
    l.sink.send(Record::Observations(rows));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_order_is_a_permutation_of_the_22_queries() {
        for set in ORDERS {
            let mut sorted = set;
            sorted.sort_unstable();
            assert_eq!(sorted.to_vec(), (1..=22).collect::<Vec<u8>>());
        }
        assert_eq!(order(0, &[1, 6, 14]), [14, 6, 1]);
        assert_eq!(order(41, &[1, 2]), order(0, &[1, 2]));
        assert!(query(11, 1.0).contains("* 0.0001") && !query(11, 0.01).contains("{FRACTION}"));
    }
}
