//! `driver: tpch` (or `tproch`, HammerDB's name): a TPC-H-like analytic workload on
//! PostgreSQL: its 22 queries timed one by one, in a power run (one stream) and a
//! throughput run (`streams` at once), on a throwaway cluster fathom creates on the
//! storage under test or a server given by `dsn`. Each query is an op of its own
//! (`q1` to `q22`); `crate::drivers::tpch` runs it.

use super::dbms::Dbms;
use super::pgbench::{log_target, no_secret, settings, table_targets, target};
use super::seam::{Keys, Measures, Program, ProgramSpec, Risk, ServerDirs, Spec};
use crate::error::Result;
use crate::metrics::Op;
use crate::metrics::headline::{Figure, Headline};
use crate::metrics::summary::Throughput;
use crate::scenario::units::{Size, Span};
use serde::Serialize;
use std::any::Any;
use std::path::PathBuf;
use std::time::Duration;

pub struct TpchProgram;

/// The largest scale factor a workload may ask (about 1.8 TB on disk).
const MAX_SCALE: f64 = 1000.0;

/// About how large a loaded database is on disk per unit of scale factor, with its
/// keys and indexes (measured on PostgreSQL 15: 1.84 GB at scale 1, 192 MB at 0.1).
pub const BYTES_PER_SCALE: u64 = 1_850_000_000;

/// The throughput run's streams at most: TPC-H's Appendix A orders 40 of them.
pub const MAX_STREAMS: u32 = 40;

/// `driver: tpch`'s settings, checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tpch {
    /// A libpq connection string or URI; `None`: a throwaway cluster fathom creates.
    pub dsn: Option<String>,
    /// TPC-H's scale factor: 1 is about 1 GB of rows (6 million line items).
    pub scale: f64,
    /// The throughput run's concurrent streams; 0: the power run alone.
    pub streams: u32,
    /// The queries run, by number, each stream in its own order of them.
    pub queries: Vec<u8>,
    /// The longest a query may run (PostgreSQL's `statement_timeout`); `None`: no limit.
    pub query_timeout: Option<Duration>,
    /// The streams run their query sets again until the workload's `duration` ends.
    pub repeat: bool,
    /// The power run comes first; without it, the throughput run's streams alone (DSS
    /// joining other work).
    pub power: bool,
    /// With a `dsn`: keep tables already loaded at this scale.
    pub reuse: bool,
    /// Server settings of the throwaway cluster, in order.
    pub settings: Vec<(String, String)>,
    /// The directory the throwaway cluster lives in: the storage under test.
    pub target: Option<PathBuf>,
    /// The directory of its transaction log (`log_target`), on a disk of its own; `None`:
    /// beside the data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_target: Option<PathBuf>,
    /// The directories its tables are spread over (`table_targets`), one per disk; empty:
    /// with the data.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub table_targets: Vec<PathBuf>,
}

impl Tpch {
    /// The database's name on a throwaway cluster: one per scale factor.
    pub fn database(&self) -> String {
        format!("tpch_sf{}", self.scale.to_string().replace('.', "_"))
    }

    /// About how large the loaded database is.
    pub fn bytes(&self) -> u64 {
        (self.scale * BYTES_PER_SCALE as f64) as u64
    }
}

/// The op of query `n`.
pub fn op_name(n: u8) -> String {
    format!("q{n}")
}

/// `scale`: a positive number, at most [`MAX_SCALE`]; 0 or less is refused.
fn scale(keys: &Keys) -> Result<f64> {
    let (s, at) = keys.get::<f64>("scale")?;
    let s = s.unwrap_or(1.0);
    if !(s > 0.0 && s <= MAX_SCALE) {
        let msg = format!(
            "{s}: give a scale factor above 0 and at most {MAX_SCALE} (1 is about {} loaded, 0.01 a test's)",
            Size(BYTES_PER_SCALE).human()
        );
        return Err(keys.fail(&at, &msg));
    }
    if !loadable(s) {
        let near: Vec<String> =
            (1..23).map(|k| k as f64 / 1000.0).filter(|s| loadable(*s)).map(|s| s.to_string()).collect();
        let msg = format!(
            "{s}: TPC-H's generator gives a part the same supplier twice at this scale (too few suppliers), so the \
             load would fail on PARTSUPP's key: give one it can load ({} or any from 0.023 up)",
            near.join(", ")
        );
        return Err(keys.fail(&at, &msg));
    }
    Ok(s)
}

/// Whether TPC-H's generator gives every part four different suppliers at scale `sf`,
/// as PARTSUPP's primary key needs: it takes a part's suppliers a quarter of the
/// suppliers apart, plus the part's number over their count, so at a few hundred
/// suppliers or fewer (a scale under 0.023) two of them can be one (at 0.001 its 10
/// suppliers give part 31 the same one twice); above, the four steps stay under one
/// turn of the suppliers. Asked of the generator's own choice of supplier, part by part.
fn loadable(sf: f64) -> bool {
    use tpchgen::generators::{PartGenerator, PartSuppGeneratorIterator};
    if sf >= 0.023 {
        return true;
    }
    // fewer than four suppliers cannot give a part four (and none divides by zero)
    if sf * 10_000.0 < 4.0 {
        return false;
    }
    (1..=PartGenerator::calculate_row_count(sf, 1, 1)).all(|part| {
        let suppliers: std::collections::HashSet<i64> =
            (0..4).map(|i| PartSuppGeneratorIterator::select_part_supplier(part, i, sf)).collect();
        suppliers.len() == 4
    })
}

