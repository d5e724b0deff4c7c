//! What a section's options mean as fio reads them, where both the mapping (fathom's
//! engine) and `--engine fio` (fio itself, labelled by fathom) need it: the `rw`, whether
//! the IO is O_DIRECT, which of fathom's back ends an `ioengine` is and whether it does
//! one IO at a time (an engine it has none for refused first); and the error for what
//! fathom's engine cannot honour.

use super::options::engine_refusal;
use super::reader::{Job, Opt};
use crate::error::{Error, Result};
use crate::scenario::model::Rw;

/// The error for an option fathom's engine cannot honour.
pub(super) fn refuse(o: &Opt, why: &str) -> Error {
    o.err(format!(
        "{why}; fathom's engine cannot run this file as written: fio can, under fathom (`fathom run {} --engine fio`)",
        o.at.file
    ))
}

/// The job's `rw` (fio's default: read) as fathom's; an error for what fathom cannot do.
pub(super) fn rw(job: &Job) -> Result<Rw> {
    Ok(match job.get("rw") {
        None => Rw::Read,
        Some(o) => match o.text()?.trim() {
            v if let Some(rw) = Rw::from_name(v) => rw,
            v if v.contains("trim") => return Err(refuse(o, "fathom does not trim")),
            v if v.contains(':') => return Err(refuse(o, "rw's `:N` sequence modifier is not in fathom's model")),
            v => return Err(o.err(format!("`{v}`: expected read, write, randread, randwrite, randrw or rw"))),
        },
    })
}

/// Whether fio does the job's IO with O_DIRECT: `direct=1`, or `buffered=0`.
pub(super) fn direct(job: &Job) -> Result<bool> {
    let direct = job.get("direct").map(Opt::flag).transpose()?;
    let buffered = job.get("buffered").map(Opt::flag).transpose()?;
    Ok(direct.unwrap_or(false) || buffered == Some(false))
}

/// fio's `ioengine` (`None`: fio's default, psync) as fathom's back end, and why it runs
/// one IO at a time when it does whatever `iodepth` says; `None` for an engine fathom has
/// no back end for.
pub(super) fn back_end(engine: Option<&str>, direct: bool) -> Option<(&'static str, Option<&'static str>)> {
    Some(match engine {
        None => ("psync", Some("fio's default engine psync issues one IO at a time")),
        Some("io_uring" | "posixaio") => ("io_uring", None),
        Some("libaio") if direct => ("io_uring", None),
        Some("libaio") => ("io_uring", Some("libaio without direct=1 is synchronous in fio")),
        Some("psync" | "sync" | "pvsync" | "pvsync2" | "mmap") => {
            ("psync", Some("fio's sync engines issue one IO at a time"))
        }
        Some("null") => ("null", None),
        Some(_) => return None,
    })
}

/// A job's `ioengine`, refused before its other options when fathom has no back end
/// for it: the options after it are that engine's own (rbd's `clientname`), and refusing
/// one of those would hide why the file cannot run.
pub fn engine_first(job: &Job) -> Result<()> {
    let Some(o) = job.get("ioengine") else { return Ok(()) };
    beyond(o)?;
    let engine = o.text()?.trim();
    match back_end(Some(engine), false) {
        Some(_) => Ok(()),
        None => Err(refuse(o, &engine_refusal(engine))),
    }
}

/// Options with which fio itself would act beyond the targets and the run's directory
/// (where fio runs): run a command, load code, change the system, or do IO on files
/// fathom was not given. `--engine fio` runs the user's file as written, so the file
/// is refused for them; why, for each.
const BEYOND: &[(&str, &str)] = &[
    ("exec_prerun", "runs a command before the job"),
    ("exec_postrun", "runs a command after the job"),
    ("program", "is fio's exec engine's command to run"),
    ("arguments", "is fio's exec engine's command to run"),
    ("std_redirect", "is fio's exec engine's, which runs a command"),
    ("cgroup", "creates and writes cgroups, outside the targets"),
    ("cgroup_weight", "creates and writes cgroups, outside the targets"),
    ("cgroup_nodelete", "leaves cgroups behind, outside the targets"),
    ("ioscheduler", "switches the device's IO scheduler in /sys, outside the targets"),
    ("read_iolog", "replays IO onto the files its log names, not the targets"),
    ("replay_redirect", "replays IO onto a device of its own, not the targets"),
    ("profile", "fio's built-in profiles make jobs on devices and directories of their own"),
    ("output", "is fio's command line's, which fathom gives"),
    ("aux-path", "is fio's command line's, which fathom gives"),
    ("trigger", "is fio's command line's (it runs a command), which fathom gives"),
    ("trigger-file", "is fio's command line's, which fathom gives"),
    ("trigger-remote", "is fio's command line's (it runs a command), which fathom gives"),
];

/// Options that name a file fio writes or reads: a bare name, which lands in the run's
/// directory, is allowed; one with a `/` could be anywhere, and is refused.
const NAMES_A_FILE: &[&str] = &[
    "write_iolog",
    "write_bw_log",
    "write_lat_log",
    "write_iops_log",
    "write_hist_log",
    "merge_blktrace_file",
    "filename_format",
    // `mmap:FILE`, `mmaphuge:FILE`, `mmapshared:FILE`: IO buffers backed by a file
    "mem",
    "iomem",
    "donorname",
    "conf",
];

/// The error, for an option fio would act on beyond the targets and the run's directory
/// with (see [`BEYOND`] and [`NAMES_A_FILE`]); fio runs nothing fathom was not given.
pub(super) fn beyond(o: &Opt) -> Result<()> {
    let value = o.value.as_deref().map(str::trim).unwrap_or_default();
    let why = match BEYOND.iter().find(|(name, _)| *name == o.name) {
        Some((_, why)) => why.to_string(),
        None if NAMES_A_FILE.contains(&o.name.as_str()) && value.contains('/') => {
            format!("`{value}` names a file outside the run's directory; give a bare name, which fio writes there")
        }
        None if o.name == "ioengine" && (value.starts_with("external") || value.contains('/')) => {
            format!("`{value}` loads an engine from a file: code fathom was not given")
        }
        None if o.name == "ioengine" && value == "exec" => "fio's exec engine runs a command".into(),
        None => return Ok(()),
    };
    Err(o.err(format!("{why}: with --engine fio, fio acts only on the targets and in the run's directory")))
}
