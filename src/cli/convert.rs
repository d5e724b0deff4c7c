//! `fathom convert JOB.fio` (or an X-Ray scenario directory): the fathom scenario a fio
//! job file or X-Ray scenario runs as, printed as YAML, so a user can move to fathom's
//! format and grow it (timelines, expectations, hosts). Running the printed scenario runs
//! what running the original does: both are the same mapping (`import::fio_job`,
//! `import::xray`, through their importers in `crate::import`), one printed, one loaded; what the loader refuses is refused here
//! too, never printed.

use crate::error::{Error, Result};
use crate::import::open::{check_converted, import};
use crate::import::seam::Given;
use crate::scenario::Override;
use crate::transport::Inventory;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The fio job file, or X-Ray scenario directory (its `test.yml` and `.fio` files)
    file: PathBuf,
    /// As for `fathom run`: the job file's own targets replaced by these, in order
    #[arg(long)]
    target: Vec<PathBuf>,
    /// X-Ray: a var's value (`--set NAME=VALUE`), for the template
    #[arg(long = "set", value_name = "NAME=VALUE")]
    sets: Vec<Override>,
    /// X-Ray: the inventory its VM groups are placed on (as for `fathom run`)
    #[arg(long, value_name = "FILE")]
    hosts: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<i32> {
    let name = args.file.display().to_string();
    let hosts = args.hosts.as_deref().map(Inventory::load).transpose()?.map(|i| i.target_counts());
    // the printed scenario runs without this command line: one --target goes in its text
    let given = Given { targets: &args.target, sets: &args.sets, hosts: hosts.as_deref(), target_in_text: true };
    let Some((importer, imported)) = import(&name, &given)? else {
        return Err(Error::input(format!(
            "{name}: not a fio job file: expected `[job]` sections (or a name ending in .fio, .job or .ini), or an X-Ray scenario directory (with test.yml)"
        )));
    };
    check_converted(&name, importer, &imported.yaml, hosts.is_some())?;
    crate::terminal::print(&imported.yaml);
    Ok(0)
}
