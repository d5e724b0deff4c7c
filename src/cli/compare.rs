//! `fathom compare RUN_A RUN_B [...] [-o FILE] [--json]`: runs side by side (see
//! `report::compare`): a table in the terminal, JSON for scripts, or a page.

use crate::error::{Error, Result};
use crate::report::compare::Comparison;
use crate::report::html::Report;
use crate::store::Store;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// Two or more run ids (or `last`), or `group:ID`: the runs of `run --repeat`
    /// whose first run is ID; changes are from the first
    #[arg(num_args = 1.., required = true)]
    runs: Vec<String>,
    /// Print JSON instead of a table
    #[arg(long)]
    json: bool,
    /// Also write a self-contained HTML page with the runs' time series overlaid
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

pub fn run(args: Args, store_dir: &Path, width: usize) -> Result<i32> {
    let store = Store::open_existing(store_dir)?;
    let runs = runs(&store, &args.runs)?;
    let reports = runs.iter().map(|r| Report::build(&store, r)).collect::<Result<Vec<_>>>()?;
    let comparison = Comparison::of(&reports);
    if args.json {
        crate::terminal::print(format!(
            "{}\n",
            serde_json::to_string_pretty(&comparison).expect("comparison serializes")
        ));
    } else {
        crate::terminal::print(comparison.text(width));
    }
    if let Some(path) = &args.output {
        crate::nofollow::write(path, comparison.html(&reports))
            .map_err(|e| Error::input(format!("{}: {e}", path.display())))?;
        crate::terminal::eprint(format!("wrote {}\n", path.display()));
    }
    Ok(0)
}

/// The runs named: each `group:ID` stands for the runs of its group, in order. Fewer
/// than two in all is refused, as there is nothing to compare.
fn runs(store: &Store, named: &[String]) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for n in named {
        let Some(group) = n.strip_prefix("group:") else {
            out.push(n.clone());
            continue;
        };
        let id: i64 = group.parse().map_err(|_| Error::input(format!("`{n}`: a group is `group:ID`, ID a run id")))?;
        let ids = store.repeat_group(id)?;
        if ids.is_empty() {
            return Err(Error::input(format!(
                "`{n}`: no runs of group {id} (a group is the runs of one `fathom run --repeat N`, named by its \
                 first run)"
            )));
        }
        out.extend(ids.iter().map(i64::to_string));
    }
    if out.len() < 2 {
        return Err(Error::input(format!("{} names {} run: compare needs two or more", named.join(" "), out.len())));
    }
    Ok(out)
}

/// `compare` read as a performance engineer reads it, from runs of a store fixture: the
/// seconds are given, so every verdict is the one the figures call for, however busy
/// the machine. The noise rule itself is unit-tested on given samples
/// (`analysis::noise`).
#[cfg(test)]
mod tests {
    use super::Args;
    use crate::report::compare::Comparison;
    use crate::report::html::Report;
    use crate::report::summary::RunSummary;
    use crate::report::table::text::PIPED_WIDTH;
    use crate::store::fixture::{At, Fixture, Second};
    use clap::{Args as _, Command, FromArgMatches};
    use serde_json::Value;

    /// Two steps of one profile, each `duration` long, at a fixed rate.
    fn steps(duration: &str) -> String {
        format!(
            "name: steps\ndefaults: {{engine: null, rw: randread, bs: 4k, rate_iops: 200, duration: {duration}}}\n\
             workloads:\n  qd1: {{iodepth: 1}}\n  qd4: {{iodepth: 4}}\ntimeline:\n  - start: qd1\n  - start: qd4\n"
        )
    }

    /// A run of [`steps`] of `seconds` per step at about 200 IOPS: each second a few
    /// IOs off the rate (`jitter` picks which), as a paced run measures it.
    fn run_steps(fx: &Fixture, seconds: u32, jitter: u32) -> i64 {
        let second = move |at: At| Second::new(198 + u64::from((at.t + jitter) % 5), 2_000).tail(2, 40_000);
        fx.run(&steps(&format!("{seconds}s")))
            .phase("qd1", &[("qd1", 1)], seconds, second)
            .gap(1)
            .phase("qd4", &[("qd4", 1)], seconds, second)
            .finish()
    }

