//! What differs between the configurations of compared runs: their workloads' settings,
//! each change said once, and the facts of their environment (scenario, host, version).

use super::summary::RunSummary;
use crate::store::read::{Difference, Ran, Setting, StoredWorkload, run_differences};
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// What differs between a later run's configuration and the first's.
#[derive(Debug, Serialize)]
pub struct Configuration {
    pub run: i64,
    /// Workload settings, paired by name (see [`run_differences`]).
    pub workloads: Vec<Difference>,
    /// The scenario's name, the host and fathom's version (the stored environment,
    /// its keys flattened: `kernel`, `targets.0.filesystem`).
    pub facts: Vec<Fact>,
}

#[derive(Debug, Serialize)]
pub struct Fact {
    pub key: String,
    pub before: Value,
    pub after: Value,
}

/// What differs between run `b`'s configuration and run `a`'s.
pub(super) fn configuration(a: &RunSummary, b: &RunSummary) -> Configuration {
    let mut facts = Vec::new();
    if a.run.scenario != b.run.scenario {
        facts.push(Fact {
            key: "scenario".into(),
            before: a.run.scenario.clone().into(),
            after: b.run.scenario.clone().into(),
        });
    }
    let (mut ea, mut eb) = (BTreeMap::new(), BTreeMap::new());
    flatten("", &a.run.environment, &mut ea);
    flatten("", &b.run.environment, &mut eb);
    for key in ea.keys().chain(eb.keys()).collect::<BTreeSet<_>>() {
        let (x, y) = (ea.get(key).cloned().unwrap_or_default(), eb.get(key).cloned().unwrap_or_default());
        if x != y {
            facts.push(Fact { key: key.clone(), before: x, after: y });
        }
    }
    Configuration { run: b.run.id, workloads: said_once(run_differences(&ran_whole(a), &ran_whole(b))), facts }
}

/// Differences with one change said once: a program's `clients` 2 -> 4 is also its
/// workers and jobs 2 -> 4, which the list gives first; the last of those alike (the
/// key the user wrote) is kept.
fn said_once(all: Vec<Difference>) -> Vec<Difference> {
    let alike =
        |a: &Difference, b: &Difference| (&a.workload, &a.before, &a.after) == (&b.workload, &b.before, &b.after);
    all.iter()
        .enumerate()
        .filter(|(i, d)| !all[i + 1..].iter().any(|later| alike(d, later)))
        .map(|(_, d)| d.clone())
        .collect()
}

/// What ran over a whole run: each workload with all its workers, on its hosts.
fn ran_whole(s: &RunSummary) -> Vec<(Ran, &StoredWorkload)> {
    s.workloads
        .iter()
        .map(|w| {
            let hosts = if w.stored.placed() { w.stored.hosts.clone() } else { vec!["localhost".to_string()] };
            let ran = Ran {
                workload: w.workload.name.clone(),
                idx: w.stored.idx,
                workers: w.workload.workers,
                depth: w.stored.iodepth,
                hosts,
            };
            (ran, &w.stored)
        })
        .collect()
}

/// A JSON value's leaves by dotted path: `targets.0.filesystem`.
fn flatten(prefix: &str, v: &Value, out: &mut BTreeMap<String, Value>) {
    let key = |k: &str| if prefix.is_empty() { k.to_string() } else { format!("{prefix}.{k}") };
    match v {
        Value::Object(m) => m.iter().for_each(|(k, v)| flatten(&key(k), v, out)),
        Value::Array(a) => a.iter().enumerate().for_each(|(i, v)| flatten(&key(&i.to_string()), v, out)),
        leaf => {
            out.insert(prefix.to_string(), leaf.clone());
        }
    }
}

/// `r: duration 1s -> 3s`, `r: block size 4k -> 64k`, `workload added: w`.
pub(super) fn difference_text(d: &Difference) -> String {
    match d.setting {
        Setting::Added => format!("workload added: {}", d.workload),
        Setting::Removed => format!("workload removed: {}", d.workload),
        _ => {
            let what = d.key.clone().unwrap_or_else(|| d.setting.describe().to_string());
            format!("{}: {what} {} -> {}", d.workload, json_text(&d.before), json_text(&d.after))
        }
    }
}

/// A stored value as a reader writes it: strings bare, null as `-`.
pub(super) fn json_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::read::Setting;

    fn changed(setting: Setting, key: Option<&str>, before: i64, after: i64) -> Difference {
        Difference {
            setting,
            workload: "oltp".into(),
            key: key.map(str::to_string),
            before: before.into(),
            after: after.into(),
            like: None,
        }
    }

    /// `clients 2 -> 4` was also listed as `workers 2 -> 4` and `jobs 2 -> 4`.
    #[test]
    fn one_change_is_said_once_by_the_key_the_user_wrote() {
        let all = vec![
            changed(Setting::Workers, None, 2, 4),
            changed(Setting::Jobs, None, 2, 4),
            changed(Setting::Depth, None, 1, 8),
            changed(Setting::Other, Some("clients"), 2, 4),
        ];
        let kept: Vec<String> = said_once(all).iter().map(difference_text).collect();
        assert_eq!(kept.len(), 2, "{kept:?}");
        assert!(kept[1].contains("clients 2 -> 4") && !kept.iter().any(|k| k.contains("workers")), "{kept:?}");
    }
}
