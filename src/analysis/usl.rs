//! The Universal Scalability Law: X(N) = λN / (1 + σ(N−1) + κN(N−1)).
//!
//! σ (contention) is the share of work that serializes; κ (coherency, crosstalk) the
//! cost of keeping N parts consistent, which makes throughput fall past
//! N* = √((1−σ)/κ); λ is the throughput of one. Fitted by least squares on X, with σ
//! and κ in [0, 1] and λ > 0, as the R package `usl` (nls with the "port"
//! algorithm) does: λ is profiled out (for given σ, κ the best λ is linear), a grid
//! over (σ, κ) finds the basin, and Levenberg–Marquardt with the bounds refines all
//! three.
//!
//! A fit is only as good as its preconditions, so `fit` returns a [`Usl`]: the fit
//! with a [`Verdict`] that every printer obeys. Three parameters need at least 4
//! distinct N; a fit at the bounds (σ = κ = 0), with parameters the points cannot
//! tell apart (singular covariance), or over a throughput that only falls is no
//! meaningful fit; one that misses its points by more than their own noise is poor,
//! and then N* and predictions are withheld.

use super::student::t_quantile;
use serde::Serialize;

/// One measured point: concurrency N and throughput X.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Point {
    pub n: f64,
    pub x: f64,
    /// Standard deviation of the per-second throughput samples X is the mean of, when
    /// known (a run's phases): the noise a good fit's residuals stay within.
    pub spread: Option<f64>,
}

/// A parameter's estimate, standard error and 95% confidence interval (both None when
/// the covariance is singular: the points do not determine the parameter).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Estimate {
    pub value: f64,
    pub std_error: Option<f64>,
    pub ci95: Option<(f64, f64)>,
}

/// The fit of a set of points and what may be read from it.
#[derive(Debug, Clone, Serialize)]
pub struct Usl {
    pub verdict: Verdict,
    /// Why the verdict is what it is, and which rule decided (per-second spread or R²).
    pub reason: String,
    /// The parameters, when there were enough distinct N to fit at all (even a
    /// meaningless fit keeps them here, for `--json` readers to look at).
    #[serde(flatten)]
    pub fit: Option<Fit>,
}

/// What a fit may be used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The curve fits the points within their noise: parameters, N* and predictions
    /// are findings.
    Good,
    /// The curve misses the points by more than their noise: the parameters are shown
    /// as poor, N* and predictions withheld.
    Poor,
    /// The parameters describe nothing (too few distinct N, a fit at the bounds, a
    /// singular covariance, a throughput that only falls): only the reason is printed.
    NoFit,
}

/// Where the law puts the most throughput.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Peak {
    /// κ = 0: throughput approaches the Amdahl ceiling and never falls.
    None,
    /// N* within (or near) the N measured and κ's 95% interval above 0: throughput
    /// peaks there, at the law's throughput, and falls beyond.
    At { n: f64, x: f64 },
    /// κ's 95% interval reaches 0: the data do not show a fall, so the law's N* is no
    /// finding wherever it lies.
    NoEvidence { n: f64 },
    /// N* beyond the largest N measured (`largest`): what the law says past the data,
    /// never a finding.
    Extrapolated { n: f64, largest: f64 },
    /// N* below the smallest N measured: the throughput only falls over the data (the
    /// law at such an N* divides two vanishing numbers, "peaks" of billions).
    BelowData { n: f64 },
}

#[derive(Debug, Clone, Serialize)]
pub struct Fit {
    pub sigma: Estimate,
    pub kappa: Estimate,
    pub lambda: Estimate,
    /// N* = √((1−σ)/κ), unrounded, and where it lies against the data.
    pub peak: Peak,
    /// λ/σ: the most throughput could ever be with κ = 0; None when σ is not
    /// distinguishable from 0 (its 95% interval reaches 0), where the ceiling is
    /// unbounded within the data's uncertainty.
    pub amdahl_ceiling: Option<f64>,
    pub r_squared: f64,
    /// Per point: measured, fitted, residual, efficiency X/(λN).
    pub points: Vec<PointFit>,
    pub converged: bool,
    pub iterations: u32,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PointFit {
    pub n: f64,
    pub measured: f64,
    pub fitted: f64,
    pub residual: f64,
    pub efficiency: f64,
}

/// Throughput the law predicts at `n`.
pub fn model(sigma: f64, kappa: f64, lambda: f64, n: f64) -> f64 {
    lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))
}

