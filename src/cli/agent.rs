//! `fathom agent`: this host's end of a many-host run (see `crate::transport::agent`).

use crate::error::Result;

#[derive(clap::Args)]
pub struct Args {
    /// The name the controller's inventory gives this host
    #[arg(long, default_value = "localhost")]
    name: String,
}

pub fn run(args: Args) -> Result<i32> {
    Ok(crate::transport::agent::run(&args.name))
}
