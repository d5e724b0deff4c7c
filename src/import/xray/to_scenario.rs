//! From an X-Ray scenario to fathom's: each VM group placed on the inventory, each X-Ray
//! workload one fathom workload per job of its fio file (read by the fio job-file
//! reader, [`fio_job`](crate::import::fio_job)), named `WORKLOAD:JOB` (a workload's name is part of its
//! files' names, so it holds no `/`), and the steps
//! as the timeline. The result is scenario YAML, loaded by the one scenario loader.

use super::placement::{Placed, place};
use super::timeline_steps::{self, Workload};
use super::written::TestFile;
use crate::error::{Error, Result};
use crate::import::fio_job;
use crate::import::fio_job::values::{quote, trim_float};
use crate::scenario::results::ResultFile;
use crate::scenario::yaml::{Lines, Value};
use indexmap::IndexMap;
use std::path::Path;

/// The scenario as fathom runs it, with what each part of X-Ray's became.
#[derive(Debug, Clone)]
pub struct Mapping {
    pub name: String,
    pub description: Option<String>,
    /// The vars the template was rendered with (kept as fathom `vars`, so a `--set` of
    /// one is accepted by every host that loads the scenario).
    pub vars: IndexMap<String, Value>,
    pub groups: IndexMap<String, Placed>,
    pub workloads: Vec<Job>,
    pub steps: timeline_steps::Steps,
    /// X-Ray's results as fathom's result views.
    pub result_views: Vec<ResultFile>,
    /// X-Ray's HTML description (the report sanitises it).
    pub description_html: Option<String>,
    /// Each inventory host's number of targets: with several, a VM's data disks are
    /// the host's targets (`host_targets`); with one, files in it.
    pub targets: Vec<usize>,
    /// What was left out or changed, said once each.
    pub notes: Vec<String>,
    /// Seconds a workload started without `runtime_secs` runs (until a stop step ends
    /// it): the scenario's `estimated_runtime`, or an hour.
    pub open_ended: u64,
}

