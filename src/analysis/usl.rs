//! The Universal Scalability Law: X(N) = λN / (1 + σ(N−1) + κN(N−1)).
//!
//! σ (contention) is the share of work that serializes; κ (coherency, crosstalk) the
//! cost of keeping N parts consistent, which makes throughput fall past
//! N* = √((1−σ)/κ); λ is the throughput of one. Fitted by least squares on X, with σ
//! and κ in [0, 1] and λ > 0, as the R package `usl` (nls with the "port"
//! algorithm) does: λ is profiled out (for given σ, κ the best λ is linear), a grid
//! over (σ, κ) finds the basin, and Levenberg–Marquardt with the bounds refines all
//! three.

use serde::Serialize;

/// One measured point: concurrency N and throughput X.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Point {
    pub n: f64,
    pub x: f64,
}

/// A parameter's estimate, standard error and 95% confidence interval.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Estimate {
    pub value: f64,
    pub std_error: f64,
    pub ci95: (f64, f64),
}

#[derive(Debug, Clone, Serialize)]
pub struct Fit {
    pub sigma: Estimate,
    pub kappa: Estimate,
    pub lambda: Estimate,
    /// N* = √((1−σ)/κ), unrounded; None (infinite) when κ = 0, and None when it lies
    /// below the data (see `peak_below_data`).
    pub n_star: Option<f64>,
    /// Throughput at N* (None when N* is).
    pub x_at_n_star: Option<f64>,
    /// The law's N* lies below the smallest concurrency measured: the throughput only
    /// falls over the data. No peak is reported then: the law at such an N* divides two
    /// vanishing numbers (a table of thousands gave a "peak" of 399 billion), and the
    /// data say only that the most throughput is at the smallest N or below it.
    pub peak_below_data: bool,
    /// λ/σ: the most throughput could ever be with κ = 0 (None when σ = 0).
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

/// Fewer points than this fit three parameters poorly.
const FEW_POINTS: usize = 6;

/// Fits the law to `points` (at least 3, with N > 0 and X ≥ 0).
pub fn fit(points: &[Point]) -> Result<Fit, String> {
    if points.len() < 3 {
        return Err(format!("{} points: the fit needs at least 3 (6 or more to trust it)", points.len()));
    }
    if let Some(p) = points.iter().find(|p| !(p.n > 0.0 && p.x >= 0.0 && p.n.is_finite() && p.x.is_finite())) {
        return Err(format!("point ({}, {}): concurrency must be above 0 and throughput 0 or more", p.n, p.x));
    }
    // the basin: a grid over σ and κ (log-spaced), λ profiled
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
    let (params, iterations, converged) = levenberg_marquardt(points, [s0, k0, l0]);
    let [sigma, kappa, lambda] = params;
    let fitted: Vec<f64> = points.iter().map(|p| model(sigma, kappa, lambda, p.n)).collect();
    let rss: f64 = points.iter().zip(&fitted).map(|(p, f)| (p.x - f).powi(2)).sum();
    let mean = points.iter().map(|p| p.x).sum::<f64>() / points.len() as f64;
    let tss: f64 = points.iter().map(|p| (p.x - mean).powi(2)).sum();
    let df = points.len() as f64 - 3.0;
    let se = standard_errors(points, params, rss, df);
    let t = if df > 0.0 { t_quantile(0.975, df) } else { f64::NAN };
    let est = |v: f64, e: f64| Estimate { value: v, std_error: e, ci95: (v - t * e, v + t * e) };
    let law_peak = (kappa > 0.0).then(|| ((1.0 - sigma) / kappa).sqrt());
    let first = points.iter().min_by(|a, b| a.n.total_cmp(&b.n)).expect("3 or more points");
    let peak_below_data = law_peak.is_some_and(|n| n < first.n);
    let n_star = law_peak.filter(|_| !peak_below_data);
    let mut warnings = Vec::new();
    if let Some(n) = law_peak.filter(|_| peak_below_data) {
        warnings.push(format!(
            "throughput only falls over the data: the law's N* ({n:.2}) lies below the smallest N measured ({}), \
             so no peak is reported",
            first.n
        ));
    }
    if points.len() < FEW_POINTS {
        warnings.push(format!("only {} points: 6 or more are needed to trust three parameters", points.len()));
    }
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
    // throughput per unit of concurrency above that of the smallest N: more than linear
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
    Ok(Fit {
        sigma: est(sigma, se[0]),
        kappa: est(kappa, se[1]),
        lambda: est(lambda, se[2]),
        n_star,
        x_at_n_star: n_star.map(|n| model(sigma, kappa, lambda, n)),
        peak_below_data,
        amdahl_ceiling: (sigma > 0.0).then(|| lambda / sigma),
        r_squared: if tss > 0.0 { 1.0 - rss / tss } else { 1.0 },
        points: points_fit,
        converged,
        iterations,
        warnings,
    })
}

impl Fit {
    /// Predicted throughput at `n`, with a warning when it extrapolates beyond twice the
    /// largest measured concurrency.
    pub fn predict(&self, n: f64) -> (f64, Option<String>) {
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

/// Solves the 3×3 system by Cramer's rule; None if singular.
fn solve3(m: [[f64; 3]; 3], b: [f64; 3]) -> Option<[f64; 3]> {
    let det = |m: [[f64; 3]; 3]| {
        m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
    };
    let d = det(m);
    if d.abs() < 1e-300 || !d.is_finite() {
        return None;
    }
    let mut out = [0.0; 3];
    for (i, o) in out.iter_mut().enumerate() {
        let mut mi = m;
        for r in 0..3 {
            mi[r][i] = b[r];
        }
        *o = det(mi) / d;
    }
    Some(out)
}

/// Standard errors from s²(JᵀJ)⁻¹, s² = RSS/(n−3) (as nls reports them).
fn standard_errors(points: &[Point], p: [f64; 3], rss: f64, df: f64) -> [f64; 3] {
    if df <= 0.0 {
        return [f64::NAN; 3];
    }
    let mut jtj = [[0.0; 3]; 3];
    for q in points {
        let g = gradient(p, q.n);
        for a in 0..3 {
            for b in 0..3 {
                jtj[a][b] += g[a] * g[b];
            }
        }
    }
    let s2 = rss / df;
    let mut se = [f64::NAN; 3];
    for (i, e) in se.iter_mut().enumerate() {
        let mut unit = [0.0; 3];
        unit[i] = 1.0;
        if let Some(col) = solve3(jtj, unit) {
            *e = (s2 * col[i]).max(0.0).sqrt();
        }
    }
    se
}

/// The `p` quantile of Student's t with `df` degrees of freedom, by bisection on its
/// CDF (regularized incomplete beta).
pub fn t_quantile(p: f64, df: f64) -> f64 {
    let cdf = |t: f64| {
        let x = df / (df + t * t);
        let tail = 0.5 * incomplete_beta(df / 2.0, 0.5, x);
        if t >= 0.0 { 1.0 - tail } else { tail }
    };
    let (mut lo, mut hi) = (-1e3, 1e3);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if cdf(mid) < p { lo = mid } else { hi = mid }
    }
    0.5 * (lo + hi)
}

/// Regularized incomplete beta I_x(a, b) (continued fraction, Lentz).
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x > (a + 1.0) / (a + b + 2.0) {
        return 1.0 - incomplete_beta(b, a, 1.0 - x);
    }
    let tiny = 1e-300;
    let (mut c, mut d) = (1.0, 1.0 - (a + b) * x / (a + 1.0));
    d = if d.abs() < tiny { tiny } else { d };
    d = 1.0 / d;
    let mut f = d;
    for m in 1..300 {
        let m = m as f64;
        for num in [
            m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0)),
        ] {
            d = 1.0 + num * d;
            d = if d.abs() < tiny { tiny } else { d };
            c = 1.0 + num / c;
            c = if c.abs() < tiny { tiny } else { c };
            d = 1.0 / d;
            f *= c * d;
        }
        if (c * d - 1.0).abs() < 1e-15 {
            break;
        }
    }
    (ln_front.exp() / a) * f
}

