//! `fathom fit FILE | --run RUN`: the Universal Scalability Law fitted to concurrency
//! vs throughput, from a table or from the phases of a stored run.

use crate::analysis::usl::{self, Point, Usl, Verdict};
use crate::error::{Error, Result};
use crate::report::chart::{Axis, Chart, Style, Unit};
use crate::report::format::{count, sig3};
use crate::report::run_charts;
use crate::report::summary::RunSummary;
use crate::report::table::plain as render;
use crate::store::Store;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// A CSV or whitespace table of concurrency, throughput[, latency] (a header line
    /// and `#` comments are fine)
    file: Option<PathBuf>,
    /// Fit the phases of a stored run instead (concurrency = IOs in flight configured,
    /// throughput = IOPS): e.g. `you-are-here` or a quickstart
    #[arg(long, value_name = "RUN", conflicts_with = "file")]
    run: Option<String>,
    /// Print the predicted throughput at this concurrency (repeatable)
    #[arg(long, value_name = "N")]
    predict: Vec<f64>,
    /// Print JSON
    #[arg(long)]
    json: bool,
    /// Draw the data, the fitted curve and N* into this SVG file
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
}

pub fn run(args: Args, store_dir: &Path) -> Result<i32> {
    let (source, usl) = match (&args.file, &args.run) {
        (Some(f), None) => (f.display().to_string(), usl::fit(&read_table(f)?)),
        (None, Some(r)) => from_run(&Store::open_existing(store_dir)?, r)?,
        _ => return Err(Error::input("give a FILE of concurrency and throughput, or --run RUN")),
    };
    if usl.fit.is_none() {
        return Err(Error::input(format!("{source}: {}", usl.reason)));
    }
    let predictions: Vec<(f64, usl::Prediction)> = args.predict.iter().map(|&n| (n, usl.predict(n))).collect();
    if args.json {
        let preds: Vec<serde_json::Value> = predictions
            .iter()
            .map(|(n, p)| match p {
                Ok((x, w)) => serde_json::json!({"n": n, "throughput": x, "warning": w}),
                Err(why) => serde_json::json!({"n": n, "throughput": null, "warning": why}),
            })
            .collect();
        let mut doc = serde_json::to_value(&usl).expect("fit serializes");
        doc["predictions"] = preds.into();
        crate::terminal::print(format!("{}\n", serde_json::to_string_pretty(&doc).expect("json")));
    } else {
        crate::terminal::print(describe(&usl, &predictions));
    }
    if let Some(path) = &args.svg {
        crate::nofollow::write(path, svg(&usl)).map_err(|e| Error::input(format!("{}: {e}", path.display())))?;
    }
    Ok(0)
}

/// The longest table `fit` reads: a sweep's rows are a few hundred bytes; an export of a
/// long run's seconds still fits many times over.
const MAX_TABLE: usize = 16 << 20;

/// Reads `N X [R]` rows: commas or whitespace between fields, an optional header (the
/// first line, only: a later line that is no row is a mistake, such as `;` between
/// fields, and is named rather than skipped). Every value must be a measurement: a
/// finite concurrency above 0 and a finite throughput (and latency) of 0 or more, so a
/// NaN or a negative rate is refused where it was written, not inside the fit.
fn read_table(path: &Path) -> Result<Vec<Point>> {
    let name = path.display();
    let text = crate::nofollow::read_input(path, "table of concurrency and throughput", MAX_TABLE)?;
    let mut points = Vec::new();
    let mut first = true;
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let at = |msg: String| Error::input(format!("{name}:{}: {msg}", i + 1));
        let fields: Vec<&str> = line.split(|c: char| c == ',' || c.is_whitespace()).filter(|f| !f.is_empty()).collect();
        let numbers: Vec<Option<f64>> = fields.iter().map(|f| f.parse::<f64>().ok()).collect();
        let header = std::mem::replace(&mut first, false) && numbers.iter().all(|n| n.is_none());
        if header {
            continue;
        }
        let (n, x, r) = match numbers.as_slice() {
            [Some(n), Some(x)] => (*n, *x, 0.0),
            [Some(n), Some(x), Some(r)] => (*n, *x, *r),
            _ => {
                return Err(at(format!(
                    "expected concurrency and throughput (and optionally latency) as numbers separated by commas \
                     or whitespace, got `{line}`"
                )));
            }
        };
        if !(n.is_finite() && n > 0.0) {
            return Err(at(format!("concurrency `{}` must be a finite number above 0", fields[0])));
        }
        for (value, field, what) in
            [(x, fields[1], "throughput"), (r, fields.get(2).copied().unwrap_or("0"), "latency")]
        {
            if !(value.is_finite() && value >= 0.0) {
                return Err(at(format!("{what} `{field}` must be a finite number, 0 or more")));
            }
        }
        points.push(Point { n, x, spread: None });
    }
    Ok(points)
}

