//! What a section's options mean as fio reads them, where both the mapping (fathom's
//! engine) and `--engine fio` (fio itself, labelled by fathom) need it: the `rw`, whether
//! the IO is O_DIRECT, which of fathom's back ends an `ioengine` is and whether it does
//! one IO at a time; and the error for what fathom's engine cannot honour.

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
