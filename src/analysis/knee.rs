//! The knee of a latency–throughput curve: where adding load stops paying. Two
//! readings: the point of maximum power (throughput / latency, Kleinrock), and the first
//! point where latency exceeds twice its low-load value.

use serde::Serialize;

/// One point of the curve: throughput X and latency R (any units, the same throughout).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CurvePoint {
    pub x: f64,
    pub r: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Knee {
    /// Index of the point of maximum X/R.
    pub max_power: usize,
    /// Index of the first point whose latency is more than twice the first point's.
    pub latency_doubled: Option<usize>,
}

/// The knee of `curve`, in the order measured (lowest load first); None if empty.
pub fn find(curve: &[CurvePoint]) -> Option<Knee> {
    let base = curve.first()?.r;
    let max_power = curve
        .iter()
        .enumerate()
        .filter(|(_, p)| p.r > 0.0)
        .max_by(|a, b| (a.1.x / a.1.r).total_cmp(&(b.1.x / b.1.r)))
        .map(|(i, _)| i)?;
    let latency_doubled = curve.iter().position(|p| p.r > 2.0 * base);
    Some(Knee { max_power, latency_doubled })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quickstart_shape() {
        // depth 1, 4, 16, 64: IOPS 35k, 84k, 88k, 127k at 28, 47, 182, 501 µs
        let c = [(35_000.0, 28.0), (84_000.0, 47.0), (88_000.0, 182.0), (127_000.0, 501.0)]
            .map(|(x, r)| CurvePoint { x, r });
        let k = find(&c).unwrap();
        assert_eq!(k.max_power, 1, "84k at 47 µs is the best X/R");
        assert_eq!(k.latency_doubled, Some(2));
        assert!(find(&[]).is_none());
    }
}
