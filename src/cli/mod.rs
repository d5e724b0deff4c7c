//! The command line: one file per subcommand.

mod agent;
mod compare;
mod completions;
mod convert;
mod end;
mod export;
mod fit;
mod lint;
mod man;
mod report;
mod run;
mod runs;
mod scenarios;
mod show;
mod sweep;

use crate::error::{Error, Result};
use clap::{CommandFactory, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "fathom",
    version = env!("BUILD_IDENTITY"),
    about = "Storage and database performance testing: the whole curve, not one number"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    // The flag keeps its name; the field names the store's directory, apart from a
    // scenario's result views.
    /// Directory of the results store (fathom.db)
    #[arg(
        id = "results",
        long = "results",
        value_name = "RESULTS",
        env = "FATHOM_RESULTS",
        default_value = "fathom-results",
        global = true
    )]
    store_dir: PathBuf,
    /// Show every column of a table, however wide (tables otherwise fit the terminal,
    /// or `COLUMNS`, or 100 columns when not printing to a terminal)
    #[arg(long, global = true)]
    wide: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario (a YAML file, a fio job file or a built-in name; the quickstart when omitted)
    Run(run::Args),
    /// List stored runs
    Runs(runs::Args),
    /// Show one run's results per workload and op
    Show(show::Args),
    /// List the built-in scenarios
    Scenarios(scenarios::Args),
    /// Check a scenario for benchmarking mistakes without running it
    Lint(lint::Args),
    /// Fit the Universal Scalability Law to concurrency vs throughput (a table, or a run)
    Fit(fit::Args),
    /// Run a workload at each iodepth/jobs value, each step until steady state, as one run
    Sweep(sweep::Args),
    /// Write a run's figures (or per-second samples) as CSV or JSON
    Export(export::Args),
    /// Write a run as one self-contained HTML page with charts
    Report(report::Args),
    /// Compare runs side by side: figures matched by workload, op and phase, with changes
    Compare(compare::Args),
    /// Print the fathom scenario a fio job file or X-Ray scenario directory runs as
    Convert(convert::Args),
    /// Run workers for a controller on another host (started by `fathom run --hosts`
    /// over ssh or kubectl; speaks docs/agent-protocol.md on stdin and stdout)
    Agent(agent::Args),
    /// Print the shell completion script for bash, zsh, fish, powershell or elvish
    Completions(completions::Args),
    /// Print the manual page (roff), or write every page into a directory
    Man(man::Args),
}

/// Runs the chosen command and returns the process exit status.
pub fn dispatch(cli: Cli) -> Result<i32> {
    let store_dir = cli.store_dir.clone();
    command(cli).map_err(|e| match e {
        // a damaged page met while reading: say which store and how to save what it holds
        Error::Failed(m) if m.starts_with(crate::error::STORE_DAMAGED) => {
            let path = store_dir.join("fathom.db");
            Error::Input(format!("{m} in {}. {}", path.display(), crate::store::recover_hint(&path)))
        }
        other => other,
    })
}

fn command(cli: Cli) -> Result<i32> {
    let store_dir = cli.store_dir.as_path();
    let width = crate::report::table::text::width(cli.wide);
    match cli.command {
        Command::Run(a) => run::run(a, store_dir, width),
        Command::Runs(a) => runs::run(a, store_dir, width),
        Command::Show(a) => show::run(a, store_dir, width),
        Command::Scenarios(a) => scenarios::run(a, width),
        Command::Lint(a) => lint::run(a),
        Command::Fit(a) => fit::run(a, store_dir),
        Command::Sweep(a) => sweep::run(a, store_dir, width),
        Command::Export(a) => export::run(a, store_dir),
        Command::Report(a) => report::run(a, store_dir),
        Command::Compare(a) => compare::run(a, store_dir, width),
        Command::Convert(a) => convert::run(a),
        Command::Agent(a) => agent::run(a),
        Command::Completions(a) => completions::run(a, Cli::command()),
        Command::Man(a) => man::run(a, Cli::command()),
    }
}
