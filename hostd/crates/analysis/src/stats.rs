//! Robust statistics used everywhere in hostd (one implementation). Every function ignores nothing silently: callers pass finite
//! values; empty input gives `None`.

/// Arithmetic mean.
pub fn mean(x: &[f64]) -> Option<f64> {
    (!x.is_empty()).then(|| x.iter().sum::<f64>() / x.len() as f64)
}

/// Median (mean of the two middle values for an even count).
pub fn median(x: &[f64]) -> Option<f64> {
    if x.is_empty() {
        return None;
    }
    let mut v = x.to_vec();
    Some(median_in_place(&mut v))
}

/// Median of a scratch buffer, reordering it (O(n) selection).
pub fn median_in_place(v: &mut [f64]) -> f64 {
    let n = v.len();
    let mid = n / 2;
    let (_, m, _) = v.select_nth_unstable_by(mid, f64::total_cmp);
    let hi = *m;
    if n % 2 == 1 {
        hi
    } else {
        let lo = v[..mid].iter().copied().fold(f64::NEG_INFINITY, f64::max);
        0.5 * (lo + hi)
    }
}

/// Trimmed mean: drops `fraction` of the values from EACH end (0.2 → the 20 % trimmed
/// mean of Wilcox: the middle 60 %), then averages.
pub fn trimmed_mean(x: &[f64], fraction: f64) -> Option<f64> {
    if x.is_empty() {
        return None;
    }
    let mut v = x.to_vec();
    v.sort_by(f64::total_cmp);
    let k = ((v.len() as f64) * fraction.clamp(0.0, 0.499)).floor() as usize;
    mean(&v[k..v.len() - k])
}

/// Median absolute deviation scaled to estimate a normal standard deviation (×1.4826).
pub fn mad_sigma(x: &[f64]) -> Option<f64> {
    let m = median(x)?;
    let dev: Vec<f64> = x.iter().map(|v| (v - m).abs()).collect();
    Some(1.4826 * median(&dev)?)
}

/// A straight line `y = intercept + slope·x`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Line {
    /// Value at x = 0.
    pub intercept: f64,
    /// Change of y per unit x.
    pub slope: f64,
}

