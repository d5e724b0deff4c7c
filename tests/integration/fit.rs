//! `fathom fit`: the USL from a table (the R package's reference data) and from a
//! stored run's phases, with JSON, SVG, predictions and located errors. A ramp's fit,
//! or none for three steps, is tested in-process on a store fixture (`cli::fit`'s
//! tests), where each worker's rate is given rather than what a busy machine paces.

use crate::common::{Scratch, text};

fn data(name: &str) -> String {
    format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn a_table_is_fitted_as_the_r_package_fits_it() {
    let s = Scratch::new("fit-table");
    let svg = s.dir.join("fit.svg");
    let out = s.run(&[
        "fit",
        &data("raytracer.csv"),
        "--json",
        "--predict",
        "96",
        "--predict",
        "200",
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let f: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // R usl 2.x: alpha 0.0578, beta 0.0000, gamma 21.8488
    assert!((f["lambda"]["value"].as_f64().unwrap() - 21.8488).abs() < 1e-3, "{f}");
    assert!((f["sigma"]["value"].as_f64().unwrap() - 0.0578).abs() < 5e-5, "{f}");
    assert!(f["kappa"]["value"].as_f64().unwrap() < 1e-6);
    assert!(f["n_star"].is_null(), "kappa = 0: no peak");
    assert_eq!(f["points"].as_array().unwrap().len(), 11);
    let preds = f["predictions"].as_array().unwrap();
    assert!(preds[0]["warning"].is_null(), "96 is within 2x of 64");
    assert!(preds[1]["warning"].as_str().unwrap().contains("extrapolation"));
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("data-name=\"USL fit\"") && svg.contains("σ (contention) 0.0"));
    assert!(svg.contains("data-name=\"measured\" data-points=\"11\""), "{svg}");
    assert!(svg.contains("concurrency N") && svg.contains("throughput X"));

    let out = s.run(&["fit", &data("raytracer.csv")]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("sigma (contention)") && table.contains("no peak"), "{table}");
}

#[test]
fn bad_tables_name_file_and_line() {
    let s = Scratch::new("fit-bad");
    let bad = s.dir.join("bad.txt");
    std::fs::write(&bad, "N X\n1 100\n2 190\nfour 300\n").unwrap();
    let out = s.run(&["fit", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bad.txt:4: expected concurrency and throughput"), "{stderr}");
    std::fs::write(&bad, "1 100\n2 190\n").unwrap();
    let out = s.run(&["fit", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("at least 4 distinct"), "{}", text(&out));
}

#[test]
fn a_sweep_stops_each_step_at_steady_state_and_stores_one_run() {
    let s = Scratch::new("sweep");
    // think time paces each IO slot: 1, 2, 4 slots give a steady 100, 200, 400 IOPS on a
    // quiet machine. Whether a busy one lets a step settle is not this test's business:
    // it asserts that the sweep stops a step exactly when the SNIA rule (unit-tested in
    // analysis::steady_state) says it has settled, and runs it to --max otherwise.
    let scenario = s.scenario(
        "name: paced\nworkloads:\n  w: {target: TARGET, size: 16m, rw: randread, think_time: 10ms, duration: 1s}\n",
    );
    let sc = scenario.to_str().unwrap();
    let out = s.run(&["sweep", sc, "--vary", "iodepth=1,2,4", "--min", "3s", "--max", "20s", "--round", "1s"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let show = s.show_json();
    assert_eq!(show["run"]["scenario"], "sweep-w");
    let phases = show["phases"].as_array().unwrap();
    let labels: Vec<&str> = phases.iter().map(|p| p["label"].as_str().unwrap()).collect();
    assert_eq!(labels, vec!["qd1", "qd2", "qd4"]);
    for p in phases {
        let len = p["end_t"].as_i64().unwrap() - p["start_t"].as_i64().unwrap();
        let step = p["label"].as_str().unwrap();
        let stopped = stderr.contains(&format!("{step}: steady state reached"));
        assert!((3..=20).contains(&len), "between --min and --max: {p}");
        assert_eq!(stopped, len < 20, "{step} ran {len} s; stopped at steady state: {stopped}\n{stderr}");
    }
    assert_eq!(show["analysis"]["curve"]["points"].as_array().map(Vec::len), Some(3), "{}", show["analysis"]);

    // --fixed runs every step for --max; values must be numbers
    let out = s.run(&["sweep", sc, "--vary", "iodepth=1,2", "--max", "2s", "--fixed", "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let show = s.show_json();
    assert!(
        show["phases"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["end_t"].as_i64().unwrap() - p["start_t"].as_i64().unwrap() == 2)
    );
    let out = s.run(&["sweep", sc, "--vary", "iodepth=1,two"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("whole numbers"), "{}", text(&out));
}

#[test]
fn a_sweep_refuses_a_program_workload() {
    let s = Scratch::new("sweep-program");
    let scenario = s.scenario("name: net\nworkloads:\n  n: {driver: iperf3, streams: 1, duration: 1s}\n");
    let out = s.run(&["sweep", scenario.to_str().unwrap(), "--vary", "jobs=1,2"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("workload `n` runs iperf3: `sweep` varies the iodepth or jobs of an IO workload"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn values_that_are_no_measurement_name_file_and_line() {
    let s = Scratch::new("fit-values");
    let bad = s.dir.join("bad.csv");
    let cases = [
        ("N,X\n1,100\n2,190\n4,nan\n8,300\n", "bad.csv:4:", "`nan`"),
        ("1 100\n2 inf\n4 300\n8 400\n", "bad.csv:2:", "`inf`"),
        ("1 100\n-2 190\n4 300\n8 400\n", "bad.csv:2:", "`-2`"),
        ("1 100\n2 190\n4 -300\n8 400\n", "bad.csv:3:", "`-300`"),
        ("N;X\n1;100\n2;190\n4;300\n", "bad.csv:2:", "`1;100`"),
    ];
    for (table, at, value) in cases {
        std::fs::write(&bad, table).unwrap();
        let out = s.run(&["fit", bad.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{table}: {}", text(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(at) && stderr.contains(value), "{table}: {stderr}");
        assert!(!stderr.contains("0 points"), "{stderr}");
    }
    // too few rows: the file is named
    std::fs::write(&bad, "1 100\n2 190\n").unwrap();
    let out = s.run(&["fit", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad.csv: 2 points"), "{}", text(&out));
}

#[test]
fn a_throughput_that_only_falls_has_no_peak_beyond_the_data() {
    let s = Scratch::new("fit-falls");
    let table = s.dir.join("falls.txt");
    std::fs::write(&table, "10 1000\n20 500\n40 250\n80 125\n").unwrap();
    let out = s.run(&["fit", table.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let f: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(f["n_star"].is_null() && f["x_at_n_star"].is_null(), "{f}");
    assert!(f["warnings"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().contains("only falls")), "{f}");
    let out = s.run(&["fit", table.to_str().unwrap()]);
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains("no peak within the data") && shown.contains("1,000 at N = 10"), "{shown}");
    assert!(!shown.contains("peaks at"), "{shown}");
}

/// Each wrong fit the issue lists, from a table: what `fathom fit` printed before, and
/// what it says now.
#[test]
fn fits_without_meaning_say_why_instead_of_printing_numbers() {
    let s = Scratch::new("fit-meaning");
    let table = s.dir.join("t.csv");
    let fit = |rows: &str, extra: &[&str]| {
        std::fs::write(&table, rows).unwrap();
        let mut args = vec!["fit", table.to_str().unwrap()];
        args.extend(extra);
        s.run(&args)
    };
    let never = |out: &str| {
        for bad in ["NaN", "inf", "9,223,372,036,854,775,807", "9223372036854775807"] {
            assert!(!out.contains(bad), "{bad} in {out}");
        }
    };
    // hotspot: three phases at one depth printed N* = 86596, NaN standard errors and
    // an Amdahl ceiling of i64::MAX
    let out = fit("16 1000\n16 1200\n16 900\n", &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("t.csv: 3 points at 1 distinct concurrency:") && stderr.contains("at least 4"), "{stderr}");
    never(&text(&out));
    // db-colocation: three phases made a three-parameter fit with NaN errors
    let out = fit("1 100\n2 190\n3 185\n", &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("3 distinct"), "{}", text(&out));

    // linear throughput: sigma = kappa = 0 at the bound
    let out = fit("1 100\n2 200\n4 400\n8 800\n", &["--predict", "6"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("no meaningful fit: sigma and kappa are both 0"), "{stdout}");
    assert!(!stdout.contains("N* =") && !stdout.contains("Amdahl") && !stdout.contains("at N = 6"), "{stdout}");
    never(&stdout);

    // throughput that only falls
    let out = fit("10 1000\n20 500\n40 250\n80 125\n", &["--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let f: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(f["verdict"], "no_fit", "{f}");
    assert!(f["reason"].as_str().unwrap().contains("only falls"), "{f}");

    // the quickstart: N* = 359.6 after measuring up to depth 64
    let law = |n: f64| 5000.0 * n / (1.0 + 0.03 * (n - 1.0) + 7.5e-6 * n * (n - 1.0));
    let rows: String = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0].iter().map(|&n| format!("{n} {:.3}\n", law(n))).collect();
    let out = fit(&rows, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("a peak at 359.6, beyond the largest N measured, 64: an extrapolation"), "{stdout}");
    assert!(!stdout.contains("throughput peaks at"), "{stdout}");

    // scattered points: a poor fit by R², N* and predictions withheld
    let out = fit("1 100\n2 120\n4 310\n8 150\n16 420\n32 200\n", &["--predict", "16"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("poor fit: R² 0.429 is below 0.90") && stdout.contains("R² decides"), "{stdout}");
    assert!(
        stdout.contains("at N = 16.0: withheld") && !stdout.contains("N* =") && !stdout.contains("Amdahl"),
        "{stdout}"
    );
    never(&stdout);
}

/// A sweep step the sweep stopped at steady state is steady in its summary too: both
/// judge it by the sweep's `--round`, where the summary used to apply 5 s rounds and
/// call every step under 25 s "too short".
#[test]
fn a_sweep_step_stopped_at_steady_state_is_steady_in_the_summary() {
    let s = Scratch::new("sweep-agree");
    let scenario = s.scenario(
        "name: paced\nworkloads:\n  w: {target: TARGET, size: 16m, rw: randread, think_time: 10ms, duration: 1s}\n",
    );
    let sc = scenario.to_str().unwrap();
    let out = s.run(&["sweep", sc, "--vary", "iodepth=1,2", "--min", "3s", "--max", "20s", "--round", "1s"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("steady state (SNIA: 5 rounds of 1 s)"), "{stdout}");
    let show = s.show_json();
    let phases = show["analysis"]["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2, "{phases:?}");
    for p in phases {
        let step = p["workload"].as_str().unwrap();
        let stopped = stderr.contains(&format!("{step}: steady state reached"));
        // the per-phase row: the phase, then its workload (both the step's name)
        let row = stdout
            .lines()
            .find(|l| l.split_whitespace().take(2).eq([step, step]))
            .unwrap_or_else(|| panic!("{stdout}"));
        if stopped {
            assert!(!p["steady_state"].is_null(), "{step}: {p}\n{stderr}");
            assert!(row.contains(" at "), "{row}");
        }
        assert!(!row.contains("too short"), "{row}");
    }
    // a step that did not settle ran to --max (whether a busy machine lets it settle is
    // not this test's business)
    for p in show["phases"].as_array().unwrap() {
        let step = p["label"].as_str().unwrap();
        if !stderr.contains(&format!("{step}: steady state reached")) {
            assert_eq!(p["end_t"].as_i64().unwrap() - p["start_t"].as_i64().unwrap(), 20, "{p}");
        }
    }
}
