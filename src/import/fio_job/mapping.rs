//! From fio's jobs to fathom's scenario: one workload per job, named after it, each
//! option turned into the profile key that means the same (and said out loud, for
//! `fathom lint`), `stonewall`/`wait_for`/`startdelay` into the timeline. The result is
//! scenario YAML, loaded by the one scenario loader, so `--set` and every check apply.

use super::job_order::timeline;
use super::options::{IGNORED, SUPPORTED, engine_refusal, refusal};
use super::reader::{Job, Opt};
use super::semantics::{back_end, beyond, direct, refuse, rw};
use super::values::{Pair, Unit, in_dir, list, number, pair, percent, quote, split_paths, trim_float};
use crate::error::Result;
use crate::scenario::model::Rw;
use crate::scenario::pattern::BlockSizes;

/// The jobs of a file as fathom's workloads and timeline, with what each option became.
#[derive(Debug, Clone)]
pub struct Mapping {
    pub workloads: Vec<Mapped>,
    /// Timeline steps in YAML flow form; empty when every job starts at once.
    pub timeline: Vec<String>,
    /// Options accepted without effect on what is measured, each once.
    pub ignored: Vec<String>,
}

/// One job as a workload: its profile keys (YAML values) and, option by option as the
/// job has them, what each became.
#[derive(Debug, Clone)]
pub struct Mapped {
    pub name: String,
    /// Its files or devices (the `target` key), as `--target` may replace them.
    pub targets: Vec<String>,
    pub keys: Vec<(&'static str, String)>,
    pub became: Vec<(String, String)>,
}

/// Maps every job, refusing the file at the first option fathom cannot honour.
pub fn map(jobs: &[Job]) -> Result<Mapping> {
    let mut ignored: Vec<String> = Vec::new();
    let mut workloads = Vec::new();
    for job in jobs {
        for o in &job.options {
            if IGNORED.contains(&o.name.as_str()) {
                if !ignored.contains(&o.name) {
                    ignored.push(o.name.clone());
                }
                continue;
            }
            // refused as what it is, not sent on to `--engine fio`, which refuses it too
            beyond(o)?;
            if let Some(why) = refusal(&o.name) {
                return Err(refuse(o, why));
            } else if !SUPPORTED.contains(&o.name.as_str()) {
                let near = crate::suggest::hint(&o.name, SUPPORTED.iter().chain(IGNORED).copied());
                return Err(refuse(o, &format!("an option fathom does not know{near}")));
            }
        }
        workloads.push(JobMap::new(job)?.run()?);
    }
    Ok(Mapping { workloads, timeline: timeline(jobs)?, ignored })
}

impl Mapping {
    /// Every workload on `target`: one `--target` for the whole file, as `fathom run`
    /// applies it (`--set target=`), so `convert` prints what `run` runs.
    pub fn all_on(&mut self, target: &std::path::Path) {
        let path = format!("[{}]", quote(&target.display().to_string()));
        for w in &mut self.workloads {
            w.keys.iter_mut().filter(|(k, _)| *k == "target").for_each(|(_, v)| *v = path.clone());
        }
    }

    /// The scenario as YAML text, named `name`.
    pub fn yaml(&self, name: &str) -> String {
        let mut out = format!("name: {}\nworkloads:\n", quote(name));
        for w in &self.workloads {
            out.push_str(&format!("  {}:\n", quote(&w.name)));
            for (k, v) in &w.keys {
                out.push_str(&format!("    {k}: {v}\n"));
            }
        }
        if !self.timeline.is_empty() {
            out.push_str("timeline:\n");
            for step in &self.timeline {
                out.push_str(&format!("  - {step}\n"));
            }
        }
        out
    }

    /// The mapping as `fathom lint` prints it: workload by workload, each option and
    /// what it became; then the timeline and the ignored options, once.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        for w in &self.workloads {
            out.push_str(&format!("workload {}:\n", w.name));
            let width = w.became.iter().map(|(o, _)| o.chars().count()).max().unwrap_or(0).min(40);
            for (option, became) in &w.became {
                out.push_str(&format!("  {option:width$}  ->  {became}\n"));
            }
        }
        if !self.timeline.is_empty() {
            out.push_str(&format!("timeline: {}\n", self.timeline.join(", ")));
        }
        if !self.ignored.is_empty() {
            out.push_str(&format!("ignored (they change no measurement): {}\n", self.ignored.join(", ")));
        }
        out
    }
}

