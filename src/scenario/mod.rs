//! Scenarios: what to run, loaded from YAML with errors that name file, line and key.
//!
//! The file format (documented in `docs/scenarios.md`) has a `name`, optional
//! `defaults` (profile keys every workload inherits, like fio's `[global]`), named
//! `workloads`, and an optional `timeline`. Loading happens in steps, each in its own
//! place: [`prescan`] bounds the text before any parser sees it, [`vars`] substitutes
//! variables, [`overrides`] applies `--set`, this module checks types and values and
//! resolves every workload to concrete settings, and [`locate`] finds the line of a key
//! so a semantic error points at the text the user wrote.

pub mod budget;
pub mod builtin;
pub mod driver;
pub mod expect;
mod locate;
pub use locate::line_of;
pub mod open;
mod overrides;
mod prescan;
pub use prescan::MAX_BYTES;
pub mod steps;
pub mod units;
mod vars;

use crate::error::{Error, Result};
use crate::workload::access::Distribution;
use crate::workload::blocksize::BlockSizes;
use crate::workload::data::{Content, DataSpec};
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;
use units::{Size, Span};

pub use overrides::Override;

/// The read/write pattern of a workload (fio's `rw`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rw {
    Read,
    Write,
    Randread,
    Randwrite,
    Randrw,
    /// Sequential reads and writes mixed by `rwmixread` in one stream (fio's `rw`).
    #[serde(rename = "rw", alias = "readwrite")]
    ReadWrite,
}

impl Rw {
    pub fn is_random(self) -> bool {
        matches!(self, Rw::Randread | Rw::Randwrite | Rw::Randrw)
    }

    /// Percentage of IOs that are reads.
    pub fn read_percent(self, rwmixread: u32) -> u32 {
        match self {
            Rw::Read | Rw::Randread => 100,
            Rw::Write | Rw::Randwrite => 0,
            Rw::Randrw | Rw::ReadWrite => rwmixread,
        }
    }
}

/// The block checksum of `crc:` (one kind for now; named so others can follow), or
/// `none`, so `--set crc=none` turns it off and shows what it costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Crc {
    Crc32c,
    None,
}

/// How the IOs of an open-loop workload arrive: evenly spaced, or as a Poisson process
/// (independent arrivals, as requests from many clients do).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arrival {
    Uniform,
    Poisson,
}

/// Which IO back end a worker uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum EngineKind {
    #[serde(rename = "io_uring")]
    IoUring,
    #[serde(rename = "psync")]
    Psync,
    /// No IO: measures fathom's own cost per IO (fio's `ioengine=null`).
    #[serde(rename = "null")]
    Null,
    /// The same profile run by the real fio (see `drivers::fio`), for parity checks and
    /// for users who trust fio's numbers.
    #[serde(rename = "fio")]
    Fio,
    /// `driver: pgbench` (see `drivers::pgbench`); set by `driver:`, never as an engine.
    #[serde(rename = "pgbench", skip_deserializing)]
    Pgbench,
    /// `driver: iperf3` (see `drivers::iperf3`).
    #[serde(rename = "iperf3", skip_deserializing)]
    Iperf3,
}

impl std::fmt::Display for EngineKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            EngineKind::IoUring => "io_uring",
            EngineKind::Psync => "psync",
            EngineKind::Null => "null",
            EngineKind::Fio => "fio",
            EngineKind::Pgbench => "pgbench",
            EngineKind::Iperf3 => "iperf3",
        })
    }
}

/// Profile keys as written: every key optional so `defaults` and a workload can be
/// overlaid. Unknown keys are rejected (old fio silently ignored options it did not
/// know, and the field notes show what that cost).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    #[serde(default, deserialize_with = "one_or_many")]
    pub target: Option<Vec<String>>,
    pub queue: Option<Queue>,
    pub file: Option<String>,
    pub rw: Option<Rw>,
    pub rwmixread: Option<u32>,
    pub bs: Option<Size>,
    pub bssplit: Option<String>,
    pub random_percent: Option<u32>,
    pub distribution: Option<String>,
    pub offset: Option<Size>,
    pub iodepth: Option<u32>,
    pub jobs: Option<u32>,
    /// The worker group (top-level `groups`) whose workers run this workload.
    pub group: Option<String>,
    pub size: Option<Size>,
    pub direct: Option<bool>,
    #[serde(default, deserialize_with = "engine_or_null")]
    pub engine: Option<EngineKind>,
    pub rate_iops: Option<f64>,
    pub rate_mbps: Option<f64>,
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
    /// The hosts of the inventory (`--hosts`) this workload runs on: `all`, a host, a
    /// label, a slice `0:3`, or a list of those.
    #[serde(default, deserialize_with = "one_or_many")]
    pub hosts: Option<Vec<String>>,
    /// Workers on each of those hosts (instead of `jobs` in all).
    pub per_host: Option<u32>,
    /// Another program runs this workload (see [`driver`]); the keys below are its own.
    pub driver: Option<driver::DriverName>,
    pub dsn: Option<String>,
    pub scale: Option<u32>,
    pub reuse: Option<bool>,
    pub clients: Option<u32>,
    pub threads: Option<u32>,
    pub script: Option<String>,
    pub sql: Option<String>,
    pub rate: Option<f64>,
    pub settings: Option<driver::Settings>,
    pub server: Option<String>,
    pub streams: Option<u32>,
    pub reverse: Option<bool>,
    pub link: Option<String>,
}

/// `target: /dev/sdb` or `target: [/dev/sdb, /dev/sdc]`.
fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<Vec<String>>, D::Error> {
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

/// How a workload with several targets shares its queue (the field notes' "one job over
/// many devices vs one job per device").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Queue {
    /// One queue of `iodepth` per job across all targets, IOs dealt round-robin: every
    /// target gets the same IO rate and a slow one holds more of the queue, like a
    /// volume manager or RAID set.
    Shared,
    /// Each target gets its own jobs with their own `iodepth`: targets run independently
    /// and a fast one does proportionally more IO.
    PerTarget,
}

/// The data settings as the profile keys that set them, so the stored profile reads
/// like the scenario.
fn serialize_data<S: serde::Serializer>(d: &DataSpec, s: S) -> std::result::Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(None)?;
    match d.content {
        Content::Random => {}
        Content::Compressible(p) => m.serialize_entry("compress_percent", &p)?,
        Content::Zero => m.serialize_entry("zero", &true)?,
    }
    if d.dedupe_percent > 0 {
        m.serialize_entry("dedupe_percent", &d.dedupe_percent)?;
    }
    if d.crc {
        m.serialize_entry("crc", "crc32c")?;
    }
    m.end()
}

/// `engine: null` is YAML's null, not the string "null": read it as the null engine
/// (an absent key stays `None`).
fn engine_or_null<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<EngineKind>, D::Error> {
    Ok(Some(Option::<EngineKind>::deserialize(d)?.unwrap_or(EngineKind::Null)))
}

