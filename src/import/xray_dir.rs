//! Nutanix X-Ray scenario directories as an importer (`fathom run DIR --hosts ...`):
//! rendered, placed and mapped by `crate::import::xray`.

use super::seam::{Given, Imported, Importer};
use crate::error::Result;
use crate::import::xray;
use std::path::Path;

pub struct XrayDir;

impl Importer for XrayDir {
    fn kind(&self) -> &'static str {
        "X-Ray scenario"
    }

    fn runs_as(&self) -> &'static str {
        "run as"
    }

    fn origin(&self) -> &'static str {
        " (X-Ray, as a scenario)"
    }

    fn recognises(&self, path: &Path) -> Result<bool> {
        Ok(xray::is_scenario_dir(path))
    }

    fn import(&self, path: &Path, given: &Given) -> Result<Imported> {
        let mapping = xray::map_dir(path, given.sets, given.hosts)?;
        Ok(Imported { yaml: mapping.yaml()?, described: mapping.describe(), name: mapping.name })
    }
}
