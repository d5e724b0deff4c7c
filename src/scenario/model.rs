//! The scenario model: what a loaded, checked scenario is made of (workloads with every
//! setting decided, the timeline, expectations), the types the rest of fathom reads.
//! How text becomes these is in [`super::file`] (as written) and [`super::check`].

use super::expect;
use super::fio_section::{FioJob, IoLabels};
use super::pattern::{BlockSizes, Content, DataSpec, Distribution};
pub use super::program::Measures;
use super::program::ProgramSpec;
use super::steps;
use super::units;
use crate::metrics::Op;
use crate::metrics::headline::Headline;
use crate::metrics::summary::Throughput;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

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
    /// The name a scenario and fio both write it by (`randread`, `rw`): what a fio job
    /// file the fio driver writes says, and what a mapped job file's scenario says.
    pub fn name(self) -> &'static str {
        match self {
            Rw::Read => "read",
            Rw::Write => "write",
            Rw::Randread => "randread",
            Rw::Randwrite => "randwrite",
            Rw::Randrw => "randrw",
            Rw::ReadWrite => "rw",
        }
    }

    /// The `Rw` named `name` (as [`Rw::name`] writes it, or fio's `readwrite`).
    pub fn from_name(name: &str) -> Option<Rw> {
        Some(match name {
            "read" => Rw::Read,
            "write" => Rw::Write,
            "randread" => Rw::Randread,
            "randwrite" => Rw::Randwrite,
            "randrw" => Rw::Randrw,
            "rw" | "readwrite" => Rw::ReadWrite,
            _ => return None,
        })
    }

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
}

impl EngineKind {
    /// Every IO engine, as `engine:` names them.
    pub const ALL: [EngineKind; 4] = [EngineKind::IoUring, EngineKind::Psync, EngineKind::Null, EngineKind::Fio];

    /// The engine `engine:` names `name`, if it is an IO engine.
    pub fn named(name: &str) -> Option<EngineKind> {
        Self::ALL.into_iter().find(|e| e.to_string() == name)
    }
}

impl std::fmt::Display for EngineKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            EngineKind::IoUring => "io_uring",
            EngineKind::Psync => "psync",
            EngineKind::Null => "null",
            EngineKind::Fio => "fio",
        })
    }
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

impl Queue {
    /// How `targets` targets share the queue, as a start line and `lint --hosts` say it
    /// after the targets (nothing for one target).
    pub fn describe(self, targets: usize) -> &'static str {
        match (targets, self) {
            (0 | 1, _) => "",
            (_, Queue::Shared) => ", one queue across",
            (_, Queue::PerTarget) => ", a queue per target",
        }
    }
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

/// Queries against another Prometheus, evaluated every `interval` while the run goes
/// (see `observe::promql`).
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteQueries {
    /// `http://host:port` or `https://...`, without the API path.
    pub url: String,
    /// Its credentials and the authorities trusted for its certificate.
    pub auth: crate::http::Auth,
    /// (name, PromQL) in the order written.
    pub queries: Vec<(String, String)>,
    pub interval: Duration,
}

/// A workload with every setting decided: what every workload has (name, workers,
/// timing, where it runs), and what it runs ([`Kind`]), so code that only serves IO
/// workloads takes an [`IoProfile`] and a program's workload carries no unused IO keys.
#[derive(Debug, Clone)]
pub struct Workload {
    pub name: String,
    /// Workers: fathom's or fio's `jobs`, pgbench's `clients`, iperf3's `streams`.
    pub workers: u32,
    /// The worker group (top-level `groups`) whose count gave `workers`, if any.
    pub group: Option<String>,
    /// The IO back end that runs it (fathom's engine's, or fio); `None` for a program's
    /// workload, which its program runs.
    pub engine: Option<EngineKind>,
    pub duration: Duration,
    pub ramp: Duration,
    /// The hosts this workload's workers run on, if not here (many-host runs).
    pub placement: Option<Placement>,
    pub kind: Kind,
}