/// The file as written.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub defaults: Option<Profile>,
    /// A name given twice is refused as any duplicate key is (see [`vars`], which reads
    /// the file first).
    pub workloads: IndexMap<String, Profile>,
    #[serde(default)]
    pub timeline: Option<Vec<steps::StepFile>>,
    /// Checked by [`vars::substitute`] before the file is read; kept for the record.
    #[serde(default)]
    pub vars: Option<IndexMap<String, serde_yaml::Value>>,
    /// Thresholds checked at the end of the run (see [`expect`]).
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
}

/// Queries against another Prometheus, evaluated every `interval` while the run goes
/// (see `observe::remote`).
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteQueries {
    /// `http://host:port`, without the API path.
    pub url: String,
    /// (name, PromQL) in the order written.
    pub queries: Vec<(String, String)>,
    pub interval: Duration,
}

/// A worker group as written.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Group {
    /// How many workers (jobs) each workload bound to it runs.
    pub count: u32,
}

/// A workload with every setting decided.
#[derive(Debug, Clone, Serialize)]
pub struct Workload {
    pub name: String,
    /// One or more targets; see `queue` for how several share the IO.
    pub targets: Vec<PathBuf>,
    pub queue: Queue,
    /// Name of the data file inside a directory target; workloads naming the same file share it.
    pub file: String,
    pub rw: Rw,
    pub rwmixread: u32,
    /// One block size or a split (`bs` / `bssplit`).
    pub bs: BlockSizes,
    /// Share of IOs at random positions (random `rw` only); the rest follow the last IO.
    pub random_percent: u32,
    pub distribution: Distribution,
    /// Where the working set starts in the file or device.
    pub offset: u64,
    pub iodepth: u32,
    pub jobs: u32,
    /// The worker group (top-level `groups`) whose count gave `jobs`, if any.
    pub group: Option<String>,
    /// Working set in bytes; `None` means "the whole existing file or device".
    pub size: Option<u64>,
    pub direct: bool,
    pub engine: EngineKind,
    /// IOs per second when open loop (from `rate_iops`, or `rate_mbps` over the mean
    /// block size).
    pub rate_iops: Option<f64>,
    /// The byte rate asked for, when the rate was given as `rate_mbps`.
    pub rate_mbps: Option<f64>,
    pub arrival: Arrival,
    /// Closed loop: pause of each IO slot between a completion and its next IO.
    #[serde(serialize_with = "units::serialize_duration")]
    pub think_time: Duration,
    /// Sync the file after every N writes of a job (0: never), like a log writer.
    pub fsync_every: u32,
    /// Sync with fdatasync (data only) instead of fsync.
    pub fdatasync: bool,
    /// Write the whole working set before measuring, even in an existing file or device.
    pub prefill: bool,
    /// Append: writes go to the end of the file, which grows (no working set to wrap in).
    pub extend: bool,
    /// An appending workload keeps what earlier runs appended instead of starting from
    /// an empty file (which stops the file growing run after run).
    pub keep: bool,
    /// A timeline `prefill` or `zero` step writes its working set, so its files are
    /// opened for writing even if it only reads.
    #[serde(skip)]
    pub filled: bool,
    /// End the workload once its IOPS reach steady state (`fathom sweep`), instead of
    /// running its whole duration, which then is the longest it may take. Stored with
    /// the profile, so the run's analysis judges steady state by the same rounds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_when_steady: Option<SteadyStop>,
    /// What written blocks contain.
    #[serde(flatten, serialize_with = "serialize_data")]
    pub data: DataSpec,
    #[serde(serialize_with = "units::serialize_duration")]
    pub duration: Duration,
    #[serde(serialize_with = "units::serialize_duration")]
    pub ramp: Duration,
    /// The hosts this workload's workers run on, if not here (many-host runs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
    /// The program that runs this workload instead of fathom's IO engine, if any; then
    /// `engine` names it and the IO keys keep their defaults, unused.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub driver: Option<driver::Driver>,
}

/// Where a workload's workers run: `per_host` on each host `hosts` selects in the
/// inventory. Resolved when the run starts (the inventory is not part of the scenario):
/// `resolved` then lists the hosts, and the workload's `jobs` is `per_host` times them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Placement {
    pub hosts: Vec<String>,
    pub per_host: u32,
    pub resolved: Vec<String>,
    /// Where `hosts` was written (`FILE:LINE: workloads.w.hosts`, or its `--set`), for
    /// the errors only the inventory shows.
    #[serde(skip)]
    pub at: String,
}

impl Placement {
    /// The host of worker `index` (workers fill hosts in order, `per_host` each).
    pub fn host_of(&self, index: u32) -> &str {
        let i = (index / self.per_host.max(1)) as usize;
        self.resolved.get(i).or(self.resolved.last()).map(String::as_str).unwrap_or("localhost")
    }
}

impl Workload {
    /// A workload run by `driver` with `workers` of its own (pgbench's clients, iperf3's
    /// streams) and, for pgbench, a rate in transactions per second.
    fn driven(
        name: &str,
        driver: driver::Driver,
        workers: u32,
        rate: Option<f64>,
        duration: Duration,
        ramp: Duration,
    ) -> Workload {
        Workload {
            name: name.to_string(),
            targets: Vec::new(),
            queue: Queue::Shared,
            file: name.to_string(),
            rw: Rw::Read,
            rwmixread: 100,
            bs: BlockSizes::single(4096),
            random_percent: 100,
            distribution: Distribution::Uniform,
            offset: 0,
            iodepth: 1,
            jobs: workers,
            group: None,
            size: None,
            direct: false,
            engine: match driver {
                driver::Driver::Pgbench(_) => EngineKind::Pgbench,
                driver::Driver::Iperf3(_) => EngineKind::Iperf3,
            },
            rate_iops: rate,
            rate_mbps: None,
            arrival: Arrival::Uniform,
            think_time: Duration::ZERO,
            fsync_every: 0,
            fdatasync: false,
            prefill: false,
            extend: false,
            keep: false,
            filled: false,
            stop_when_steady: None,
            data: DataSpec::default(),
            duration,
            ramp,
            placement: None,
            driver: Some(driver),
        }
    }
}

/// When a workload may stop early: once its IOPS are steady (SNIA rule over rounds of
/// `round_s` seconds), but not before `min` has passed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SteadyStop {
    #[serde(serialize_with = "units::serialize_duration")]
    pub min: Duration,
    pub round_s: usize,
}

/// A loaded, checked scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    pub description: Option<String>,
    /// The source text, stored with the run so it can be reproduced.
    pub text: String,
    /// Where the text came from (a path, or `builtin:NAME`), for errors.
    pub origin: String,
    pub workloads: Vec<Workload>,
    /// The timeline; without one in the file, every workload starts at once.
    pub steps: Vec<steps::Step>,
    pub expect: Vec<expect::Expectation>,
    /// `observe: prometheus:`, if given.
    pub remote: Option<RemoteQueries>,
    /// `prometheus: ADDR`: where to serve live metrics, if given.
    pub prometheus: Option<String>,
    /// The variables after `--set`, as substituted.
    pub vars: IndexMap<String, String>,
}

/// Where a scenario came from, for error messages.
pub struct Source<'a> {
    /// Shown in errors: a path, or `builtin:NAME`.
    pub origin: String,
    pub text: &'a str,
}

