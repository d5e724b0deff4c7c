//! `fathom man [--dir DIR]`: the manual pages, generated from the same clap definition
//! that parses the command line (clap_mangen), so they cannot fall out of date.
//! `make install` installs them; without `--dir` the page of `fathom` itself goes to
//! standard output (`fathom man | man -l -`).

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// Write fathom.1 and a page per subcommand (fathom-run.1, ...) into this directory
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

/// Renders the pages of `command`, the whole command line (handed in by the dispatcher,
/// as for completions).
pub fn run(args: Args, command: clap::Command) -> Result<i32> {
    let mut command = command.disable_help_subcommand(true);
    command.build();
    match args.dir {
        None => {
            let page = render(&command)?;
            crate::terminal::print(page);
        }
        Some(dir) => write_pages(&command, &dir)?,
    }
    Ok(0)
}

/// One page per command, its subcommands' too; files are written without following a
/// symbolic link, as every file fathom writes.
fn write_pages(command: &clap::Command, dir: &Path) -> Result<()> {
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_pages(sub, dir)?;
    }
    let man = clap_mangen::Man::new(command.clone());
    let path = dir.join(man.get_filename());
    crate::nofollow::write(&path, render(command)?).map_err(|e| Error::input(format!("{}: {e}", path.display())))
}

fn render(command: &clap::Command) -> Result<Vec<u8>> {
    let mut page = Vec::new();
    clap_mangen::Man::new(command.clone())
        .render(&mut page)
        .map_err(|e| Error::failed(format!("rendering the manual page: {e}")))?;
    Ok(page)
}
