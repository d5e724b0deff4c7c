//! `fathom compare RUN_A RUN_B [...] [-o FILE] [--json]`: runs side by side (see
//! `report::compare`): a table in the terminal, JSON for scripts, or a page.

use crate::error::{Error, Result};
use crate::report::compare::Comparison;
use crate::report::html::Report;
use crate::store::Store;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// Two or more run ids (or `last`); changes are from the first
    #[arg(num_args = 2.., required = true)]
    runs: Vec<String>,
    /// Print JSON instead of a table
    #[arg(long)]
    json: bool,
    /// Also write a self-contained HTML page with the runs' time series overlaid
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

pub fn run(args: Args, store_dir: &Path, width: usize) -> Result<i32> {
    let store = Store::open_existing(store_dir)?;
    let reports = args.runs.iter().map(|r| Report::build(&store, r)).collect::<Result<Vec<_>>>()?;
    let comparison = Comparison::of(&reports);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&comparison).expect("comparison serializes"));
    } else {
        print!("{}", comparison.text(width));
    }
    if let Some(path) = &args.output {
        crate::nofollow::write(path, comparison.html(&reports))
            .map_err(|e| Error::input(format!("{}: {e}", path.display())))?;
        eprintln!("wrote {}", path.display());
    }
    Ok(0)
}
