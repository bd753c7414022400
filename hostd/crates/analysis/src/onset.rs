//! Where a change began, to the byte, and its interval: one profile-likelihood search over
//! the spans around the change — files or intervals of the byte counters alike — and the
//! onset type stalls report too. See docs/methodology.md, "Onset and its interval".

use crate::observation::{Observations, Span};
use crate::settings::{INTERVAL_CHI2, ONSET_GRID, ONSET_SPAN_AFTER, ONSET_SPAN_BEFORE, RAMP_GRID};
use crate::stats;

/// Where a change (or the first stall) began, in bytes and time, with its interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Onset {
    /// Bytes of the series before it.
    pub bytes: u64,
    /// Host ns.
    pub ns: i64,
    /// Interval, bytes.
    pub bytes_range: (u64, u64),
    /// Interval, host ns.
    pub ns_range: (i64, i64),
}

/// A ramp located to the byte: its onset and where it settles.
pub struct Ramp {
    /// Where the ramp starts.
    pub onset: Onset,
    /// Bytes at which it reaches the new level.
    pub settle: u64,
}

/// Seconds to move bytes [x0, x1) when the rate is r1 before `a`, r2 after `b` and linear
/// in between.
fn ramp_time(x0: f64, x1: f64, a: f64, b: f64, r1: f64, r2: f64) -> f64 {
    let mut t = (x1.min(a) - x0).max(0.0) / r1 + (x1 - x0.max(b)).max(0.0) / r2;
    let (lo, hi) = (x0.max(a), x1.min(b));
    if hi > lo {
        let rate = |x: f64| r1 + (r2 - r1) * (x - a) / (b - a);
        t += if (r2 - r1).abs() < 1e-9 * r1 {
            (hi - lo) / r1
        } else {
            (b - a) / (r2 - r1) * (rate(hi) / rate(lo)).ln()
        };
    }
    t
}

/// The squared relative misfit of a span's measured time against `expected` seconds, in
/// units of `sigma` (relative noise of its rate). Measured against the span's own time, so
/// an interval that moved almost nothing weighs a bounded amount; spans that moved nothing
/// carry no byte position and are not searched.
fn misfit(s: &Span, expected: f64, sigma: f64) -> f64 {
    ((s.active_s - expected) / (s.active_s * sigma)).powi(2)
}

