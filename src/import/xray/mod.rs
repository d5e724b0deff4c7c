//! Nutanix X-Ray scenarios run as they are: `fathom run DIR --hosts hosts.yaml`, where
//! DIR holds X-Ray's `test.yml` and its `.fio` files. `test.yml` is rendered as Jinja
//! with its vars ([`render`]), read as written ([`written`]), its VM groups placed on the
//! inventory ([`placement`]), its steps made the timeline ([`timeline_steps`]) and the whole
//! mapped to scenario YAML ([`to_scenario`]), which the one scenario loader loads: `--set`,
//! the checks, the store and the report are the same as for any scenario.
//! docs/xray.md has the table of steps and keys.

pub mod placement;
pub mod render;
pub mod result_charts;
pub mod timeline_steps;
pub mod to_scenario;
pub mod written;

pub use to_scenario::Mapping;

use crate::error::{Error, Result};
use crate::scenario::Override;
use crate::scenario::yaml;
use std::path::Path;

/// Whether `path` is an X-Ray scenario: a directory holding `test.yml`.
pub fn is_scenario_dir(path: &Path) -> bool {
    path.is_dir() && path.join("test.yml").is_file()
}

/// The mapping of the X-Ray scenario in `dir` with `sets` (those naming its vars render
/// the template; the rest are fathom's), on the inventory (`--hosts`) whose hosts have
/// `hosts` targets each, in order (0: the workload's own).
pub fn map_dir(dir: &Path, sets: &[Override], hosts: Option<&[usize]>) -> Result<Mapping> {
    let path = dir.join("test.yml");
    let origin = path.display().to_string();
    let Some(hosts) = hosts else {
        return Err(Error::input(format!(
            "{}: an X-Ray scenario places its VM groups on nodes: give --hosts hosts.yaml (one host \
             `here: {{transport: local, target: DIR}}` runs it all on this machine; see docs/xray.md)",
            dir.display()
        )));
    };
    let text = crate::nofollow::read_input(&path, "scenario (an X-Ray test.yml)", crate::scenario::MAX_BYTES)?;
    let rendered = render::render(&origin, &text, &mut sets.to_vec())?;
    let at = format!("{origin} (rendered)");
    let (file, lines): (written::TestFile, _) = yaml::read(&at, &rendered.text)?;
    to_scenario::map(dir, &at, &file, &lines, rendered.vars, hosts)
}
