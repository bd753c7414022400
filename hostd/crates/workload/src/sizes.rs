//! Seeded file-size generator: the same seed gives the same sizes, so a run can
//! be repeated exactly. ChaCha8 is portable across platforms and versions.

use crate::profile::ALIGN;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Draws file sizes uniformly from `[min, max]`, rounded down to 4 KiB.
pub struct SizeGenerator {
    rng: ChaCha8Rng,
    min: u64,
    max: u64,
}

impl SizeGenerator {
    /// A generator for one target; `stream` separates targets sharing a seed.
    pub fn new(seed: u64, stream: u64, min: u64, max: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(stream);
        SizeGenerator { rng, min, max }
    }

    /// The next size (a multiple of 4 KiB, at least 4 KiB).
    pub fn next_size(&mut self) -> u64 {
        let raw = if self.min >= self.max {
            self.min
        } else {
            self.rng.gen_range(self.min..=self.max)
        };
        (raw / ALIGN * ALIGN).max(ALIGN)
    }

    /// `count` sizes.
    pub fn take(&mut self, count: u32) -> Vec<u64> {
        (0..count).map(|_| self.next_size()).collect()
    }

    /// Sizes until they add up to `total` (the last one is cut to fit).
    pub fn until_total(&mut self, total: u64) -> Vec<u64> {
        let total = total.div_ceil(ALIGN) * ALIGN;
        let mut out = Vec::new();
        let mut sum = 0;
        while sum < total {
            let s = self.next_size().min(total - sum);
            out.push(s);
            sum += s;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sizes_other_seed_other_sizes() {
        let a = SizeGenerator::new(7, 0, 2_000_000, 2_000_000_000).take(50);
        let b = SizeGenerator::new(7, 0, 2_000_000, 2_000_000_000).take(50);
        let c = SizeGenerator::new(8, 0, 2_000_000, 2_000_000_000).take(50);
        let d = SizeGenerator::new(7, 1, 2_000_000, 2_000_000_000).take(50);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
    }

    #[test]
    fn sizes_are_aligned_and_in_range() {
        let sizes = SizeGenerator::new(1, 0, 2_000_000, 2_000_000_000).take(2000);
        for s in &sizes {
            assert_eq!(s % ALIGN, 0);
            assert!(*s >= 2_000_000 - ALIGN && *s <= 2_000_000_000, "{s}");
        }
        // Uniform: the mean of 2000 draws is near the midpoint (±5 %).
        let mean = sizes.iter().sum::<u64>() as f64 / sizes.len() as f64;
        assert!((mean - 1.001e9).abs() < 0.05e9, "mean {mean}");
    }

    #[test]
    fn until_total_hits_the_total_rounded_to_4k() {
        let sizes = SizeGenerator::new(3, 0, 2_000_000, 2_000_000_000).until_total(100_000_000_000);
        assert_eq!(
            sizes.iter().sum::<u64>(),
            100_000_000_000u64.div_ceil(ALIGN) * ALIGN
        );
        assert!(sizes.len() > 50);
    }
}
