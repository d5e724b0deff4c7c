//! Text values that name something, in two strengths of one rule. Any name, label or
//! address is [`one_line`]: a line break in a name breaks the lines of a table, a log or
//! the Prometheus exposition. A name fathom turns into a file (a target, a `file`) is
//! also [`plain_text`]: a stray space or a control character from a template would
//! otherwise become a file named ` ` or `\t`.

/// Whether `value` holds no line break (`\n` or `\r`).
pub fn one_line(value: &str) -> bool {
    !value.contains(['\n', '\r'])
}

/// Whether a name fathom turns into a file is one a user meant: [`one_line`], not blank,
/// and without any other control character either.
pub fn plain_text(name: &str) -> bool {
    one_line(name) && !name.trim().is_empty() && !name.chars().any(char::is_control)
}

/// What [`plain_text`] asks for, for the error.
pub const PLAIN_TEXT: &str =
    "it must not be empty or only spaces, nor contain a line break or another control character";
