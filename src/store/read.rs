//! The read side's typed view of a stored run: each workload's settings decoded once
//! from the profile the store keeps as JSON, and per phase what ran (which workloads,
//! with how many workers, at what depth, on which hosts) and which settings differ from
//! the phase before. `show`, the report, expectations and analyses read these instead
//! of looking keys up in JSON or parsing phase labels, so a setting is interpreted in
//! one place, and whether two phases are comparable (a concurrency curve needs phases
//! that differ only in concurrency) is one tested function: [`differences`].

use super::{PhaseRow, Store, WorkloadRow};
use crate::error::Result;
use crate::metrics::headline::Headline;
use crate::scenario::Rw;
use crate::scenario::program;
use crate::scenario::program::seam::ServerDirs;
use crate::workload::blocksize::BlockSizes;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A workload as it ran, typed: what its stored profile says, with the engine that
/// was actually used and the workers it was given.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredWorkload {
    /// Its index in the run (the store's `workload_idx`).
    pub idx: i64,
    pub name: String,
    /// The engine that ran it (`io_uring`, `psync`, `fio`, `pgbench`, `iperf3`...).
    pub engine: String,
    /// None for a workload whose profile is not stored (a damaged row).
    pub rw: Option<Rw>,
    /// Percent of IOs that are reads: [`Rw::read_percent`], the one rule for the mix.
    pub read_percent: u32,
    pub bs: BlockSizes,
    pub iodepth: u32,
    /// The workers its profile asks (fathom's or fio's `jobs`, pgbench's `clients`,
    /// iperf3's `streams`), stored under `jobs`.
    pub profile_workers: u32,
    /// Workers planned (a ramp's final count).
    pub workers: i64,
    /// The hosts it was placed on; empty when it ran here.
    pub hosts: Vec<String>,
    pub rate_iops: Option<f64>,
    pub rate_mbps: Option<f64>,
    /// Working set in bytes; None: the whole file or device.
    pub size: Option<u64>,
    pub direct: bool,
    /// As written (`uniform`, `zipf:1.2`...).
    pub distribution: String,
    /// iperf3's link speed in bits per second, when given.
    pub link_bps: Option<f64>,
    /// A section of a user's fio job file run by fio as written (`--engine fio` on a job
    /// file): its IO settings are the file's, not the stored profile's, so nothing
    /// here says what it asked.
    pub as_written: bool,
    /// Every other setting of the profile, compared as stored (see [`differences`]).
    pub other: BTreeMap<String, Value>,
    /// How long it ran and ramped (`duration`, `ramp` as stored): not what a workload
    /// does, so phases are not told apart by it, but two runs are ([`run_differences`]).
    pub timing: BTreeMap<String, Value>,
    /// What it is read by first, as its program declared it; None in stores written
    /// before programs declared one.
    pub headline: Option<Headline>,
    /// Where its program's throwaway database server kept its data and, on disks of
    /// their own, its transaction log and its tables (`target`, `log_target`,
    /// `table_targets`), when the scenario said.
    pub server_dirs: ServerDirs,
}

/// Profile keys that say nothing about what a workload does to the storage: its name,
/// how long it ran, its worker group's name, where its file is called, `placement` (its
/// hosts are compared as `hosts`) and its `headline` (what its program is read by).
const NOT_SETTINGS: [&str; 7] = ["name", "duration", "ramp", "group", "file", "placement", "headline"];

/// Profile keys of how long a workload runs, kept as [`StoredWorkload::timing`].
const TIMING: [&str; 2] = ["duration", "ramp"];

/// Profile keys decoded into typed fields of [`StoredWorkload`].
const TYPED: [&str; 13] = [
    "rw",
    "rwmixread",
    "bs",
    "iodepth",
    "jobs",
    "rate_iops",
    "rate_mbps",
    "size",
    "direct",
    "distribution",
    "engine",
    "link_bps",
    "driver",
];

