//! Change points in a sequence: PELT (Killick, Fearnhead & Eckley 2012) with a Gaussian
//! mean-shift cost and an MBIC-type penalty on a robust noise estimate, followed by the
//! merging of neighbouring segments whose levels differ by less than a practical effect.

use crate::stats;

/// Settings of the detector. The defaults are documented in docs/methodology.md.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// Penalty per change point in units of σ²·ln n (3 = the leading term of MBIC).
    pub penalty_log_n: f64,
    /// Minimum number of points in a segment.
    pub min_segment: usize,
    /// Neighbouring segments whose means differ by less than this fraction merge.
    pub min_relative_change: f64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            penalty_log_n: 3.0,
            min_segment: 3,
            min_relative_change: 0.10,
        }
    }
}

/// A run of consecutive points with one mean.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    /// First index (inclusive).
    pub start: usize,
    /// One past the last index.
    pub end: usize,
    /// Mean of the points.
    pub mean: f64,
}

/// Robust noise σ: MAD of first differences divided by √2 (level shifts are rare, so
/// the differences are almost all pure noise).
pub fn noise_sigma(x: &[f64]) -> f64 {
    if x.len() < 3 {
        return 0.0;
    }
    let d: Vec<f64> = x.windows(2).map(|w| w[1] - w[0]).collect();
    stats::mad_sigma(&d).unwrap_or(0.0) / std::f64::consts::SQRT_2
}

struct Prefix {
    s1: Vec<f64>,
    s2: Vec<f64>,
}

impl Prefix {
    fn new(x: &[f64]) -> Self {
        let mut s1 = Vec::with_capacity(x.len() + 1);
        let mut s2 = Vec::with_capacity(x.len() + 1);
        let (mut a, mut b) = (0.0, 0.0);
        s1.push(0.0);
        s2.push(0.0);
        for v in x {
            a += v;
            b += v * v;
            s1.push(a);
            s2.push(b);
        }
        Prefix { s1, s2 }
    }

    /// Sum of squared deviations from the mean on `[s, t)`.
    fn cost(&self, s: usize, t: usize) -> f64 {
        let n = (t - s) as f64;
        let a = self.s1[t] - self.s1[s];
        ((self.s2[t] - self.s2[s]) - a * a / n).max(0.0)
    }

    fn mean(&self, s: usize, t: usize) -> f64 {
        (self.s1[t] - self.s1[s]) / (t - s) as f64
    }
}

/// PELT: the segmentation minimising Σ cost + β·(number of changes) exactly, with
/// pruning. Returns the segment boundaries (the first index of each new segment).
pub fn pelt(x: &[f64], beta: f64, min_segment: usize) -> Vec<usize> {
    let n = x.len();
    let m = min_segment.max(1);
    if n < 2 * m {
        return Vec::new();
    }
    let p = Prefix::new(x);
    let mut f = vec![f64::INFINITY; n + 1];
    let mut last = vec![0usize; n + 1];
    f[0] = -beta;
    let mut candidates: Vec<usize> = vec![0];
    for t in m..=n {
        let mut best = f64::INFINITY;
        let mut arg = 0;
        for &s in &candidates {
            if t - s >= m && f[s].is_finite() {
                let v = f[s] + p.cost(s, t) + beta;
                if v < best {
                    best = v;
                    arg = s;
                }
            }
        }
        f[t] = best;
        last[t] = arg;
        candidates.retain(|&s| t - s < m || !f[s].is_finite() || f[s] + p.cost(s, t) <= best);
        candidates.push(t + 1 - m);
        candidates.sort_unstable();
        candidates.dedup();
    }
    let mut cps = Vec::new();
    let mut t = n;
    while t > 0 {
        let s = last[t];
        if s > 0 {
            cps.push(s);
        }
        t = s;
    }
    cps.reverse();
    cps
}

/// Segments of `x` after PELT with β = `penalty_log_n`·σ̂²·ln n and the merging of
/// neighbours that differ by less than `min_relative_change`.
pub fn segments(x: &[f64], settings: &Settings) -> Vec<Segment> {
    let n = x.len();
    if n == 0 {
        return Vec::new();
    }
    let p = Prefix::new(x);
    let level = stats::median(x).unwrap_or(0.0).abs();
    let sigma = noise_sigma(x).max(1e-3 * level).max(f64::MIN_POSITIVE);
    let beta = settings.penalty_log_n * sigma * sigma * (n as f64).ln().max(1.0);
    let mut bounds = vec![0];
    bounds.extend(pelt(x, beta, settings.min_segment));
    bounds.push(n);
    loop {
        // Merge the closest neighbouring pair while it is below the practical effect.
        let mut worst: Option<(usize, f64)> = None;
        for k in 1..bounds.len() - 1 {
            let a = p.mean(bounds[k - 1], bounds[k]);
            let b = p.mean(bounds[k], bounds[k + 1]);
            let rel = (b - a).abs() / a.abs().max(b.abs()).max(f64::MIN_POSITIVE);
            if rel < settings.min_relative_change && worst.is_none_or(|(_, r)| rel < r) {
                worst = Some((k, rel));
            }
        }
        match worst {
            Some((k, _)) => {
                bounds.remove(k);
            }
            None => break,
        }
    }
    bounds
        .windows(2)
        .map(|w| Segment {
            start: w[0],
            end: w[1],
            mean: p.mean(w[0], w[1]),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn noisy(levels: &[(usize, f64)], jitter: f64, seed: u64) -> Vec<f64> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut v = Vec::new();
        for &(n, level) in levels {
            for _ in 0..n {
                v.push(level * (1.0 + rng.gen_range(-jitter..=jitter)));
            }
        }
        v
    }

    #[test]
    fn pelt_finds_a_clean_step_exactly() {
        let x: Vec<f64> = (0..40).map(|i| if i < 25 { 2.0 } else { 1.0 }).collect();
        assert_eq!(pelt(&x, 1.0, 2), vec![25]);
    }

    #[test]
    fn steady_series_with_ten_percent_jitter_has_one_segment() {
        for seed in 0..50 {
            let x = noisy(&[(150, 1.6)], 0.10, seed);
            let s = segments(&x, &Settings::default());
            assert_eq!(s.len(), 1, "seed {seed}: {s:?}");
        }
    }

    #[test]
    fn drop_and_recovery_are_located() {
        let x = noisy(&[(30, 1.8), (40, 0.6), (30, 1.5)], 0.10, 7);
        let s = segments(&x, &Settings::default());
        let starts: Vec<usize> = s.iter().map(|g| g.start).collect();
        assert_eq!(starts, vec![0, 30, 70], "{s:?}");
    }

    #[test]
    fn small_shift_below_practical_effect_is_merged() {
        let x = noisy(&[(100, 1.0), (100, 1.05)], 0.01, 3);
        assert_eq!(segments(&x, &Settings::default()).len(), 1);
    }

    #[test]
    fn noise_sigma_of_uniform_jitter() {
        let x = noisy(&[(2000, 1.0)], 0.10, 1);
        let s = noise_sigma(&x);
        // uniform ±0.1 has σ = 0.0577; MAD-based estimate is within 15 %.
        assert!((s - 0.0577).abs() < 0.009, "{s}");
    }
}