/// How far past the largest N measured a peak may lie and still be read off the data.
const NEAR: f64 = 1.25;
/// Three parameters need one more distinct N than they are to leave a residual.
pub const MIN_DISTINCT_N: usize = 4;
/// Fewer distinct N than this fit three parameters poorly (the R package warns too).
const FEW_POINTS: usize = 6;
/// Without per-second samples to judge the residuals by, a fit below this R² is poor.
const POOR_R_SQUARED: f64 = 0.9;
/// A covariance whose correlation matrix has a determinant below this is singular:
/// some parameter is (nearly) a combination of the others on these points.
const SINGULAR: f64 = 1e-12;

/// Fits the law to `points` and judges the fit.
pub fn fit(points: &[Point]) -> Usl {
    let no_fit = |reason: String, fit: Option<Fit>| Usl { verdict: Verdict::NoFit, reason, fit };
    if let Some(p) = points.iter().find(|p| !(p.n > 0.0 && p.x >= 0.0 && p.n.is_finite() && p.x.is_finite())) {
        return no_fit(format!("point ({}, {}): concurrency must be above 0 and throughput 0 or more", p.n, p.x), None);
    }
    let mut ns: Vec<f64> = points.iter().map(|p| p.n).collect();
    ns.sort_by(f64::total_cmp);
    ns.dedup();
    if ns.len() < MIN_DISTINCT_N {
        return no_fit(
            format!(
                "{} points at {} distinct concurrenc{}: the fit of three parameters needs at least \
                 {MIN_DISTINCT_N} distinct (6 or more to trust it)",
                points.len(),
                ns.len(),
                if ns.len() == 1 { "y" } else { "ies" }
            ),
            None,
        );
    }
    let (fit, singular) = solve(points, ns.len(), ns[0], ns[ns.len() - 1]);
    let smallest = ns[0];
    let falls = {
        let mut by_n: Vec<&Point> = points.iter().collect();
        by_n.sort_by(|a, b| a.n.total_cmp(&b.n));
        by_n.windows(2).all(|w| w[1].n == w[0].n || w[1].x < w[0].x)
    };
    let degenerate = if let Peak::BelowData { n } = fit.peak {
        Some(format!(
            "no peak within the data: throughput only falls as concurrency grows (the law's N*, {n:.2}, lies \
             below the smallest N measured, {smallest})"
        ))
    } else if falls {
        Some("no peak within the data: throughput only falls as concurrency grows".to_string())
    } else if fit.sigma.value <= 0.0 && fit.kappa.value <= 0.0 {
        Some(
            "sigma and kappa are both 0, at their bound: throughput grows in proportion to N over the data, \
             so the law finds no contention or coherency cost to locate a peak or a ceiling from"
                .to_string(),
        )
    } else if singular {
        Some(
            "the points cannot tell the parameters apart (singular covariance): no standard errors, and any \
             peak or ceiling would be arbitrary"
                .to_string(),
        )
    } else {
        None
    };
    if let Some(reason) = degenerate {
        return no_fit(reason, Some(fit));
    }
    let (poor, reason) = judge(points, &fit);
    Usl { verdict: if poor { Verdict::Poor } else { Verdict::Good }, reason, fit: Some(fit) }
}

/// Poor or not, and the rule that decided: residuals against the per-second spread of
/// the points when every point has one, R² otherwise.
fn judge(points: &[Point], fit: &Fit) -> (bool, String) {
    let rms = |v: &mut dyn Iterator<Item = f64>| {
        let (sum, k) = v.fold((0.0, 0usize), |(s, k), x| (s + x * x, k + 1));
        (sum / k.max(1) as f64).sqrt()
    };
    let spreads: Option<Vec<f64>> = points.iter().map(|p| p.spread).collect();
    let residual = rms(&mut fit.points.iter().map(|p| p.residual));
    match spreads {
        Some(spreads) => {
            let spread = rms(&mut spreads.into_iter());
            let poor = residual > spread;
            let how = if poor { "more than" } else { "within" };
            (
                poor,
                format!(
                    "the curve misses the points by {residual:.1} RMS, {how} the {spread:.1} their own per-second \
                     samples vary by (RMS of their standard deviations)"
                ),
            )
        }
        None => {
            let poor = fit.r_squared < POOR_R_SQUARED;
            let how = if poor { "below" } else { "at or above" };
            (
                poor,
                format!(
                    "R² {:.3} is {how} {POOR_R_SQUARED:.2} (no per-second samples to judge the residuals by, so R² \
                     decides)",
                    fit.r_squared
                ),
            )
        }
    }
}