/// The fit of a run's phases as its analysis made it (see `report::analysis::curve`:
/// one point per phase, the IOs in flight its workloads were configured for and their
/// IOPS, judged by how those varied second to second), with the name the run goes by
/// in messages.
fn from_run(store: &Store, which: &str) -> Result<(String, Usl)> {
    let s = RunSummary::load(store, which)?;
    let name = format!("run {}", s.run.id);
    match s.analysis.curve {
        Some(curve) => Ok((name, curve.usl)),
        None => Err(Error::input(format!(
            "{name}: {}: a fit needs at least {} distinct concurrencies of one workload profile \
             (e.g. `fathom run you-are-here`)",
            s.analysis.curve_reason.as_deref().unwrap_or("no curve"),
            usl::MIN_DISTINCT_N
        ))),
    }
}

/// The fit as text: parameters, the peak, and each point; for no meaningful fit, the
/// reason and the points measured.
fn describe(u: &Usl, predictions: &[(f64, usl::Prediction)]) -> String {
    let Some(f) = u.fit.as_ref().filter(|_| u.verdict != Verdict::NoFit) else {
        let points: Vec<_> = u.fit.iter().flat_map(|f| &f.points).collect();
        let rows: Vec<Vec<String>> = points.iter().map(|p| vec![sig3(p.n), sig3(p.measured)]).collect();
        let most = points.iter().max_by(|a, b| a.measured.total_cmp(&b.measured)).expect("a fit has points");
        return format!(
            "{}\nthe most measured is {} at N = {}\n\n{}",
            u.headline(),
            count(most.measured),
            sig3(most.n),
            render(&["N", "measured"], &rows, 0)
        );
    };
    let est = |name: &str, e: &usl::Estimate, fmt: &dyn Fn(f64) -> String| {
        let or_dash = |v: Option<String>| v.unwrap_or_else(|| "-".into());
        vec![
            name.to_string(),
            fmt(e.value),
            or_dash(e.std_error.map(fmt)),
            or_dash(e.ci95.map(|(lo, hi)| format!("{} .. {}", fmt(lo), fmt(hi)))),
        ]
    };
    let small = |v: f64| format!("{v:.6}");
    let rows = vec![
        est("sigma (contention)", &f.sigma, &small),
        est("kappa (coherency)", &f.kappa, &|v| format!("{v:.3e}")),
        est("lambda (X at N=1)", &f.lambda, &|v| sig3(v)),
    ];
    let mut out = render(&["parameter", "estimate", "std error", "95% interval"], &rows, 1);
    out.push_str(&format!("\n{}\n", u.headline()));
    if let (Verdict::Good, Some(c)) = (u.verdict, f.amdahl_ceiling) {
        out.push_str(&format!("Amdahl ceiling lambda/sigma = {}\n", sig3(c)));
    }
    out.push_str(&format!("R² = {:.4}{}\n\n", f.r_squared, if f.converged { "" } else { " (did not converge)" }));
    let rows: Vec<Vec<String>> = f
        .points
        .iter()
        .map(|p| {
            vec![
                sig3(p.n),
                sig3(p.measured),
                sig3(p.fitted),
                format!("{:+.1}", p.residual),
                format!("{:.3}", p.efficiency),
            ]
        })
        .collect();
    out.push_str(&render(&["N", "measured", "fitted", "residual", "efficiency"], &rows, 0));
    for (n, p) in predictions {
        let said = match p {
            Ok((x, w)) => format!("{}{}", count(*x), w.as_ref().map(|w| format!(" ({w})")).unwrap_or_default()),
            Err(why) => why.clone(),
        };
        out.push_str(&format!("\nat N = {}: {said}", sig3(*n)));
    }
    if !predictions.is_empty() {
        out.push('\n');
    }
    if u.verdict == Verdict::Good {
        out.push_str(&format!("{}\n", u.reason));
    }
    for w in &f.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out
}

