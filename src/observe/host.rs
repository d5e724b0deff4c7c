//! The host's CPU, from /proc/stat, and fathom's own (every thread, from getrusage): the
//! evidence for "the generator was the bottleneck" and for "the host was busy with
//! something else" (steal on a VM, iowait); and the observer every run has ([`Local`]),
//! which samples them and the devices under the targets each second.

use super::diskstats;
use super::seam::{Observer, RunClock};
use crate::error::Result;
use crate::store::ObservationRow;
use crate::store::sink::{Record, Sink};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// Cumulative CPU time of all cores, in clock ticks, as /proc/stat's `cpu` line has it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTimes {
    user: u64,
    nice: u64,
    system: u64,
    idle: u64,
    iowait: u64,
    irq: u64,
    softirq: u64,
    steal: u64,
}

impl CpuTimes {
    /// Reads the first (all cores) line of /proc/stat.
    pub fn read() -> Option<CpuTimes> {
        parse(&std::fs::read_to_string("/proc/stat").ok()?)
    }

    /// Each CPU's, from /proc/stat's `cpuN` lines.
    fn read_each() -> BTreeMap<usize, CpuTimes> {
        per_cpu(&std::fs::read_to_string("/proc/stat").unwrap_or_default())
    }

    fn total(&self) -> u64 {
        self.user + self.nice + self.system + self.idle + self.iowait + self.irq + self.softirq + self.steal
    }
}

fn parse(stat: &str) -> Option<CpuTimes> {
    stat.lines().find(|l| l.starts_with("cpu ")).map(times)
}

/// The times of one /proc/stat `cpu` line (`cpu  4837498 405835 ...`, or a `cpuN` one).
fn times(line: &str) -> CpuTimes {
    let v: Vec<u64> = line.split_whitespace().skip(1).map(|f| f.parse().unwrap_or(0)).collect();
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    CpuTimes {
        user: at(0),
        nice: at(1),
        system: at(2),
        idle: at(3),
        iowait: at(4),
        irq: at(5),
        softirq: at(6),
        steal: at(7),
    }
}

/// Each CPU's times by its number, from /proc/stat's `cpuN` lines.
fn per_cpu(stat: &str) -> BTreeMap<usize, CpuTimes> {
    // `cpu3 ...`, never the all-cores line `cpu  ...`
    let number = |l: &str| l.strip_prefix("cpu")?.split_once(' ')?.0.parse::<usize>().ok();
    stat.lines().filter_map(|l| Some((number(l)?, times(l)))).collect()
}

/// The NUMA nodes under `node_dir` (`/sys/devices/system/node`), each with its CPUs (its
/// `cpulist`, `0-3,8-11`), when there are more than one: a machine of one node has
/// nothing to tell apart. A node without CPUs (memory only) is left out.
pub fn numa_nodes(node_dir: &Path) -> Vec<(usize, Vec<usize>)> {
    let mut nodes = Vec::new();
    for entry in std::fs::read_dir(node_dir).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(node) = name.strip_prefix("node").and_then(|n| n.parse::<usize>().ok()) else { continue };
        let list = std::fs::read_to_string(entry.path().join("cpulist")).unwrap_or_default();
        let cpus = cpulist(&list);
        if !cpus.is_empty() {
            nodes.push((node, cpus));
        }
    }
    nodes.sort();
    if nodes.len() < 2 { Vec::new() } else { nodes }
}

/// The CPUs of a sysfs CPU list: ranges and single CPUs, comma-separated.
fn cpulist(list: &str) -> Vec<usize> {
    let mut cpus = Vec::new();
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        let (from, to) = part.split_once('-').unwrap_or((part, part));
        if let (Ok(from), Ok(to)) = (from.trim().parse::<usize>(), to.trim().parse::<usize>()) {
            cpus.extend(from..=to);
        }
    }
    cpus
}

/// Each NUMA node's CPU busy between two per-CPU readings, as `numa_node_busy_pct{node="N"}`:
/// usr + sys (as the host's) of the node's CPUs together, in percent of them. A node's
/// CPUs at 100 % while another's idle is the imbalance a machine's mean hides.
fn numa_busy(
    nodes: &[(usize, Vec<usize>)],
    before: &BTreeMap<usize, CpuTimes>,
    after: &BTreeMap<usize, CpuTimes>,
) -> Vec<(String, f64)> {
    let sum = |times: &BTreeMap<usize, CpuTimes>, cpus: &[usize]| {
        cpus.iter().filter_map(|c| times.get(c)).fold(CpuTimes::default(), |a, t| CpuTimes {
            user: a.user + t.user,
            nice: a.nice + t.nice,
            system: a.system + t.system,
            idle: a.idle + t.idle,
            iowait: a.iowait + t.iowait,
            irq: a.irq + t.irq,
            softirq: a.softirq + t.softirq,
            steal: a.steal + t.steal,
        })
    };
    let mut out = Vec::new();
    for (node, cpus) in nodes {
        let shares = percent(&sum(before, cpus), &sum(after, cpus));
        let busy: f64 = shares.iter().filter(|(n, _)| matches!(*n, "usr_pct" | "sys_pct")).map(|(_, v)| v).sum();
        if !shares.is_empty() {
            out.push((format!("numa_node_busy_pct{{node=\"{node}\"}}"), busy));
        }
    }
    out
}

