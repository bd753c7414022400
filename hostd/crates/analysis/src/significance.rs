//! Significance of a change, calibrated on the series itself: a block-permutation test of
//! "no change in mean anywhere in this stretch" (see docs/methodology.md, "Significance").
//!
//! Statistic: the largest two-sample gain max_k k(n−k)/n·(mean₁ − mean₂)² over every split
//! leaving at least `min_side` points on each side. Null distribution: the same statistic on
//! the stretch with its blocks of L consecutive points shuffled — L = 1 when the residuals
//! about the candidate levels are uncorrelated, else ⌈n^⅓⌉ (blocks keep the short-range
//! dependence of real throughput). Under "no change" the blocks are (close to) exchangeable,
//! so P(p ≤ α) ≤ α whatever the noise's distribution or size.

/// The test's level and permutation count, set beside every other detection setting.
pub use crate::settings::{ALPHA, PERMUTATIONS};
use rand::seq::SliceRandom;
use rand::SeedableRng;

/// Outcome of one test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TestResult {
    /// (1 + permuted statistics ≥ observed) / (1 + permutations run).
    pub p_value: f64,
    /// Permutations run.
    pub permutations: u32,
    /// The observed statistic.
    pub statistic: f64,
    /// Split position of the observed maximum.
    pub argmax: usize,
}

/// Largest k(n−k)/n·(mean₁ − mean₂)² over splits k in [min_side, n − min_side], and its k.
pub fn max_gain(x: &[f64], min_side: usize) -> (f64, usize) {
    let n = x.len();
    if n < 2 * min_side.max(1) {
        return (0.0, 0);
    }
    let total: f64 = x.iter().sum();
    let nf = n as f64;
    let mut left = 0.0;
    let mut best = (0.0, 0);
    for (k, v) in x.iter().enumerate().take(n - min_side) {
        left += v;
        let k1 = k + 1;
        if k1 < min_side {
            continue;
        }
        let a = k1 as f64;
        let d = left / a - (total - left) / (nf - a);
        let g = a * (nf - a) / nf * d * d;
        if g > best.0 {
            best = (g, k1);
        }
    }
    best
}

/// Block length for a stretch of n points with dependent noise: ⌈n^⅓⌉.
pub fn block_len(n: usize) -> usize {
    ((n as f64).cbrt().ceil() as usize).max(1)
}

/// Block length from the residuals about the candidate levels: 1 (a plain permutation,
/// exact for independent noise) unless their lag-1 autocorrelation exceeds 2/√n, then
/// ⌈n^⅓⌉ (blocks keep the dependence).
pub fn block_for(residuals: &[f64]) -> usize {
    let n = residuals.len();
    if n < 3 {
        return 1;
    }
    let ss: f64 = residuals.iter().map(|r| r * r).sum();
    let lag: f64 = residuals.windows(2).map(|w| w[0] * w[1]).sum();
    let rho = if ss > 0.0 { lag / ss } else { 0.0 };
    if rho > 2.0 / (n as f64).sqrt() {
        block_len(n)
    } else {
        1
    }
}

/// Largest local two-sample gain g/2·(mean of the g points before k − mean of the g after)²
/// (a moving-sum statistic: power against several changes, e.g. a drop and a recovery
/// that a single split cannot separate).
pub fn max_local_gain(x: &[f64], g: usize) -> f64 {
    let n = x.len();
    let g = g.max(1);
    if n < 2 * g {
        return 0.0;
    }
    let mut prefix = Vec::with_capacity(n + 1);
    prefix.push(0.0);
    for v in x {
        prefix.push(prefix[prefix.len() - 1] + v);
    }
    let gf = g as f64;
    (g..=n - g)
        .map(|k| {
            let d = (prefix[k] - prefix[k - g]) / gf - (prefix[k + g] - prefix[k]) / gf;
            gf / 2.0 * d * d
        })
        .fold(0.0, f64::max)
}

/// Whether `t`'s p-value is the smallest its permutations can give (none exceeded the
/// statistic): the data may carry a smaller one.
pub fn at_floor(t: &TestResult) -> bool {
    t.permutations > 0 && t.p_value <= 2.0 / f64::from(1 + t.permutations) * (1.0 + 1e-9)
}

/// Block-permutation test of "no change in mean" on `x` with blocks of `l` points;
/// deterministic for a given `seed`. Two statistics — the largest single-split gain
/// ([`max_gain`]) and the largest local gain over `min_side` points each side
/// ([`max_local_gain`]) — each get a permutation p-value; the test's p-value is
/// min(1, 2·min(p₁, p₂)) (Bonferroni: the level holds). Stops early once neither can fall
/// below α/2 any more (not significant).
pub fn test(x: &[f64], min_side: usize, l: usize, seed: u64) -> TestResult {
    test_with(x, min_side, l, seed, PERMUTATIONS)
}