/// What a workload runs: an IO profile (run by fathom's engine or by fio, as `engine`
/// says), a section of the user's fio job file run by fio as written, or a program's
/// spec (`driver:`).
#[derive(Debug, Clone)]
pub enum Kind {
    Io(IoProfile),
    FioSection(FioJob),
    Program(ProgramSpec),
}

impl Workload {
    /// A workload that ends by itself (bounded by bytes or IOs) and has no duration to
    /// cap it: when it ends is not known in advance.
    pub fn open_ended(&self) -> bool {
        self.bound().is_some_and(|b| !b.capped)
    }

    /// How much IO it does before it ends by itself, if it does: its profile's bound, a
    /// fio job section's run by fio itself (`--engine fio` on a job file), or a program's
    /// set amount of work (capped by its duration).
    pub fn bound(&self) -> Option<Bound> {
        match &self.kind {
            Kind::Io(io) => io.bound,
            Kind::FioSection(j) if j.ends_by_itself => {
                Some(Bound { io_size: None, passes: None, number_ios: None, capped: j.capped })
            }
            Kind::Program(p) if p.ends_after().is_some() => {
                Some(Bound { io_size: None, passes: None, number_ios: None, capped: true })
            }
            Kind::FioSection(_) | Kind::Program(_) => None,
        }
    }

    /// The IO profile, for code that serves both kinds; `None` for a program's workload.
    pub fn io(&self) -> Option<&IoProfile> {
        match &self.kind {
            Kind::Io(io) => Some(io),
            Kind::FioSection(_) | Kind::Program(_) => None,
        }
    }

    /// The IO profile to adjust (`--set` targets on an agent, a sweep's iodepth).
    pub fn io_mut(&mut self) -> Option<&mut IoProfile> {
        match &mut self.kind {
            Kind::Io(io) => Some(io),
            Kind::FioSection(_) | Kind::Program(_) => None,
        }
    }

    /// The program that runs this workload instead of an IO engine, if any.
    pub fn program(&self) -> Option<&ProgramSpec> {
        match &self.kind {
            Kind::Program(p) => Some(p),
            Kind::Io(_) | Kind::FioSection(_) => None,
        }
    }

    /// The section of the user's fio job file this workload runs as written, if it does.
    pub fn fio_section(&self) -> Option<&FioJob> {
        match &self.kind {
            Kind::FioSection(j) => Some(j),
            Kind::Io(_) | Kind::Program(_) => None,
        }
    }

    /// The files and directories a program or a fio section does its IO on, so the run
    /// records their file systems and observes their devices as it does for an IO
    /// profile's targets.
    pub fn outside_targets(&self) -> &[PathBuf] {
        match &self.kind {
            Kind::FioSection(j) => &j.targets,
            Kind::Io(_) | Kind::Program(_) => &[],
        }
    }

    /// What runs it, by name: its IO back end, or its program.
    pub fn runner(&self) -> String {
        match (&self.kind, self.engine) {
            (Kind::Program(p), _) => p.runner().to_string(),
            (_, Some(engine)) => engine.to_string(),
            (_, None) => String::new(),
        }
    }

    /// The rate asked for, in the workload's own operations per second: IOs, or
    /// pgbench's transactions.
    pub fn rate(&self) -> Option<f64> {
        match &self.kind {
            Kind::Io(io) => io.rate_iops,
            Kind::FioSection(_) => None,
            Kind::Program(p) => p.rate(),
        }
    }

