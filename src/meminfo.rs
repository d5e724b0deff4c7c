//! What /proc/meminfo says, in bytes: the scenario's memory budget, lint's page-cache
//! check and the environment stored with a run all read it, so it sits below them all.

/// A figure of /proc/meminfo in bytes (`MemTotal`, `MemAvailable`), if it can be read.
pub fn bytes(key: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb = text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key).then(|| v.trim().to_string())
    })?;
    kb.trim_end_matches(" kB").trim().parse::<u64>().ok().map(|kb| kb * 1024)
}