/// `queries`: query numbers from 1 to 22, each once; all 22 if unset.
fn queries(keys: &Keys) -> Result<Vec<u8>> {
    let (list, at) = keys.get::<Vec<i64>>("queries")?;
    let Some(list) = list else { return Ok((1..=22).collect()) };
    if list.is_empty() {
        return Err(keys.fail(&at, "is empty: give query numbers from 1 to 22, or leave it out for all 22"));
    }
    let mut out: Vec<u8> = Vec::new();
    for n in list {
        if !(1..=22).contains(&n) {
            return Err(keys.fail(&at, &format!("{n} is no TPC-H query: give numbers from 1 to 22")));
        }
        if out.contains(&(n as u8)) {
            return Err(keys.fail(&at, &format!("query {n} is named twice")));
        }
        out.push(n as u8);
    }
    Ok(out)
}

impl Program for TpchProgram {
    fn name(&self) -> &'static str {
        "tpch"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["tproch"]
    }

    fn keys(&self) -> &'static [&'static str] {
        &[
            "target",
            "log_target",
            "table_targets",
            "dsn",
            "scale",
            "streams",
            "queries",
            "query_timeout",
            "repeat",
            "power",
            "reuse",
            "settings",
        ]
    }

    fn concurrency(&self) -> &'static [&'static str] {
        &["streams"]
    }

    fn settles(&self) -> &'static str {
        "a database's cache fills with the tables the queries scan"
    }

    fn check(&self, keys: &Keys) -> Result<ProgramSpec> {
        let (dsn, dsn_at) = keys.line("dsn")?;
        if let Some(dsn) = &dsn {
            no_secret(dsn).map_err(|why| keys.fail(&dsn_at, &why.to_string()))?;
        }
        let scale = scale(keys)?;
        let (streams, streams_at) = keys.get::<u32>("streams")?;
        let streams = streams.unwrap_or(0);
        if streams > MAX_STREAMS {
            let msg = format!("{streams} must be at most {MAX_STREAMS} (TPC-H orders the queries of 40 streams)");
            return Err(keys.fail(&streams_at, &msg));
        }
        let queries = queries(keys)?;
        let (timeout, timeout_at) = keys.get::<Span>("query_timeout")?;
        let query_timeout = match timeout {
            Some(Span(t)) if t < Duration::from_millis(1) => {
                return Err(keys.fail(&timeout_at, "must be at least 1ms (leave it out for no limit)"));
            }
            t => t.map(|s| s.0),
        };
        let repeat = keys.get::<bool>("repeat")?.0.unwrap_or(false);
        let (power, power_at) = keys.get::<bool>("power")?;
        let power = power.unwrap_or(true);
        if !power && streams == 0 {
            return Err(keys.fail(&power_at, "leaves nothing to run: with `power: false` give `streams` (1 or more)"));
        }
        let settings = settings(keys, dsn.is_some())?;
        let target = target(keys, dsn.is_some())?;
        let log_target = log_target(keys, dsn.is_some(), &target)?;
        let table_targets = table_targets(keys, dsn.is_some(), &target, &log_target)?;
        let reuse = keys.get::<bool>("reuse")?.0.unwrap_or(false);
        let spec = Tpch {
            dsn,
            scale,
            streams,
            queries,
            query_timeout,
            repeat,
            power,
            reuse,
            settings,
            target,
            log_target,
            table_targets,
        };
        Ok(ProgramSpec::new(spec))
    }
}

