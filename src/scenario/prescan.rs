//! What scenario text must be before a YAML parser reads it: at most 1 MiB, nested at
//! most 64 levels, without a byte order mark.
//!
//! The parser's time grows with the square of the nesting (200 KB of `[[[[` took 28 s),
//! so a hostile or mangled file must be refused before it is parsed, by a scan that is
//! linear in the text. Real scenarios are a few KB and nest five or six levels deep.

use crate::error::{Error, Result};

/// The longest scenario text, in bytes (also with its variables substituted).
pub const MAX_BYTES: usize = 1 << 20;
/// [`MAX_BYTES`] for messages.
pub const LIMIT: &str = "1 MiB";
/// The deepest nesting of mappings and lists in each other.
pub const MAX_DEPTH: usize = 64;

/// The text without a leading UTF-8 byte order mark (editors on Windows add one; it
/// says nothing in UTF-8), once it is known to be short and shallow enough to parse.
pub fn check<'a>(origin: &str, text: &'a str) -> Result<&'a str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.len() > MAX_BYTES {
        let line = text.as_bytes()[..MAX_BYTES].iter().filter(|&&b| b == b'\n').count() + 1;
        return Err(Error::input(format!(
            "{origin}:{line}: the scenario goes on past {LIMIT} ({MAX_BYTES} bytes): expected at most {LIMIT} (real \
             scenarios are a few KB)"
        )));
    }
    if let Some(line) = too_deep(text) {
        return Err(Error::input(format!("{origin}:{line}: {}", deep_message())));
    }
    Ok(text)
}

/// What a text nested past [`MAX_DEPTH`] is told.
pub fn deep_message() -> String {
    format!(
        "nested more than {MAX_DEPTH} levels deep (mappings and lists inside each other): expected at most {MAX_DEPTH}"
    )
}

/// The 1-based line where `text` nests deeper than [`MAX_DEPTH`], if it does.
///
/// Levels are counted generously, so that nothing deeper can get through: every `[` and
/// `{` opens a level until its `]` or `}` (also in a quoted value or a comment, which a
/// real scenario does not fill with 64 unclosed brackets), and block structure counts
/// one level per deeper indentation and per `- ` of a list item.
pub fn too_deep(text: &str) -> Option<usize> {
    let mut flow = 0usize;
    // indentation of each open block level
    let mut block: Vec<usize> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim_start_matches([' ', '\t']);
        if flow == 0 && !trimmed.is_empty() && !trimmed.starts_with('#') {
            let mut indent = line.len() - trimmed.len();
            while block.last().is_some_and(|&i| i >= indent) {
                block.pop();
            }
            block.push(indent);
            let mut rest = trimmed;
            while let Some(after) = rest.strip_prefix("- ").or(rest.strip_prefix("? ")) {
                let item = after.trim_start_matches(' ');
                indent += rest.len() - item.len();
                block.push(indent);
                rest = item;
                if block.len() > MAX_DEPTH {
                    return Some(n + 1);
                }
            }
        }
        for b in line.bytes() {
            match b {
                b'[' | b'{' => flow += 1,
                b']' | b'}' => flow = flow.saturating_sub(1),
                _ => continue,
            }
            if block.len() + flow > MAX_DEPTH {
                return Some(n + 1);
            }
        }
        if block.len() + flow > MAX_DEPTH {
            return Some(n + 1);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_byte_order_mark_is_dropped() {
        assert_eq!(check("s.yaml", "\u{feff}name: x\n").unwrap(), "name: x\n");
    }

    #[test]
    fn deep_nesting_is_refused_at_its_line_before_parsing() {
        let flow = format!("name: x\nworkloads: {}\n", "[".repeat(200_000));
        let err = check("s.yaml", &flow).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:2: nested more than 64 levels deep"), "{err}");
        let mut block = String::from("name: x\n");
        for i in 0..70 {
            block.push_str(&format!("{}k{i}:\n", " ".repeat(i)));
        }
        assert_eq!(too_deep(&block), Some(66));
        assert_eq!(too_deep(&format!("a: {}1\n", "- ".repeat(70))), None, "not list items: a plain value");
        assert_eq!(too_deep(&format!("{}1\n", "- ".repeat(70))), Some(1));
        let closed = "a: [1, [2, {b: 3}]]\n".repeat(1000);
        assert_eq!(too_deep(&closed), None, "closed brackets do not add up");
        for (name, _) in crate::scenario::builtin::list() {
            let text = crate::scenario::builtin::find(name).unwrap();
            assert_eq!(too_deep(text), None, "{name}");
        }
    }

    #[test]
    fn a_text_past_the_size_limit_is_refused() {
        let long = format!("name: x\n{}", "# padding\n".repeat(MAX_BYTES / 10 + 1));
        let err = check("s.yaml", &long).unwrap_err().to_string();
        assert!(err.contains("goes on past 1 MiB"), "{err}");
    }
}
