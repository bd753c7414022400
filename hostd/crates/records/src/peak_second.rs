//! The peak of a probe value over a phase, defined once: the highest mean of the samples in
//! one second, the seconds counted from the phase's first file, with that second's 95 %
//! interval (±1.96·s/√n of its samples). Peak bus power and the enclosure's maximum are
//! both this (docs/methodology.md, "Headline figures"): a single sample's maximum grows with
//! the sampling rate and its noise, a second's mean does not.

/// z of a two-sided 95 % normal interval.
const Z95: f64 = 1.96;

/// Fewest samples in a second for its mean to carry an interval.
pub const MIN_SAMPLES: usize = 2;

/// The highest second of a phase.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PeakSecond {
    /// Mean of the samples in that second.
    pub mean: f64,
    /// Half the width of its 95 % interval.
    pub half_width: f64,
    /// Its samples.
    pub samples: usize,
    /// Its start, host ns.
    pub start_ns: i64,
}

/// The highest 1 s mean of `values` (at `time_ns`, in time order) over `span` = [start,
/// end) host ns, among the seconds with at least [`MIN_SAMPLES`] finite samples; None when
/// no second has them.
pub fn highest_second(time_ns: &[i64], values: &[f64], span: (i64, i64)) -> Option<PeakSecond> {
    let (a, b) = span;
    let lo = time_ns.partition_point(|t| *t < a);
    let hi = time_ns.partition_point(|t| *t < b).min(values.len());
    let mut best: Option<PeakSecond> = None;
    let mut k = lo;
    while k < hi {
        let second = (time_ns[k] - a) / 1_000_000_000;
        let mut n = 0usize;
        let (mut sum, mut sq) = (0.0, 0.0);
        while k < hi && (time_ns[k] - a) / 1_000_000_000 == second {
            if values[k].is_finite() {
                n += 1;
                sum += values[k];
                sq += values[k] * values[k];
            }
            k += 1;
        }
        if n >= MIN_SAMPLES {
            let mean = sum / n as f64;
            let var = ((sq - n as f64 * mean * mean) / (n - 1) as f64).max(0.0);
            if !matches!(best, Some(p) if p.mean >= mean) {
                best = Some(PeakSecond {
                    mean,
                    half_width: Z95 * (var / n as f64).sqrt(),
                    samples: n,
                    start_ns: a + second * 1_000_000_000,
                });
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The highest second wins and its interval is its samples' standard error.
    #[test]
    fn the_highest_second_mean_is_found_with_its_interval() {
        let t: Vec<i64> = (0..40).map(|k| k * 100_000_000).collect();
        // Second 2 (samples 20..30) reads 5 ± 1, the others 3.
        let v: Vec<f64> = (0..40)
            .map(|k| match k {
                20..30 if k % 2 == 0 => 6.0,
                20..30 => 4.0,
                _ => 3.0,
            })
            .collect();
        let p = highest_second(&t, &v, (0, 4_000_000_000)).unwrap();
        let half = Z95 * (10.0f64 / 9.0).sqrt() / 10f64.sqrt();
        assert!((p.mean - 5.0).abs() < 1e-12 && (p.half_width - half).abs() < 1e-9);
        assert_eq!((p.samples, p.start_ns), (10, 2_000_000_000));
        assert!(highest_second(&t, &v, (5_000_000_000, 6_000_000_000)).is_none());
    }
}