/// Ordinary least-squares fit of y on x. None for fewer than two distinct x.
pub fn least_squares(x: &[f64], y: &[f64]) -> Option<Line> {
    let n = x.len().min(y.len());
    if n < 2 {
        return None;
    }
    let mx = mean(&x[..n])?;
    let my = mean(&y[..n])?;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for i in 0..n {
        sxy += (x[i] - mx) * (y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
    }
    (sxx > 0.0).then(|| {
        let slope = sxy / sxx;
        Line {
            intercept: my - slope * mx,
            slope,
        }
    })
}

/// Theil–Sen fit: slope = median of pairwise slopes, intercept = median of y − slope·x.
/// O(n²) pairs; for more than 2 000 points a deterministic stride subsample of pairs is used.
pub fn theil_sen(x: &[f64], y: &[f64]) -> Option<Line> {
    let n = x.len().min(y.len());
    if n < 2 {
        return None;
    }
    let stride = if n > 2000 { n / 2000 + 1 } else { 1 };
    let mut slopes = Vec::with_capacity((n / stride) * (n / stride) / 2 + 1);
    for i in (0..n).step_by(stride) {
        for j in (i + 1..n).step_by(stride) {
            let dx = x[j] - x[i];
            if dx != 0.0 {
                slopes.push((y[j] - y[i]) / dx);
            }
        }
    }
    if slopes.is_empty() {
        return None;
    }
    let slope = median_in_place(&mut slopes);
    let mut res: Vec<f64> = (0..n).map(|i| y[i] - slope * x[i]).collect();
    Some(Line {
        intercept: median_in_place(&mut res),
        slope,
    })
}

/// Sarle's bimodality coefficient (g² + 1) / (k + 3(n−1)²/((n−2)(n−3))), g = sample
/// skewness, k = sample excess kurtosis. Reported for reference only: a uniform
/// distribution already scores 5/9, the usual threshold.
pub fn bimodality_coefficient(x: &[f64]) -> Option<f64> {
    let n = x.len();
    if n < 4 {
        return None;
    }
    let nf = n as f64;
    let m = mean(x)?;
    let (mut m2, mut m3, mut m4) = (0.0, 0.0, 0.0);
    for v in x {
        let d = v - m;
        m2 += d * d;
        m3 += d * d * d;
        m4 += d * d * d * d;
    }
    m2 /= nf;
    m3 /= nf;
    m4 /= nf;
    if m2 <= 0.0 {
        return None;
    }
    let g1 = m3 / m2.powf(1.5);
    let g = g1 * (nf * (nf - 1.0)).sqrt() / (nf - 2.0);
    let k1 = m4 / (m2 * m2) - 3.0;
    let k = (nf - 1.0) / ((nf - 2.0) * (nf - 3.0)) * ((nf + 1.0) * k1 + 6.0);
    Some((g * g + 1.0) / (k + 3.0 * (nf - 1.0).powi(2) / ((nf - 2.0) * (nf - 3.0))))
}

use hostd_records::events::Bimodality;

/// Threshold on `separation` above which two groups count as separate modes.
pub const BIMODAL_SEPARATION: f64 = 4.0;

/// Two-cluster gap test: sort, find the widest gap leaving ≥ 10 % (and ≥ 2 values) each
/// side, and call the data bimodal when that gap exceeds `BIMODAL_SEPARATION` times the
/// larger robust spread of the two sides. Jitter (uniform, normal) gives gaps far smaller
/// than the spread; a throttled drive gives one gap many spreads wide.
pub fn bimodality(x: &[f64]) -> Option<Bimodality> {
    let n = x.len();
    if n < 6 {
        return None;
    }
    let mut v = x.to_vec();
    v.sort_by(f64::total_cmp);
    let min_side = ((n as f64 * 0.1).ceil() as usize).max(2);
    let mut best = (0.0, min_side);
    for i in min_side..=n - min_side {
        let g = v[i] - v[i - 1];
        if g > best.0 {
            best = (g, i);
        }
    }
    let (gap, cut) = best;
    let spread = mad_sigma(&v[..cut])?.max(mad_sigma(&v[cut..])?);
    let scale = v[n - 1].abs().max(v[0].abs()).max(f64::MIN_POSITIVE);
    let separation = if spread > 1e-12 * scale {
        gap / spread
    } else if gap > 0.0 {
        f64::INFINITY
    } else {
        0.0
    };
    Some(Bimodality {
        bimodal: separation > BIMODAL_SEPARATION,
        gap,
        separation,
        split_at: 0.5 * (v[cut - 1] + v[cut]),
        low_fraction: cut as f64 / n as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_trimmed_mean_resist_an_outlier() {
        let x = [1.0, 2.0, 3.0, 4.0, 1000.0];
        assert_eq!(median(&x), Some(3.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(trimmed_mean(&x, 0.2), Some(3.0));
        assert!(mean(&x).unwrap() > 200.0);
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn theil_sen_ignores_outliers_least_squares_does_not() {
        let x: Vec<f64> = (0..20).map(f64::from).collect();
        let mut y: Vec<f64> = x.iter().map(|v| 2.0 + 0.5 * v).collect();
        y[19] = 100.0;
        let ts = theil_sen(&x, &y).unwrap();
        assert!(
            (ts.slope - 0.5).abs() < 1e-9 && (ts.intercept - 2.0).abs() < 1e-9,
            "{ts:?}"
        );
        let ls = least_squares(&x, &y).unwrap();
        assert!(ls.slope > 1.0, "{ls:?}");
    }

    #[test]
    fn bimodality_flags_two_groups_not_uniform_jitter() {
        let uniform: Vec<f64> = (0..200)
            .map(|i| 1.0 + 0.2 * ((i * 37 % 200) as f64 / 200.0 - 0.5))
            .collect();
        assert!(!bimodality(&uniform).unwrap().bimodal);
        // BC of a uniform sits at the 5/9 threshold, which is why it is not the flag.
        assert!((bimodality_coefficient(&uniform).unwrap() - 5.0 / 9.0).abs() < 0.02);
        let mut two = Vec::new();
        for i in 0..60 {
            two.push(2.3 + 0.05 * ((i % 7) as f64 / 7.0 - 0.5));
            two.push(0.65 + 0.05 * ((i % 5) as f64 / 5.0 - 0.5));
        }
        let b = bimodality(&two).unwrap();
        assert!(b.bimodal && b.split_at > 0.7 && b.split_at < 2.2, "{b:?}");
    }
}
