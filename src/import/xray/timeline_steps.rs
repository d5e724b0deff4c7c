//! X-Ray's steps (`setup`, `run`, `teardown`, in that order) as fathom's timeline. One
//! X-Ray workload is several fathom workloads (one per job of its fio file): they start
//! together and are waited for together. Steps that only build VMs are no-ops; steps that
//! change the infrastructure during a run become hook steps (the user's commands, from a
//! hooks file). docs/xray.md has the table.

use super::placement::Placed;
use super::written::StepFile;
use crate::import::fio_job::values::quote;
use crate::scenario::yaml::Value;
use crate::suggest;
use indexmap::IndexMap;

/// An X-Ray workload as fathom's workloads: its group and its jobs' workload names.
#[derive(Debug, Clone)]
pub struct Workload {
    pub name: String,
    pub group: String,
    /// Its fio file: workloads of one file are the same load.
    pub config: String,
    pub jobs: Vec<String>,
}

/// The timeline and what each step became.
#[derive(Debug, Clone, Default)]
pub struct Steps {
    /// Timeline steps in YAML flow form.
    pub timeline: Vec<String>,
    /// Each step as written and what it became, for `fathom lint`.
    pub became: Vec<(String, String)>,
    /// Steps that only build or clean up VMs: no effect here, each kind once.
    pub noops: Vec<String>,
    /// The hooks the timeline runs (step names), each once.
    pub hooks: Vec<String>,
    /// X-Ray workloads started, with their `runtime_secs` when given.
    pub runtime: IndexMap<String, Option<u64>>,
    /// X-Ray workloads started by `setup` steps (warm-ups): not in the run's results.
    pub setup_started: Vec<String>,
    /// X-Ray workloads of the run started and not yet waited for or stopped, with their
    /// groups: what an annotated start's phase is named after.
    pub running: Vec<Workload>,
    /// The last phase name [`Step::running_label`] gave.
    pub last_label: Option<String>,
}

/// Steps that build, power or clean up VMs before the run, or collect their logs:
/// nothing to do on hosts that exist.
const NO_OPS: [&str; 3] = ["cluster.CleanUp", "vm_group.CloneFromTemplate", "test.CollectCurieVMLogs"];

/// Steps that only prepare VMs when in `setup` (before the run); during the run, hooks.
const VM_POWER: [&str; 3] = ["vm_group.PowerOn", "vm_group.PowerOff", "vm_group.WaitForPowerOn"];

/// Steps that change the infrastructure under a run: the user's commands (hooks).
const HOOKS: [&str; 6] = [
    "nodes.PowerOff",
    "nodes.PowerOn",
    "vm_group.MigrateGroup",
    "meta.RollingUpgrade",
    "vm_group.CreatePeriodicSnapshots",
    "playbook.Run",
];

/// An error at a step: the path below the phase (`[index, step, param]`) and why.
pub type StepError = (Vec<String>, String);

/// Maps the phases' steps in order, on an inventory of `inventory` hosts; `groups`
/// (per_host) grow with `vm_group.Grow` before their workloads start.
pub fn map(
    phases: &[(&str, &[StepFile])],
    workloads: &[Workload],
    groups: &mut IndexMap<String, Placed>,
    inventory: usize,
) -> Result<Steps, (String, StepError)> {
    let mut out = Steps::default();
    for (phase, steps) in phases {
        for (i, step) in steps.iter().enumerate() {
            for (kind, params) in step {
                let empty = IndexMap::new();
                let params = params.as_ref().unwrap_or(&empty);
                let at = |param: &str, msg: String| {
                    let mut path = vec![i.to_string(), kind.clone()];
                    if !param.is_empty() {
                        path.push(param.to_string());
                    }
                    (phase.to_string(), (path, msg))
                };
                let mut s = Step { phase, kind, params, at: &at, workloads, inventory, out: &mut out };
                s.map(groups)?;
            }
        }
    }
    Ok(out)
}

/// One step being mapped.
struct Step<'a> {
    phase: &'a str,
    kind: &'a str,
    params: &'a IndexMap<String, Value>,
    at: &'a dyn Fn(&str, String) -> (String, StepError),
    workloads: &'a [Workload],
    inventory: usize,
    out: &'a mut Steps,
}

