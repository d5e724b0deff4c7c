//! A phase's name when no step gives it one.

/// The longest phase name made from what runs: it heads table rows, chart bands,
/// Prometheus labels and progress lines.
pub const MAX_LABEL: usize = 40;

/// A phase's name from what runs in it when no step names it: the workloads joined
/// with `+`, those of one group (`Random Read 0/db-disk1`, `.../db-disk2`: the part
/// before `/`) named once by their group, and past [`MAX_LABEL`] characters the first
/// and how many more (`Random Read 0+3 more`).
pub fn auto_label(names: &[String]) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for n in names {
        let group = n.split_once('/').map_or(n.as_str(), |(g, _)| g);
        if !parts.contains(&group) {
            parts.push(group);
        }
    }
    let joined = parts.join("+");
    match joined.chars().count() <= MAX_LABEL || parts.len() < 2 {
        true => joined,
        false => format!("{}+{} more", parts[0], parts.len() - 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sixteen workloads of four groups made a 367-character phase name; now the
    /// groups, and past a bound the first and a count.
    #[test]
    fn a_phase_named_by_what_runs_is_short_and_names_groups_once() {
        let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(auto_label(&names(&["vm x2", "bg"])), "vm x2+bg");
        assert_eq!(auto_label(&names(&["R 0/d1", "R 0/d2", "R 1/d1"])), "R 0+R 1");
        let many: Vec<String> =
            (0..4).flat_map(|g| (1..5).map(move |d| format!("Random Read {g}/db-disk{d}"))).collect();
        assert_eq!(auto_label(&many), "Random Read 0+3 more");
        assert!(auto_label(&many).chars().count() <= MAX_LABEL);
    }
}