/// The block sizes fathom's engine would run `job` with (its `bs`, `bssplit` or
/// `bsrange` read as the mapping reads them; fio's default 4 KiB when none applies), so
/// that a section fio runs as written is labelled with them; `None` where the mapping
/// refuses them (different sizes for reads and writes).
pub(super) fn block_sizes_of(job: &Job) -> Option<BlockSizes> {
    let mut m = JobMap::new(job).ok()?;
    m.block_sizes().ok()?;
    match m.keys.iter().find(|(k, _)| matches!(*k, "bs" | "bssplit" | "bsrange")) {
        // `bssplit` and `bsrange` are quoted as YAML strings
        Some((_, v)) => BlockSizes::parse(&serde_json::from_str::<String>(v).unwrap_or_else(|_| v.clone())).ok(),
        None => Some(BlockSizes::single(4096)),
    }
}

/// One job being mapped: the job, the keys so far and what each option became. Options
/// with more than a line of mapping have their own files (`think.rs`, `sizes.rs`); the
/// ones that map one to one are in `simple.rs`.
pub(super) struct JobMap<'a> {
    pub(super) job: &'a Job,
    kb_base: u64,
    pub(super) rw: Rw,
    pub(super) keys: Vec<(&'static str, String)>,
    became: Vec<(String, String)>,
    pub(super) targets: Vec<String>,
}

impl<'a> JobMap<'a> {
    fn new(job: &'a Job) -> Result<Self> {
        let kb_base = match job.get("kb_base") {
            None => 1024,
            Some(o) => match o.text()?.trim() {
                "1024" => 1024,
                "1000" => 1000,
                v => return Err(o.err(format!("`{v}`: expected 1024 or 1000"))),
            },
        };
        let rw = rw(job)?;
        Ok(JobMap { job, kb_base, rw, keys: Vec::new(), became: Vec::new(), targets: Vec::new() })
    }

