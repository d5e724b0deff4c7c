//! The agents of one run: placements resolved against the inventory, every host used
//! connected (in parallel) and its workloads laid out before the run clock starts, and
//! at the end, each told to leave. A host that cannot be reached stops the run before it
//! starts; one lost during the run is noted and the others go on.

use super::protocol::{Command, Reply};
use super::remote::{Lags, Remote};
use super::{Host, Inventory};
use crate::error::{Error, Result};
use crate::metrics::Sample;
use crate::scenario::limits::MAX_WORKERS;
use crate::scenario::model::Placement;
use crate::scenario::steps::Action;
use crate::scenario::{Override, Queue, Scenario, Workload};
use crate::store::sink::{Record, Sink};
use crate::store::{EventRow, ObservationRow};
use indexmap::IndexMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long an agent may take to lay out or fill a workload's files.
const PREPARE_TIMEOUT: Duration = Duration::from_secs(3600);

#[derive(Default)]
pub struct Fleet {
    /// Connected agents by host name, in inventory order.
    pub remotes: IndexMap<String, Arc<Remote>>,
    /// Lag of each sample from its second's end to its arrival here, in ms.
    pub lags: Lags,
    /// The run clock's second 0 in our Unix ms, once it has started (for the lags).
    pub clock_unix_ms: Arc<Mutex<i64>>,
    /// Per placed workload (by index), whether every host opened its files with
    /// O_DIRECT, as the agents said: what its start line says was opened.
    pub direct: std::collections::BTreeMap<usize, bool>,
    /// The thread that watches the agents during the run, and its stop flag.
    watcher: Mutex<Option<(Arc<AtomicBool>, std::thread::JoinHandle<()>)>>,
    /// Where what the agents observe goes (the run's sink), until they have left.
    sink: Mutex<Option<Sink>>,
    /// What programs on the hosts recorded of their figures (sources `SOURCE@HOST`).
    programs: Mutex<Vec<ObservationRow>>,
}

/// How often the agents' clocks are measured again during a run.
const CLOCK_EVERY: Duration = Duration::from_secs(10);

/// Whether any workload of `scenario` is placed on hosts.
pub fn placed(scenario: &Scenario) -> bool {
    scenario.workloads.iter().any(|w| w.placement.is_some())
}

/// Resolves each placed workload's hosts in the inventory, setting its `jobs` to
/// `per_host` times them, and returns every host used (what [`Fleet::start`] connects
/// to). Run and lint call it before anything else, so a scenario that cannot be placed
/// (no `--hosts`, a selector that matches nothing) is refused at the line of its `hosts`.
pub fn place<'a>(scenario: &mut Scenario, inventory: Option<&'a Inventory>) -> Result<Vec<&'a Host>> {
    let mut used: Vec<&Host> = Vec::new();
    if !placed(scenario) {
        return Ok(used);
    }
    let Some(inventory) = inventory else {
        let p = scenario.workloads.iter().find_map(|w| w.placement.as_ref()).expect("placed");
        return Err(Error::input(format!(
            "{}: runs on hosts (`{}`): give the inventory with --hosts FILE (see docs/hosts.md)",
            p.at,
            p.hosts.join(", ")
        )));
    };
    for (i, w) in scenario.workloads.iter_mut().enumerate() {
        let Some(p) = &w.placement else { continue };
        let hosts = inventory.select(&p.hosts).map_err(|e| Error::input(format!("{}: {e}", p.at)))?;
        let queues = match w.program() {
            // a program placed runs its own server and clients on each host: no files
            Some(_) => {
                for h in &hosts {
                    if !used.iter().any(|u| u.name == h.name) {
                        used.push(h);
                    }
                }
                1
            }
            None => {
                // of fathom's engines, those with a back end run on other hosts
                let Some(backend) = w.engine.and_then(crate::engine::backend) else {
                    return Err(Error::input(format!("{}: `{}` runs on this host only", w.name, w.runner())));
                };
                let per_target = w.io().is_some_and(|io| io.queue == Queue::PerTarget);
                host_queues(w, p, &hosts, per_target, backend.needs_file(), &mut used)?
            }
        };
        let Some(p) = &mut w.placement else { continue };
        p.resolved = hosts.iter().map(|h| h.name.clone()).collect();
        p.queues = queues;
        w.workers = p.workers_per_host() * p.resolved.len() as u32;
        if w.workers > MAX_WORKERS {
            return Err(Error::input(format!(
                "{}: {} hosts of {} workers each is {}: a workload has at most {MAX_WORKERS} workers",
                w.name,
                p.resolved.len(),
                p.workers_per_host(),
                w.workers
            )));
        }
        let hosts = p.resolved.len() as f64;
        if let Some(io) = w.io_mut()
            && let Some(r) = io.rate_iops_per_host
        {
            io.rate_iops = Some(r * hosts);
        }
        // a ramp by hosts adds each host's workers: on every target with `per_target`
        for step in &mut scenario.steps {
            if let Action::Ramp { workload, add, until, by_host: true, .. } = &mut step.action
                && *workload == i
            {
                *add *= queues;
                *until *= queues;
            }
        }
    }
    Ok(used)
}