/// The least-squares fit, and whether its covariance is singular. `distinct`: how many
/// distinct N; `smallest`, `largest`: the range of N measured.
fn solve(points: &[Point], distinct: usize, smallest: f64, largest: f64) -> (Fit, bool) {
    let (params, iterations, converged) = levenberg_marquardt(points, basin(points));
    let [sigma, kappa, lambda] = params;
    let fitted: Vec<f64> = points.iter().map(|p| model(sigma, kappa, lambda, p.n)).collect();
    let rss: f64 = points.iter().zip(&fitted).map(|(p, f)| (p.x - f).powi(2)).sum();
    let mean = points.iter().map(|p| p.x).sum::<f64>() / points.len() as f64;
    let tss: f64 = points.iter().map(|p| (p.x - mean).powi(2)).sum();
    let df = points.len() as f64 - 3.0;
    let se = standard_errors(points, params, rss, df);
    let t = t_quantile(0.975, df);
    let est = |v: f64, e: Option<f64>| Estimate { value: v, std_error: e, ci95: e.map(|e| (v - t * e, v + t * e)) };
    let kappa_est = est(kappa, se.map(|s| s[1]));
    // a fall is shown only where κ is distinguishable from 0
    let falls = kappa_est.ci95.is_some_and(|(low, _)| low > 0.0);
    let peak = match (kappa > 0.0).then(|| ((1.0 - sigma) / kappa).sqrt()) {
        None => Peak::None,
        Some(n) if n < smallest => Peak::BelowData { n },
        Some(n) if !falls => Peak::NoEvidence { n },
        Some(n) if n > NEAR * largest => Peak::Extrapolated { n, largest },
        Some(n) => Peak::At { n, x: model(sigma, kappa, lambda, n) },
    };
    let points_fit: Vec<PointFit> = points
        .iter()
        .zip(&fitted)
        .map(|(p, f)| PointFit {
            n: p.n,
            measured: p.x,
            fitted: *f,
            residual: p.x - f,
            efficiency: p.x / (lambda * p.n),
        })
        .collect();
    let warnings = warnings(points, &peak, distinct, (smallest, largest), converged, iterations);
    let sigma = est(sigma, se.map(|s| s[0]));
    let fit = Fit {
        amdahl_ceiling: sigma.ci95.filter(|ci| ci.0 > 0.0).map(|_| lambda / sigma.value),
        sigma,
        kappa: kappa_est,
        lambda: est(lambda, se.map(|s| s[2])),
        peak,
        r_squared: if tss > 0.0 { 1.0 - rss / tss } else { 1.0 },
        points: points_fit,
        converged,
        iterations,
        warnings,
    };
    (fit, se.is_none())
}

/// The start of the fit: the best of a grid over σ and κ (log-spaced), λ profiled.
/// Starting in the basin keeps Levenberg-Marquardt from a local minimum.
fn basin(points: &[Point]) -> [f64; 3] {
    let mut best = (f64::INFINITY, 0.0, 0.0);
    let sigmas = std::iter::once(0.0).chain((0..=60).map(|i| 10f64.powf(-6.0 + 6.0 * i as f64 / 60.0)));
    for s in sigmas {
        for k in std::iter::once(0.0).chain((0..=80).map(|i| 10f64.powf(-10.0 + 10.0 * i as f64 / 80.0))) {
            let (rss, _) = profiled(points, s.min(1.0), k.min(1.0));
            if rss < best.0 {
                best = (rss, s.min(1.0), k.min(1.0));
            }
        }
    }
    let (_, s0, k0) = best;
    let l0 = profiled(points, s0, k0).1;
    [s0, k0, l0]
}