/// A self-contained SVG: measured points, the fitted curve, N* marked, as the verdict
/// allows.
fn svg(u: &Usl) -> String {
    let mut c = Chart::new(
        "usl",
        "Throughput vs concurrency: Universal Scalability Law fit",
        Axis::new("concurrency N (IOs in flight, workers)", Unit::Count),
        Axis::new("throughput X (per second)", Unit::Count),
    );
    let measured = u.fit.iter().flat_map(|f| &f.points).map(|p| (p.n, p.measured)).collect();
    c.add("measured", Style::Dots, measured);
    run_charts::add_usl(&mut c, u);
    c.svg()
}

/// The concurrency curve (knee, "you are here", USL fit) of runs of a store fixture: it
/// exists only when a run's phases are steps of one workload profile that differ only in
/// concurrency; otherwise `show --json` says why and neither `show`, the report nor
/// `fit` mention a curve.
#[cfg(test)]
mod tests {
    use super::{Args, from_run};
    use crate::cli::show::tests::read;
    use crate::report::summary::RunSummary;
    use crate::store::fixture::{At, Fixture, Second};
    use clap::{Args as _, Command, FromArgMatches};

    /// Three 1 s phases of one null-engine profile, one after the other; `step` is each
    /// workload's own setting, `iops` what each measured.
    fn steps(fx: &Fixture, name: &str, steps: [&str; 3], iops: [u64; 3]) -> i64 {
        let scenario = format!(
            "name: {name}\ndefaults: {{engine: null, rw: randread, bs: 4k, iodepth: 1, duration: 1s}}\nworkloads:\n  \
             a: {{{}}}\n  b: {{{}}}\n  c: {{{}}}\ntimeline:\n  - start: a\n  - start: b\n  - start: c\n",
            steps[0], steps[1], steps[2]
        );
        let second = |x: u64| move |_: At| Second::new(x, 1_000_000_000 / x);
        let run = fx.run(&scenario).phase("a", &[("a", 1)], 1, second(iops[0])).gap(1);
        run.phase("b", &[("b", 1)], 1, second(iops[1])).gap(1).phase("c", &[("c", 1)], 1, second(iops[2])).finish()
    }

    /// `fathom fit ARGS` on the fixture's store: its exit status and what it said
    /// when it failed.
    fn fit(fx: &Fixture, args: &[&str]) -> (i32, String) {
        let matches = Args::augment_args(Command::new("fit")).no_binary_name(true).get_matches_from(args);
        match super::run(Args::from_arg_matches(&matches).unwrap(), &fx.dir) {
            Ok(code) => (code, String::new()),
            Err(e) => (e.exit_code(), e.to_string()),
        }
    }

    /// A run of three phases of distinct concurrency (a three-step ramp) has a curve but
    /// no fit, and says so in the summary, `show --json`, `fit` and the report.
    #[test]
    fn a_run_of_three_phases_has_no_meaningful_fit() {
        let fx = Fixture::new("fit-three");
        let scenario = "name: ramp3\nworkloads:\n  vm: {target: /srv/fathom, size: 16m, rw: randread, iodepth: 1, \
                        think_time: 5ms}\ntimeline:\n  - ramp: vm\n    every: 1s\n    until: 3\n";
        let mut run = fx.run(scenario);
        for n in 1..=3 {
            run = run
                .phase(&format!("vm x{n}"), &[("vm", n)], 1, |at| Second::new(190 * u64::from(at.workers), 5_200_000));
        }
        let (stdout, show, html) = read(&fx, run.finish());
        assert!(stdout.contains("USL: no meaningful fit: 3 points at 3 distinct concurrencies"), "{stdout}");
        assert!(!stdout.contains("USL fit:") && !stdout.contains("N* ="), "{stdout}");
        let usl = &show["analysis"]["curve"]["usl"];
        assert_eq!(usl["verdict"], "no_fit", "{usl}");
        assert!(usl["lambda"].is_null(), "no parameters: {usl}");
        let (code, said) = fit(&fx, &["--run", "last"]);
        assert_eq!(code, 2, "{said}");
        assert!(said.contains("at least 4 distinct"), "{said}");
        // the report's chart carries the reason, no fitted curve
        assert!(html.contains("no meaningful fit: 3 points at 3 distinct concurrencies"), "no reason in the page");
        assert!(!html.contains("data-name=\"USL fit\""), "a curve drawn for no fit");
    }