/// One job of an X-Ray workload's fio file, as a fathom workload.
#[derive(Debug, Clone)]
pub struct Job {
    pub name: String,
    /// The X-Ray workload and VM group it belongs to.
    pub workload: String,
    pub group: String,
    /// The fio file's devices (`/dev/sdb`: the VM's first data disk).
    pub devices: Vec<String>,
    /// Profile keys from the fio job (its target, jobs and duration left to placement).
    pub keys: Vec<(&'static str, String)>,
}

/// The fio file `name` of the X-Ray directory `dir`: its path as named (its errors name
/// it so) and its text, read only if it is inside `dir`.
fn fio_file(dir: &Path, name: &str) -> std::result::Result<(std::path::PathBuf, String), String> {
    let real = crate::nofollow::beside(&dir.join("test.yml"), name, "the X-Ray scenario's directory")
        .map_err(|e| format!("{name}: {e}"))?;
    let text =
        crate::nofollow::read_input(&real, "fio job file", crate::scenario::MAX_BYTES).map_err(|e| e.to_string())?;
    Ok((dir.join(name), text))
}

/// Maps the rendered `file` (whose keys were written at `lines` of `origin`) of the
/// scenario in `dir` onto an inventory whose hosts have `targets` targets each.
pub fn map(
    dir: &Path,
    origin: &str,
    file: &TestFile,
    lines: &Lines,
    vars: IndexMap<String, Value>,
    targets: &[usize],
) -> Result<Mapping> {
    let inventory = targets.len();
    let at = |path: &[&str], msg: String| {
        let line = lines.line_of(path).map(|l| format!(":{l}")).unwrap_or_default();
        Error::input(format!("{origin}{line}: {}: {msg}", path.join(".")))
    };
    let mut groups = IndexMap::new();
    for (i, entry) in file.vms.iter().flatten().enumerate() {
        for (name, g) in entry {
            let placed = place(g, inventory).map_err(|e| at(&["vms", &i.to_string(), name, "nodes"], e))?;
            groups.insert(name.clone(), placed);
        }
    }
    let mut notes = Vec::new();
    let (mut jobs, workloads) = map_workloads(dir, file, &groups, &at, &mut notes)?;
    let phases: Vec<(&str, &[super::written::StepFile])> =
        [("setup", &file.setup), ("run", &file.run), ("teardown", &file.teardown)]
            .into_iter()
            .map(|(p, s)| (p, s.as_deref().unwrap_or_default()))
            .collect();
    let mut steps =
        timeline_steps::map(&phases, &workloads, &mut groups, inventory).map_err(|(phase, (path, msg))| {
            let mut full = vec![phase.as_str()];
            full.extend(path.iter().map(String::as_str));
            at(&full, msg)
        })?;
    for w in &workloads {
        if !steps.runtime.contains_key(&w.name) {
            notes.push(format!("{}: never started, so not run (a prefill of it is left out)", w.name));
            let prefills: Vec<String> = w.jobs.iter().map(|j| format!("{{prefill: {}", quote(j))).collect();
            steps.timeline.retain(|s| !prefills.iter().any(|p| s.starts_with(p.as_str())));
            jobs.retain(|j| j.workload != w.name);
        }
    }
    let mut result_views = Vec::new();
    for (i, entry) in file.results.iter().flatten().enumerate() {
        for (name, r) in entry {
            let view = super::result_charts::view(name, r, &workloads, &steps, &groups, &mut notes)
                .map_err(|(key, msg)| at(&["results", &i.to_string(), name, &key], msg))?;
            result_views.push(view);
        }
    }
    let description = [&file.display_name, &file.summary].into_iter().flatten().next().map(|s| s.trim().to_string());
    let open_ended = match &file.estimated_runtime {
        Some(Value::Int(n)) if *n > 0 => *n as u64,
        Some(Value::Float(x)) if *x >= 1.0 => x.round() as u64,
        _ => 3600,
    };
    Ok(Mapping {
        name: file.name.clone(),
        description,
        description_html: file.description.clone(),
        vars,
        groups,
        workloads: jobs,
        steps,
        result_views,
        notes,
        open_ended,
        targets: targets.to_vec(),
    })
}

/// Maps each X-Ray workload of `file` to one fathom workload per job of its fio file.
/// Each job is named [`job_name`], and what fathom leaves out of it goes to `notes`.
/// `at` locates an error at a key of `file`.
fn map_workloads(
    dir: &Path,
    file: &TestFile,
    groups: &IndexMap<String, Placed>,
    at: &dyn Fn(&[&str], String) -> Error,
    notes: &mut Vec<String>,
) -> Result<(Vec<Job>, Vec<Workload>)> {
    let mut jobs = Vec::new();
    let mut workloads = Vec::new();
    for (i, entry) in file.workloads.iter().flatten().enumerate() {
        for (name, w) in entry {
            let i = i.to_string();
            if !groups.contains_key(&w.vm_group) {
                let known: Vec<&str> = groups.keys().map(String::as_str).collect();
                let hint = crate::suggest::hint(&w.vm_group, known.iter().copied());
                let msg = format!("no VM group `{}`{hint} (vms: {})", w.vm_group, known.join(", "));
                return Err(at(&["workloads", &i, name, "vm_group"], msg));
            }
            let config_file = match &w.config_file {
                Value::Sequence(one) if one.len() == 1 => one[0].as_text(),
                v => v.as_text(),
            }
            .ok_or_else(|| {
                at(
                    &["workloads", &i, name, "config_file"],
                    format!("{}: expected one fio file's name", flow(&w.config_file)),
                )
            })?;
            let (path, text) =
                fio_file(dir, &config_file).map_err(|e| at(&["workloads", &i, name, "config_file"], e))?;
            let fio = fio_job::map_file(&path, &text, &[])?;
            if !fio.timeline.is_empty() {
                notes.push(format!("{}: its jobs' order (stonewall, startdelay) is not kept: they start together, as X-Ray's VMs run them", config_file));
            }
            if let Some(p) = &w.iogen_params {
                notes.push(format!("{name}: iogen_params {} not needed: fathom records every second", flow(p)));
            }
            let mut names = Vec::new();
            for m in fio.workloads {
                let bounds: Vec<&str> = m.keys.iter().map(|(k, _)| *k).filter(|k| BOUNDS.contains(k)).collect();
                if !bounds.is_empty() {
                    notes.push(format!(
                        "{}: {} left out: a workload on hosts runs for its duration (X-Ray's runtime_secs)",
                        job_name(name, &m.name),
                        bounds.join(", ")
                    ));
                }
                // refused at the X-Ray workload's line, not the generated scenario's
                let named = job_name(name, &m.name);
                crate::scenario::text::file_name_part(&named).map_err(|why| at(&["workloads", &i, name], why))?;
                let job = Job {
                    name: named,
                    workload: name.clone(),
                    group: w.vm_group.clone(),
                    devices: m.targets,
                    keys: m.keys.into_iter().filter(|(k, _)| *k != "target" && !BOUNDS.contains(k)).collect(),
                };
                names.push(job.name.clone());
                jobs.push(job);
            }
            workloads.push(Workload {
                name: name.clone(),
                group: w.vm_group.clone(),
                config: config_file.to_string(),
                jobs: names,
            });
        }
    }
    Ok((jobs, workloads))
}

/// The fathom workload of job `job` of X-Ray's workload `workload`: `OLTP:data`.
fn job_name(workload: &str, job: &str) -> String {
    format!("{workload}:{job}")
}

/// The keys that end a fio job by what it did (`loops`, `io_size`, `number_ios`): a
/// workload on hosts runs for its duration instead.
const BOUNDS: [&str; 3] = ["loops", "io_size", "number_ios"];

/// A small YAML value on one line, for messages.
fn flow(v: &Value) -> String {
    match v {
        Value::Mapping(m) => {
            let kv: Vec<String> = m.iter().map(|(k, v)| format!("{k}: {}", flow(v))).collect();
            format!("{{{}}}", kv.join(", "))
        }
        Value::Sequence(s) => format!("[{}]", s.iter().map(flow).collect::<Vec<_>>().join(", ")),
        v => v.as_text().unwrap_or_else(|| "null".into()),
    }
}

/// The position of a fio file's device among a host's targets: X-Ray's VMs have their
/// data disks as `/dev/sdb`, `/dev/sdc`, ... (`/dev/sda` the system disk), so `/dev/sdb`
/// is the host's first target (0). `None` for a name that is not such a disk.
pub fn host_target(device: &str) -> Option<usize> {
    let letters = device.strip_prefix("/dev/sd")?;
    let mut chars = letters.chars();
    match (chars.next(), chars.next()) {
        (Some(c @ 'b'..='z'), None) => Some(c as usize - 'b' as usize),
        _ => None,
    }
}

/// The `host_targets:` key of a job on `devices` (`[0, 2]`), or `None` when one is not
/// an X-Ray data disk.
pub fn host_targets_key(devices: &[String]) -> Option<String> {
    let positions: Option<Vec<String>> = devices.iter().map(|d| host_target(d).map(|p| p.to_string())).collect();
    positions.map(|p| format!("host_targets: [{}]", p.join(", ")))
}

/// `value` without its objects' null members (keys not given).
fn without_nulls(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(m) => {
            m.retain(|_, v| !v.is_null());
            m.values_mut().for_each(without_nulls);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(without_nulls),
        _ => {}
    }
}

/// A plain file name for the data a VM group keeps on a disk (`device` empty: on the
/// disk that is the target).
fn data_file(group: &str, device: &str) -> String {
    let raw = match device.rsplit('/').next().unwrap_or(device) {
        "" => group.to_string(),
        base => format!("{group}-{base}"),
    };
    raw.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
}

impl Mapping {
    /// The scenario as YAML text. Its hook steps are checked against `--hooks` by the
    /// loader's caller, as any scenario's.
    pub fn yaml(&self) -> Result<String> {
        let mut out = format!("name: {}\n", quote(&self.name));
        if let Some(d) = &self.description {
            out.push_str(&format!("description: {}\n", quote(d)));
        }
        if let Some(d) = &self.description_html {
            out.push_str(&format!("description_html: {}\n", quote(d)));
        }
        if !self.result_views.is_empty() {
            out.push_str("results:\n");
            for r in &self.result_views {
                // JSON is YAML's flow form: one entry a line, without the keys not given
                let mut json = serde_json::to_value(r).expect("a view serializes");
                without_nulls(&mut json);
                out.push_str(&format!("  - {json}\n"));
            }
        }
        if !self.vars.is_empty() {
            out.push_str("vars:\n");
            for (k, v) in &self.vars {
                out.push_str(&format!("  {k}: {}\n", quote(&v.as_text().unwrap_or_default())));
            }
        }
        out.push_str(if self.workloads.is_empty() { "workloads: {}\n" } else { "workloads:\n" });
        for j in &self.workloads {
            out.push_str(&format!("  {}:\n", quote(&j.name)));
            for (k, v) in self.keys(j)? {
                out.push_str(&format!("    {k}: {v}\n"));
            }
        }
        out.push_str("timeline:\n");
        for step in &self.steps.timeline {
            out.push_str(&format!("  - {step}\n"));
        }
        Ok(out)
    }

