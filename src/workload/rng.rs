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

    /// Fills `buf` with random bytes. Every write fills its whole block, so at large
    /// block sizes this is the generator's main cost: see [`fill_words`].
    pub fn fill(&mut self, buf: &mut [u8]) {
        // SAFETY: any bit pattern is a valid u64.
        let (head, words, tail) = unsafe { buf.align_to_mut::<u64>() };
        fill_words(self, words);
        for b in head.iter_mut().chain(tail) {
            *b = self.next_u64() as u8;
        }
    }
}

/// Independent generators filled side by side, so the compiler can keep them in one
/// vector register each step.
const LANES: usize = 8;

/// Fills `words` from [`LANES`] xorshift128+ generators seeded from `rng`, word `i`
/// from lane `i % LANES`.
///
/// Why not `rng` itself: wyrand's 128-bit multiply does not vectorize and fills about
/// 7 GB/s per core, so 1 MiB writes at 2 GB/s took a third of a core and kept the
/// worker from resubmitting (bench/README.md, "Filling write buffers"). The lanes
/// fill at memory speed with AVX2 and about twice wyrand's speed without it. The
/// output is the same on every CPU (the tests check it), so a dedupe pool's blocks are
/// identical across hosts. xorshift128+ is weak only in its lowest bits over long
/// streams, which no compressor or dedupe engine can exploit. No crate offers a
/// vectorized generator that is deterministic across CPUs; hence this code.
fn fill_words(rng: &mut Rng, words: &mut [u64]) {
    let mut lanes = [[0u64; LANES]; 2];
    for s in lanes.iter_mut().flatten() {
        *s = rng.next_u64() | 1; // an all-zero state would stay zero
    }
    let (chunks, rest) = words.split_at_mut(words.len() / LANES * LANES);
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        unsafe { xorshift_lanes_avx2(&mut lanes, chunks) };
    } else {
        xorshift_lanes(&mut lanes, chunks);
    }
    #[cfg(not(target_arch = "x86_64"))]
    xorshift_lanes(&mut lanes, chunks);
    for w in rest {
        *w = rng.next_u64();
    }
}

/// The lanes' loop, compiled for AVX2 (four lanes per instruction).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn xorshift_lanes_avx2(lanes: &mut [[u64; LANES]; 2], words: &mut [u64]) {
    xorshift_lanes(lanes, words)
}

/// xorshift128+ (Vigna) in each lane; `words.len()` is a multiple of [`LANES`].
#[inline(always)]
fn xorshift_lanes(lanes: &mut [[u64; LANES]; 2], words: &mut [u64]) {
    let [a, b] = lanes;
    for chunk in words.chunks_exact_mut(LANES) {
        for i in 0..LANES {
            let (mut s1, s0) = (a[i], b[i]);
            a[i] = s0;
            s1 ^= s1 << 23;
            b[i] = s1 ^ s0 ^ (s1 >> 17) ^ (s0 >> 26);
            chunk[i] = b[i].wrapping_add(s0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lane `lane` of `fill_words` on its own: plain xorshift128+ from the lane's seeds.
    fn one_lane(seed: u64, lane: usize, n: usize) -> Vec<u64> {
        let mut rng = Rng::new(seed);
        let seeds: Vec<u64> = (0..2 * LANES).map(|_| rng.next_u64() | 1).collect();
        let (mut s0, mut s1) = (seeds[lane], seeds[LANES + lane]);
        (0..n)
            .map(|_| {
                let (mut x, y) = (s0, s1);
                s0 = y;
                x ^= x << 23;
                s1 = x ^ y ^ (x >> 17) ^ (y >> 26);
                s1.wrapping_add(y)
            })
            .collect()
    }

    #[test]
    fn a_fill_is_its_lanes_interleaved_then_wyrand_for_the_rest() {
        let mut words = vec![0u64; 8 * 100 + 5];
        fill_words(&mut Rng::new(7), &mut words);
        for lane in 0..LANES {
            let got: Vec<u64> = words[..800].iter().skip(lane).step_by(LANES).copied().collect();
            assert_eq!(got, one_lane(7, lane, 100), "lane {lane}");
        }
        let mut rng = Rng::new(7);
        (0..2 * LANES).for_each(|_| _ = rng.next_u64());
        let rest: Vec<u64> = (0..5).map(|_| rng.next_u64()).collect();
        assert_eq!(&words[800..], &rest[..]);
    }

    #[test]
    fn every_cpu_writes_the_same_bytes() {
        // what the machine runs (AVX2 where it has it) against the portable loop
        let mut fast = vec![0u8; 1 << 20];
        Rng::new(3).fill(&mut fast);
        let mut portable = vec![0u64; 1 << 17];
        let mut lanes = [[0u64; LANES]; 2];
        let mut rng = Rng::new(3);
        lanes.iter_mut().flatten().for_each(|s| *s = rng.next_u64() | 1);
        xorshift_lanes(&mut lanes, &mut portable);
        let portable: Vec<u8> = portable.iter().flat_map(|w| w.to_ne_bytes()).collect();
        assert!(fast == portable, "the vector and portable fills differ");
        let mut other = vec![0u8; 1 << 20];
        Rng::new(4).fill(&mut other);
        let same = fast.iter().zip(&other).filter(|(a, b)| a == b).count();
        assert!(same < (1 << 20) / 128, "another seed shares {same} of 1 MiB bytes");
    }
}