/// The host's CPU between two readings in percent of all cores, as `top` and `mpstat`
/// show it: usr (user + nice), sys (system + irq + softirq), iowait, steal, idle.
pub fn percent(before: &CpuTimes, after: &CpuTimes) -> Vec<(&'static str, f64)> {
    let total = after.total().saturating_sub(before.total()) as f64;
    if total == 0.0 {
        return Vec::new();
    }
    let d = |a: u64, b: u64| a.saturating_sub(b) as f64 * 100.0 / total;
    vec![
        ("usr_pct", d(after.user + after.nice, before.user + before.nice)),
        ("sys_pct", d(after.system + after.irq + after.softirq, before.system + before.irq + before.softirq)),
        ("iowait_pct", d(after.iowait, before.iowait)),
        ("steal_pct", d(after.steal, before.steal)),
        ("idle_pct", d(after.idle, before.idle)),
    ]
}

/// CPU time (user + system) of this process so far, every thread included, in seconds.
pub fn process_cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a struct of the type getrusage fills.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// CPU time (user + system, with that of their children that ended) of every process
/// of `programs` (kill(2) targets: `-pgid` a whole group, a pid one process), per pid
/// in clock ticks, from /proc/PID/stat. A process that ended since the last reading
/// is missing here: its last part-second is lost, never counted twice.
pub fn programs_cpu_ticks(programs: &[i32]) -> std::collections::HashMap<i32, u64> {
    let mut out = std::collections::HashMap::new();
    if programs.is_empty() {
        return out;
    }
    let Ok(dir) = std::fs::read_dir("/proc") else { return out };
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        // the command name, in parentheses, may hold spaces: count fields after it
        let Some((_, rest)) = stat.rsplit_once(')') else { continue };
        let f: Vec<&str> = rest.split_whitespace().collect();
        // f[0] is field 3: pgrp is field 5, utime..cstime fields 14 to 17
        let Some(pgrp) = f.get(2).and_then(|v| v.parse::<i32>().ok()) else { continue };
        if !programs.iter().any(|&t| t == -pgrp || t == pid) {
            continue;
        }
        let ticks: u64 = f.get(11..15).unwrap_or_default().iter().filter_map(|v| v.parse::<u64>().ok()).sum();
        out.insert(pid, ticks);
    }
    out
}

/// Seconds of CPU between two [`programs_cpu_ticks`] readings: each process's growth,
/// and all of a process that started in between.
pub fn programs_cpu_seconds(
    before: &std::collections::HashMap<i32, u64>,
    after: &std::collections::HashMap<i32, u64>,
) -> f64 {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let ticks: u64 = after.iter().map(|(pid, t)| t.saturating_sub(before.get(pid).copied().unwrap_or(0))).sum();
    ticks as f64 / hz
}

/// The huge pages processes hold, per size the kernel has any reserved in
/// (`huge_pages_used_2MB`, `huge_pages_used_1GB`): a server started with `huge_pages = on` holds its
/// shared memory there, and one that fell back (`try`) holds none.
fn huge_pages_used() -> Vec<(String, f64)> {
    let sizes = crate::meminfo::huge_pages(std::path::Path::new(crate::meminfo::HUGE_PAGES));
    let reserved = sizes.into_iter().filter(|h| h.reserved > 0);
    reserved.map(|h| (format!("huge_pages_used_{}", h.size().replace(' ', "")), h.used() as f64)).collect()
}

/// The host observer: host CPU (and each NUMA node's, on a machine of several), fathom's CPU, its programs' (source `programs`, in the
/// seconds any ran: fio, pgbench and PostgreSQL, iperf3 do the work of a driver's
/// workload, not fathom) and the figures of `devices` (as `iostat -x`) for each second
/// `[t, t+1)` of the run.
pub struct Local {
    pub devices: Vec<String>,
    /// The programs running now, as kill(2) targets.
    pub programs: fn() -> Vec<i32>,
}