/// [`test`] with `permutations` draws: its p-value is never below 2/(1 + permutations), so
/// a test that must reach a smaller level (one of k candidates, Bonferroni) needs more.
pub fn test_with(x: &[f64], min_side: usize, l: usize, seed: u64, permutations: u32) -> TestResult {
    let n = x.len();
    let (obs, argmax) = max_gain(x, min_side);
    if n < 2 * min_side.max(1) || obs <= 0.0 {
        return TestResult {
            p_value: 1.0,
            permutations: 0,
            statistic: obs,
            argmax,
        };
    }
    let obs2 = max_local_gain(x, min_side);
    let blocks: Vec<&[f64]> = x.chunks(l.max(1)).collect();
    let mut order: Vec<usize> = (0..blocks.len()).collect();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ (n as u64).wrapping_mul(0x9e37));
    let mut buf = Vec::with_capacity(n);
    let stop_after = (ALPHA / 2.0 * f64::from(permutations + 1)).ceil() as u32;
    let (mut e1, mut e2, mut done) = (0u32, 0u32, 0u32);
    while done < permutations && (e1 < stop_after || e2 < stop_after) {
        order.shuffle(&mut rng);
        buf.clear();
        for &k in &order {
            buf.extend_from_slice(blocks[k]);
        }
        done += 1;
        if max_gain(&buf, min_side).0 >= obs * (1.0 - 1e-12) {
            e1 += 1;
        }
        if max_local_gain(&buf, min_side) >= obs2 * (1.0 - 1e-12) {
            e2 += 1;
        }
    }
    let p = |e: u32| f64::from(1 + e) / f64::from(1 + done);
    TestResult {
        p_value: (2.0 * p(e1).min(p(e2))).min(1.0),
        permutations: done,
        statistic: obs,
        argmax,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// The false-alarm rate is shown, not assumed: over many change-free series of several
    /// noise shapes and lengths, the test rejects in no more than α of them (binomial slack).
    #[test]
    fn false_alarm_rate_on_null_series_is_at_most_alpha() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(42);
        let series = 800;
        let mut rejections = 0;
        let mut by_shape = [0; 4];
        for i in 0..series {
            let n = [40, 120, 400][i % 3];
            let x: Vec<f64> = match (i / 3) % 4 {
                // Uniform ±10 % jitter.
                0 => (0..n)
                    .map(|_| 1.6 * (1.0 + rng.gen_range(-0.1..0.1)))
                    .collect(),
                // Heavy tail: occasional slow files.
                1 => (0..n)
                    .map(|_| {
                        if rng.gen_bool(0.05) {
                            0.5
                        } else {
                            1.6 + rng.gen_range(-0.05..0.05)
                        }
                    })
                    .collect(),
                // Skewed: small files' rates (overhead-dominated).
                2 => (0..n)
                    .map(|_| {
                        let b = rng.gen_range(1e6..16e6);
                        b / (b / 1.6e9 + 0.003)
                    })
                    .collect(),
                // Short-range dependence: AR(1), φ = 0.3.
                _ => {
                    let mut e = 0.0;
                    (0..n)
                        .map(|_| {
                            e = 0.3 * e + rng.gen_range(-0.1..0.1);
                            1.6 + e
                        })
                        .collect()
                }
            };
            let m = x.iter().sum::<f64>() / x.len() as f64;
            let r: Vec<f64> = x.iter().map(|v| v - m).collect();
            if test(&x, 8, block_for(&r), i as u64).p_value < ALPHA {
                rejections += 1;
                by_shape[(i / 3) % 4] += 1;
            }
        }
        // α·N = 8; P(Binomial(800, 0.01) > 17) < 0.001.
        assert!(
            rejections <= 17,
            "{rejections} of {series} null series rejected at α = {ALPHA}; by shape (uniform, heavy tail, small files, AR(1)) of {} each: {by_shape:?}",
            series / 4
        );
    }

    #[test]
    fn a_forty_percent_step_is_significant_and_located() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let x: Vec<f64> = (0..60)
            .map(|i| {
                let level = if i < 30 { 1.0 } else { 0.6 };
                level * (1.0 + rng.gen_range(-0.1..0.1))
            })
            .collect();
        let r = test(&x, 8, 1, 0);
        assert!(r.p_value <= 0.002, "{r:?}");
        assert_eq!(r.argmax, 30);
    }

    #[test]
    fn a_drop_and_recovery_in_the_middle_is_significant() {
        // Low–high–low in equal thirds: a single split barely separates it.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let x: Vec<f64> = (0..48)
            .map(|i| {
                let level = if (16..32).contains(&i) { 2.3 } else { 0.66 };
                level * (1.0 + rng.gen_range(-0.08..0.08))
            })
            .collect();
        assert!(test(&x, 8, 1, 0).p_value <= 0.002);
    }

    #[test]
    fn max_gain_respects_the_minimum_side() {
        let mut x = vec![1.0; 20];
        x[19] = 100.0; // one wild last point
        let (_, k) = max_gain(&x, 8);
        assert!((8..=12).contains(&k));
        assert_eq!(max_gain(&x[..10], 8), (0.0, 0));
    }
}
