//! `driver:` workloads: another program does the work (pgbench against PostgreSQL, iperf3
//! over the network) and fathom turns what it reports into the same per-second samples,
//! timeline and store as its own IO engine. This module holds a driver workload's settings
//! (`check::drivers` checks its keys); `crate::drivers` runs the programs.

use crate::error::{Error, Result};
use crate::scenario::pattern::BlockSizes;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The programs a scenario's workload can be run by (`driver: pgbench`): programs with
/// work of their own (transactions, a network stream), never an IO profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DriverName {
    Pgbench,
    Iperf3,
}

/// A driver workload's settings, checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "driver", rename_all = "lowercase")]
pub enum Driver {
    Pgbench(Pgbench),
    Iperf3(Iperf3),
    /// A section of a fio job file, run by fio as written (`--engine fio` on a job file).
    #[serde(rename = "fio")]
    FioJob(FioJob),
}

impl Driver {
    /// The rate asked for, in the program's own operations per second (pgbench's
    /// transactions), if it takes one.
    pub fn rate(&self) -> Option<f64> {
        match self {
            Driver::Pgbench(p) => p.rate,
            Driver::Iperf3(_) | Driver::FioJob(_) => None,
        }
    }

    /// The files and directories the program does its IO on, so the run records their
    /// file systems and observes their devices as it does for fathom's own workloads.
    /// Empty for the programs whose IO is not on a path given to fathom.
    pub fn targets(&self) -> &[PathBuf] {
        match self {
            Driver::FioJob(j) => &j.targets,
            Driver::Pgbench(_) | Driver::Iperf3(_) => &[],
        }
    }

    /// What a user's fio section does, in the IO profile's terms; `None` for the other
    /// programs.
    pub fn io_labels(&self) -> Option<&IoLabels> {
        match self {
            Driver::FioJob(j) => Some(&j.labels),
            Driver::Pgbench(_) | Driver::Iperf3(_) => None,
        }
    }
}

/// One section of a user's fio job file, as fio will run it: the section with every
/// option it has (its `[global]` ones included) and only its targets and the run's
/// `--set`s rewritten, so fio's own semantics of options fathom cannot map still hold.
/// Built by `scenario::fio_job::verbatim`, run by the fio driver.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FioJob {
    /// The section's name: fio reports its jobs under it.
    pub section: String,
    /// The one-section job file fio runs (kept in the run's directory as `NAME.fio`;
    /// the run stores the user's file as its scenario text).
    #[serde(skip)]
    pub text: String,
    /// The section is not `time_based`: fio ends it after its IO (how much is fio's to
    /// decide: `size`, `io_size`, `loops`, `number_ios`).
    #[serde(skip)]
    pub ends_by_itself: bool,
    /// A `runtime` (or `--set duration`) caps it.
    #[serde(skip)]
    pub capped: bool,
    /// What the section does, as fathom labels a workload.
    #[serde(skip)]
    pub labels: IoLabels,
    /// The files or directories fio is given for the section (after `--target`).
    #[serde(skip)]
    pub targets: Vec<PathBuf>,
}

/// What a program's IO is, in the IO profile's terms, so its workload is stored and shown
/// as what it did (the summary's depth beside Little's law; O_DIRECT or buffered) though
/// the program, not fathom, did it.
#[derive(Debug, Clone, PartialEq)]
pub struct IoLabels {
    /// IOs in flight per job: fio's `iodepth`, or 1 on an engine that does one IO at a
    /// time (psync, libaio without O_DIRECT).
    pub iodepth: u32,
    /// The `rw` by the name fathom and fio share (`randread`); `None` for one fathom has
    /// no name for (fio's trims).
    pub rw: Option<&'static str>,
    pub direct: bool,
    /// The block sizes, as the mapping reads `bs`, `bssplit` and `bsrange`; `None` where
    /// it cannot say (different sizes for reads and writes).
    pub bs: Option<BlockSizes>,
}

/// `driver: pgbench`: pgbench's own options, named as in pgbench.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pgbench {
    /// A libpq connection string or URI; `None`: a throwaway cluster fathom creates.
    pub dsn: Option<String>,
    /// pgbench's scale factor (`-s`): 100,000 accounts per unit, about 15 MB.
    pub scale: u32,
    /// Keep an existing database initialised at this scale instead of initialising again.
    pub reuse: bool,
    pub clients: u32,
    pub threads: u32,
    pub script: Script,
    /// Transactions per second for all clients together (pgbench's `--rate`).
    pub rate: Option<f64>,
    /// Server settings of the throwaway cluster (`shared_buffers: 1GB`), in order.
    pub settings: Vec<(String, String)>,
    /// The directory the throwaway cluster lives in (`target`): the storage under test.
    /// `None`: the run's own directory.
    pub target: Option<PathBuf>,
}

