//! What a run prints fits the terminal: `fathom show` runs inside tmux at 80 columns
//! and no line it prints is wider (tmux's joined lines, `capture-pane -J`, show a line
//! the terminal had to wrap whole). `--wide` lifts the limit.

use crate::common::Scratch;
use crate::common::tmux::Tmux;

/// `fathom show` of the last run, in tmux at 80 columns: every line it printed.
fn shown_at_80(s: &Scratch, tag: &str, extra: &str) -> Vec<String> {
    let command = format!(
        "env -u COLUMNS {} show last {extra} --results {}",
        env!("CARGO_BIN_EXE_fathom"),
        s.dir.join("results").display()
    );
    Tmux::new(tag).printed(&command, 80)
}

fn fits(lines: &[String], what: &str) {
    let all = lines.join("\n");
    assert!(lines.iter().any(|l| l == "FATHOM-EXIT 0"), "{what}: {all}");
    for l in lines {
        assert!(l.chars().count() <= 80, "{what}: a line of {} columns:\n{l}\n\n{all}", l.chars().count());
    }
}

fn run(s: &Scratch, args: &[&str]) {
    let out = s.run(args);
    assert!(out.status.code().is_some_and(|c| c == 0 || c == 3), "{}", String::from_utf8_lossy(&out.stderr));
}

/// A run with stdout and stderr pipes told `COLUMNS=80`: every line it printed, both
/// streams, each checked to fit. Paths are relative to the scratch directory: a path
/// longer than a line is never cut, and how deep the checkout is is not the test's.
fn piped_at_80(s: &Scratch, args: &[&str], what: &str) -> String {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_fathom"));
    cmd.args(args).args(["--results", "results"]).current_dir(&s.dir).env_remove("FATHOM_RESULTS");
    let out = cmd.env("COLUMNS", "80").output().unwrap();
    let all = format!("{}{}", String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&out.stdout));
    assert!(out.status.code().is_some_and(|c| c == 0 || c == 3), "{what}: {all}");
    for l in all.lines() {
        assert!(l.chars().count() <= 80, "{what}: a line of {} columns:\n{l}\n\n{all}", l.chars().count());
    }
    all
}

#[test]
fn the_quickstart_fits_80_columns_and_wide_shows_every_column() {
    let s = Scratch::new("width-quickstart");
    let args = ["run", "quickstart", "--target", "data", "--time-scale", "0.02", "--set", "size=64m"];
    let printed = piped_at_80(&s, &args, "quickstart piped");
    // its progress, lint's note and the answer were all there, wrapped
    for said in ["[ 0s] qd1: randread 4k", "lint note [short-run]", "how many IOPS does queue depth buy"] {
        assert!(printed.contains(said), "no {said}: {printed}");
    }
    let lines = shown_at_80(&s, "quick", "");
    fits(&lines, "quickstart");
    let all = lines.join("\n");
    // the answer (PASS or FAIL: a busy machine's p99 at depth 64 may pass its limit),
    // the results with their most telling columns, the curve
    assert!(all.contains(": PASS") || all.contains(": FAIL"), "no answer: {all}");
    for said in ["workload", "p99", "you are here", "USL"] {
        assert!(all.contains(said), "no {said}: {all}");
    }
    assert!(all.contains("left out to fit 80 columns: --wide shows them"), "{all}");
    let wide = shown_at_80(&s, "wide", "--wide").join("\n");
    assert!(wide.contains("p90") && wide.contains("max") && !wide.contains("left out to fit"), "{wide}");
    // compare's sentences wrap too: its summary, what differs, its closing note
    piped_at_80(&s, &args, "quickstart again");
    let compared = piped_at_80(&s, &["compare", "1", "2"], "compare piped");
    assert!(
        compared.contains("change is from the first run") && compared.contains("run 2 against run 1"),
        "{compared}"
    );
}

#[test]
fn sixteen_workloads_with_long_names_fit_80_columns() {
    let s = Scratch::new("width-sixteen");
    let mut yaml = String::from(
        "name: sixteen\ndefaults: {engine: null, rw: randrw, rwmixread: 70, bssplit: 4k/50:64k/50, duration: 2s}\n\
         workloads:\n",
    );
    let mut timeline = String::from("timeline:\n");
    for i in 0..16 {
        let rate = if i % 2 == 0 { ", rate_iops: 500" } else { "" };
        yaml.push_str(&format!("  vm-group-{i:02}-database-data-disk-{i:02}: {{iodepth: {}{rate}}}\n", 1 + i % 4));
        timeline.push_str(&format!("  - start: vm-group-{i:02}-database-data-disk-{i:02}\n    async: true\n"));
    }
    s.scenario(&(yaml + &timeline));
    // the run itself, piped: its progress and findings, and the summary it ends with
    piped_at_80(&s, &["run", "scenario.yaml"], "16 workloads piped");
    let lines = shown_at_80(&s, "sixteen", "");
    fits(&lines, "16 workloads");
    // every workload has its row, its name shortened where it must be
    let rows = lines.iter().filter(|l| l.starts_with("vm-group-")).count();
    assert!(rows >= 16, "{}", lines.join("\n"));
}

#[test]
fn a_run_on_three_hosts_fits_80_columns() {
    let s = Scratch::new("width-hosts");
    let hosts = s.local_inventory(&["node-a", "node-b", "node-c"]);
    let path = s.scenario(
        "name: cluster\nworkloads:\n  random-reads-of-every-node:\n    hosts: all\n    per_host: 2\n    \
         rw: randread\n    bs: 4k\n    size: 8m\n    rate_iops: 900\n    duration: 2s\n",
    );
    run(&s, &["run", path.to_str().unwrap(), "--hosts", &hosts, "-q"]);
    let lines = shown_at_80(&s, "hosts", "");
    fits(&lines, "three hosts");
    let all = lines.join("\n");
    assert!(all.contains("per host") && all.contains("node-c"), "{all}");
}

/// `fathom scenarios` in tmux at 80 columns: every built-in listed, each description
/// wrapped under its column, no line wider than the terminal.
#[test]
fn the_built_in_list_fits_80_columns() {
    let lines =
        Tmux::new("scenarios-80").printed(&format!("env -u COLUMNS {} scenarios", env!("CARGO_BIN_EXE_fathom")), 80);
    fits(&lines, "fathom scenarios");
    let all = lines.join("\n");
    for name in ["quickstart", "vioperf", "hugepages", "log-disk", "db-colocation-sql"] {
        assert!(lines.iter().any(|l| l.starts_with(&format!("{name} "))), "{name} not listed: {all}");
    }
    // a description's words go on, wrapped, under the description's column
    let vioperf = all.split("\nvioperf ").nth(1).unwrap();
    assert!(vioperf.contains("per core"), "{all}");
}

/// `fathom lint` told 80 columns wraps its findings as `fathom run` does.
#[test]
fn lint_findings_fit_80_columns() {
    let s = Scratch::new("lint-80");
    let said = piped_at_80(&s, &["lint", "log-disk"], "fathom lint");
    assert!(said.contains("lint warning [pgbench-in-memory]"), "{said}");
}
