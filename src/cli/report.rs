//! `fathom report RUN [-o FILE] [--svg DIR]`: the run as one self-contained HTML page
//! (see `report::html`), and its charts as SVG files for slides and chat.

use crate::error::{Error, Result};
use crate::report::html::Report;
use crate::store::Store;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// Run id, or `last`
    #[arg(default_value = "last")]
    run: String,
    /// Write the page here (default: report-RUN.html)
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Also write every chart as an SVG file into DIR (created if missing; not a symlink)
    #[arg(long, value_name = "DIR")]
    svg: Option<PathBuf>,
}

pub fn run(args: Args, store_dir: &Path) -> Result<i32> {
    let store = Store::open_existing(store_dir)?;
    let report = Report::build(&store, &args.run)?;
    let path = args.output.unwrap_or_else(|| PathBuf::from(format!("report-{}.html", report.summary.run.id)));
    crate::nofollow::write(&path, report.html()).map_err(|e| Error::input(format!("{}: {e}", path.display())))?;
    crate::terminal::print(format!("wrote {} ({} charts)\n", path.display(), report.charts.len()));
    if let Some(dir) = &args.svg {
        crate::nofollow::create_dir(dir).map_err(|e| Error::input(format!("{}: {e}", dir.display())))?;
        for c in &report.charts {
            let file = dir.join(format!("{}.svg", c.id));
            crate::nofollow::write(&file, c.svg()).map_err(|e| Error::input(format!("{}: {e}", file.display())))?;
        }
        crate::terminal::print(format!("wrote {} SVG charts into {}\n", report.charts.len(), dir.display()));
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::Args;
    use crate::store::fixture::{Fixture, Second};
    use clap::{Args as _, Command, FromArgMatches};

    #[test]
    fn a_report_of_a_missing_run_is_a_clear_error() {
        let fx = Fixture::new("report-missing");
        let scenario = "name: one\nworkloads:\n  r: {target: /srv/fathom, size: 16m, rw: read, duration: 1s}\n";
        fx.run(scenario).phase("r", &[("r", 1)], 1, |_| Second::new(20_000, 50_000)).finish();
        let page = fx.dir.join("report.html").display().to_string();
        let matches =
            Args::augment_args(Command::new("report")).no_binary_name(true).get_matches_from(["42", "-o", &page]);
        let err = super::run(Args::from_arg_matches(&matches).unwrap(), &fx.dir).unwrap_err();
        assert_eq!(err.exit_code(), 2, "{err}");
        assert!(err.to_string().contains("42"), "{err}");
    }
}
