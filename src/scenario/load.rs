//! Loading a scenario: the steps from text to a checked [`Scenario`], each in its own
//! place ([`super::prescan`], [`super::vars`], [`super::overrides`], [`super::yaml`],
//! [`super::check`]), each locating its errors (`FILE:LINE: key: message`, or the
//! `--set` to blame).

use super::check::Checker;
use super::file::ScenarioFile;
use super::model::{Scenario, Source};
use super::overrides::{self, Override};
use super::yaml::{self, Value};
use super::{prescan, time_scale, vars};
use crate::error::{Error, Result};
use std::path::Path;

impl Scenario {
    /// Loads a scenario from text, applying `--set` overrides, and checks every value.
    pub fn load(original: &Source, sets: &[Override]) -> Result<Scenario> {
        Scenario::load_placing(original, None, sets, false)
    }

    /// As [`Scenario::load`], for a run given an inventory of hosts (`--hosts`, and the
    /// agents it starts): a workload of fathom's engine without `hosts:` runs on every
    /// host, its `jobs` on each, where one without a target would otherwise be refused.
    pub fn load_on_hosts(original: &Source, sets: &[Override]) -> Result<Scenario> {
        Scenario::load_placing(original, None, sets, true)
    }

    /// As [`Scenario::load`] (or [`Scenario::load_on_hosts`], `on_hosts`) for the
    /// scenario file at `file`: the files it names (a pgbench `script`) are read from its
    /// directory. A scenario loaded without one (an agent's copy) reads none: its
    /// controller read them.
    pub fn load_file(original: &Source, file: &Path, sets: &[Override], on_hosts: bool) -> Result<Scenario> {
        Scenario::load_placing(original, Some(file), sets, on_hosts)
    }

    fn load_placing(original: &Source, path: Option<&Path>, sets: &[Override], on_hosts: bool) -> Result<Scenario> {
        let origin = &original.origin;
        let written = prescan::check(origin, original.text)?;
        // a `--set` other than the time scale may make workloads alike
        let reshaped = sets.iter().any(|s| s.path != [time_scale::KEY]);
        let mut sets = sets.to_vec();
        let scale = time_scale::take(&mut sets)?;
        let (text, vars) = vars::substitute(origin, written, &mut sets)?;
        // values of variables may nest too
        prescan::check(origin, &text)?;
        let src = &Source { origin: origin.clone(), text: &text };
        let sets = &sets[..];
        let (parsed, lines): (ScenarioFile, _) = yaml::read(origin, src.text)?;
        let mut touched = Vec::new();
        let mut resolved = text.clone();
        let mut file = if sets.is_empty() {
            parsed
        } else {
            let mut value: Value = yaml::from_str(origin, src.text)?;
            let names: Vec<String> = parsed.workloads.keys().cloned().collect();
            for set in sets {
                touched.push((set.to_string(), set.apply(&mut value, &names)?));
            }
            // Read back as text, as the file was: `description: 1` is text there, and
            // would be "an integer, expected a string" from a value.
            resolved = yaml::to_string(&value)?;
            yaml::from_written(&resolved).map_err(|e| {
                let msg = e.to_string();
                match to_blame(&touched, &msg) {
                    Some(set) => Error::input(format!("--set {set}: {msg}")),
                    None => Error::input(format!("{}: {msg}", overrides::describe(sets))),
                }
            })?
        };
        let scaled = scale.map(|f| time_scale::apply(&mut file, f));
        let groups = file.groups.clone().unwrap_or_default();
        let checker = Checker { src, file: path, lines, touched, groups, on_hosts };
        let mut scenario = checker.resolve(file, written)?;
        scenario.vars = vars;
        scenario.resolved = resolved;
        scenario.time_scale = scaled;
        if reshaped {
            // as the file has it, without the run's `--set`s
            if let Ok(written) = Scenario::load_placing(original, path, &[], on_hosts) {
                scenario.flattened = flattened(&scenario, &written);
            }
        }
        Ok(scenario)
    }
}

