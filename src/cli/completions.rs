//! `fathom completions SHELL`: the shell's completion script for every subcommand and
//! option, on standard output, as hyperfine and ripgrep ship theirs. Generated from the
//! same clap definition that parses the command line, so it cannot fall out of date.

use crate::error::Result;
use clap::CommandFactory;
use clap_complete::Shell;

#[derive(clap::Args)]
pub struct Args {
    /// The shell to complete in: bash, zsh, fish, powershell or elvish
    shell: Shell,
}

pub fn run(args: Args) -> Result<i32> {
    let mut command = super::Cli::command();
    let name = command.get_name().to_string();
    clap_complete::generate(args.shell, &mut command, name, &mut std::io::stdout());
    Ok(0)
}
