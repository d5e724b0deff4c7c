//! Do checkpoints stall commits? Each checkpoint of a database workload's server
//! against that workload's per-second transaction rate: the seconds while it ran (and
//! the one after, where its sync's effect lands) against the seconds before it. A
//! second is a dip when its rate is below the rate before by more than [`DIP`] and by
//! more than the noise of those seconds; a checkpoint with dips is a stall, said as
//! "TPS fell 62% for 14 s during the checkpoint at 143 s". And how much the rate
//! wanders second to second within a phase (its coefficient of variation), the field's
//! "TPM fluctuates wildly" as a number.

use serde::Serialize;

/// Seconds before a checkpoint its rate is judged against.
pub const BEFORE_S: i64 = 10;

/// Fewest seconds before a checkpoint for a verdict on it.
pub const MIN_BEFORE: usize = 3;

/// A second is a dip when its rate is this much (a fraction) below the rate before.
pub const DIP: f64 = 0.2;

/// A checkpoint's stretch on the run clock, in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Checkpoint {
    pub start_s: f64,
    pub end_s: f64,
}

/// What one checkpoint did to one workload's rate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Effect {
    pub at_s: f64,
    pub took_s: f64,
    /// The median rate of the seconds before it (per second).
    pub before: f64,
    /// The mean rate of the seconds it overlapped.
    pub during: f64,
    /// Its dip, if its rate fell.
    pub stall: Option<Stall>,
}

/// A dip in the rate during a checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stall {
    /// How far the dipped seconds' mean fell below the rate before, in percent.
    pub drop_percent: f64,
    /// How many seconds dipped.
    pub seconds: u32,
    /// The first of them.
    pub from_s: i64,
}

/// The effect of checkpoint `c` on the per-second `rate` ((second, rate), in order,
/// the workload's measured seconds only): None without [`MIN_BEFORE`] measured seconds
/// before it, or with none during it.
pub fn effect(rate: &[(i64, f64)], c: Checkpoint) -> Option<Effect> {
    let first = c.start_s.floor() as i64;
    let mut before: Vec<f64> =
        rate.iter().filter(|(t, _)| (first - BEFORE_S..first).contains(t)).map(|r| r.1).collect();
    if before.len() < MIN_BEFORE {
        return None;
    }
    let during: Vec<(i64, f64)> =
        rate.iter().filter(|(t, _)| *t >= first && (*t as f64) < c.end_s.ceil() + 1.0).copied().collect();
    if during.is_empty() {
        return None;
    }
    let base = median(&mut before);
    let spread = 1.4826 * median(&mut before.iter().map(|v| (v - base).abs()).collect::<Vec<_>>());
    // below by the dip and by the noise of the seconds before
    let under = (base * (1.0 - DIP)).min(base - 3.0 * spread);
    let dipped: Vec<&(i64, f64)> = during.iter().filter(|(_, v)| *v < under).collect();
    let stall = (!dipped.is_empty() && base > 0.0).then(|| Stall {
        drop_percent: 100.0 * (1.0 - dipped.iter().map(|d| d.1).sum::<f64>() / dipped.len() as f64 / base),
        seconds: dipped.len() as u32,
        from_s: dipped[0].0,
    });
    Some(Effect {
        at_s: c.start_s,
        took_s: c.end_s - c.start_s,
        before: base,
        during: during.iter().map(|d| d.1).sum::<f64>() / during.len() as f64,
        stall,
    })
}

/// The coefficient of variation of per-second rates (standard deviation over mean):
/// None under two seconds or with no rate at all.
pub fn variation(rates: &[f64]) -> Option<f64> {
    let n = rates.len();
    let mean = rates.iter().sum::<f64>() / n as f64;
    if n < 2 || mean <= 0.0 {
        return None;
    }
    let var = rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    Some(var.sqrt() / mean)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 100 ± 3 transactions a second for `n` seconds from 0.
    fn steady(n: i64) -> Vec<(i64, f64)> {
        (0..n).map(|t| (t, 100.0 + [0.0, 3.0, -2.0, 1.0, -3.0][t as usize % 5])).collect()
    }

    #[test]
    fn a_dip_during_a_checkpoint_is_found_with_its_depth_and_length() {
        let mut rate = steady(40);
        // the checkpoint runs from 20.4 s to 25.6 s; seconds 23 to 26 fall to ~38
        for (t, v) in rate.iter_mut().filter(|(t, _)| (23..=26).contains(t)) {
            *v = 36.0 + (*t % 2) as f64 * 4.0;
        }
        let e = effect(&rate, Checkpoint { start_s: 20.4, end_s: 25.6 }).unwrap();
        let s = e.stall.clone().unwrap();
        assert_eq!((s.seconds, s.from_s), (4, 23));
        // the seconds before have a median of 100; the dipped ones average 38
        assert_eq!(e.before, 100.0);
        assert!((s.drop_percent - 62.0).abs() < 1e-9, "{s:?}");
        assert!((e.took_s - 5.2).abs() < 1e-9);
    }

    #[test]
    fn no_dip_no_stall_and_noise_is_no_dip() {
        let rate = steady(40);
        let e = effect(&rate, Checkpoint { start_s: 20.0, end_s: 27.0 }).unwrap();
        assert_eq!(e.stall, None);
        // a rate that wanders by ±30% a second: a second 25% down is within its noise
        let wild: Vec<(i64, f64)> = (0..40).map(|t| (t, if t % 2 == 0 { 130.0 } else { 70.0 })).collect();
        let mut dipped = wild.clone();
        dipped[22].1 = 75.0;
        assert_eq!(effect(&dipped, Checkpoint { start_s: 21.0, end_s: 23.0 }).unwrap().stall, None);
    }

    #[test]
    fn a_checkpoint_too_early_or_outside_the_seconds_has_no_verdict() {
        let rate = steady(40);
        assert_eq!(effect(&rate, Checkpoint { start_s: 1.5, end_s: 4.0 }), None);
        assert_eq!(effect(&rate, Checkpoint { start_s: 60.0, end_s: 64.0 }), None);
    }

    #[test]
    fn variation_is_the_spread_over_the_mean() {
        assert_eq!(variation(&[100.0; 10]), Some(0.0));
        // 50 and 150: a standard deviation of 70.7 about a mean of 100
        let v = variation(&[50.0, 150.0]).unwrap();
        assert!((v - 0.5f64.sqrt()).abs() < 1e-12, "{v}");
        assert_eq!((variation(&[5.0]), variation(&[0.0, 0.0])), (None, None));
    }
}
