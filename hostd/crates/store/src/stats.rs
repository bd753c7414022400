//! Small robust statistics for per-file rates. Kept dependency-free so the
//! `hostd-analysis` crate can take them over (or replace them) without
//! touching callers: everything goes through these functions.

/// Arithmetic mean (NaN for no data).
pub fn mean(x: &[f64]) -> f64 {
    if x.is_empty() {
        return f64::NAN;
    }
    x.iter().sum::<f64>() / x.len() as f64
}

fn sorted(x: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = x.iter().copied().filter(|v| v.is_finite()).collect();
    v.sort_by(|a, b| a.total_cmp(b));
    v
}

/// Median (NaN for no data).
pub fn median(x: &[f64]) -> f64 {
    let v = sorted(x);
    let n = v.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Mean after dropping `fraction` of the values at each end (0.2 → 20 % trimmed).
pub fn trimmed_mean(x: &[f64], fraction: f64) -> f64 {
    let v = sorted(x);
    let k = (v.len() as f64 * fraction).floor() as usize;
    if v.len() <= 2 * k {
        return median(x);
    }
    mean(&v[k..v.len() - k])
}

/// Minimum and maximum.
pub fn min_max(x: &[f64]) -> (f64, f64) {
    x.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        })
}

/// A straight line `y = intercept + slope·x`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    /// Slope.
    pub slope: f64,
    /// Intercept.
    pub intercept: f64,
}

/// Theil–Sen fit: the median of pairwise slopes, robust to outliers (up to
/// ~29 %). O(n²) pairs; above 2000 points a deterministic stride subsample of
/// pairs is used. None with fewer than two distinct x.
pub fn theil_sen(x: &[f64], y: &[f64]) -> Option<Line> {
    let n = x.len().min(y.len());
    let mut slopes = Vec::new();
    let step = if n > 2000 { n / 2000 + 1 } else { 1 };
    for i in (0..n).step_by(step) {
        for j in (i + 1..n).step_by(step) {
            let dx = x[j] - x[i];
            if dx != 0.0 {
                slopes.push((y[j] - y[i]) / dx);
            }
        }
    }
    if slopes.is_empty() {
        return None;
    }
    let slope = median(&slopes);
    let intercepts: Vec<f64> = (0..n).map(|i| y[i] - slope * x[i]).collect();
    Some(Line {
        slope,
        intercept: median(&intercepts),
    })
}

/// Ordinary least-squares fit. None with fewer than two distinct x.
pub fn least_squares(x: &[f64], y: &[f64]) -> Option<Line> {
    let n = x.len().min(y.len());
    if n < 2 {
        return None;
    }
    let (mx, my) = (mean(&x[..n]), mean(&y[..n]));
    let sxx: f64 = x[..n].iter().map(|v| (v - mx).powi(2)).sum();
    if sxx == 0.0 {
        return None;
    }
    let sxy: f64 = (0..n).map(|i| (x[i] - mx) * (y[i] - my)).sum();
    let slope = sxy / sxx;
    Some(Line {
        slope,
        intercept: my - slope * mx,
    })
}

/// Sarle's bimodality coefficient `(g² + 1) / (k + 3(n−1)²/((n−2)(n−3)))`
/// with sample skewness g and excess kurtosis k. Above 5/9 ≈ 0.555 (the value
/// of a uniform distribution) suggests two modes. None below 4 values.
pub fn bimodality_coefficient(x: &[f64]) -> Option<f64> {
    let n = x.len();
    if n < 4 {
        return None;
    }
    let nf = n as f64;
    let m = mean(x);
    let m2 = x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / nf;
    if m2 == 0.0 {
        return Some(0.0);
    }
    let m3 = x.iter().map(|v| (v - m).powi(3)).sum::<f64>() / nf;
    let m4 = x.iter().map(|v| (v - m).powi(4)).sum::<f64>() / nf;
    let g = (nf * (nf - 1.0)).sqrt() / (nf - 2.0) * m3 / m2.powf(1.5);
    let k =
        (nf - 1.0) / ((nf - 2.0) * (nf - 3.0)) * ((nf + 1.0) * (m4 / (m2 * m2)) - 3.0 * (nf - 1.0));
    Some((g * g + 1.0) / (k + 3.0 * (nf - 1.0).powi(2) / ((nf - 2.0) * (nf - 3.0))))
}

/// The threshold of [`bimodality_coefficient`].
pub const BIMODAL_THRESHOLD: f64 = 5.0 / 9.0;

/// Looks bimodal: coefficient above 5/9 AND a gap between two clusters larger
/// than the spread inside them (the coefficient alone fires on skewed data).
pub fn looks_bimodal(x: &[f64]) -> bool {
    let Some(bc) = bimodality_coefficient(x) else {
        return false;
    };
    if x.len() < 8 || bc <= BIMODAL_THRESHOLD {
        return false;
    }
    // Largest gap in the sorted values splits two groups; each must hold ≥ 10 %.
    let v = sorted(x);
    let n = v.len();
    let lo = (n / 10).max(1);
    let (mut best, mut at) = (0.0, 0);
    for i in lo..=n - lo {
        let g = v[i] - v[i - 1];
        if g > best {
            best = g;
            at = i;
        }
    }
    if at == 0 {
        return false;
    }
    let spread = |s: &[f64]| {
        let m = median(s);
        median(&s.iter().map(|v| (v - m).abs()).collect::<Vec<_>>())
    };
    best > 3.0 * spread(&v[..at]).max(spread(&v[at..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn centre_measures() {
        let x = [1.0, 2.0, 3.0, 4.0, 100.0];
        assert_eq!(mean(&x), 22.0);
        assert_eq!(median(&x), 3.0);
        assert_eq!(median(&[1.0, 2.0, 3.0, 4.0]), 2.5);
        // 20 % of 5 = 1 dropped at each end: mean of 2,3,4.
        assert_eq!(trimmed_mean(&x, 0.2), 3.0);
        assert_eq!(min_max(&x), (1.0, 100.0));
    }

    #[test]
    fn theil_sen_ignores_an_outlier_least_squares_does_not() {
        let x: Vec<f64> = (0..20).map(|i| i as f64).collect();
        let mut y: Vec<f64> = x.iter().map(|v| 2.0 * v + 1.0).collect();
        y[19] = 500.0;
        let ts = theil_sen(&x, &y).unwrap();
        assert!(
            (ts.slope - 2.0).abs() < 1e-9 && (ts.intercept - 1.0).abs() < 1e-9,
            "{ts:?}"
        );
        let ls = least_squares(&x, &y).unwrap();
        assert!(ls.slope > 5.0);
        assert!(theil_sen(&[1.0, 1.0], &[2.0, 3.0]).is_none());
    }

    #[test]
    fn bimodal_rates_are_flagged_unimodal_are_not() {
        // Seed 002's picture: most files at ~1.5 GB/s, a group at ~0.5 GB/s.
        let mut two: Vec<f64> = (0..30).map(|i| 1500.0 + (i % 7) as f64 * 10.0).collect();
        two.extend((0..20).map(|i| 500.0 + (i % 5) as f64 * 10.0));
        assert!(looks_bimodal(&two));
        let one: Vec<f64> = (0..50).map(|i| 1500.0 + ((i * 37) % 101) as f64).collect();
        assert!(!looks_bimodal(&one));
        let skewed: Vec<f64> = (1..50).map(|i| 1000.0 + 1000.0 / i as f64).collect();
        assert!(!looks_bimodal(&skewed));
    }
}