/// Locates a ramp to the byte: start a and end b near the spans the index fit chose; each
/// span's expected time is the fixed cost + ∫ 1/rate over its bytes; (a, b) minimise the
/// squared relative time errors; the onset's interval is every a whose best b keeps the
/// cost within Δχ² = 10.83 of the minimum. The search spans four spans before the index
/// fit's start to two after it (and three before to two after its end).
///
/// A line also fits a staircase of steps too small to be changes of their own (each under
/// `min_step`, the practical minimum, of the rate before), and it starts half a step before
/// the staircase's first step: the interval reaches on by that half step (at most half the
/// ramp), so that it holds the first step of any such staircase.
pub fn refine_ramp(
    obs: &Observations,
    (a, s, e, c): (usize, usize, usize, usize),
    (r1, r2): (f64, f64),
    noise: f64,
    min_step: f64,
) -> Ramp {
    let spans = &obs.spans;
    let a_lo = spans[s.saturating_sub(4).max(a)].bytes_before as f64;
    let a_hi = spans[(s + 2).min(c - 1)].bytes_after() as f64;
    let b_lo = spans[e.saturating_sub(3).max(s)].bytes_before as f64;
    let b_hi = spans[(e + 2).min(c - 1)].bytes_after() as f64;
    let cand: Vec<&Span> = spans[s.saturating_sub(5).max(a)..(e + 4).min(c)]
        .iter()
        .filter(|p| p.bytes > 0)
        .collect();
    let cost = |x: f64, y: f64| {
        cand.iter()
            .map(|p| {
                let x0 = p.bytes_before as f64;
                let exp = obs.overhead_s + ramp_time(x0, x0 + p.bytes as f64, x, y, r1, r2);
                misfit(p, exp, noise)
            })
            .sum::<f64>()
    };
    let grid = |lo: f64, hi: f64, i: usize| lo + (hi - lo) * i as f64 / RAMP_GRID as f64;
    let mut profile = Vec::with_capacity(RAMP_GRID + 1);
    let mut best = (f64::INFINITY, a_lo, b_hi);
    for i in 0..=RAMP_GRID {
        let x = grid(a_lo, a_hi, i);
        let mut row = f64::INFINITY;
        for j in 0..=RAMP_GRID {
            let y = grid(b_lo, b_hi, j);
            if y <= x {
                continue;
            }
            let v = cost(x, y);
            row = row.min(v);
            if v < best.0 {
                best = (v, x, y);
            }
        }
        profile.push((x, row));
    }
    let step = (a_hi - a_lo) / RAMP_GRID as f64;
    // Scale by the reduced χ² when the spans scatter more than the noise estimate says.
    let scale = (best.0 / (cand.len() as f64 - 2.0).max(1.0)).max(1.0);
    let inside: Vec<f64> = profile
        .iter()
        .filter(|p| p.1 - best.0 <= INTERVAL_CHI2 * scale)
        .map(|p| p.0)
        .collect();
    let lo = inside.iter().copied().fold(best.1, f64::min) - step;
    let hi = inside.iter().copied().fold(best.1, f64::max) + step;
    let half_step = staircase_half_step(best.2 - best.1, r1, r2, min_step);
    let hi = hi.max(best.1 + half_step);
    let bytes = best.1.round() as u64;
    let range = (lo.max(0.0).round() as u64, hi.round() as u64);
    let ns = obs.time_at(bytes);
    Ramp {
        onset: Onset {
            bytes,
            ns,
            bytes_range: (range.0.min(bytes), range.1.max(bytes)),
            ns_range: (obs.time_at(range.0).min(ns), obs.time_at(range.1).max(ns)),
        },
        settle: best.2.round() as u64,
    }
}

/// Bytes from a line's start to the first step of the steepest staircase it may stand for:
/// half a step of `min_step` × `r1` at the line's slope over `length` bytes from `r1` to
/// `r2`, at most half the line.
fn staircase_half_step(length: f64, r1: f64, r2: f64, min_step: f64) -> f64 {
    let fall = (r2 - r1).abs();
    if fall <= 0.0 || length <= 0.0 {
        return 0.0;
    }
    (0.5 * min_step * r1 / fall * length).min(0.5 * length)
}

