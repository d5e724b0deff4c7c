//! Finds the line of a key in scenario text, so errors found after parsing (a depth of
//! zero, a workload missing its target) still point at what the user wrote.
//!
//! serde_yaml reports positions only for errors it raises itself; values checked later
//! have lost theirs. Scenario files are small, block-style YAML, so following
//! indentation is enough: walk the lines, keep the stack of open keys, and return the
//! line where the stack equals the path. Sequence items (`- start: a`) count as indices.

/// The 1-based line of the key at `path`, or of its deepest ancestor that was found.
pub fn line_of(text: &str, path: &[&str]) -> Option<usize> {
    // (indent, key) of each open mapping key or sequence item
    let mut stack: Vec<(usize, String)> = Vec::new();
    // next index of the sequence at each indent
    let mut seq_next: Vec<(usize, usize)> = Vec::new();
    let mut best: Option<(usize, usize)> = None; // (depth matched, line)
    for (n, raw) in text.lines().enumerate() {
        let line_no = n + 1;
        let trimmed = raw.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let mut indent = raw.len() - trimmed.len();
        let mut rest = trimmed;
        let mut keys: Vec<(usize, String)> = Vec::new();
        while let Some(after) = rest.strip_prefix("- ").or(if rest == "-" { Some("") } else { None }) {
            seq_next.retain(|&(i, _)| i <= indent);
            let idx = match seq_next.iter_mut().find(|(i, _)| *i == indent) {
                Some(entry) => {
                    entry.1 += 1;
                    entry.1 - 1
                }
                None => {
                    seq_next.push((indent, 1));
                    0
                }
            };
            keys.push((indent, idx.to_string()));
            indent += 2;
            rest = after.trim_start();
        }
        if let Some(colon) = rest.find(':') {
            let key = rest[..colon].trim().trim_matches(|c| c == '"' || c == '\'');
            if !key.is_empty() && !key.contains(' ') || key.starts_with('{') {
                // a key ends the sequences indented deeper than it (or as deep, when
                // items are not indented under their key)
                if keys.is_empty() {
                    seq_next.retain(|&(i, _)| i < indent);
                }
                keys.push((indent, key.to_string()));
            }
        }
        for (ind, key) in keys {
            while stack.last().is_some_and(|(i, _)| *i >= ind) {
                stack.pop();
            }
            stack.push((ind, key));
            let depth = matched(&stack, path);
            if depth == stack.len() && best.is_none_or(|(d, _)| depth > d) {
                best = Some((depth, line_no));
                if depth == path.len() {
                    return Some(line_no);
                }
                // a flow mapping on this line (`a: {iodepth: 1}`) may hold the rest
                if depth + 1 == path.len() && raw.contains(&format!("{}:", path[depth])) && raw.contains('{') {
                    return Some(line_no);
                }
            }
        }
    }
    best.map(|(_, line)| line)
}

/// How many leading elements of `path` the stack matches.
fn matched(stack: &[(usize, String)], path: &[&str]) -> usize {
    stack.iter().zip(path).take_while(|((_, k), p)| k == *p).count()
}

#[cfg(test)]
mod tests {
    use super::line_of;

    const TEXT: &str = "\
name: x
# comment
defaults:
  bs: 4k
workloads:
  a:
    iodepth: 4
  b: {iodepth: 0, bs: 4k}
timeline:
  - start: a
  - start: b
expect:
  - a.iops > 1
";

    #[test]
    fn finds_nested_keys_flow_mappings_and_sequence_items() {
        assert_eq!(line_of(TEXT, &["defaults", "bs"]), Some(4));
        assert_eq!(line_of(TEXT, &["workloads", "a", "iodepth"]), Some(7));
        assert_eq!(line_of(TEXT, &["workloads", "b", "iodepth"]), Some(8));
        assert_eq!(line_of(TEXT, &["timeline", "1", "start"]), Some(11));
        assert_eq!(line_of(TEXT, &["expect", "0"]), Some(13), "a new key starts a new sequence");
        assert_eq!(line_of(TEXT, &["workloads", "a", "rw"]), Some(6), "falls back to the parent");
    }
}
