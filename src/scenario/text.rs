//! Text values that name something, in three strengths of one rule. Any name, label or
//! address is [`one_line`]: a line break in a name breaks the lines of a table, a log or
//! the Prometheus exposition. A name fathom turns into a file (a target, a `file`) is
//! also [`plain_text`]: a stray space or a control character from a template would
//! otherwise become a file named ` ` or `\t`. A name that becomes part of a file's name
//! (a workload's: `RUNDIR/NAME.fio`, `TARGET/fathom-NAME.dat`) is a [`file_name_part`]:
//! a `/` or `..` in it would put the file outside its directory.

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

/// The longest name a file's name is made from, in bytes. With fathom's longest suffix
/// (`.hammerdb-state`, `fathom-` and `.dat`) a file's name stays far below the 255
/// bytes file systems allow.
pub const MAX_NAME_BYTES: usize = 100;

/// Whether `name` may be the first part of a file's name in a directory fathom writes:
/// [`plain_text`], no `/`, not hidden (which also rules out `.` and `..`), not an
/// option (`-`), at most [`MAX_NAME_BYTES`]. The error says which rule it breaks.
pub fn file_name_part(name: &str) -> Result<(), String> {
    if name.len() > MAX_NAME_BYTES {
        return Err(format!("a name of {} bytes cannot name a file: at most {MAX_NAME_BYTES}", name.len()));
    }
    let why = if !plain_text(name) {
        PLAIN_TEXT.to_string()
    } else if name.contains('/') {
        "it must not contain `/`".into()
    } else if name.starts_with('.') {
        "it must not start with `.`".into()
    } else if name.starts_with('-') {
        "it must not start with `-`".into()
    } else {
        return Ok(());
    };
    Err(format!("{name:?} cannot name a file: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_name_part_stays_in_its_directory() {
        for ok in ["a", "qd4 j2", "burn_2x50%_qsort", "punch hole-fuzzer", "é", &"x".repeat(MAX_NAME_BYTES)] {
            assert!(file_name_part(ok).is_ok(), "{ok}");
        }
        for bad in ["", " ", "../../x", "/abs", "a/b", ".", "..", ".hidden", "-o", "a\0b", "a\nb", "\t"] {
            assert!(file_name_part(bad).is_err(), "{bad:?}");
        }
        let long = file_name_part(&"x".repeat(MAX_NAME_BYTES + 1)).unwrap_err();
        assert_eq!(long, "a name of 101 bytes cannot name a file: at most 100");
    }
}
