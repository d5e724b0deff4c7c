//! fathom: storage and database performance testing that measures the whole curve.
//!
//! `main` parses arguments, runs one command, and turns its outcome into an exit
//! status (see [`error::Error`]); nothing below it prints errors or exits.

mod analysis;
mod children;
mod cli;
mod clock;
mod coprocess;
mod drivers;
mod engine;
mod error;
mod export;
mod http;
mod import;
mod meminfo;
mod metrics;
mod nofollow;
mod observe;
mod report;
mod scenario;
mod secrets;
mod session;
mod store;
mod suggest;
mod terminal;
mod timeline;
mod transport;
mod warnings;
mod workload;

use clap::Parser;

fn main() {
    // SIGPIPE stays ignored, as Rust starts it: a program fathom feeds that ends early is
    // an error to handle, and a reader of our output that went away ends only what is
    // printed (see `terminal::print`).
    let args = cli::Cli::parse();
    let code = match cli::dispatch(args) {
        Ok(code) => code,
        Err(e) => {
            if !matches!(e, error::Error::Interrupted) {
                // a program's message or a refused input may quote a secret
                crate::terminal::eprint(format!("fathom: {}\n", secrets::redact(&e.to_string())));
            }
            e.exit_code()
        }
    };
    std::process::exit(code);
}
