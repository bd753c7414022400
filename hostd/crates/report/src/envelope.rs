//! Many files drawn as one envelope: past [`MAX_FILE_MARKS`] files of a target and phase a
//! chart bins them along its x axis (cumulative data or time) into [`FILE_BINS`] bins and
//! draws each bin's min–max band and mean, not a mark per file, so that `report.html` of a
//! run of 100 000 files stays a few MB and opens at once.

use crate::svg::Chart;

/// Most files of one target and phase a chart draws one by one.
pub(crate) const MAX_FILE_MARKS: usize = 2_000;
/// Bins of an envelope: about one per pixel pair of a chart.
pub(crate) const FILE_BINS: usize = 480;

/// Whether `n` files of one target and phase are drawn as an envelope.
pub(crate) fn summarised(n: usize) -> bool {
    n > MAX_FILE_MARKS
}

/// The `n` bins of `pts` (x, y) over `[x_lo, x_hi]`: centres, min, mean and max of y (NaN where a
/// bin holds no point, which breaks the line there).
fn bins(pts: &[(f64, f64)], x_lo: f64, x_hi: f64, n: usize) -> [Vec<f64>; 4] {
    let n = n.max(1);
    let span = (x_hi - x_lo).max(f64::MIN_POSITIVE);
    let mut acc = vec![(f64::INFINITY, 0.0f64, f64::NEG_INFINITY, 0u64); n];
    for &(x, y) in pts {
        if !x.is_finite() || !y.is_finite() {
            continue;
        }
        let k = (((x - x_lo) / span * n as f64) as usize).min(n - 1);
        let b = &mut acc[k];
        (b.0, b.1, b.2, b.3) = (b.0.min(y), b.1 + y, b.2.max(y), b.3 + 1);
    }
    let mut out: [Vec<f64>; 4] = Default::default();
    for (k, (lo, sum, hi, count)) in acc.into_iter().enumerate() {
        let none = count == 0;
        out[0].push(x_lo + (k as f64 + 0.5) * span / n as f64);
        out[1].push(if none { f64::NAN } else { lo });
        out[2].push(if none { f64::NAN } else { sum / count as f64 });
        out[3].push(if none { f64::NAN } else { hi });
    }
    out
}

/// Draws `pts` on `c` as the envelope of their bins over `[x_lo, x_hi]`: the min–max band
/// and the mean line.
pub(crate) fn draw(c: &mut Chart, pts: &[(f64, f64)], x_lo: f64, x_hi: f64, color: &str) {
    draw_bins(c, pts, x_lo, x_hi, color, FILE_BINS);
}

/// [`draw`] with `n` bins (fewer for a series of a few hundred points, so that each bin
/// holds several).
pub(crate) fn draw_bins(
    c: &mut Chart,
    pts: &[(f64, f64)],
    x_lo: f64,
    x_hi: f64,
    color: &str,
    n: usize,
) {
    let [xs, lo, mean, hi] = bins(pts, x_lo, x_hi, n);
    c.band(&xs, &lo, &hi, color);
    let line: Vec<(f64, f64)> = xs.iter().copied().zip(mean).collect();
    c.line(&line, color, "series envelope");
}

/// The note under a chart that drew some series as envelopes.
pub(crate) fn note(files: usize) -> String {
    format!(
        r#"<p class="note envelope">{files} files: each target and phase with more than {MAX_FILE_MARKS} files is drawn as the min–max band and mean of {FILE_BINS} bins, not file by file (files.csv has every file).</p>"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each bin holds the min, mean and max of its points; an empty bin is NaN.
    #[test]
    fn bins_hold_min_mean_max_and_gaps() {
        let n = FILE_BINS as f64;
        // Two points in the first bin, one in the last; none between.
        let pts = [(0.0, 1.0), (0.5 / n, 3.0), (1.0, 7.0)];
        let [xs, lo, mean, hi] = bins(&pts, 0.0, 1.0, FILE_BINS);
        assert_eq!(xs.len(), FILE_BINS);
        assert!((xs[0] - 0.5 / n).abs() < 1e-12);
        assert_eq!((lo[0], mean[0], hi[0]), (1.0, 2.0, 3.0));
        assert_eq!((lo[FILE_BINS - 1], hi[FILE_BINS - 1]), (7.0, 7.0));
        assert!(mean[1].is_nan() && lo[FILE_BINS / 2].is_nan());
        assert!(!summarised(MAX_FILE_MARKS) && summarised(MAX_FILE_MARKS + 1));
    }
}