impl StoredWorkload {
    /// Decodes a stored workload row. Keys a profile lacks (older stores, a driver's
    /// workload) take the defaults a scenario gives them.
    pub fn decode(row: &WorkloadRow) -> StoredWorkload {
        let empty = Map::new();
        let p = row.profile.as_object().unwrap_or(&empty);
        let text = |k: &str| p.get(k).and_then(Value::as_str);
        let number = |k: &str| p.get(k).and_then(Value::as_f64);
        // a program a scenario's `driver:` names does no IO of a profile, whatever IO
        // keys its row stores at their defaults; a fio section (`driver: fio`) does
        let program = text("driver").is_some_and(|d| d != "fio");
        let rw: Option<Rw> = p.get("rw").filter(|_| !program).and_then(|v| serde_json::from_value(v.clone()).ok());
        let rwmixread = number("rwmixread").unwrap_or(50.0) as u32;
        let hosts = p
            .get("placement")
            .and_then(|pl| pl.get("resolved"))
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
            .unwrap_or_default();
        StoredWorkload {
            idx: row.idx,
            name: row.name.clone(),
            engine: row.engine.clone(),
            rw,
            read_percent: rw.map(|rw| rw.read_percent(rwmixread)).unwrap_or(0),
            bs: text("bs").and_then(|t| BlockSizes::parse(t).ok()).unwrap_or_else(|| BlockSizes::single(4096)),
            iodepth: number("iodepth").unwrap_or(1.0) as u32,
            profile_workers: number("jobs").unwrap_or(row.workers as f64) as u32,
            workers: row.workers,
            hosts,
            rate_iops: row.rate_iops,
            rate_mbps: number("rate_mbps"),
            size: p.get("size").and_then(Value::as_u64),
            direct: p.get("direct").and_then(Value::as_bool).unwrap_or(false),
            distribution: text("distribution").unwrap_or("uniform").to_string(),
            link_bps: number("link_bps"),
            as_written: text("driver") == Some("fio"),
            server_dirs: match program {
                true => ServerDirs {
                    data: text("target").map(PathBuf::from),
                    log: text("log_target").map(PathBuf::from),
                    tables: p
                        .get("table_targets")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .map(PathBuf::from)
                        .collect(),
                },
                false => ServerDirs::default(),
            },
            other: p
                .iter()
                .filter(|(k, _)| !NOT_SETTINGS.contains(&k.as_str()) && !TYPED.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            timing: p
                .iter()
                .filter(|(k, _)| TIMING.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            headline: p.get("headline").and_then(|h| serde_json::from_value(h.clone()).ok()),
        }
    }

    /// Fraction of its IOs that are reads (0 to 1).
    pub fn read_share(&self) -> f64 {
        self.read_percent as f64 / 100.0
    }

    /// True when its workers ran on other hosts.
    pub fn placed(&self) -> bool {
        !self.hosts.is_empty()
    }
}

/// One workload as it ran in one phase.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ran {
    pub workload: String,
    /// Its index in the run (the store's `workload_idx`).
    #[serde(skip)]
    pub idx: i64,
    /// Workers running in the phase (fewer than planned in a ramp's early phases).
    pub workers: i64,
    pub depth: u32,
    /// The hosts of those workers, each once, in order (`localhost` for workers run
    /// here).
    pub hosts: Vec<String>,
}

/// A kind of setting that can differ between two phases.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Setting {
    /// A workload runs in the later phase and not in the earlier one.
    Added,
    /// A workload runs in the earlier phase and not in the later one.
    Removed,
    Depth,
    Jobs,
    Workers,
    Hosts,
    BlockSize,
    /// The op mix: `rw` or the read share.
    Rw,
    /// The working set's size.
    Size,
    Distribution,
    /// The rate asked (`rate_iops`, `rate_mbps`).
    Rate,
    Direct,
    Engine,
    /// Any other key of the stored profile (its name in `key`).
    Other,
    /// How long it ran or ramped (`duration` or `ramp` in `key`): only between runs.
    Duration,
}