/// How many queues each host of a placed workload runs (its targets, with
/// `queue: per_target`; else 1), adding its hosts to `used`. A host without a target
/// for a workload that needs one, or hosts with different numbers of targets for
/// per-target queues, are bad input.
fn host_queues<'a>(
    w: &Workload,
    p: &Placement,
    hosts: &[&'a Host],
    per_target: bool,
    needs_file: bool,
    used: &mut Vec<&'a Host>,
) -> Result<u32> {
    let mut queues: Option<(usize, &str)> = None;
    for h in hosts {
        let targets = targets_on(w, p, h)?;
        if targets.is_empty() && needs_file {
            return Err(Error::input(format!(
                "{}: host {} has no `target` in the inventory and the workload none of its own",
                w.name, h.name
            )));
        }
        // workers are dealt to hosts in blocks of one size: each host's queues alike
        match queues {
            Some((n, other)) if per_target && n != targets.len() => {
                return Err(Error::input(format!(
                    "{}: `queue: per_target` on hosts needs as many targets on each: host {} uses {n}, host {} \
                     {} (pick them with `host_targets`)",
                    w.name,
                    other,
                    h.name,
                    targets.len()
                )));
            }
            Some(_) => {}
            None => queues = Some((targets.len(), &h.name)),
        }
        if !used.iter().any(|u| u.name == h.name) {
            used.push(h);
        }
    }
    Ok(if per_target { queues.map_or(1, |(n, _)| n.max(1) as u32) } else { 1 })
}

/// The targets workload `w` uses on host `h`: those of the host's inventory `target`
/// list that `host_targets` picks (every one without it), else the workload's own. A
/// position the host does not have is bad input, naming the host, its targets and the
/// workload, found before anything is laid out.
fn targets_on(w: &Workload, p: &Placement, h: &Host) -> Result<Vec<String>> {
    let Some(listed) = &h.spec.target else {
        if p.host_targets.is_some() {
            return Err(Error::input(format!(
                "{}: host {} has no `target` in the inventory to pick from (workload {})",
                p.host_targets_at, h.name, w.name
            )));
        }
        return Ok(w.io().into_iter().flat_map(|io| &io.targets).map(|t| t.display().to_string()).collect());
    };
    let Some(positions) = &p.host_targets else { return Ok(listed.clone()) };
    positions
        .iter()
        .map(|&i| {
            listed.get(i).cloned().ok_or_else(|| {
                Error::input(format!(
                    "{}: workload {}: host {} has no target at position {i}: its targets are {} (positions 0 to {})",
                    p.host_targets_at,
                    w.name,
                    h.name,
                    listed.join(", "),
                    listed.len() - 1
                ))
            })
        })
        .collect()
}