    /// A job's keys: its placement, its file, the fio job's keys (a rate is per VM in
    /// X-Ray: times the workers here), its duration.
    fn keys(&self, j: &Job) -> Result<Vec<(String, String)>> {
        let g = &self.groups[&j.group];
        let jobs: u32 = j.keys.iter().find(|(k, _)| *k == "jobs").and_then(|(_, v)| v.parse().ok()).unwrap_or(1);
        let mut out =
            vec![("hosts".to_string(), g.selector()), ("per_host".to_string(), (g.per_host * jobs).to_string())];
        out.extend(self.disks(j, g)?);
        for (k, v) in &j.keys {
            let v = match *k {
                "jobs" | "duration" => continue,
                "rate_iops" | "rate_mbps" => match v.parse::<f64>() {
                    Ok(r) => trim_float(r * g.workers() as f64),
                    Err(_) => v.clone(),
                },
                _ => v.clone(),
            };
            out.push((k.to_string(), v));
        }
        match self.steps.runtime.get(&j.workload) {
            Some(Some(secs)) => out.push(("duration".into(), format!("{secs}s"))),
            // started without runtime_secs: the job's own runtime, or until stopped
            _ => match j.keys.iter().find(|(k, _)| *k == "duration") {
                Some((_, own)) => out.push(("duration".into(), own.clone())),
                None => out.push(("duration".into(), format!("{}s", self.open_ended))),
            },
        }
        Ok(out)
    }