/// What each transaction runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Script {
    /// One of pgbench's built-in scripts: `tpcb-like`, `simple-update`, `select-only`.
    Builtin(String),
    /// A custom script file (pgbench `-f`).
    File(PathBuf),
    /// A custom script given in the scenario (`sql:`), written to the run's directory.
    Sql(String),
}

/// `driver: iperf3`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Iperf3 {
    /// `host[:port]` of a running `iperf3 -s`; `None`: fathom starts one on loopback.
    pub server: Option<String>,
    /// Parallel streams (`-P`).
    pub streams: u32,
    /// The server sends and the client receives (`-R`).
    pub reverse: bool,
    /// The link's speed in bits per second, to show throughput as a share of it.
    pub link_bps: Option<f64>,
}

impl Pgbench {
    /// PostgreSQL's default `shared_buffers` (128 MB), which a throwaway cluster keeps
    /// unless `settings` change it.
    pub const DEFAULT_SHARED_BUFFERS: u64 = 128 << 20;

    /// The `shared_buffers` of the throwaway cluster in bytes; `None` for a server given
    /// by `dsn` (its setting is its own) or a value fathom cannot read.
    pub fn shared_buffers(&self) -> Option<u64> {
        if self.dsn.is_some() {
            return None;
        }
        match self.settings.iter().find(|(k, _)| k == "shared_buffers") {
            None => Some(Self::DEFAULT_SHARED_BUFFERS),
            Some((_, v)) => pg_size(v),
        }
    }

    /// Size of the database at this scale in bytes: the field notes' table (scale 1 ≈
    /// 23 MB, 100 ≈ 1.7 GB, 1000 ≈ 15 GB) is about 15 MB per unit plus the catalog.
    pub fn database_bytes(&self) -> u64 {
        (8 + 15 * self.scale as u64) << 20
    }
}

/// A PostgreSQL memory setting in bytes: `1GB`, `512MB`, `64kB`, or a number of 8 kB pages.
pub fn pg_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let n: u64 = t[..split].parse().ok()?;
    let unit = match t[split..].trim() {
        "" => 8 << 10,
        "B" => 1,
        "kB" => 1 << 10,
        "MB" => 1 << 20,
        "GB" => 1 << 30,
        "TB" => 1 << 40,
        _ => return None,
    };
    Some(n * unit)
}

/// pgbench's built-in scripts.
pub const BUILTIN_SCRIPTS: [&str; 3] = ["tpcb-like", "simple-update", "select-only"];

/// A link speed such as `25gbit`, `10G`, `100mbit`, `1e9` (bits per second).
pub fn parse_bits(text: &str) -> Result<f64> {
    let t = text.trim().to_ascii_lowercase();
    let t = t.strip_suffix("/s").unwrap_or(&t);
    let t = t.strip_suffix("bps").or_else(|| t.strip_suffix("bit")).or_else(|| t.strip_suffix('b')).unwrap_or(t);
    let (number, scale) = match t.chars().last() {
        Some('k') => (&t[..t.len() - 1], 1e3),
        Some('m') => (&t[..t.len() - 1], 1e6),
        Some('g') => (&t[..t.len() - 1], 1e9),
        Some('t') => (&t[..t.len() - 1], 1e12),
        _ => (t, 1.0),
    };
    match number.trim().parse::<f64>() {
        Ok(n) if n > 0.0 && n.is_finite() => Ok(n * scale),
        _ => Err(Error::input(format!("`{text}` is not a link speed (e.g. 10gbit, 25G, 100mbit)"))),
    }
}

/// What a driver key is written as in a profile (a map of setting to value).
pub type Settings = IndexMap<String, super::yaml::Value>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{EngineKind, Scenario, Source};

    fn load(text: &str, sets: &[&str]) -> crate::error::Result<Scenario> {
        let sets: Vec<_> = sets.iter().map(|s| s.parse().unwrap()).collect();
        Scenario::load(&Source { origin: "t".into(), text }, &sets)
    }

    const MIXED: &str = "\
name: t
defaults:
  target: /tmp
  rw: randread
  clients: 4
  duration: 5s
workloads:
  io: {iodepth: 8}
  db:
    driver: pgbench
    script: select-only
    settings: {shared_buffers: 1GB, synchronous_commit: off}
  net: {driver: iperf3, streams: 2, link: 25gbit}