/// Each placed workload's targets on each of its hosts, one line each (what `fathom
/// lint --hosts` shows): `w on node1: /mnt/d2, /mnt/d3, one queue across`.
pub fn targets_by_host(scenario: &Scenario, inventory: &Inventory) -> Result<Vec<String>> {
    let mut lines = Vec::new();
    for w in &scenario.workloads {
        let (Some(p), Some(io)) = (&w.placement, w.io()) else { continue };
        for h in inventory.hosts.iter().filter(|h| p.resolved.contains(&h.name)) {
            let targets = targets_on(w, p, h)?;
            let queue = io.queue.describe(targets.len());
            let workers = crate::metrics::format::counted(p.workers_per_host(), "worker");
            lines.push(format!("{} on {}: {}{queue}, {workers}", w.name, h.name, targets.join(", ")));
        }
    }
    Ok(lines)
}

/// Whether connecting failed because the host's fathom is missing or of another
/// version: what `--push-agent` mends by copying this one there.
fn missing_or_other_version(e: &Error) -> bool {
    let said = e.to_string();
    said.contains("is not on that host") || said.contains("its fathom is")
}

impl Fleet {
    /// Connects to every host `used` (what [`place`] returned for `scenario`) and lays
    /// out each workload there. `sets` are the `--set`s the scenario was loaded with:
    /// agents load it the same way.
    pub fn start(
        scenario: &Scenario,
        used: &[&Host],
        sets: &[Override],
        push: bool,
        samples: &Sender<Sample>,
        stop: &AtomicBool,
        progress: &dyn Fn(&str),
    ) -> Result<Fleet> {
        let mut fleet = Fleet::default();
        if used.is_empty() {
            return Ok(fleet);
        }
        progress(&format!("connecting to {} host{}", used.len(), if used.len() == 1 { "" } else { "s" }));
        for r in fleet.connect_all(used, push, samples) {
            let remote = r?;
            progress(&format!(
                "  {} ({}): clock offset {:+.1} ms, round trip {:.1} ms, {} cores",
                remote.host.name,
                remote.host.transport_name(),
                remote.offset_ms,
                remote.rtt_ms,
                remote.cores
            ));
            fleet.remotes.insert(remote.host.name.clone(), Arc::new(remote));
        }
        for w in &scenario.workloads {
            if let Some(p) = w.placement.as_ref().filter(|p| p.implied) {
                let each = crate::metrics::format::counted(p.per_host, "worker");
                progress(&format!(
                    "  {}: no `hosts:` in the scenario: on every host of the inventory ({}), {each} each, on each \
                     host's targets",
                    w.name,
                    p.resolved.join(", ")
                ));
            }
        }
        fleet.send_prepares(scenario, sets)?;
        fleet.await_prepared(scenario, stop, progress)?;
        Ok(fleet)
    }

