//! `fathom export RUN [--format NAME] [--samples] [-o FILE]`: a run's figures for
//! notebooks, spreadsheets and Prometheus, in one of `export::FORMATS`.

use crate::error::{Error, Result};
use crate::export::{FORMATS, Format, Source, named};
use crate::report::summary::RunSummary;
use crate::store::Store;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// Run id, or `last`
    #[arg(default_value = "last")]
    run: String,
    #[arg(long, default_value = FORMATS[0].name(), value_parser = formats())]
    format: &'static dyn Format,
    /// One row per second, workload and op instead of one per workload and op
    #[arg(long)]
    samples: bool,
    /// Write here instead of standard output
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

/// `--format` takes the name of one of [`FORMATS`], listed with its line of help.
fn formats() -> impl TypedValueParser<Value = &'static dyn Format> {
    PossibleValuesParser::new(FORMATS.map(|f| PossibleValue::new(f.name()).help(f.about())))
        .map(|name| named(&name).expect("clap accepts only the names of FORMATS"))
}

pub fn run(args: Args, store_dir: &Path) -> Result<i32> {
    let store = Store::open_existing(store_dir)?;
    let summary = RunSummary::load(&store, &args.run)?;
    let text = args.format.render(&Source { store: &store, summary: &summary, samples: args.samples })?;
    write(&args, &text)
}

/// Writes `text` to `-o FILE` or standard output.
fn write(args: &Args, text: &str) -> Result<i32> {
    match &args.output {
        Some(path) => {
            crate::nofollow::write(path, text).map_err(|e| Error::input(format!("{}: {e}", path.display())))?
        }
        None => {
            let _ = std::io::stdout().write_all(text.as_bytes());
        }
    }
    Ok(0)
}