/// What the reader of a fit must know: a peak outside the data, too few distinct N, a
/// superlinear point, no convergence. The pair: the smallest and largest N measured.
fn warnings(
    points: &[Point],
    peak: &Peak,
    distinct: usize,
    (smallest, largest): (f64, f64),
    converged: bool,
    iterations: u32,
) -> Vec<String> {
    let mut warnings = Vec::new();
    if let Peak::BelowData { n } = *peak {
        warnings.push(format!(
            "throughput only falls over the data: the law's N* ({n:.2}) lies below the smallest N measured \
             ({smallest}), so no peak is reported"
        ));
    }
    if let Peak::Extrapolated { n, .. } = *peak {
        warnings.push(format!(
            "the law's N* ({n:.1}) lies beyond the largest N measured ({largest}): an extrapolation, not a \
             finding; measure up to it to locate a peak"
        ));
    }
    if distinct < FEW_POINTS {
        warnings.push(format!("only {distinct} points of distinct N: 6 or more are needed to trust three parameters"));
    }
    // throughput per unit of concurrency above that of the smallest N: more than linear
    let first = points.iter().min_by(|a, b| a.n.total_cmp(&b.n)).expect("4 or more points");
    if first.x > 0.0 && points.iter().any(|p| p.x / p.n > 1.05 * first.x / first.n) {
        warnings.push(
            "superlinear: some points do more per unit of concurrency than the smallest N does, which the law \
             cannot describe (an unbounded fit would give a negative coefficient); check that point, and caching"
                .into(),
        );
    }
    if !converged {
        warnings.push(format!("the fit did not converge in {iterations} iterations"));
    }
    warnings
}

/// Throughput predicted at one N with a warning when it extrapolates, or why the fit
/// withholds it.
pub type Prediction = Result<(f64, Option<String>), String>;

impl std::fmt::Display for Peak {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Peak::None => write!(f, "no peak (kappa = 0): throughput approaches the Amdahl ceiling"),
            Peak::At { n, x } => write!(f, "N* = {n:.1}: throughput peaks at {x:.0} and falls beyond"),
            Peak::NoEvidence { n } => write!(
                f,
                "no evidence of a fall: kappa's 95% interval includes 0 (the law's N* = {n:.1} is not a finding)"
            ),
            Peak::Extrapolated { n, largest } => {
                write!(f, "a peak at {n:.1}, beyond the largest N measured, {largest}: an extrapolation, not a finding")
            }
            Peak::BelowData { n } => {
                write!(f, "no peak within the data: throughput only falls (the law's N* = {n:.2} lies below it)")
            }
        }
    }
}

impl Usl {
    /// What a reader may take from the fit in one line, as every printer words it: the
    /// peak of a good fit, or why there is none to quote.
    pub fn headline(&self) -> String {
        match (self.verdict, &self.fit) {
            (Verdict::Good, Some(f)) => f.peak.to_string(),
            (Verdict::Poor, _) => format!("poor fit: {}; N* and predictions withheld", self.reason),
            _ => format!("no meaningful fit: {}", self.reason),
        }
    }

    /// Predicted throughput at `n` with a warning when it extrapolates beyond twice the
    /// largest measured concurrency; Err (why) when the verdict withholds predictions.
    pub fn predict(&self, n: f64) -> Prediction {
        match (&self.fit, self.verdict) {
            (Some(f), Verdict::Good) => Ok(f.predict(n)),
            (_, Verdict::Poor) => Err("withheld: a poor fit".into()),
            _ => Err("withheld: no meaningful fit".into()),
        }
    }
}

impl Fit {
    /// Predicted throughput at `n`, with a warning when it extrapolates beyond twice the
    /// largest measured concurrency.
    fn predict(&self, n: f64) -> (f64, Option<String>) {
        let x = model(self.sigma.value, self.kappa.value, self.lambda.value, n);
        let largest = self.points.iter().map(|p| p.n).fold(0.0, f64::max);
        let warning = (n > 2.0 * largest)
            .then(|| format!("N = {n} is more than twice the largest measured N ({largest}): an extrapolation"));
        (x, warning)
    }
}

/// Residual sum of squares and the best λ for fixed σ, κ (X = λ·g(N) is linear in λ).
fn profiled(points: &[Point], sigma: f64, kappa: f64) -> (f64, f64) {
    let g = |n: f64| model(sigma, kappa, 1.0, n);
    let num: f64 = points.iter().map(|p| p.x * g(p.n)).sum();
    let den: f64 = points.iter().map(|p| g(p.n).powi(2)).sum();
    let lambda = if den > 0.0 { (num / den).max(f64::MIN_POSITIVE) } else { 1.0 };
    let rss = points.iter().map(|p| (p.x - lambda * g(p.n)).powi(2)).sum();
    (rss, lambda)
}