    /// Connects to every host at once, in their order.
    /// With `push`, a host whose fathom is missing or of another version gets this one
    /// copied there, and is tried again.
    fn connect_all(&self, used: &[&Host], push: bool, samples: &Sender<Sample>) -> Vec<Result<Remote>> {
        std::thread::scope(|s| {
            let handles: Vec<_> = used
                .iter()
                .map(|h| {
                    let (tx, zero, lags) = (samples.clone(), self.clock_unix_ms.clone(), self.lags.clone());
                    s.spawn(move || {
                        let first = Remote::connect(h, &h.program(), tx.clone(), zero.clone(), lags.clone());
                        match first {
                            // missing, or another version: copy this one there and try again
                            Err(e) if push && missing_or_other_version(&e) => {
                                let pushed = h.push_agent()?;
                                Remote::connect(h, &pushed, tx, zero, lags)
                            }
                            other => other,
                        }
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(Error::input("connecting panicked")))).collect()
        })
    }

    /// Asks each host of each placed workload to lay it out.
    /// All are asked before any answer is awaited, so the hosts lay out at once.
    fn send_prepares(&self, scenario: &Scenario, sets: &[Override]) -> Result<()> {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        for (idx, w) in scenario.workloads.iter().enumerate() {
            let Some(p) = &w.placement else { continue };
            for name in &p.resolved {
                let remote = &self.remotes[name];
                let targets = targets_on(w, p, &remote.host)?;
                remote
                    .send(&Command::Prepare {
                        idx,
                        origin: scenario.origin.clone(),
                        text: scenario.text.clone(),
                        sets: sets.clone(),
                        workload: w.name.clone(),
                        targets,
                        rate_iops: w.rate(),
                    })
                    .map_err(Error::into_input)?;
            }
        }
        Ok(())
    }

    /// Waits for each host to say where it laid out each placed workload, and whether
    /// it opened the files with O_DIRECT. An error or a lost host stops the run.
    fn await_prepared(&mut self, scenario: &Scenario, stop: &AtomicBool, progress: &dyn Fn(&str)) -> Result<()> {
        for (idx, w) in scenario.workloads.iter().enumerate() {
            let Some(p) = &w.placement else { continue };
            for name in &p.resolved {
                let remote = &self.remotes[name];
                let answer = answer(remote, stop, |r| match r {
                    Reply::Prepared { idx: i, files, direct } if *i == idx => Some(Ok((files.clone(), *direct))),
                    Reply::Error { idx: Some(i), message } if *i == idx => Some(Err(message.clone())),
                    _ => None,
                })?;
                match answer {
                    Some(Ok((files, direct))) => {
                        let on: Vec<String> = files.iter().map(|(p, _)| p.clone()).collect();
                        match w.program() {
                            Some(_) => progress(&format!("  {name}: {} readied (its server and database)", w.name)),
                            None => progress(&format!("  {}: {} laid out on {}", name, w.name, on.join(", "))),
                        }
                        // an agent that does not say is taken at the scenario's word
                        let asked = w.io().is_some_and(|io| io.direct);
                        let all = self.direct.entry(idx).or_insert(true);
                        *all &= direct.unwrap_or(asked);
                    }
                    Some(Err(e)) => return Err(Error::input(format!("host {name}: {}: {e}", w.name))),
                    None => return Err(Error::input(format!("host {name}: lost while laying out {}", w.name))),
                }
            }
        }
        Ok(())
    }

    /// Fills workload `idx`'s files on each of `hosts` at once (a timeline `prefill` or
    /// `zero` step on a placed workload: its files are there, not here). The first
    /// host's error, if any; [`Error::Interrupted`] once `stop` is set.
    pub fn fill(&self, idx: usize, hosts: &[String], zero: bool, stop: &AtomicBool) -> Result<()> {
        for name in hosts {
            self.remotes[name].send(&Command::Fill { idx, zero })?;
        }
        for name in hosts {
            let filled = answer(&self.remotes[name], stop, |r| match r {
                Reply::Filled { idx: i, error } if *i == idx => Some(error.clone()),
                Reply::Error { idx: Some(i), message } if *i == idx => Some(Some(message.clone())),
                _ => None,
            })?;
            match filled {
                Some(None) => {}
                Some(Some(e)) => return Err(Error::failed(format!("host {name}: {e}"))),
                None => return Err(Error::failed(format!("host {name}: lost while filling"))),
            }
        }
        Ok(())
    }

    /// Watches the agents during the run: stores what each observes of its host as it
    /// comes ([`Fleet::store_observed`]), and measures every agent's clock offset and
    /// round trip again every 10 s (source `host:NAME`) so a drifting clock shows;
    /// samples stay aligned by the offset measured at the start.
    pub fn watch(self: &Arc<Self>, sink: Sink, clock_start: Instant) {
        if self.remotes.is_empty() {
            return;
        }
        *self.sink.lock().unwrap_or_else(|e| e.into_inner()) = Some(sink.clone());
        let stop = Arc::new(AtomicBool::new(false));
        let (fleet, flag) = (self.clone(), stop.clone());
        let handle = std::thread::spawn(move || {
            let mut next = clock_start + CLOCK_EVERY;
            while !flag.load(Ordering::Relaxed) {
                fleet.store_observed(&sink);
                if Instant::now() < next {
                    std::thread::sleep(Duration::from_millis(100));
                    continue;
                }
                let t = clock_start.elapsed().as_secs() as i64;
                let mut rows = Vec::new();
                for r in fleet.remotes.values().filter(|r| !r.gone()) {
                    if let Ok((offset, rtt)) = r.measure_clock() {
                        let source = format!("host:{}", r.host.name);
                        rows.push(ObservationRow {
                            t,
                            source: source.clone(),
                            name: "clock_offset_ms".into(),
                            value: offset,
                        });
                        rows.push(ObservationRow { t, source, name: "rtt_ms".into(), value: rtt });
                    }
                }
                sink.send(Record::Observations(rows));
                next += CLOCK_EVERY;
            }
        });
        *self.watcher.lock().unwrap_or_else(|e| e.into_inner()) = Some((stop, handle));
    }

    /// Tells every agent to leave and waits for them (then their samples are all in),
    /// and stores what they observed last. The run's sink, while the run's own
    /// writing goes on: for what the hosts' figures add up to.
    pub fn leave(&self) -> Option<Sink> {
        if let Some((stop, handle)) = self.watcher.lock().unwrap_or_else(|e| e.into_inner()).take() {
            stop.store(true, Ordering::Relaxed);
            let _ = handle.join();
        }
        std::thread::scope(|s| {
            for r in self.remotes.values() {
                s.spawn(move || r.leave());
            }
        });
        if let Some(sink) = self.sink.lock().unwrap_or_else(|e| e.into_inner()).take() {
            // the agents' last lines are read once their output ends
            let until = Instant::now() + Duration::from_secs(1);
            while Instant::now() < until && self.remotes.values().any(|r| !r.gone()) {
                std::thread::sleep(Duration::from_millis(10));
            }
            self.store_observed(&sink);
            return Some(sink);
        }
        None
    }

    /// What programs on the hosts recorded of their figures, each row's source
    /// `SOURCE@HOST` (`tpcc:oltp@node1`).
    pub fn program_figures(&self) -> Vec<ObservationRow> {
        self.programs.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Sends what the agents observed of their hosts so far to `sink`, each row's source
    /// named after its host: `fathom:HOST` (the agent's CPU), `host:HOST` (the host's
    /// CPU), `device:NAME@HOST`, a program's `SOURCE@HOST`; and what their programs
    /// recorded as events, labelled `LABEL@HOST`.
    fn store_observed(&self, sink: &Sink) {
        for r in self.remotes.values() {
            let host = &r.host.name;
            while let Some(reply) = r.take(Duration::ZERO, |reply| match reply {
                Reply::Observed { .. } | Reply::Event { .. } => Some(reply.clone()),
                _ => None,
            }) {
                let rows = match reply {
                    Reply::Observed { rows } => rows,
                    Reply::Event { event } => {
                        sink.send(Record::Event(EventRow { label: format!("{}@{host}", event.label), ..event }));
                        continue;
                    }
                    _ => continue,
                };
                let mut programs = Vec::new();
                let rows = rows
                    .into_iter()
                    .map(|row| {
                        let source = match row.source.as_str() {
                            "fathom" | "host" => format!("{}:{host}", row.source),
                            device if device.starts_with("device:") => format!("{device}@{host}"),
                            program => {
                                let source = format!("{program}@{host}");
                                programs.push(ObservationRow { source: source.clone(), ..row.clone() });
                                source
                            }
                        };
                        ObservationRow { source, ..row }
                    })
                    .collect();
                self.programs.lock().unwrap_or_else(|e| e.into_inner()).extend(programs);
                sink.send(Record::Observations(rows));
            }
        }
    }

    /// Hosts lost during the run, with when.
    pub fn lost(&self) -> Vec<(String, Instant)> {
        self.remotes
            .values()
            .filter_map(|r| r.lost_at.lock().unwrap_or_else(|e| e.into_inner()).map(|at| (r.host.name.clone(), at)))
            .collect()
    }
}

/// Waits for the reply `pick` takes from `remote` (laying out or filling, which may take
/// long): None when the agent is gone or an hour passed; a Ctrl-C meanwhile ends the
/// wait ([`Error::Interrupted`]), and leaving then tells the agent to stop.
fn answer<T>(remote: &Remote, stop: &AtomicBool, mut pick: impl FnMut(&Reply) -> Option<T>) -> Result<Option<T>> {
    let since = Instant::now();
    loop {
        let answer = remote.take(Duration::from_millis(100), &mut pick);
        if answer.is_some() || remote.gone() || since.elapsed() >= PREPARE_TIMEOUT {
            return Ok(answer);
        }
        if stop.load(Ordering::Relaxed) {
            return Err(Error::Interrupted);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Source;

    fn placed(scenario: &str, inventory: &str) -> Result<Scenario> {
        let inventory = Inventory::parse("h.yaml", inventory)?;
        let mut s = Scenario::load(&Source { origin: "s.yaml".into(), text: scenario }, &[])?;
        place(&mut s, Some(&inventory))?;
        Ok(s)
    }

    const DISKS: &str = "hosts:\n  a: {transport: local, target: [/d/a0, /d/a1, /d/a2]}\n  \
                         b: {transport: local, target: [/d/b0, /d/b1]}\n";

    #[test]
    fn per_target_runs_per_host_workers_on_each_host_target() {
        let text = "name: x\nworkloads:\n  w: {rw: read, hosts: all, per_host: 2, host_targets: [0, 1], queue: per_target, \
                    duration: 2s}\ntimeline:\n  - ramp: w\n    add_host: 1\n    every: 1s\n    until: 2\n";
        let s = placed(text, DISKS).unwrap();
        let w = &s.workloads[0];
        let p = w.placement.as_ref().unwrap();
        assert_eq!((p.queues, p.workers_per_host(), w.workers), (2, 4, 8));
        assert_eq!((p.host_of(3), p.host_of(4)), ("a", "b"));
        // a ramp by hosts adds a host's workers on every target
        assert!(matches!(s.steps[0].action, Action::Ramp { add: 4, until: 8, .. }), "{:?}", s.steps[0].action);
        // a shared queue: per_host workers, across the targets
        let s = placed(&text.replace("per_target", "shared"), DISKS).unwrap();
        assert_eq!((s.workloads[0].placement.as_ref().unwrap().queues, s.workloads[0].workers), (1, 4));
    }

    #[test]
    fn per_target_needs_as_many_targets_on_each_host() {
        // every target of each host (no `host_targets`): three on a, two on b
        let text = "name: x\nworkloads:\n  w: {rw: read, hosts: all, queue: per_target, duration: 2s}\n";
        let err = placed(text, DISKS).err().unwrap().to_string();
        assert!(err.contains("host a uses 3, host b 2"), "{err}");
        assert!(placed(&text.replace("per_target", "shared"), DISKS).is_ok());
        let lines = targets_by_host(
            &placed(&text.replace("per_target", "shared"), DISKS).unwrap(),
            &Inventory::parse("h.yaml", DISKS).unwrap(),
        )
        .unwrap();
        assert_eq!(
            lines,
            [
                "w on a: /d/a0, /d/a1, /d/a2, one queue across, 1 worker",
                "w on b: /d/b0, /d/b1, one queue across, 1 worker"
            ]
        );
    }
}
