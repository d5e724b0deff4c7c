//! `fathom convert JOB.fio` (or an X-Ray scenario directory): the fathom scenario a fio
//! job file or X-Ray scenario runs as, printed as YAML, so a user can move to fathom's
//! format and grow it (timelines, expectations, hosts). Running the printed scenario runs
//! what running the original does: both are the same mapping (`scenario::fio_job`,
//! `scenario::xray`), one printed, one loaded; what the loader refuses is refused here
//! too, never printed.

use crate::error::{Error, Result};
use crate::scenario::Override;
use crate::scenario::open::{check_converted, job_file, xray_dir};
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
    if let Some(mapping) = xray_dir(&name, &args.sets, hosts.as_deref())? {
        let yaml = mapping.yaml()?;
        check_converted(&name, &yaml, true, hosts.is_some())?;
        print!("{yaml}");
        return Ok(0);
    }
    // one --target is every workload's (as `run` takes it); several replace the file's own
    let several = if args.target.len() > 1 { &args.target[..] } else { &[] };
    let Some(mut mapping) = job_file(&name, several)? else {
        return Err(Error::input(format!(
            "{name}: not a fio job file: expected `[job]` sections (or a name ending in .fio, .job or .ini), or an X-Ray scenario directory (with test.yml)"
        )));
    };
    if let [one] = &args.target[..] {
        mapping.all_on(one);
    }
    let stem = args.file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "job".into());
    let yaml = mapping.yaml(&stem);
    check_converted(&name, &yaml, false, false)?;
    print!("{yaml}");
    Ok(0)
}