impl Observer for Local {
    fn name(&self) -> &'static str {
        "observe-host"
    }

    fn observe(self: Box<Self>, sink: Sink, clock: RunClock, stop: &AtomicBool) -> Result<()> {
        let Local { devices, programs } = *self;
        let disks = || {
            let all = diskstats::read_all();
            devices.iter().filter_map(|d| all.get(d).map(|s| (d.clone(), *s))).collect::<Vec<_>>()
        };
        let (mut cpu, mut own, mut disk, mut at) = (CpuTimes::read(), process_cpu_seconds(), disks(), Instant::now());
        let mut theirs = programs_cpu_ticks(&programs());
        let nodes = numa_nodes(Path::new("/sys/devices/system/node"));
        let each = || if nodes.is_empty() { BTreeMap::new() } else { CpuTimes::read_each() };
        let mut cpus = each();
        for t in clock.start.elapsed().as_secs() + 1.. {
            if !crate::clock::sleep_until(clock.start + Duration::from_secs(t), stop) {
                return Ok(());
            }
            let (cpu_now, own_now, disk_now, now) = (CpuTimes::read(), process_cpu_seconds(), disks(), Instant::now());
            let (running, cpus_now) = (programs(), each());
            let theirs_now = programs_cpu_ticks(&running);
            let secs = now.duration_since(at).as_secs_f64();
            let row = |source: &str, name: &str, value: f64| ObservationRow {
                t: t as i64 - 1,
                source: source.to_string(),
                name: name.to_string(),
                value,
            };
            let mut rows = vec![row("fathom", "cpu_cores", (own_now - own) / secs)];
            if !running.is_empty() || !theirs.is_empty() {
                rows.push(row("programs", "cpu_cores", programs_cpu_seconds(&theirs, &theirs_now) / secs));
            }
            if let (Some(a), Some(b)) = (&cpu, &cpu_now) {
                rows.extend(percent(a, b).into_iter().map(|(n, v)| row("host", n, v)));
            }
            rows.extend(numa_busy(&nodes, &cpus, &cpus_now).into_iter().map(|(n, v)| row("host", &n, v)));
            rows.extend(huge_pages_used().into_iter().map(|(n, v)| row("host", &n, v)));
            for ((name, a), (_, b)) in disk.iter().zip(&disk_now) {
                let source = format!("device:{name}");
                rows.extend(diskstats::iostat(a, b, secs).into_iter().map(|(n, v)| row(&source, n, v)));
            }
            sink.send(Record::Observations(rows));
            (cpu, own, disk, at, theirs, cpus) = (cpu_now, own_now, disk_now, now, theirs_now, cpus_now);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_of_all_cores_add_up() {
        let a = parse("cpu  100 0 50 800 20 0 0 0 0 0\ncpu0 1 2 3\n").unwrap();
        let b = parse("cpu  160 20 70 870 30 5 5 10 0 0\n").unwrap();
        let p: std::collections::HashMap<_, _> = percent(&a, &b).into_iter().collect();
        // 200 ticks: usr 80, sys 30, iowait 10, steal 10, idle 70
        assert_eq!(p["usr_pct"], 40.0);
        assert_eq!(p["sys_pct"], 15.0);
        assert_eq!(p["iowait_pct"], 5.0);
        assert_eq!(p["steal_pct"], 5.0);
        assert_eq!(p.values().sum::<f64>(), 100.0);
        assert!(percent(&a, &a).is_empty());
    }

    /// A fake sysfs of two nodes (node 1's CPUs a list of ranges, node 2 memory only)
    /// and /proc/stat read twice: each node's busy is usr + sys of its CPUs together.
    #[test]
    fn each_numa_nodes_busy_is_its_cpus_together() {
        let root = std::env::temp_dir().join(format!("fathom-numa-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for (node, list) in [("node0", "0-1\n"), ("node1", "2,4-5\n"), ("node2", "\n")] {
            std::fs::create_dir_all(root.join(node)).unwrap();
            std::fs::write(root.join(node).join("cpulist"), list).unwrap();
        }
        std::fs::create_dir_all(root.join("power")).unwrap();
        let nodes = numa_nodes(&root);
        std::fs::write(root.join("node1").join("cpulist"), "").unwrap();
        let one = numa_nodes(&root);
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(nodes, [(0, vec![0, 1]), (1, vec![2, 4, 5])]);
        assert!(one.is_empty(), "one node with CPUs is nothing to tell apart: {one:?}");
        let before =
            per_cpu("cpu  0 0 0 0 0 0 0 0\ncpu0 0 0 0 0\ncpu1 0 0 0 0\ncpu2 0 0 0 0\ncpu4 0 0 0 0\ncpu5 0 0 0 0\n");
        // node 0: cpu0 all busy (60 user, 40 system), cpu1 idle: 100 of 200 ticks;
        // node 1: 30 user + 10 nice + 5 irq + 5 softirq of 300 ticks, the rest idle and iowait
        let after = per_cpu(
            "cpu  1 1 1 1\ncpu0 60 0 40 0 0 0 0 0\ncpu1 0 0 0 100 0 0 0 0\n\
             cpu2 30 10 0 60 0 0 0 0\ncpu4 0 0 0 50 50 5 5 0\ncpu5 0 0 0 90 0 0 0 0\nintr 5\n",
        );
        let busy = numa_busy(&nodes, &before, &after);
        assert_eq!(busy.len(), 2, "{busy:?}");
        assert_eq!(busy[0], ("numa_node_busy_pct{node=\"0\"}".to_string(), 50.0));
        assert_eq!(busy[1].0, "numa_node_busy_pct{node=\"1\"}");
        assert!((busy[1].1 - 50.0 * 100.0 / 300.0).abs() < 1e-9, "{busy:?}");
    }
}
