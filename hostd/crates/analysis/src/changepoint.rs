//! Change points in a sequence: PELT (Killick, Fearnhead & Eckley 2012) with a Gaussian
//! mean-shift cost and an MBIC-type penalty on a robust noise estimate, followed by the
//! merging of neighbouring segments whose levels differ by less than a practical effect.

use crate::settings::{Settings, LOCAL_NOISE_HALF_WINDOW};
use crate::stats;

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

/// Local robust noise σ at each point: the larger of `noise_sigma` over the ±15 first
/// differences before and after it. Throughput noise differs between regimes (a contended
/// drive jitters far more than a free one), so one global σ would under-penalise the
/// noisy regime; taking the larger side keeps a point next to a noisy regime from
/// looking precise.
pub fn local_noise_sigma(x: &[f64]) -> Vec<f64> {
    let n = x.len();
    if n < 3 {
        return vec![0.0; n];
    }
    let d: Vec<f64> = x.windows(2).map(|w| w[1] - w[0]).collect();
    let h = LOCAL_NOISE_HALF_WINDOW;
    let sigma = |lo: usize, hi: usize| {
        // At least h differences, shifted inside the series.
        let (lo, hi) = if hi - lo < h {
            (lo.min(d.len().saturating_sub(h)), (lo + h).min(d.len()))
        } else {
            (lo, hi)
        };
        stats::mad_sigma(&d[lo..hi]).unwrap_or(0.0) / std::f64::consts::SQRT_2
    };
    (0..n)
        .map(|i| {
            let before = sigma(i.saturating_sub(h), i.min(d.len()));
            let after = sigma(i.min(d.len()), (i + h).min(d.len()));
            before.max(after)
        })
        .collect()
}

/// Weighted prefix sums for the cost Σ wᵢ(xᵢ − μ)² with wᵢ = 1/σᵢ².
struct Prefix {
    w: Vec<f64>,
    wx: Vec<f64>,
    wx2: Vec<f64>,
}

impl Prefix {
    fn new(x: &[f64], weights: &[f64]) -> Self {
        let n = x.len();
        let (mut w, mut wx, mut wx2) = (
            Vec::with_capacity(n + 1),
            Vec::with_capacity(n + 1),
            Vec::with_capacity(n + 1),
        );
        let (mut a, mut b, mut c) = (0.0, 0.0, 0.0);
        w.push(0.0);
        wx.push(0.0);
        wx2.push(0.0);
        for (v, k) in x.iter().zip(weights) {
            a += k;
            b += k * v;
            c += k * v * v;
            w.push(a);
            wx.push(b);
            wx2.push(c);
        }
        Prefix { w, wx, wx2 }
    }

    /// Weighted sum of squared deviations from the weighted mean on `[s, t)`.
    fn cost(&self, s: usize, t: usize) -> f64 {
        let w = self.w[t] - self.w[s];
        let a = self.wx[t] - self.wx[s];
        ((self.wx2[t] - self.wx2[s]) - a * a / w.max(f64::MIN_POSITIVE)).max(0.0)
    }
}

fn plain_mean(x: &[f64], s: usize, t: usize) -> f64 {
    x[s..t].iter().sum::<f64>() / (t - s) as f64
}