impl<'a> Step<'a> {
    fn map(&mut self, groups: &mut IndexMap<String, Placed>) -> Result<(), (String, StepError)> {
        let label = if self.phase == "setup" { ", phase: \"setup\"" } else { "" };
        let before = self.out.timeline.len();
        if self.flag("annotate")? {
            self.emit(format!("{{mark: {}}}", quote(&format!("{} {}", self.kind, self.target_name()))));
        }
        match self.kind {
            "workload.Start" => self.start(groups, label)?,
            "workload.Wait" => {
                let w = self.workload()?;
                self.out.running.retain(|r| r.name != w.name);
                let timeout = match self.seconds("timeout_secs")? {
                    Some(t) => format!(", timeout: {t}s{label}"),
                    None => label.to_string(),
                };
                self.wait_for(&w.jobs, &timeout);
            }
            "workload.Stop" => {
                let w = self.workload()?;
                self.out.running.retain(|r| r.name != w.name);
                for j in &w.jobs {
                    self.emit(format!("{{stop: {}{label}}}", quote(j)));
                }
            }
            "workload.PrefillRun" => {
                for j in &self.workload()?.jobs {
                    self.emit(format!("{{prefill: {}{label}}}", quote(j)));
                }
            }
            "test.Wait" => {
                let secs =
                    self.seconds("duration_secs")?.ok_or_else(|| (self.at)("", "missing duration_secs".into()))?;
                self.emit(format!("{{wait: {secs}s{label}}}"));
            }
            "vm_group.Grow" => self.grow(groups)?,
            k if NO_OPS.contains(&k) || (VM_POWER.contains(&k) && self.phase == "setup") => {
                if !self.out.noops.iter().any(|n| n == k) {
                    self.out.noops.push(k.to_string());
                }
            }
            k if HOOKS.contains(&k) || VM_POWER.contains(&k) => self.hook(k, groups)?,
            k => return Err((self.at)("", format!("`{k}`: a step X-Ray does not have (see docs/xray.md)"))),
        }
        if self.out.timeline.len() > before {
            let made: Vec<String> = self.out.timeline[before..].to_vec();
            self.said(made.join(", "));
        }
        Ok(())
    }

    /// `workload.Start`: a start of each of the workload's jobs, with its stagger spread
    /// over the group's VMs. A workload of several jobs starts them together and then
    /// waits for them, unless the step is asynchronous.
    /// A workload runs once: a second start is refused.
    fn start(&mut self, groups: &IndexMap<String, Placed>, label: &str) -> Result<(), (String, StepError)> {
        let w = self.workload()?;
        if self.out.runtime.contains_key(&w.name) {
            return Err((self.at)(
                "workload_name",
                format!(
                    "`{}` is started a second time: fathom runs a workload once (give the second run a \
                     workload of its own, with the same config_file)",
                    w.name
                ),
            ));
        }
        let runtime = self.seconds("runtime_secs")?;
        self.out.runtime.insert(w.name.clone(), runtime);
        if self.phase == "setup" {
            self.out.setup_started.push(w.name.clone());
        }
        let stagger = match self.seconds_f("stagger_secs")? {
            Some(s) if s > 0.0 => {
                let workers = groups.get(&w.group).map(Placed::workers).unwrap_or(1).max(1);
                format!(", stagger: {}ms", (s * 1000.0 / workers as f64).round() as u64)
            }
            _ => String::new(),
        };
        let wait = !self.flag("async")?;
        let together = w.jobs.len() > 1 || !wait;
        let mut phase = label.to_string();
        if self.phase != "setup" {
            self.out.running.push(w.clone());
            if self.flag("annotate")? {
                // what runs did not grow (four corners: one workload after another on one
                // group): the phase is named by the workload that started
                let mut name = self.running_label(groups);
                if self.out.running.iter().any(|r| r.config != w.config) {
                    name = format!("with {}", w.name);
                } else if self.out.last_label.as_ref() == Some(&name) {
                    name = w.name.clone();
                } else {
                    self.out.last_label = Some(name.clone());
                }
                phase = format!(", phase: {}", quote(&name));
            }
        }
        for j in &w.jobs {
            let asynchronous = if together { ", async: true" } else { "" };
            self.emit(format!("{{start: {}{asynchronous}{stagger}{phase}}}", quote(j)));
        }
        if together && wait {
            self.wait_for(&w.jobs, label);
        }
        Ok(())
    }

