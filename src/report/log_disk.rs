//! What the disk of a database's transaction log saw, when a workload's throwaway server
//! kept its log on a disk of its own (`log_target`): the field notes read a log disk by
//! its writes, "low concurrency and small size (16K-32K)", so the answer says them, the
//! writes' rate, size and queue depth, beside what the data's disk saw.

use super::measured::WorkloadSummary;
use crate::store::Observed;
use serde_json::Value;

/// The clause for every workload whose log was apart (`oltp's log disk vdb: 2,275
/// writes/s of 23.9 kB at queue depth 2.45 (w_await 410 µs); its data disk vdc: ...`);
/// None when no workload's was, or its disk was not observed.
pub fn clause(workloads: &[WorkloadSummary], environment: &Value, observed: &[Observed]) -> Option<String> {
    let said: Vec<String> = workloads
        .iter()
        .filter_map(|w| {
            let (data, log) = &w.stored.server_dirs;
            let log_disk = device_of(environment, log.as_deref()?)?;
            let log_saw = writes(observed, &log_disk)?;
            let name = &w.stored.name;
            let data_disk = data.as_deref().and_then(|d| device_of(environment, d));
            Some(match data_disk {
                Some(d) if d == log_disk => format!("{name}'s log and data share {d}: {log_saw}"),
                Some(d) => match writes(observed, &d) {
                    Some(data_saw) => format!("{name}'s log disk {log_disk}: {log_saw}; its data disk {d}: {data_saw}"),
                    None => format!("{name}'s log disk {log_disk}: {log_saw}"),
                },
                None => format!("{name}'s log disk {log_disk}: {log_saw}"),
            })
        })
        .collect();
    (!said.is_empty()).then(|| said.join("; "))
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
}
