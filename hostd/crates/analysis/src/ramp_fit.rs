//! The fit of one change as a step or a ramp ([`fit_ramp`]): the least-error ramp (or step)
//! around a change point, on prefix sums of the series ([`PrefixSums`]) so that each
//! candidate costs constant time, and whether a ramp fits better than chance would allow.
//! See docs/methodology.md ("Change points": steps and ramps).

use crate::changepoint;
use crate::settings::{Settings, EXHAUSTIVE_RAMP_PAIRS, INTERVAL_CHI2, MIN_RAMP_FILES};

/// Prefix sums of a series `x`, for the level, the spread and the ramp fit of any segment
/// in constant time: element `i` of each is the sum over `x[..i]`.
pub(crate) struct PrefixSums {
    /// Σ x.
    x: Vec<f64>,
    /// Σ x².
    x_squared: Vec<f64>,
    /// Σ i·x (i the index in the series).
    index_x: Vec<f64>,
}

impl PrefixSums {
    /// The prefix sums of `x`.
    pub(crate) fn new(x: &[f64]) -> PrefixSums {
        let mut s = PrefixSums {
            x: vec![0.0],
            x_squared: vec![0.0],
            index_x: vec![0.0],
        };
        for (i, v) in x.iter().enumerate() {
            s.x.push(s.x[i] + v);
            s.x_squared.push(s.x_squared[i] + v * v);
            s.index_x.push(s.index_x[i] + i as f64 * v);
        }
        s
    }

    /// Σx on [a, b).
    fn sum(&self, a: usize, b: usize) -> f64 {
        self.x[b] - self.x[a]
    }

    /// The mean on [a, b).
    pub(crate) fn mean(&self, a: usize, b: usize) -> f64 {
        self.sum(a, b) / (b - a).max(1) as f64
    }
    /// Σ(x − mean)² on [a, b).
    pub(crate) fn ss(&self, a: usize, b: usize) -> f64 {
        let n = (b - a) as f64;
        if n <= 0.0 {
            return 0.0;
        }
        let s = self.sum(a, b);
        ((self.x_squared[b] - self.x_squared[a]) - s * s / n).max(0.0)
    }
    /// SSE of the model: level mean[a,s) before s, a straight line over [s, e), level
    /// mean[e,c) from e (e = s: a step).
    pub(crate) fn ramp_sse(&self, a: usize, s: usize, e: usize, c: usize) -> f64 {
        let (l1, l2) = (self.mean(a, s), self.mean(e, c));
        let mut sse = self.ss(a, s) + self.ss(e, c);
        if e > s {
            let len = (e - s) as f64;
            let d = l2 - l1;
            let sx = self.sum(s, e);
            let six = self.index_x[e] - self.index_x[s];
            // r_i = l1 + d·(i − s + 1)/(len + 1)
            let sxr = l1 * sx + d / (len + 1.0) * (six - (s as f64 - 1.0) * sx);
            let su = len / 2.0;
            let su2 = len * (2.0 * len + 1.0) / (6.0 * (len + 1.0));
            let srr = len * l1 * l1 + 2.0 * l1 * d * su + d * d * su2;
            sse += ((self.x_squared[e] - self.x_squared[s]) - 2.0 * sxr + srr).max(0.0);
        }
        sse
    }
}

/// The best ramp (or step) for the change near `b` inside `[a, c)`.
pub(crate) struct RampFit {
    /// Where the ramp starts: the first index of the new regime's way there.
    pub(crate) start: usize,
    /// Where it ends: the first index at the new level (= `start` for a step).
    pub(crate) end: usize,
    /// A ramp, not a step.
    pub(crate) gradual: bool,
}

