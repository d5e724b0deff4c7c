//! What /proc/meminfo says, in bytes: the scenario's memory budget, lint's page-cache
//! check and the environment stored with a run all read it, so it sits below them all.

/// A figure of /proc/meminfo in bytes (`MemTotal`, `MemAvailable`), if it can be read.
pub fn bytes(key: &str) -> Option<u64> {
    let kb = value(key)?;
    kb.trim_end_matches(" kB").trim().parse::<u64>().ok().map(|kb| kb * 1024)
}

/// The text of figure `key` of /proc/meminfo.
fn value(key: &str) -> Option<String> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key).then(|| v.trim().to_string())
    })
}

/// One size of the kernel's huge page pools (/sys/kernel/mm/hugepages/hugepages-NkB):
/// how many pages are reserved in it, free, and promised to a mapping not yet touched.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HugePages {
    pub size_kb: u64,
    pub reserved: u64,
    pub free: u64,
    pub promised: u64,
}

impl HugePages {
    /// Pages processes hold: mapped, or promised to a mapping (PostgreSQL's shared
    /// memory is promised whole when the server starts, and mapped as it is touched).
    pub fn used(&self) -> u64 {
        (self.reserved + self.promised).saturating_sub(self.free)
    }

    /// The size in words: `2 MB`, `1 GB`.
    pub fn size(&self) -> String {
        size_words(self.size_kb)
    }
}

/// A huge page size in kB, in words: `2 MB`, `1 GB`.
pub fn size_words(kb: u64) -> String {
    if kb >= 1 << 20 && kb.is_multiple_of(1 << 20) { format!("{} GB", kb >> 20) } else { format!("{} MB", kb >> 10) }
}

/// Where the kernel keeps the huge page pools, one directory per size.
pub const HUGE_PAGES: &str = "/sys/kernel/mm/hugepages";

/// Every huge page size the kernel offers under `dir` ([`HUGE_PAGES`]), smallest first.
pub fn huge_pages(dir: &std::path::Path) -> Vec<HugePages> {
    let mut sizes: Vec<HugePages> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            let size_kb = name.strip_prefix("hugepages-")?.strip_suffix("kB")?.parse().ok()?;
            let n = |f: &str| std::fs::read_to_string(e.path().join(f)).ok()?.trim().parse::<u64>().ok();
            Some(HugePages {
                size_kb,
                reserved: n("nr_hugepages")?,
                free: n("free_hugepages").unwrap_or(0),
                promised: n("resv_hugepages").unwrap_or(0),
            })
        })
        .collect();
    sizes.sort_by_key(|h| h.size_kb);
    sizes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_huge_page_size_is_read_with_what_processes_hold_of_it() {
        let dir = std::env::temp_dir().join(format!("fathom-hugepages-{}", std::process::id()));
        for (size, nr, free, resv) in [("1048576kB", "1", "1", "1"), ("2048kB", "100", "30", "10")] {
            let d = dir.join(format!("hugepages-{size}"));
            std::fs::create_dir_all(&d).unwrap();
            for (f, v) in [("nr_hugepages", nr), ("free_hugepages", free), ("resv_hugepages", resv)] {
                std::fs::write(d.join(f), format!("{v}\n")).unwrap();
            }
        }
        let sizes = huge_pages(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(sizes.len(), 2);
        assert_eq!((sizes[0].size(), sizes[0].used()), ("2 MB".to_string(), 80));
        assert_eq!((sizes[1].size(), sizes[1].used()), ("1 GB".to_string(), 1));
    }
}