/// ∂X/∂(σ, κ, λ) at one N.
fn gradient(p: [f64; 3], n: f64) -> [f64; 3] {
    let [s, k, l] = p;
    let d = 1.0 + s * (n - 1.0) + k * n * (n - 1.0);
    [-l * n * (n - 1.0) / (d * d), -l * n * n * (n - 1.0) / (d * d), n / d]
}

fn rss_of(points: &[Point], p: [f64; 3]) -> f64 {
    points.iter().map(|q| (q.x - model(p[0], p[1], p[2], q.n)).powi(2)).sum()
}

/// Keeps σ and κ in [0, 1] and λ positive.
fn clamp(p: [f64; 3]) -> [f64; 3] {
    [p[0].clamp(0.0, 1.0), p[1].clamp(0.0, 1.0), p[2].max(f64::MIN_POSITIVE)]
}

/// Bounded Levenberg–Marquardt from `start`: (parameters, iterations, converged).
fn levenberg_marquardt(points: &[Point], start: [f64; 3]) -> ([f64; 3], u32, bool) {
    let mut p = clamp(start);
    let mut rss = rss_of(points, p);
    let mut mu = 1e-3;
    for it in 1..=500 {
        // normal equations (JᵀJ + μ diag(JᵀJ)) δ = Jᵀr
        let mut jtj = [[0.0; 3]; 3];
        let mut jtr = [0.0; 3];
        for q in points {
            let g = gradient(p, q.n);
            let r = q.x - model(p[0], p[1], p[2], q.n);
            for a in 0..3 {
                jtr[a] += g[a] * r;
                for b in 0..3 {
                    jtj[a][b] += g[a] * g[b];
                }
            }
        }
        // σ or κ held at a bound by the descent direction stays there (projected step)
        for i in 0..2 {
            let at_low = p[i] <= 0.0 && jtr[i] < 0.0;
            let at_high = p[i] >= 1.0 && jtr[i] > 0.0;
            if at_low || at_high {
                jtj[i] = [0.0; 3];
                for row in jtj.iter_mut() {
                    row[i] = 0.0;
                }
                jtj[i][i] = 1.0;
                jtr[i] = 0.0;
            }
        }
        let mut improved = false;
        for _ in 0..30 {
            let mut m = jtj;
            for (a, row) in m.iter_mut().enumerate() {
                row[a] += mu * jtj[a][a].max(1e-30);
            }
            let Some(delta) = solve3(m, jtr) else {
                mu *= 10.0;
                continue;
            };
            let next = clamp([p[0] + delta[0], p[1] + delta[1], p[2] + delta[2]]);
            let next_rss = rss_of(points, next);
            if next_rss <= rss {
                let step: f64 = (0..3).map(|i| ((next[i] - p[i]) / p[i].abs().max(1e-12)).abs()).fold(0.0, f64::max);
                let gain = (rss - next_rss) / rss.max(1e-300);
                p = next;
                rss = next_rss;
                mu = (mu / 10.0).max(1e-12);
                improved = true;
                if step < 1e-10 || gain < 1e-13 {
                    return (p, it, true);
                }
                break;
            }
            mu *= 10.0;
        }
        if !improved {
            // no step lowers the residuals: a (bounded) minimum
            return (p, it, true);
        }
    }
    (p, 500, false)
}

/// The determinant of a 3×3 matrix.
fn det3(m: [[f64; 3]; 3]) -> f64 {
    m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
}

/// Solves the 3×3 system by Cramer's rule; None if singular.
fn solve3(m: [[f64; 3]; 3], b: [f64; 3]) -> Option<[f64; 3]> {
    let d = det3(m);
    if d.abs() < 1e-300 || !d.is_finite() {
        return None;
    }
    let mut out = [0.0; 3];
    for (i, o) in out.iter_mut().enumerate() {
        let mut mi = m;
        for r in 0..3 {
            mi[r][i] = b[r];
        }
        *o = det3(mi) / d;
    }
    Some(out)
}

