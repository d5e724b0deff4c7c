//! Checks of an IO workload (one fathom's engine or fio runs): its profile overlaid on
//! the defaults, each key's value checked against the others it depends on.

use super::checker::{Checker, Layers, pick};
use crate::error::{Error, Result};
use crate::scenario::file::Profile;
use crate::scenario::limits;
use crate::scenario::model::{Arrival, Bound, Crc, EngineKind, IoProfile, Kind, Placement, Queue, Rw, Workload, Zones};
use crate::scenario::pattern::{BlockSizes, Content, DataSpec, Distribution};
use crate::scenario::program;
use crate::scenario::text::{PLAIN_TEXT, plain_text};
use crate::scenario::units::{Jobs, Size, Span};
use std::path::PathBuf;
use std::time::Duration;

impl Checker<'_> {
    /// The data keys: `compress_percent`, `dedupe_percent`, `zero` and `crc`.
    fn data_spec(&self, name: &str, p: &Profile, d: &Profile) -> Result<DataSpec> {
        let l = Layers { name, own: p, defaults: d };
        let (compress, compress_at) = pick!(l, compress_percent);
        let (dedupe, dedupe_at) = pick!(l, dedupe_percent);
        let dedupe = dedupe.unwrap_or(0);
        let (zero, zero_at) = pick!(l, zero);
        let zero = zero.unwrap_or(false);
        let crc = pick!(l, crc).0 == Some(Crc::Crc32c);
        if compress.is_some_and(|c| c > 99) {
            return Err(self.fail(&compress_at, "must be 0-99: the share of each block that compresses away"));
        }
        if dedupe > 100 {
            return Err(self.fail(&dedupe_at, "is not a percentage (0-100)"));
        }
        if zero && compress.is_some() {
            return Err(self.fail(&zero_at, "zeros are not compression: set `zero` or `compress_percent`, not both"));
        }
        if crc && (zero || dedupe > 0) {
            let path = if zero { zero_at } else { dedupe_at };
            return Err(self.fail(&path, "a crc header makes every block unique and non-zero: drop `crc` or this key"));
        }
        let content = match (zero, compress) {
            (true, _) => Content::Zero,
            (false, Some(c)) if c > 0 => Content::Compressible(c),
            _ => Content::Random,
        };
        Ok(DataSpec { content, dedupe_percent: dedupe, crc })
    }

    /// `bs`, `bssplit` or `bsrange`, from the workload if it sets one, else from the
    /// defaults; with the path of the key they came from.
    fn block_sizes(&self, name: &str, p: &Profile, d: &Profile) -> Result<(BlockSizes, Vec<String>)> {
        let keys = |p: &Profile| {
            [("bs", p.bs.is_some()), ("bssplit", p.bssplit.is_some()), ("bsrange", p.bsrange.is_some())]
                .into_iter()
                .filter_map(|(key, set)| set.then_some(key))
                .collect::<Vec<&str>>()
        };
        let (profile, mut path): (&Profile, Vec<String>) =
            if keys(p).is_empty() { (d, vec!["defaults".into()]) } else { (p, vec!["workloads".into(), name.into()]) };
        if let [first, second, ..] = keys(profile)[..] {
            path.push(second.into());
            return Err(self.fail(&path, format!("set one of `bs`, `bssplit` and `bsrange`, not `{first}` too")));
        }
        match (profile.bs, &profile.bssplit, &profile.bsrange) {
            (_, Some(split), _) => {
                path.push("bssplit".into());
                let split = BlockSizes::parse_split(split).map_err(|e| self.fail(&path, e))?;
                Ok((split, path))
            }
            (_, _, Some(range)) => {
                path.push("bsrange".into());
                let range = BlockSizes::parse_range(range).map_err(|e| self.fail(&path, e))?;
                Ok((range, path))
            }
            (bs, _, _) => {
                path.push("bs".into());
                Ok((BlockSizes::single(bs.map_or(4096, |b| b.0)), path))
            }
        }
    }

    /// `io_size`, `loops` and `number_ios`: how much IO ends the workload by itself, if
    /// any of them is set. `largest_block`: a pass smaller than one block moves nothing.
    fn bound(&self, l: &Layers, largest_block: u64, extend: bool, on_hosts: bool) -> Result<Option<Bound>> {
        let (io_size, io_size_at) = pick!(l, io_size);
        let (loops, loops_at) = pick!(l, loops);
        let (number_ios, ios_at) = pick!(l, number_ios);
        if let Some(s) = io_size
            && s.0 < largest_block
        {
            let block = Size(largest_block).human();
            return Err(
                self.fail(&io_size_at, format!("{s} is less than one block ({block}): a pass would move nothing"))
            );
        }
        if loops == Some(0) {
            return Err(self.fail(&loops_at, "must be at least 1 (passes over `io_size` or the working set)"));
        }
        if number_ios == Some(0) {
            return Err(self.fail(&ios_at, "must be at least 1 (IOs each worker issues before it ends)"));
        }
        if io_size.is_none() && loops.is_none() && number_ios.is_none() {
            return Ok(None);
        }
        let at = match (io_size, loops) {
            (Some(_), _) => io_size_at,
            (None, Some(_)) => loops_at.clone(),
            (None, None) => ios_at,
        };
        if extend && loops.is_some() && io_size.is_none() {
            return Err(self.fail(&loops_at, "an appending workload has no working set to pass over: set `io_size`"));
        }
        if on_hosts {
            return Err(self.fail(&at, "a workload on hosts runs for its duration: bound workloads on this host only"));
        }
        // `number_ios` alone bounds IOs only; `io_size` or `loops` bound bytes too
        let passes = (io_size.is_some() || loops.is_some()).then(|| loops.unwrap_or(1));
        Ok(Some(Bound { io_size: io_size.map(|s| s.0), passes, number_ios, capped: false }))
    }

    /// Overlays a workload on the defaults and checks each value.
    /// `run_for`: the duration the timeline gives the workload, over its own.
    /// The keys are checked in the order a reader meets them, so the first error is the
    /// first wrong key.
    pub(super) fn workload(&self, name: &str, p: &Profile, d: &Profile, run_for: Option<Duration>) -> Result<Workload> {
        let l = Layers { name, own: p, defaults: d };
        if let (Some(program_name), _) = pick!(l, driver) {
            return self.program_workload(name, &program_name, p, d, run_for);
        }
        self.known_keys(&["workloads", name], p, false)?;
        let (engine, engine_at) = pick!(l, engine);
        let engine = self.io_engine(engine.as_deref(), &engine_at)?;
        let placement = self.hosts(&l, engine)?;
        // with an inventory, a workload that names no hosts runs on all of them (placed
        // once its `jobs` are known: they are its workers on each host)
        let every_host = placement.is_none() && self.on_hosts && engine != EngineKind::Fio;
        let (targets, queue) = self.targets(&l, engine, placement.is_some() || every_host)?;
        let (rw, mix) = self.rw(&l)?;
        let (bs, direct) = self.checked_block_sizes(&l)?;
        let (random_percent, distribution) = self.randomness(&l, rw)?;
        let (offset, iodepth) = self.offset_and_depth(&l, direct)?;
        let (workers, group) = self.workers(&l, placement.is_some())?;
        let mut placement = placement.or_else(|| every_host.then(|| Self::every_host(workers)));
        self.host_targets(&l, placement.as_mut())?;
        let (size, size_percent) = self.working_set(&l, bs.max())?;
        let (rate, mbps, per_host_rate) = self.rates(&l, &bs, placement.is_some())?;
        let (arrival, think_time) = self.pacing(&l, rate.is_some() || per_host_rate.is_some())?;
        let (fsync_every, fdatasync) = self.syncs(&l, rw, mix)?;
        let data = self.data_spec(name, p, d)?;
        let (prefill, extend, keep) = self.appending(&l, rw, targets.len())?;
        let zones = self.zones(&l, bs.max(), extend)?;
        let randommap = self.random_map(&l, rw, &bs, (random_percent, &distribution), zones.is_some())?;
        if engine == EngineKind::Fio {
            self.refused_by_fio(&l, &data, extend, &engine_at)?;
        }
        let (duration, ramp, bound) = self.timing(&l, run_for, bs.max(), extend, placement.is_some())?;
        let file = self.file_name(&l)?;
        Ok(Workload {
            name: name.to_string(),
            workers,
            group,
            engine: Some(engine),
            duration,
            ramp,
            placement,
            kind: Kind::Io(IoProfile {
                targets: targets.iter().map(PathBuf::from).collect(),
                queue: queue.unwrap_or(Queue::Shared),
                file,
                rw,
                rwmixread: mix.unwrap_or(50),
                bs,
                random_percent: random_percent.unwrap_or(100),
                distribution,
                randommap,
                offset: if extend { 0 } else { offset },
                iodepth,
                size: if extend { None } else { size.map(|s| s.0) },
                size_percent: if extend { None } else { size_percent },
                direct,
                rate_iops: rate,
                rate_mbps: mbps,
                rate_iops_per_host: per_host_rate,
                arrival: arrival.unwrap_or(Arrival::Uniform),
                think_time,
                fsync_every,
                fdatasync,
                prefill,
                extend,
                keep,
                filled: false,
                stop_when_steady: None,
                data,
                zones,
                bound,
            }),
        })
    }

    /// `zonesize`, `zonerange` and `zoneskip`: fio's strided zones, which `zonesize`
    /// turns on. `largest_block`: a zone shorter than one block holds no IO.
    fn zones(&self, l: &Layers, largest_block: u64, extend: bool) -> Result<Option<Zones>> {
        let (size, size_at) = pick!(l, zonesize);
        let (range, range_at) = pick!(l, zonerange);
        let (skip, skip_at) = pick!(l, zoneskip);
        let Some(size) = size else {
            return match (range, skip) {
                (Some(_), _) => Err(self.fail(&range_at, "is the length of a zone: set `zonesize` too")),
                (None, Some(_)) => Err(self.fail(&skip_at, "is the gap between zones: set `zonesize` too")),
                (None, None) => Ok(None),
            };
        };
        if size.0 == 0 {
            return Err(self.fail(&size_at, "must be at least one byte (the IO each zone gets)"));
        }
        if extend {
            return Err(self.fail(&size_at, "an appending workload has no working set to lay zones in"));
        }
        let range = range.unwrap_or(size);
        if range.0 < largest_block {
            let block = Size(largest_block).human();
            let at = if l.own.zonerange.is_some() || l.defaults.zonerange.is_some() { range_at } else { size_at };
            return Err(self.fail(&at, format!("a zone of {range} is less than one block ({block}): no IO fits")));
        }
        Ok(Some(Zones { size: size.0, range: range.0, skip: skip.map_or(0, |s| s.0) }))
    }

    /// An error for a key that neither the workload nor the defaults set.
    /// It points at the workload, since the key has no line of its own.
    fn missing(&self, name: &str, key: &str, what: &str) -> Error {
        self.err(&["workloads", name], format!("missing `{key}`: {what} (set it here or in `defaults`)"))
    }

    /// The IO engine `engine:` names (io_uring unless it names one); a name that is not
    /// one, refused at its key with the engines there are.
    fn io_engine(&self, name: Option<&str>, at: &[String]) -> Result<EngineKind> {
        let Some(name) = name else { return Ok(EngineKind::IoUring) };
        EngineKind::named(name).ok_or_else(|| {
            let names: Vec<String> = EngineKind::ALL.iter().map(|e| e.to_string()).collect();
            let hint = crate::suggest::hint(name, names.iter().map(String::as_str));
            let others =
                program::all().filter(|p| p.keys().contains(&"engine")).map(|p| format!("`driver: {}`", p.name()));
            let others: Vec<String> = others.collect();
            let runs = match others.is_empty() {
                true => String::new(),
                false => format!(" (a program's engine goes with its `driver`: {})", others.join(", ")),
            };
            self.fail(at, format!("`{name}` is not an IO engine{hint}: one of {}{runs}", names.join(", ")))
        })
    }

    /// `hosts` and `per_host`: where the workers run, if the workload names hosts.
    /// `engine: fio` cannot be placed, since fio runs on this host only.
    fn hosts(&self, l: &Layers, engine: EngineKind) -> Result<Option<Placement>> {
        let (hosts, hosts_at) = pick!(l, hosts);
        let (per_host, per_host_at) = pick!(l, per_host);
        if per_host.is_some() && hosts.is_none() && l.own.per_host.is_some() {
            return Err(self.fail(&per_host_at, "places workers on hosts: set `hosts` too"));
        }
        match hosts {
            Some(h) if h.is_empty() => Err(self.fail(&hosts_at, "lists no host")),
            Some(_) if engine == EngineKind::Fio => Err(self.fail(&hosts_at, "`engine: fio` runs on this host only")),
            Some(h) => {
                let per_host = per_host.unwrap_or(1);
                if !(1..=1024).contains(&per_host) {
                    return Err(self.fail(&per_host_at, format!("{per_host} must be between 1 and 1024")));
                }
                let at = self.at(&hosts_at.iter().map(String::as_str).collect::<Vec<_>>());
                Ok(Some(Placement {
                    hosts: h,
                    per_host,
                    host_targets: None,
                    host_targets_at: String::new(),
                    queues: 1,
                    resolved: Vec::new(),
                    at,
                    implied: false,
                }))
            }
            None => Ok(None),
        }
    }

    /// The placement of a workload that names no hosts while an inventory is given.
    /// It runs `jobs` workers on every host, as `--hosts` asked.
    pub(super) fn every_host(jobs: u32) -> Placement {
        Placement {
            hosts: vec!["all".into()],
            per_host: jobs,
            host_targets: None,
            host_targets_at: String::new(),
            queues: 1,
            resolved: Vec::new(),
            at: "--hosts".into(),
            implied: true,
        }
    }

    /// `target` and `queue`: the paths to run against and how their IOs are queued.
    /// `on_hosts`: each host's targets come from the inventory, checked once it is known.
    fn targets(&self, l: &Layers, engine: EngineKind, on_hosts: bool) -> Result<(Vec<String>, Option<Queue>)> {
        let (target, target_at) = pick!(l, target);
        let targets = match (target, engine) {
            (Some(t), _) if t.is_empty() => return Err(self.fail(&target_at, "lists no target")),
            (Some(t), _) => t,
            (None, EngineKind::Null) => vec!["null".to_string()],
            // each host's target, from the inventory
            (None, _) if on_hosts => Vec::new(),
            (None, _) => {
                return Err(self.missing(l.name, "target", "a directory, file or block device to run against"));
            }
        };
        if let Some(bad) = targets.iter().find(|t| !plain_text(t)) {
            return Err(self.fail(&target_at, format!("{bad:?} is not a path: {}", PLAIN_TEXT)));
        }
        if let Some(dup) = targets.iter().enumerate().find(|(i, t)| targets[..*i].contains(t)) {
            return Err(self.fail(&target_at, format!("`{}` is listed twice", dup.1)));
        }
        let (queue, queue_at) = pick!(l, queue);
        // on hosts, each host's targets are known once the inventory is: `place` checks them
        if queue.is_some() && targets.len() < 2 && l.own.queue.is_some() && !on_hosts {
            return Err(self.fail(&queue_at, "only applies to a workload with several targets"));
        }
        Ok((targets, queue))
    }

    /// `rw` and `rwmixread`: which IOs the workload issues, and the share of reads.
    fn rw(&self, l: &Layers) -> Result<(Rw, Option<u32>)> {
        let (rw, _) = pick!(l, rw);
        let rw = rw.ok_or_else(|| self.missing(l.name, "rw", "one of read, write, randread, randwrite, randrw"))?;
        let (mix, mix_at) = pick!(l, rwmixread);
        if let Some(m) = mix {
            if m > 100 {
                return Err(self.fail(&mix_at, format!("{m} is not a percentage (0-100)")));
            }
            // In `defaults` it is meant for the mixed workloads only, as in fio's [global].
            if !matches!(rw, Rw::Randrw | Rw::ReadWrite) && l.own.rwmixread.is_some() {
                return Err(self.fail(&mix_at, "only applies to `rw: randrw` or `rw: rw`"));
            }
        }
        Ok((rw, mix))
    }

    /// The block sizes and `direct`, each size checked against the IO it would make.
    /// O_DIRECT needs sizes aligned to 512 bytes.
    fn checked_block_sizes(&self, l: &Layers) -> Result<(BlockSizes, bool)> {
        let (bs, bs_at) = self.block_sizes(l.name, l.own, l.defaults)?;
        let (direct, _) = pick!(l, direct);
        let direct = direct.unwrap_or(true);
        for (size, _) in bs.sizes() {
            if size == 0 || size > 64 << 20 {
                return Err(self.fail(&bs_at, format!("block size {size} must be between 1 byte and 64 MiB")));
            }
            if direct && size % 512 != 0 {
                return Err(self.fail(
                    &bs_at,
                    format!("{} is not a multiple of 512, which O_DIRECT needs (or set direct: false)", Size(size)),
                ));
            }
        }
        Ok((bs, direct))
    }

    /// `random_percent` and `distribution`: how random offsets are drawn.
    /// Both only mean something for a random `rw`.
    fn randomness(&self, l: &Layers, rw: Rw) -> Result<(Option<u32>, Distribution)> {
        let (random_percent, rp_at) = pick!(l, random_percent);
        if let Some(rp) = random_percent {
            if rp > 100 {
                return Err(self.fail(&rp_at, format!("{rp} is not a percentage (0-100)")));
            }
            if !rw.is_random() && l.own.random_percent.is_some() {
                return Err(self.fail(&rp_at, "only applies to random `rw` (randread, randwrite, randrw)"));
            }
        }
        let (distribution, dist_at) = pick!(l, distribution);
        let distribution = match distribution {
            None => Distribution::Uniform,
            Some(text) => {
                let dist: Distribution = text.parse().map_err(|e| self.fail(&dist_at, e))?;
                if !rw.is_random() && l.own.distribution.is_some() {
                    return Err(self.fail(&dist_at, "only applies to random `rw` (randread, randwrite, randrw)"));
                }
                dist
            }
        };
        Ok((random_percent, distribution))
    }

    /// `randommap`: a pass touches every block once, which holds only where random IOs
    /// are whole blocks of one size, drawn uniformly from the whole working set.
    fn random_map(
        &self,
        l: &Layers,
        rw: Rw,
        bs: &BlockSizes,
        (random_percent, distribution): (Option<u32>, &Distribution),
        zoned: bool,
    ) -> Result<bool> {
        let (randommap, at) = pick!(l, randommap);
        if randommap != Some(true) {
            return Ok(false);
        }
        let why = if !rw.is_random() {
            Some("only applies to random `rw` (randread, randwrite, randrw)".to_string())
        } else if random_percent.is_some_and(|p| p < 100) {
            Some("a pass touches every block at random offsets: leave out `random_percent`".into())
        } else if *distribution != Distribution::Uniform {
            Some(format!("a pass touches every block once, which is uniform: leave out `distribution: {distribution}`"))
        } else if !bs.is_single() {
            Some(
                "a pass touches every block once, so every IO is one block: give one `bs`, not a split or range".into(),
            )
        } else if zoned {
            Some("a pass covers the whole working set: leave out `zonesize`".into())
        } else {
            None
        };
        match why {
            Some(why) => Err(self.fail(&at, why)),
            None => Ok(true),
        }
    }

    /// `offset` and `iodepth`: where IO starts in each target, and how many IOs each
    /// worker keeps in flight.
    fn offset_and_depth(&self, l: &Layers, direct: bool) -> Result<(u64, u32)> {
        let (offset, offset_at) = pick!(l, offset);
        let offset = offset.map(|o| o.0).unwrap_or(0);
        if direct && offset % 512 != 0 {
            return Err(
                self.fail(&offset_at, format!("{} is not a multiple of 512, which O_DIRECT needs", Size(offset)))
            );
        }
        let (iodepth, depth_at) = pick!(l, iodepth);
        let iodepth = iodepth.unwrap_or(1);
        if !(1..=4096).contains(&iodepth) {
            return Err(self.fail(&depth_at, format!("{iodepth} must be between 1 and 4096")));
        }
        Ok((offset, iodepth))
    }

    /// `jobs` or `group`: how many workers run, and the group they came from if any.
    /// `placed`: the workload names hosts, where `per_host` sets the workers instead.
    fn workers(&self, l: &Layers, placed: bool) -> Result<(u32, Option<String>)> {
        let p = l.own;
        let (jobs, jobs_at) = pick!(l, jobs);
        let (group, group_at) = pick!(l, group);
        // the workload's own setting wins over one from `defaults`; both at one level clash
        let group = match (&group, jobs) {
            (Some(_), Some(_)) if p.group.is_some() == p.jobs.is_some() => {
                return Err(self.fail(&group_at, "sets the workers: set `group` or `jobs`, not both"));
            }
            (Some(_), Some(_)) if p.jobs.is_some() => None,
            _ => group,
        };
        let group_name = group.clone();
        let jobs = match (group, jobs) {
            (Some(g), _) => match self.groups.get(&g) {
                Some(found) => found.count,
                None => {
                    let known: Vec<&str> = self.groups.keys().map(String::as_str).collect();
                    let known = if known.is_empty() { "none".to_string() } else { known.join(", ") };
                    return Err(self.fail(&group_at, format!("no group named `{g}` (groups: {known})")));
                }
            },
            (_, None) => 1,
            (_, Some(Jobs::Count(n))) => n,
            (_, Some(Jobs::Cores)) if self.on_hosts => {
                return Err(self.fail(
                    &jobs_at,
                    "`cores` counts the CPUs of this machine, not of the hosts: give the workers on each host as a \
                     number",
                ));
            }
            (_, Some(Jobs::Cores)) => online_cpus(),
        };
        if !(1..=1024).contains(&jobs) {
            return Err(self.fail(&jobs_at, format!("{jobs} must be between 1 and 1024")));
        }
        if placed && p.jobs.is_some() {
            return Err(self.fail(&jobs_at, "on hosts, `per_host` sets the workers (per_host x hosts)"));
        }
        Ok((jobs, group_name))
    }

    /// `host_targets`: which of each host's inventory targets the placed workload uses.
    /// It is recorded on the placement, with where it was written.
    fn host_targets(&self, l: &Layers, placement: Option<&mut Placement>) -> Result<()> {
        let (host_targets, host_targets_at) = pick!(l, host_targets);
        // from `defaults`, meant for the placed workloads only (as `per_host`)
        match (host_targets, placement) {
            (Some(_), None) if l.own.host_targets.is_some() => {
                return Err(self.fail(&host_targets_at, "picks among its hosts' inventory targets: set `hosts` too"));
            }
            (Some(positions), Some(placed)) => {
                if positions.is_empty() {
                    return Err(self.fail(&host_targets_at, "lists no position (0 is a host's first target)"));
                }
                if let Some(dup) = positions.iter().enumerate().find(|(i, t)| positions[..*i].contains(t)) {
                    return Err(self.fail(&host_targets_at, format!("position {} is listed twice", dup.1)));
                }
                placed.host_targets_at = self.at(&host_targets_at.iter().map(String::as_str).collect::<Vec<_>>());
                placed.host_targets = Some(positions);
            }
            _ => {}
        }
        Ok(())
    }

    /// `size` or `size_percent`: the working set, in bytes or as a share of the target.
    /// `largest_block`: a working set must hold at least one block.
    fn working_set(&self, l: &Layers, largest_block: u64) -> Result<(Option<Size>, Option<u32>)> {
        let p = l.own;
        let (size, size_at) = pick!(l, size);
        let (size_percent, size_percent_at) = pick!(l, size_percent);
        // the workload's own setting wins over one from `defaults`; both at one level clash
        let (size, size_percent) = match (size, size_percent) {
            (Some(_), Some(_)) if p.size.is_some() == p.size_percent.is_some() => {
                return Err(self.fail(&size_percent_at, "set `size` or `size_percent`, not both"));
            }
            (Some(_), Some(pct)) if p.size_percent.is_some() => (None, Some(pct)),
            (Some(s), Some(_)) => (Some(s), None),
            other => other,
        };
        if let Some(pct) = size_percent
            && !(1..=100).contains(&pct)
        {
            return Err(self.fail(&size_percent_at, format!("{pct}: expected a share of the target from 1 to 100")));
        }
        if let Some(s) = size
            && s.0 < largest_block
        {
            return Err(self.fail(
                &size_at,
                format!("working set {s} is smaller than one block ({})", Size(largest_block).human()),
            ));
        }
        Ok((size, size_percent))
    }

    /// `rate_iops`, `rate_mbps` and `rate_iops_per_host`: the open-loop rates.
    /// Returns the workload's rate in IOs per second (from either key), `rate_mbps` as
    /// written, and the rate per host. `placed`: the workload runs on hosts.
    fn rates(&self, l: &Layers, bs: &BlockSizes, placed: bool) -> Result<(Option<f64>, Option<f64>, Option<f64>)> {
        let (rate, rate_at) = pick!(l, rate_iops);
        let (mbps, mbps_at) = pick!(l, rate_mbps);
        for (r, at, unit) in [(rate, &rate_at, "IOs"), (mbps, &mbps_at, "megabytes (10^6 bytes)")] {
            if let Some(r) = r
                && !(r > 0.0 && r.is_finite())
            {
                return Err(self.fail(at, format!("{r} must be a positive number of {unit} per second")));
            }
        }
        if rate.is_some() && mbps.is_some() {
            return Err(self.fail(&mbps_at, "set `rate_iops` or `rate_mbps`, not both"));
        }
        let per_host_rate = self.rate_per_host(
            l,
            placed,
            [(rate.is_some(), "rate_iops", &rate_at), (mbps.is_some(), "rate_mbps", &mbps_at)],
        )?;
        let rate = rate.or(mbps.map(|m| m * 1e6 / bs.mean()));
        if let Some(r) = rate
            && r > limits::MAX_RATE
        {
            let max = limits::MAX_RATE;
            return Err(match mbps {
                Some(m) => self.fail(
                    &mbps_at,
                    format!(
                        "{m} MB/s of {} blocks{} is {r:.0} IOs per second: at most {max} per workload",
                        Size(bs.mean().round() as u64).human(),
                        if bs.is_single() { "" } else { " (on average)" }
                    ),
                ),
                None => self.fail(&rate_at, format!("{r} IOs per second: at most {max} per workload")),
            });
        }
        Ok((rate, mbps, per_host_rate))
    }

    /// `rate_iops_per_host`: the rate of each host of a placed workload.
    /// `workload_rates`: whether each of the workload's own rate keys is set, its name and
    /// path; a rate per host and one for the whole workload clash.
    fn rate_per_host(
        &self,
        l: &Layers,
        placed: bool,
        workload_rates: [(bool, &str, &Vec<String>); 2],
    ) -> Result<Option<f64>> {
        let (per_host_rate, per_host_at) = pick!(l, rate_iops_per_host);
        if let Some(r) = per_host_rate {
            if !(r > 0.0 && r.is_finite()) {
                return Err(self.fail(&per_host_at, format!("{r} must be a positive number of IOs per second")));
            }
            if r > limits::MAX_RATE {
                let max = limits::MAX_RATE;
                return Err(self.fail(&per_host_at, format!("{r} IOs per second: at most {max} per host")));
            }
            if !placed {
                return Err(self.fail(
                    &per_host_at,
                    "only applies on hosts (`hosts:`, or --hosts): here, set `rate_iops` for the workload",
                ));
            }
            for (set, key, at) in workload_rates {
                if set {
                    return Err(self.fail(at, format!("set `{key}` or `rate_iops_per_host`, not both")));
                }
            }
        }
        Ok(per_host_rate)
    }

    /// `arrival` and `think_time`: how IOs are spaced in time.
    /// `open_loop`: a rate is set, so the schedule paces the IOs rather than think time.
    fn pacing(&self, l: &Layers, open_loop: bool) -> Result<(Option<Arrival>, Duration)> {
        let (arrival, arrival_at) = pick!(l, arrival);
        if arrival.is_some() && !open_loop && l.own.arrival.is_some() {
            return Err(self.fail(&arrival_at, "only applies with `rate_iops` or `rate_mbps` (open loop)"));
        }
        let (think, think_at) = pick!(l, think_time);
        let think_time = think.map(|t| t.0).unwrap_or_default();
        if !think_time.is_zero() && open_loop {
            return Err(self.fail(&think_at, "paces a closed loop; with a rate the schedule sets the pace"));
        }
        if think_time > limits::MAX_THINK_TIME {
            return Err(self.fail(
                &think_at,
                format!(
                    "{} is longer than a slot may wait ({}): too few IOs to measure",
                    Span(think_time),
                    Span(limits::MAX_THINK_TIME)
                ),
            ));
        }
        Ok((arrival, think_time))
    }

    /// `fsync_every` and `fdatasync`: how often, and how, written data is synced.
    fn syncs(&self, l: &Layers, rw: Rw, mix: Option<u32>) -> Result<(u32, bool)> {
        let (fsync_every, fsync_at) = pick!(l, fsync_every);
        let fsync_every = fsync_every.unwrap_or(0);
        if fsync_every > 0 && rw.read_percent(mix.unwrap_or(50)) == 100 && l.own.fsync_every.is_some() {
            return Err(self.fail(&fsync_at, "a workload that only reads has nothing to sync"));
        }
        let (fdatasync, fdatasync_at) = pick!(l, fdatasync);
        if fdatasync == Some(true) && fsync_every == 0 && l.own.fdatasync.is_some() {
            return Err(self.fail(&fdatasync_at, "chooses how `fsync_every` syncs; set `fsync_every` too"));
        }
        Ok((fsync_every, fdatasync.unwrap_or(false)))
    }

    /// `prefill`, `extend` and `keep`: whether the working set is filled first, or the
    /// workload appends to its file (and keeps what it wrote).
    /// An appending workload writes sequentially at the end of one file per job.
    fn appending(&self, l: &Layers, rw: Rw, targets: usize) -> Result<(bool, bool, bool)> {
        let p = l.own;
        let (prefill, _) = pick!(l, prefill);
        let (extend, extend_at) = pick!(l, extend);
        let extend = extend.unwrap_or(false);
        let (keep, keep_at) = pick!(l, keep);
        if keep.is_some() && !extend && p.keep.is_some() {
            return Err(self.fail(&keep_at, "keeps what an appending workload wrote: set `extend: true` too"));
        }
        if extend {
            if rw != Rw::Write {
                return Err(self.fail(&extend_at, "appends sequentially: use it with `rw: write`"));
            }
            if prefill == Some(true) {
                return Err(self.fail(&extend_at, "an appending workload has no working set to prefill"));
            }
            if targets > 1 {
                return Err(self.fail(&extend_at, "appends to one file: give it one target"));
            }
            // from `defaults`, they are meant for the other workloads
            if p.size.is_some() || p.size_percent.is_some() || p.offset.is_some() {
                return Err(self.fail(
                    &extend_at,
                    "writes from the end of the file as it grows: leave out `size`, `size_percent` and `offset`",
                ));
            }
        }
        Ok((prefill.unwrap_or(false), extend, extend && keep.unwrap_or(false)))
    }

    /// Refuses the keys `engine: fio` has with other meanings.
    /// Measuring something else under the same name would mislead.
    fn refused_by_fio(&self, l: &Layers, data: &DataSpec, extend: bool, engine_at: &[String]) -> Result<()> {
        let (_, extend_at) = pick!(l, extend);
        let crc_own = l.own.crc.is_some() || l.defaults.crc.is_none();
        let refused = [
            (
                data.crc,
                l.at("crc", crc_own),
                "fio verifies in a pass of its own (`verify=`), not as each block is read",
            ),
            (
                extend,
                extend_at,
                "fio's `file_append` writes `size` bytes past the end and then stops, whatever the duration",
            ),
        ];
        if let Some((_, path, why)) = refused.into_iter().find(|r| r.0) {
            return Err(
                self.fail(&path, format!("not available with `engine: fio`: {why} (see {})", engine_at.join(".")))
            );
        }
        Ok(())
    }

    /// `span` as a duration, refused unless it is whole seconds.
    /// fathom samples every second, so a fraction could not be measured.
    fn whole_seconds(&self, span: Span, path: &[String]) -> Result<Duration> {
        let d = span.0;
        if d.subsec_nanos() != 0 {
            return Err(
                self.fail(path, format!("{span} must be a whole number of seconds (fathom samples every second)"))
            );
        }
        Ok(d)
    }

    /// `duration`, `ramp` and the bound by IO: how long the workload runs.
    /// `run_for`: the duration the timeline gives it, over its own.
    /// A workload bound by IO may leave out `duration`: the longest run then caps it.
    fn timing(
        &self,
        l: &Layers,
        run_for: Option<Duration>,
        largest_block: u64,
        extend: bool,
        placed: bool,
    ) -> Result<(Duration, Duration, Option<Bound>)> {
        let (duration, dur_at) = pick!(l, duration);
        let mut bound = self.bound(l, largest_block, extend, placed)?;
        if let Some(b) = bound.as_mut() {
            b.capped = run_for.is_some() || duration.is_some();
        }
        let duration = match (run_for, duration) {
            (Some(d), _) => Some(d),
            (None, Some(d)) => Some(self.whole_seconds(d, &dur_at)?),
            // it ends by itself: the longest a workload may run is all that caps it
            (None, None) if bound.is_some() => None,
            (None, None) => {
                return Err(self.missing(
                    l.name,
                    "duration",
                    "how long to measure, e.g. 30s (or bound it by `io_size`, `loops` or `number_ios`)",
                ));
            }
        };
        if duration.is_some_and(|d| d.is_zero()) {
            return Err(self.fail(&dur_at, "must be at least 1s"));
        }
        let (ramp, ramp_at) = pick!(l, ramp);
        let ramp = match ramp {
            Some(r) => self.whole_seconds(r, &ramp_at)?,
            None => Duration::ZERO,
        };
        let duration = duration.unwrap_or(limits::MAX_RUN.saturating_sub(ramp));
        if ramp + duration > limits::MAX_RUN {
            let days = limits::MAX_RUN.as_secs() / 86400;
            return Err(self.fail(
                &dur_at,
                format!(
                    "ramp + duration is {} h: a workload runs at most {days} days",
                    (ramp + duration).as_secs() / 3600
                ),
            ));
        }
        Ok((duration, ramp, bound))
    }

    /// `file`: the name of the file the workload makes in each target directory.
    /// It defaults to the workload's name.
    fn file_name(&self, l: &Layers) -> Result<String> {
        let (file, file_at) = pick!(l, file);
        let file = file.unwrap_or_else(|| l.name.to_string());
        crate::scenario::text::file_name_part(&file).map_err(|why| self.fail(&file_at, why))?;
        Ok(file)
    }
}

/// The CPUs online on this machine (`jobs: cores`), at most the 1,024 workers a
/// workload may have; 1 where the kernel does not say.
fn online_cpus() -> u32 {
    // SAFETY: sysconf reads a value and has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    n.clamp(1, 1024) as u32
}
