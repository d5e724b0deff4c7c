//! Warnings a run raises about how it measured. One enum, one actionable message per
//! case (after hyperfine's `warnings.rs`): what happened, why it matters for the
//! numbers, and what to change.

use std::path::PathBuf;

#[derive(Debug, Clone)]
pub enum Warning {
    /// io_uring could not be set up; workers use psync.
    IoUringUnavailable { reason: String },
    /// The filesystem refused O_DIRECT; IO goes through the page cache.
    DirectUnsupported { path: PathBuf },
    /// The target lives in memory (tmpfs, ramfs): the run measures memory, not storage.
    MemoryBackedTarget { path: PathBuf, fstype: String },
    /// Too little free space for the requested working set; a smaller one was used.
    WorkingSetShrunk { path: PathBuf, wanted: u64, used: u64 },
    /// An appending workload filled its filesystem and stopped early.
    TargetFull { workload: String, path: PathBuf, at_s: f64 },
    /// A workload run by fio (`engine: fio`) uses a knob fio runs differently.
    FioInexact { workload: String, knob: &'static str, why: String },
    /// `--time-scale` made durations shorter than their keys take; they were raised.
    TimeScaleRaised { factor: f64, raised: Vec<String> },
    /// A host of the run stopped answering `after_s` into it; the others ran on.
    HostLost { host: String, after_s: f64 },
    /// A run a fathom that is gone left `running` was cleaned up: what it left.
    LeftBehind { what: String },
    /// An open-loop workload ended with IOs its rate had due and never sent.
    RateNotKept { workload: String, unsent: u64, rate_iops: f64 },
}

impl Warning {
    /// A stable identifier, stored with the run and usable in scripts.
    pub fn code(&self) -> &'static str {
        match self {
            Warning::IoUringUnavailable { .. } => "io-uring-unavailable",
            Warning::DirectUnsupported { .. } => "direct-unsupported",
            Warning::MemoryBackedTarget { .. } => "memory-backed-target",
            Warning::WorkingSetShrunk { .. } => "working-set-shrunk",
            Warning::TargetFull { .. } => "target-full",
            Warning::FioInexact { .. } => "fio-inexact",
            Warning::TimeScaleRaised { .. } => "time-scale-raised",
            Warning::HostLost { .. } => "host-lost",
            Warning::LeftBehind { .. } => "left-behind",
            Warning::RateNotKept { .. } => "rate-not-kept",
        }
    }

    pub fn message(&self) -> String {
        use crate::scenario::units::Size;
        match self {
            Warning::IoUringUnavailable { reason } => format!(
                "io_uring is unavailable ({reason}); using psync with one thread per outstanding IO. \
                 CPU per IO is higher; set `engine: psync` to silence this"
            ),
            Warning::DirectUnsupported { path } => format!(
                "{} does not support O_DIRECT: IO is buffered, so results include the page cache. \
                 Use a target on a disk filesystem, or set `direct: false` to say you mean it",
                path.display()
            ),
            Warning::MemoryBackedTarget { path, fstype } => {
                format!("{} is on {fstype}: this measures memory, not storage", path.display())
            }
            Warning::WorkingSetShrunk { path, wanted, used } => format!(
                "not enough free space for a {} working set at {}: using {} instead. \
                 A working set that fits in a cache measures the cache; free space or pass --target",
                Size(*wanted).human(),
                path.display(),
                Size(*used).human()
            ),
            Warning::TargetFull { workload, path, at_s } => format!(
                "{workload} filled the filesystem of {} and stopped at {at_s:.1} s of the run: its results \
                 cover less than the planned duration. Free space, or lower the rate or duration",
                path.display()
            ),
            Warning::FioInexact { workload, knob, why } => format!(
                "{workload} runs on fio, which cannot do `{knob}` as asked: {why}. \
                 Use fathom's own engine for this knob, or read these figures with that in mind"
            ),
            Warning::TimeScaleRaised { factor, raised } => format!(
                "--time-scale {factor} made durations shorter than their keys take, so they were raised: {}. \
                 The run's phases are not in the scenario's proportions; use a larger scale to keep them",
                raised.join(", ")
            ),
            Warning::HostLost { host, after_s } => format!(
                "host {host} was lost {after_s:.1} s into the run: its samples up to then are kept, the other hosts ran on"
            ),
            Warning::LeftBehind { what } => what.clone(),
            Warning::RateNotKept { workload, unsent, rate_iops } => format!(
                "{workload} did not keep its rate: {} IOs that rate_iops {} had due were never sent, as its \
                 workers' slots were all busy or their threads kept off the CPU. Its IOPS is short of the rate \
                 by them; raise iodepth or jobs, or lower the rate",
                crate::metrics::format::count(*unsent as f64),
                crate::metrics::format::count(*rate_iops)
            ),
        }
    }

    /// Says it to the person at the terminal (above the live view while it is drawn):
    /// the one way a warning is shown, wherever it is raised.
    pub fn say(&self) {
        crate::terminal::say(&format!("warning: {}", self.message()));
    }
}
