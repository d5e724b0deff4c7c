//! Text values that name something (a path, a file, a workload): what makes one usable.

/// Whether a name fathom turns into a file (a target, a `file`) is one a user meant: a
/// stray space or a line break from a template would otherwise become a file named
/// ` ` or `\n`.
pub fn plain_text(name: &str) -> bool {
    !name.trim().is_empty() && !name.chars().any(char::is_control)
}

/// What [`plain_text`] asks for, for the error.
pub const PLAIN_TEXT: &str =
    "it must not be empty or only spaces, nor contain a line break or another control character";