/// Relative noise of rates for the onset's interval: the larger of the robust (MAD) and the
/// plain standard deviation over the median, raised to its 95 % upper confidence bound
/// (σ·√((n−1)/χ²₀.₀₅(n−1)), Wilson–Hilferty) — a σ estimated from a dozen spans can come out
/// low by a third, and an interval built on it would be too narrow; at least 1 %.
pub fn relative_noise(rates: &[f64]) -> f64 {
    let n = rates.len();
    let (Some(mad), Some(m)) = (stats::mad_sigma(rates), stats::median(rates)) else {
        return 0.05;
    };
    if m <= 0.0 || n < 3 {
        return 0.05;
    }
    let mean = rates.iter().sum::<f64>() / n as f64;
    let sd = (rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
    let k = (n - 1) as f64;
    let h = 2.0 / (9.0 * k);
    let chi2_05 = k * (1.0 - h - 1.645 * h.sqrt()).powi(3);
    let upper = (k / chi2_05.max(1e-9)).sqrt();
    (mad.max(sd) / m * upper).max(0.01)
}

/// Locates a step's onset to the byte: the change lies in the spans around the boundary
/// (three before it and four from it on). For each candidate byte position a, each span's
/// expected time is the fixed cost + (its bytes before a)/r1 + (its bytes after a)/r2; the
/// onset is the a that minimises Σ((measured − expected)/(measured·σ_rel))², and its
/// interval is every a within Δχ² = 10.83 of that minimum (a 99.9 % profile-likelihood
/// interval).
pub fn locate_onset(
    obs: &Observations,
    first_new: usize,
    r1: f64,
    r2: f64,
    noise: (f64, f64),
) -> Onset {
    let spans = &obs.spans;
    let first = first_new.saturating_sub(ONSET_SPAN_BEFORE);
    let last = (first_new + ONSET_SPAN_AFTER).min(spans.len() - 1);
    let cand: Vec<&Span> = spans[first..=last].iter().filter(|p| p.bytes > 0).collect();
    let span_start = spans[first].bytes_before as f64;
    let span_end = spans[last].bytes_after() as f64;
    let cost = |a: f64| {
        let mut c = 0.0;
        for p in &cand {
            let start = p.bytes_before as f64;
            let old = (a - start).clamp(0.0, p.bytes as f64);
            let new = p.bytes as f64 - old;
            let expected = obs.overhead_s + old / r1 + new / r2;
            let frac_new = new / p.bytes.max(1) as f64;
            let sigma = (1.0 - frac_new) * noise.0 + frac_new * noise.1;
            c += misfit(p, expected, sigma);
        }
        c
    };
    let steps = ONSET_GRID * (last - first + 1);
    let grid: Vec<(f64, f64)> = (0..=steps)
        .map(|i| {
            let a = span_start + (span_end - span_start) * i as f64 / steps as f64;
            (a, cost(a))
        })
        .collect();
    let best = grid
        .iter()
        .copied()
        .min_by(|x, y| x.1.total_cmp(&y.1))
        .unwrap_or((span_start, 0.0));
    // Scale by the reduced χ² when the spans scatter more than the noise estimate says.
    let scale = (best.1 / (cand.len() as f64 - 1.0).max(1.0)).max(1.0);
    let inside: Vec<f64> = grid
        .iter()
        .filter(|g| g.1 - best.1 <= INTERVAL_CHI2 * scale)
        .map(|g| g.0)
        .collect();
    let step = (span_end - span_start) / steps as f64;
    let lo = inside.iter().copied().fold(best.0, f64::min) - step;
    let hi = inside.iter().copied().fold(best.0, f64::max) + step;
    let onset = best.0;
    // Time: into the span holding the onset at the old rate.
    let holder = spans[first..=last]
        .iter()
        .rev()
        .find(|p| p.bytes_before as f64 <= onset && p.bytes > 0)
        .unwrap_or(&spans[first]);
    let old_bytes = (onset - holder.bytes_before as f64).min(holder.bytes as f64);
    let ns = (holder.start_ns + (old_bytes / r1 * 1e9).round() as i64).min(holder.end_ns);
    // An interval reaching the edge of the searched spans also covers what was left out
    // next to them (the change may lie there): up to the neighbouring span.
    let outer_lo = first
        .checked_sub(1)
        .map_or(0.0, |k| spans[k].bytes_after() as f64);
    let outer_hi = spans
        .get(last + 1)
        .map_or(obs.total_bytes as f64, |p| p.bytes_before as f64);
    let lo = if lo <= span_start { outer_lo } else { lo };
    let hi = if hi >= span_end { outer_hi } else { hi };
    let bytes = onset.round() as u64;
    let range = (lo.max(0.0).round() as u64, hi.round() as u64);
    Onset {
        bytes,
        ns,
        bytes_range: (range.0.min(bytes), range.1.max(bytes)),
        ns_range: (obs.time_at(range.0).min(ns), obs.time_at(range.1).max(ns)),
    }
}

#[cfg(test)]
mod tests {
    use super::staircase_half_step;

    #[test]
    fn a_lines_start_reaches_half_a_practical_step_on_at_most_half_the_ramp() {
        // 700 → 250 over 2.43 GB: a 15 % step of 700 is 105, at 450 per 2.43 GB.
        let h = staircase_half_step(2.43e9, 700.0, 250.0, 0.15);
        assert!((h - 0.5 * 105.0 / 450.0 * 2.43e9).abs() < 1.0, "{h}");
        // A fall no larger than one practical step: at most half the ramp.
        assert_eq!(staircase_half_step(1e9, 700.0, 650.0, 0.15), 0.5e9);
        assert_eq!(staircase_half_step(1e9, 700.0, 700.0, 0.15), 0.0);
    }
}
