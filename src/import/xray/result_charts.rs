//! X-Ray's `results:` as fathom's result views ([`crate::scenario::results`]): the
//! IOPS, latency or bandwidth of a VM group's workloads (or one of them) per second,
//! the host CPU for X-Ray's CPU counter, and what fathom does not measure listed as
//! such. X-Ray charts the run, not the warm-ups before it: a group's view is of the
//! workloads the `run` steps start.

use super::placement::Placed;
use super::timeline_steps::{Steps, Workload};
use super::written::ResultEntry;
use crate::scenario::results::{Aggregate, BandFile, CPU, NET_RECEIVED, NET_TRANSMITTED, ResultFile, ResultMetric};
use crate::scenario::yaml::Value;
use crate::suggest;
use indexmap::IndexMap;

/// A mistake in an entry: the key under `results.I.NAME` and what was expected.
pub type Mistake = (String, String);

/// The view of X-Ray's result `name`, and notes on what changed.
pub fn view(
    name: &str,
    r: &ResultEntry,
    workloads: &[Workload],
    steps: &Steps,
    groups: &IndexMap<String, Placed>,
    notes: &mut Vec<String>,
) -> Result<ResultFile, Mistake> {
    let mut out = ResultFile {
        name: name.to_string(),
        workloads: None,
        metric: None,
        aggregate: None,
        phases: None,
        hint: r.result_hint.clone(),
        expected: None,
        bands: None,
        observed: None,
        not_measured: None,
    };
    if r.step.is_some() {
        notes.push(format!("result {name}: step left out: fathom's series are per second"));
    }
    if let Some(metric) = &r.metric {
        let net = [("NetReceived", NET_RECEIVED), ("NetTransmitted", NET_TRANSMITTED)];
        if metric.starts_with("CpuUsage") {
            out.name = format!("{name} (host CPU busy %)");
            out.observed = Some(CPU.into());
            notes.push(format!("result {name}: X-Ray's {metric} is the hosts' CPU busy % here (not MHz)"));
        } else if let Some((_, view)) = net.iter().find(|(counter, _)| metric.starts_with(counter)) {
            // vSphere's KBps is of 1,024 bytes, as the hosts' byte counters are read here
            out.name = format!("{name} (hosts' network KiB/s)");
            out.observed = Some(view.to_string());
            notes.push(format!("result {name}: X-Ray's {metric} is the hosts' network interfaces here (not the VMs')"));
        } else {
            out.not_measured = Some(format!("X-Ray's hypervisor counter {metric}: fathom has no observer for it"));
        }
        return Ok(out);
    }
    let metric = match r.result_type.as_deref() {
        Some("iops") => ResultMetric::Iops,
        Some("latency") => ResultMetric::Latency,
        Some("bandwidth") => ResultMetric::Bandwidth,
        Some("generic") => {
            out.not_measured = Some("X-Ray's Prometheus query of its VMs' exporters (result_type: generic)".into());
            return Ok(out);
        }
        Some(t @ ("active" | "errors")) => {
            out.not_measured = Some(format!(
                "X-Ray's `{t}` per VM: fathom records a workload's errors and a lost host in the run instead"
            ));
            return Ok(out);
        }
        Some(t) => return Err(("result_type".into(), format!("`{t}`: expected iops, latency or bandwidth"))),
        None => return Err(("result_type".into(), "missing: expected iops, latency or bandwidth".into())),
    };
    let (chosen, group) = chosen(r, workloads, steps, groups)?;
    if chosen.is_empty() {
        out.not_measured = Some(format!("no workload of `{group}` is started, so nothing to measure"));
        return Ok(out);
    }
    out.workloads = Some(chosen.iter().flat_map(|w| w.jobs.iter().cloned()).collect());
    out.metric = Some(metric);
    let vms = groups.get(&group).map(Placed::workers).unwrap_or(1).max(1) as f64;
    // X-Ray without `aggregate` draws each VM's line and expects its figure of each: the
    // group's sum is that figure times its VMs (latency: their mean, the same figure)
    let per_vm = match (r.aggregate.as_deref(), metric) {
        (_, ResultMetric::Latency) => 1.0,
        (None, _) => vms,
        (Some("sum"), _) => 1.0,
        (Some("mean"), _) => 1.0,
        (Some(a), _) => return Err(("aggregate".into(), format!("`{a}`: expected sum or mean"))),
    };
    out.aggregate = Some(match (r.aggregate.as_deref(), metric) {
        (_, ResultMetric::Latency) => Aggregate::Mean,
        (Some("mean"), _) => Aggregate::Mean,
        _ => Aggregate::Sum,
    });
    if r.aggregate.is_none() && per_vm > 1.0 && (r.result_expected_value.is_some() || r.result_value_bands.is_some()) {
        notes.push(format!("result {name}: X-Ray's per-VM figures are times the group's {vms} VMs (its sum)"));
    }
    // X-Ray's figures are in its series' units: IOPS, bytes per second, microseconds
    let scale = per_vm * from_xray(metric);
    if metric == ResultMetric::Bandwidth && (r.result_expected_value.is_some() || r.result_value_bands.is_some()) {
        notes.push(format!("result {name}: X-Ray's bytes per second are MB/s (10^6 bytes) here"));
    }
    out.expected =
        r.result_expected_value.as_ref().map(|v| number(v, "result_expected_value")).transpose()?.map(|e| e * scale);
    out.bands = bands(r, scale)?;
    Ok(out)
}