impl Scenario {
    /// Loads a scenario from text, applying `--set` overrides, and checks every value.
    pub fn load(original: &Source, sets: &[Override]) -> Result<Scenario> {
        let origin = &original.origin;
        let written = prescan::check(origin, original.text)?;
        let mut sets = sets.to_vec();
        let (text, vars) = vars::substitute(origin, written, &mut sets)?;
        // values of variables may nest too
        prescan::check(origin, &text)?;
        let src = &Source { origin: origin.clone(), text: &text };
        let sets = &sets[..];
        let parsed: ScenarioFile = serde_yaml::from_str(src.text).map_err(|e| yaml_error(origin, &e))?;
        let mut touched = Vec::new();
        let file = if sets.is_empty() {
            parsed
        } else {
            let mut value: serde_yaml::Value = serde_yaml::from_str(src.text).map_err(|e| yaml_error(origin, &e))?;
            let names: Vec<String> = parsed.workloads.keys().cloned().collect();
            for set in sets {
                touched.push((set.to_string(), set.apply(&mut value, &names)?));
            }
            // Read back as text, as the file was: `description: 1` is text there, and
            // would be "an integer, expected a string" from a value.
            let text = serde_yaml::to_string(&value).map_err(|e| Error::input(format!("{origin}: {e}")))?;
            serde_yaml::from_str(&text).map_err(|e| {
                let msg = strip_mark(&e.to_string());
                let set = touched.iter().find(|(_, paths)| paths.iter().any(|p| msg.starts_with(&format!("{p}:"))));
                match set {
                    Some((set, _)) => Error::input(format!("--set {set}: {msg}")),
                    None => Error::input(format!("{}: {msg}", overrides::describe(sets))),
                }
            })?
        };
        let groups = file.groups.clone().unwrap_or_default();
        let checker = Checker { src, touched, groups };
        let mut scenario = checker.resolve(file, written)?;
        scenario.vars = vars;
        Ok(scenario)
    }
}

/// Turns a serde_yaml error into `file:line: path: message`.
fn yaml_error(origin: &str, e: &serde_yaml::Error) -> Error {
    let msg = strip_mark(&e.to_string());
    match e.location() {
        Some(loc) => Error::input(format!("{origin}:{}: {msg}", loc.line())),
        None => Error::input(format!("{origin}: {msg}")),
    }
}

/// serde_yaml appends " at line L column C"; we print the line ourselves, up front.
fn strip_mark(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

/// Whether a name fathom turns into a file (a target, a `file`) is one a user meant: a
/// stray space or a line break from a template would otherwise become a file named
/// ` ` or `\n`.
pub fn plain_text(name: &str) -> bool {
    !name.trim().is_empty() && !name.chars().any(char::is_control)
}

/// What [`plain_text`] asks for, for the error.
pub const PLAIN_TEXT: &str =
    "it must not be empty or only spaces, nor contain a line break or another control character";

/// Resolves and validates, producing errors located at the key that is wrong.
struct Checker<'a> {
    src: &'a Source<'a>,
    /// The file's worker groups, for `group:`.
    groups: IndexMap<String, Group>,
    /// Each `--set` (as written) with the dotted paths it changed.
    touched: Vec<(String, Vec<String>)>,
}

