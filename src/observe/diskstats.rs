//! The devices under the targets, per second, from /proc/diskstats: the iostat view
//! (r/s, w/s, rkB/s, wkB/s, areq-sz, aqu-sz, await, %util). What the device saw can
//! differ from what the workload asked for (a filesystem splits or merges requests;
//! vioperf's were smaller than fio's), and this is where it shows.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One device's cumulative counters (fields 4-14 of a /proc/diskstats line).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DiskStats {
    reads: u64,
    sectors_read: u64,
    read_ms: u64,
    writes: u64,
    sectors_written: u64,
    write_ms: u64,
    io_ms: u64,
    weighted_ms: u64,
}

/// Every device's counters, by name.
pub fn read_all() -> BTreeMap<String, DiskStats> {
    parse(&std::fs::read_to_string("/proc/diskstats").unwrap_or_default())
}

fn parse(text: &str) -> BTreeMap<String, DiskStats> {
    text.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 14 {
                return None;
            }
            let n = |i: usize| f[i].parse::<u64>().unwrap_or(0);
            let s = DiskStats {
                reads: n(3),
                sectors_read: n(5),
                read_ms: n(6),
                writes: n(7),
                sectors_written: n(9),
                write_ms: n(10),
                io_ms: n(12),
                weighted_ms: n(13),
            };
            Some((f[2].to_string(), s))
        })
        .collect()
}

/// iostat's extended figures between two readings `secs` apart.
pub fn iostat(before: &DiskStats, after: &DiskStats, secs: f64) -> Vec<(&'static str, f64)> {
    let d = |a: u64, b: u64| a.saturating_sub(b) as f64;
    let reads = d(after.reads, before.reads);
    let writes = d(after.writes, before.writes);
    let kb_read = d(after.sectors_read, before.sectors_read) / 2.0;
    let kb_written = d(after.sectors_written, before.sectors_written) / 2.0;
    let per = |ms: f64, n: f64| if n > 0.0 { ms / n } else { 0.0 };
    let read_ms = d(after.read_ms, before.read_ms);
    let write_ms = d(after.write_ms, before.write_ms);
    vec![
        ("r_s", reads / secs),
        ("w_s", writes / secs),
        ("rkB_s", kb_read / secs),
        ("wkB_s", kb_written / secs),
        ("areq_sz_kB", per(kb_read + kb_written, reads + writes)),
        ("aqu_sz", d(after.weighted_ms, before.weighted_ms) / (secs * 1000.0)),
        ("r_await_ms", per(read_ms, reads)),
        ("w_await_ms", per(write_ms, writes)),
        ("util_pct", (d(after.io_ms, before.io_ms) / (secs * 10.0)).min(100.0)),
    ]
}

/// The block devices under `targets`: each target's own device (a partition, an LVM or
/// md volume), and the disks a volume is built on. Targets on a filesystem without a
/// block device (tmpfs, /dev/shm) have none.
pub fn devices_of(targets: &[PathBuf]) -> Vec<String> {
    let mut names = Vec::new();
    for t in targets {
        if let Some(name) = device_name(t) {
            let slaves = std::fs::read_dir(format!("/sys/class/block/{name}/slaves"))
                .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
                .unwrap_or_else(|_| Vec::new());
            for n in std::iter::once(name).chain(slaves) {
                if !names.contains(&n) {
                    names.push(n);
                }
            }
        }
    }
    names
}

/// The kernel's name of the device holding `path` (or of `path`, a block device).
fn device_name(path: &Path) -> Option<String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let probe = if path.exists() { path.to_path_buf() } else { path.parent()?.to_path_buf() };
    let meta = std::fs::metadata(&probe).ok()?;
    let dev = if meta.file_type().is_block_device() { meta.rdev() } else { meta.dev() };
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    if major == 0 {
        return None; // tmpfs, overlay, and other filesystems without a block device
    }
    let link = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    Some(link.file_name()?.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iostat_figures_from_two_readings() {
        let a = parse(" 254  0 vda 100 0 800 50 10 0 80 20 0 100 70 0 0 0 0\n");
        let b = parse(" 254  0 vda 300 5 2400 250 110 3 1680 520 2 600 820 0 0 0 0\n");
        let s: BTreeMap<_, _> = iostat(&a["vda"], &b["vda"], 2.0).into_iter().collect();
        assert_eq!(s["r_s"], 100.0);
        assert_eq!(s["w_s"], 50.0);
        assert_eq!(s["rkB_s"], 400.0); // 1600 sectors of 512 bytes over 2 s
        assert_eq!(s["wkB_s"], 400.0);
        assert_eq!(s["areq_sz_kB"], 1600.0 / 300.0);
        assert_eq!(s["r_await_ms"], 1.0);
        assert_eq!(s["w_await_ms"], 5.0);
        assert_eq!(s["aqu_sz"], 0.375);
        assert_eq!(s["util_pct"], 25.0);
    }

    #[test]
    fn the_device_under_a_directory_is_found() {
        // the test's own directory sits on some filesystem; if it has a block device,
        // /proc/diskstats knows it by the same name
        let here = std::env::current_dir().unwrap();
        for name in devices_of(&[here]) {
            assert!(read_all().contains_key(&name), "{name} is not in /proc/diskstats");
        }
        assert!(devices_of(&[PathBuf::from("/proc")]).is_empty());
    }
}