/// The `--set` an error about the values read back is about: the one that changed the
/// key the message starts with, else the one that added the key the message names under
/// it (an unknown key is its mapping's fault). serde says `timeline[0]` where a `--set`
/// path says `timeline.0`.
fn to_blame<'a>(touched: &'a [(String, Vec<String>)], msg: &str) -> Option<&'a str> {
    let (at, _) = msg.split_once(": ")?;
    let at = at.replace('[', ".").replace(']', "");
    let exact = |p: &String| *p == at;
    let named = |p: &String| {
        let key = p.strip_prefix(&at).and_then(|rest| rest.strip_prefix('.'));
        key.is_some_and(|key| msg.contains(&format!("`{key}`")))
    };
    let blamed = |is: &dyn Fn(&String) -> bool| touched.iter().find(|(_, paths)| paths.iter().any(is));
    blamed(&exact).or_else(|| blamed(&named)).map(|(set, _)| set.as_str())
}

/// The workloads of `with` that are identical but for their names where `without` (the
/// same file without its `--set`s) keeps them apart. A data file is named after its
/// workload unless `file` says otherwise, so the file's name is a name too.
fn flattened(with: &Scenario, without: &Scenario) -> Vec<String> {
    let profiles = |s: &Scenario| -> Vec<serde_json::Value> {
        let profile = |w| {
            let mut v = serde_json::to_value(w).unwrap_or_default();
            if let Some(m) = v.as_object_mut() {
                m.remove("name");
                m.remove("file");
            }
            v
        };
        s.workloads.iter().map(profile).collect()
    };
    let (now, written) = (profiles(with), profiles(without));
    let n = now.len().min(written.len());
    (0..n)
        .filter(|&i| (0..n).any(|j| j != i && now[i] == now[j] && written[i] != written[j]))
        .map(|i| with.workloads[i].name.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::model::Rw;
    use crate::scenario::pattern::BlockSizes;
    use crate::scenario::steps;
    use std::path::PathBuf;
    use std::time::Duration;

    fn load(text: &str, sets: &[&str]) -> Result<Scenario> {
        let sets: Vec<Override> = sets.iter().map(|s| s.parse().unwrap()).collect();
        Scenario::load(&Source { origin: "s.yaml".into(), text }, &sets)
    }

    const BASIC: &str = "\
name: basic
defaults:
  target: /tmp
  duration: 5s
workloads:
  a:
    rw: randread
    iodepth: 4
  b:
    rw: write
    bs: 1m
";

    #[test]
    fn a_workloads_own_size_or_share_wins_over_the_other_in_defaults() {
        let text = "name: s\ndefaults: {target: /tmp, duration: 1s, rw: read, size: 1g}\nworkloads:\n  \
                    share: {size_percent: 30}\n  bytes: {}\n";
        let s = load(text, &[]).unwrap();
        let (share, bytes) = (s.workloads[0].io().unwrap(), s.workloads[1].io().unwrap());
        assert_eq!((share.size, share.size_percent), (None, Some(30)));
        assert_eq!((bytes.size, bytes.size_percent), (Some(1 << 30), None));
        let err = load(text, &["share.size=1m"]).unwrap_err().to_string();
        assert!(err.contains("set `size` or `size_percent`, not both"), "{err}");
    }

    #[test]
    fn defaults_are_inherited_and_overridden() {
        let s = load(BASIC, &[]).unwrap();
        assert_eq!(s.workloads.len(), 2);
        assert_eq!(s.workloads[0].io().unwrap().iodepth, 4);
        assert_eq!(s.workloads[0].io().unwrap().bs, BlockSizes::single(4096));
        assert_eq!(s.workloads[1].io().unwrap().bs, BlockSizes::single(1 << 20));
        assert_eq!(s.workloads[1].duration, Duration::from_secs(5));
        assert!(s.workloads[0].io().unwrap().direct);
        let starts: Vec<bool> =
            s.steps.iter().map(|st| matches!(st.action, steps::Action::Start { wait: false, .. })).collect();
        assert_eq!(starts, vec![true, true], "no timeline: everything starts together");
    }

    #[test]
    fn unknown_key_names_file_line_and_key() {
        let text = BASIC.replace("    iodepth: 4", "    iodeph: 4");
        let err = load(&text, &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:8: workloads.a: unknown key `iodeph` (did you mean `iodepth`?)"), "{err}");
        assert!(err.contains("expected one of"), "{err}");
    }

    #[test]
    fn a_refused_set_is_blamed_alone() {
        let text = format!("{BASIC}timeline:\n  - start: a\n  - start: b\n");
        let err = load(&text, &["bs=8k", "timeline.0.nope=1", "duration=2s"]).unwrap_err().to_string();
        assert!(err.starts_with("--set timeline.0.nope=1: timeline[0]: unknown key `nope`"), "{err}");
        let err = load(&text, &["defaults.io_depth=2", "defaults.bs=8k"]).unwrap_err().to_string();
        assert!(err.starts_with("--set defaults.io_depth=2: defaults: unknown key `io_depth`"), "{err}");
    }

    #[test]
    fn an_unknown_phase_is_offered_the_nearest() {
        let text = format!(
            "{BASIC}timeline:\n  - start: a\n    phase: warmup\n  - start: b\nexpect:\n  - a.iops > 1 during warmpu\n"
        );
        let err = load(&text, &[]).unwrap_err().to_string();
        assert!(err.contains("`during warmpu` (did you mean `warmup`?): no phase is labelled `warmpu`"), "{err}");
    }

    #[test]
    fn bad_size_and_duration_are_located() {
        let err = load(&BASIC.replace("bs: 1m", "bs: 1q"), &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:11: workloads.b.bs: invalid size `1q`"), "{err}");
        let err = load(&BASIC.replace("duration: 5s", "duration: soon"), &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:4: defaults.duration: invalid duration"), "{err}");
    }

    #[test]
    fn wrong_type_is_located() {
        let err = load(&BASIC.replace("iodepth: 4", "iodepth: deep"), &[]).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "s.yaml:8: workloads.a.iodepth: expected a whole number from 0 to 4294967295, not \"deep\""
            ),
            "{err}"
        );
    }

    #[test]
    fn semantic_errors_point_at_the_key() {
        let err = load(&BASIC.replace("iodepth: 4", "iodepth: 0"), &[]).unwrap_err().to_string();
        assert_eq!(err, "s.yaml:8: workloads.a.iodepth: 0 must be between 1 and 4096");
        let err = load(&BASIC.replace("bs: 1m", "bs: 1000"), &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:11: workloads.b.bs: 1000 is not a multiple of 512"), "{err}");
        let err = load(&BASIC.replace("  duration: 5s\n", ""), &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:5: workloads.a: missing `duration`"), "{err}");
        let err = load(&BASIC.replace("duration: 5s", "duration: 1500ms"), &[]).unwrap_err().to_string();
        assert!(err.contains("whole number of seconds"), "{err}");
    }

    #[test]
    fn timeline_names_must_exist() {
        let text = format!("{BASIC}timeline:\n  - start: a\n  - start: c\n");
        let err = load(&text, &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:14: timeline.1.start: no workload named `c`"), "{err}");
        let ok = load(&format!("{BASIC}timeline:\n  - start: b\n  - start: a\n"), &[]).unwrap();
        assert_eq!(ok.steps.len(), 2);
        assert!(matches!(ok.steps[0].action, steps::Action::Start { workload: 1, .. }));
    }

    #[test]
    fn a_timeline_gives_durations_and_checks_its_order() {
        let text = format!(
            "{BASIC}timeline:\n  - start: a\n    async: true\n  - wait: 2s\n  - ramp: b\n    add: 2\n    every: 3s\n    until: 5\n  - stop: a\n"
        );
        let s = load(&text, &[]).unwrap();
        assert_eq!(s.workloads[1].duration, Duration::from_secs(9), "3 additions of 3 s");
        let text = format!("{BASIC}timeline:\n  - start: a\n    duration: 7s\n  - start: b\n");
        assert_eq!(load(&text, &[]).unwrap().workloads[0].duration, Duration::from_secs(7));
        let early = format!("{BASIC}timeline:\n  - stop: a\n  - start: a\n  - start: b\n");
        let err = load(&early, &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:13: timeline.0.stop: `a` has not been started"), "{err}");
        let unknown = format!("{BASIC}timeline:\n  - start: a\n  - start: b\n    every: 2s\n");
        let err = load(&unknown, &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:15: timeline.1.every: does not apply to `start`"), "{err}");
    }

    #[test]
    fn groups_give_workloads_their_workers() {
        let text = BASIC
            .replace("name: basic\n", "name: basic\ngroups:\n  vms: {count: 6}\n")
            .replace("    iodepth: 4\n", "    iodepth: 4\n    group: vms\n");
        let s = load(&text, &[]).unwrap();
        assert_eq!((s.workloads[0].workers, s.workloads[1].workers), (6, 1));
        let err = load(&text.replace("group: vms", "group: db"), &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:11: workloads.a.group: no group named `db` (groups: vms)"), "{err}");
        let err = load(&text.replace("group: vms", "group: vms\n    jobs: 2"), &[]).unwrap_err().to_string();
        assert!(err.contains("set `group` or `jobs`, not both"), "{err}");
    }

    #[test]
    fn vars_and_expectations() {
        let text = BASIC
            .replace("name: basic\n", "name: basic\nvars:\n  secs: 5\n")
            .replace("duration: 5s", "duration: ${secs}s");
        let s = load(&format!("{text}expect:\n  - a.read.p99 < 5ms\n"), &["secs=9"]).unwrap();
        assert_eq!(s.workloads[0].duration, Duration::from_secs(9));
        assert_eq!(s.vars["secs"], "9");
        assert_eq!(s.expect.len(), 1);
        let err = load(&format!("{text}expect:\n  - a.read.p99 < 5\n"), &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:15: expect.0: `5` is not a latency"), "{err}");
    }

    #[test]
    fn set_overrides_one_workload_or_all() {
        let s = load(BASIC, &["a.iodepth=32"]).unwrap();
        assert_eq!(s.workloads[0].io().unwrap().iodepth, 32);
        let s = load(BASIC, &["iodepth=8", "bs=8k"]).unwrap();
        assert_eq!(s.workloads[0].io().unwrap().iodepth, 8, "a bare key overrides workloads that set it too");
        assert_eq!(s.workloads[1].io().unwrap().iodepth, 8);
        assert_eq!(s.workloads[1].io().unwrap().bs, BlockSizes::single(8192));
        let err = load(BASIC, &["a.iodepth=zero"]).unwrap_err().to_string();
        assert!(err.starts_with("--set a.iodepth=zero:"), "{err}");
        let err = load(BASIC, &["a.iodepth=0"]).unwrap_err().to_string();
        assert!(err.starts_with("--set a.iodepth=0: workloads.a.iodepth: 0 must be"), "{err}");
        let err = load(BASIC, &["nosuch.iodepth=1"]).unwrap_err().to_string();
        assert!(err.contains("nosuch"), "{err}");
    }

    #[test]
    fn a_set_no_workload_takes_is_refused_not_ignored() {
        let pgbench = "name: p\nworkloads:\n  w:\n    driver: pgbench\n    duration: 2s\n";
        let err = load(pgbench, &["dbms=mariadb"]).unwrap_err().to_string();
        assert_eq!(err, "--set dbms=mariadb: no workload takes `dbms` (w (pgbench)), so it would change nothing");
        // one workload that takes it is enough; the others keep their own
        let both = format!("{pgbench}  s:\n    driver: sysbench\n    duration: 2s\n");
        assert!(load(&both, &["dbms=mariadb"]).is_ok());
        // an IO key on an IO scenario, a program's key on its program: taken
        assert!(load(BASIC, &["bs=8k"]).is_ok());
        assert!(load(pgbench, &["scale=3"]).is_ok());
        let err = load(BASIC, &["scale=3"]).unwrap_err().to_string();
        assert!(err.contains("no workload takes `scale`"), "{err}");
        // `--target` names the storage for what uses storage: a study of none is let be
        let network = "name: n\nworkloads:\n  w:\n    driver: iperf3\n    duration: 2s\n";
        assert!(load(network, &["target=/srv"]).is_ok());
    }

    #[test]
    fn duplicate_and_idle_workloads_are_rejected() {
        let err = load(&BASIC.replace("  b:\n", "  a:\n"), &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:6: workloads: `a` is given twice"), "{err}");
        let twice = format!("{BASIC}timeline:\n  - start: a\n  - start: b\n  - start: a\n");
        let err = load(&twice, &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:15: timeline.2.start: `a` already started"), "{err}");
        let idle = format!("{BASIC}timeline:\n  - start: a\n");
        let err = load(&idle, &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:9: workloads.b: `b` is never started"), "{err}");
    }

    #[test]
    fn rwmixread_in_defaults_applies_to_mixed_workloads_only() {
        let s = load(&BASIC.replace("  duration: 5s\n", "  duration: 5s\n  rwmixread: 70\n"), &[]).unwrap();
        assert_eq!(s.workloads[0].io().unwrap().rw, Rw::Randread);
        let err = load(&BASIC.replace("    iodepth: 4", "    iodepth: 4\n    rwmixread: 70"), &[]).unwrap_err();
        assert!(err.to_string().contains("only applies to `rw: randrw` or `rw: rw`"));
    }

    #[test]
    fn set_values_of_text_keys_stay_text() {
        let s = load(BASIC, &["target=123"]).unwrap();
        assert_eq!(s.workloads[0].io().unwrap().targets, vec![PathBuf::from("123")]);
    }

    #[test]
    fn blank_or_multi_line_targets_are_refused_where_written() {
        for (bad, shown) in [("''", "\"\""), ("' '", "\" \""), ("\"/tmp/a\\nb\"", "\"/tmp/a\\nb\"")] {
            let err = load(&BASIC.replace("target: /tmp", &format!("target: {bad}")), &[]).unwrap_err().to_string();
            assert!(err.starts_with(&format!("s.yaml:3: defaults.target: {shown} is not a path")), "{err}");
        }
        let list = BASIC.replace("    iodepth: 4", "    iodepth: 4\n    target: [/tmp, \"\\t\"]");
        let err = load(&list, &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:9: workloads.a.target: \"\\t\" is not a path"), "{err}");
        let err = load(&BASIC.replace("bs: 1m", "bs: 1m\n    file: \"x\\ny\""), &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:12: workloads.b.file: \"x\\ny\" cannot name a file"), "{err}");
    }

    #[test]
    fn keep_belongs_to_an_appending_workload() {
        let err = load(&BASIC.replace("bs: 1m", "bs: 1m\n    keep: true"), &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:12: workloads.b.keep: keeps what an appending workload wrote"), "{err}");
        let s = load(&BASIC.replace("bs: 1m", "bs: 1m\n    extend: true\n    keep: true"), &[]).unwrap();
        assert!(s.workloads[1].io().unwrap().extend && s.workloads[1].io().unwrap().keep);
        let s = load(&BASIC.replace("bs: 1m", "bs: 1m\n    extend: true"), &[]).unwrap();
        assert!(!s.workloads[1].io().unwrap().keep, "an appending workload starts from an empty file by default");
    }

    /// `jobs: cores` is a worker per CPU online here, an appender's each with its own
    /// file; a word other than `cores` is refused at its key.
    #[test]
    fn jobs_cores_is_a_worker_per_online_cpu() {
        // SAFETY: sysconf reads a value and has no preconditions.
        let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.clamp(1, 1024) as u32;
        let s = load(&BASIC.replace("bs: 1m", "bs: 1m\n    extend: true\n    jobs: cores"), &[]).unwrap();
        assert_eq!((s.workloads[1].workers, s.workloads[1].io().unwrap().extend), (online, true));
        let err = load(&BASIC.replace("iodepth: 4", "iodepth: 4\n    jobs: many"), &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:9: workloads.a.jobs: ") && err.contains("`cores`"), "{err}");
        let err = load(&BASIC.replace("iodepth: 4", "iodepth: 4\n    jobs: -1"), &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:9: workloads.a.jobs: "), "{err}");
        // on hosts this machine's CPUs are not theirs
        let text = "name: x\nworkloads:\n  a: {rw: read, jobs: cores, duration: 2s}\n";
        let err = Scenario::load_on_hosts(&Source { origin: "s.yaml".into(), text }, &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:3: workloads.a.jobs: `cores` counts the CPUs of this machine"), "{err}");
    }

    #[test]
    fn yaml_syntax_errors_are_located() {
        let err = load("name: x\nworkloads: [\n", &[]).unwrap_err().to_string();
        assert!(err.starts_with("s.yaml:"), "{err}");
    }

    #[test]
    fn with_an_inventory_a_workload_naming_no_hosts_runs_on_every_host() {
        let text = "name: x\nworkloads:\n  a: {rw: read, jobs: 3, duration: 2s}\n  \
                    b: {rw: read, hosts: web, per_host: 2, duration: 2s}\n  \
                    f: {target: /tmp, engine: fio, rw: read, duration: 2s}\n";
        let s = Scenario::load_on_hosts(&Source { origin: "s.yaml".into(), text }, &[]).unwrap();
        let p = |name: &str| s.workloads.iter().find(|w| w.name == name).unwrap().placement.clone();
        // its jobs on each host, no target needed: each host's comes from the inventory
        let a = p("a").expect("on every host");
        assert_eq!((a.hosts, a.per_host, a.implied), (vec!["all".to_string()], 3, true));
        let b = p("b").expect("its own hosts");
        assert_eq!((b.hosts, b.per_host, b.implied), (vec!["web".to_string()], 2, false));
        assert!(p("f").is_none(), "fio runs here");
        // without an inventory, the same workload needs a target
        let err = load(text, &[]).unwrap_err().to_string();
        assert!(err.contains("workloads.a: missing `target`"), "{err}");
    }

    #[test]
    fn host_targets_pick_among_a_placed_workloads_host_targets() {
        let placed = |extra: &str| format!("name: x\nworkloads:\n  a: {{rw: read, duration: 2s{extra}}}\n");
        let text = placed(", hosts: all, host_targets: [1, 2], queue: per_target");
        let s = load(&text, &[]).unwrap();
        let p = s.workloads[0].placement.clone().expect("on hosts");
        assert_eq!(p.host_targets, Some(vec![1, 2]));
        assert!(p.host_targets_at.starts_with("s.yaml:3: workloads.a.host_targets"), "{}", p.host_targets_at);
        assert_eq!(s.workloads[0].io().unwrap().queue, crate::scenario::Queue::PerTarget);
        for (extra, said) in [
            (", target: /tmp, host_targets: [0]", "workloads.a.host_targets: picks among its hosts' inventory targets"),
            (", hosts: all, host_targets: []", "workloads.a.host_targets: lists no position"),
            (", hosts: all, host_targets: [1, 0, 1]", "workloads.a.host_targets: position 1 is listed twice"),
            (
                ", hosts: all, host_targets: [-1]",
                "workloads.a.host_targets[0]: expected a whole number of 0 or more, not `-1`",
            ),
        ] {
            let err = load(&placed(extra), &[]).unwrap_err().to_string();
            assert!(err.starts_with("s.yaml:3: ") && err.contains(said), "{extra}: {err}");
        }
        // in `defaults`, for the placed workloads only
        let text = "name: x\ndefaults: {host_targets: [2]}\nworkloads:\n  a: {rw: read, duration: 2s, hosts: all}\n  \
                    b: {rw: read, duration: 2s, target: /tmp}\n";
        let s = load(text, &[]).unwrap();
        assert_eq!(s.workloads[0].placement.as_ref().unwrap().host_targets, Some(vec![2]));
        assert!(s.workloads[1].placement.is_none());
    }

    #[test]
    fn a_timeline_of_commands_alone_needs_no_workload() {
        let s = load("name: c\nworkloads: {}\ntimeline:\n  - hook: playbook.Run\n  - wait: 1s\n", &[]).unwrap();
        assert!(s.workloads.is_empty());
        let err = load("name: c\nworkloads: {}\ntimeline:\n  - wait: 1s\n", &[]).unwrap_err().to_string();
        assert!(err.contains("workloads: a scenario needs at least one workload"), "{err}");
    }
}
