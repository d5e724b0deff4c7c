//! "Did you mean": the known name nearest to one that is not known, for every error
//! that reports an unknown key, workload, scenario, variable or option.
//!
//! Nearness is Jaro similarity, as clap measures a mistyped flag. Case is ignored in the
//! comparison, because `OLTP` and `oltp` are the same name to a reader.

/// How similar two names must be (Jaro, 0 to 1) for one to be offered for the other.
/// clap offers above 0.7; long names with dashes reach that by chance
/// (`no-such-scenario-here` and `you-are-here` score 0.72), a typo scores above 0.8.
const THRESHOLD: f64 = 0.8;

/// The candidate most like `name`, if any is near enough to be what was meant; the first
/// of equals wins, so the order written decides a tie.
pub fn nearest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let name = name.to_lowercase();
    let length = name.chars().count();
    let mut best: Option<(f64, &str)> = None;
    for candidate in candidates {
        let candidate_length = candidate.chars().count();
        // Jaro is at most (shorter / longer + 2) / 3, so names this unlike in length can
        // never be near: skipping them keeps a line of a million characters from taking
        // Jaro's quadratic time
        if (length.min(candidate_length) as f64) < 0.4 * length.max(candidate_length) as f64 {
            continue;
        }
        let score = strsim::jaro(&name, &candidate.to_lowercase());
        if score > THRESHOLD && best.is_none_or(|(b, _)| score > b) {
            best = Some((score, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// ` (did you mean `X`?)` for the nearest candidate, or nothing: placed right after the
/// unknown name in a message.
pub fn hint<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    nearest(name, candidates).map(|c| format!(" (did you mean `{c}`?)")).unwrap_or_default()
}

/// The one message for a workload name that names none: the nearest name offered, then
/// every name (when known), so a typo and a wrong guess are both answered.
pub fn no_workload(name: &str, names: &[&str]) -> String {
    let hint = hint(name, names.iter().copied());
    match names {
        [] => format!("no workload named `{name}`"),
        _ => format!("no workload named `{name}`{hint} (workloads: {})", names.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offers_the_nearest_name() {
        assert_eq!(nearest("io_depth", ["bs", "iodepth", "jobs", "io_size"]), Some("iodepth"));
        assert_eq!(nearest("olpt", ["dss", "oltp"]), Some("oltp"));
        assert_eq!(nearest("quickstrat", ["quickstart", "four-corners", "hotspot"]), Some("quickstart"));
        assert_eq!(nearest("Oltp_Iop", ["oltp_iops", "dss_tput"]), Some("oltp_iops"));
    }

    #[test]
    fn offers_nothing_when_no_name_is_near() {
        assert_eq!(nearest("zzz", ["iodepth", "bs"]), None);
        assert_eq!(nearest("no-such-scenario-here", ["quickstart", "you-are-here"]), None);
        assert_eq!(nearest("x", []), None);
        // too unlike in length to be near, however alike the letters
        assert_eq!(nearest(&"iodepth".repeat(3), ["iodepth"]), None);
        assert_eq!(nearest("iodept", ["iodepth"]), Some("iodepth"));
        assert_eq!(hint("zzz", ["iodepth"]), "");
        assert_eq!(hint("iodeph", ["iodepth"]), " (did you mean `iodepth`?)");
    }

    #[test]
    fn a_missing_workload_is_offered_the_nearest_then_all() {
        assert_eq!(
            no_workload("olpt", &["oltp", "dss"]),
            "no workload named `olpt` (did you mean `oltp`?) (workloads: oltp, dss)"
        );
        assert_eq!(no_workload("web", &["oltp", "dss"]), "no workload named `web` (workloads: oltp, dss)");
    }
}