/// The workloads result `r` is of, and their VM group: one workload (`workload_name` or
/// `workload_mask`) or a group's. Only started workloads are measured.
/// A group's view is of its run's workloads, not the warm-ups of setup, unless setup is
/// all there is.
fn chosen<'w>(
    r: &ResultEntry,
    workloads: &'w [Workload],
    steps: &Steps,
    groups: &IndexMap<String, Placed>,
) -> Result<(Vec<&'w Workload>, String), Mistake> {
    let started = |w: &&Workload| steps.runtime.contains_key(&w.name);
    let one = r
        .workload_name
        .as_ref()
        .map(|n| ("workload_name", n))
        .or(r.workload_mask.as_ref().map(|n| ("workload_mask", n)));
    if let Some((key, wanted)) = one {
        let w = workloads.iter().find(|w| &w.name == wanted).ok_or_else(|| {
            let names: Vec<&str> = workloads.iter().map(|w| w.name.as_str()).collect();
            (key.to_string(), suggest::no_workload(wanted, &names))
        })?;
        Ok((std::iter::once(w).filter(started).collect(), w.group.clone()))
    } else if let Some(g) = &r.vm_group {
        if !groups.contains_key(g) {
            let known: Vec<&str> = groups.keys().map(String::as_str).collect();
            let hint = suggest::hint(g, known.iter().copied());
            return Err(("vm_group".into(), format!("no VM group `{g}`{hint} (vms: {})", known.join(", "))));
        }
        let of_group: Vec<&Workload> = workloads.iter().filter(|w| &w.group == g).filter(started).collect();
        // the run's workloads, not the warm-ups of setup (unless setup is all there is)
        let run: Vec<&Workload> = of_group.iter().copied().filter(|w| !steps.setup_started.contains(&w.name)).collect();
        Ok((if run.is_empty() { of_group } else { run }, g.clone()))
    } else {
        Err(("vm_group".into(), "missing: a result is of a VM group or a workload_name".into()))
    }
}

/// `result_value_bands` in fathom's units (`scale` times X-Ray's figures).
fn bands(r: &ResultEntry, scale: f64) -> Result<Option<Vec<BandFile>>, Mistake> {
    let Some(bands) = &r.result_value_bands else {
        return Ok(None);
    };
    let mut out_bands = Vec::new();
    for (i, b) in bands.iter().enumerate() {
        let key = |k: &str| format!("result_value_bands.{i}.{k}");
        let lower = number(&b.lower, &key("lower"))? * scale;
        let upper = number(&b.upper, &key("upper"))? * scale;
        // the share is the name's percent (`95%`), as X-Ray names its bands
        out_bands.push(BandFile { name: b.name.clone(), lower, upper, share: None });
    }
    Ok(Some(out_bands))
}

/// What one of X-Ray's figures of `metric` is in fathom's unit of it: X-Ray charts
/// bandwidth in bytes per second and latency in microseconds (curie's `VMGroupResult`),
/// fathom in MB/s and microseconds.
fn from_xray(metric: ResultMetric) -> f64 {
    match metric {
        ResultMetric::Bandwidth => 1e-6,
        ResultMetric::Iops | ResultMetric::Latency => 1.0,
    }
}

