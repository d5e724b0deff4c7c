//! The environment a run measured: fathom version, kernel, CPU, memory, and each
//! target's filesystem and device. A number without this is not reproducible.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};

pub fn capture(targets: &[PathBuf]) -> Value {
    let mut unique: Vec<&PathBuf> = Vec::new();
    for t in targets {
        if !unique.contains(&t) {
            unique.push(t);
        }
    }
    let targets: Vec<Value> = unique.into_iter().map(|t| target(t)).collect();
    json!({
        "fathom_version": env!("CARGO_PKG_VERSION"),
        "fathom_build": env!("BUILD_IDENTITY"),
        "hostname": read("/proc/sys/kernel/hostname"),
        "machine": machine(),
        "kernel": format!("{} {}", read("/proc/sys/kernel/ostype"), read("/proc/sys/kernel/osrelease")),
        "os": os_name(),
        "cpu_model": field("/proc/cpuinfo", "model name"),
        "cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "memory_bytes": crate::meminfo::bytes("MemTotal"),
        "targets": targets,
    })
}

/// Which machine (or VM) this is, for this boot: hosts that answer with the same one
/// share their CPU, so a sum over hosts counts it once. Containers and local agents on
/// one kernel share it, as they share the cores.
pub fn machine() -> String {
    read("/proc/sys/kernel/random/boot_id")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default().trim().to_string()
}

/// The value of the first `key: value` line of a /proc file.
fn field(path: &str, key: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()?.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key).then(|| v.trim().to_string())
    })
}

fn os_name() -> Option<String> {
    std::fs::read_to_string("/etc/os-release")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME=").map(|v| v.trim_matches('"').to_string()))
}

/// Filesystem, mount point and device of a target, from /proc/self/mountinfo; a block
/// device target is its own device.
fn target(path: &Path) -> Value {
    use std::os::unix::fs::FileTypeExt;
    if std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device()) {
        return json!({ "path": path.display().to_string(), "device": path.display().to_string() });
    }
    let canonical = std::fs::canonicalize(path)
        .or_else(|_| path.parent().map(std::fs::canonicalize).unwrap_or(Ok(path.to_path_buf())))
        .unwrap_or_else(|_| path.to_path_buf());
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    // fields: id parent maj:min root mountpoint opts [optional...] - fstype source superopts
    let best = mountinfo
        .lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let mountpoint = left.split(' ').nth(4)?.replace("\\040", " ");
            let mut r = right.split(' ');
            let fstype = r.next()?.to_string();
            let source = r.next()?.to_string();
            canonical.starts_with(&mountpoint).then_some((mountpoint, fstype, source))
        })
        .max_by_key(|(m, _, _)| m.len());
    match best {
        Some((mountpoint, fstype, source)) => json!({
            "path": path.display().to_string(),
            "filesystem": fstype,
            "mountpoint": mountpoint,
            "device": source,
        }),
        None => json!({ "path": path.display().to_string() }),
    }
}
