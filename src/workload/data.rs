//! What written blocks contain. Storage reduces data (zero suppression, compression,
//! dedupe), so the bytes decide what a write test measures: fathom writes random data
//! by default, new for every write, and can ask for exactly compressible or duplicate
//! data, or zeros. With `crc`, each block carries a header with its own checksum so a
//! later read can tell good data from corrupt or misplaced data without other state.

use super::rng::Rng;

pub use crate::scenario::pattern::{Content, DataSpec};

/// The unit compressibility is laid out in: storage compresses blocks of 4-32 KiB and
/// gzip looks back 32 KiB, so every 4 KiB holds the asked-for share.
const CHUNK: usize = 4096;

/// Distinct contents that duplicate blocks are drawn from.
const DEDUPE_POOL: u64 = 64;

/// The compressible filler: printable, non-zero, repeating every 64 bytes.
const PATTERN: &[u8; 64] = b"fathom compressible data: not zeros, which storages suppress.  \n";

/// Generates the content of one worker's writes.
#[derive(Debug, Clone)]
pub struct DataGen {
    spec: DataSpec,
    rng: Rng,
    /// Seeds of the duplicate pool's contents: the same for every worker, so blocks
    /// repeat across workers and workloads as they would across a storage system.
    pool_seed: u64,
}

impl DataGen {
    pub fn new(spec: &DataSpec, seed: u64) -> DataGen {
        DataGen { spec: *spec, rng: Rng::new(seed), pool_seed: Rng::seed_from("dedupe-pool", 0, 0) }
    }

    /// Fills `buf` with the next block to write at `offset`.
    pub fn fill(&mut self, buf: &mut [u8], offset: u64) {
        let content_seed = if self.spec.dedupe_percent > 0 && self.rng.below(100) < self.spec.dedupe_percent as u64 {
            // the same content as every other block drawn from this pool entry
            self.pool_seed.wrapping_add(self.rng.below(DEDUPE_POOL))
        } else {
            self.rng.next_u64()
        };
        let mut rng = Rng::new(content_seed);
        match self.spec.content {
            Content::Random => rng.fill(buf),
            Content::Zero => buf.fill(0),
            Content::Compressible(percent) => {
                for chunk in buf.chunks_mut(CHUNK) {
                    let pattern_len = chunk.len() * percent as usize / 100;
                    let (pattern, random) = chunk.split_at_mut(pattern_len);
                    for (i, b) in pattern.iter_mut().enumerate() {
                        *b = PATTERN[i % PATTERN.len()];
                    }
                    rng.fill(random);
                }
            }
        }
        if self.spec.crc {
            stamp(buf, offset, content_seed);
        }
    }
}

/// Layout of the integrity header at the start of a block, little-endian:
/// magic (4) | crc32c of bytes 8.. (4) | offset (8) | length (4) | reserved (4) | seed (8).
pub const HEADER_LEN: usize = 32;
const MAGIC: u32 = u32::from_le_bytes(*b"fthm");

/// Writes the header, over the first bytes of the content.
fn stamp(buf: &mut [u8], offset: u64, seed: u64) {
    if buf.len() < HEADER_LEN {
        return;
    }
    buf[0..4].copy_from_slice(&MAGIC.to_le_bytes());
    buf[8..16].copy_from_slice(&offset.to_le_bytes());
    let len = buf.len() as u32;
    buf[16..20].copy_from_slice(&len.to_le_bytes());
    buf[20..24].fill(0);
    buf[24..32].copy_from_slice(&seed.to_le_bytes());
    let crc = crc32c::crc32c(&buf[8..]);
    buf[4..8].copy_from_slice(&crc.to_le_bytes());
}

/// What a read block says about itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verify {
    /// Header present, offset and checksum right.
    Good,
    /// No header: never written by a `crc` workload (layout data, or another tool).
    NoHeader,
    /// Written by a write of another size (with `bssplit`): cannot be checked.
    OtherSize,
    /// A good block that belongs at another offset: a misdirected write or read.
    Misplaced,
    /// The checksum does not match: the data changed after it was written.
    Corrupt,
}

impl Verify {
    /// True for the outcomes that mean the storage returned wrong data.
    pub fn is_failure(self) -> bool {
        matches!(self, Verify::Misplaced | Verify::Corrupt)
    }
}

