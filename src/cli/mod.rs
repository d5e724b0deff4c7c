//! The command line: one file per subcommand.

mod run;
mod runs;
mod scenarios;
mod show;

use crate::error::Result;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "fathom",
    version,
    about = "Storage and database performance testing: the whole curve, not one number"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Where results are stored; shared by every command that reads or writes runs.
#[derive(clap::Args, Clone)]
pub struct ResultsArg {
    /// Directory of the results store (fathom.db)
    #[arg(
        long,
        env = "FATHOM_RESULTS",
        default_value = "fathom-results",
        global = true
    )]
    pub results: PathBuf,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario (a YAML file or a built-in name; the quickstart when omitted)
    Run(run::Args),
    /// List stored runs
    Runs(runs::Args),
    /// Show one run's results per workload and op
    Show(show::Args),
    /// List the built-in scenarios
    Scenarios(scenarios::Args),
}

/// Runs the chosen command and returns the process exit status.
pub fn dispatch(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Run(a) => run::run(a),
        Command::Runs(a) => runs::run(a),
        Command::Show(a) => show::run(a),
        Command::Scenarios(a) => scenarios::run(a),
    }
}
