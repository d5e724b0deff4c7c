//! fio job files as an importer (`fathom run job.fio`): read and mapped option by option
//! by `crate::import::fio_job`, one workload per job.

use super::seam::{Given, Imported, Importer, read_text};
use crate::error::Result;
use crate::import::fio_job;
use std::path::Path;

pub struct FioJobFile;

impl Importer for FioJobFile {
    fn kind(&self) -> &'static str {
        "fio job file"
    }

    fn runs_as(&self) -> &'static str {
        "run on fathom's engine as"
    }

    fn origin(&self) -> &'static str {
        " (as a scenario)"
    }

    fn takes_several_targets(&self) -> bool {
        true
    }

    fn recognises(&self, path: &Path) -> Result<bool> {
        Ok(path.is_file() && fio_job::is_job_file(path, &read_text(path)?))
    }

    fn import(&self, path: &Path, given: &Given) -> Result<Imported> {
        let text = read_text(path)?;
        let mut mapping = fio_job::map_file(path, &text, given.targets)?;
        if let ([one], true) = (given.targets, given.target_in_text) {
            mapping.all_on(one);
        }
        let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "job".into());
        Ok(Imported { yaml: mapping.yaml(&name), described: mapping.describe(), name })
    }
}
