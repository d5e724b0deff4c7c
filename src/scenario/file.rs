//! A scenario file as written: every key optional where a default applies, unknown keys
//! refused. [`super::load`] reads text into these, [`super::check`] turns them into the
//! [`super::model`].

use super::auth::{AuthFile, BasicAuthFile, TlsFile};
use super::model::{Arrival, Crc, Queue, Rw};
use super::steps;
use super::units::{Jobs, Size, Span};
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

/// Profile keys as written: every key optional so `defaults` and a workload can be
/// overlaid. Unknown keys are rejected (old fio silently ignored options it did not
/// know, and the field notes show what that cost).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Profile {
    #[serde(default, deserialize_with = "one_or_many")]
    pub target: Option<Vec<String>>,
    pub queue: Option<Queue>,
    pub file: Option<String>,
    pub rw: Option<Rw>,
    pub rwmixread: Option<u32>,
    pub bs: Option<Size>,
    pub bssplit: Option<String>,
    pub bsrange: Option<String>,
    pub random_percent: Option<u32>,
    pub distribution: Option<String>,
    /// Random offsets without replacement: each pass touches every block once (fio's
    /// random map, its default without `norandommap`).
    pub randommap: Option<bool>,
    pub offset: Option<Size>,
    /// Bytes of IO in each zone before the next (fio's strided `zonesize`).
    pub zonesize: Option<Size>,
    /// Each zone's length (fio's `zonerange`; `zonesize` unless given).
    pub zonerange: Option<Size>,
    /// Bytes between a zone's end and the next zone's start (fio's `zoneskip`).
    pub zoneskip: Option<Size>,
    pub iodepth: Option<u32>,
    pub jobs: Option<Jobs>,
    /// The worker group (top-level `groups`) whose workers run this workload.
    pub group: Option<String>,
    pub size: Option<Size>,
    pub size_percent: Option<u32>,
    pub direct: Option<bool>,
    /// What runs the workload, by name: an IO engine (`model::EngineKind`), checked
    /// with the IO keys, or a program's other runner (`driver: tpcc`'s `hammerdb`),
    /// checked by its program.
    #[serde(default, deserialize_with = "engine_or_null")]
    pub engine: Option<String>,
    pub rate_iops: Option<f64>,
    pub rate_mbps: Option<f64>,
    /// IOs per second on each host, for a workload on hosts (X-Ray's "IOPS per VM").
    pub rate_iops_per_host: Option<f64>,
    pub arrival: Option<Arrival>,
    pub think_time: Option<Span>,
    pub fsync_every: Option<u32>,
    pub fdatasync: Option<bool>,
    pub prefill: Option<bool>,
    pub extend: Option<bool>,
    pub keep: Option<bool>,
    pub compress_percent: Option<u8>,
    pub dedupe_percent: Option<u8>,
    pub zero: Option<bool>,
    pub crc: Option<Crc>,
    pub duration: Option<Span>,
    pub ramp: Option<Span>,
    /// Bytes each worker moves in a pass, then the workload ends (fio's `io_size`).
    pub io_size: Option<Size>,
    /// Passes over `io_size` (or the working set) each worker makes (fio's `loops`).
    pub loops: Option<u32>,
    /// IOs each worker issues, then the workload ends (fio's `number_ios`).
    pub number_ios: Option<u64>,
    /// The hosts of the inventory (`--hosts`) this workload runs on: `all`, a host, a
    /// label, a slice `0:3`, or a list of those.
    #[serde(default, deserialize_with = "one_or_many")]
    pub hosts: Option<Vec<String>>,
    /// Workers on each of those hosts (instead of `jobs` in all).
    pub per_host: Option<u32>,
    /// Which of each host's inventory targets the workload uses, by position (0-based):
    /// X-Ray's fio sections each write one of a VM's data disks.
    pub host_targets: Option<Vec<usize>>,
    /// Another program runs this workload (`driver: pgbench`, see [`super::program`]).
    pub driver: Option<String>,
    /// Every other key: a program's own (checked by the program a workload names), or
    /// a mistake (refused where the profile is checked, naming the keys there are).
    #[serde(flatten)]
    pub program: IndexMap<String, super::yaml::Value>,
}

