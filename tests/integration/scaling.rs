//! The cluster scaling study as X-Ray writes it: one node's VMs, then one more node at
//! a time (tests/data/xray/scaling, shaped as X-Ray's throughput_scalability scenarios,
//! run on four local hosts). Its
//! phases are named by the nodes running, its like load makes one concurrency curve
//! with the cluster's total, and the report opens with that curve.

use crate::common::tmux::Tmux;
use crate::common::{Scratch, text};
use std::process::Command;

const SCENARIO: &str = "tests/data/xray/scaling";

/// The tests that judge a rate or a time, and so hold the machine alone: `make test` runs
/// them last, one at a time (see `Scratch::alone`).
mod alone {
    use super::*;

    #[test]
    fn x_rays_scaling_study_is_a_curve_over_nodes_and_its_report_leads_with_it() {
        // it judges when starts land: the machine to itself
        let s = Scratch::alone("scaling-xray");
        let hosts = s.local_inventory(&["n0", "n1", "n2", "n3"]);
        let scenario = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(SCENARIO);
        let sc = scenario.to_str().unwrap();
        // a node joins every WAIT s: 8 s over the 4 nodes, not the scenario's 12, as a start
        // lands on its second whatever the wait, and the machine is held alone for all of it
        const RUNTIME: i64 = 8;
        const WAIT: i64 = RUNTIME / 4;
        let runtime = format!("runtime_secs={RUNTIME}");
        let out = s.run(&["run", sc, "--hosts", &hosts, "-q", "--set", &runtime]);
        assert!(out.status.success(), "{}", text(&out));
        let show = s.show_json();

        // phases named by the nodes running
        let phases: Vec<(&str, i64, i64)> = show["phases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p["label"].as_str().unwrap(), p["start_t"].as_i64().unwrap(), p["end_t"].as_i64().unwrap()))
            .collect();
        let labels: Vec<&str> = phases.iter().map(|p| p.0).collect();
        assert_eq!(labels[..4], ["1 node", "2 nodes", "3 nodes", "4 nodes"], "{phases:?}");
        // workloads ending a second apart leave a short tail, which the study leaves out
        assert!(phases[4..].iter().all(|p| p.2 - p.1 < 3), "{phases:?}");
        // each start lands on the second its wait ends (within the clock's second): the
        // lateness does not add up from node to node
        let starts: Vec<i64> = phases.iter().take(4).map(|p| p.1).collect();
        assert!(starts.windows(2).all(|w| (WAIT..=WAIT + 1).contains(&(w[1] - w[0]))), "{phases:?}");
        assert!((3 * WAIT..=3 * WAIT + 1).contains(&(starts[3] - starts[0])), "starts drift: {phases:?}");

        // one curve: N grows with each node's like load, throughput is the cluster's total
        let analysis = &show["analysis"];
        let curve = &analysis["curve"];
        assert!(curve.is_object(), "no curve: {}", analysis["curve_reason"]);
        let points = curve["points"].as_array().unwrap();
        assert_eq!(points.len(), 4, "{curve}");
        let n: Vec<f64> = points.iter().map(|p| p[0].as_f64().unwrap()).collect();
        assert!(n.windows(2).all(|w| w[1] > w[0]), "{n:?}");
        let total = |label: &str| -> f64 {
            let p = show["phases"].as_array().unwrap().iter().find(|p| p["label"] == label).unwrap();
            p["ops"].as_array().unwrap().iter().map(|o| o["iops"].as_f64().unwrap()).sum()
        };
        assert!((points[3][1].as_f64().unwrap() - total("4 nodes")).abs() < 1.0, "the cluster's IOPS at 4 nodes");
        assert_eq!(curve["efficiency"].as_array().unwrap().len(), 4);
        assert!(curve["counts"].as_str().unwrap().contains("summed over the workloads running"), "{curve}");
        assert_eq!(analysis["interference"], serde_json::json!([]), "more of the same load is not interference");

        // the terminal says what N counts, where a one-point test stands, and how it scaled
        let command = format!(
            "env -u COLUMNS {} show --results {}",
            env!("CARGO_BIN_EXE_fathom"),
            s.dir.join("results").display()
        );
        let lines = Tmux::new("scaling").printed(&command, 100);
        let said = lines.join("\n");
        for line in ["curve over the phases (N: IOs in flight", "you are here", "scaling efficiency", "USL"] {
            assert!(said.contains(line), "no {line}: {said}");
        }
        assert!(!said.contains("before -> during"), "{said}");
        assert!(lines.iter().all(|l| l.chars().count() <= 100), "{said}");

        // the page opens with the curve: the first chart after the headline is the USL's
        let page = s.dir.join("report.html");
        let out = s.run(&["report", "-o", page.to_str().unwrap()]);
        assert!(out.status.success(), "{}", text(&out));
        let dom = Command::new("chromium")
            .args(["--headless", "--no-sandbox", "--disable-gpu", "--dump-dom"])
            .arg(format!("file://{}", page.display()))
            .output()
            .expect("chromium is installed by scripts/install-deps.sh test");
        let dom = String::from_utf8_lossy(&dom.stdout);
        let first = dom.split("<svg id=\"").nth(1).and_then(|r| r.split('"').next());
        assert_eq!(first, Some("curve-usl"), "the first chart");
        let shot = s.dir.join("scaling.png");
        let out = Command::new("chromium")
            .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1200,1400"])
            .arg(format!("--screenshot={}", shot.display()))
            .arg(format!("file://{}", page.display()))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        assert!(std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0) > 20_000, "an empty screenshot");
    }
}