    /// What its samples will hold, so that an expectation asks only for figures the run
    /// will measure, in the unit it measures them in.
    pub fn measures(&self) -> Measures {
        let io = |read_percent: Option<u32>, sync: bool| {
            let mut ops = Vec::new();
            if read_percent.is_none_or(|r| r > 0) {
                ops.push(Op::Read);
            }
            if read_percent.is_none_or(|r| r < 100) {
                ops.push(Op::Write);
            }
            if sync {
                ops.push(Op::Sync);
            }
            Measures { unit: Throughput::Iops, ops, latency: true, mb_per_s: true, rate: self.rate().is_some() }
        };
        match &self.kind {
            Kind::Io(p) => io(Some(p.rw.read_percent(p.rwmixread)), p.fsync_every > 0),
            // fio's own section: a trim or an rw fathom has no name for may do either
            Kind::FioSection(j) => io(j.labels.rw.and_then(Rw::from_name).map(|rw| rw.read_percent(50)), true),
            Kind::Program(p) => p.measures(),
        }
    }
}

impl Workload {
    /// The figure it is read by first: its program's, else its IOs' rate.
    pub fn headline(&self) -> Headline {
        match &self.kind {
            Kind::Program(p) => p.headline(),
            // a bounded pass over every block once is read by the time it took
            Kind::Io(io) if io.randommap && io.bound.is_some() => Headline::pass(Throughput::Iops),
            Kind::Io(_) | Kind::FioSection(_) => Headline::rate(Throughput::Iops),
        }
    }
}

/// The stored profile (`serde_json::to_value` when a run starts, read back by
/// `store::read`) keeps one shape for both kinds, the one runs have always stored: a
/// program's workload stores the IO keys at the values [`IoProfile::stored_for`] gives.
impl Serialize for Workload {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Stored<'a> {
            name: &'a str,
            jobs: u32,
            group: &'a Option<String>,
            engine: String,
            #[serde(serialize_with = "units::serialize_duration")]
            duration: Duration,
            #[serde(serialize_with = "units::serialize_duration")]
            ramp: Duration,
            #[serde(skip_serializing_if = "Option::is_none")]
            placement: &'a Option<Placement>,
            /// What the read side quotes first, as its program declares it.
            headline: Headline,
            #[serde(flatten)]
            io: std::borrow::Cow<'a, IoProfile>,
            /// What the program or fio section that runs it stores of its own.
            #[serde(flatten, skip_serializing_if = "Option::is_none")]
            runner_keys: Option<serde_json::Value>,
        }
        let (io, runner_keys) = match &self.kind {
            Kind::Io(io) => (std::borrow::Cow::Borrowed(io), None),
            Kind::FioSection(j) => {
                let io = IoProfile::stored_for(&self.name, Some(&j.labels), &j.targets, None);
                (std::borrow::Cow::Owned(io), Some(serde_json::json!({"driver": "fio", "section": j.section})))
            }
            Kind::Program(p) => {
                (std::borrow::Cow::Owned(IoProfile::stored_for(&self.name, None, &[], p.rate())), Some(p.stored()))
            }
        };
        Stored {
            name: &self.name,
            jobs: self.workers,
            group: &self.group,
            engine: self.runner(),
            duration: self.duration,
            ramp: self.ramp,
            placement: &self.placement,
            headline: self.headline(),
            io,
            runner_keys,
        }
        .serialize(s)
    }
}

/// How an IO workload does its IO, for fathom's engine or fio.
#[derive(Debug, Clone, Serialize)]
pub struct IoProfile {
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
    /// Random offsets without replacement (fio's random map): each pass over the
    /// working set touches every block once, in a random order.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub randommap: bool,
    /// Where the working set starts in the file or device.
    pub offset: u64,
    pub iodepth: u32,
    /// Working set in bytes; `None` means "the whole existing file or device".
    pub size: Option<u64>,
    /// The working set as a share of the target as it is (fio's `size=N%`): only the
    /// target knows its size, so it becomes `size` when the target is laid out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_percent: Option<u32>,
    pub direct: bool,
    /// IOs per second when open loop (from `rate_iops`, or `rate_mbps` over the mean
    /// block size).
    pub rate_iops: Option<f64>,
    /// The byte rate asked for, when the rate was given as `rate_mbps`.
    pub rate_mbps: Option<f64>,
    /// IOs per second on each host (`rate_iops_per_host`), for a workload on hosts:
    /// `rate_iops` is this times its hosts once they are known (placing it on them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_iops_per_host: Option<f64>,
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
    /// fio's strided zones: where in the working set the IOs go, zone after zone.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub zones: Option<Zones>,
    /// Ends the workload by itself after so many bytes or IOs per worker (`io_size`,
    /// `loops`, `number_ios`), as fio's jobs end without `time_based`; `None`: it runs
    /// its duration.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub bound: Option<Bound>,
}

