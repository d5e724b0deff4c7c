//! A section of a user's fio job file run by fio as written (`--engine fio` on a job
//! file): what `import::fio_job::verbatim` builds and the fio driver runs.

use crate::scenario::pattern::BlockSizes;
use serde::Serialize;
use std::path::PathBuf;

/// One section of a user's fio job file, as fio will run it: the section with every
/// option it has (its `[global]` ones included) and only its targets and the run's
/// `--set`s rewritten, so fio's own semantics of options fathom cannot map still hold.
/// Built by `import::fio_job::verbatim`, run by the fio driver.
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
