//! Where random IOs land: the access distributions storage people model (fio's
//! `random_distribution`). Each picks a unit (an aligned block) in `[0, units)`; the
//! hot units of the skewed distributions are the *first* ones of the working set, so a
//! hot spot is one contiguous region, as a tiering array or a cache with large pages
//! sees it (fio scatters ranks by hashing; fathom keeps them where the docs say).

use super::rng::Rng;

pub use crate::scenario::pattern::Distribution;

/// A distribution made ready to draw units from a working set of `units` units.
#[derive(Debug, Clone)]
pub enum Sampler {
    Uniform,
    Zipf(Zipf),
    /// The exponent k with u^k landing a share H in the first (1-H).
    Pareto(f64),
    /// Standard deviation in units.
    Normal(f64),
    /// Cumulative IO share (0..1), first unit and unit count of each zone.
    Zoned(Vec<(f64, u64, u64)>),
}

impl Sampler {
    pub fn new(d: &Distribution, units: u64) -> Sampler {
        match d {
            Distribution::Uniform => Sampler::Uniform,
            Distribution::Zipf(theta) => Sampler::Zipf(Zipf::new(units, *theta)),
            Distribution::Pareto(h) => Sampler::Pareto((1.0 - h).ln() / h.ln()),
            Distribution::Normal(pct) => Sampler::Normal(units as f64 * pct / 100.0),
            Distribution::Zoned(zones) => {
                let mut cum = 0.0;
                let mut first = 0u64;
                let mut out = Vec::new();
                for (i, (io, space)) in zones.iter().enumerate() {
                    cum += io / 100.0;
                    let end = if i + 1 == zones.len() {
                        units
                    } else {
                        (first + (units as f64 * space / 100.0).round() as u64).min(units)
                    };
                    // a zone too small to round to a unit still gets one
                    let start = first.min(units - 1);
                    out.push((cum, start, end.saturating_sub(start).max(1)));
                    first = end;
                }
                Sampler::Zoned(out)
            }
        }
    }

    /// A unit in `[0, units)`.
    #[inline]
    pub fn next(&mut self, rng: &mut Rng, units: u64) -> u64 {
        match self {
            Sampler::Uniform => rng.below(units),
            Sampler::Zipf(z) => z.sample(rng) - 1,
            Sampler::Pareto(k) => ((units as f64 * rng.unit().powf(*k)) as u64).min(units - 1),
            Sampler::Normal(sd) => {
                let x = units as f64 / 2.0 + *sd * rng.gaussian();
                (x.floor() as i64).rem_euclid(units as i64) as u64
            }
            Sampler::Zoned(zones) => {
                let u = rng.unit();
                let &(_, first, count) = zones.iter().find(|z| u < z.0).unwrap_or(&zones[zones.len() - 1]);
                first + rng.below(count)
            }
        }
    }
}

/// Zipf over ranks 1..=n by rejection-inversion (Hörmann and Derflinger 1996, as in
/// Apache Commons RNG): O(1) per draw with no table, so a multi-terabyte working set of
/// 4 KiB units costs nothing to set up (fio precomputes a zeta sum instead).
#[derive(Debug, Clone)]
pub struct Zipf {
    n: f64,
    exponent: f64,
    h_integral_x1: f64,
    h_integral_n: f64,
    s: f64,
}

impl Zipf {
    pub fn new(n: u64, exponent: f64) -> Zipf {
        let mut z = Zipf { n: n as f64, exponent, h_integral_x1: 0.0, h_integral_n: 0.0, s: 0.0 };
        z.h_integral_x1 = z.h_integral(1.5) - 1.0;
        z.h_integral_n = z.h_integral(n as f64 + 0.5);
        z.s = 2.0 - z.h_integral_inverse(z.h_integral(2.5) - z.h(2.0));
        z
    }

    /// A rank in `1..=n`.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_integral_n + rng.unit() * (self.h_integral_x1 - self.h_integral_n);
            let x = self.h_integral_inverse(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.s || u >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }

    fn h(&self, x: f64) -> f64 {
        (-self.exponent * x.ln()).exp()
    }

