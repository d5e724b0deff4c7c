//! `fathom scenarios [show NAME]`: the built-in library.

use crate::error::{Error, Result};
use crate::report::table::plain as render;
use crate::scenario::builtin;

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Option<Action>,
}

#[derive(clap::Subcommand)]
enum Action {
    /// Print a built-in scenario's YAML (a starting point for your own)
    Show { name: String },
}

pub fn run(args: Args) -> Result<i32> {
    match args.action {
        None => {
            let rows: Vec<Vec<String>> =
                builtin::list().into_iter().map(|(name, d)| vec![name.to_string(), d]).collect();
            crate::terminal::print(render(&["name", "description"], &rows, 2));
            crate::terminal::print(
                "\nrun one with `fathom run NAME`; see its YAML with `fathom scenarios show NAME`\n",
            );
        }
        Some(Action::Show { name }) => {
            let text = builtin::find(&name).ok_or_else(|| {
                Error::input(format!(
                    "no built-in scenario named `{name}`{} (see `fathom scenarios`)",
                    builtin::hint(&name)
                ))
            })?;
            crate::terminal::print(text);
        }
    }
    Ok(0)
}
