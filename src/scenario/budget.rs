//! What a scenario will hold in memory, computed before anything runs, and the bounds
//! on the keys that decide it.
//!
//! A few lines of YAML can ask for more memory than any machine has: `bs: 64m` at
//! `iodepth: 4096` is 256 GiB of IO buffers, a ramp `until: 4294967295` four billion
//! workers. Found only when the allocation fails, that is an abort with a backtrace and
//! a run left `running`, or the OOM killer on a shared machine. So every scenario is
//! costed when it is loaded (`lint` and `run` alike, and each agent on its host) and
//! refused with exit 2 and the numbers when it needs more than a sane share of the
//! memory the machine has to give. The limits on the keys ([`super::limits`]) are
//! documented in docs/scenarios.md ("Limits").

use super::model::{EngineKind, Queue, Workload};
use super::steps::{Action, Step};
use super::units::Size;

/// fathom takes at most 1/SHARE of the memory available. MemAvailable counts page cache
/// the kernel can drop, and that is what a storage benchmark must leave alone (its
/// filesystem metadata, the store's SQLite pages); the kernel needs memory of its own
/// for the IO (io_uring rings, pinned O_DIRECT pages), other processes run on shared
/// machines, and the estimate below counts the big items only. Half leaves room for all
/// of that and for an estimate off by a factor of two.
const SHARE: u64 = 2;

/// A worker thread's stack as it is touched (the 2 MiB reserved is mostly never used).
const THREAD_BYTES: u64 = 64 << 10;

/// What one workload needs at most.
#[derive(Debug, Clone, PartialEq)]
pub struct Need {
    pub workload: String,
    /// Workers on one machine at the most (a ramp's `until`; on hosts, `per_host`).
    pub workers: u64,
    /// Bytes of one IO buffer (the largest block size, 4 KiB aligned); 0 when another
    /// program does the IO in its own way (pgbench, iperf3).
    pub buffer: u64,
    pub iodepth: u64,
    /// Worker threads: one per worker, or one per IO in flight with psync.
    pub threads: u64,
    /// Latency histograms (each worker's current second, the seconds the collector
    /// holds until they are written, the run's totals and each phase's summary) and
    /// worker threads' stacks.
    pub measuring: u64,
}

impl Need {
    pub fn buffers(&self) -> u64 {
        self.buffer.saturating_mul(self.iodepth).saturating_mul(self.workers)
    }

    pub fn total(&self) -> u64 {
        self.buffers().saturating_add(self.measuring)
    }
}

/// The memory fathom may use here, and where the figure comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct Available {
    pub bytes: u64,
    pub source: String,
}

impl Available {
    /// This machine's: MemAvailable, or less when fathom runs in a cgroup (a container,
    /// a systemd unit) whose `memory.max` leaves less; None where neither can be read.
    pub fn here() -> Option<Available> {
        let mem = crate::meminfo::bytes("MemAvailable")?;
        match cgroup_room() {
            Some(room) if room < mem => {
                Some(Available { bytes: room, source: "what the cgroup's memory.max leaves".into() })
            }
            _ => Some(Available { bytes: mem, source: "MemAvailable".into() }),
        }
    }
}

/// The least room (`memory.max` less `memory.current`) of this process's cgroup v2 and
/// its parents, if any of them has a limit.
fn cgroup_room() -> Option<u64> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = own.lines().find_map(|l| l.strip_prefix("0::"))?.trim().to_string();
    let mut dir = std::path::PathBuf::from("/sys/fs/cgroup").join(path.trim_start_matches('/'));
    let mut room: Option<u64> = None;
    loop {
        let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok()?.trim().parse::<u64>().ok();
        if let (Some(max), Some(current)) = (read("memory.max"), read("memory.current")) {
            let here = max.saturating_sub(current);
            room = Some(room.map_or(here, |r| r.min(here)));
        }
        if dir == std::path::Path::new("/sys/fs/cgroup") || !dir.pop() {
            return room;
        }
    }
}

/// Bytes of one latency histogram as fathom sizes them (see `metrics::new_histogram`).
fn histogram_bytes() -> u64 {
    (crate::metrics::new_histogram().distinct_values() * std::mem::size_of::<u64>()) as u64
}

