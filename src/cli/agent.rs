//! `fathom agent`: this host's end of a many-host run (see `crate::transport::agent`).

use crate::error::Result;

#[derive(clap::Args)]
pub struct Args {
    /// The name the controller's inventory gives this host
    #[arg(long, default_value = "localhost")]
    name: String,
    /// Say `alive` to the controller after this many seconds without a word (0: never),
    /// so that streams closed when idle stay open
    #[arg(long, value_name = "SECS", default_value_t = crate::transport::KEEPALIVE_SECS)]
    keepalive: u64,
}

pub fn run(args: Args) -> Result<i32> {
    Ok(crate::transport::agent::run(&args.name, std::time::Duration::from_secs(args.keepalive)))
}