    pub(super) fn opt(&self, name: &str) -> Option<&'a Opt> {
        self.job.get(name)
    }

    /// Records what `o` became (shown by `fathom lint`).
    pub(super) fn said(&mut self, o: &Opt, became: impl Into<String>) {
        let written = match &o.value {
            Some(v) => format!("{}={v}", o.written),
            None => o.written.clone(),
        };
        self.became.push((written, became.into()));
    }

    pub(super) fn key(&mut self, key: &'static str, value: impl Into<String>) -> String {
        let value = value.into();
        self.keys.push((key, value.clone()));
        format!("{key}: {value}")
    }

    pub(super) fn size(&self, o: &Opt, text: &str) -> Result<u64> {
        number(text, Unit::Size(self.kb_base)).map(|v| v as u64).map_err(|e| o.err(e))
    }

    pub(super) fn count(&self, o: &Opt) -> Result<u64> {
        number(o.text()?, Unit::Count).map(|v| v as u64).map_err(|e| o.err(e))
    }

    /// A percentage, refused past fio's range (see [`percent`]).
    pub(super) fn percent(&self, o: &Opt) -> Result<u64> {
        percent(o.text()?).map_err(|e| o.err(e))
    }

    /// Whole seconds of a time option (fathom's clock has whole seconds).
    fn seconds(&self, o: &Opt) -> Result<u64> {
        let us = number(o.text()?, Unit::Time).map_err(|e| o.err(e))?;
        if us % 1e6 != 0.0 {
            return Err(o.err("fathom's workloads start and end on whole seconds: give a whole number of seconds"));
        }
        Ok((us / 1e6) as u64)
    }

    fn reads(&self) -> bool {
        self.rw.read_percent(50) > 0
    }

    fn writes(&self) -> bool {
        self.rw.read_percent(50) < 100
    }

    /// The one value of a `read,write` pair this job's directions use; different values
    /// for directions it both uses are refused (fathom has one per workload).
    pub(super) fn one_of(&self, o: &Opt, p: &Pair) -> Result<Option<String>> {
        let used: Vec<&String> = [(self.reads(), &p.read), (self.writes(), &p.write)]
            .into_iter()
            .filter_map(|(used, v)| used.then_some(v.as_ref()).flatten())
            .collect();
        match used.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(one.to_string())),
            [r, w] if r == w => Ok(Some(r.to_string())),
            _ => Err(refuse(o, "different values for reads and writes: fathom has one per workload")),
        }
    }

    fn run(mut self) -> Result<Mapped> {
        let job = self.job;
        let s = self.key("rw", self.rw.name());
        if let Some(o) = self.opt("rw") {
            self.said(o, s);
        }
        self.mix()?;
        self.engine_and_depth()?;
        self.think()?;
        self.block_sizes()?;
        self.targets()?;
        self.rates()?;
        for o in &job.options {
            self.simple(o)?;
        }
        self.random_map()?;
        self.time()?;
        Ok(Mapped { name: job.name.clone(), keys: self.keys, became: self.became, targets: self.targets })
    }

    /// fio's random map, on unless `norandommap`: a pass touches every block once. It
    /// becomes `randommap` where fathom's holds, each random IO one block of one size
    /// drawn uniformly from the whole working set; elsewhere offsets are drawn with
    /// replacement, as with `norandommap`.
    fn random_map(&mut self) -> Result<()> {
        let off = self.opt("norandommap").map(Opt::flag).transpose()?.unwrap_or(false);
        let holds = |(key, value): &(&str, String)| match *key {
            "bssplit" | "bsrange" | "zonesize" => false,
            "distribution" => value.trim_matches('"') == "uniform",
            "random_percent" => value == "100",
            _ => true,
        };
        if self.rw.is_random() && !off && self.keys.iter().all(holds) {
            self.key("randommap", "true");
        }
        Ok(())
    }

    fn mixed(&self) -> bool {
        matches!(self.rw, Rw::Randrw | Rw::ReadWrite)
    }

    /// `rwmixread`/`rwmixwrite`, unless per-direction rates set the read share.
    fn mix(&mut self) -> Result<()> {
        if let (Some(_), Some(o)) = (self.opt("rwmixread"), self.opt("rwmixwrite")) {
            self.said(o, "nothing: rwmixread gives the share");
        }
        let name = if self.opt("rwmixread").is_some() { "rwmixread" } else { "rwmixwrite" };
        if let Some(o) = self.opt(name) {
            let v = self.percent(o)?;
            let read = if name == "rwmixread" { v } else { 100 - v };
            if !self.mixed() {
                self.said(o, "nothing: the job does not mix reads and writes");
            } else if self.rate_pair()?.is_some_and(|(r, w)| r.is_some() && w.is_some()) && self.rates_by_direction() {
                self.said(o, "nothing: the per-direction rates set the read share");
            } else {
                let s = self.key("rwmixread", read.to_string());
                self.said(o, s);
            }
        }
        Ok(())
    }

    fn engine_and_depth(&mut self) -> Result<()> {
        let direct = self.direct()?;
        let depth = match self.opt("iodepth") {
            Some(o) => match self.count(o)? {
                0 => return Err(o.err("must be at least 1")),
                n => n,
            },
            None => 1,
        };
        // fio's default is buffered IO, fathom's O_DIRECT: always say which
        self.key("direct", direct.to_string());
        let (engine, one_at_a_time) = match self.opt("ioengine") {
            None => back_end(None, direct).expect("fio's default engine has a back end"),
            Some(o) => {
                let e = o.text()?.trim();
                back_end(Some(e), direct).ok_or_else(|| refuse(o, &engine_refusal(e)))?
            }
        };
        let s = self.key("engine", engine);
        if let Some(o) = self.opt("ioengine") {
            let text = o.text()?.trim().to_string();
            let s = match text.as_str() {
                "mmap" => format!("{s} (pread/pwrite in place of memory-mapped IO)"),
                "posixaio" | "libaio" => format!("{s} (fathom's asynchronous back end)"),
                _ => s,
            };
            self.said(o, s);
        }
        let depth = if one_at_a_time.is_some() { 1 } else { depth };
        let s = self.key("iodepth", depth.to_string());
        match (self.opt("iodepth"), one_at_a_time) {
            (Some(o), Some(why)) => self.said(o, format!("{s}: {why}")),
            (Some(o), None) => self.said(o, s),
            _ => {}
        }
        Ok(())
    }

    pub(super) fn direct(&self) -> Result<bool> {
        direct(self.job)
    }

    /// `bs`, `bsrange` and `bssplit`: fio draws from the split when there is one, else
    /// from the range, else `bs`.
    fn block_sizes(&mut self) -> Result<()> {
        let split = self.opt("bssplit").is_some();
        let range = self.opt("bsrange").is_some();
        if let Some(o) = self.opt("bs").filter(|_| split || range) {
            let by = if split { "bssplit" } else { "bsrange" };
            self.said(o, format!("nothing: {by} sets the sizes, as in fio"));
        } else if let Some(o) = self.opt("bs") {
            let chosen = self.one_of(o, &pair(o.text()?).map_err(|e| o.err(e))?)?;
            if let Some(v) = chosen {
                let bytes = self.size(o, &v)?;
                let s = self.key("bs", bytes.to_string());
                self.said(o, s);
            }
        }
        if let Some(o) = self.opt("bsrange").filter(|_| split) {
            self.said(o, "nothing: bssplit sets the sizes, as in fio");
        } else if let Some(o) = self.opt("bsrange") {
            self.bs_range(o)?;
        }
        if let Some(o) = self.opt("bssplit") {
            let chosen = self.one_of(o, &pair(o.text()?).map_err(|e| o.err(e))?)?;
            if let Some(v) = chosen {
                let split = self.bssplit(o, &v)?;
                let s = self.key("bssplit", quote(&split));
                self.said(o, s);
            }
        }
        Ok(())
    }

    /// fio's `SIZE/PERCENT:...` in bytes, a blank percentage sharing what is left evenly.
    fn bssplit(&self, o: &Opt, text: &str) -> Result<String> {
        let mut parts = Vec::new();
        for part in text.split(':').filter(|p| !p.trim().is_empty()) {
            let (size, pct) = part.split_once('/').unwrap_or((part, ""));
            let pct = match pct.trim() {
                "" => None,
                p => Some(number(p, Unit::Count).map_err(|e| o.err(e))?),
            };
            parts.push((self.size(o, size)?, pct));
        }
        let given: f64 = parts.iter().filter_map(|p| p.1).sum();
        let blank = parts.iter().filter(|p| p.1.is_none()).count();
        let share = if blank > 0 { ((100.0 - given) / blank as f64).max(0.0) } else { 0.0 };
        let out: Vec<String> = parts.iter().map(|(s, p)| format!("{s}/{}", p.unwrap_or(share))).collect();
        Ok(out.join(":"))
    }

    /// `filename` (`a:b`: several targets) and `directory` with `nrfiles`.
    fn targets(&mut self) -> Result<()> {
        let dirs: Vec<String> = match self.opt("directory") {
            Some(o) => split_paths(o.text()?),
            None => Vec::new(),
        };
        // `filesize` is each file's size; beside it `size` is the bytes the job moves
        let filesize = match self.opt("filesize") {
            Some(o) => Some(self.file_size(o)?),
            None => None,
        };
        let mut size = match self.opt("size") {
            Some(o) if filesize.is_none() => self.working_set(o)?,
            _ => None,
        };
        let targets: Vec<String> = if let Some(o) = self.opt("filename") {
            let names = split_paths(o.text()?);
            let dir = dirs.first().map(String::as_str);
            let t: Vec<String> = names.iter().map(|n| in_dir(dir, n)).collect();
            let s = self.key("target", list(&t));
            self.said(o, s);
            t
        } else if !dirs.is_empty() {
            let o = self.opt("directory").expect("directory given");
            let files = match self.opt("nrfiles") {
                Some(n) => self.count(n)?.max(1),
                None => 1,
            };
            let t: Vec<String> = if files == 1 {
                // a trailing `/` keeps it a directory: one that does not exist is refused,
                // never laid out as a file of that name
                dirs.iter().map(|d| format!("{}/", d.trim_end_matches('/'))).collect()
            } else {
                // fio's own names for a job's files: JOB.0.N
                (0..files)
                    .map(|i| in_dir(Some(&dirs[i as usize % dirs.len()]), &format!("{}.0.{i}", self.job.name)))
                    .collect()
            };
            if let Some(s) = size.as_mut()
                && files > 1
            {
                *s /= files;
            }
            let s = self.key("target", list(&t));
            self.said(o, s);
            if let Some(n) = self.opt("nrfiles") {
                let each = if filesize.is_some() { "filesize".to_string() } else { format!("1/{files} of size") };
                self.said(n, format!("{files} targets in one shared queue, each {each}"));
            }
            t
        } else {
            let t = vec![".".to_string()];
            self.key("target", list(&t));
            t
        };
        if targets.len() > 1 {
            self.key("queue", "shared");
        }
        let files = targets.len() as u64;
        self.targets = targets;
        if let (Some(each), Some(f)) = (filesize, self.opt("filesize")) {
            let s = self.key("size", each.to_string());
            self.said(f, format!("{s} (each target)"));
            if let Some(o) = self.opt("size") {
                self.size_beside_filesize(o, each * files)?;
            }
        } else if let Some(o) = self.opt("size") {
            match size {
                Some(bytes) => {
                    let s = self.key("size", bytes.to_string());
                    self.said(o, s);
                }
                None => match self.size_percent(o)? {
                    Some(pct) => {
                        let s = self.key("size_percent", pct.to_string());
                        self.said(o, format!("{s} (of each target as it is when laid out)"));
                    }
                    None => self.said(o, "nothing: all of each target"),
                },
            }
        }
        Ok(())
    }

    /// `size` in bytes; none for a share of the target (`size_percent`).
    fn working_set(&self, o: &Opt) -> Result<Option<u64>> {
        let text = o.text()?.trim();
        match text.ends_with('%') {
            true => Ok(None),
            false => self.size(o, text).map(Some),
        }
    }

    /// The per-job IO rate by direction: from `rate_iops` (IOs/s) or `rate` (bytes/s).
    fn rate_pair(&self) -> Result<Option<(Option<f64>, Option<f64>)>> {
        let (o, unit) = match (self.opt("rate_iops"), self.opt("rate")) {
            (Some(_), Some(b)) => return Err(b.err("fathom asks one rate: give `rate_iops` or `rate`, not both")),
            (Some(o), None) => (o, Unit::Count),
            (None, Some(o)) => (o, Unit::Size(self.kb_base)),
            (None, None) => return Ok(None),
        };
        let p = pair(o.text()?).map_err(|e| o.err(e))?;
        let value = |v: &Option<String>| v.as_deref().map(|v| number(v, unit).map_err(|e| o.err(e))).transpose();
        let read = if self.reads() { value(&p.read)? } else { None };
        let write = if self.writes() { value(&p.write)? } else { None };
        Ok(Some((read, write)))
    }

    /// `rate_iops`/`rate`: per job in fio, so times `numjobs`; per direction, so summed,
    /// the read share following them. One value on a mixed job caps each direction: the
    /// larger share reaches it first.
    fn rates(&mut self) -> Result<()> {
        let Some((read, write)) = self.rate_pair()? else { return Ok(()) };
        let o = self.opt("rate_iops").or(self.opt("rate")).expect("a rate was given");
        let jobs = match self.opt("numjobs") {
            Some(n) => self.count(n)?.max(1) as f64,
            None => 1.0,
        };
        let single = !self.rates_by_direction();
        let per_job = match (read, write) {
            (Some(r), Some(_)) if self.mixed() && single => {
                let share = self.rw.read_percent(self.read_share()) as f64;
                r * 100.0 / share.max(100.0 - share)
            }
            (Some(r), Some(w)) => {
                if self.mixed() && r + w > 0.0 {
                    let share = (r * 100.0 / (r + w)).round();
                    self.key("rwmixread", share.to_string());
                }
                r + w
            }
            (Some(_), None) | (None, Some(_)) if self.mixed() => {
                return Err(refuse(o, "a rate for one direction of a mixed job: fathom paces the workload as a whole"));
            }
            (Some(v), None) | (None, Some(v)) => v,
            (None, None) => return Ok(()),
        };
        let total = per_job * jobs;
        let (key, value) = match o.name.as_str() {
            "rate" => ("rate_mbps", total / 1e6),
            _ => ("rate_iops", total),
        };
        let s = self.key(key, trim_float(value));
        let how = match (self.mixed() && !single, jobs > 1.0) {
            (true, true) => " (per-direction rates summed, read share following them; per job, times numjobs)",
            (true, false) => " (per-direction rates summed, read share following them)",
            (false, true) => " (per job in fio, times numjobs)",
            (false, false) => "",
        };
        let mix = if self.mixed() && !single {
            format!(", rwmixread: {}", self.keys.iter().rev().find(|k| k.0 == "rwmixread").map_or("", |k| &k.1))
        } else {
            String::new()
        };
        self.said(o, format!("{s}{mix}{how}"));
        Ok(())
    }

    /// Whether the rate is written per direction (`rate_iops=500,200`), not one value
    /// for each.
    fn rates_by_direction(&self) -> bool {
        let o = self.opt("rate_iops").or(self.opt("rate"));
        o.and_then(|o| o.value.as_deref()).is_some_and(|v| v.contains(','))
    }

    /// The job's rwmixread as written (50 when not).
    fn read_share(&self) -> u32 {
        let read = self.opt("rwmixread").and_then(|o| o.value.as_deref()?.trim().parse().ok());
        let write = self.opt("rwmixwrite").and_then(|o| o.value.as_deref()?.trim().parse::<u32>().ok());
        read.or(write.map(|w| 100 - w.min(100))).unwrap_or(50)
    }

    /// `runtime` (with `time_based` or without) and `ramp_time`. Without `time_based`
    /// fio runs one pass over `size` (or `io_size`, `loops` times, or `number_ios` IOs),
    /// `runtime` capping it: fathom's bounded workloads do the same.
    fn time(&mut self) -> Result<()> {
        if let Some(o) = self.opt("ramp_time") {
            let s = self.key("ramp", format!("{}s", self.seconds(o)?));
            self.said(o, s);
        }
        let time_based = self.opt("time_based").map(Opt::flag).transpose()?.unwrap_or(false);
        let runtime = match self.opt("runtime") {
            Some(o) => Some((o, self.seconds(o)?)).filter(|(_, secs)| *secs > 0),
            None => None,
        };
        if let Some(o) = self.opt("time_based") {
            self.said(
                o,
                match (time_based, runtime) {
                    (false, _) => "nothing",
                    (true, Some(_)) => "a run for `runtime`",
                    // X-Ray's files leave the runtime to the harness that runs them
                    (true, None) => "a run as long as `--set duration=...` says (the file gives no runtime)",
                },
            );
        }
        if let Some((o, secs)) = runtime {
            let s = self.key("duration", format!("{secs}s"));
            self.said(o, if time_based { s } else { format!("{s} (a cap, as fio's runtime without time_based)") });
        }
        let bounds = ["io_size", "loops", "number_ios"];
        if time_based {
            let job = self.job;
            for o in bounds.iter().filter_map(|b| job.get(b)) {
                self.said(o, "nothing: time_based runs for runtime");
            }
            return Ok(());
        }
        if let Some(o) = self.opt("io_size") {
            let s = self.key("io_size", self.size(o, o.text()?)?.to_string());
            self.said(o, s);
        }
        if let Some(o) = self.opt("number_ios") {
            let s = self.key("number_ios", self.count(o)?.to_string());
            self.said(o, s);
        }
        match self.opt("loops") {
            Some(o) => {
                let s = self.key("loops", self.count(o)?.max(1).to_string());
                self.said(o, s);
            }
            None if self.opt("io_size").is_none() && self.opt("number_ios").is_none() => {
                self.key("loops", "1");
            }
            None => {}
        }
        Ok(())
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::import::fio_job::reader::read;
    use std::path::Path;

    fn mapped(text: &str) -> Result<Mapping> {
        map(&read(Path::new("t.fio"), text)?)
    }

    fn keys(m: &Mapping, w: usize) -> Vec<String> {
        m.workloads[w].keys.iter().map(|(k, v)| format!("{k}: {v}")).collect()
    }

    /// The first workload's keys as `key: value`, or the mapping's error: for the tests of
    /// the mapping's parts (sizes, think).
    pub(crate) fn first_keys(text: &str) -> std::result::Result<Vec<String>, String> {
        mapped(text).map(|m| keys(&m, 0)).map_err(|e| e.to_string())
    }

    const TIMED: &str = "[global]\nruntime=2\ntime_based\n";

    /// fio's default random map becomes `randommap` where fathom's holds (one block
    /// size, uniform, every IO random); `norandommap`, a split or a skew keeps offsets
    /// drawn with replacement, and a sequential job has no map.
    #[test]
    fn fios_default_random_map_becomes_randommap_where_it_holds() {
        let on = |job: &str| {
            let m = mapped(&format!("{TIMED}[a]\n{job}\n")).unwrap();
            keys(&m, 0).contains(&"randommap: true".to_string())
        };
        assert!(on("rw=randread\nbs=4k"));
        assert!(on("rw=randrw\nrandom_distribution=random\npercentage_random=100"));
        for job in [
            "rw=randread\nnorandommap",
            "rw=randread\nbssplit=4k/50:8k/50",
            "rw=randread\nrandom_distribution=zipf:1.2",
            "rw=randread\npercentage_random=50",
            "rw=read",
        ] {
            assert!(!on(job), "{job}");
        }
        assert!(on("rw=randread\nnorandommap=0"), "norandommap=0 keeps the map");
    }

    #[test]
    fn one_rate_on_a_mixed_job_caps_each_direction() {
        let m = mapped(&format!("{TIMED}[a]\nrw=randrw\nrwmixread=70\nrate_iops=700\n")).unwrap();
        assert!(keys(&m, 0).contains(&"direct: false".to_string()), "fio's default is buffered: {:?}", keys(&m, 0));
        let k = keys(&m, 0);
        assert!(k.contains(&"rate_iops: 1000".to_string()), "reads reach 700 first, writes 300: {k:?}");
        assert!(k.contains(&"rwmixread: 70".to_string()), "{k:?}");
        let m = mapped(&format!("{TIMED}[a]\nrw=randrw\nrate=1m,3m\n")).unwrap();
        let k = keys(&m, 0);
        assert!(k.contains(&"rate_mbps: 4.194304".to_string()) && k.contains(&"rwmixread: 25".to_string()), "{k:?}");
    }

    #[test]
    fn sync_engines_and_buffered_libaio_run_one_io_at_a_time() {
        let m =
            mapped(&format!("{TIMED}[a]\nioengine=libaio\niodepth=16\n[b]\nioengine=libaio\ndirect=1\niodepth=16\n"))
                .unwrap();
        assert!(keys(&m, 0).contains(&"iodepth: 1".to_string()), "{:?}", keys(&m, 0));
        assert!(m.workloads[0].became.iter().any(|(_, b)| b.contains("synchronous in fio")));
        assert!(keys(&m, 1).contains(&"iodepth: 16".to_string()), "{:?}", keys(&m, 1));
    }

    #[test]
    fn directory_and_nrfiles_are_several_targets_sharing_size() {
        let m = mapped(&format!("{TIMED}[j]\ndirectory=/d\nnrfiles=2\nsize=8m\n")).unwrap();
        let k = keys(&m, 0);
        assert!(k.contains(&r#"target: ["/d/j.0.0", "/d/j.0.1"]"#.to_string()), "{k:?}");
        assert!(k.contains(&"size: 4194304".to_string()) && k.contains(&"queue: shared".to_string()), "{k:?}");
    }

    #[test]
    fn bssplit_shares_blank_percentages_and_picks_the_used_direction() {
        let m = mapped(&format!("{TIMED}[a]\nrw=randwrite\nbs=4k\nbssplit=4k/50:8k/50,4k/:64k/20:1m/\n")).unwrap();
        assert!(!keys(&m, 0).iter().any(|k| k.starts_with("bs:")), "bssplit wins over bs: {:?}", keys(&m, 0));
        assert!(keys(&m, 0).contains(&r#"bssplit: "4096/40:65536/20:1048576/40""#.to_string()), "{:?}", keys(&m, 0));
        let err = mapped(&format!("{TIMED}[a]\nrw=randrw\nbs=4k,64k\n")).unwrap_err().to_string();
        assert!(err.starts_with("t.fio:6: bs: different values for reads and writes"), "{err}");
    }

    #[test]
    fn without_time_based_a_job_is_bounded_and_runtime_caps_it() {
        let m =
            mapped("[a]\nsize=8m\n[b]\nio_size=1m\nloops=3\nruntime=9\n[c]\nnumber_ios=100\ntime_based\nruntime=2\n")
                .unwrap();
        assert!(keys(&m, 0).ends_with(&["size: 8388608".to_string(), "loops: 1".to_string()]), "{:?}", keys(&m, 0));
        let b = keys(&m, 1);
        for k in ["duration: 9s", "io_size: 1048576", "loops: 3"] {
            assert!(b.contains(&k.to_string()), "{k}: {b:?}");
        }
        let open = mapped("[a]\ntime_based\n").unwrap();
        assert!(!keys(&open, 0).iter().any(|k| k.starts_with("duration") || k.starts_with("loops")), "left to --set");
        let c = keys(&m, 2);
        assert!(c.contains(&"duration: 2s".to_string()) && !c.iter().any(|k| k.starts_with("number_ios")), "{c:?}");
    }

    #[test]
    fn mixes_and_zones_as_fio_reads_them() {
        let m = mapped(&format!(
            "{TIMED}[a]\nrw=randrw\nrwmixread=60\nrwmixwrite=40\nrandom_distribution=zoned:50/5:30/15:20/\n"
        ))
        .unwrap();
        let k = keys(&m, 0);
        assert_eq!(k.iter().filter(|k| k.starts_with("rwmixread")).count(), 1, "{k:?}");
        assert!(k.contains(&r#"distribution: "zoned:50/5:30/15:20/80""#.to_string()), "{k:?}");
    }

    #[test]
    fn what_fathom_cannot_honour_is_refused_where_written() {
        let err = mapped(&format!("{TIMED}[a]\nzonemode=zbd\n")).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().starts_with("t.fio:5: zonemode: zoned"), "{err}");
        let err = mapped(&format!("{TIMED}[a]\nverify=md5\n")).unwrap_err().to_string();
        assert!(err.starts_with("t.fio:5: verify: fathom verifies with crc32c only"), "{err}");
        let err = mapped(&format!("{TIMED}[a]\nrw=randrw\nrate_iops=,200\n")).unwrap_err().to_string();
        assert!(err.starts_with("t.fio:6: rate_iops: a rate for one direction of a mixed job"), "{err}");
        let err = mapped(&format!("{TIMED}[a]\niodepth=0\n")).unwrap_err().to_string();
        assert!(err.starts_with("t.fio:5: iodepth: must be at least 1"), "{err}");
        let err = mapped(&format!("{TIMED}[a]\nfrobnicate=1\n")).unwrap_err().to_string();
        assert!(err.starts_with("t.fio:5: frobnicate: an option fathom does not know"), "{err}");
        // a typo of an option fathom knows is offered the option
        let typo = mapped(&format!("{TIMED}[a]\nio_depth=4\n")).unwrap_err().to_string();
        assert!(typo.contains("io_depth: an option fathom does not know (did you mean `iodepth`?)"), "{typo}");
        let err = mapped(&format!("{TIMED}[a]\nexec_prerun=id\n")).unwrap_err().to_string();
        assert!(err.starts_with("t.fio:5: exec_prerun: runs a command") && !err.contains("fio can"), "{err}");
        let err = mapped("[a]\nruntime=1500ms\n").unwrap_err().to_string();
        assert!(err.starts_with("t.fio:2: runtime: fathom's workloads start and end on whole seconds"), "{err}");
        // a percentage past fio's range is refused as fio refuses it, never clamped
        for (opt, at) in
            [("rw=randrw\nrwmixread=150", "6: rwmixread"), ("dedupe_percentage=101", "5: dedupe_percentage")]
        {
            let err = mapped(&format!("{TIMED}[a]\n{opt}\n")).unwrap_err().to_string();
            assert!(err.starts_with(&format!("t.fio:{at}: ")) && err.contains("is out of range"), "{opt}: {err}");
        }
    }
}