/// What each workload needs, given the timeline (ramps set the workers; each ramp step
/// and each step opens a phase the summary keeps histograms for).
pub fn needs(workloads: &[Workload], steps: &[Step]) -> Vec<Need> {
    let histogram = histogram_bytes();
    let additions: u64 = steps
        .iter()
        .map(|s| match s.action {
            Action::Ramp { add, until, .. } => u64::from(until.div_ceil(add.max(1))),
            _ => 0,
        })
        .sum();
    let phases = steps.len() as u64 + additions;
    workloads
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let ramped = steps.iter().find_map(|s| match s.action {
                Action::Ramp { workload, until, .. } if workload == i => Some(until),
                _ => None,
            });
            // every worker's seconds come here; on hosts, each host holds its own buffers
            // (how many hosts is known when the run starts: one at least)
            let all = u64::from(match (ramped, &w.placement) {
                (Some(until), _) => until,
                (None, Some(p)) => p.per_host,
                (None, None) => match w.io() {
                    Some(io) if io.queue == Queue::PerTarget => w.workers.saturating_mul(io.targets.len() as u32),
                    _ => w.workers,
                },
            });
            let workers = match &w.placement {
                Some(p) => all.min(u64::from(p.per_host)),
                None => all,
            };
            // a program's worker has one operation in flight
            let iodepth = u64::from(w.io().map_or(1, |io| io.iodepth));
            // IO buffers: a program's workload has none, and `null` does no IO
            let buffer = match w.io() {
                Some(io) if w.engine != Some(EngineKind::Null) => {
                    io.bs.max().next_multiple_of(super::limits::ALIGN as u64)
                }
                _ => 0,
            };
            // a psync worker is one thread per IO in flight, each with its own recorder
            let per_worker = if w.engine == Some(EngineKind::Psync) { iodepth } else { 1 };
            let threads = workers * per_worker;
            let ops = match w.io() {
                None => 1,
                Some(io) => {
                    let reads = io.rw.read_percent(io.rwmixread);
                    u64::from(reads > 0) + u64::from(reads < 100) + u64::from(io.fsync_every > 0)
                }
            };
            // open loop keeps a service-time histogram beside the latency one
            let per_op = histogram * if w.rate().is_some() { 2 } else { 1 };
            // per thread: its stack and its second; here, for every thread of the
            // workload: two seconds waiting in the collector and their merge
            let own = THREAD_BYTES + ops * per_op;
            let collected = 3 * ops * per_op;
            // per workload: the run's totals, the latest second, each summary window
            let per_workload = (2 + 1 + phases) * ops * per_op;
            Need {
                workload: w.name.clone(),
                workers,
                buffer,
                iodepth,
                threads,
                measuring: threads
                    .saturating_mul(own)
                    .saturating_add((all * per_worker).saturating_mul(collected))
                    .saturating_add(per_workload),
            }
        })
        .collect()
}

/// The sets of workloads that may run at the same time, one per start in the timeline:
/// what runs when it starts. A start that waits ends its workload before the next step;
/// an async one runs until it is stopped or waited for (it may end sooner: counting it
/// longer errs on the safe side). So a sweep's steps, or a timeline of starts one after
/// another, are costed one at a time, and a scenario without a timeline all at once.
pub fn together(steps: &[Step]) -> Vec<Vec<usize>> {
    let mut running: Vec<usize> = Vec::new();
    let mut sets = Vec::new();
    for step in steps {
        match step.action {
            Action::Start { workload, wait, .. } | Action::Ramp { workload, wait, .. } => {
                running.push(workload);
                sets.push(running.clone());
                if wait {
                    running.retain(|&w| w != workload);
                }
            }
            // a wait_for that may time out leaves its workload running
            Action::Stop { workload } | Action::WaitFor { workload, timeout: None } => {
                running.retain(|&w| w != workload)
            }
            _ => {}
        }
    }
    sets
}