/// Standard errors from s²(JᵀJ)⁻¹, s² = RSS/(n−3) (as nls reports them); None when
/// JᵀJ is singular (its correlation matrix's determinant below `SINGULAR`).
fn standard_errors(points: &[Point], p: [f64; 3], rss: f64, df: f64) -> Option<[f64; 3]> {
    let mut jtj = [[0.0; 3]; 3];
    for q in points {
        let g = gradient(p, q.n);
        for a in 0..3 {
            for b in 0..3 {
                jtj[a][b] += g[a] * g[b];
            }
        }
    }
    let diagonal = jtj[0][0] * jtj[1][1] * jtj[2][2];
    let correlation = det3(jtj) / diagonal;
    if df <= 0.0 || !(diagonal > 0.0 && correlation.is_finite() && correlation >= SINGULAR) {
        return None;
    }
    let s2 = rss / df;
    let mut se = [0.0; 3];
    for (i, e) in se.iter_mut().enumerate() {
        let mut unit = [0.0; 3];
        unit[i] = 1.0;
        *e = (s2 * solve3(jtj, unit)?[i]).max(0.0).sqrt();
    }
    Some(se)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points(n: &[f64], x: &[f64]) -> Vec<Point> {
        n.iter().zip(x).map(|(&n, &x)| Point { n, x, spread: None }).collect()
    }

    /// The R package `usl`'s `raytracer` data set (Gunther, Guerrilla Capacity
    /// Planning, 2007): ray-geometry intersections per second on an SGI Origin 2000.
    fn raytracer() -> Vec<Point> {
        points(
            &[1.0, 4.0, 8.0, 12.0, 16.0, 20.0, 24.0, 28.0, 32.0, 48.0, 64.0],
            &[20.0, 78.0, 130.0, 170.0, 190.0, 200.0, 210.0, 230.0, 260.0, 280.0, 310.0],
        )
    }

    /// A fit that must exist, whatever its verdict.
    fn fitted(p: &[Point]) -> (Verdict, String, Fit) {
        let u = fit(p);
        (u.verdict, u.reason.clone(), u.fit.unwrap_or_else(|| panic!("no fit: {}", u.reason)))
    }

    #[test]
    fn raytracer_agrees_with_the_r_package() {
        // usl 2.x, tests/confint.Rout.save: coef alpha 0.0578, beta 0.0000,
        // gamma 21.8488; 95% intervals alpha [0.033677, 0.081864],
        // gamma [17.868380, 25.829306]
        let (verdict, reason, f) = fitted(&raytracer());
        assert_eq!(verdict, Verdict::Good, "{reason}");
        assert!(reason.contains("R² decides"), "{reason}");
        assert!(f.converged);
        let sig4 = |a: f64, b: f64| ((a - b) / b).abs() < 5e-5;
        assert!(sig4(f.lambda.value, 21.8488), "lambda {}", f.lambda.value);
        assert!((f.sigma.value - 0.0578).abs() < 5e-5, "sigma {}", f.sigma.value);
        assert!(f.kappa.value < 1e-6, "kappa {}", f.kappa.value);
        // R prints intervals of half-width c·se with one multiplier c for all three
        // parameters (1.8125 here, where the t(0.975, n−3) interval fathom prints uses
        // 2.306): the standard errors, that is the covariance of the fit, agree.
        let half = [(0.081864 - 0.033677) / 2.0, 0.000214, (25.829306 - 17.868380) / 2.0];
        let se = [f.sigma.std_error.unwrap(), f.kappa.std_error.unwrap(), f.lambda.std_error.unwrap()];
        let c: Vec<f64> = half.iter().zip(se).map(|(h, e)| h / e).collect();
        assert!(c.iter().all(|ci| (ci / c[0] - 1.0).abs() < 3e-3), "multipliers {c:?}");
        assert!((c[0] - 1.8125).abs() < 2e-3, "{c:?}");
        assert!((f.sigma.ci95.unwrap().1 - f.sigma.value) / se[0] - t_quantile(0.975, 8.0) < 1e-9);
        assert_eq!(f.peak, Peak::None, "kappa = 0: no peak");
        assert!((f.amdahl_ceiling.unwrap() - 21.8488 / 0.0578).abs() < 1.0);
        assert!(f.warnings.is_empty(), "{:?}", f.warnings);
    }

    #[test]
    fn a_synthetic_curve_is_recovered_with_its_peak() {
        let truth = (0.02, 0.0005, 1000.0);
        let ns = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 48.0, 64.0];
        let pts: Vec<Point> =
            ns.iter().map(|&n| Point { n, x: model(truth.0, truth.1, truth.2, n), spread: None }).collect();
        let u = fit(&pts);
        assert_eq!(u.verdict, Verdict::Good, "{}", u.reason);
        let f = u.fit.as_ref().unwrap();
        assert!((f.sigma.value - 0.02).abs() < 1e-6 && (f.kappa.value - 0.0005).abs() < 1e-8, "{f:?}");
        let n_star = ((1.0 - 0.02) / 0.0005f64).sqrt();
        let Peak::At { n, x } = f.peak else { panic!("{:?}", f.peak) };
        assert!((n - n_star).abs() < 1e-3);
        let (at_200, warn) = u.predict(200.0).unwrap();
        assert!((at_200 - model(0.02, 0.0005, 1000.0, 200.0)).abs() < 1e-3 && warn.is_some());
        assert!(f.amdahl_ceiling.unwrap() > x);
    }

    #[test]
    fn few_points_and_superlinear_data_are_warned_about() {
        let (_, _, f) = fitted(&points(&[1.0, 2.0, 4.0, 8.0], &[100.0, 250.0, 520.0, 1000.0]));
        assert!(f.warnings.iter().any(|w| w.contains("only 4 points")), "{:?}", f.warnings);
        assert!(f.warnings.iter().any(|w| w.contains("superlinear")), "{:?}", f.warnings);
        for bad in [points(&[1.0, 2.0], &[1.0, 2.0]), points(&[0.0, 2.0, 3.0, 4.0], &[1.0, 2.0, 3.0, 4.0])] {
            let u = fit(&bad);
            assert!(u.verdict == Verdict::NoFit && u.fit.is_none(), "{u:?}");
        }
    }

    #[test]
    fn a_throughput_that_only_falls_is_no_meaningful_fit() {
        // X halves as N doubles: the law puts N* near 0, where X(N*) is 0/0
        let (verdict, reason, f) = fitted(&points(&[10.0, 20.0, 40.0, 80.0], &[1000.0, 500.0, 250.0, 125.0]));
        assert_eq!(verdict, Verdict::NoFit);
        assert!(reason.contains("only falls") && reason.contains("smallest N measured, 10"), "{reason}");
        assert!(matches!(f.peak, Peak::BelowData { .. } | Peak::None), "{:?}", f.peak);
        // falling measured points, even where the law's N* lands just inside them
        let u = fit(&points(&[1.0, 2.0, 4.0, 8.0, 16.0], &[1000.0, 990.0, 700.0, 400.0, 200.0]));
        assert_eq!(u.verdict, Verdict::NoFit, "{u:?}");
        assert!(u.reason.contains("only falls"), "{}", u.reason);
        // a peak inside the data is still one
        let (verdict, _, f) = fitted(&points(&[1.0, 2.0, 4.0, 8.0, 16.0], &[100.0, 180.0, 250.0, 240.0, 150.0]));
        assert_ne!(verdict, Verdict::NoFit);
        assert!(matches!(f.peak, Peak::At { n, .. } if (1.0..16.0).contains(&n)), "{f:?}");
    }

    #[test]
    fn phases_at_one_concurrency_or_three_of_them_are_no_fit() {
        // hotspot: three access distributions at one depth gave N* = 48696.8, NaN
        // standard errors and an Amdahl ceiling of i64::MAX
        let u = fit(&points(&[16.0, 16.0, 16.0], &[1000.0, 1200.0, 900.0]));
        assert_eq!(u.verdict, Verdict::NoFit);
        assert!(u.fit.is_none() && u.reason.contains("1 distinct") && u.reason.contains("at least 4"), "{u:?}");
        // db-colocation: before, during, after made a "perfect" R² 1.000 fit
        let u = fit(&points(&[1.0, 2.0, 3.0], &[100.0, 190.0, 185.0]));
        assert!(u.verdict == Verdict::NoFit && u.fit.is_none() && u.reason.contains("3 distinct"), "{u:?}");
        // four points, two at one N: still three distinct
        let u = fit(&points(&[1.0, 2.0, 4.0, 4.0], &[100.0, 190.0, 350.0, 360.0]));
        assert!(u.verdict == Verdict::NoFit && u.fit.is_none(), "{u:?}");
    }

    #[test]
    fn a_linear_throughput_is_no_meaningful_fit() {
        let (verdict, reason, f) = fitted(&points(&[1.0, 2.0, 4.0, 8.0], &[100.0, 200.0, 400.0, 800.0]));
        assert_eq!(verdict, Verdict::NoFit);
        assert!(reason.contains("both 0"), "{reason}");
        assert!(f.amdahl_ceiling.is_none() && f.peak == Peak::None, "{f:?}");
    }

    #[test]
    fn a_peak_is_claimed_only_where_the_data_show_a_fall_and_reach_it() {
        // a noisy sweep to 64 whose law's N* lies within it, though kappa's interval
        // includes 0: no fall is shown
        let ns = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0];
        let noise = [1.0, 1.08, 0.93, 1.07, 0.94, 1.06, 0.95];
        let x: Vec<f64> = ns.iter().zip(noise).map(|(&n, e)| model(0.1, 0.0004, 1000.0, n) * e).collect();
        let u = fit(&points(&ns, &x));
        let f = u.fit.as_ref().unwrap();
        assert!(f.kappa.ci95.is_some_and(|(low, _)| low <= 0.0), "{:?}", f.kappa);
        assert!(matches!(f.peak, Peak::NoEvidence { .. }), "{:?}", f.peak);
        assert!(u.headline().contains("no evidence of a fall: kappa's 95% interval includes 0"), "{}", u.headline());
        assert!(!u.headline().contains("peaks at"), "{}", u.headline());
        // a sweep to 32 whose law peaks at 49: past the data, an extrapolation
        let ns = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0];
        let pts: Vec<Point> =
            ns.iter().map(|&n| Point { n, x: model(0.02, 0.0004, 1000.0, n), spread: None }).collect();
        let u = fit(&pts);
        let f = u.fit.as_ref().unwrap();
        assert!(matches!(f.peak, Peak::Extrapolated { largest, .. } if largest == 32.0), "{:?}", f.peak);
        assert!(
            u.headline().starts_with("a peak at 49.5, beyond the largest N measured, 32: an extrapolation"),
            "{}",
            u.headline()
        );
    }

    #[test]
    fn a_peak_far_beyond_the_data_is_an_extrapolation() {
        // the quickstart: N* = 359.6 after measuring up to depth 64
        let ns = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0];
        let (s, k) = (0.03, 7.5e-6);
        let pts: Vec<Point> = ns.iter().map(|&n| Point { n, x: model(s, k, 5000.0, n), spread: None }).collect();
        let (verdict, _, f) = fitted(&pts);
        assert_eq!(verdict, Verdict::Good);
        let Peak::Extrapolated { n, .. } = f.peak else { panic!("{:?}", f.peak) };
        assert!((n - ((1.0 - s) / k).sqrt()).abs() < 1.0 && n > 128.0);
        assert!(f.warnings.iter().any(|w| w.contains("extrapolation")), "{:?}", f.warnings);
    }

    #[test]
    fn a_poor_fit_withholds_predictions_by_the_rule_that_applies() {
        let n = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0];
        let x = [100.0, 120.0, 310.0, 150.0, 420.0, 200.0];
        // no per-second samples: R² decides
        let u = fit(&points(&n, &x));
        assert_eq!(u.verdict, Verdict::Poor, "{u:?}");
        assert!(u.reason.contains("R²") && u.reason.contains("below 0.90"), "{}", u.reason);
        assert!(u.predict(16.0).is_err_and(|e| e.contains("poor")));
        assert!(u.fit.as_ref().unwrap().amdahl_ceiling.is_none(), "sigma's interval reaches 0");
        // per-second samples that vary less than the curve misses by: poor
        let with =
            |spread: f64| fit(&n.iter().zip(x).map(|(&n, x)| Point { n, x, spread: Some(spread) }).collect::<Vec<_>>());
        let u = with(10.0);
        assert_eq!(u.verdict, Verdict::Poor, "{u:?}");
        assert!(u.reason.contains("more than") && u.reason.contains("per-second"), "{}", u.reason);
        // samples noisier than the misses: the same points fit within their noise
        let u = with(500.0);
        assert_eq!(u.verdict, Verdict::Good, "{u:?}");
        assert!(u.reason.contains("within"), "{}", u.reason);
        assert!(u.predict(16.0).is_ok());
    }

    #[test]
    fn a_covariance_the_points_cannot_determine_is_singular() {
        // at N = 1 the law does not depend on sigma or kappa
        let pts = points(&[1.0, 1.0, 1.0, 1.0], &[10.0, 11.0, 9.0, 10.0]);
        assert!(standard_errors(&pts, [0.1, 0.01, 10.0], 2.0, 1.0).is_none());
        assert!(standard_errors(&raytracer(), [0.0578, 0.0, 21.85], 100.0, 8.0).is_some());
    }
}