    fn h_integral(&self, x: f64) -> f64 {
        let log_x = x.ln();
        helper2((1.0 - self.exponent) * log_x) * log_x
    }

    fn h_integral_inverse(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.exponent)).max(-1.0);
        (helper1(t) * x).exp()
    }
}

/// ln(1+x)/x, accurate near 0.
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 { x.ln_1p() / x } else { 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x)) }
}

/// (e^x-1)/x, accurate near 0.
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 { x.exp_m1() / x } else { 1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Share of `draws` draws that land in the first `fraction` of `units`.
    fn share(d: &str, units: u64, fraction: f64, draws: u32) -> f64 {
        let mut s = Sampler::new(&d.parse().unwrap(), units);
        let mut rng = Rng::new(7);
        let cut = (units as f64 * fraction) as u64;
        let hits = (0..draws).filter(|_| s.next(&mut rng, units) < cut).count();
        hits as f64 / draws as f64
    }

    #[test]
    fn pareto_sends_its_share_to_the_hot_set() {
        // 80/20, and self-similar: 64% of IOs on the hottest 4%
        assert!((share("pareto:0.8", 1 << 20, 0.2, 200_000) - 0.8).abs() < 0.01);
        assert!((share("pareto:0.8", 1 << 20, 0.04, 200_000) - 0.64).abs() < 0.01);
        assert!((share("pareto:0.9", 1 << 20, 0.1, 200_000) - 0.9).abs() < 0.01);
    }

    #[test]
    fn zoned_zones_receive_their_share() {
        let d = "zoned:60/10:30/20:10/70";
        assert!((share(d, 100_000, 0.1, 200_000) - 0.6).abs() < 0.01);
        assert!((share(d, 100_000, 0.3, 200_000) - 0.9).abs() < 0.01);
        // and nothing strays outside the working set
        let mut s = Sampler::new(&d.parse().unwrap(), 1000);
        let mut rng = Rng::new(1);
        assert!((0..100_000).all(|_| s.next(&mut rng, 1000) < 1000));
    }

    #[test]
    fn zipf_matches_its_probabilities() {
        // P(rank 1) = 1 / H(n, theta); with n = 1000, theta = 1.2: H = 4.06... (computed here)
        let (n, theta) = (1000u64, 1.2);
        let harmonic: f64 = (1..=n).map(|k| 1.0 / (k as f64).powf(theta)).sum();
        let z = Zipf::new(n, theta);
        let mut rng = Rng::new(3);
        let draws = 400_000;
        let mut counts = vec![0u32; n as usize + 1];
        for _ in 0..draws {
            counts[z.sample(&mut rng) as usize] += 1;
        }
        assert_eq!(counts[0], 0, "ranks start at 1");
        for k in [1usize, 2, 10] {
            let expected = 1.0 / (k as f64).powf(theta) / harmonic;
            let got = counts[k] as f64 / draws as f64;
            assert!((got - expected).abs() < 0.005, "rank {k}: {got} vs {expected}");
        }
        // the top 10% of ranks
        let top: f64 = (1..=100).map(|k| 1.0 / (k as f64).powf(theta)).sum::<f64>() / harmonic;
        let got = counts[1..=100].iter().sum::<u32>() as f64 / draws as f64;
        assert!((got - top).abs() < 0.005, "{got} vs {top}");
    }

    #[test]
    fn zipf_below_one_and_huge_sets() {
        let z = Zipf::new(1 << 40, 0.8);
        let mut rng = Rng::new(5);
        assert!((0..10_000).all(|_| (1..=1u64 << 40).contains(&z.sample(&mut rng))));
        assert!(share("zipf:0.8", 10_000, 0.1, 100_000) > 0.3, "skewed towards the first units");
    }

    #[test]
    fn normal_centres_on_the_middle() {
        // +-1 standard deviation (10% of the space each side) holds 68%
        let mut s = Sampler::new(&"normal:10".parse().unwrap(), 100_000);
        let mut rng = Rng::new(9);
        let inside = (0..100_000).filter(|_| (40_000..60_000).contains(&s.next(&mut rng, 100_000))).count();
        assert!((inside as f64 / 100_000.0 - 0.6827).abs() < 0.01, "{inside}");
    }
}