/// The least-error ramp (error, start, end) with its start in `lo..=b` and its end in
/// `b..=hi` (start ≤ end) over `[a, c)`.
fn best_ramp(
    sums: &PrefixSums,
    a: usize,
    c: usize,
    (lo, b, hi): (usize, usize, usize),
) -> (f64, usize, usize) {
    let search = |starts: &mut dyn Iterator<Item = usize>, ends: &dyn Fn(usize) -> Vec<usize>| {
        let mut best = (f64::INFINITY, b, b);
        for s in starts {
            for e in ends(s) {
                let v = sums.ramp_sse(a, s, e, c);
                if v < best.0 {
                    best = (v, s, e);
                }
            }
        }
        best
    };
    let pairs = (b - lo + 1) * (hi - b + 1);
    if pairs <= EXHAUSTIVE_RAMP_PAIRS {
        return search(&mut (lo..=b), &|s| (b.max(s)..=hi).collect());
    }
    let stride = (pairs as f64 / EXHAUSTIVE_RAMP_PAIRS as f64).sqrt().ceil() as usize;
    // The grid, with both ends of each range on it.
    let grid = |from: usize, to: usize| -> Vec<usize> {
        let mut v: Vec<usize> = (from..=to).step_by(stride).collect();
        if v.last() != Some(&to) {
            v.push(to);
        }
        v
    };
    let coarse = search(&mut grid(lo, b).into_iter(), &|s| grid(b.max(s), hi));
    let (s0, e0) = (coarse.1, coarse.2);
    let fine = search(
        &mut (s0.saturating_sub(stride).max(lo)..=(s0 + stride).min(b)),
        &|s| (b.max(s).max(e0.saturating_sub(stride))..=(e0 + stride).min(hi)).collect(),
    );
    if fine.0 <= coarse.0 {
        fine
    } else {
        coarse
    }
}

/// The ramp or step that fits the change near `b` inside `[a, c)` of `x` best: a ramp when
/// it spans at least [`MIN_RAMP_FILES`] and fits better than the best step by more than
/// chance would (the gain in χ² over the larger of the flat sides' noise beats both
/// [`INTERVAL_CHI2`] and 2·ln n, a BIC-like penalty for the ramp's extra end).
pub(crate) fn fit_ramp(
    x: &[f64],
    sums: &PrefixSums,
    a: usize,
    b: usize,
    c: usize,
    settings: &Settings,
) -> RampFit {
    let edge = MIN_RAMP_FILES.max(settings.min_segment);
    let lo = (a + edge).min(b);
    let hi = c.saturating_sub(edge).max(b);
    let mut best_step = (f64::INFINITY, b);
    for s in lo..=hi {
        let v = sums.ramp_sse(a, s, s, c);
        if v < best_step.0 {
            best_step = (v, s);
        }
    }
    let best = best_ramp(sums, a, c, (lo, b, hi));
    // Noise: the larger of the two flat sides' robust σ (a noisy regime must not pass as
    // a ramp fitting better).
    let sigma = changepoint::noise_sigma(&x[a..best.1.max(a + 1)])
        .max(changepoint::noise_sigma(&x[best.2.min(c - 1)..c]))
        .max(1e-12);
    let var = sigma * sigma;
    let gain = (best_step.0 - best.0) / var;
    let gradual =
        best.2 - best.1 >= MIN_RAMP_FILES && gain > INTERVAL_CHI2.max(2.0 * ((c - a) as f64).ln());
    if !gradual {
        return RampFit {
            start: best_step.1,
            end: best_step.1,
            gradual: false,
        };
    }
    RampFit {
        start: best.1,
        end: best.2,
        gradual: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Past the exhaustive limit the grid-then-refine search finds the same ramp as trying
    /// every pair: a noisy 2.0 → 1.0 ramp over files 1200–1800 of 3000.
    #[test]
    fn a_long_ramp_is_fitted_as_trying_every_pair_fits_it() {
        let n = 3000;
        let x: Vec<f64> = (0..n)
            .map(|i| {
                let level = match i {
                    ..1200 => 2.0,
                    1200..1800 => 2.0 - (i - 1200) as f64 / 600.0,
                    _ => 1.0,
                };
                // Deterministic noise of ±0.05.
                level + 0.05 * ((i * 7919 % 101) as f64 / 50.0 - 1.0)
            })
            .collect();
        let sums = PrefixSums::new(&x);
        let (a, b, c) = (0, 1500, n);
        let (lo, hi) = (3, n - 3);
        assert!((b - lo + 1) * (hi - b + 1) > EXHAUSTIVE_RAMP_PAIRS);
        let mut every = (f64::INFINITY, b, b);
        for s in lo..=b {
            for e in b.max(s)..=hi {
                let v = sums.ramp_sse(a, s, e, c);
                if v < every.0 {
                    every = (v, s, e);
                }
            }
        }
        let found = best_ramp(&sums, a, c, (lo, b, hi));
        assert_eq!(
            (found.1, found.2),
            (every.1, every.2),
            "{found:?} {every:?}"
        );
        assert!(
            (1190..1210).contains(&found.1) && (1790..1810).contains(&found.2),
            "{found:?}"
        );
    }
}