/// ln Γ(x) (Lanczos, g = 7).
fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        return std::f64::consts::PI.ln() - (std::f64::consts::PI * x).sin().ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let sum = C[0] + (1..9).map(|i| C[i] / (x + i as f64)).sum::<f64>();
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points(n: &[f64], x: &[f64]) -> Vec<Point> {
        n.iter().zip(x).map(|(&n, &x)| Point { n, x }).collect()
    }

    /// The R package `usl`'s `raytracer` data set (Gunther, Guerrilla Capacity
    /// Planning, 2007): ray-geometry intersections per second on an SGI Origin 2000.
    fn raytracer() -> Vec<Point> {
        points(
            &[1.0, 4.0, 8.0, 12.0, 16.0, 20.0, 24.0, 28.0, 32.0, 48.0, 64.0],
            &[20.0, 78.0, 130.0, 170.0, 190.0, 200.0, 210.0, 230.0, 260.0, 280.0, 310.0],
        )
    }

    #[test]
    fn t_quantiles_match_tables() {
        assert!((t_quantile(0.975, 8.0) - 2.306_004).abs() < 1e-5);
        assert!((t_quantile(0.975, 1.0) - 12.706_205).abs() < 1e-4);
        assert!((t_quantile(0.975, 30.0) - 2.042_272).abs() < 1e-5);
    }

    #[test]
    fn raytracer_agrees_with_the_r_package() {
        // usl 2.x, tests/confint.Rout.save: coef alpha 0.0578, beta 0.0000,
        // gamma 21.8488; 95% intervals alpha [0.033677, 0.081864],
        // gamma [17.868380, 25.829306]
        let f = fit(&raytracer()).unwrap();
        assert!(f.converged);
        let sig4 = |a: f64, b: f64| ((a - b) / b).abs() < 5e-5;
        assert!(sig4(f.lambda.value, 21.8488), "lambda {}", f.lambda.value);
        assert!((f.sigma.value - 0.0578).abs() < 5e-5, "sigma {}", f.sigma.value);
        assert!(f.kappa.value < 1e-6, "kappa {}", f.kappa.value);
        // R prints intervals of half-width c·se with one multiplier c for all three
        // parameters (1.8125 here, where the t(0.975, n−3) interval fathom prints uses
        // 2.306): the standard errors, that is the covariance of the fit, agree.
        let half = [(0.081864 - 0.033677) / 2.0, 0.000214, (25.829306 - 17.868380) / 2.0];
        let se = [f.sigma.std_error, f.kappa.std_error, f.lambda.std_error];
        let c: Vec<f64> = half.iter().zip(se).map(|(h, e)| h / e).collect();
        assert!(c.iter().all(|ci| (ci / c[0] - 1.0).abs() < 3e-3), "multipliers {c:?}");
        assert!((c[0] - 1.8125).abs() < 2e-3, "{c:?}");
        assert!((f.sigma.ci95.1 - f.sigma.value) / f.sigma.std_error - t_quantile(0.975, 8.0) < 1e-9);
        assert!(f.n_star.is_none(), "kappa = 0: no peak");
        assert!(f.warnings.is_empty(), "{:?}", f.warnings);
    }

    #[test]
    fn a_synthetic_curve_is_recovered_with_its_peak() {
        let truth = (0.02, 0.0005, 1000.0);
        let ns = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 48.0, 64.0];
        let pts: Vec<Point> = ns.iter().map(|&n| Point { n, x: model(truth.0, truth.1, truth.2, n) }).collect();
        let f = fit(&pts).unwrap();
        assert!((f.sigma.value - 0.02).abs() < 1e-6 && (f.kappa.value - 0.0005).abs() < 1e-8, "{f:?}");
        let n_star = ((1.0 - 0.02) / 0.0005f64).sqrt();
        assert!((f.n_star.unwrap() - n_star).abs() < 1e-3);
        let (x, warn) = f.predict(200.0);
        assert!((x - model(0.02, 0.0005, 1000.0, 200.0)).abs() < 1e-3 && warn.is_some());
        assert!(f.amdahl_ceiling.unwrap() > f.x_at_n_star.unwrap());
    }

    #[test]
    fn few_points_and_superlinear_data_are_warned_about() {
        let f = fit(&points(&[1.0, 2.0, 4.0, 8.0], &[100.0, 250.0, 520.0, 1000.0])).unwrap();
        assert!(f.warnings.iter().any(|w| w.contains("only 4 points")), "{:?}", f.warnings);
        assert!(f.warnings.iter().any(|w| w.contains("superlinear")), "{:?}", f.warnings);
        assert!(fit(&points(&[1.0, 2.0], &[1.0, 2.0])).is_err());
        assert!(fit(&points(&[0.0, 2.0, 3.0], &[1.0, 2.0, 3.0])).is_err());
    }

    #[test]
    fn a_throughput_that_only_falls_has_no_peak() {
        // X halves as N doubles: the law puts N* near 0, where X(N*) is 0/0
        let f = fit(&points(&[10.0, 20.0, 40.0, 80.0], &[1000.0, 500.0, 250.0, 125.0])).unwrap();
        assert!(f.peak_below_data && f.n_star.is_none() && f.x_at_n_star.is_none(), "{f:?}");
        assert!(f.warnings.iter().any(|w| w.contains("only falls")), "{:?}", f.warnings);
        // a peak inside the data is still one
        let f = fit(&points(&[1.0, 2.0, 4.0, 8.0, 16.0], &[100.0, 180.0, 250.0, 240.0, 150.0])).unwrap();
        assert!(!f.peak_below_data && f.n_star.is_some_and(|n| (1.0..16.0).contains(&n)), "{f:?}");
    }
}
