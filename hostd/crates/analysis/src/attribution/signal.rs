//! Figures read off the probe's samples and the files around an onset: sensor noise, rises,
//! slopes, smoothed extremes and the bytes/s moved in a window.

use super::NS;
use crate::stats;
use hostd_records::{FileRecord, ProbeSeries};

/// Robust σ of a sensor's sample-to-sample noise: 1.4826·MAD of first differences / √2.
pub(super) fn sensor_noise(values: &[f64]) -> Option<f64> {
    let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.len() < 10 {
        return None;
    }
    let d: Vec<f64> = v.windows(2).map(|w| w[1] - w[0]).collect();
    stats::mad_sigma(&d).map(|s| s / std::f64::consts::SQRT_2)
}

/// Largest rise of the 1 s means of `values` on `[a, b)`: max over bins of (bin − lowest
/// bin before it).
pub(super) fn largest_rise(p: &ProbeSeries, values: &[f64], a: i64, b: i64) -> Option<f64> {
    let bin = (NS as i64).min((b - a) / 100).max(1);
    let mut low = f64::INFINITY;
    let mut rise: Option<f64> = None;
    let mut t = a;
    while t < b {
        if let Some(m) = p.mean_in(values, t, (t + bin).min(b)) {
            low = low.min(m);
            rise = Some(rise.map_or(m - low, |r: f64| r.max(m - low)));
        }
        t += bin;
    }
    rise
}

/// Bytes/s moved by `files` inside `[a, b)`, each file spread evenly over its duration.
pub fn rate_in_window<'f>(files: impl Iterator<Item = &'f FileRecord>, a: i64, b: i64) -> f64 {
    if b <= a {
        return 0.0;
    }
    let mut bytes = 0.0;
    for f in files {
        let lo = (f.start_ns as i64).max(a);
        let hi = (f.end_ns as i64).min(b);
        if hi > lo {
            bytes += f.bytes as f64 * (hi - lo) as f64
                / ((f.end_ns as i64) - (f.start_ns as i64)).max(1) as f64;
        }
    }
    bytes / ((b - a) as f64 / NS)
}

/// Least-squares slope of `values` against time (per s) on `[a, b)`, NaN-free samples only.
pub(super) fn slope(p: &ProbeSeries, values: &[f64], a: i64, b: i64) -> Option<f64> {
    let r = p.range(a, b);
    let step = (r.len() / 4000).max(1);
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for i in r.step_by(step) {
        if values[i].is_finite() {
            x.push((p.time_ns[i] - a) as f64 / NS);
            y.push(values[i]);
        }
    }
    (x.len() >= 10)
        .then(|| stats::least_squares(&x, &y))
        .flatten()
        .map(|l| l.slope)
}

/// Min and max of the means of `values` over bins on `[a, b)`: 1 s bins, or a hundredth of
/// the span for short (accelerated) series.
pub(super) fn smoothed_min_max(
    p: &ProbeSeries,
    values: &[f64],
    a: i64,
    b: i64,
) -> Option<(f64, f64)> {
    let bin = (NS as i64).min((b - a) / 100).max(1);
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    let mut t = a;
    while t < b {
        if let Some(m) = p.mean_in(values, t, (t + bin).min(b)) {
            lo = lo.min(m);
            hi = hi.max(m);
        }
        t += bin;
    }
    (lo.is_finite() && hi.is_finite()).then_some((lo, hi))
}

/// The finite sample of `values` nearest to `t` within `max_ns` (temperature sensors are
/// slower than the power channel, so most rows have no temperature).
pub(super) fn nearest(p: &ProbeSeries, values: &[f64], t: i64, max_ns: i64) -> Option<f64> {
    let r = p.range(t - max_ns, t + max_ns);
    r.filter(|&i| values[i].is_finite())
        .min_by_key(|&i| (p.time_ns[i] - t).abs())
        .map(|i| values[i])
}
