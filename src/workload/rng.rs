//! The random numbers every generator of a worker draws from.

/// wyrand: a tiny, fast, statistically good generator. Seeds are derived from the
/// workload name and worker index, so a run repeats its offsets (fio's `randrepeat`).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x2d35_8dcc_aa6c_78a5)
    }

    /// A seed from text and numbers (FNV-1a), stable across runs and platforms.
    pub fn seed_from(text: &str, a: u64, b: u64) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in text.bytes().chain(a.to_le_bytes()).chain(b.to_le_bytes()) {
            h = (h ^ byte as u64).wrapping_mul(0x0100_0000_01b3);
        }
        h
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0xa076_1d64_78bd_642f);
        let t = (self.0 as u128).wrapping_mul((self.0 ^ 0xe703_7ed1_a0b4_28db) as u128);
        ((t >> 64) ^ t) as u64
    }

    /// Uniform in `[0, n)` (Lemire's multiply-shift; bias below 2^-64 * n).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in `[0, 1)` with 53 random bits.
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Standard normal (Box-Muller; one of the pair is discarded, which keeps the
    /// generator stateless at a cost of ~20 ns).
    pub fn gaussian(&mut self) -> f64 {
        let u = 1.0 - self.unit(); // (0, 1]: ln is finite
        let v = self.unit();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// Fills `buf` with random bytes, a word at a time (IO buffers are aligned).
    pub fn fill(&mut self, buf: &mut [u8]) {
        // SAFETY: any bit pattern is a valid u64.
        let (head, words, tail) = unsafe { buf.align_to_mut::<u64>() };
        for w in words {
            *w = self.next_u64();
        }
        for b in head.iter_mut().chain(tail) {
            *b = self.next_u64() as u8;
        }
    }
}