impl Setting {
    /// True for a setting of load, not of what is done: depth, jobs, workers, hosts,
    /// or a key its program says is its concurrency (`key`, for [`Setting::Other`]:
    /// pgbench's `clients`, iperf3's `streams`). Phases that
    /// differ only so are points of one concurrency curve; any other change makes them
    /// a sweep of that setting.
    pub fn is_concurrency(&self, key: Option<&str>) -> bool {
        match self {
            Setting::Depth | Setting::Jobs | Setting::Workers | Setting::Hosts => true,
            Setting::Other => key.is_some_and(|k| program::all().any(|p| p.concurrency().contains(&k))),
            _ => false,
        }
    }

    /// The setting as a reader names it: its [`Setting::describe`], or for another key
    /// of the profile (`key`, for [`Setting::Other`]) the key itself (`fsync_every`).
    pub fn named(&self, key: Option<&str>) -> String {
        match (self, key) {
            (Setting::Other, Some(key)) => key.to_string(),
            (setting, _) => setting.describe().to_string(),
        }
    }

    /// The setting as a reader names it: `phases differ in block size`.
    pub fn describe(&self) -> &'static str {
        match self {
            Setting::Added => "workloads added",
            Setting::Removed => "workloads removed",
            Setting::Depth => "depth",
            Setting::Jobs => "jobs",
            Setting::Workers => "workers",
            Setting::Hosts => "hosts",
            Setting::BlockSize => "block size",
            Setting::Rw => "op mix",
            Setting::Size => "working set",
            Setting::Distribution => "access distribution",
            Setting::Rate => "rate",
            Setting::Direct => "direct IO",
            Setting::Engine => "engine",
            Setting::Other => "other settings",
            Setting::Duration => "duration",
        }
    }
}

/// One setting of one workload that is not what it was in the phase before.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    pub setting: Setting,
    /// The workload in the later phase (for `removed`, the one that stopped).
    pub workload: String,
    /// The profile key, for [`Setting::Other`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The value in the earlier phase (null for `added`).
    pub before: Value,
    /// The value in the later phase (null for `removed`).
    pub after: Value,
    /// For a workload added or removed within a run: a workload running beside it whose
    /// settings differ from its own only in load (depth, workers, hosts). Such a change
    /// is more of the same load (one more node's VMs), not another kind of work.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub like: Option<String>,
}

impl Difference {
    /// True when this change is one of load, not of what is done (see
    /// [`Setting::is_concurrency`]).
    pub fn is_concurrency(&self) -> bool {
        self.like.is_some() || self.setting.is_concurrency(self.key.as_deref())
    }

    /// The setting as a reader names it (see [`Setting::named`]).
    pub fn name(&self) -> String {
        self.setting.named(self.key.as_deref())
    }
}

/// Which settings differ from phase `before` to phase `after`.
///
/// Workloads are matched by name; those left unmatched on both sides are paired in
/// order (a workload that replaced another, as each step of a sweep or of quickstart
/// does) and their settings compared; any still left are `added` or `removed`. A
/// pair's settings are compared one by one: workers, depth, jobs, hosts, block size, op
/// mix, working set, distribution, rate, direct, engine, then every other key of the
/// stored profile but its name, duration, ramp, group and file name. Phases of one
/// profile that differ only in concurrency give only `depth`, `jobs`, `workers` and
/// `hosts`; identical phases give nothing.
pub fn differences(before: &[(Ran, &StoredWorkload)], after: &[(Ran, &StoredWorkload)]) -> Vec<Difference> {
    compare(before, after, false)
}

/// Which settings differ between the workloads of two runs: as [`differences`], and
/// also how long each workload ran and ramped ([`Setting::Duration`]): the steps of one
/// run may differ in length by design; two runs compared figure by figure may not
/// without saying so (15 s steps against 5 s steps). Workloads are paired by name only:
/// a step replaces the one before it within a run, but a workload of another run with
/// another name is another workload (`added`, `removed`), not a list of changed settings.
pub fn run_differences(before: &[(Ran, &StoredWorkload)], after: &[(Ran, &StoredWorkload)]) -> Vec<Difference> {
    compare(before, after, true)
}