impl Checker<'_> {
    /// An error about the key at `path` (e.g. `["workloads", "qd1", "iodepth"]`).
    fn err(&self, path: &[&str], msg: impl std::fmt::Display) -> Error {
        Error::input(format!("{}: {msg}", self.at(path)))
    }

    /// Where the key at `path` was written: `FILE:LINE: dotted.path`, or the `--set`
    /// that changed it.
    fn at(&self, path: &[&str]) -> String {
        let dotted = path.join(".");
        if let Some((set, _)) = self.touched.iter().find(|(_, paths)| paths.contains(&dotted)) {
            return format!("--set {set}: {dotted}");
        }
        match locate::line_of(self.src.text, path) {
            Some(line) => format!("{}:{line}: {dotted}", self.src.origin),
            None => format!("{}: {dotted}", self.src.origin),
        }
    }

    /// Refuses a line break in a value that is one line by nature: a name, a path, an
    /// address. In a path it would make a file named `a\nb`; in a name it would break
    /// the lines of a table, a log or the Prometheus exposition.
    fn one_line(&self, path: &[&str], value: &str) -> Result<()> {
        if value.contains(['\n', '\r']) {
            // the value itself is not shown: it may be a DSN with a secret
            return Err(self.err(path, "is more than one line: expected one line"));
        }
        Ok(())
    }

    /// The text keys of a profile (`at` is `defaults` or `workloads.NAME`): each one line.
    /// Targets are checked as paths where they are resolved ([`plain_text`]).
    fn profile_text(&self, at: &[&str], p: &Profile) -> Result<()> {
        for value in p.hosts.iter().flatten() {
            self.one_line(&[at, &["hosts"]].concat(), value)?;
        }
        let texts = [
            ("group", &p.group),
            ("bssplit", &p.bssplit),
            ("distribution", &p.distribution),
            ("dsn", &p.dsn),
            ("script", &p.script),
            ("server", &p.server),
            ("link", &p.link),
        ];
        for (key, value) in texts {
            if let Some(value) = value {
                self.one_line(&[at, &[key]].concat(), value)?;
            }
        }
        Ok(())
    }

    fn resolve(&self, file: ScenarioFile, text: &str) -> Result<Scenario> {
        if file.workloads.is_empty() {
            return Err(self.err(&["workloads"], "a scenario needs at least one workload"));
        }
        let names: Vec<&str> = file.workloads.keys().map(String::as_str).collect();
        let index_of = |name: &str| file.workloads.get_index_of(name);
        let mut steps = match &file.timeline {
            // without a timeline, every workload starts at once
            None => (0..names.len())
                .map(|workload| steps::Step {
                    at: None,
                    phase: None,
                    action: steps::Action::Start { workload, stagger: Duration::ZERO, wait: false },
                })
                .collect(),
            Some(raw) => self.timeline(raw, &names)?,
        };
        // how long each workload runs when the timeline says (a start's `duration`, a ramp)
        let mut run_for: Vec<Option<Duration>> = vec![None; names.len()];
        for (i, (raw, step)) in file.timeline.iter().flatten().zip(&steps).enumerate() {
            match step.action {
                steps::Action::Start { workload, .. } if raw.duration.is_some() => {
                    let d = raw.duration.unwrap_or(Span(Duration::ZERO)).0;
                    if d.is_zero() || d.subsec_nanos() != 0 {
                        let at = ["timeline", &i.to_string(), "duration"];
                        return Err(self.err(&at, "must be a whole number of seconds, at least 1s"));
                    }
                    run_for[workload] = Some(d);
                }
                steps::Action::Ramp { workload, add, every, until, .. } => {
                    run_for[workload] = Some(every * until.div_ceil(add));
                }
                _ => {}
            }
        }
        self.one_line(&["name"], &file.name)?;
        if let Some(d) = &file.description {
            self.one_line(&["description"], d)?;
        }
        for (i, raw) in file.timeline.iter().flatten().enumerate() {
            for (key, label) in [("phase", &raw.phase), ("mark", &raw.mark)] {
                if let Some(label) = label {
                    self.one_line(&["timeline", &i.to_string(), key], label)?;
                }
            }
        }
        let defaults = file.defaults.clone().unwrap_or_default();
        self.profile_text(&["defaults"], &defaults)?;
        for (name, profile) in &file.workloads {
            self.one_line(&["workloads", name], name)?;
            self.profile_text(&["workloads", name], profile)?;
        }
        let mut workloads = Vec::new();
        for ((name, profile), run_for) in file.workloads.iter().zip(run_for) {
            workloads.push(self.workload(name, profile, &defaults, run_for)?);
        }
        for (i, step) in steps.iter().enumerate() {
            if let steps::Action::Ramp { workload, .. } | steps::Action::Start { workload, stagger: _, .. } =
                step.action
            {
                let w = &workloads[workload];
                let ramped = matches!(step.action, steps::Action::Ramp { .. })
                    || matches!(step.action, steps::Action::Start { stagger, .. } if !stagger.is_zero());
                if ramped && w.engine == EngineKind::Fio {
                    return Err(self.err(
                        &["timeline", &i.to_string()],
                        format!("`{}` runs on fio, whose jobs start together: no ramp or stagger", w.name),
                    ));
                }
            }
        }
        for step in &steps {
            if let steps::Action::Fill { workload, .. } = step.action {
                workloads[workload].filled = true;
            }
        }
        // `add_host`: hosts of `per_host` workers each
        for (i, step) in steps.iter_mut().enumerate() {
            if let steps::Action::Ramp { workload, add, until, by_host: true, .. } = &mut step.action {
                let Some(p) = &workloads[*workload].placement else {
                    return Err(self.err(
                        &["timeline", &i.to_string(), "add_host"],
                        format!(
                            "`{}` is not placed on hosts (`hosts:`): ramp it with `add`",
                            workloads[*workload].name
                        ),
                    ));
                };
                if *until * p.per_host > budget::MAX_WORKERS {
                    return Err(self.err(
                        &["timeline", &i.to_string(), "until"],
                        format!(
                            "{until} hosts of {} workers (`per_host`) is {}: a workload has at most {} workers",
                            p.per_host,
                            *until * p.per_host,
                            budget::MAX_WORKERS
                        ),
                    ));
                }
                *add *= p.per_host;
                *until *= p.per_host;
            }
        }
        budget::check(&workloads, &steps).map_err(|(i, msg)| self.err(&["workloads", &workloads[i].name], msg))?;
        let mut expect = Vec::new();
        // what `during` may name: a phase a step labels, or a workload
        let labels: Vec<&str> = steps.iter().filter_map(|s| s.phase.as_deref()).collect();
        for (i, e) in file.expect.iter().flatten().enumerate() {
            let at = ["expect", &i.to_string()];
            self.one_line(&at, e)?;
            let e = expect::parse(e, &index_of).map_err(|msg| self.err(&at, msg))?;
            if let Some(during) = &e.during
                && !labels.contains(&during.as_str())
                && index_of(during).is_none()
            {
                let phases = if labels.is_empty() { "none".to_string() } else { labels.join(", ") };
                return Err(self.err(
                    &at,
                    format!(
                        "`during {during}`: no phase is labelled `{during}` and no workload has that name \
                         (phases: {phases}; workloads: {})",
                        names.join(", ")
                    ),
                ));
            }
            expect.push(e);
        }
        let remote = match file.observe.and_then(|o| o.prometheus) {
            Some(r) => Some(self.remote(r)?),
            None => None,
        };
        let compare = file.compare.unwrap_or_default();
        if compare.len() == 1 {
            return Err(self.err(&["compare"], "names one workload: compare at least two (the first is the baseline)"));
        }
        if let Some(address) = &file.prometheus {
            self.one_line(&["prometheus"], address)?;
        }
        for (i, name) in compare.iter().enumerate() {
            if index_of(name).is_none() {
                return Err(self.err(&["compare", &i.to_string()], format!("no workload named `{name}`")));
            }
        }
        Ok(Scenario {
            name: file.name,
            description: file.description,
            text: text.to_string(),
            origin: self.src.origin.clone(),
            workloads,
            steps,
            expect,
            remote,
            prometheus: file.prometheus,
            vars: IndexMap::new(),
        })
    }

    /// Checks `observe: prometheus:`: an http:// URL (fathom speaks plain HTTP) and at
    /// least one query; every 5 s unless `interval` says otherwise.
    fn remote(&self, r: RemoteFile) -> Result<RemoteQueries> {
        self.one_line(&["observe", "prometheus", "url"], &r.url)?;
        for name in r.queries.keys() {
            self.one_line(&["observe", "prometheus", "queries", name], name)?;
        }
        if !r.url.starts_with("http://") {
            return Err(self.err(&["observe", "prometheus", "url"], format!("`{}`: expected an http:// URL", r.url)));
        }
        if r.queries.is_empty() {
            return Err(self.err(&["observe", "prometheus", "queries"], "expected at least one `name: PROMQL`"));
        }
        let interval = r.interval.map(|s| s.0).unwrap_or(Duration::from_secs(5));
        if interval < Duration::from_secs(1) {
            return Err(self.err(&["observe", "prometheus", "interval"], "expected 1s or more"));
        }
        Ok(RemoteQueries {
            url: r.url.trim_end_matches('/').to_string(),
            queries: r.queries.into_iter().collect(),
            interval,
        })
    }

    /// Checks the timeline: each step, each workload started once before it is stopped
    /// or waited for, and none left unstarted.
    fn timeline(&self, raw: &[steps::StepFile], names: &[&str]) -> Result<Vec<steps::Step>> {
        if raw.is_empty() {
            return Err(self.err(&["timeline"], "the timeline is empty"));
        }
        let index_of = |name: &str| names.iter().position(|n| *n == name);
        let mut started: Vec<Option<usize>> = vec![None; names.len()];
        let mut out = Vec::new();
        for (i, r) in raw.iter().enumerate() {
            let n = i.to_string();
            let step = steps::resolve(r, &index_of).map_err(|(key, msg)| {
                let mut path = vec!["timeline", n.as_str()];
                path.extend(key.split('.').filter(|k| !k.is_empty()));
                let msg = if msg.starts_with("no workload") {
                    format!("{msg} (workloads: {})", names.join(", "))
                } else {
                    msg
                };
                self.err(&path, msg)
            })?;
            match step.action {
                steps::Action::Start { workload, .. } | steps::Action::Ramp { workload, .. } => {
                    let verb = if matches!(step.action, steps::Action::Start { .. }) { "start" } else { "ramp" };
                    if let Some(first) = started[workload] {
                        return Err(self.err(
                            &["timeline", &n, verb],
                            format!(
                                "`{}` already started at timeline step {first}; define another workload to run it again",
                                names[workload]
                            ),
                        ));
                    }
                    started[workload] = Some(i);
                }
                steps::Action::Stop { workload } | steps::Action::WaitFor { workload }
                    if started[workload].is_none() =>
                {
                    let verb = if matches!(step.action, steps::Action::Stop { .. }) { "stop" } else { "wait_for" };
                    return Err(self.err(
                        &["timeline", &n, verb],
                        format!("`{}` has not been started by this step", names[workload]),
                    ));
                }
                _ => {}
            }
            out.push(step);
        }
        if let Some(idle) = (0..names.len()).find(|&w| started[w].is_none()) {
            let name = names[idle];
            return Err(self.err(
                &["workloads", name],
                format!("`{name}` is never started: add `- start: {name}` to the timeline, or remove it"),
            ));
        }
        Ok(out)
    }

    /// The data keys: `compress_percent`, `dedupe_percent`, `zero` and `crc`.
    fn data_spec(&self, name: &str, p: &Profile, d: &Profile) -> Result<DataSpec> {
        let at = |key: &str, own: bool| -> Vec<String> {
            if own { vec!["workloads".into(), name.into(), key.into()] } else { vec!["defaults".into(), key.into()] }
        };
        let fail = |path: Vec<String>, msg: &str| {
            let keys: Vec<&str> = path.iter().map(String::as_str).collect();
            self.err(&keys, msg)
        };
        let compress = p.compress_percent.or(d.compress_percent);
        let compress_at = at("compress_percent", p.compress_percent.is_some());
        let dedupe = p.dedupe_percent.or(d.dedupe_percent).unwrap_or(0);
        let dedupe_at = at("dedupe_percent", p.dedupe_percent.is_some());
        let zero = p.zero.or(d.zero).unwrap_or(false);
        let zero_at = at("zero", p.zero.is_some());
        let crc = p.crc.or(d.crc) == Some(Crc::Crc32c);
        if compress.is_some_and(|c| c > 99) {
            return Err(fail(compress_at, "must be 0-99: the share of each block that compresses away"));
        }
        if dedupe > 100 {
            return Err(fail(dedupe_at, "is not a percentage (0-100)"));
        }
        if zero && compress.is_some() {
            return Err(fail(zero_at, "zeros are not compression: set `zero` or `compress_percent`, not both"));
        }
        if crc && (zero || dedupe > 0) {
            let path = if zero { zero_at } else { dedupe_at };
            return Err(fail(path, "a crc header makes every block unique and non-zero: drop `crc` or this key"));
        }
        let content = match (zero, compress) {
            (true, _) => Content::Zero,
            (false, Some(c)) if c > 0 => Content::Compressible(c),
            _ => Content::Random,
        };
        Ok(DataSpec { content, dedupe_percent: dedupe, crc })
    }

    /// `bs` or `bssplit`, from the workload if it sets either, else from the defaults;
    /// with the path of the key they came from.
    fn block_sizes(&self, name: &str, p: &Profile, d: &Profile) -> Result<(BlockSizes, Vec<String>)> {
        let (profile, mut path): (&Profile, Vec<String>) = if p.bs.is_some() || p.bssplit.is_some() {
            (p, vec!["workloads".into(), name.into()])
        } else {
            (d, vec!["defaults".into()])
        };
        let fail = |path: &[String], msg: String| {
            let keys: Vec<&str> = path.iter().map(String::as_str).collect();
            self.err(&keys, msg)
        };
        match (&profile.bs, &profile.bssplit) {
            (Some(bs), None) => {
                path.push("bs".into());
                Ok((BlockSizes::single(bs.0), path))
            }
            (bs, Some(split)) => {
                path.push("bssplit".into());
                if bs.is_some() {
                    return Err(fail(&path, "set `bs` or `bssplit`, not both".into()));
                }
                let split = BlockSizes::parse_split(split).map_err(|e| fail(&path, e))?;
                Ok((split, path))
            }
            (None, None) => {
                path.push("bs".into());
                Ok((BlockSizes::single(4096), path))
            }
        }
    }

    /// Overlays a workload on the defaults and checks each value.
    /// `run_for`: the duration the timeline gives the workload, over its own.
    fn workload(&self, name: &str, p: &Profile, d: &Profile, run_for: Option<Duration>) -> Result<Workload> {
        // The path of a key: the workload's own if it sets it, else the defaults'.
        let at = |key: &'static str, own: bool| -> Vec<String> {
            if own { vec!["workloads".into(), name.into(), key.into()] } else { vec!["defaults".into(), key.into()] }
        };
        macro_rules! pick {
            ($key:ident) => {
                (p.$key.clone().or(d.$key.clone()), at(stringify!($key), p.$key.is_some()))
            };
        }
        let fail = |path: &Vec<String>, msg: String| {
            let parts: Vec<&str> = path.iter().map(String::as_str).collect();
            self.err(&parts, msg)
        };
        let missing = |key: &str, what: &str| {
            self.err(&["workloads", name], format!("missing `{key}`: {what} (set it here or in `defaults`)"))
        };

        if let (Some(kind), _) = pick!(driver) {
            return self.driver_workload(name, kind, p, d, run_for);
        }
        self.no_driver_keys(name, p)?;
        let (engine, engine_at) = pick!(engine);
        let engine = engine.unwrap_or(EngineKind::IoUring);
        let (hosts, hosts_at) = pick!(hosts);
        let (per_host, per_host_at) = pick!(per_host);
        if per_host.is_some() && hosts.is_none() && p.per_host.is_some() {
            return Err(fail(&per_host_at, "places workers on hosts: set `hosts` too".into()));
        }
        let placement = match hosts {
            Some(h) if h.is_empty() => return Err(fail(&hosts_at, "lists no host".into())),
            Some(_) if engine == EngineKind::Fio => {
                return Err(fail(&hosts_at, "`engine: fio` runs on this host only".into()));
            }
            Some(h) => {
                let per_host = per_host.unwrap_or(1);
                if !(1..=1024).contains(&per_host) {
                    return Err(fail(&per_host_at, format!("{per_host} must be between 1 and 1024")));
                }
                let at = self.at(&hosts_at.iter().map(String::as_str).collect::<Vec<_>>());
                Some(Placement { hosts: h, per_host, resolved: Vec::new(), at })
            }
            None => None,
        };
        let (target, target_at) = pick!(target);
        let targets = match (target, engine) {
            (Some(t), _) if t.is_empty() => return Err(fail(&target_at, "lists no target".into())),
            (Some(t), _) => t,
            (None, EngineKind::Null) => vec!["null".to_string()],
            // each host's target, from the inventory
            (None, _) if placement.is_some() => Vec::new(),
            (None, _) => return Err(missing("target", "a directory, file or block device to run against")),
        };
        if let Some(bad) = targets.iter().find(|t| !plain_text(t)) {
            return Err(fail(&target_at, format!("{bad:?} is not a path: {}", PLAIN_TEXT)));
        }
        if let Some(dup) = targets.iter().enumerate().find(|(i, t)| targets[..*i].contains(t)) {
            return Err(fail(&target_at, format!("`{}` is listed twice", dup.1)));
        }
        let (queue, queue_at) = pick!(queue);
        if queue == Some(Queue::PerTarget) && placement.is_some() {
            return Err(fail(&queue_at, "a workload on hosts has one queue per worker's host target".into()));
        }
        if queue.is_some() && targets.len() < 2 && p.queue.is_some() {
            return Err(fail(&queue_at, "only applies to a workload with several targets".into()));
        }
        let (rw, _) = pick!(rw);
        let rw = rw.ok_or_else(|| missing("rw", "one of read, write, randread, randwrite, randrw"))?;
        let (mix, mix_at) = pick!(rwmixread);
        if let Some(m) = mix {
            if m > 100 {
                return Err(fail(&mix_at, format!("{m} is not a percentage (0-100)")));
            }
            // In `defaults` it is meant for the mixed workloads only, as in fio's [global].
            if !matches!(rw, Rw::Randrw | Rw::ReadWrite) && p.rwmixread.is_some() {
                return Err(fail(&mix_at, "only applies to `rw: randrw` or `rw: rw`".into()));
            }
        }
        let (bs, bs_at) = self.block_sizes(name, p, d)?;
        let (direct, _) = pick!(direct);
        let direct = direct.unwrap_or(true);
        for (size, _) in bs.sizes() {
            if size == 0 || size > 64 << 20 {
                return Err(fail(&bs_at, format!("block size {size} must be between 1 byte and 64 MiB")));
            }
            if direct && size % 512 != 0 {
                return Err(fail(
                    &bs_at,
                    format!("{} is not a multiple of 512, which O_DIRECT needs (or set direct: false)", Size(size)),
                ));
            }
        }
        let (random_percent, rp_at) = pick!(random_percent);
        if let Some(rp) = random_percent {
            if rp > 100 {
                return Err(fail(&rp_at, format!("{rp} is not a percentage (0-100)")));
            }
            if !rw.is_random() && p.random_percent.is_some() {
                return Err(fail(&rp_at, "only applies to random `rw` (randread, randwrite, randrw)".into()));
            }
        }
        let (distribution, dist_at) = pick!(distribution);
        let distribution = match distribution {
            None => Distribution::Uniform,
            Some(text) => {
                let dist: Distribution = text.parse().map_err(|e: String| fail(&dist_at, e))?;
                if !rw.is_random() && p.distribution.is_some() {
                    return Err(fail(&dist_at, "only applies to random `rw` (randread, randwrite, randrw)".into()));
                }
                dist
            }
        };
        let (offset, offset_at) = pick!(offset);
        let offset = offset.map(|o| o.0).unwrap_or(0);
        if direct && offset % 512 != 0 {
            return Err(fail(&offset_at, format!("{} is not a multiple of 512, which O_DIRECT needs", Size(offset))));
        }
        let (iodepth, depth_at) = pick!(iodepth);
        let iodepth = iodepth.unwrap_or(1);
        if !(1..=4096).contains(&iodepth) {
            return Err(fail(&depth_at, format!("{iodepth} must be between 1 and 4096")));
        }
        let (jobs, jobs_at) = pick!(jobs);
        let (group, group_at) = pick!(group);
        // the workload's own setting wins over one from `defaults`; both at one level clash
        let group = match (&group, jobs) {
            (Some(_), Some(_)) if p.group.is_some() == p.jobs.is_some() => {
                return Err(fail(&group_at, "sets the workers: set `group` or `jobs`, not both".into()));
            }
            (Some(_), Some(_)) if p.jobs.is_some() => None,
            _ => group,
        };
        let group_name = group.clone();
        let jobs = match (group, jobs) {
            (Some(g), _) => match self.groups.get(&g) {
                Some(found) => found.count,
                None => {
                    let known: Vec<&str> = self.groups.keys().map(String::as_str).collect();
                    let known = if known.is_empty() { "none".to_string() } else { known.join(", ") };
                    return Err(fail(&group_at, format!("no group named `{g}` (groups: {known})")));
                }
            },
            (_, jobs) => jobs.unwrap_or(1),
        };
        if !(1..=1024).contains(&jobs) {
            return Err(fail(&jobs_at, format!("{jobs} must be between 1 and 1024")));
        }
        if placement.is_some() && p.jobs.is_some() {
            return Err(fail(&jobs_at, "on hosts, `per_host` sets the workers (per_host x hosts)".into()));
        }
        let (size, size_at) = pick!(size);
        if let Some(s) = size
            && s.0 < bs.max()
        {
            return Err(fail(
                &size_at,
                format!("working set {s} is smaller than one block ({})", Size(bs.max()).human()),
            ));
        }
        let (rate, rate_at) = pick!(rate_iops);
        let (mbps, mbps_at) = pick!(rate_mbps);
        for (r, at, unit) in [(rate, &rate_at, "IOs"), (mbps, &mbps_at, "megabytes (10^6 bytes)")] {
            if let Some(r) = r
                && !(r > 0.0 && r.is_finite())
            {
                return Err(fail(at, format!("{r} must be a positive number of {unit} per second")));
            }
        }
        if rate.is_some() && mbps.is_some() {
            return Err(fail(&mbps_at, "set `rate_iops` or `rate_mbps`, not both".into()));
        }
        let rate = rate.or(mbps.map(|m| m * 1e6 / bs.mean()));
        if let Some(r) = rate
            && r > budget::MAX_RATE
        {
            let max = budget::MAX_RATE;
            return Err(match mbps {
                Some(m) => fail(
                    &mbps_at,
                    format!(
                        "{m} MB/s of {} blocks{} is {r:.0} IOs per second: at most {max} per workload",
                        Size(bs.mean().round() as u64).human(),
                        if bs.is_single() { "" } else { " (on average)" }
                    ),
                ),
                None => fail(&rate_at, format!("{r} IOs per second: at most {max} per workload")),
            });
        }
        let (arrival, arrival_at) = pick!(arrival);
        if arrival.is_some() && rate.is_none() && p.arrival.is_some() {
            return Err(fail(&arrival_at, "only applies with `rate_iops` or `rate_mbps` (open loop)".into()));
        }
        let (think, think_at) = pick!(think_time);
        let think_time = think.map(|t| t.0).unwrap_or_default();
        if !think_time.is_zero() && rate.is_some() {
            return Err(fail(&think_at, "paces a closed loop; with a rate the schedule sets the pace".into()));
        }
        if think_time > budget::MAX_THINK_TIME {
            return Err(fail(
                &think_at,
                format!(
                    "{} is longer than a slot may wait ({}): too few IOs to measure",
                    Span(think_time),
                    Span(budget::MAX_THINK_TIME)
                ),
            ));
        }
        let (fsync_every, fsync_at) = pick!(fsync_every);
        let fsync_every = fsync_every.unwrap_or(0);
        if fsync_every > 0 && rw.read_percent(mix.unwrap_or(50)) == 100 && p.fsync_every.is_some() {
            return Err(fail(&fsync_at, "a workload that only reads has nothing to sync".into()));
        }
        let (fdatasync, fdatasync_at) = pick!(fdatasync);
        if fdatasync == Some(true) && fsync_every == 0 && p.fdatasync.is_some() {
            return Err(fail(&fdatasync_at, "chooses how `fsync_every` syncs; set `fsync_every` too".into()));
        }
        let data = self.data_spec(name, p, d)?;
        let (prefill, _) = pick!(prefill);
        let (extend, extend_at) = pick!(extend);
        let extend = extend.unwrap_or(false);
        let (keep, keep_at) = pick!(keep);
        if keep.is_some() && !extend && p.keep.is_some() {
            return Err(fail(&keep_at, "keeps what an appending workload wrote: set `extend: true` too".into()));
        }
        if extend {
            if rw != Rw::Write {
                return Err(fail(&extend_at, "appends sequentially: use it with `rw: write`".into()));
            }
            if prefill == Some(true) {
                return Err(fail(&extend_at, "an appending workload has no working set to prefill".into()));
            }
            if targets.len() > 1 {
                return Err(fail(&extend_at, "appends to one file: give it one target".into()));
            }
            if jobs != 1 {
                return Err(fail(
                    &extend_at,
                    "one appender per file: set `jobs: 1` (give other workloads their own `file`)".into(),
                ));
            }
            // from `defaults`, they are meant for the other workloads
            if p.size.is_some() || p.offset.is_some() {
                return Err(fail(
                    &extend_at,
                    "writes from the end of the file as it grows: leave out `size` and `offset`".into(),
                ));
            }
        }
        if engine == EngineKind::Fio {
            // fio has these knobs, but with other meanings: refuse rather than measure
            // something else under the same name
            let crc_own = p.crc.is_some() || d.crc.is_none();
            let refused = [
                (
                    data.crc,
                    at("crc", crc_own),
                    "fio verifies in a pass of its own (`verify=`), not as each block is read",
                ),
                (
                    extend,
                    extend_at.clone(),
                    "fio's `file_append` writes `size` bytes past the end and then stops, whatever the duration",
                ),
            ];
            if let Some((_, path, why)) = refused.into_iter().find(|r| r.0) {
                return Err(fail(
                    &path,
                    format!("not available with `engine: fio`: {why} (see {})", engine_at.join(".")),
                ));
            }
        }
        let whole_seconds = |span: Span, path: &Vec<String>| -> Result<Duration> {
            let d = span.0;
            if d.subsec_nanos() != 0 {
                return Err(fail(
                    path,
                    format!("{span} must be a whole number of seconds (fathom samples every second)"),
                ));
            }
            Ok(d)
        };
        let (duration, dur_at) = pick!(duration);
        let duration = match (run_for, duration) {
            (Some(d), _) => d,
            (None, Some(d)) => whole_seconds(d, &dur_at)?,
            (None, None) => return Err(missing("duration", "how long to measure, e.g. 30s")),
        };
        if duration.is_zero() {
            return Err(fail(&dur_at, "must be at least 1s".into()));
        }
        let (ramp, ramp_at) = pick!(ramp);
        let ramp = match ramp {
            Some(r) => whole_seconds(r, &ramp_at)?,
            None => Duration::ZERO,
        };
        if ramp + duration > budget::MAX_RUN {
            let days = budget::MAX_RUN.as_secs() / 86400;
            return Err(fail(
                &dur_at,
                format!(
                    "ramp + duration is {} h: a workload runs at most {days} days",
                    (ramp + duration).as_secs() / 3600
                ),
            ));
        }
        let (file, file_at) = pick!(file);
        let file = file.unwrap_or_else(|| name.to_string());
        if !plain_text(&file) || file.contains('/') || file.starts_with('.') {
            return Err(fail(
                &file_at,
                format!("{file:?} must be a plain file name (no `/`, not hidden); {PLAIN_TEXT}"),
            ));
        }
        Ok(Workload {
            name: name.to_string(),
            targets: targets.iter().map(PathBuf::from).collect(),
            queue: queue.unwrap_or(Queue::Shared),
            file,
            rw,
            rwmixread: mix.unwrap_or(50),
            bs,
            random_percent: random_percent.unwrap_or(100),
            distribution,
            offset: if extend { 0 } else { offset },
            iodepth,
            jobs,
            group: group_name,
            size: if extend { None } else { size.map(|s| s.0) },
            direct,
            engine,
            rate_iops: rate,
            rate_mbps: mbps,
            arrival: arrival.unwrap_or(Arrival::Uniform),
            think_time,
            fsync_every,
            fdatasync: fdatasync.unwrap_or(false),
            prefill: prefill.unwrap_or(false),
            extend,
            keep: extend && keep.unwrap_or(false),
            filled: false,
            stop_when_steady: None,
            data,
            duration,
            ramp,
            placement,
            driver: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str, sets: &[&str]) -> Result<Scenario> {
        let sets: Vec<Override> = sets.iter().map(|s| s.parse().unwrap()).collect();
        Scenario::load(&Source { origin: "s.yaml".into(), text }, &sets)
    }

    const BASIC: &str = "\
name: basic
defaults:
  target: /tmp
  duration: 5s
workloads:
  a:
    rw: randread
    iodepth: 4
  b:
    rw: write
    bs: 1m
";

    #[test]
    fn defaults_are_inherited_and_overridden() {
        let s = load(BASIC, &[]).unwrap();
        assert_eq!(s.workloads.len(), 2);
        assert_eq!(s.workloads[0].iodepth, 4);
        assert_eq!(s.workloads[0].bs, BlockSizes::single(4096));
        assert_eq!(s.workloads[1].bs, BlockSizes::single(1 << 20));
        assert_eq!(s.workloads[1].duration, Duration::from_secs(5));
        assert!(s.workloads[0].direct);
        let starts: Vec<bool> =
            s.steps.iter().map(|st| matches!(st.action, steps::Action::Start { wait: false, .. })).collect();
        assert_eq!(starts, vec![true, true], "no timeline: everything starts together");
    }

    #[test]
    fn unknown_key_names_file_line_and_key() {
        let text = BASIC.replace("    iodepth: 4", "    iodeph: 4");
        let err = load(&text, &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:8: workloads.a: unknown field `iodeph`"), "{err}");
        assert!(err.contains("expected one of"), "{err}");
    }

    #[test]
    fn bad_size_and_duration_are_located() {
        let err = load(&BASIC.replace("bs: 1m", "bs: 1q"), &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:11: workloads.b.bs: invalid size `1q`"), "{err}");
        let err = load(&BASIC.replace("duration: 5s", "duration: soon"), &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:4: defaults.duration: invalid duration"), "{err}");
    }

    #[test]
    fn wrong_type_is_located() {
        let err = load(&BASIC.replace("iodepth: 4", "iodepth: deep"), &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:8: workloads.a.iodepth: invalid type"), "{err}");
    }

    #[test]
    fn semantic_errors_point_at_the_key() {
        let err = load(&BASIC.replace("iodepth: 4", "iodepth: 0"), &[]).unwrap_err().to_string();
        assert_eq!(err, "s.yaml:8: workloads.a.iodepth: 0 must be between 1 and 4096");
        let err = load(&BASIC.replace("bs: 1m", "bs: 1000"), &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:11: workloads.b.bs: 1000 is not a multiple of 512"), "{err}");
        let err = load(&BASIC.replace("  duration: 5s\n", ""), &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:5: workloads.a: missing `duration`"), "{err}");
        let err = load(&BASIC.replace("duration: 5s", "duration: 1500ms"), &[]).unwrap_err().to_string();
        assert!(err.contains("whole number of seconds"), "{err}");
    }

    #[test]
    fn timeline_names_must_exist() {
        let text = format!("{BASIC}timeline:\n  - start: a\n  - start: c\n");
        let err = load(&text, &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:14: timeline.1.start: no workload named `c`"), "{err}");
        let ok = load(&format!("{BASIC}timeline:\n  - start: b\n  - start: a\n"), &[]).unwrap();
        assert_eq!(ok.steps.len(), 2);
        assert!(matches!(ok.steps[0].action, steps::Action::Start { workload: 1, .. }));
    }

    #[test]
    fn a_timeline_gives_durations_and_checks_its_order() {
        let text = format!(
            "{BASIC}timeline:\n  - start: a\n    async: true\n  - wait: 2s\n  - ramp: b\n    add: 2\n    every: 3s\n    until: 5\n  - stop: a\n"
        );
        let s = load(&text, &[]).unwrap();
        assert_eq!(s.workloads[1].duration, Duration::from_secs(9), "3 additions of 3 s");
        let text = format!("{BASIC}timeline:\n  - start: a\n    duration: 7s\n  - start: b\n");
        assert_eq!(load(&text, &[]).unwrap().workloads[0].duration, Duration::from_secs(7));
        let early = format!("{BASIC}timeline:\n  - stop: a\n  - start: a\n  - start: b\n");
        let err = load(&early, &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:13: timeline.0.stop: `a` has not been started"), "{err}");
        let unknown = format!("{BASIC}timeline:\n  - start: a\n  - start: b\n    every: 2s\n");
        let err = load(&unknown, &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:15: timeline.1.every: does not apply to `start`"), "{err}");
    }

    #[test]
    fn groups_give_workloads_their_workers() {
        let text = BASIC
            .replace("name: basic\n", "name: basic\ngroups:\n  vms: {count: 6}\n")
            .replace("    iodepth: 4\n", "    iodepth: 4\n    group: vms\n");
        let s = load(&text, &[]).unwrap();
        assert_eq!((s.workloads[0].jobs, s.workloads[1].jobs), (6, 1));
        let err = load(&text.replace("group: vms", "group: db"), &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:11: workloads.a.group: no group named `db` (groups: vms)"), "{err}");
        let err = load(&text.replace("group: vms", "group: vms\n    jobs: 2"), &[]).unwrap_err().to_string();
        assert!(err.contains("set `group` or `jobs`, not both"), "{err}");
    }

    #[test]
    fn vars_and_expectations() {
        let text = BASIC
            .replace("name: basic\n", "name: basic\nvars:\n  secs: 5\n")
            .replace("duration: 5s", "duration: ${secs}s");
        let s = load(&format!("{text}expect:\n  - a.read.p99 < 5ms\n"), &["secs=9"]).unwrap();
        assert_eq!(s.workloads[0].duration, Duration::from_secs(9));
        assert_eq!(s.vars["secs"], "9");
        assert_eq!(s.expect.len(), 1);
        let err = load(&format!("{text}expect:\n  - a.read.p99 < 5\n"), &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:15: expect.0: `5` is not a latency"), "{err}");
    }

    #[test]
    fn set_overrides_one_workload_or_all() {
        let s = load(BASIC, &["a.iodepth=32"]).unwrap();
        assert_eq!(s.workloads[0].iodepth, 32);
        let s = load(BASIC, &["iodepth=8", "bs=8k"]).unwrap();
        assert_eq!(s.workloads[0].iodepth, 8, "a bare key overrides workloads that set it too");
        assert_eq!(s.workloads[1].iodepth, 8);
        assert_eq!(s.workloads[1].bs, BlockSizes::single(8192));
        let err = load(BASIC, &["a.iodepth=zero"]).unwrap_err().to_string();
        assert!(err.starts_with("--set a.iodepth=zero:"), "{err}");
        let err = load(BASIC, &["a.iodepth=0"]).unwrap_err().to_string();
        assert!(err.starts_with("--set a.iodepth=0: workloads.a.iodepth: 0 must be"), "{err}");
        let err = load(BASIC, &["nosuch.iodepth=1"]).unwrap_err().to_string();
        assert!(err.contains("nosuch"), "{err}");
    }

    #[test]
    fn duplicate_and_idle_workloads_are_rejected() {
        let err = load(&BASIC.replace("  b:\n", "  a:\n"), &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:6: workloads: duplicate entry with key \"a\""), "{err}");
        let twice = format!("{BASIC}timeline:\n  - start: a\n  - start: b\n  - start: a\n");
        let err = load(&twice, &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:15: timeline.2.start: `a` already started"), "{err}");
        let idle = format!("{BASIC}timeline:\n  - start: a\n");
        let err = load(&idle, &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:9: workloads.b: `b` is never started"), "{err}");
    }

    #[test]
    fn rwmixread_in_defaults_applies_to_mixed_workloads_only() {
        let s = load(&BASIC.replace("  duration: 5s\n", "  duration: 5s\n  rwmixread: 70\n"), &[]).unwrap();
        assert_eq!(s.workloads[0].rw, Rw::Randread);
        let err = load(&BASIC.replace("    iodepth: 4", "    iodepth: 4\n    rwmixread: 70"), &[]).unwrap_err();
        assert!(err.to_string().contains("only applies to `rw: randrw` or `rw: rw`"));
    }

    #[test]
    fn set_values_of_text_keys_stay_text() {
        let s = load(BASIC, &["target=123"]).unwrap();
        assert_eq!(s.workloads[0].targets, vec![PathBuf::from("123")]);
    }

    #[test]
    fn blank_or_multi_line_targets_are_refused_where_written() {
        for (bad, shown) in [("''", "\"\""), ("' '", "\" \""), ("\"/tmp/a\\nb\"", "\"/tmp/a\\nb\"")] {
            let err = load(&BASIC.replace("target: /tmp", &format!("target: {bad}")), &[]).unwrap_err().to_string();
            assert!(err.starts_with(&format!("s.yaml:3: defaults.target: {shown} is not a path")), "{err}");
        }
        let list = BASIC.replace("    iodepth: 4", "    iodepth: 4\n    target: [/tmp, \"\\t\"]");
        let err = load(&list, &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:9: workloads.a.target: \"\\t\" is not a path"), "{err}");
        let err = load(&BASIC.replace("bs: 1m", "bs: 1m\n    file: \"x\\ny\""), &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:12: workloads.b.file: \"x\\ny\" must be a plain file name"), "{err}");
    }

    #[test]
    fn keep_belongs_to_an_appending_workload() {
        let err = load(&BASIC.replace("bs: 1m", "bs: 1m\n    keep: true"), &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:12: workloads.b.keep: keeps what an appending workload wrote"), "{err}");
        let s = load(&BASIC.replace("bs: 1m", "bs: 1m\n    extend: true\n    keep: true"), &[]).unwrap();
        assert!(s.workloads[1].extend && s.workloads[1].keep);
        let s = load(&BASIC.replace("bs: 1m", "bs: 1m\n    extend: true"), &[]).unwrap();
        assert!(!s.workloads[1].keep, "an appending workload starts from an empty file by default");
    }

    #[test]
    fn yaml_syntax_errors_are_located() {
        let err = load("name: x\nworkloads: [\n", &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:"), "{err}");
    }
}
