//! What the disks of a database saw, when a workload's throwaway server kept its
//! transaction log on a disk of its own (`log_target`), and maybe its tables on others
//! (`table_targets`): the field notes read a log disk by its writes, "low concurrency and
//! small size (16K-32K)", so the answer says them, the writes' rate, size and queue
//! depth, and the same of the data's disk and each table disk beside it.

use super::measured::WorkloadSummary;
use crate::scenario::program::seam::ServerDirs;
use crate::store::Observed;
use serde_json::Value;

/// The clause for every workload whose log was apart (`oltp's log disk vdb: 2,275
/// writes/s of 23.9 kB at queue depth 2.45 (w_await 410 µs); its data disk vdc: ...;
/// its table disk vdd: ...`); None when no workload's was, or its disk was not observed.
pub fn clause(workloads: &[WorkloadSummary], environment: &Value, observed: &[Observed]) -> Option<String> {
    let said: Vec<String> = workloads
        .iter()
        .filter_map(|w| {
            let disks = disks(&w.stored.server_dirs, environment)?;
            let mut parts = disks.iter().filter_map(|(roles, d)| Some((roles, d, writes(observed, d)?)));
            let (roles, d, saw) = parts.next().filter(|(roles, _, _)| roles[0] == LOG)?;
            let first = format!("{}'s {}: {saw}", w.stored.name, named(roles, d));
            let rest = parts.map(|(roles, d, saw)| format!("its {}: {saw}", named(roles, d)));
            Some(std::iter::once(first).chain(rest).collect::<Vec<_>>().join("; "))
        })
        .collect();
    (!said.is_empty()).then(|| said.join("; "))
}

/// What a directory of a server is, as a disk is named by it (`log disk`) and as disks
/// share (`log and data share`).
type Role = (&'static str, &'static str);
const LOG: Role = ("log", "log");
const DATA: Role = ("data", "data");
const TABLES: Role = ("table", "tables");

/// The devices of a server's directories, the log's first, each once with what it
/// holds; None when its log was not apart or its device is not known.
fn disks(dirs: &ServerDirs, environment: &Value) -> Option<Vec<(Vec<Role>, String)>> {
    let log = device_of(environment, dirs.log.as_deref()?.to_str()?)?;
    let mut disks: Vec<(Vec<Role>, String)> = vec![(vec![LOG], log)];
    let others = dirs.data.iter().map(|d| (DATA, d)).chain(dirs.tables.iter().map(|t| (TABLES, t)));
    for (role, dir) in others {
        let Some(device) = dir.to_str().and_then(|d| device_of(environment, d)) else { continue };
        match disks.iter_mut().find(|(_, d)| *d == device) {
            Some((roles, _)) if !roles.contains(&role) => roles.push(role),
            Some(_) => {}
            None => disks.push((vec![role], device)),
        }
    }
    Some(disks)
}

/// A disk as its roles name it: `log disk vdb`, `log and data share vdb`, `log, data
/// and tables share vdb`.
fn named(roles: &[Role], device: &str) -> String {
    let words: Vec<&str> = roles.iter().map(|r| r.1).collect();
    match (roles, words.split_last()) {
        ([(one, _)], _) => format!("{one} disk {device}"),
        (_, Some((last, [first]))) => format!("{first} and {last} share {device}"),
        (_, Some((last, rest))) => format!("{} and {last} share {device}", rest.join(", ")),
        (_, None) => format!("disk {device}"),
    }
}

/// The device (`vdb`) under `path`, as the run's environment recorded its targets.
fn device_of(environment: &Value, path: &str) -> Option<String> {
    let targets = environment.get("targets")?.as_array()?;
    let target = targets.iter().find(|t| t.get("path").and_then(Value::as_str) == Some(path))?;
    let device = target.get("device")?.as_str()?;
    Some(device.rsplit('/').next().unwrap_or(device).to_string())
}

/// A device's writes over the run, in words: their rate, mean size and the queue's depth.
fn writes(observed: &[Observed], device: &str) -> Option<String> {
    let source = format!("device:{device}");
    let mean = |name: &str| observed.iter().find(|o| o.source == source && o.name == name).map(|o| o.mean);
    let (per_s, kb_s, queue) = (mean("w_s")?, mean("wkB_s")?, mean("aqu_sz")?);
    let size = if per_s > 0.0 { kb_s / per_s } else { 0.0 };
    let wait = mean("w_await_ms").map(|ms| format!(" (w_await {ms:.2} ms)")).unwrap_or_default();
    let rate = crate::metrics::format::count(per_s);
    Some(format!("{rate} writes/s of {size:.1} kB at queue depth {queue:.2}{wait}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn observed(device: &str, w_s: f64, wkb_s: f64, aqu: f64) -> Vec<Observed> {
        let o = |name: &str, mean: f64| Observed {
            source: format!("device:{device}"),
            name: name.into(),
            mean,
            max: mean,
            seconds: 10,
            delta: None,
        };
        vec![o("w_s", w_s), o("wkB_s", wkb_s), o("aqu_sz", aqu)]
    }

    #[test]
    fn a_log_disk_is_read_by_its_writes_rate_size_and_queue() {
        let env = json!({"targets": [{"path": "/mnt/log", "device": "/dev/vdb"}, {"path": "/mnt/data", "device": "/dev/vdc"}]});
        let mut seen = observed("vdb", 2000.0, 48_000.0, 0.9);
        seen.extend(observed("vdc", 100.0, 6_400.0, 0.3));
        let said = writes(&seen, "vdb").unwrap();
        assert_eq!(said, "2,000 writes/s of 24.0 kB at queue depth 0.90");
        assert_eq!(device_of(&env, "/mnt/log").as_deref(), Some("vdb"));
        assert_eq!(device_of(&env, "/elsewhere"), None);
        assert_eq!(writes(&seen, "vdz"), None);
    }

    #[test]
    fn each_table_disk_is_said_beside_the_log_s_and_a_shared_disk_once() {
        let env = json!({"targets": [
            {"path": "/mnt/log", "device": "/dev/vdb"}, {"path": "/mnt/data", "device": "/dev/vdc"},
            {"path": "/mnt/t1", "device": "/dev/vdd"}, {"path": "/mnt/t2", "device": "/dev/vdc"}
        ]});
        let dirs = |tables: &[&str]| ServerDirs {
            data: Some("/mnt/data".into()),
            log: Some("/mnt/log".into()),
            tables: tables.iter().map(std::path::PathBuf::from).collect(),
        };
        let said = |tables: &[&str]| {
            let disks = disks(&dirs(tables), &env).unwrap();
            disks.iter().map(|(roles, d)| named(roles, d)).collect::<Vec<_>>()
        };
        assert_eq!(said(&["/mnt/t1", "/mnt/t2"]), ["log disk vdb", "data and tables share vdc", "table disk vdd"]);
        assert_eq!(said(&[]), ["log disk vdb", "data disk vdc"]);
        let all = [LOG, DATA, TABLES];
        assert_eq!(named(&all, "vda"), "log, data and tables share vda");
        assert_eq!(disks(&ServerDirs { log: None, ..dirs(&["/mnt/t1"]) }, &env), None);
    }
}