/// [`differences`], or with `runs` [`run_differences`].
fn compare(before: &[(Ran, &StoredWorkload)], after: &[(Ran, &StoredWorkload)], runs: bool) -> Vec<Difference> {
    let named = |list: &[(Ran, &StoredWorkload)], name: &str| list.iter().any(|(r, _)| r.workload == name);
    let gone: Vec<_> = before.iter().filter(|(r, _)| !named(after, &r.workload)).collect();
    let new: Vec<_> = after.iter().filter(|(r, _)| !named(before, &r.workload)).collect();
    // leftovers paired in order within a run only
    let replaced = if runs { 0 } else { new.len() };
    let mut out = Vec::new();
    for b in after {
        let pair = match before.iter().find(|(r, _)| r.workload == b.0.workload) {
            Some(a) => Some(a),
            None => new
                .iter()
                .position(|n| n.0.workload == b.0.workload)
                .filter(|&i| i < replaced)
                .and_then(|i| gone.get(i).copied()),
        };
        match pair {
            Some(a) => out.extend(settings(a, b, runs)),
            None => out.push(Difference {
                setting: Setting::Added,
                workload: b.0.workload.clone(),
                key: None,
                before: Value::Null,
                after: Value::from(b.0.workload.clone()),
                like: (!runs).then(|| like(b, before.iter())).flatten(),
            }),
        }
    }
    for a in gone.iter().skip(replaced) {
        out.push(Difference {
            setting: Setting::Removed,
            workload: a.0.workload.clone(),
            key: None,
            before: Value::from(a.0.workload.clone()),
            after: Value::Null,
            like: (!runs).then(|| like(a, after.iter())).flatten(),
        });
    }
    out
}

/// The first of `others` (itself aside) whose settings differ from `w`'s only in load:
/// its name. `others` are the workloads that ran on the other side of the change (for
/// one added, those that ran before it): a workload added beside another new one of its
/// kind (four scans joining an OLTP load) is still a different load.
fn like<'a>(w: &(Ran, &StoredWorkload), others: impl Iterator<Item = &'a (Ran, &'a StoredWorkload)>) -> Option<String> {
    others
        .filter(|o| o.0.workload != w.0.workload)
        .find(|o| settings(o, w, false).iter().all(Difference::is_concurrency))
        .map(|o| o.0.workload.clone())
}