/// Checks a block read at `offset`.
pub fn verify(buf: &[u8], offset: u64) -> Verify {
    let word = |at: usize| u32::from_le_bytes(buf[at..at + 4].try_into().expect("4 bytes"));
    if buf.len() < HEADER_LEN || word(0) != MAGIC {
        return Verify::NoHeader;
    }
    if word(16) as usize != buf.len() {
        return Verify::OtherSize;
    }
    if crc32c::crc32c(&buf[8..]) != word(4) {
        return Verify::Corrupt;
    }
    let written_at = u64::from_le_bytes(buf[8..16].try_into().expect("8 bytes"));
    if written_at != offset { Verify::Misplaced } else { Verify::Good }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::io::Write;

    fn spec(content: Content, dedupe_percent: u8, crc: bool) -> DataSpec {
        DataSpec { content, dedupe_percent, crc }
    }

    /// `blocks` blocks of `bs` bytes as one worker writes them.
    fn written(spec: &DataSpec, bs: usize, blocks: usize) -> Vec<u8> {
        let mut g = DataGen::new(spec, 42);
        let mut out = vec![0u8; bs * blocks];
        for (i, block) in out.chunks_mut(bs).enumerate() {
            g.fill(block, (i * bs) as u64);
        }
        out
    }

    fn gzip_saving(data: &[u8]) -> f64 {
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(data).unwrap();
        let compressed = z.finish().unwrap().len();
        100.0 * (1.0 - compressed as f64 / data.len() as f64)
    }

    #[test]
    fn compressibility_is_what_was_asked_and_not_zeros() {
        for bs in [4096, 65536] {
            for percent in [0u8, 25, 50, 75, 90] {
                let data = written(&spec(Content::Compressible(percent), 0, false), bs, (4 << 20) / bs);
                let saving = gzip_saving(&data);
                assert!((saving - percent as f64).abs() <= 5.0, "bs {bs}, asked {percent}%: saved {saving:.1}%");
                let zeros = data.iter().filter(|&&b| b == 0).count() as f64 / data.len() as f64;
                assert!(zeros < 0.01, "bs {bs}, {percent}%: {:.2}% zero bytes", zeros * 100.0);
            }
        }
        for bs in [4096, 1 << 20] {
            let random = written(&DataSpec::default(), bs, (4 << 20) / bs);
            assert!(gzip_saving(&random) < 1.0, "bs {bs}: random data does not compress");
        }
    }

    #[test]
    fn dedupe_repeats_the_asked_share_of_blocks() {
        for percent in [0u8, 30, 70] {
            let data = written(&spec(Content::Random, percent, false), 4096, 10_000);
            let mut seen = HashSet::new();
            let duplicates = data.chunks(4096).filter(|b| !seen.insert(b.to_vec())).count();
            let share = duplicates as f64 / 100.0;
            assert!((share - percent as f64).abs() <= 3.0, "asked {percent}%: {share:.1}% duplicates");
            if percent == 0 {
                assert_eq!(duplicates, 0);
            }
        }
    }

    #[test]
    fn random_blocks_never_repeat_and_zero_is_zero() {
        let data = written(&DataSpec::default(), 4096, 20_000);
        let unique: HashSet<&[u8]> = data.chunks(4096).collect();
        assert_eq!(unique.len(), 20_000);
        let zero = written(&spec(Content::Zero, 0, false), 4096, 16);
        assert!(zero.iter().all(|&b| b == 0));
    }

    #[test]
    fn crc_headers_verify_and_catch_corruption_and_misplacement() {
        let mut block = vec![0u8; 8192];
        DataGen::new(&spec(Content::Compressible(50), 0, true), 1).fill(&mut block, 8192 * 7);
        assert_eq!(verify(&block, 8192 * 7), Verify::Good);
        assert_eq!(verify(&block, 8192 * 8), Verify::Misplaced);
        assert_eq!(verify(&block[..4096], 8192 * 7), Verify::OtherSize);
        for bit in [64 * 8, 40 * 8 + 3, 8191 * 8 + 7, 9 * 8] {
            let mut bad = block.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            assert_eq!(verify(&bad, 8192 * 7), Verify::Corrupt, "flipped bit {bit}");
        }
        let layout = written(&DataSpec::default(), 4096, 1);
        assert_eq!(verify(&layout, 0), Verify::NoHeader, "data without a header is not corruption");
        assert!(!Verify::NoHeader.is_failure() && Verify::Corrupt.is_failure());
    }
}