/// fio's strided zones (`zonemode=strided`): each worker does `zonesize` bytes of IO
/// inside a zone of `zonerange` bytes, then moves `zonerange + zoneskip` bytes on to
/// the next zone, and back to the first once a zone would start past the working set.
/// Random IOs land anywhere in the current zone; sequential ones run through it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Zones {
    #[serde(rename = "zonesize")]
    pub size: u64,
    #[serde(rename = "zonerange")]
    pub range: u64,
    #[serde(rename = "zoneskip")]
    pub skip: u64,
}

/// How much IO a bounded workload does, per worker (each of `jobs` does its own, as
/// each of fio's `numjobs` does): `loops` passes of `io_size` bytes (of the working set,
/// without `io_size`), or `number_ios` IOs, whichever comes first. The workload ends
/// when its workers have done theirs, or at its duration if one is given (a cap).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Bound {
    /// Bytes of one pass; `None`: the working set (`size`, or the whole file or
    /// device), known once the target is laid out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io_size: Option<u64>,
    /// Passes; 1 unless `loops` is given. Only bytes count when `number_ios` is given
    /// alone (`passes` is `None` then).
    #[serde(rename = "loops", skip_serializing_if = "Option::is_none")]
    pub passes: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub number_ios: Option<u64>,
    /// A duration was given: it caps the workload, which otherwise has no planned end.
    #[serde(skip)]
    pub capped: bool,
}

/// `until 8 MiB per worker`, `until 1000 IOs per worker`, as the start line says it.
impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let bytes = match (self.io_size, self.passes) {
            (_, None) => None,
            (Some(b), Some(1)) => Some(units::Size(b).human()),
            (Some(b), Some(n)) => Some(format!("{n} x {}", units::Size(b).human())),
            (None, Some(1)) => Some("one pass".to_string()),
            (None, Some(n)) => Some(format!("{n} passes")),
        };
        let ios = self.number_ios.map(|n| format!("{n} IOs"));
        let both: Vec<String> = bytes.into_iter().chain(ios).collect();
        write!(f, "until {} per worker", both.join(" or "))
    }
}

impl Bound {
    /// The bytes one worker moves before it stops, given its working set of `pass`
    /// bytes; `None` when only `number_ios` bounds it.
    pub fn bytes(&self, pass: u64) -> Option<u64> {
        self.passes.map(|n| self.io_size.unwrap_or(pass).saturating_mul(n as u64))
    }
}

impl IoProfile {
    /// The IO keys a program's workload stores with its profile: the defaults they had
    /// when every workload carried them, with the program's rate as `rate_iops` (as the
    /// store's readers and older runs expect). Used for storing only.
    fn stored_for(name: &str, labels: Option<&IoLabels>, targets: &[PathBuf], rate: Option<f64>) -> IoProfile {
        IoProfile {
            targets: targets.to_vec(),
            queue: Queue::Shared,
            file: name.to_string(),
            rw: labels.and_then(|l| l.rw).and_then(Rw::from_name).unwrap_or(Rw::Read),
            rwmixread: 100,
            // (fio's default where the labels cannot say)
            bs: labels.and_then(|l| l.bs.clone()).unwrap_or_else(|| BlockSizes::single(4096)),
            random_percent: 100,
            distribution: Distribution::Uniform,
            randommap: false,
            offset: 0,
            iodepth: labels.map_or(1, |l| l.iodepth),
            size: None,
            size_percent: None,
            direct: labels.is_some_and(|l| l.direct),
            rate_iops: rate,
            rate_mbps: None,
            rate_iops_per_host: None,
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
            zones: None,
            bound: None,
        }
    }
}

