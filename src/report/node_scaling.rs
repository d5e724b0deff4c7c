//! A TPC-C workload's scaling over nodes between two runs: its NOPM per node in a later
//! run over the first's, from the NOPM each run recorded (`tpcc:NAME`, and `nodes` when it
//! ran on hosts).

use crate::store::Observed;
use serde::Serialize;

/// A TPC-C workload's NOPM on `nodes` hosts (a later run) against on `base_nodes` (the
/// first): its scaling efficiency, the NOPM per node over the first run's per node
/// (HammerDB's users' "4.2M TPM on 4 nodes against 1M on one": 1.05).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scaling {
    pub run: i64,
    pub workload: String,
    pub base_nodes: f64,
    pub base_nopm: f64,
    pub nodes: f64,
    pub nopm: f64,
    pub efficiency: f64,
}

/// The scaling of each TPC-C workload (observations `tpcc:NAME`: `nopm`, and `nodes`
/// when it ran on hosts, else one node) between the first run's `base` and run `run`'s
/// `later`, where their numbers of nodes differ.
pub fn scaling(run: i64, base: &[Observed], later: &[Observed]) -> Vec<Scaling> {
    let figure = |of: &[Observed], source: &str, name: &str| {
        of.iter().find(|o| o.source == source && o.name == name).map(|o| o.mean)
    };
    let nodes = |of: &[Observed], source: &str| figure(of, source, "nodes").unwrap_or(1.0);
    let workloads =
        base.iter().filter(|o| o.name == "nopm" && o.source.starts_with("tpcc:") && !o.source.contains('@'));
    workloads
        .filter_map(|o| {
            let (base_nopm, nopm) = (o.mean, figure(later, &o.source, "nopm")?);
            let (base_nodes, nodes) = (nodes(base, &o.source), nodes(later, &o.source));
            (base_nodes != nodes && base_nopm > 0.0).then(|| Scaling {
                run,
                workload: o.source.trim_start_matches("tpcc:").to_string(),
                base_nodes,
                base_nopm,
                nodes,
                nopm,
                efficiency: (nopm / nodes) / (base_nopm / base_nodes),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tpcc_on_more_nodes_is_scored_against_the_first_runs_per_node_nopm() {
        let o = |source: &str, name: &str, mean: f64| Observed {
            source: source.into(),
            name: name.into(),
            mean,
            max: mean,
            seconds: 1,
            delta: None,
        };
        // one node (no `nodes`: not on hosts), then four summing 4.2 times its NOPM
        let one = [o("tpcc:oltp", "nopm", 1000.0), o("host", "usr_pct", 50.0)];
        let four = [o("tpcc:oltp", "nopm", 4200.0), o("tpcc:oltp", "nodes", 4.0), o("tpcc:oltp@a", "nopm", 1050.0)];
        let s = scaling(7, &one, &four);
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].run, s[0].workload.as_str(), s[0].base_nodes, s[0].nodes), (7, "oltp", 1.0, 4.0));
        assert!((s[0].efficiency - 1.05).abs() < 1e-9, "{s:?}");
        // as many nodes on both sides: no scaling to tell
        assert!(scaling(7, &four, &four).is_empty());
        assert!(scaling(7, &one, &[o("tpcc:other", "nopm", 1.0)]).is_empty());
    }
}
