//! `fathom scenarios [show NAME]`: the built-in library.

use crate::error::{Error, Result};
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

pub fn run(args: Args, width: usize) -> Result<i32> {
    match args.action {
        None => {
            crate::terminal::print(listed(&builtin::list(), width));
            let how = "run one with `fathom run NAME`; see its YAML with `fathom scenarios show NAME`";
            crate::terminal::print(format!("\n{}", crate::terminal::wrap(how, width)));
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

/// The built-ins, a name and its description a row, each description wrapped at words
/// within `width`, its later lines under its column (the sentences are long: a table
/// cell would cut them or run past the terminal).
fn listed(builtins: &[(&str, String)], width: usize) -> String {
    let column = builtins.iter().map(|(name, _)| name.len()).chain(["name".len()]).max().unwrap_or(0) + 2;
    let room = width.saturating_sub(column).max(20);
    let mut out = format!("{:column$}description\n", "name");
    for (name, description) in builtins {
        let wrapped = crate::terminal::wrap(description, room);
        for (i, line) in wrapped.lines().enumerate() {
            let line = if i == 0 { line } else { line.trim_start() };
            let lead = if i == 0 { *name } else { "" };
            out.push_str(&format!("{lead:column$}{line}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_description_wraps_under_its_column() {
        let list = [("short", "one two".to_string()), ("a-longer-name", "three four five six seven".to_string())];
        let out = listed(&list, 30);
        // 30 columns less the name's 15 leave the 20 a line holds at least
        let expected = "name           description\nshort          one two\na-longer-name  three four five six\n               seven\n";
        assert_eq!(out, expected);
    }
}