/// Where a workload's workers run: `per_host` on each host `hosts` selects in the
/// inventory. Resolved when the run starts (the inventory is not part of the scenario):
/// `resolved` then lists the hosts, and the workload's `jobs` is
/// [`Placement::workers_per_host`] times them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Placement {
    pub hosts: Vec<String>,
    pub per_host: u32,
    /// Which of each host's inventory targets it uses, by position (`host_targets`);
    /// `None`: every one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_targets: Option<Vec<usize>>,
    /// Where `host_targets` was written, for the errors only the inventory shows.
    #[serde(skip)]
    pub host_targets_at: String,
    /// How many times `per_host` workers run on each host: with `queue: per_target`, once
    /// per host target used (each its own queue, as `jobs` per target runs here); else 1.
    /// Set when the hosts are resolved.
    #[serde(skip_serializing_if = "one")]
    pub queues: u32,
    pub resolved: Vec<String>,
    /// Where `hosts` was written (`FILE:LINE: workloads.w.hosts`, or its `--set`), for
    /// the errors only the inventory shows.
    #[serde(skip)]
    pub at: String,
    /// Placed by `--hosts` on every host (the workload says no `hosts:`, and its `jobs`
    /// are `per_host`), not by the scenario: the run says so as it starts.
    #[serde(skip)]
    pub implied: bool,
}

fn one(n: &u32) -> bool {
    *n == 1
}

impl Placement {
    /// Workers on each host: `per_host`, on each of its targets with `queue: per_target`.
    pub fn workers_per_host(&self) -> u32 {
        self.per_host * self.queues.max(1)
    }

    /// The host of worker `index` (workers fill hosts in order, [`Self::workers_per_host`]
    /// each; with `queue: per_target`, a host's first target's `per_host` first).
    pub fn host_of(&self, index: u32) -> &str {
        let i = (index / self.workers_per_host().max(1)) as usize;
        self.resolved.get(i).or(self.resolved.last()).map(String::as_str).unwrap_or("localhost")
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
    /// `results:`: named per-second views; their bands are judged with `expect`.
    pub result_views: Vec<super::results::ResultView>,
    /// `observe: prometheus:`, if given.
    pub remote: Option<RemoteQueries>,
    /// `prometheus: ADDR`: where to serve live metrics, if given.
    pub prometheus: Option<String>,
    /// The variables after `--set`, as substituted.
    pub vars: IndexMap<String, String>,
    /// The text as read after its variables and `--set`s: what the run's read side
    /// (its question, result views and bands, description) reads back, so `show` and
    /// `report` say what the run was judged by, not the file's defaults.
    pub resolved: String,
    /// Workloads the file keeps apart that its `--set`s made identical but for their
    /// names (a sweep's steps, all at one size): what lint warns the phases no longer
    /// compare.
    pub flattened: Vec<String>,
    /// `--time-scale`, when given: its durations are already scaled.
    pub time_scale: Option<TimeScale>,
    /// What kind of file it was imported from (`X-Ray scenario`, `fio job file`), whose
    /// depths and rates are that file's definition of the study, not fathom's choice.
    pub imported: Option<&'static str>,
}

/// The `--time-scale` a scenario was loaded with (see [`super::time_scale`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TimeScale {
    /// Every duration of the timeline was multiplied by it.
    pub factor: f64,
    /// Durations raised to their key's least (`workloads.b.duration 4s: 0.4 s, raised to 1s`).
    pub raised: Vec<String>,
}

/// Where a scenario came from, for error messages.
pub struct Source<'a> {
    /// Shown in errors: a path, or `builtin:NAME`.
    pub origin: String,
    pub text: &'a str,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const BOTH: &str = "\
name: pin
workloads:
  a: {target: /tmp/x, rw: randrw, bs: 4k, iodepth: 2, size: 8m, duration: 1s, engine: psync, rate_iops: 100}
  db: {driver: pgbench, scale: 1, clients: 2, rate: 50, duration: 1s, script: select-only}