/// `target: /dev/sdb` or `target: [/dev/sdb, /dev/sdc]` (a scenario's, and an
/// inventory host's).
pub(crate) fn one_or_many<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<Vec<String>>, D::Error> {
    struct OneOrMany;
    impl<'de> serde::de::Visitor<'de> for OneOrMany {
        type Value = Vec<String>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a path, or a list of paths")
        }

        fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<Vec<String>, E> {
            Ok(vec![v.to_string()])
        }

        fn visit_i64<E: serde::de::Error>(self, v: i64) -> std::result::Result<Vec<String>, E> {
            Ok(vec![v.to_string()])
        }

        fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<Vec<String>, E> {
            Ok(vec![v.to_string()])
        }

        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Vec<String>, A::Error> {
            let mut out = Vec::new();
            while let Some(path) = seq.next_element::<String>()? {
                out.push(path);
            }
            Ok(out)
        }
    }
    d.deserialize_any(OneOrMany).map(Some)
}
impl Profile {
    /// The keys a profile has for fathom's engine (every field, null in a default
    /// profile), for the message about one it does not have.
    pub fn io_keys() -> Vec<String> {
        let all = super::yaml::to_string(&Profile::default())
            .and_then(|t| super::yaml::from_written::<IndexMap<String, super::yaml::Value>>(&t));
        all.map(|m| m.into_keys().collect()).unwrap_or_default()
    }
}

/// `engine: null` is YAML's null, not the string "null": read it as the null engine
/// (an absent key stays `None`).
fn engine_or_null<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<String>, D::Error> {
    Ok(Some(Option::<String>::deserialize(d)?.unwrap_or_else(|| "null".into())))
}

/// The file as written.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// The study's question (`does OLTP keep its rate and latency while DSS runs?`):
    /// printed first with the run's one-line answer, which its expectations decide.
    #[serde(default)]
    pub question: Option<String>,
    #[serde(default)]
    pub defaults: Option<Profile>,
    /// A name given twice is refused as any duplicate key is (see [`super::vars`], which reads
    /// the file first).
    pub workloads: IndexMap<String, Profile>,
    #[serde(default)]
    pub timeline: Option<Vec<steps::StepFile>>,
    /// Checked by [`super::vars::substitute`] before the file is read; kept for the record.
    #[serde(default)]
    pub vars: Option<IndexMap<String, super::yaml::Value>>,
    /// Thresholds checked at the end of the run (see [`super::expect`]).
    #[serde(default)]
    pub expect: Option<Vec<String>>,
    /// Named sets of workers that workloads are bound to (`group:`); workloads are placed
    /// on hosts with `hosts:` instead.
    #[serde(default)]
    pub groups: Option<IndexMap<String, Group>>,
    /// Observers beyond the host and device ones every run has.
    #[serde(default)]
    pub observe: Option<ObserveFile>,
    /// Serve live metrics for Prometheus at this address (as `--prometheus`, which wins).
    #[serde(default)]
    pub prometheus: Option<String>,
    /// Workloads compared with the first of them (an A/B within one run), in `show` and
    /// the report.
    #[serde(default)]
    pub compare: Option<Vec<String>>,
    /// Named per-second views of the run, with bands judged as expectations (see
    /// [`super::results`]).
    #[serde(default)]
    pub results: Option<Vec<super::results::ResultFile>>,
    /// A longer description in HTML (X-Ray's), shown sanitised in the report's header.
    #[serde(default)]
    pub description_html: Option<String>,
}

/// `observe:` as written.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObserveFile {
    pub prometheus: Option<RemoteFile>,
}

/// `observe: prometheus:` as written: a Prometheus server and named PromQL queries.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemoteFile {
    pub url: String,
    pub queries: IndexMap<String, String>,
    pub interval: Option<Span>,
    pub bearer_token_file: Option<String>,
    pub bearer_token_env: Option<String>,
    /// Written only to be refused: a token would be stored with the scenario.
    pub bearer_token: Option<String>,
    pub basic_auth: Option<BasicAuthFile>,
    pub tls_config: Option<TlsFile>,
}

impl RemoteFile {
    /// Its credentials' and trust's keys, taken out to be checked (`auth::check`).
    pub fn take_auth(&mut self) -> AuthFile {
        AuthFile {
            bearer_token_file: self.bearer_token_file.take(),
            bearer_token_env: self.bearer_token_env.take(),
            bearer_token: self.bearer_token.take(),
            basic_auth: self.basic_auth.take(),
            tls_config: self.tls_config.take(),
        }
    }
}

/// A worker group as written.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Group {
    /// How many workers (jobs) each workload bound to it runs.
    pub count: u32,
}
