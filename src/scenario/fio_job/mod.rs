//! fio job files run on fathom's engine: `fathom run job.fio`. A job file is read as
//! fio reads it ([`reader`]), mapped option by option to a scenario ([`mapping`]: one
//! workload per job, the timeline from `stonewall`), and the scenario's YAML is loaded
//! by the one scenario loader, so `--set`, the checks, the store and the report are the
//! same as for any scenario. docs/fio-job-files.md has the table of options.

pub mod mapping;
mod options;
pub mod reader;
mod timeline;
mod values;

pub use mapping::{Mapping, to_scenario_yaml};
pub use reader::is_job_file;

use crate::error::Result;
use std::path::Path;

/// The mapping of the job file at `path`, whose text is `text`.
pub fn map_file(path: &Path, text: &str) -> Result<Mapping> {
    mapping::map(&reader::read(path, text)?)
}