";

    /// The profile a run stores (`serde_json::to_value`, read back by `store::read` and
    /// `show --json`) keeps the keys and values it had before a workload was a sum type,
    /// for both kinds: a program's workload still stores the IO keys at their defaults.
    /// Each also stores its headline, as its program declares it.
    #[test]
    fn the_stored_profile_keeps_its_keys_for_both_kinds() {
        let s = Scenario::load(&Source { origin: "t".into(), text: BOTH }, &[]).unwrap();
        let mut io = serde_json::to_value(&s.workloads[0]).unwrap();
        let rate = |unit: &str| json!({"figure": {"label": unit, "from": {"kind": "rate"}, "better": "higher"}});
        assert_eq!(io.as_object_mut().unwrap().remove("headline"), Some(rate("IOPS")));
        let expected_io = json!({"arrival": "uniform", "bs": "4k", "direct": true, "distribution": "uniform",
            "duration": "1s", "engine": "psync", "extend": false, "fdatasync": false, "file": "a",
            "fsync_every": 0, "group": null, "iodepth": 2, "jobs": 1, "keep": false, "name": "a", "offset": 0,
            "prefill": false, "queue": "shared", "ramp": "0s", "random_percent": 100, "rate_iops": 100.0,
            "rate_mbps": null, "rw": "randrw", "rwmixread": 50, "size": 8388608, "targets": ["/tmp/x"],
            "think_time": "0s"});
        assert_eq!(io, expected_io);
        let mut db = serde_json::to_value(&s.workloads[1]).unwrap();
        assert_eq!(db.as_object_mut().unwrap().remove("headline"), Some(rate("TPS")));
        let expected_db = json!({"arrival": "uniform", "bs": "4k", "clients": 2, "direct": false,
            "distribution": "uniform", "driver": "pgbench", "dsn": null, "duration": "1s", "engine": "pgbench",
            "extend": false, "fdatasync": false, "file": "db", "fsync_every": 0, "group": null, "iodepth": 1,
            "jobs": 2, "keep": false, "name": "db", "offset": 0, "prefill": false, "queue": "shared", "ramp": "0s",
            "random_percent": 100, "rate": 50.0, "rate_iops": 50.0, "rate_mbps": null, "reuse": false,
            "rw": "read", "rwmixread": 100, "scale": 1, "script": {"builtin": "select-only"}, "settings": [],
            "size": null, "target": null, "targets": [], "think_time": "0s", "threads": 1});
        assert_eq!(db, expected_db);
    }

    /// Zones are stored with the profile under fio's three names, `zonerange` defaulting
    /// to `zonesize`; a zone that holds no block, and zones in an appending file, are
    /// refused at their key.
    #[test]
    fn zones_are_stored_under_fios_names_and_checked() {
        let load = |keys: &str| {
            let text = format!("name: z\nworkloads:\n  a: {{target: /tmp/x, bs: 64k, duration: 1s, {keys}}}\n");
            Scenario::load(&Source { origin: "t".into(), text: &text }, &[])
        };
        let s = load("size: 8m, rw: read, zonesize: 1m, zoneskip: 3m").unwrap();
        let io = serde_json::to_value(&s.workloads[0]).unwrap();
        let zones = [&io["zonesize"], &io["zonerange"], &io["zoneskip"]];
        assert_eq!(zones, [&json!(1 << 20), &json!(1 << 20), &json!(3 << 20)]);
        let refused = [
            ("size: 8m, rw: read, zonesize: 1m, zonerange: 32k", "zonerange: a zone of 32k is less than one block"),
            ("size: 8m, rw: read, zonesize: 0", "zonesize: must be at least one byte"),
            ("rw: write, extend: true, zonesize: 1m", "zonesize: an appending workload has no working set"),
            ("size: 8m, rw: read, zonerange: 1m", "zonerange: is the length of a zone: set `zonesize` too"),
        ];
        for (keys, why) in refused {
            let err = load(keys).unwrap_err().to_string();
            assert!(err.contains(&format!("workloads.a.{why}")), "{keys}: {err}");
        }
    }

    /// `randommap` is stored only when on, and refused at its key where a pass could not
    /// touch every block once; a bounded pass is read by its time.
    #[test]
    fn randommap_is_stored_when_on_and_refused_where_a_pass_cannot_touch_every_block() {
        let load = |keys: &str| {
            let text = format!("name: m\nworkloads:\n  a: {{target: /tmp/x, size: 8m, {keys}}}\n");
            Scenario::load(&Source { origin: "t".into(), text: &text }, &[])
        };
        let s = load("rw: randread, bs: 4k, randommap: true, loops: 1").unwrap();
        assert_eq!(serde_json::to_value(&s.workloads[0]).unwrap()["randommap"], json!(true));
        assert_eq!(s.workloads[0].headline().figure.label, "every block once");
        let s = load("rw: randread, randommap: false, duration: 1s").unwrap();
        assert!(serde_json::to_value(&s.workloads[0]).unwrap().get("randommap").is_none());
        let refused = [
            ("rw: read, randommap: true, duration: 1s", "randommap: only applies to random `rw`"),
            ("rw: randread, random_percent: 50, randommap: true, duration: 1s", "leave out `random_percent`"),
            ("rw: randread, distribution: zipf:1.2, randommap: true, duration: 1s", "leave out `distribution: zipf"),
            ("rw: randread, bssplit: 4k/50:8k/50, randommap: true, duration: 1s", "give one `bs`"),
            ("rw: randread, zonesize: 1m, randommap: true, duration: 1s", "leave out `zonesize`"),
        ];
        for (keys, why) in refused {
            let err = load(keys).unwrap_err().to_string();
            assert!(err.contains("workloads.a.randommap: ") && err.contains(why), "{keys}: {err}");
        }
    }

    /// A bounded workload stores its bound as written, and whether a duration caps it
    /// decides whether its end is known.
    #[test]
    fn a_bounded_workload_stores_its_bound() {
        let text = "name: b\ndefaults: {target: /tmp/x, size: 8m, rw: read}\nworkloads:\n  \
                    pass: {loops: 1}\n  capped: {io_size: 1m, number_ios: 10, duration: 5s}\n";
        let s = Scenario::load(&Source { origin: "t".into(), text }, &[]).unwrap();
        let (pass, capped) = (&s.workloads[0], &s.workloads[1]);
        assert!(pass.open_ended() && !capped.open_ended());
        let stored = serde_json::to_value(pass).unwrap();
        assert_eq!((stored["loops"].clone(), stored.get("io_size")), (json!(1), None));
        assert_eq!(stored["duration"], json!("720h"));
        let stored = serde_json::to_value(capped).unwrap();
        assert_eq!(
            (&stored["io_size"], &stored["loops"], &stored["number_ios"]),
            (&json!(1 << 20), &json!(1), &json!(10))
        );
        assert_eq!(capped.io().unwrap().bound.unwrap().to_string(), "until 1 MiB or 10 IOs per worker");
        assert_eq!(pass.io().unwrap().bound.unwrap().to_string(), "until one pass per worker");
        // a timeline `start` with a duration, or `--set duration`, caps it as well
        let stepped = format!("{text}timeline:\n  - start: pass\n    duration: 3s\n  - start: capped\n");
        let s = Scenario::load(&Source { origin: "t".into(), text: &stepped }, &[]).unwrap();
        assert!(!s.workloads[0].open_ended() && s.workloads[0].duration == Duration::from_secs(3));
        let set: [super::super::Override; 1] = ["duration=4s".parse().unwrap()];
        let s = Scenario::load(&Source { origin: "t".into(), text }, &set).unwrap();
        assert!(!s.workloads[0].open_ended() && s.workloads[0].duration == Duration::from_secs(4));
    }
}