/// Refuses needs beyond 1/[`SHARE`] of `available` at the peak, the largest of the sets
/// of workloads running `together`: the index of the workload to blame (the hungriest
/// there) and a message with the numbers. Nothing is refused when the memory available
/// is unknown.
pub fn judge(needs: &[Need], together: &[Vec<usize>], available: Option<&Available>) -> Result<(), (usize, String)> {
    let Some(available) = available else { return Ok(()) };
    let allowed = available.bytes / SHARE;
    let sum = |set: &Vec<usize>| set.iter().fold(0u64, |sum, &i| sum.saturating_add(needs[i].total()));
    let Some(peak) = together.iter().max_by_key(|set| sum(set)) else { return Ok(()) };
    let total = sum(peak);
    if total <= allowed {
        return Ok(());
    }
    let worst = *peak.iter().max_by_key(|&&i| needs[i].total()).expect("over budget: a workload");
    let need = &needs[worst];
    // estimates: "256 GiB", not "256.0 GiB"
    let human = |bytes: u64| Size(bytes).human().replace(".0 ", " ");
    let mut msg = format!("needs about {} of memory: ", human(need.total()));
    if need.buffer > 0 {
        let plural = if need.workers == 1 { "" } else { "s" };
        msg.push_str(&format!(
            "IO buffers of {} x iodepth {} x {} worker{plural} = {}, and {} to measure them",
            human(need.buffer),
            need.iodepth,
            need.workers,
            human(need.buffers()),
            human(need.measuring)
        ));
        if need.threads > need.workers {
            msg.push_str(&format!(" on {} threads (psync: one per IO in flight)", need.threads));
        }
    } else {
        msg.push_str(&format!(
            "{} to measure {}",
            human(need.measuring),
            crate::metrics::format::counted(need.workers, "worker")
        ));
    }
    if peak.len() > 1 {
        let each: Vec<String> =
            peak.iter().map(|&i| format!("{} {}", needs[i].workload, human(needs[i].total()))).collect();
        msg.push_str(&format!("; with what runs beside it, {} ({})", human(total), each.join(", ")));
    }
    msg.push_str(&format!(
        ". fathom uses at most half of the memory this machine has available ({} {}): {}. \
         Lower bs, iodepth or the workers",
        available.source,
        human(available.bytes),
        human(allowed)
    ));
    Err((worst, msg))
}