";

    #[test]
    fn driver_workloads_take_their_own_keys_and_ignore_the_io_defaults() {
        let s = load(MIXED, &[]).unwrap();
        let [io, db, net] = &s.workloads[..] else { panic!() };
        assert_eq!((io.engine, io.driver().is_none(), io.io().unwrap().iodepth), (EngineKind::IoUring, true, 8));
        assert_eq!((db.engine, db.jobs), (EngineKind::Pgbench, 4));
        let Some(Driver::Pgbench(p)) = db.driver() else { panic!() };
        assert_eq!(p.script, Script::Builtin("select-only".into()));
        assert_eq!(
            p.settings,
            vec![("shared_buffers".into(), "1GB".into()), ("synchronous_commit".into(), "off".into())]
        );
        assert_eq!(p.shared_buffers(), Some(1 << 30));
        // `target` in defaults is the IO workloads' place, and the cluster's
        assert_eq!(p.target, Some(PathBuf::from("/tmp")));
        assert_eq!((net.engine, net.jobs), (EngineKind::Iperf3, 2));
        let Some(Driver::Iperf3(i)) = net.driver() else { panic!() };
        assert_eq!(i.link_bps, Some(25e9));
    }

    #[test]
    fn keys_of_the_other_kind_are_refused_at_their_line() {
        let err = load(MIXED, &["db.iodepth=4"]).unwrap_err().to_string();
        assert!(err.contains("workloads.db.iodepth: does not apply to `driver: pgbench`"), "{err}");
        let err = load(MIXED, &["io.clients=4"]).unwrap_err().to_string();
        assert!(err.contains("workloads.io.clients: only applies to `driver: pgbench`"), "{err}");
        let err = load(MIXED, &["net.scale=10"]).unwrap_err().to_string();
        assert!(err.contains("does not apply to `driver: iperf3`"), "{err}");
        let err = load(MIXED, &["db.threads=8"]).unwrap_err().to_string();
        assert!(err.contains("8 threads for 4 clients"), "{err}");
        let err = load(MIXED, &["db.script=nonsense"]).unwrap_err().to_string();
        assert!(err.contains("neither one of pgbench's scripts"), "{err}");
        let err = load(MIXED, &["db.dsn=host=db"]).unwrap_err().to_string();
        assert!(err.contains("a server given by `dsn` keeps its own"), "{err}");
        let err = load(MIXED, &["compare=[db]"]).unwrap_err().to_string();
        assert!(err.contains("compare: names one workload"), "{err}");
        let err = load(MIXED, &["compare=[db, nope]"]).unwrap_err().to_string();
        assert!(err.contains("no workload named `nope`"), "{err}");
        assert!(load(MIXED, &["compare=[db, io]"]).is_ok());
    }

    #[test]
    fn link_speeds() {
        assert_eq!(parse_bits("25gbit").unwrap(), 25e9);
        assert_eq!(parse_bits("10G").unwrap(), 10e9);
        assert_eq!(parse_bits("100mbit/s").unwrap(), 100e6);
        assert_eq!(parse_bits("1e9").unwrap(), 1e9);
        assert!(parse_bits("fast").is_err());
    }

    #[test]
    fn postgres_sizes() {
        assert_eq!(pg_size("1GB"), Some(1 << 30));
        assert_eq!(pg_size("128MB"), Some(128 << 20));
        assert_eq!(pg_size("16384"), Some(128 << 20));
        assert_eq!(pg_size("lots"), None);
    }

    #[test]
    fn a_dsn_with_a_secret_is_refused_without_quoting_it() {
        for (dsn, says) in [
            ("host=db password = 'hunter2'", "holds a password: give it in PGPASSWORD"),
            ("postgres://h/db?%70assword=hunter2", "holds a password"),
            ("host=db sslpassword=hunter2", "holds an sslpassword"),
            ("host=db password='hunter2", "not a connection string libpq can read"),
            ("host=db dbname='password=hunter2'", "looks like a password"),
            ("host=db PASSWORD=hunter2", "looks like a password"),
        ] {
            let set = format!("db.dsn={}", serde_json::to_string(dsn).unwrap());
            let err = load(MIXED, &[&set, "db.settings={}"]).unwrap_err().to_string();
            assert!(err.contains(says), "{dsn}: {err}");
            // the message's own words; `--set ...` quotes what was given (masked when printed)
            let own = err.rsplit("workloads.db.dsn: ").next().unwrap();
            assert!(!own.contains("hunter2"), "{dsn}: {err}");
        }
        assert!(load(MIXED, &["db.dsn=host=db user=passwordless", "db.settings={}"]).is_ok());
    }
}
