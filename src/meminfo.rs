//! What /proc/meminfo says, in bytes: the scenario's memory budget, lint's page-cache
//! check and the environment stored with a run all read it, so it sits below them all.

/// A figure of /proc/meminfo in bytes (`MemTotal`, `MemAvailable`), if it can be read.
pub fn bytes(key: &str) -> Option<u64> {
    let kb = value(key)?;
    kb.trim_end_matches(" kB").trim().parse::<u64>().ok().map(|kb| kb * 1024)
}

/// A count of /proc/meminfo, a figure without a unit (`HugePages_Total`), if it can be
/// read.
pub fn count(key: &str) -> Option<u64> {
    value(key)?.parse().ok()
}

/// The text of figure `key` of /proc/meminfo.
fn value(key: &str) -> Option<String> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key).then(|| v.trim().to_string())
    })
}