/// [`needs`] of the workloads running [`together`], judged against this machine's memory.
pub fn check(workloads: &[Workload], steps: &[Step]) -> Result<(), (usize, String)> {
    judge(&needs(workloads, steps), &together(steps), Available::here().as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{Scenario, Source};

    fn load(text: &str) -> Scenario {
        Scenario::load(&Source { origin: "s.yaml".into(), text }, &[]).unwrap()
    }

    fn gib(n: u64) -> Available {
        Available { bytes: n << 30, source: "MemAvailable".into() }
    }

    #[test]
    fn buffers_are_block_size_times_depth_times_workers() {
        let s = load(
            "name: n\nworkloads:\n  a: {target: /tmp, rw: randread, bs: 1m, iodepth: 32, jobs: 4, duration: 1s}\n  \
             b: {target: /tmp, rw: write, bs: 6000, direct: false, engine: psync, iodepth: 2, duration: 1s}\n  \
             c: {engine: null, rw: read, iodepth: 64, duration: 1s}\n  \
             d: {target: /tmp, rw: write, bs: 6000, direct: false, iodepth: 2, duration: 1s}\n",
        );
        let n = needs(&s.workloads, &s.steps);
        assert_eq!(n[0].buffers(), (1 << 20) * 32 * 4);
        assert_eq!((n[1].buffer, n[1].workers), (8192, 1), "aligned to 4 KiB");
        assert_eq!(n[2].buffers(), 0, "the null engine does no IO");
        // psync: a thread (and its histograms) per IO in flight
        assert!(n[1].measuring > n[3].measuring, "{n:?}");
        assert!(n.iter().all(|w| w.measuring > 0));
    }

    #[test]
    fn ramps_count_their_last_workers_and_phases() {
        let flat = load("name: n\nworkloads:\n  w: {target: /tmp, rw: randread, duration: 1s}\n");
        let ramp = load(
            "name: n\nworkloads:\n  w: {target: /tmp, rw: randread}\ntimeline:\n  - ramp: w\n    every: 1s\n    \
             until: 64\n",
        );
        let (flat, ramp) = (&needs(&flat.workloads, &flat.steps)[0], &needs(&ramp.workloads, &ramp.steps)[0]);
        assert_eq!((flat.workers, ramp.workers), (1, 64));
        assert_eq!(ramp.buffers(), 64 * 4096);
        assert!(ramp.measuring > 64 * flat.measuring / 2, "{flat:?} {ramp:?}");
    }

    #[test]
    fn workers_on_hosts_hold_their_buffers_there() {
        let s = load(
            "name: n\nworkloads:\n  w: {rw: randread, bs: 1m, iodepth: 2, hosts: all, per_host: 8}\ntimeline:\n  \
             - ramp: w\n    add_host: 1\n    every: 1s\n    until: 4\n",
        );
        let n = &needs(&s.workloads, &s.steps)[0];
        assert_eq!((n.workers, n.threads), (8, 8), "one host's");
        assert_eq!(n.buffers(), 8 * (2 << 20));
        // the seconds of all 32 workers come here
        let one_host = load(
            "name: n\nworkloads:\n  w: {rw: randread, bs: 1m, iodepth: 2, hosts: all, per_host: 8, duration: 1s}\n",
        );
        assert!(n.measuring > 2 * needs(&one_host.workloads, &one_host.steps)[0].measuring, "{n:?}");
    }

    #[test]
    fn what_exceeds_half_the_memory_is_refused_with_the_numbers() {
        let mut s = load(
            "name: n\nworkloads:\n  small: {target: /tmp, rw: read, duration: 1s}\n  \
             big: {target: /tmp, rw: randread, bs: 64m, duration: 1s}\n",
        );
        // (loading checks against this machine: deepen the queue after)
        s.workloads[1].io_mut().unwrap().iodepth = 4096;
        let n = needs(&s.workloads, &s.steps);
        let both = together(&s.steps);
        let (blamed, msg) = judge(&n, &both, Some(&gib(24))).unwrap_err();
        assert_eq!(blamed, 1);
        assert!(
            msg.starts_with("needs about 256 GiB of memory: IO buffers of 64 MiB x iodepth 4096 x 1 worker = 256 GiB")
        );
        assert!(msg.contains("with what runs beside it, 256 GiB (small "), "{msg}");
        assert!(msg.contains("(MemAvailable 24 GiB): 12 GiB"), "{msg}");
        // the same fits a machine with twice as much to give; unknown memory refuses nothing
        assert!(judge(&n, &both, Some(&gib(513))).is_ok());
        assert!(judge(&n, &both, None).is_ok());
    }

    #[test]
    fn workloads_count_together_only_when_they_run_together() {
        let three = |timeline: &str| {
            let s = load(&format!(
                "name: n\nworkloads:\n  a: {{target: /tmp, rw: read, duration: 1s}}\n  \
                 b: {{target: /tmp, rw: read, duration: 1s}}\n  c: {{target: /tmp, rw: read, duration: 1s}}\n{timeline}"
            ));
            together(&s.steps)
        };
        assert_eq!(three(""), vec![vec![0], vec![0, 1], vec![0, 1, 2]], "no timeline: all at once");
        let one_by_one = three("timeline:\n  - start: a\n  - start: b\n  - start: c\n");
        assert_eq!(one_by_one, vec![vec![0], vec![1], vec![2]]);
        let beside = three("timeline:\n  - start: a\n    async: true\n  - start: b\n  - stop: a\n  - start: c\n");
        assert_eq!(beside, vec![vec![0], vec![0, 1], vec![2]]);
        // 3 GiB each fit 8 GiB one at a time, not together
        let half = Need { workload: "x".into(), workers: 1, buffer: 3 << 30, iodepth: 1, threads: 1, measuring: 0 };
        let needs = [half.clone(), half.clone(), half];
        assert!(judge(&needs, &one_by_one, Some(&gib(8))).is_ok());
        assert!(judge(&needs, &beside, Some(&gib(8))).is_err());
    }

    #[test]
    fn every_builtin_fits_a_small_machine() {
        for (name, _) in crate::scenario::builtin::list() {
            let text = crate::scenario::builtin::find(name).unwrap();
            let s = Scenario::load(&Source { origin: name.into(), text }, &[]).unwrap();
            let total: u64 = needs(&s.workloads, &s.steps).iter().map(Need::total).sum();
            assert!(total < 1 << 30, "{name} needs {}", Size(total).human());
        }
    }

    #[test]
    fn absurd_values_are_refused_at_their_key() {
        let err = |key: &str| {
            let text = format!("name: n\nworkloads:\n  w: {{target: /tmp, rw: randread, {key}}}\n");
            Scenario::load(&Source { origin: "s.yaml".into(), text: &text }, &[]).unwrap_err().to_string()
        };
        assert!(
            err("duration: 1s, rate_iops: 1e8")
                .starts_with("s.yaml:3: workloads.w.rate_iops: 100000000 IOs per second")
        );
        assert!(err("duration: 1s, think_time: 90m").starts_with("s.yaml:3: workloads.w.think_time: 90m is longer"));
        assert!(err("duration: 1s, ramp: 800h").contains("ramp + duration is 800 h: a workload runs at most 30 days"));
        let e = err("duration: 1000h");
        assert!(e.starts_with("s.yaml:3: workloads.w.duration: ramp + duration is 1000 h"), "{e}");
        let pg = "name: n\nworkloads:\n  db: {driver: pgbench, duration: 1s, rate: 2e7}\n";
        let e = Scenario::load(&Source { origin: "s.yaml".into(), text: pg }, &[]).unwrap_err().to_string();
        assert!(
            e.contains("workloads.db.rate: 20000000 must be a positive number of transactions per second, at most")
        );
    }

    #[test]
    fn this_machine_has_some_memory_to_give() {
        let here = Available::here().expect("Linux has /proc/meminfo");
        assert!(here.bytes > 0, "{here:?}");
    }
}
