//! Random offsets without replacement (`randommap`, fio's random map): a pass visits
//! the working set's blocks in a random order, each exactly once.
//!
//! fio keeps a bitmap of the blocks touched; 2 TB of 4 KiB blocks is 500 million bits
//! (64 MiB) per job, and finding an untouched block grows slow as the map fills. Here
//! the order is a keyed permutation computed from the block's position in the pass
//! instead: a few words of state whatever the size, and the same few ns per IO from the
//! first block to the last.

/// A bijection of `[0, n)`: a balanced Feistel network over the smallest even number of
/// bits that holds `n`, cycle-walked back into range (Black and Rogaway, "Ciphers with
/// arbitrary finite domains", 2002).
/// A Feistel network permutes its domain whatever its round function, so the rounds
/// need only mix well, not be invertible.
/// The domain is under 4n, so a position walks fewer than 4 steps on average.
#[derive(Debug, Clone)]
pub struct Permutation {
    n: u64,
    half_bits: u32,
    half_mask: u64,
    keys: [u64; ROUNDS],
}

/// Enough rounds that neighbouring positions land far apart (three make a Feistel
/// network a pseudo-random permutation; a fourth mixes the last half too).
const ROUNDS: usize = 4;

impl Permutation {
    /// A permutation of `[0, n)` (n at least 1) chosen by `seed`.
    pub fn new(n: u64, seed: u64) -> Permutation {
        let n = n.max(1);
        let bits = (64 - (n - 1).leading_zeros()).max(2);
        let half_bits = bits.div_ceil(2);
        let mut s = seed;
        let keys = std::array::from_fn(|_| {
            s = splitmix(s);
            s
        });
        Permutation { n, half_bits, half_mask: (1u64 << half_bits) - 1, keys }
    }

    /// The position `i` (below `n`) is sent to, below `n` too.
    #[inline]
    pub fn at(&self, i: u64) -> u64 {
        let mut x = self.feistel(i);
        // an element outside [0, n) is walked on along its cycle, which leads back into
        // the range: the walk keeps the map a bijection of [0, n)
        while x >= self.n {
            x = self.feistel(x);
        }
        x
    }

    #[inline]
    fn feistel(&self, x: u64) -> u64 {
        let (mut left, mut right) = (x >> self.half_bits, x & self.half_mask);
        for key in self.keys {
            let mixed = splitmix(right ^ key) & self.half_mask;
            (left, right) = (right, left ^ mixed);
        }
        (left << self.half_bits) | right
    }
}

/// SplitMix64's finalizer: every input bit moves every output bit.
#[inline]
fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One worker's passes over `n` blocks: each pass every block once, in a new order;
/// a workload that runs for a time starts the next pass where one ends, as fio clears
/// its map.
#[derive(Debug, Clone)]
pub struct Passes {
    order: Permutation,
    seed: u64,
    pass: u64,
    next: u64,
}

impl Passes {
    pub fn new(n: u64, seed: u64) -> Passes {
        Passes { order: Permutation::new(n, seed), seed, pass: 0, next: 0 }
    }

    /// The next block of the pass.
    #[inline]
    pub fn next_block(&mut self) -> u64 {
        if self.next == self.order.n {
            self.pass += 1;
            self.next = 0;
            self.order = Permutation::new(self.order.n, self.seed ^ splitmix(self.pass));
        }
        self.next += 1;
        self.order.at(self.next - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each block of `n` visited by one pass of `p`, counted.
    fn visits(n: u64, seed: u64) -> Vec<u32> {
        let mut p = Passes::new(n, seed);
        let mut seen = vec![0u32; n as usize];
        for _ in 0..n {
            seen[p.next_block() as usize] += 1;
        }
        seen
    }

    #[test]
    fn a_pass_visits_every_block_exactly_once_for_any_count() {
        for n in [1, 2, 3, 4, 5, 7, 8, 9, 100, 1000, 1023, 1024, 1025, 4097, 65_537, 100_003] {
            for seed in [0, 1, 0xdead_beef] {
                let seen = visits(n, seed);
                let wrong: Vec<(usize, u32)> = seen.iter().copied().enumerate().filter(|&(_, c)| c != 1).collect();
                assert!(
                    wrong.is_empty(),
                    "n {n} seed {seed}: blocks visited other than once: {:?}",
                    &wrong[..5.min(wrong.len())]
                );
            }
        }
    }

    #[test]
    fn the_next_pass_is_another_order_of_every_block() {
        let n = 1000;
        let mut p = Passes::new(n, 7);
        let first: Vec<u64> = (0..n).map(|_| p.next_block()).collect();
        let second: Vec<u64> = (0..n).map(|_| p.next_block()).collect();
        assert_ne!(first, second);
        let mut sorted = second.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..n).collect::<Vec<_>>());
    }

    #[test]
    fn the_order_is_scattered_not_sequential() {
        // a permutation close to the identity would be a sequential pass in disguise
        let n = 100_000;
        let mut p = Passes::new(n, 3);
        let order: Vec<u64> = (0..n).map(|_| p.next_block()).collect();
        let ascending = order.windows(2).filter(|w| w[1] == w[0] + 1).count();
        assert!(ascending < 100, "{ascending} of {n} steps go to the next block");
        // its first tenth lands all over the working set, not in one region
        let tenths = order[..(n / 10) as usize].iter().fold([0u32; 10], |mut t, b| {
            t[(b * 10 / n) as usize] += 1;
            t
        });
        assert!(tenths.iter().all(|&c| c > 800 && c < 1200), "{tenths:?}");
    }
}