/// PELT on the cost Σ wᵢ(xᵢ − μ)²: the segmentation minimising Σ cost + β·(number of
/// changes) exactly, with pruning. Returns the first index of each new segment.
pub fn pelt(x: &[f64], weights: &[f64], beta: f64, min_segment: usize) -> Vec<usize> {
    let n = x.len();
    let m = min_segment.max(1);
    if n < 2 * m {
        return Vec::new();
    }
    let p = Prefix::new(x, weights);
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

/// Segments of `x`: PELT on the locally studentised cost with β = `penalty_log_n`·ln n,
/// then (1) short transition segments whose level lies between their neighbours' are
/// split between those neighbours (a file that straddles a change sits between the two
/// levels), (2) each change must still beat β with σ re-estimated from the two segments
/// it separates, (3) neighbours differing by less than `min_relative_change` merge.
pub fn segments(x: &[f64], settings: &Settings) -> Vec<Segment> {
    let n = x.len();
    if n == 0 {
        return Vec::new();
    }
    let level = stats::median(x).unwrap_or(0.0).abs();
    let floor = (1e-3 * level).max(0.25 * noise_sigma(x)).max(1e-12);
    let weights: Vec<f64> = local_noise_sigma(x)
        .into_iter()
        .map(|s| 1.0 / s.max(floor).powi(2))
        .collect();
    let beta = settings.penalty_log_n * (n as f64).ln().max(1.0);
    let p = Prefix::new(x, &weights);
    let mut bounds = vec![0];
    bounds.extend(pelt(x, &weights, beta, settings.min_segment));
    bounds.push(n);
    // (1) Dissolve short in-between segments.
    let mut k = 1;
    while k + 2 < bounds.len() {
        let (a, b, c, d) = (bounds[k - 1], bounds[k], bounds[k + 1], bounds[k + 2]);
        let (left, mid, right) = (
            plain_mean(x, a, b),
            plain_mean(x, b, c),
            plain_mean(x, c, d),
        );
        let between = (left - mid) * (mid - right) > 0.0;
        if between && c - b <= 2 * settings.min_segment {
            let split = (b..=c).min_by(|&i, &j| {
                (p.cost(a, i) + p.cost(i, d)).total_cmp(&(p.cost(a, j) + p.cost(j, d)))
            });
            let split = split.unwrap_or(b);
            bounds.splice(k..k + 2, [split]);
        } else {
            k += 1;
        }
    }
    bounds.dedup();
    // (2) Check each change against the noise of the two segments it separates (σ from
    // all the points inside them, many more than the local window) and drop the weakest
    // one below the penalty, until all pass.
    loop {
        let mut weakest: Option<(usize, f64)> = None;
        for k in 1..bounds.len() - 1 {
            let (a, b, c) = (bounds[k - 1], bounds[k], bounds[k + 1]);
            let mut d: Vec<f64> = x[a..b].windows(2).map(|w| w[1] - w[0]).collect();
            d.extend(x[b..c].windows(2).map(|w| w[1] - w[0]));
            // The larger of the robust (MAD of differences) and the plain (residual SD about
            // the two means) estimates: with few points either can come out low by chance.
            let (ma, mb) = (plain_mean(x, a, b), plain_mean(x, b, c));
            let ss: f64 = x[a..b].iter().map(|v| (v - ma).powi(2)).sum::<f64>()
                + x[b..c].iter().map(|v| (v - mb).powi(2)).sum::<f64>();
            let residual_sd = (ss / ((c - a) as f64 - 2.0).max(1.0)).sqrt();
            let sigma = (stats::mad_sigma(&d).unwrap_or(0.0) / std::f64::consts::SQRT_2)
                .max(residual_sd)
                .max(floor);
            let (n1, n2) = ((b - a) as f64, (c - b) as f64);
            let gain = n1 * n2 / (n1 + n2) * (plain_mean(x, a, b) - plain_mean(x, b, c)).powi(2)
                / (sigma * sigma);
            if gain < beta && weakest.is_none_or(|(_, g)| gain < g) {
                weakest = Some((k, gain));
            }
        }
        match weakest {
            Some((k, _)) => {
                bounds.remove(k);
            }
            None => break,
        }
    }
    // (3) Merge the closest neighbouring pair while it is below the practical effect.
    loop {
        let mut worst: Option<(usize, f64)> = None;
        for k in 1..bounds.len() - 1 {
            let a = plain_mean(x, bounds[k - 1], bounds[k]);
            let b = plain_mean(x, bounds[k], bounds[k + 1]);
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
            mean: plain_mean(x, w[0], w[1]),
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
        assert_eq!(pelt(&x, &[1.0; 40], 1.0, 2), vec![25]);
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
    fn noisy_regime_next_to_a_quiet_one_is_not_split() {
        for seed in 0..30 {
            let mut x = noisy(&[(25, 0.55)], 0.27, seed);
            x.extend(noisy(&[(30, 1.4)], 0.05, seed + 100));
            let starts: Vec<usize> = segments(&x, &Settings::default())
                .iter()
                .map(|g| g.start)
                .collect();
            assert_eq!(starts, vec![0, 25], "seed {seed}");
        }
    }

    #[test]
    fn a_file_straddling_the_change_does_not_make_its_own_segment() {
        let mut x = noisy(&[(30, 2.3)], 0.05, 9);
        x.push(1.2);
        x.extend(noisy(&[(40, 0.65)], 0.08, 10));
        let starts: Vec<usize> = segments(&x, &Settings::default())
            .iter()
            .map(|g| g.start)
            .collect();
        assert!(starts == vec![0, 30] || starts == vec![0, 31], "{starts:?}");
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
