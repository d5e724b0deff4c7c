//! Workloads placed on other hosts, host by host over the run: each host's IOPS and
//! p99 latency, as X-Ray and HCIBench chart each VM, so one slow host shows.

use super::chart::{Axis, Chart, Style, Unit};
use super::summary::RunSummary;
use crate::error::Result;
use crate::store::Store;
use std::collections::BTreeMap;

/// IOPS and p99 per host (a series per placed workload and host, `WORKLOAD HOST`) in
/// bins of `bin` seconds; nothing for a run with no workload on other hosts.
pub fn charts(store: &Store, s: &RunSummary, bin: i64) -> Result<Vec<Chart>> {
    let per = if bin == 1 { "per second".to_string() } else { format!("per {} bin", Unit::Seconds.label(bin as f64)) };
    let time = || Axis::new("time into the run", Unit::Seconds);
    let mut iops =
        Chart::new("ts-hosts-iops", &format!("IOPS per host ({per})"), time(), Axis::new("IOPS", Unit::Count));
    let mut p99 = Chart::new(
        "ts-hosts-p99",
        &format!("Latency p99 per host ({per})"),
        time(),
        Axis::log("latency", Unit::Micros),
    );
    let mid = |t: i64| t as f64 + bin as f64 / 2.0;
    for w in s.workloads.iter().filter(|w| !w.hosts.is_empty()) {
        // per host: (IOPS, p99) points
        let mut by_host: BTreeMap<String, [Vec<(f64, f64)>; 2]> = BTreeMap::new();
        for b in store.host_bins(s.run.id, w.workload.idx, bin)? {
            let [ops, lat] = by_host.entry(b.host).or_default();
            ops.push((mid(b.t), b.ops as f64 / bin as f64));
            if b.p99_us.is_finite() {
                lat.push((mid(b.t), b.p99_us));
            }
        }
        // in the order of the per-host table
        for h in &w.hosts {
            let Some([ops, lat]) = by_host.remove(&h.host) else { continue };
            let name = format!("{} {}", w.workload.name, h.host);
            iops.add(&name, Style::Line, ops);
            p99.add(&name, Style::Line, lat);
        }
    }
    Ok([iops, p99].into_iter().filter(|c| !c.is_empty()).collect())
}