    #[test]
    fn steps_of_another_length_are_named_before_any_figure_and_each_row_is_shown_once() {
        let fx = Fixture::new("compare-durations");
        let (a, b) = (run_steps(&fx, 3, 0), run_steps(&fx, 1, 0));
        let (cmp, table, html) = compare(&fx, &[a, b]);
        // one line first says how the later run's IOPS moved, and how much of it is noise
        let summary =
            table.lines().find(|l| l.starts_with("run 2 against run 1: IOPS ")).unwrap_or_else(|| panic!("{table}"));
        assert!(summary.ends_with("beyond the noise)") && summary.contains('%'), "{summary}");
        let named = table.find("qd1: duration 3s -> 1s").unwrap_or_else(|| panic!("duration not named:\n{table}"));
        assert!(table.contains("qd4: duration 3s -> 1s"), "{table}");
        let figures = table.find("figure").unwrap_or_else(|| panic!("no table:\n{table}"));
        assert!(named < figures, "the difference comes before the figures:\n{table}");

        let differs = cmp["configuration"][0]["workloads"].as_array().unwrap();
        assert!(
            differs.iter().any(|d| d["setting"] == "duration" && d["workload"] == "qd1" && d["key"] == "duration"),
            "{differs:?}"
        );
        // phases matched by what ran: qd1 with qd1, qd4 with qd4, though they began at
        // other times of their runs
        let scopes: Vec<(&str, Vec<&str>)> = cmp["scopes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["label"].as_str().unwrap(),
                    s["phases"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect(),
                )
            })
            .collect();
        assert_eq!(scopes, [("qd1", vec!["qd1", "qd1"]), ("qd4", vec!["qd4", "qd4"])]);
        // each figure once: no row repeats another's workload, op and figure in one scope,
        // and a phased run has no second copy of its phases as "whole run"
        let rows = cmp["rows"].as_array().unwrap();
        let mut keys: Vec<String> =
            rows.iter().map(|r| format!("{} {} {} {}", r["scope"], r["workload"], r["op"], r["metric"])).collect();
        let n = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), n, "a row appears twice: {keys:?}");
        assert!(rows.iter().all(|r| r["scope"] != "whole run"), "phases and the whole run both shown");
        assert!(rows.iter().all(|r| r["workload"] == r["scope"]), "each phase shows the workload that ran in it");
        assert_eq!(n, 2 * 5, "two phases, one workload and op each, five figures");

        // the page: each phase's series start at the phase's start, not the run's
        assert!(html.contains("qd1: duration 3s -&gt; 1s"), "the page names the difference");
        let at = html.find("<svg id=\"cmp-1-iops\"").expect("the second phase's IOPS overlaid");
        let chart = &html[at..at + html[at..].find("</svg>").unwrap()];
        assert!(chart.contains("IOPS: phase qd4"), "{chart}");
        let starts: Vec<f64> =
            chart.split("data-from=\"").skip(1).map(|rest| rest[..rest.find('"').unwrap()].parse().unwrap()).collect();
        assert_eq!(starts.len(), 2, "one series per run: {chart}");
        // qd4 began 2 s into run 2 and 4 s into run 1; on the page both begin at 0, their
        // first point in the middle of its second
        assert_eq!(starts, [0.5, 0.5], "series not aligned at the phase start");
    }

    #[test]
    fn the_same_run_twice_is_within_the_noise() {
        let fx = Fixture::new("compare-same");
        let (a, b) = (run_steps(&fx, 4, 0), run_steps(&fx, 4, 2));
        let (cmp, table, _) = compare(&fx, &[a, b]);
        assert_eq!(cmp["configuration"][0]["workloads"], serde_json::json!([]), "the same scenario");
        let rows = cmp["rows"].as_array().unwrap();
        // at a fixed rate, each second of either run holds about the same IOs: whatever
        // the small change of the whole, it is not better or worse
        for r in rows.iter().filter(|r| r["metric"] == "iops") {
            assert_eq!(r["verdict"][1], "~", "{r}");
            assert!(r["verdict"][0].is_null(), "the first run is the baseline");
            let i = &r["intervals"][1];
            assert_eq!(i["samples"].as_u64(), Some(4), "per-second samples of the phase: {r}");
        }
        let iops: Vec<&str> = table.lines().filter(|l| l.split_whitespace().nth(3) == Some("IOPS")).collect();
        assert_eq!(iops.len(), 2, "{table}");
        for line in iops {
            assert!(line.trim_end().ends_with('~'), "{line}");
            assert!(!line.contains("better") && !line.contains("worse") && !line.contains('*'), "{line}");
        }
        assert!(table.contains("the same configuration"), "{table}");
    }

    /// A second in which a workload moved nothing is a sample of 0, not a second left
    /// out: a run that stalled for a second is worse, as its expectations judge it.
    #[test]
    fn a_second_that_moved_nothing_counts_as_a_rate_of_zero() {
        let fx = Fixture::new("compare-stall");
        let a = run_steps(&fx, 4, 0);
        let stalled = move |at: At| Second::new(if at.t == 2 { 0 } else { 200 }, 2_000);
        let b = fx
            .run(&steps("4s"))
            .phase("qd1", &[("qd1", 1)], 4, stalled)
            .gap(1)
            .phase("qd4", &[("qd4", 1)], 4, stalled)
            .finish();
        let (cmp, _, _) = compare(&fx, &[a, b]);
        let rows = cmp["rows"].as_array().unwrap();
        let qd1 = rows.iter().find(|r| r["scope"] == "qd1" && r["metric"] == "iops").unwrap();
        let i = &qd1["intervals"][1];
        assert_eq!(i["samples"].as_u64(), Some(4), "the stalled second is a sample: {qd1}");
        assert!((i["mean"].as_f64().unwrap() - 150.0).abs() < 1e-9, "{qd1}");
        // latency has no sample in a second without IOs
        let p99 = rows.iter().find(|r| r["scope"] == "qd1" && r["metric"] == "p99_us").unwrap();
        assert_eq!(p99["intervals"][1]["samples"].as_u64(), Some(3), "{p99}");
    }

    #[test]
    fn runs_with_nothing_in_common_say_so_plainly() {
        let fx = Fixture::new("compare-unrelated");
        let a = run_steps(&fx, 1, 0);
        let other = "name: other\nworkloads:\n  w: {engine: null, rw: randwrite, duration: 1s}\n";
        let b = fx.run(other).phase("w", &[("w", 1)], 1, |_| Second::new(50_000, 1_000)).finish();
        let (cmp, table, _) = compare(&fx, &[a, b]);
        assert_eq!(cmp["nothing_in_common"], true);
        assert_eq!(cmp["rows"], serde_json::json!([]));
        assert!(
            table.contains(
                "nothing in common: no phase of these runs ran the same workloads (run 1 ran qd1, qd4; run 2 ran w)"
            ),
            "{table}"
        );
        assert!(table.contains("scenario: steps -> other"), "{table}");
        // another run's workload of another name is another workload, not qd1 changed
        assert!(table.contains("workload added: w") && table.contains("workload removed: qd1"), "{table}");
        assert!(!table.contains("figure") && !table.contains(" - "), "no table of dashes:\n{table}");
        assert!(table.lines().count() < 20, "{table}");
    }

    /// A depth curve whose throughput follows the USL (`lambda`, sigma 0.05, kappa
    /// 0.002), each IO taking what Little's law gives at its depth.
    fn run_depths(fx: &Fixture, lambda: f64) -> i64 {
        let curve = "name: depths\ndefaults: {engine: null, rw: randread, duration: 1s}\nworkloads:\n  \
                     qd1: {iodepth: 1}\n  qd2: {iodepth: 2}\n  qd4: {iodepth: 4}\n  qd8: {iodepth: 8}\ntimeline:\n  \
                     - start: qd1\n  - start: qd2\n  - start: qd4\n  - start: qd8\n";
        let mut run = fx.run(curve);
        for (i, depth) in [1.0f64, 2.0, 4.0, 8.0].into_iter().enumerate() {
            let x = lambda * depth / (1.0 + 0.05 * (depth - 1.0) + 0.002 * depth * (depth - 1.0));
            let second = move |_: At| Second::new(x as u64, (depth / x * 1e9) as u64);
            let name = format!("qd{depth}");
            run = if i == 0 { run } else { run.gap(1) }.phase(&name, &[(&name, 1)], 1, second);
        }
        run.finish()
    }

    /// Two runs of a depth curve compared: each run's points and its USL fit are one colour
    /// (the style tells the points from the fit), so a reader follows a run across them.
    #[test]
    fn a_run_keeps_one_colour_for_its_points_and_its_fit() {
        let fx = Fixture::new("compare-colours");
        let (a, b) = (run_depths(&fx, 5_000.0), run_depths(&fx, 4_000.0));
        let (_, _, html) = compare(&fx, &[a, b]);
        let at = html.find("<svg id=\"cmp-curve-usl\"").expect("the runs' USL charts overlaid");
        let chart = &html[at..at + html[at..].find("</svg>").unwrap()];
        // the colour each series is drawn in, by its name
        let colour = |name: &str| -> String {
            let from = chart.find(&format!("data-name=\"{name}\"")).unwrap_or_else(|| panic!("no {name}: {chart}"));
            let rest = &chart[from..];
            let hash = rest.find('#').unwrap();
            rest[hash..hash + 7].to_string()
        };
        for run in ["run 1", "run 2"] {
            assert_eq!(colour(&format!("{run}: measured")), colour(&format!("{run}: USL fit")), "{chart}");
        }
        assert_ne!(colour("run 1: measured"), colour("run 2: measured"), "{chart}");
    }

    /// A block size of `bs`: four seconds of random reads at depth 4, each IO taking
    /// `latency_ns` (a tail of 1% at four times that), a few IOs more or less each second.
    fn run_ab(fx: &Fixture, bs: &str, ops: u64, latency_ns: u64) -> i64 {
        let body = "name: ab\ndefaults: {target: /srv/fathom, size: 16m, duration: 4s}\nworkloads:\n  \
                    r: {rw: randread, bs: BS, iodepth: 4}\n";
        let second =
            move |at: At| Second::new(ops + u64::from(at.t % 3) * 7, latency_ns).tail(ops / 100, latency_ns * 4);
        fx.run(&body.replace("BS", bs)).phase("r", &[("r", 1)], 4, second).finish()
    }

    #[test]
    fn two_runs_compare_by_workload_op_and_phase() {
        let fx = Fixture::new("compare-ab");
        let (a, b) = (run_ab(&fx, "4k", 20_000, 190_000), run_ab(&fx, "64k", 4_000, 950_000));
        let store = fx.store();
        let show = |run: i64| serde_json::to_value(RunSummary::load(&store, &run.to_string()).unwrap()).unwrap();
        let shows = [show(a), show(b)];
        let (cmp, table, html) = compare(&fx, &[a, b]);
        let row = |metric: &str| {
            cmp["rows"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["scope"] == "whole run" && r["workload"] == "r" && r["metric"] == metric)
                .unwrap_or_else(|| panic!("no {metric} row"))
                .clone()
        };
        let mbps = row("mb_per_s");
        let (a, b) = (
            shows[0]["workloads"][0]["ops"][0]["mb_per_s"].as_f64().unwrap(),
            shows[1]["workloads"][0]["ops"][0]["mb_per_s"].as_f64().unwrap(),
        );
        assert_eq!(mbps["values"][0].as_f64().unwrap(), a);
        assert_eq!(mbps["values"][1].as_f64().unwrap(), b);
        assert!((mbps["change_percent"][1].as_f64().unwrap() - (b / a - 1.0) * 100.0).abs() < 1e-9);
        // 64k reads move more bytes per second than 4k ones, far beyond the seconds'
        // noise: better; and their latency is higher: worse
        let verdict = |r: &Value| r["verdict"][1].as_str().unwrap().to_string();
        assert!(mbps["verdict"][0].is_null(), "the first run is the baseline");
        assert!(b > a && verdict(&mbps) == "better", "{mbps}");
        let p99 = row("p99_us");
        let higher = p99["values"][1].as_f64() > p99["values"][0].as_f64();
        assert!(higher && verdict(&p99) == "worse", "{p99}");
        // the block size differs, and is named
        let differs = cmp["configuration"][0]["workloads"].as_array().unwrap();
        assert!(
            differs.iter().any(|d| d["setting"] == "block_size" && d["before"] == "4k" && d["after"] == "64k"),
            "{differs:?}"
        );

        // the terminal table, and the page
        assert!(
            table.contains("whole run") && table.contains("change") && table.contains("r: block size 4k -> 64k"),
            "{table}"
        );
        let ts = &html[html.find("<svg id=\"cmp-0-iops\"").expect("overlaid IOPS")..];
        assert!(ts.contains("data-name=\"run 1: r\"") && ts.contains("data-name=\"run 2: r\""));
        assert!(html.contains("class=\"better\""), "a change beyond the noise is marked");

        let one = super::runs(&store, &[a.to_string()]).unwrap_err();
        assert_eq!(one.exit_code(), 2, "one run is nothing to compare: {one}");
        assert!(one.to_string().contains("compare needs two or more"), "{one}");
        let none = Args::augment_args(Command::new("compare")).no_binary_name(true).try_get_matches_from([""; 0]);
        assert_eq!(none.map_err(|e| e.exit_code()).err(), Some(2), "no run is nothing to compare");
    }

    /// What `fathom compare RUNS -o PAGE` prints with `--json` and without it, and the
    /// page it writes: the command runs in-process on the fixture's store, and its
    /// printed forms are made by the same calls it makes.
    fn compare(fx: &Fixture, runs: &[i64]) -> (Value, String, String) {
        let page = fx.dir.join("compare.html");
        let mut args: Vec<String> = runs.iter().map(i64::to_string).collect();
        args.extend(["-o".to_string(), page.display().to_string()]);
        let matches = Args::augment_args(Command::new("compare")).no_binary_name(true).get_matches_from(args);
        let code = super::run(Args::from_arg_matches(&matches).unwrap(), &fx.dir, PIPED_WIDTH).unwrap();
        assert_eq!(code, 0, "compare {runs:?}");
        let store = fx.store();
        let reports: Vec<Report> = runs.iter().map(|r| Report::build(&store, &r.to_string()).unwrap()).collect();
        let comparison = Comparison::of(&reports);
        let json = serde_json::to_value(&comparison).unwrap();
        (json, comparison.text(PIPED_WIDTH), std::fs::read_to_string(&page).unwrap())
    }
}