    /// `vm_group.Grow`: the group's VMs added from the start.
    /// fathom's workloads keep their workers, so a group cannot grow once its workloads
    /// started.
    fn grow(&mut self, groups: &mut IndexMap<String, Placed>) -> Result<(), (String, StepError)> {
        let name = self.text("vm_group_name")?;
        let started = self.workloads.iter().any(|w| w.group == name && self.out.runtime.contains_key(&w.name));
        if started {
            return Err((self.at)(
                "",
                format!(
                    "grows `{name}` after its workloads started: fathom's workloads keep their workers \
                     (use a `ramp` with `add_host` in a converted scenario)"
                ),
            ));
        }
        let more = self.seconds("count_per_node")?.unwrap_or(0) as u32;
        let hint = suggest::hint(&name, groups.keys().map(String::as_str));
        let g =
            groups.get_mut(&name).ok_or_else(|| (self.at)("vm_group_name", format!("no VM group `{name}`{hint}")))?;
        g.per_host += more;
        let now = g.per_host;
        self.said(format!("{name}: {now} per host from the start"));
        Ok(())
    }

    /// A step X-Ray runs on the hypervisor (`k`), as a hook on the group's hosts.
    /// A secret among its parameters is dropped, never passed on.
    fn hook(&mut self, k: &str, groups: &IndexMap<String, Placed>) -> Result<(), (String, StepError)> {
        let hosts = self.hosts_of(groups)?;
        let every = match k {
            "vm_group.CreatePeriodicSnapshots" => {
                let minutes = self.seconds_f("interval_minutes")?.unwrap_or(1.0);
                Some(((minutes * 60.0).round() as u64, self.seconds("num_snapshots")?.unwrap_or(1)))
            }
            _ => None,
        };
        let asynchronous = self.flag("async")?;
        self.emit(hook_step(k, &hook_args(self.params), hosts.as_deref(), asynchronous, every));
        if !self.out.hooks.iter().any(|h| h == k) {
            self.out.hooks.push(k.to_string());
        }
        for key in self.params.keys().filter(|p| crate::secrets::secret_key(p)) {
            self.said(format!("{key} dropped: a secret is never passed to a hook nor stored"));
        }
        Ok(())
    }

    fn emit(&mut self, step: String) {
        self.out.timeline.push(step);
    }

