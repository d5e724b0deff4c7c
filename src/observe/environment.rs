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
        "cpu_topology": cpu_topology(),
        "memory_bytes": crate::meminfo::bytes("MemTotal"),
        "huge_pages": huge_pages(),
        "targets": targets,
    })
}

/// The huge pages reserved, per size (`{"2 MB": 600, "1 GB": 0}`), and the transparent
/// huge pages' mode (`madvise`): a settings study of huge pages reads as nothing without
/// them, and a server's `huge_pages = try` uses them unasked.
fn huge_pages() -> Value {
    let sizes = crate::meminfo::huge_pages(Path::new(crate::meminfo::HUGE_PAGES));
    let reserved: serde_json::Map<String, Value> = sizes.iter().map(|h| (h.size(), json!(h.reserved))).collect();
    let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").ok();
    // the mode in use is the one in brackets: `always [madvise] never`
    let mode = thp.as_deref().and_then(|t| t.split_once('[')?.1.split_once(']').map(|(m, _)| m.to_string()));
    json!({"reserved": reserved, "transparent": mode})
}

/// Which machine (or VM) this is, for this boot: hosts that answer with the same one
/// share their CPU, so a sum over hosts counts it once. Containers and local agents on
/// one kernel share it, as they share the cores.
pub fn machine() -> String {
    read("/proc/sys/kernel/random/boot_id")
}

/// This machine's CPUs' shape ([`topology`]): the controller's in the run's environment,
/// an agent's in its hello.
pub fn cpu_topology() -> Value {
    topology(Path::new("/sys/devices/system"))
}

/// The CPUs' shape, from sysfs under `system` (`/sys/devices/system`): sockets, cores
/// per socket, threads per core and NUMA nodes. The same count of CPUs is not the same
/// machine: 20 sockets of one core against one of 20, hyperthreads against cores, one
/// NUMA node against two. Null where sysfs does not say (a container may hide it).
fn topology(system: &Path) -> Value {
    let mut sockets = std::collections::BTreeSet::new();
    let mut cores = std::collections::BTreeSet::new();
    let mut threads = 0;
    for entry in std::fs::read_dir(system.join("cpu")).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if !name.strip_prefix("cpu").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())) {
            continue;
        }
        let id =
            |f: &str| std::fs::read_to_string(entry.path().join("topology").join(f)).ok()?.trim().parse::<i64>().ok();
        // an offline CPU has no topology
        let (Some(socket), Some(core)) = (id("physical_package_id"), id("core_id")) else { continue };
        sockets.insert(socket);
        cores.insert((socket, core));
        threads += 1;
    }
    let nodes = std::fs::read_dir(system.join("node")).into_iter().flatten().flatten().filter(|e| {
        let name = e.file_name().to_string_lossy().to_string();
        name.strip_prefix("node").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    });
    let nodes = nodes.count();
    if threads == 0 {
        return Value::Null;
    }
    json!({
        "sockets": sockets.len(),
        "cores_per_socket": cores.len() / sockets.len(),
        "threads_per_core": threads / cores.len(),
        "numa_nodes": (nodes > 0).then_some(nodes),
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A sysfs of 2 sockets of 2 cores of 2 threads (one CPU offline) and 2 NUMA nodes.
    #[test]
    fn the_topology_is_read_as_sockets_cores_threads_and_nodes() {
        let root = std::env::temp_dir().join(format!("fathom-topology-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let mut cpu = 0;
        for socket in 0..2 {
            for core in 0..2 {
                for _ in 0..2 {
                    let t = root.join(format!("cpu/cpu{cpu}/topology"));
                    std::fs::create_dir_all(&t).unwrap();
                    std::fs::write(t.join("physical_package_id"), format!("{socket}\n")).unwrap();
                    std::fs::write(t.join("core_id"), format!("{core}\n")).unwrap();
                    cpu += 1;
                }
            }
        }
        std::fs::create_dir_all(root.join("cpu/cpu8")).unwrap();
        std::fs::create_dir_all(root.join("cpu/cpufreq")).unwrap();
        for n in ["node0", "node1", "power"] {
            std::fs::create_dir_all(root.join("node").join(n)).unwrap();
        }
        let t = topology(&root);
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(t, json!({"sockets": 2, "cores_per_socket": 2, "threads_per_core": 2, "numa_nodes": 2}));
        assert_eq!(topology(Path::new("/nonexistent")), Value::Null);
    }
}