impl Spec for Tpch {
    fn program(&self) -> &'static dyn Program {
        &TpchProgram
    }

    /// The throughput run's streams, else the power run's one.
    fn workers(&self) -> u32 {
        self.streams.max(1)
    }

    fn stored(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        v["driver"] = "tpch".into();
        v
    }

    fn measures(&self) -> Measures {
        let ops = self.queries.iter().map(|n| Op::named(&op_name(*n), Throughput::Tps)).collect();
        Measures { unit: Throughput::Tps, ops, latency: true, mb_per_s: false, rate: false }
    }

    /// Without `repeat`, once its streams' query sets are done.
    fn ends_after(&self) -> Option<(&'static str, &'static str)> {
        let how = "raise `scale` (each query then reads more), or set `repeat: true` so that the streams run their \
                   query sets again for the whole `duration`";
        (!self.repeat).then_some(("its query sets", how))
    }

    /// A database in memory: the queries' scans never reach storage after the first.
    fn risks(&self, memory_bytes: Option<u64>, _ramp: Duration) -> Vec<Risk> {
        let size = self.bytes();
        let sb = Dbms::Postgresql.cache_bytes(&self.dsn, &self.settings);
        let fits = match (sb, memory_bytes) {
            (Some(sb), _) if size <= sb => format!("shared_buffers ({})", Size(sb).human()),
            (_, Some(ram)) if size < ram => format!("the {} of RAM", Size(ram).human()),
            _ => return Vec::new(),
        };
        let message = format!(
            "scale {} (about {}) fits in {fits}: after the first scans the queries read the page cache, so this run \
             measures memory and CPU more than storage. For storage, raise `scale` past RAM (1 is about {})",
            self.scale,
            Size(size).human(),
            Size(BYTES_PER_SCALE).human()
        );
        vec![Risk { rule: "tpch-in-memory", warning: false, message }]
    }

    /// The power run's query-set time, and the geometric mean of its query times; its
    /// queries, run once per stream, have times and no rates.
    fn headline(&self) -> Headline {
        Headline {
            figure: Figure::seconds("tpch", "power_s", "query set"),
            beside: vec![Figure::seconds("tpch", "geomean_s", "geometric mean")],
            leading_op: None,
            rated: false,
        }
    }

    fn serves_database(&self) -> bool {
        true
    }

    fn server_given(&self) -> bool {
        self.dsn.is_some()
    }

    fn server_dirs(&self) -> ServerDirs {
        ServerDirs { data: self.target.clone(), log: self.log_target.clone(), tables: self.table_targets.clone() }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{Scenario, Source};

    fn load(keys: &str) -> Result<Scenario> {
        let text = format!("name: t\nworkloads:\n  dss: {{driver: tproch, duration: 60s{keys}}}\n");
        Scenario::load(&Source { origin: "t.yaml".into(), text: &text }, &[])
    }

    fn spec(s: &Scenario) -> Tpch {
        s.workloads[0].program().unwrap().get::<Tpch>().unwrap().clone()
    }

    #[test]
    fn its_keys_and_defaults() {
        let t = spec(&load(", scale: 0.01, streams: 3, queries: [6, 1], query_timeout: 30s, repeat: true").unwrap());
        assert_eq!((t.scale, t.streams, t.queries.clone(), t.repeat), (0.01, 3, vec![6, 1], true));
        assert_eq!(
            (t.query_timeout, t.workers(), t.database()),
            (Some(Duration::from_secs(30)), 3, "tpch_sf0_01".into())
        );
        let ops: Vec<&str> = t.measures().ops.iter().map(|o| o.as_str()).collect();
        assert_eq!(ops, ["q6", "q1"]);
        let t = spec(&load("").unwrap());
        assert_eq!((t.scale, t.streams, t.queries.len(), t.workers(), t.query_timeout), (1.0, 0, 22, 1, None));
        assert_eq!(t.stored()["driver"], "tpch");
    }

    #[test]
    fn bad_values_are_refused_at_their_key() {
        for (keys, says) in [
            (", scale: 0", "0: give a scale factor above 0"),
            (", scale: -1", "-1: give a scale factor above 0"),
            (", scale: 5000", "at most 1000"),
            (", scale: 0.001", "0.001: TPC-H's generator gives a part the same supplier twice"),
            (", scale: 0.015", "give one it can load (0.008, 0.01, 0.011,"),
            (", streams: 41", "41 must be at most 40"),
            (", queries: [1, 23]", "23 is no TPC-H query"),
            (", queries: [3, 3]", "query 3 is named twice"),
            (", queries: []", "is empty"),
            (", query_timeout: 0s", "at least 1ms"),
            (", dsn: 'host=db', settings: {work_mem: 64MB}", "configures the throwaway cluster"),
            (", warehouses: 10", "does not apply to `driver: tproch`"),
            (", power: false", "leaves nothing to run"),
        ] {
            let e = load(keys).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("t.yaml") && e.contains("dss"), "{keys}: {e}");
        }
    }

    /// What `loadable` says is what the generator does: its PARTSUPP rows repeat a key at
    /// 0.001 and 0.015, and not at 0.008 or 0.022.
    #[test]
    fn a_scale_is_loadable_when_the_generator_gives_unique_partsupp_keys() {
        for (sf, unique) in [(0.001, false), (0.008, true), (0.015, false), (0.022, true)] {
            let mut seen = std::collections::HashSet::new();
            let rows = tpchgen::generators::PartSuppGenerator::new(sf, 1, 1);
            let generated = rows.iter().all(|ps| seen.insert((ps.ps_partkey, ps.ps_suppkey)));
            assert_eq!((loadable(sf), generated), (unique, unique), "scale {sf}");
        }
    }

    #[test]
    fn a_database_in_memory_is_a_risk() {
        let t = spec(&load(", scale: 0.1").unwrap());
        let rules: Vec<&str> = t.risks(Some(64 << 30), Duration::ZERO).iter().map(|r| r.rule).collect();
        assert_eq!(rules, ["tpch-in-memory"]);
        assert!(t.risks(Some(1 << 20), Duration::ZERO).is_empty() || t.bytes() <= 128 << 20);
        let t = spec(&load(", scale: 100").unwrap());
        assert!(t.risks(Some(16 << 30), Duration::ZERO).is_empty());
    }
}
