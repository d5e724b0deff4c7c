//! `fathom convert JOB.fio`: the fathom scenario a fio job file runs as, printed as YAML,
//! so a user can move to fathom's format and grow it (timelines, expectations, hosts).
//! Running the printed scenario runs what running the job file does: both are the same
//! mapping (`scenario::fio_job`), one printed, one loaded.

use crate::error::{Error, Result};
use crate::scenario::open::job_file;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The fio job file
    file: PathBuf,
    /// As for `fathom run`: the job file's own targets replaced by these, in order
    #[arg(long)]
    target: Vec<PathBuf>,
}

pub fn run(args: Args) -> Result<i32> {
    let name = args.file.display().to_string();
    // one --target is every workload's (as `run` takes it); several replace the file's own
    let several = if args.target.len() > 1 { &args.target[..] } else { &[] };
    let Some(mut mapping) = job_file(&name, several)? else {
        return Err(Error::input(format!(
            "{name}: not a fio job file: expected `[job]` sections (or a name ending in .fio, .job or .ini)"
        )));
    };
    if let [one] = &args.target[..] {
        mapping.all_on(one);
    }
    let stem = args.file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "job".into());
    print!("{}", mapping.yaml(&stem));
    Ok(0)
}