/// A rendered number (`"{{ iops * 0.9 }}"` renders as text).
fn number(v: &Value, key: &str) -> Result<f64, Mistake> {
    let text = v.as_text().unwrap_or_default();
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| (key.to_string(), format!("`{text}`: expected a number")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::yaml;

    fn entry(text: &str) -> ResultEntry {
        yaml::from_str("t", text).unwrap()
    }

    /// Group G (2 hosts x 2 VMs): a warm-up started in setup, a run workload, a mask's.
    fn setting() -> (Vec<Workload>, Steps, IndexMap<String, Placed>) {
        let w = |n: &str| Workload {
            name: n.into(),
            group: "G".into(),
            config: "w.fio".into(),
            jobs: vec![format!("{n}:a"), format!("{n}:b")],
        };
        let workloads = vec![w("Warm"), w("Run"), w("Read")];
        let mut steps = Steps::default();
        for n in ["Warm", "Run", "Read"] {
            steps.runtime.insert(n.into(), Some(60));
        }
        steps.setup_started.push("Warm".into());
        let g = Placed { hosts: vec![0, 1], per_host: 2, said: String::new() };
        (workloads, steps, IndexMap::from([("G".to_string(), g)]))
    }

    #[test]
    fn x_rays_bytes_per_second_are_judged_as_mb_per_s() {
        let (w, s, g) = setting();
        let mut notes = Vec::new();
        // database_colocation_standard's DSS band, per VM in bytes per second
        let r = entry(
            "vm_group: G\nresult_type: bandwidth\naggregate: sum\nresult_expected_value: '761528320'\n\
             result_value_bands:\n  - {name: 95%, lower: 712318903, upper: 810737736}\n",
        );
        let v = view("DSS Throughput", &r, &w, &s, &g, &mut notes).unwrap();
        assert_eq!(v.metric, Some(ResultMetric::Bandwidth));
        let b = &v.bands.unwrap()[0];
        assert!((b.lower - 712.318903).abs() < 1e-9 && (b.upper - 810.737736).abs() < 1e-9, "{b:?}");
        assert!((v.expected.unwrap() - 761.52832).abs() < 1e-9);
        assert!(notes.iter().any(|n| n.contains("bytes per second are MB/s")), "{notes:?}");
        // latency is in microseconds in both
        let r = entry("vm_group: G\nresult_type: latency\nresult_expected_value: '500'\n");
        assert_eq!(view("L", &r, &w, &s, &g, &mut notes).unwrap().expected, Some(500.0));
    }

    #[test]
    fn a_groups_result_is_of_the_runs_workloads_per_vm_figures_times_its_vms() {
        let (w, s, g) = setting();
        let mut notes = Vec::new();
        let r = entry(
            "vm_group: G\nresult_type: iops\nresult_expected_value: '100'\nresult_value_bands:\n  - {name: 95%, lower: 90, upper: '110.5'}\nstep: 30s\n",
        );
        let v = view("IOPS", &r, &w, &s, &g, &mut notes).unwrap();
        let jobs = ["Run:a", "Run:b", "Read:a", "Read:b"].map(String::from).to_vec();
        assert_eq!(v.workloads, Some(jobs));
        assert_eq!((v.expected, v.aggregate), (Some(400.0), Some(Aggregate::Sum)));
        let b = &v.bands.unwrap()[0];
        assert_eq!((b.lower, b.upper, b.share.is_none()), (360.0, 442.0, true));
        assert!(notes.iter().any(|n| n.contains("step left out")), "{notes:?}");
        let masked = view(
            "R",
            &entry("vm_group: G\nworkload_mask: Read\nresult_type: latency\naggregate: sum\n"),
            &w,
            &s,
            &g,
            &mut notes,
        )
        .unwrap();
        assert_eq!(masked.workloads, Some(vec!["Read:a".to_string(), "Read:b".to_string()]));
        assert_eq!(masked.aggregate, Some(Aggregate::Mean));
    }

    #[test]
    fn counters_become_the_cpu_the_network_or_are_listed_as_not_measured() {
        let (w, s, g) = setting();
        let mut notes = Vec::new();
        let cpu = view(
            "CPU",
            &entry("vm_group: G\nmetric: CpuUsage.Avg.Megahertz\naggregate: sum\n"),
            &w,
            &s,
            &g,
            &mut notes,
        )
        .unwrap();
        assert_eq!((cpu.name.as_str(), cpu.observed.as_deref()), ("CPU (host CPU busy %)", Some("cpu")));
        let net =
            view("Net", &entry("vm_group: G\nmetric: NetReceived.Avg.KilobytesPerSecond\n"), &w, &s, &g, &mut notes)
                .unwrap();
        assert_eq!((net.name.as_str(), net.observed.as_deref()), ("Net (hosts' network KiB/s)", Some("net_received")));
        let sent = entry("vm_group: G\nmetric: NetTransmitted.Avg.KilobytesPerSecond\n");
        assert_eq!(view("Tx", &sent, &w, &s, &g, &mut notes).unwrap().observed.as_deref(), Some("net_transmitted"));
        let mem = entry("vm_group: G\nmetric: MemUsage.Avg.Percent\n");
        assert!(view("Mem", &mem, &w, &s, &g, &mut notes).unwrap().not_measured.unwrap().contains("MemUsage.Avg"));
        let generic =
            view("Q", &entry("vm_group: G\nresult_type: generic\nquery: sum(x)\n"), &w, &s, &g, &mut notes).unwrap();
        assert!(generic.not_measured.is_some());
        let (key, msg) =
            view("X", &entry("workload_name: Nope\nresult_type: iops\n"), &w, &s, &g, &mut notes).unwrap_err();
        assert_eq!(key, "workload_name");
        assert!(msg.contains("no workload named `Nope`"), "{msg}");
    }
}