    /// Where a job's devices are on its group's hosts: with several targets per host,
    /// `/dev/sdb` is the first (`host_targets`), the group's data a file `GROUP` on each;
    /// with one, a file per device in it (`GROUP-sdb`). Workloads of one group on one
    /// disk share the file, as X-Ray's share a VM's disk (a prefill fills what the
    /// workloads after it read).
    fn disks(&self, j: &Job, g: &Placed) -> Result<Vec<(String, String)>> {
        let Some(first) = j.devices.first() else { return Ok(Vec::new()) };
        let counts: Vec<usize> = g.hosts.iter().map(|h| self.targets.get(*h).copied().unwrap_or(0)).collect();
        let fewest = counts.iter().copied().min().unwrap_or(0);
        if counts.iter().all(|c| *c <= 1) {
            return Ok(vec![("file".into(), quote(&data_file(&j.group, first)))]);
        }
        let Some(key) = host_targets_key(&j.devices) else {
            return Ok(vec![("file".into(), quote(&data_file(&j.group, first)))]);
        };
        if let Some(d) = j.devices.iter().find(|d| host_target(d).is_some_and(|p| p >= fewest)) {
            return Err(Error::input(format!(
                "X-Ray scenario {}: workload {} of VM group {} uses {d}, the VMs' data disk {} (from /dev/sdb), \
                 but a host of the group has {fewest} targets: list as many `target:` per host in --hosts as the \
                 VMs have data disks, or one directory per host (the disks are then files in it)",
                self.name,
                j.name,
                j.group,
                host_target(d).unwrap_or(0) + 1
            )));
        }
        let value = key.trim_start_matches("host_targets: ").to_string();
        Ok(vec![("host_targets".into(), value), ("file".into(), quote(&data_file(&j.group, "")))])
    }

