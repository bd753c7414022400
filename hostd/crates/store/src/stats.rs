//! Robust statistics for per-file rates: a thin facade over
//! `hostd_analysis::stats` (one implementation for the whole project), in the
//! shape the summary needs (NaN instead of `None` for "no data").

use hostd_analysis::stats as a;
pub use hostd_analysis::stats::Line;

/// Arithmetic mean (NaN for no data).
pub fn mean(x: &[f64]) -> f64 {
    a::mean(x).unwrap_or(f64::NAN)
}

/// Median (NaN for no data).
pub fn median(x: &[f64]) -> f64 {
    a::median(x).unwrap_or(f64::NAN)
}

/// Mean after dropping `fraction` of the values at each end (0.2 → 20 % trimmed).
pub fn trimmed_mean(x: &[f64], fraction: f64) -> f64 {
    a::trimmed_mean(x, fraction).unwrap_or(f64::NAN)
}

/// Minimum and maximum.
pub fn min_max(x: &[f64]) -> (f64, f64) {
    x.iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        })
}

/// Theil–Sen fit (median of pairwise slopes); None with fewer than two distinct x.
pub fn theil_sen(x: &[f64], y: &[f64]) -> Option<Line> {
    a::theil_sen(x, y)
}

/// Ordinary least-squares fit; None with fewer than two distinct x.
pub fn least_squares(x: &[f64], y: &[f64]) -> Option<Line> {
    a::least_squares(x, y)
}

/// Sarle's bimodality coefficient (reported for reference).
pub fn bimodality_coefficient(x: &[f64]) -> Option<f64> {
    a::bimodality_coefficient(x)
}

/// Two groups of rates separated by a gap many spreads wide (the analysis
/// crate's gap test): the mean then describes neither group.
pub fn looks_bimodal(x: &[f64]) -> bool {
    a::bimodality(x).is_some_and(|b| b.bimodal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn centre_measures() {
        let x = [1.0, 2.0, 3.0, 4.0, 100.0];
        assert_eq!(mean(&x), 22.0);
        assert_eq!(median(&x), 3.0);
        assert_eq!(trimmed_mean(&x, 0.2), 3.0);
        assert_eq!(min_max(&x), (1.0, 100.0));
        assert!(mean(&[]).is_nan());
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
        assert!(least_squares(&x, &y).unwrap().slope > 5.0);
    }

    #[test]
    fn bimodal_rates_are_flagged_unimodal_are_not() {
        // Seed 002's picture: most files at ~1.5 GB/s, a group at ~0.5 GB/s.
        let mut two: Vec<f64> = (0..30).map(|i| 1500.0 + (i % 7) as f64 * 10.0).collect();
        two.extend((0..20).map(|i| 500.0 + (i % 5) as f64 * 10.0));
        assert!(looks_bimodal(&two));
        let one: Vec<f64> = (0..50).map(|i| 1500.0 + ((i * 37) % 101) as f64).collect();
        assert!(!looks_bimodal(&one));
    }
}