    /// The phase an annotated start of more of the same load opens, named by what then
    /// runs, as X-Ray's chart annotations read: `2 nodes` where each running VM group has
    /// a node of its own, else `3 VM groups on 2 nodes`. Other work joining (a DSS beside
    /// an OLTP) names its phase `with DSS 0` instead.
    fn running_label(&self, groups: &IndexMap<String, Placed>) -> String {
        let mut names: Vec<&str> = self.out.running.iter().map(|r| r.group.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        let mut nodes: Vec<usize> = names.iter().filter_map(|g| groups.get(*g)).flat_map(|p| p.hosts.clone()).collect();
        let placed = nodes.len();
        nodes.sort_unstable();
        nodes.dedup();
        let plural = |n: usize, one: &str| if n == 1 { format!("1 {one}") } else { format!("{n} {one}s") };
        match placed == nodes.len() && placed == names.len() {
            true => plural(nodes.len(), "node"),
            false => format!("{} on {}", plural(names.len(), "VM group"), plural(nodes.len(), "node")),
        }
    }

    fn wait_for(&mut self, jobs: &[String], label: &str) {
        for j in jobs {
            self.emit(format!("{{wait_for: {}{label}}}", quote(j)));
        }
    }

    fn said(&mut self, became: String) {
        let written = format!("{}: {} {}", self.phase, self.kind, self.target_name());
        self.out.became.push((written.trim_end().to_string(), became));
    }

    /// What the step acts on, for messages: its workload, VM group or nodes.
    fn target_name(&self) -> String {
        ["workload_name", "vm_group_name", "nodes"]
            .iter()
            .find_map(|k| self.params.get(*k).and_then(Value::as_text))
            .unwrap_or_default()
    }

    fn text(&self, key: &str) -> Result<String, (String, StepError)> {
        self.params.get(key).and_then(Value::as_text).ok_or_else(|| (self.at)("", format!("missing {key}")))
    }

    fn workload(&self) -> Result<&'a Workload, (String, StepError)> {
        let name = self.text("workload_name")?;
        let workloads: &'a [Workload] = self.workloads;
        workloads.iter().find(|w| w.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.workloads.iter().map(|w| w.name.as_str()).collect();
            (self.at)("workload_name", suggest::no_workload(&name, &names))
        })
    }

    fn flag(&self, key: &str) -> Result<bool, (String, StepError)> {
        match self.params.get(key) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(Value::String(s)) if s.eq_ignore_ascii_case("true") => Ok(true),
            Some(Value::String(s)) if s.eq_ignore_ascii_case("false") => Ok(false),
            Some(v) => Err((self.at)(key, format!("`{}`: expected true or false", v.as_text().unwrap_or_default()))),
        }
    }

    fn seconds_f(&self, key: &str) -> Result<Option<f64>, (String, StepError)> {
        let v = match self.params.get(key) {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::Int(n)) => *n as f64,
            Some(Value::Float(x)) => *x,
            Some(v) => {
                let t = v.as_text().unwrap_or_default();
                t.trim().parse().map_err(|_| (self.at)(key, format!("`{t}`: expected a number")))?
            }
        };
        if !(0.0..=1e9).contains(&v) {
            return Err((self.at)(key, format!("{v}: expected a number from 0 to 1e9")));
        }
        Ok(Some(v))
    }

    /// A whole number (X-Ray's arithmetic may render `900.0`), rounded.
    fn seconds(&self, key: &str) -> Result<Option<u64>, (String, StepError)> {
        Ok(self.seconds_f(key)?.map(|v| v.round() as u64))
    }

    /// The hosts a hook acts on: the step's `nodes`, or its VM group's hosts.
    fn hosts_of(&self, groups: &IndexMap<String, Placed>) -> Result<Option<String>, (String, StepError)> {
        if let Some(group) = self.params.get("vm_group_name").and_then(Value::as_text) {
            let hint = suggest::hint(&group, groups.keys().map(String::as_str));
            let g =
                groups.get(&group).ok_or_else(|| (self.at)("vm_group_name", format!("no VM group `{group}`{hint}")))?;
            return Ok(Some(g.selector()));
        }
        let Some(nodes) = self.params.get("nodes").and_then(Value::as_text) else { return Ok(None) };
        let hosts = super::placement::nodes(&nodes, self.inventory).map_err(|e| (self.at)("nodes", e))?;
        Ok(Some(Placed { hosts, per_host: 1, said: String::new() }.selector()))
    }
}

/// A step's parameters as a hook's arguments: a scalar as its text, a list or a mapping
/// as JSON (a hook parses structured values, never Rust's debug text). Arguments under
/// a secret-like key are dropped: the hook's command brings its own credentials, and an
/// argument is stored with the scenario.
fn hook_args(params: &IndexMap<String, Value>) -> Vec<(String, String)> {
    params
        .iter()
        .filter(|(k, _)| !crate::secrets::secret_key(k) && k.as_str() != "annotate")
        .map(|(k, v)| {
            let json = || serde_json::to_value(v).map(|j| crate::secrets::redact_json(&j).to_string());
            (k.clone(), v.as_text().unwrap_or_else(|| json().unwrap_or_default()))
        })
        .collect()
}