/// The settings of one workload pair that differ, in the order [`differences`] lists,
/// and with `timing` their durations and ramps.
fn settings(a: &(Ran, &StoredWorkload), b: &(Ran, &StoredWorkload), timing: bool) -> Vec<Difference> {
    let ((ra, wa), (rb, wb)) = (a, b);
    let blocks = |w: &StoredWorkload| w.bs.to_string();
    let mix = |w: &StoredWorkload| {
        let rw = w.rw.and_then(|rw| serde_json::to_value(rw).ok()).unwrap_or(Value::Null);
        serde_json::json!({"rw": rw, "read_percent": w.read_percent})
    };
    let rate = |w: &StoredWorkload| serde_json::json!({"rate_iops": w.rate_iops, "rate_mbps": w.rate_mbps});
    let typed: [(Setting, Value, Value); 11] = [
        (Setting::Workers, ra.workers.into(), rb.workers.into()),
        (Setting::Depth, ra.depth.into(), rb.depth.into()),
        (Setting::Jobs, wa.profile_workers.into(), wb.profile_workers.into()),
        (Setting::Hosts, ra.hosts.clone().into(), rb.hosts.clone().into()),
        (Setting::BlockSize, blocks(wa).into(), blocks(wb).into()),
        (Setting::Rw, mix(wa), mix(wb)),
        (Setting::Size, wa.size.into(), wb.size.into()),
        (Setting::Distribution, wa.distribution.clone().into(), wb.distribution.clone().into()),
        (Setting::Rate, rate(wa), rate(wb)),
        (Setting::Direct, wa.direct.into(), wb.direct.into()),
        (Setting::Engine, wa.engine.clone().into(), wb.engine.clone().into()),
    ];
    let mut out: Vec<Difference> = typed
        .into_iter()
        .filter(|(_, x, y)| x != y)
        .map(|(setting, before, after)| Difference {
            setting,
            workload: rb.workload.clone(),
            key: None,
            before,
            after,
            like: None,
        })
        .collect();
    let mut keyed = vec![(Setting::Other, &wa.other, &wb.other)];
    if timing {
        keyed.push((Setting::Duration, &wa.timing, &wb.timing));
    }
    for (setting, ka, kb) in keyed {
        let keys: std::collections::BTreeSet<&String> = ka.keys().chain(kb.keys()).collect();
        for key in keys {
            let (x, y) = (ka.get(key).cloned().unwrap_or_default(), kb.get(key).cloned().unwrap_or_default());
            if x != y {
                out.push(Difference {
                    setting: setting.clone(),
                    workload: rb.workload.clone(),
                    key: Some(key.clone()),
                    before: x,
                    after: y,
                    like: None,
                });
            }
        }
    }
    out
}

/// The hosts of a list of workers, each once, in order.
fn distinct(hosts: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for h in hosts {
        if !out.contains(&h) {
            out.push(h);
        }
    }
    out
}

/// One phase of a run: what ran in it, and what differs from the phase before.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseFacts {
    pub ran: Vec<Ran>,
    /// Empty for the first phase.
    pub differs: Vec<Difference>,
}

impl PhaseFacts {
    /// The settings that differ from the phase before, each once, as a reader names
    /// them: `depth, workers`; `other settings (fsync_every)`.
    pub fn differs_text(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        for d in &self.differs {
            let part = match &d.key {
                Some(key) => format!("{} ({key})", d.setting.describe()),
                None => d.setting.describe().to_string(),
            };
            if !parts.contains(&part) {
                parts.push(part);
            }
        }
        parts.join(", ")
    }
}

impl Store {
    /// Per phase of `run` (in order), what ran and what differs from the phase before.
    /// Stores written before phases recorded their workloads (schema 5 and older) give
    /// each phase the workloads whose time overlaps it, with all their workers.
    pub fn phase_facts(&self, run: i64, phases: &[PhaseRow], workloads: &[StoredWorkload]) -> Result<Vec<PhaseFacts>> {
        let rows = self.workloads(run)?;
        let hosts = self.worker_hosts(run)?;
        let mut out: Vec<PhaseFacts> = Vec::new();
        let mut previous: Vec<(Ran, &StoredWorkload)> = Vec::new();
        for p in phases {
            let running: Vec<(i64, i64)> = match p.running.is_empty() {
                false => p.running.clone(),
                true => rows
                    .iter()
                    .filter(|w| {
                        let end = w.stopped_at.unwrap_or(w.end_t as f64).min(w.end_t as f64);
                        (w.start_t as f64) < p.end_t.map(|e| e as f64).unwrap_or(f64::MAX) && end > p.start_t as f64
                    })
                    .map(|w| (w.idx, w.workers))
                    .collect(),
            };
            let now: Vec<(Ran, &StoredWorkload)> = running
                .iter()
                .filter_map(|&(idx, workers)| {
                    let w = workloads.iter().find(|w| w.idx == idx)?;
                    // workers start in index order: a phase with n has the first n
                    let of = hosts.get(&idx).map(Vec::as_slice).unwrap_or(&[]);
                    let host = |i: i64| of.get(i as usize).cloned().unwrap_or_else(|| "localhost".into());
                    let ran = Ran {
                        workload: w.name.clone(),
                        idx,
                        workers,
                        depth: w.iodepth,
                        hosts: distinct((0..workers).map(host)),
                    };
                    Some((ran, w))
                })
                .collect();
            let differs = if out.is_empty() { Vec::new() } else { differences(&previous, &now) };
            out.push(PhaseFacts { ran: now.iter().map(|(r, _)| r.clone()).collect(), differs });
            previous = now;
        }
        Ok(out)
    }

