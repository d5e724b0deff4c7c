//! The seam a program plugs into (`driver: NAME`): what fathom needs to know of a
//! program that does a workload's work instead of its IO engine. A program is one model
//! file here (its keys, their check, its spec, what it measures) and one runner in
//! `crate::drivers`, each registered in one list; nothing else names it.

use crate::error::{Error, Result};
use crate::metrics::Op;
use crate::metrics::headline::Headline;
use crate::metrics::summary::Throughput;
use crate::scenario::yaml::{self, Value};
use indexmap::IndexMap;
use serde::de::DeserializeOwned;
use std::any::Any;
use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// A program a workload can name with `driver:`.
pub trait Program: Sync {
    /// Its name, as `driver:` gives it.
    fn name(&self) -> &'static str;

    /// Other names `driver:` accepts for it (the name another tool gives the workload).
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }

    /// Its own keys, as a workload writes them (besides `driver`, `duration` and
    /// `ramp`, which every workload has): any other key in its workload is refused.
    fn keys(&self) -> &'static [&'static str];

    /// The key whose value is its concurrency (pgbench's `clients`), so that a change of
    /// it between phases reads as load added, as workers do for fathom's engine.
    fn concurrency(&self) -> &'static [&'static str];

    /// What settles over a run's first minutes, said when a run is too short for it.
    fn settles(&self) -> &'static str;

    /// Its keys checked and turned into its spec, each error at the key that is wrong.
    fn check(&self, keys: &Keys) -> Result<ProgramSpec>;
}

/// Where a throwaway database server keeps its files: its data (`target`), on a disk of
/// its own its transaction log (`log_target`: PostgreSQL's WAL, InnoDB's redo log), and
/// the workload's tables over disks of their own (`table_targets`), as the field notes'
/// studies lay a database out ("one log disk and six data disks").
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServerDirs {
    pub data: Option<PathBuf>,
    pub log: Option<PathBuf>,
    /// One directory per disk, in the order the scenario gives them; empty: the tables
    /// stay with the data.
    pub tables: Vec<PathBuf>,
}

impl ServerDirs {
    /// Every directory given, each storage under test: the data's, the log's, the tables'.
    pub fn all(&self) -> impl Iterator<Item = &PathBuf> {
        self.data.iter().chain(&self.log).chain(&self.tables)
    }
}

/// A program's settings, checked: what its runner needs, and what the rest of fathom
/// asks of any program's workload.
pub trait Spec: Debug + Send + Sync + 'static {
    /// The program it is for.
    fn program(&self) -> &'static dyn Program;

    /// How many workers it runs (clients, streams): the workload's `jobs`.
    fn workers(&self) -> u32;

    /// Its settings as a run stores them with its workload's profile, as a JSON object.
    fn stored(&self) -> serde_json::Value;

    /// What its samples will hold.
    fn measures(&self) -> Measures;

    /// What runs it, by name, as a run stores it (its workload's `engine`): the
    /// program, unless its `engine` key names another runner of the same workload.
    fn runner(&self) -> &'static str {
        self.program().name()
    }

    /// Refuses a `duration` or `ramp` its runner cannot keep: the key and why.
    fn timing(&self, _duration: Duration, _ramp: Duration) -> std::result::Result<(), (&'static str, String)> {
        Ok(())
    }

    /// The rate asked for, in its own operations per second, if it takes one.
    fn rate(&self) -> Option<f64> {
        None
    }

    /// The set amount of work after which it ends by itself, its duration a cap (TPC-H's
    /// query sets), and how to make it run long enough to quote; `None`: it runs its
    /// duration.
    fn ends_after(&self) -> Option<(&'static str, &'static str)> {
        None
    }

    /// What it risks measuring instead of what it is meant to (a database that fits in
    /// memory, a cache still cold when measuring starts), given this machine's RAM and
    /// the workload's `ramp`.
    fn risks(&self, _memory_bytes: Option<u64>, _ramp: Duration) -> Vec<Risk> {
        Vec::new()
    }

    /// The figure its workload is read by first, those quoted beside it and the op that
    /// leads: the rate of its ops unless it says otherwise.
    fn headline(&self) -> Headline {
        Headline::rate(self.measures().unit)
    }

    /// Whether its workload runs against a database server (a throwaway cluster or its
    /// `dsn`), which command steps then reach by `$FATHOM_DSN_<WORKLOAD>`.
    fn serves_database(&self) -> bool {
        false
    }

    /// Whether that server is the user's (a `dsn`), not a throwaway cluster fathom
    /// starts: what the run's first lines say it runs on.
    fn server_given(&self) -> bool {
        false
    }

    /// The directories its throwaway server keeps its files in, when the scenario gives
    /// them: storage under test, whose devices the run observes.
    fn server_dirs(&self) -> ServerDirs {
        ServerDirs::default()
    }

    /// A copy of itself to run on another host of an inventory (`--hosts`), its
    /// throwaway server in `target`, that host's inventory target (its own where the
    /// host has none). None: it runs on this host only, as a program whose server is
    /// given by address does (every host would share that one server).
    fn on_host(&self, _target: Option<&Path>) -> Option<ProgramSpec> {
        None
    }

    /// Itself, for its runner to read its own type back ([`ProgramSpec::get`]).
    fn as_any(&self) -> &dyn Any;
}

/// A checked program spec as a workload holds it: shared, since a workload is cloned
/// per host and per phase, and compared and stored by what it stores.
#[derive(Clone)]
pub struct ProgramSpec(Arc<dyn Spec>);

impl ProgramSpec {
    pub fn new(spec: impl Spec) -> ProgramSpec {
        ProgramSpec(Arc::new(spec))
    }

