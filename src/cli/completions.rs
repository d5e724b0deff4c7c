//! `fathom completions SHELL`: the shell's completion script for every subcommand and
//! option, on standard output, as hyperfine and ripgrep ship theirs. Generated from the
//! same clap definition that parses the command line, so it cannot fall out of date.

use crate::error::Result;
use clap_complete::Shell;

#[derive(clap::Args)]
pub struct Args {
    /// The shell to complete in: bash, zsh, fish, powershell or elvish
    shell: Shell,
}

/// Writes the script for `command`, the whole command line (`Cli`'s definition, handed
/// in by the dispatcher so this file needs nothing of its parent).
pub fn run(args: Args, mut command: clap::Command) -> Result<i32> {
    let name = command.get_name().to_string();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, name, &mut script);
    crate::terminal::print(script);
    Ok(0)
}
