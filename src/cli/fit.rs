//! `fathom fit FILE | --run RUN`: the Universal Scalability Law fitted to concurrency
//! vs throughput, from a table or from the phases of a stored run.

use crate::analysis::usl::{self, Fit, Point};
use crate::error::{Error, Result};
use crate::report::chart::{Axis, Chart, Style, Unit};
use crate::report::format::{count, sig3};
use crate::report::html;
use crate::report::summary::RunSummary;
use crate::report::table::render;
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

pub fn run(args: Args, results: &Path) -> Result<i32> {
    let points = match (&args.file, &args.run) {
        (Some(f), None) => read_table(f)?,
        (None, Some(r)) => from_run(&Store::open_existing(results)?, r)?,
        _ => return Err(Error::input("give a FILE of concurrency and throughput, or --run RUN")),
    };
    let fit = usl::fit(&points).map_err(Error::input)?;
    let predictions: Vec<(f64, f64, Option<String>)> = args
        .predict
        .iter()
        .map(|&n| {
            let (x, warn) = fit.predict(n);
            (n, x, warn)
        })
        .collect();
    if args.json {
        let preds: Vec<serde_json::Value> =
            predictions.iter().map(|(n, x, w)| serde_json::json!({"n": n, "throughput": x, "warning": w})).collect();
        let mut doc = serde_json::to_value(&fit).expect("fit serializes");
        doc["predictions"] = preds.into();
        println!("{}", serde_json::to_string_pretty(&doc).expect("json"));
    } else {
        print!("{}", describe(&fit, &predictions));
    }
    if let Some(path) = &args.svg {
        crate::nofollow::write(path, svg(&fit)).map_err(|e| Error::input(format!("{}: {e}", path.display())))?;
    }
    Ok(0)
}

/// Reads `N X [R]` rows: commas or whitespace between fields, an optional header (the
/// first line, only: a later line that is no row is a mistake, such as `;` between
/// fields, and is named rather than skipped). Every value must be a measurement: a
/// finite concurrency above 0 and a finite throughput (and latency) of 0 or more, so a
/// NaN or a negative rate is refused where it was written, not inside the fit.
fn read_table(path: &Path) -> Result<Vec<Point>> {
    let name = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| Error::input(format!("{name}: {e}")))?;
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
        points.push(Point { n, x });
    }
    if points.len() < 3 {
        return Err(Error::input(format!(
            "{name}: {} points of concurrency and throughput: the fit needs at least 3 (6 or more to trust it)",
            points.len()
        )));
    }
    Ok(points)
}

/// One point per phase of a run (see `report::analysis::curve`): the IOs in flight its
/// workloads were configured for, and their IOPS.
fn from_run(store: &Store, which: &str) -> Result<Vec<Point>> {
    let s = RunSummary::load(store, which)?;
    let points: Vec<Point> = s.analysis.curve.iter().flat_map(|c| &c.points).map(|&(n, x, _)| Point { n, x }).collect();
    if points.len() < 3 {
        return Err(Error::input(format!(
            "run {}: fewer than 3 phases with IO: a fit needs at least 3 points of concurrency \
             (e.g. `fathom run you-are-here`)",
            s.run.id
        )));
    }
    Ok(points)
}

/// The fit as text: parameters, the peak, and each point.
fn describe(f: &Fit, predictions: &[(f64, f64, Option<String>)]) -> String {
    let est = |name: &str, e: &usl::Estimate, fmt: &dyn Fn(f64) -> String| {
        vec![name.to_string(), fmt(e.value), fmt(e.std_error), format!("{} .. {}", fmt(e.ci95.0), fmt(e.ci95.1))]
    };
    let small = |v: f64| format!("{v:.6}");
    let rows = vec![
        est("sigma (contention)", &f.sigma, &small),
        est("kappa (coherency)", &f.kappa, &|v| format!("{v:.3e}")),
        est("lambda (X at N=1)", &f.lambda, &|v| sig3(v)),
    ];
    let mut out = render(&["parameter", "estimate", "std error", "95% interval"], &rows, 1);
    let peak = match (f.n_star, f.x_at_n_star) {
        (Some(n), Some(x)) => format!("N* = {n:.2}: throughput peaks at {} and falls beyond", count(x)),
        _ if f.peak_below_data => {
            let most = f.points.iter().max_by(|a, b| a.measured.total_cmp(&b.measured)).expect("3 or more points");
            format!(
                "no peak within the data: throughput only falls as concurrency grows; the most measured is {} at N = {}",
                count(most.measured),
                sig3(most.n)
            )
        }
        _ => "N* = infinite (kappa = 0): no peak, throughput approaches the Amdahl ceiling".to_string(),
    };
    out.push_str(&format!("\n{peak}\n"));
    if let Some(c) = f.amdahl_ceiling {
        out.push_str(&format!("Amdahl ceiling lambda/sigma = {}\n", count(c)));
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
    for (n, x, w) in predictions {
        out.push_str(&format!(
            "\nat N = {}: {}{}",
            sig3(*n),
            count(*x),
            w.as_ref().map(|w| format!(" ({w})")).unwrap_or_default()
        ));
    }
    if !predictions.is_empty() {
        out.push('\n');
    }
    for w in &f.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out
}

/// A self-contained SVG: measured points, the fitted curve, N* marked.
fn svg(f: &Fit) -> String {
    let mut c = Chart::new(
        "usl",
        "Throughput vs concurrency: Universal Scalability Law fit",
        Axis::new("concurrency N (IOs in flight, workers)", Unit::Count),
        Axis::new("throughput X (per second)", Unit::Count),
    );
    c.add("measured", Style::Dots, f.points.iter().map(|p| (p.n, p.measured)).collect());
    html::add_usl(&mut c, f);
    c.svg()
}