    /// The spec as its own type, for the program's runner.
    pub fn get<T: Spec>(&self) -> Option<&T> {
        self.0.as_any().downcast_ref()
    }
}

impl Debug for ProgramSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl PartialEq for ProgramSpec {
    fn eq(&self, other: &Self) -> bool {
        self.0.program().name() == other.0.program().name() && self.0.stored() == other.0.stored()
    }
}

impl std::ops::Deref for ProgramSpec {
    type Target = dyn Spec;

    fn deref(&self) -> &dyn Spec {
        self.0.as_ref()
    }
}

/// The figures a workload's samples hold: its rate's unit, its ops, and whether it has
/// per-op latency, MB/s (a storage figure: a network's bytes are its Gbit/s) and an
/// asked rate to compare with.
#[derive(Debug, Clone, PartialEq)]
pub struct Measures {
    pub unit: Throughput,
    pub ops: Vec<Op>,
    pub latency: bool,
    pub mb_per_s: bool,
    pub rate: bool,
}

/// What a program's workload risks measuring instead of what it is meant to: a lint
/// finding, named by `rule`, a warning or else a note.
#[derive(Debug, Clone, PartialEq)]
pub struct Risk {
    pub rule: &'static str,
    pub warning: bool,
    pub message: String,
}

/// A program's keys as its workload has them: its own over the `defaults`, each with
/// where it was written, so that a program's check reads a key in one call and locates
/// its errors as every other key's.
pub struct Keys<'a> {
    /// The keys the workload sets itself.
    pub own: &'a IndexMap<String, Value>,
    /// The keys of `defaults`.
    pub defaults: &'a IndexMap<String, Value>,
    /// The workload's name.
    pub name: &'a str,
    /// The scenario file, if the scenario is one (see [`Keys::input`]).
    pub file: Option<&'a Path>,
    /// An error at a key's path (`["workloads", "db", "clients"]`), located.
    pub fail: &'a dyn Fn(&[String], &str) -> Error,
}

impl Keys<'_> {
    /// The path of `key`: the workload's own if it sets it, else the defaults'.
    pub fn at(&self, key: &str) -> Vec<String> {
        match self.own.contains_key(key) {
            true => vec!["workloads".into(), self.name.into(), key.into()],
            false => vec!["defaults".into(), key.into()],
        }
    }

    /// Whether the workload sets `key` itself.
    pub fn own_has(&self, key: &str) -> bool {
        self.own.get(key).is_some_and(|v| *v != Value::Null)
    }

    /// The value of `key` as a `T` (the workload's own over the defaults') and its path;
    /// `None` when neither sets it. A value of another type is an error at the key.
    pub fn get<T: DeserializeOwned>(&self, key: &str) -> Result<(Option<T>, Vec<String>)> {
        let at = self.at(key);
        let value = self.own.get(key).or_else(|| self.defaults.get(key)).filter(|v| **v != Value::Null);
        let Some(value) = value else { return Ok((None, at)) };
        let typed = yaml::to_string(value).and_then(|text| yaml::from_written::<T>(&text));
        typed.map(|t| (Some(t), at.clone())).map_err(|e| self.fail(&at, &e.to_string()))
    }

    /// A text value that must be one line (a name, an address): a line break is refused
    /// without showing the value, which may hold a secret.
    pub fn line(&self, key: &str) -> Result<(Option<String>, Vec<String>)> {
        let (value, at) = self.get::<String>(key)?;
        if value.as_deref().is_some_and(|v| !crate::scenario::text::one_line(v)) {
            return Err(self.fail(&at, "is more than one line: expected one line"));
        }
        Ok((value, at))
    }

    /// A count of `key` between 1 and `max`, `default` when not set.
    pub fn count(&self, key: &str, default: u32, max: u32) -> Result<(u32, Vec<String>)> {
        let (n, at) = self.get::<u32>(key)?;
        let n = n.unwrap_or(default);
        if !(1..=max).contains(&n) {
            return Err(self.fail(&at, &format!("{n} must be between 1 and {max}")));
        }
        Ok((n, at))
    }

    /// Refuses `dir`, the value at `at`, when it is on one of the kernel's pseudo file
    /// systems: a directory made there (a throwaway cluster's) is a cgroup or a control,
    /// not storage, and a program run from there is the kernel's text.
    pub fn not_pseudo(&self, dir: &Path, at: &[String]) -> Result<()> {
        match crate::nofollow::pseudo_fs(dir) {
            Some(fs) => Err(self.fail(
                at,
                &format!(
                    "{} is on {fs}, one of the kernel's pseudo file systems: its files are the kernel's controls, \
                     not storage. Give a directory of the storage to test",
                    dir.display()
                ),
            )),
            None => Ok(()),
        }
    }

    /// The text of the file `name` a key names (at `at`), read from the scenario file's
    /// directory or below it ([`crate::nofollow::beside`]) through the one bounded
    /// reader: fathom often runs as root, and what it reads may reach an error, the store
    /// and the report. `what` names the file in a refusal, which never quotes it. `None`
    /// for a scenario loaded without a file (an agent's copy: its controller read it).
    pub fn input(&self, at: &[String], name: &str, what: &str) -> Result<Option<String>> {
        let Some(from) = self.file else { return Ok(None) };
        let real = crate::nofollow::beside(from, name, "the scenario's directory")
            .map_err(|e| self.fail(at, &format!("`{name}`: {e}")))?;
        crate::nofollow::read_input(&real, what, crate::scenario::prescan::MAX_BYTES)
            .map(Some)
            .map_err(|e| self.fail(at, &e.to_string()))
    }

    /// An error at `path`.
    pub fn fail(&self, path: &[String], msg: &str) -> Error {
        (self.fail)(path, msg)
    }
}
