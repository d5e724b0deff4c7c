//! Workloads placed on other hosts, host by host over the run: each host's IOPS and
//! p99 latency, as X-Ray and HCIBench chart each VM, so one slow host shows.

use super::chart::{Axis, Chart, Style, Unit};
use super::summary::RunSummary;
use crate::error::Result;
use crate::store::Store;
use std::collections::BTreeMap;

/// Per series name and bin: (IOPS, p99) points.
type Lines = BTreeMap<String, [BTreeMap<i64, f64>; 2]>;

/// IOPS and p99 per host in bins of `bin` seconds: a series per placed workload and host
/// (`WORKLOAD HOST`), or, where a host runs several placed workloads (a node's VMs and
/// their disks), a series per host: its workloads' IOPS summed and the worst of their
/// p99s. Nothing for a run with no workload on other hosts.
pub fn charts(store: &Store, s: &RunSummary, bin: i64) -> Result<Vec<Chart>> {
    let placed: Vec<_> = s.workloads.iter().filter(|w| !w.hosts.is_empty()).collect();
    let mut per_host: BTreeMap<&str, usize> = BTreeMap::new();
    for h in placed.iter().flat_map(|w| &w.hosts) {
        *per_host.entry(h.host.as_str()).or_default() += 1;
    }
    let by_node = per_host.values().any(|&n| n > 1);
    let series = |workload: &str, host: &str| if by_node { host.to_string() } else { format!("{workload} {host}") };
    let mut lines: Lines = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for w in &placed {
        for b in store.host_bins(s.run.id, w.workload.idx, bin)? {
            let [ops, lat] = lines.entry(series(&w.workload.name, &b.host)).or_default();
            *ops.entry(b.t).or_default() += b.ops as f64 / bin as f64;
            if b.p99_us.is_finite() {
                let worst = lat.entry(b.t).or_default();
                *worst = worst.max(b.p99_us);
            }
        }
        // in the order of the per-host table
        for h in &w.hosts {
            let name = series(&w.workload.name, &h.host);
            if !order.contains(&name) {
                order.push(name);
            }
        }
    }
    Ok(draw(bin, by_node, lines, &order))
}

/// The two charts of `lines`, a series each in `order`.
fn draw(bin: i64, by_node: bool, mut lines: Lines, order: &[String]) -> Vec<Chart> {
    let per = if bin == 1 { "per second".to_string() } else { format!("per {} bin", Unit::Seconds.label(bin as f64)) };
    let time = || Axis::new("time into the run", Unit::Seconds);
    let (what, worst) =
        if by_node { ("per node, its workloads summed", ", the worst of its workloads") } else { ("per host", "") };
    let mut iops = Chart::new("ts-hosts-iops", &format!("IOPS {what} ({per})"), time(), Axis::new("IOPS", Unit::Count));
    let title = format!("Latency p99 {}{worst} ({per})", if by_node { "per node" } else { "per host" });
    let mut p99 = Chart::new("ts-hosts-p99", &title, time(), Axis::log("latency", Unit::Micros));
    let mid = |t: &i64| *t as f64 + bin as f64 / 2.0;
    for name in order {
        let Some([ops, lat]) = lines.remove(name) else { continue };
        iops.add(name, Style::Line, ops.iter().map(|(t, v)| (mid(t), *v)).collect());
        p99.add(name, Style::Line, lat.iter().map(|(t, v)| (mid(t), *v)).collect());
    }
    [iops, p99].into_iter().filter(|c| !c.is_empty()).collect()
}