/// A hook step as fathom's timeline writes it: `{hook: NAME, args: {..}, hosts: ..,
/// async: true}`, or a periodic one `{hook: NAME, args: {..}, every: 60s, times: N}`.
/// The one place X-Ray's infrastructure steps are written as fathom's.
pub fn hook_step(
    name: &str,
    args: &[(String, String)],
    hosts: Option<&str>,
    asynchronous: bool,
    every: Option<(u64, u64)>,
) -> String {
    let mut out = format!("{{hook: {}", quote(name));
    if !args.is_empty() {
        let kv: Vec<String> = args.iter().map(|(k, v)| format!("{k}: {}", quote(v))).collect();
        out.push_str(&format!(", args: {{{}}}", kv.join(", ")));
    }
    if let Some(h) = hosts {
        out.push_str(&format!(", hosts: {h}"));
    }
    if asynchronous {
        out.push_str(", async: true");
    }
    if let Some((secs, times)) = every {
        out.push_str(&format!(", every: {secs}s, times: {times}"));
    }
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::yaml;

    fn steps(text: &str) -> Vec<StepFile> {
        yaml::from_str("t", text).unwrap()
    }

    fn groups() -> IndexMap<String, Placed> {
        let g = Placed { hosts: vec![0, 1], per_host: 2, said: String::new() };
        IndexMap::from([("G".to_string(), g)])
    }

    fn workloads() -> Vec<Workload> {
        vec![Workload {
            name: "W".into(),
            group: "G".into(),
            config: "w.fio".into(),
            jobs: vec!["W:a".into(), "W:b".into()],
        }]
    }

    #[test]
    fn a_start_starts_every_job_and_waits_for_them_all() {
        let setup = steps("- cluster.CleanUp: {}\n- workload.PrefillRun: {workload_name: W}\n");
        let run = steps(
            "- workload.Start: {workload_name: W, runtime_secs: 60.0, stagger_secs: 8, annotate: True}\n- test.Wait: {duration_secs: 5}\n",
        );
        let mut g = groups();
        let s = map(&[("setup", &setup), ("run", &run)], &workloads(), &mut g, 2).unwrap();
        assert_eq!(
            s.timeline,
            [
                r#"{prefill: "W:a", phase: "setup"}"#,
                r#"{prefill: "W:b", phase: "setup"}"#,
                r#"{mark: "workload.Start W"}"#,
                // an annotated start names the phase it opens by what then runs
                r#"{start: "W:a", async: true, stagger: 2000ms, phase: "1 VM group on 2 nodes"}"#,
                r#"{start: "W:b", async: true, stagger: 2000ms, phase: "1 VM group on 2 nodes"}"#,
                r#"{wait_for: "W:a"}"#,
                r#"{wait_for: "W:b"}"#,
                "{wait: 5s}",
            ]
        );
        assert_eq!(s.noops, ["cluster.CleanUp"]);
        assert_eq!(s.runtime["W"], Some(60));
    }

    #[test]
    fn a_workload_wait_with_a_timeout_waits_for_each_job_that_long_at_most() {
        let run = steps(
            "- workload.Start: {workload_name: W, async: true}\n- workload.Wait: {workload_name: W, timeout_secs: 90}\n",
        );
        let s = map(&[("run", &run)], &workloads(), &mut groups(), 2).unwrap();
        assert_eq!(s.timeline[2..], [r#"{wait_for: "W:a", timeout: 90s}"#, r#"{wait_for: "W:b", timeout: 90s}"#]);
        assert_eq!(s.runtime["W"], None);
    }

    #[test]
    fn a_grow_before_the_start_adds_workers_on_each_host() {
        let setup =
            steps("- vm_group.PowerOff: {vm_group_name: G}\n- vm_group.Grow: {vm_group_name: G, count_per_node: 3}\n");
        let mut g = groups();
        let s = map(&[("setup", &setup)], &workloads(), &mut g, 2).unwrap();
        assert_eq!(g["G"].per_host, 5);
        assert_eq!(s.noops, ["vm_group.PowerOff"]);
    }

    #[test]
    fn infrastructure_steps_are_hooks_without_passwords() {
        let run = steps(
            "- nodes.PowerOff: {nodes: '1', annotate: true}\n- playbook.Run: {filename: p.yml, remote_pass: hunter2}\n- vm_group.CreatePeriodicSnapshots: {vm_group_name: G, num_snapshots: 3, interval_minutes: 2}\n",
        );
        let s = map(&[("run", &run)], &workloads(), &mut groups(), 2).unwrap();
        assert_eq!(s.hooks, ["nodes.PowerOff", "playbook.Run", "vm_group.CreatePeriodicSnapshots"]);
        assert!(!s.timeline.join(" ").contains("hunter2"));
        assert_eq!(s.timeline[1], r#"{hook: "nodes.PowerOff", args: {nodes: "1"}, hosts: ["1:2"]}"#);
        assert!(s.timeline[3].ends_with(r#"hosts: ["0:2"], every: 120s, times: 3}"#), "{}", s.timeline[3]);
    }

    #[test]
    fn playbook_variables_are_json_and_secret_ones_are_dropped() {
        let run = steps(
            "- playbook.Run: {filename: p.yml, remote_user: root, ipmi_password: Sekr1tA, variables: {ssh_pass: Sekr1tB, n: 2, hosts: [a, b]}, vault_token: [Sekr1tC]}\n",
        );
        let s = map(&[("run", &run)], &workloads(), &mut groups(), 2).unwrap();
        let line = s.timeline.join(" ");
        for secret in ["Sekr1tA", "Sekr1tB", "Sekr1tC"] {
            assert!(!line.contains(secret), "{line}");
        }
        assert!(!line.contains("Mapping(") && !line.contains("String("), "{line}");
        let said: Vec<&String> = s.became.iter().map(|(_, b)| b).collect();
        let want = r#"{"hosts":["a","b"],"n":2,"ssh_pass":"***"}"#;
        let args = [
            ("filename".to_string(), "p.yml".to_string()),
            ("remote_user".to_string(), "root".to_string()),
            ("variables".to_string(), want.to_string()),
        ];
        assert_eq!(s.timeline[0], hook_step("playbook.Run", &args, None, false, None), "{said:?}");
        assert!(said.iter().any(|b| b.contains("ipmi_password dropped")), "{said:?}");
        assert!(said.iter().any(|b| b.contains("vault_token dropped")), "{said:?}");
    }

    #[test]
    fn a_hook_step_is_written_as_the_timeline_reads_it() {
        let args = [("nodes".to_string(), "0".to_string())];
        assert_eq!(
            hook_step("nodes.PowerOn", &args, Some(r#"["0:1"]"#), true, None),
            r#"{hook: "nodes.PowerOn", args: {nodes: "0"}, hosts: ["0:1"], async: true}"#
        );
        assert_eq!(hook_step("s", &[], None, false, Some((60, 4))), r#"{hook: "s", every: 60s, times: 4}"#);
    }

    #[test]
    fn a_second_start_and_an_unknown_step_are_located() {
        let run = steps(
            "- workload.Start: {workload_name: W, runtime_secs: 1}\n- workload.Start: {workload_name: W, runtime_secs: 1}\n",
        );
        let (phase, (path, msg)) = map(&[("run", &run)], &workloads(), &mut groups(), 2).unwrap_err();
        assert_eq!((phase.as_str(), path.join(".")), ("run", "1.workload.Start.workload_name".to_string()));
        assert!(msg.contains("started a second time"), "{msg}");
        let odd = steps("- test.Dance: {}\n");
        assert!(map(&[("run", &odd)], &workloads(), &mut groups(), 2).unwrap_err().1.1.contains("test.Dance"));
    }

    /// X-Ray's scaling studies start one node's VM group at a time: the phases read
    /// `1 node`, `2 nodes`, never a list of workloads.
    #[test]
    fn annotated_starts_name_their_phases_by_the_nodes_running() {
        let mut g: IndexMap<String, Placed> = (0..3)
            .map(|i| (format!("Node {i}"), Placed { hosts: vec![i], per_host: 1, said: String::new() }))
            .collect();
        let w: Vec<Workload> = (0..3)
            .map(|i| Workload {
                name: format!("R{i}"),
                group: format!("Node {i}"),
                config: "r.fio".into(),
                jobs: vec![format!("R{i}:d")],
            })
            .collect();
        let text: String = (0..3)
            .map(|i| format!("- workload.Start: {{workload_name: R{i}, async: True, annotate: True}}\n- test.Wait: {{duration_secs: 5}}\n"))
            .collect();
        let run = steps(
            &(text
                + "- workload.Wait: {workload_name: R0}\n- workload.Start: {workload_name: R0b, annotate: True}\n\
                   - workload.Wait: {workload_name: R0b}\n- workload.Start: {workload_name: R1b, annotate: True}\n"),
        );
        let mut all = w.clone();
        let like = |name: &str, group: &str| Workload {
            name: name.into(),
            group: group.into(),
            config: "r.fio".into(),
            jobs: vec![format!("{name}:d")],
        };
        all.extend([like("R0b", "Node 1"), like("R1b", "Node 2")]);
        let s = map(&[("run", &run)], &all, &mut g, 3).unwrap();
        let phases: Vec<&str> = s.timeline.iter().filter_map(|t| t.split("phase: ").nth(1)).collect();
        // what runs did not grow: the phase is named by the workload that started
        assert_eq!(phases, ["\"1 node\"}", "\"2 nodes\"}", "\"3 nodes\"}", "\"2 nodes\"}", "\"R1b\"}"]);
    }
}