    /// Per workload index, the host of each of its workers in worker order.
    fn worker_hosts(&self, run: i64) -> Result<BTreeMap<i64, Vec<String>>> {
        let mut stmt =
            self.conn.prepare("SELECT workload_idx, host FROM workers WHERE run_id = ?1 ORDER BY workload_idx, idx")?;
        let mut out: BTreeMap<i64, Vec<String>> = BTreeMap::new();
        let mut rows = stmt.query([run])?;
        while let Some(r) = rows.next()? {
            out.entry(r.get(0)?).or_default().push(r.get(1)?);
        }
        Ok(out)
    }

    /// Another read-only connection to the same store, for a reader on a thread of
    /// its own (merging histograms is CPU-bound and a connection serves one thread).
    pub fn reader(&self) -> Result<Store> {
        let dir = self.path.parent().map(std::path::Path::to_path_buf).unwrap_or_default();
        Store::open_existing(&dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A stored workload with `changes` over a 4k random-read profile at depth 1.
    fn stored(name: &str, changes: Value) -> StoredWorkload {
        let mut profile = json!({
            "name": name, "rw": "randread", "rwmixread": 50, "bs": "4k", "iodepth": 1, "jobs": 1,
            "size": 1 << 30, "direct": true, "distribution": "uniform", "engine": "io_uring",
            "rate_iops": null, "rate_mbps": null, "fsync_every": 0, "duration": "15s", "ramp": "2s",
            "file": name, "group": null, "targets": ["/data"],
        });
        for (k, v) in changes.as_object().unwrap() {
            profile[k] = v.clone();
        }
        let row = WorkloadRow {
            idx: 0,
            name: name.into(),
            phase: name.into(),
            engine: profile["engine"].as_str().unwrap().into(),
            rate_iops: profile["rate_iops"].as_f64(),
            profile,
            data_path: String::new(),
            workers: 1,
            start_t: 0,
            measure_t: 0,
            end_t: 1,
            stopped_at: None,
        };
        StoredWorkload::decode(&row)
    }

    fn ran(w: &StoredWorkload, workers: i64, hosts: &[&str]) -> Ran {
        Ran {
            workload: w.name.clone(),
            idx: w.idx,
            workers,
            depth: w.iodepth,
            hosts: hosts.iter().map(|h| h.to_string()).collect(),
        }
    }

    fn settings_of(d: &[Difference]) -> Vec<Setting> {
        d.iter().map(|d| d.setting.clone()).collect()
    }

    /// pgbench and iperf3 store the IO keys at their defaults (`rw: read`, `bs: 4k`):
    /// read back, they have no IO profile, in this run's store and in older ones. A fio
    /// section, which does IO, keeps its own.
    #[test]
    fn a_program_that_does_no_io_has_no_io_profile() {
        for program in ["pgbench", "iperf3"] {
            let w = stored("p", json!({"driver": program, "engine": program, "rw": "read", "rwmixread": 100}));
            assert_eq!((w.rw, w.read_percent), (None, 0), "{program}");
        }
        let fio = stored("f", json!({"driver": "fio", "engine": "fio", "rw": "randwrite"}));
        assert_eq!(fio.rw, Some(Rw::Randwrite));
    }

    #[test]
    fn the_mix_is_one_rule_from_rw_and_rwmixread() {
        assert_eq!(stored("a", json!({})).read_percent, 100);
        assert_eq!(stored("a", json!({"rw": "randrw", "rwmixread": 70})).read_share(), 0.7);
        assert_eq!(stored("a", json!({"rw": "rw", "rwmixread": 30})).read_percent, 30);
        assert_eq!(stored("a", json!({"rw": "write", "rwmixread": 30})).read_percent, 0);
        // a profile the store could not keep reads as nothing asked
        assert_eq!(stored("a", json!({"rw": null})).read_percent, 0);
    }

    #[test]
    fn a_profile_decodes_once_into_typed_settings() {
        let w = stored(
            "w",
            json!({"bs": "8k/90:32k/10", "iodepth": 16, "jobs": 4, "rate_mbps": 40.0, "link_bps": 25e9,
                   "placement": {"hosts": ["db*"], "per_host": 2, "resolved": ["db1", "db2"]}}),
        );
        assert_eq!(w.bs.to_string(), "8k/90:32k/10");
        assert_eq!((w.iodepth, w.profile_workers), (16, 4));
        assert_eq!(w.rate_mbps, Some(40.0));
        assert_eq!(w.link_bps, Some(25e9));
        assert!(w.placed());
        assert_eq!(w.hosts, ["db1", "db2"]);
        // what is typed or not a setting is not kept again among the others
        assert_eq!(w.other.keys().collect::<Vec<_>>(), ["fsync_every", "targets"]);
    }

    #[test]
    fn steps_of_one_profile_differ_only_in_concurrency() {
        let (qd1, qd4) = (stored("qd1", json!({})), stored("qd4", json!({"iodepth": 4})));
        let d = differences(&[(ran(&qd1, 1, &["localhost"]), &qd1)], &[(ran(&qd4, 1, &["localhost"]), &qd4)]);
        assert_eq!(settings_of(&d), [Setting::Depth]);
        assert_eq!((d[0].workload.as_str(), &d[0].before, &d[0].after), ("qd4", &json!(1), &json!(4)));
        // a ramp: the same workload with more workers, on more hosts
        let vm = stored("vm", json!({}));
        let d = differences(&[(ran(&vm, 2, &["a"]), &vm)], &[(ran(&vm, 4, &["a", "b"]), &vm)]);
        assert_eq!(settings_of(&d), [Setting::Workers, Setting::Hosts]);
        // the same phase twice: nothing differs
        assert!(differences(&[(ran(&vm, 2, &["a"]), &vm)], &[(ran(&vm, 2, &["a"]), &vm)]).is_empty());
    }

    /// A workload that joins running ones of its own profile is more of the same load
    /// (one more node's VMs); one that joins beside another newcomer of its kind (four
    /// scans joining an OLTP load together) is another load, whatever they share.
    #[test]
    fn a_workload_is_like_one_that_ran_before_it_never_one_that_joined_with_it() {
        let oltp = stored("oltp", json!({"rw": "randrw", "bs": "8k"}));
        let (scan1, scan2) =
            (stored("scan1", json!({"rw": "read", "bs": "1m"})), stored("scan2", json!({"rw": "read", "bs": "1m"})));
        let before = [(ran(&oltp, 1, &["h0"]), &oltp)];
        let after =
            [(ran(&oltp, 1, &["h0"]), &oltp), (ran(&scan1, 1, &["h1"]), &scan1), (ran(&scan2, 1, &["h2"]), &scan2)];
        let d = differences(&before, &after);
        assert_eq!(settings_of(&d), [Setting::Added, Setting::Added]);
        assert!(d.iter().all(|d| d.like.is_none() && !d.is_concurrency()), "{d:?}");
        // a second node's OLTP VM joining the first's: more of the same
        let oltp2 = stored("oltp2", json!({"rw": "randrw", "bs": "8k"}));
        let after = [(ran(&oltp, 1, &["h0"]), &oltp), (ran(&oltp2, 1, &["h1"]), &oltp2)];
        let d = differences(&before, &after);
        assert_eq!(d[0].like.as_deref(), Some("oltp"), "{d:?}");
    }

    #[test]
    fn steps_that_change_what_is_done_say_what_changed() {
        let base = stored("4k-read", json!({}));
        let cases = [
            (json!({"bs": "1m"}), vec![Setting::BlockSize]),
            (json!({"rw": "randwrite"}), vec![Setting::Rw]),
            (json!({"rw": "randrw", "rwmixread": 70}), vec![Setting::Rw]),
            (json!({"size": 1 << 20}), vec![Setting::Size]),
            (json!({"distribution": "zipf:1.2"}), vec![Setting::Distribution]),
            (json!({"rate_iops": 500.0}), vec![Setting::Rate]),
            (json!({"direct": false}), vec![Setting::Direct]),
            (json!({"engine": "psync"}), vec![Setting::Engine]),
            (json!({"jobs": 2}), vec![Setting::Jobs]),
            (json!({"fsync_every": 1}), vec![Setting::Other]),
            (json!({"bs": "1m", "iodepth": 8}), vec![Setting::Depth, Setting::BlockSize]),
            // how long a step runs, its name and its file are not what it does
            (json!({"duration": "5m", "ramp": "0s", "file": "other"}), vec![]),
        ];
        for (change, expected) in cases {
            let other = stored("next", change.clone());
            let d = differences(&[(ran(&base, 1, &["localhost"]), &base)], &[(ran(&other, 1, &["localhost"]), &other)]);
            assert_eq!(settings_of(&d), expected, "{change}");
        }
        // between runs, how long a workload ran is named too
        let long = stored("4k-read", json!({"duration": "5s"}));
        let d = run_differences(&[(ran(&base, 1, &["localhost"]), &base)], &[(ran(&long, 1, &["localhost"]), &long)]);
        assert_eq!(settings_of(&d), [Setting::Duration]);
        assert_eq!((d[0].key.as_deref(), &d[0].before, &d[0].after), (Some("duration"), &json!("15s"), &json!("5s")));
        // and a workload of another name is another workload, not a changed one
        let other = stored("oltp", json!({"bs": "8k"}));
        let d = run_differences(&[(ran(&base, 1, &["localhost"]), &base)], &[(ran(&other, 1, &["localhost"]), &other)]);
        assert_eq!(settings_of(&d), [Setting::Added, Setting::Removed]);
        let fsync = stored("next", json!({"fsync_every": 1}));
        let d = differences(&[(ran(&base, 1, &["localhost"]), &base)], &[(ran(&fsync, 1, &["localhost"]), &fsync)]);
        assert_eq!(d[0].key.as_deref(), Some("fsync_every"));
        assert_eq!(PhaseFacts { ran: Vec::new(), differs: d }.differs_text(), "other settings (fsync_every)");
    }

    #[test]
    fn workloads_that_join_or_leave_are_added_or_removed() {
        let (oltp, dss) = (stored("oltp", json!({"rate_iops": 500.0})), stored("dss", json!({"bs": "128k"})));
        let before = [(ran(&oltp, 1, &["localhost"]), &oltp)];
        let during = [(ran(&oltp, 1, &["localhost"]), &oltp), (ran(&dss, 1, &["localhost"]), &dss)];
        let d = differences(&before, &during);
        assert_eq!(settings_of(&d), [Setting::Added]);
        assert_eq!(d[0].workload, "dss");
        let d = differences(&during, &before);
        assert_eq!(settings_of(&d), [Setting::Removed]);
        assert_eq!((d[0].workload.as_str(), &d[0].after), ("dss", &Value::Null));
        // one replaced and one gone: the first unmatched pair is compared, the rest removed
        let next = stored("next", json!({"iodepth": 2, "rate_iops": 500.0}));
        let d = differences(&during, &[(ran(&next, 1, &["localhost"]), &next)]);
        assert_eq!(settings_of(&d), [Setting::Depth, Setting::Removed]);
        assert_eq!(d[1].workload, "dss");
        let text = PhaseFacts { ran: Vec::new(), differs: d }.differs_text();
        assert_eq!(text, "depth, workloads removed");
    }
}