    /// The mapping as `fathom lint` prints it.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        if !self.vars.is_empty() {
            let vars: Vec<String> =
                self.vars.iter().map(|(k, v)| format!("{k}={}", v.as_text().unwrap_or_default())).collect();
            out.push_str(&format!("vars: {}\n", vars.join(", ")));
        }
        for (name, g) in &self.groups {
            out.push_str(&format!("VM group {name}: hosts {} ({}), {} per host\n", g.selector(), g.said, g.per_host));
        }
        for j in &self.workloads {
            let several = self.groups[&j.group].hosts.iter().any(|h| self.targets.get(*h).is_some_and(|c| *c > 1));
            let disks = match host_targets_key(&j.devices) {
                Some(key) if several => format!("{} -> the host's targets ({key})", j.devices.join(", ")),
                _ => format!("{} -> files in the host's target", j.devices.join(", ")),
            };
            out.push_str(&format!("workload {} (on {}): {disks}\n", j.name, j.group));
        }
        let width = self.steps.became.iter().map(|(w, _)| w.chars().count()).max().unwrap_or(0);
        for (written, became) in &self.steps.became {
            out.push_str(&format!("  {written:width$}  ->  {became}\n"));
        }
        if !self.steps.noops.is_empty() {
            out.push_str(&format!("no-ops (VMs are not built here): {}\n", self.steps.noops.join(", ")));
        }
        if !self.steps.hooks.is_empty() {
            out.push_str(&format!("hooks needed (--hooks): {}\n", self.steps.hooks.join(", ")));
        }
        for r in &self.result_views {
            let what = match (&r.workloads, &r.observed, &r.not_measured) {
                (Some(w), _, _) => format!("{} of {}", r.metric.map(|m| m.unit()).unwrap_or_default(), w.join(", ")),
                (_, Some(o), _) => format!("observed {o}"),
                (_, _, n) => format!("not measured: {}", n.clone().unwrap_or_default()),
            };
            out.push_str(&format!("result {}: {what}\n", r.name));
        }
        for n in &self.notes {
            out.push_str(&format!("note: {n}\n"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x_ray_data_disks_are_host_targets_in_order() {
        assert_eq!(host_target("/dev/sdb"), Some(0));
        assert_eq!(host_target("/dev/sdg"), Some(5));
        assert_eq!(host_target("/dev/sda"), None);
        assert_eq!(host_target("/data/f"), None);
        let devs = ["/dev/sdb".to_string(), "/dev/sdd".to_string()];
        assert_eq!(host_targets_key(&devs).as_deref(), Some("host_targets: [0, 2]"));
        assert_eq!(host_targets_key(&["/tmp/x".to_string()]), None);
    }

    #[test]
    fn a_groups_disk_is_one_plain_file() {
        assert_eq!(data_file("OLTP DB", "/dev/sdb"), "OLTP_DB-sdb");
    }
}