    #[test]
    fn a_depth_sweep_has_a_curve_marked_at_its_lowest_concurrency() {
        let fx = Fixture::new("curve-depth");
        // the lowest depth is not the first phase: "you are here" is the lowest concurrency
        let run = steps(&fx, "depths", ["iodepth: 4", "iodepth: 1", "iodepth: 8"], [30_000, 10_000, 45_000]);
        let (stdout, show, html) = read(&fx, run);
        assert!(stdout.contains("you are here (the lowest concurrency"), "{stdout}");
        let analysis = &show["analysis"];
        assert!(analysis["curve_reason"].is_null(), "{analysis}");
        let curve = &analysis["curve"];
        let n: Vec<f64> = curve["points"].as_array().unwrap().iter().map(|p| p[0].as_f64().unwrap()).collect();
        assert_eq!(n, vec![4.0, 1.0, 8.0]);
        assert_eq!(curve["you_are_here"], 1, "{curve}");
        assert!(html.contains("you are here"), "no mark in the page");
    }

    #[test]
    fn a_block_size_sweep_has_no_curve_and_says_why() {
        let fx = Fixture::new("curve-bs");
        let run = steps(&fx, "sizes", ["bs: 4k", "bs: 16k", "bs: 64k"], [40_000, 30_000, 20_000]);
        let (summary, show, html) = read(&fx, run);
        let analysis = &show["analysis"];
        assert!(analysis["curve"].is_null(), "{analysis}");
        assert_eq!(analysis["curve_reason"], "phases differ in block size", "{analysis}");
        for (what, said) in [("show", summary), ("report", html)] {
            for word in ["USL", "knee", "you are here", "You are here"] {
                assert!(!said.contains(word), "{what} mentions {word}:\n{said}");
            }
        }
        // `fit` refuses with the same reason
        let (code, said) = fit(&fx, &["--run", "last"]);
        assert_eq!(code, 2, "{said}");
        assert!(said.contains("phases differ in block size"), "{said}");
    }

    /// A ramp of `vm` from 1 to 4 workers, one second each: every worker about 200 IOPS
    /// (each IO taking 5 ms of think time), a little less as they contend (sigma 0.02).
    #[test]
    fn a_ramped_run_is_fitted_from_its_phases() {
        let fx = Fixture::new("fit-run");
        let scenario = "name: ramp\nworkloads:\n  vm: {target: /srv/fathom, size: 16m, rw: randread, iodepth: 1, \
                        think_time: 5ms}\ntimeline:\n  - ramp: vm\n    every: 1s\n    until: 4\n";
        let second = |at: At| {
            let n = at.workers as f64;
            let x = 200.0 * n / (1.0 + 0.02 * (n - 1.0));
            Second::new(x.round() as u64, (n / x * 1e9) as u64)
        };
        let mut run = fx.run(scenario);
        for n in 1..=4 {
            run = run.phase(&format!("vm x{n}"), &[("vm", n)], 1, second);
        }
        run.finish();
        let store = fx.store();
        let show = serde_json::to_value(RunSummary::load(&store, "last").unwrap()).unwrap();
        let curve = &show["analysis"]["curve"];
        let ns: Vec<f64> = curve["points"].as_array().unwrap().iter().map(|p| p[0].as_f64().unwrap()).collect();
        assert_eq!(ns, vec![1.0, 2.0, 3.0, 4.0]);
        let (_, usl) = from_run(&store, "last").unwrap();
        assert!(usl.fit.is_some(), "{}", usl.reason);
        let f = serde_json::to_value(&usl).unwrap();
        // lambda is the throughput of one: the fit recovers what one worker measured
        let lambda = f["lambda"]["value"].as_f64().unwrap();
        let one = curve["points"][0][1].as_f64().unwrap();
        assert!((lambda - 200.0).abs() < 1.0 && (lambda / one - 1.0).abs() < 0.01, "lambda {lambda}, one worker {one}");
        assert!((f["sigma"]["value"].as_f64().unwrap() - 0.02).abs() < 0.005, "{f}");
        assert!(f["warnings"].as_array().unwrap().iter().any(|w| w.as_str().unwrap().contains("only 4 points")));
    }
}
