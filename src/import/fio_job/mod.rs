//! fio job files run on fathom's engine: `fathom run job.fio`. A job file is read as
//! fio reads it ([`reader`]), mapped option by option to a scenario ([`mapping`]: one
//! workload per job, the timeline from `stonewall`), and the scenario's YAML is loaded
//! by the one scenario loader, so `--set`, the checks, the store and the report are the
//! same as for any scenario. With `--engine fio` the sections run by fio as written
//! instead ([`verbatim`]); what both read an option as is in [`semantics`].
//! docs/fio-job-files.md has the table of options.

mod job_order;
pub mod mapping;
mod options;
pub mod reader;
mod semantics;
mod simple;
mod sizes;
mod targets;
mod think;
pub(in crate::import) mod values;
pub mod verbatim;

pub use mapping::Mapping;
pub use reader::is_job_file;

use crate::error::Result;
use std::path::{Path, PathBuf};

/// The mapping of the job file at `path`, whose text is `text`, on the `--target`s given
/// (several replace its own targets in order; see [`targets::retarget`]).
pub fn map_file(path: &Path, text: &str, given: &[PathBuf]) -> Result<Mapping> {
    let jobs = reader::read(path, text)?;
    jobs.iter().try_for_each(semantics::engine_first)?;
    let mut mapping = mapping::map(&jobs)?;
    targets::retarget(&mut mapping, &path.display().to_string(), given)?;
    Ok(mapping)
}
