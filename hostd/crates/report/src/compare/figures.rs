//! The figures of the comparison's bar charts, per run and phase, each with its 95 %
//! interval or the reason it is missing. The rates, the SLC cache and the first throttle
//! are the analysis' headline figures as they are; energy, power and temperature come from
//! the probe's samples of the run's subject (docs/methodology.md, "Comparing runs").

use super::CompareRun;
use hostd_records::headline::Figure;
use serde::Serialize;
use std::collections::BTreeMap;

/// z of a two-sided 95 % interval.
const Z95: f64 = 1.96;

/// One bar chart's figure: its key in [`PhaseFigures::figures`], its title, unit and
/// the factor from the stored value (bytes/s, bytes, s, J/GB, W, °C, MB/s per W) to it.
pub struct Metric {
    /// Key.
    pub key: &'static str,
    /// Chart title.
    pub title: &'static str,
    /// Unit shown.
    pub unit: &'static str,
    /// Shown value = stored value × scale.
    pub scale: f64,
    /// Decimals shown.
    pub decimals: usize,
}

/// The bar charts, in the page's order.
pub const METRICS: [Metric; 10] = [
    Metric {
        key: "average_bps",
        title: "average rate",
        unit: "GB/s",
        scale: 1e-9,
        decimals: 2,
    },
    Metric {
        key: "sustained_bps",
        title: "sustained rate (last third)",
        unit: "GB/s",
        scale: 1e-9,
        decimals: 2,
    },
    Metric {
        key: "slc_cache_bytes",
        title: "SLC cache size",
        unit: "GB",
        scale: 1e-9,
        decimals: 1,
    },
    Metric {
        key: "post_cache_bps",
        title: "rate after the cache",
        unit: "GB/s",
        scale: 1e-9,
        decimals: 2,
    },
    Metric {
        key: "throttle_s",
        title: "time to the first throttle",
        unit: "s",
        scale: 1.0,
        decimals: 1,
    },
    Metric {
        key: "throttle_bytes",
        title: "data to the first throttle",
        unit: "GB",
        scale: 1e-9,
        decimals: 1,
    },
    Metric {
        key: "j_per_gb",
        title: "energy per GB",
        unit: "J/GB",
        scale: 1.0,
        decimals: 2,
    },
    Metric {
        key: "peak_power_w",
        title: "peak bus power (1 s mean)",
        unit: "W",
        scale: 1.0,
        decimals: 2,
    },
    Metric {
        key: "enclosure_max_c",
        title: "enclosure maximum (1 s mean)",
        unit: "°C",
        scale: 1.0,
        decimals: 1,
    },
    Metric {
        key: "mbps_per_w",
        title: "MB/s per W",
        unit: "MB/s per W",
        scale: 1.0,
        decimals: 1,
    },
];

/// The figures of one run's subject in one phase, keyed as [`METRICS`].
#[derive(Debug, Clone, Serialize)]
pub struct PhaseFigures {
    /// Phase.
    pub phase: String,
    /// Figure by key.
    pub figures: BTreeMap<String, Figure>,
}

/// The figures of `r`'s subject in `phase`.
pub fn of(r: &CompareRun, phase: &str) -> PhaseFigures {
    let subject = r.subject().unwrap_or("");
    let mut figures = BTreeMap::new();
    let headline = r
        .analysis
        .headlines
        .series
        .iter()
        .find(|s| s.target == subject && s.phase == phase);
    let no_headline = || Figure::absent("no headline figures for this target and phase");
    let pick = |f: Option<&Figure>| f.cloned().unwrap_or_else(no_headline);
    for (key, f) in [
        ("average_bps", headline.map(|h| &h.average_bps)),
        ("sustained_bps", headline.map(|h| &h.sustained_bps)),
        ("slc_cache_bytes", headline.map(|h| &h.slc_cache_bytes)),
        ("post_cache_bps", headline.map(|h| &h.post_cache_bps)),
        ("throttle_s", headline.map(|h| &h.throttle_s)),
        ("throttle_bytes", headline.map(|h| &h.throttle_bytes)),
    ] {
        figures.insert(key.to_string(), pick(f));
    }
    let probe = probe_figures(r, subject, phase);
    figures.extend(probe.into_iter().map(|(k, f)| (k.to_string(), f)));
    PhaseFigures {
        phase: phase.to_string(),
        figures,
    }
}

/// Energy per GB, its inverse in MB/s per W, the peak 1 s bus power and the enclosure's
/// highest 1 s mean, or why they are missing.
fn probe_figures(r: &CompareRun, subject: &str, phase: &str) -> [(&'static str, Figure); 4] {
    let absent = |why: &str| {
        [
            ("j_per_gb", Figure::absent(why)),
            ("peak_power_w", Figure::absent(why)),
            ("enclosure_max_c", Figure::absent(why)),
            ("mbps_per_w", Figure::absent(why)),
        ]
    };
    let Some(p) = &r.run.probe else {
        return absent("no probe in this run");
    };
    if r.run.probe_target.as_deref().is_some_and(|t| t != subject) {
        return absent("the probe was on another target");
    }
    let files: Vec<_> = r
        .run
        .files
        .iter()
        .filter(|f| f.target == subject && f.phase == phase && f.end_ns > f.start_ns)
        .collect();
    // Each file's energy: the mean of the power samples in it times its time.
    let mut pairs: Vec<(f64, f64)> = Vec::new();
    for f in &files {
        let (a, b) = (f.start_ns as i64, f.end_ns as i64);
        let lo = p.time_ns.partition_point(|t| *t < a);
        let hi = p.time_ns.partition_point(|t| *t < b);
        let w: Vec<f64> = p.power_w[lo..hi]
            .iter()
            .copied()
            .filter(|v| v.is_finite())
            .collect();
        if w.is_empty() {
            continue;
        }
        let mean = w.iter().sum::<f64>() / w.len() as f64;
        pairs.push((mean * f.seconds(), f.bytes as f64));
    }
    let j_per_gb = ratio_interval(&pairs).map_or_else(
        || Figure::absent("fewer than two files with probe samples"),
        |(v, lo, hi)| Figure::value(v * 1e9, lo * 1e9, hi * 1e9),
    );
    // 1 GB at J joules is 1000 MB / J seconds·W: MB/s per W = 1000 / (J/GB).
    let mbps_per_w = match j_per_gb.interval() {
        Some((v, lo, hi)) if lo > 0.0 => Figure::value(1e3 / v, 1e3 / hi, 1e3 / lo),
        Some(_) => Figure::absent("the energy per GB's interval reaches 0"),
        None => j_per_gb.clone(),
    };
    let span = (
        files.iter().map(|f| f.start_ns as i64).min().unwrap_or(0),
        files.iter().map(|f| f.end_ns as i64).max().unwrap_or(0),
    );
    [
        ("j_per_gb", j_per_gb),
        ("peak_power_w", highest_second(&p.time_ns, &p.power_w, span)),
        (
            "enclosure_max_c",
            highest_second(&p.time_ns, &p.enclosure_temp_c, span),
        ),
        ("mbps_per_w", mbps_per_w),
    ]
}

/// Σe/Σb of (e, b) pairs with the ratio estimator's 95 % interval (linearised standard
/// error: √(n/(n−1)·Σ(eᵢ − R·bᵢ)²) / Σb).
pub fn ratio_interval(pairs: &[(f64, f64)]) -> Option<(f64, f64, f64)> {
    let n = pairs.len();
    let (se, sb) = pairs
        .iter()
        .fold((0.0, 0.0), |(e, b), p| (e + p.0, b + p.1));
    if n < 2 || sb <= 0.0 {
        return None;
    }
    let r = se / sb;
    let ss: f64 = pairs.iter().map(|(e, b)| (e - r * b).powi(2)).sum();
    let sd = (ss * n as f64 / (n - 1) as f64).sqrt() / sb;
    Some((r, r - Z95 * sd, r + Z95 * sd))
}

/// The highest 1 s mean of `values` over `span` (host ns), with the 95 % interval of that
/// second's mean (its samples' standard error).
pub fn highest_second(time_ns: &[i64], values: &[f64], span: (i64, i64)) -> Figure {
    let (a, b) = span;
    let lo = time_ns.partition_point(|t| *t < a);
    let hi = time_ns.partition_point(|t| *t < b);
    let mut best: Option<(f64, f64)> = None;
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
        if n >= 2 {
            let mean = sum / n as f64;
            let var = ((sq - n as f64 * mean * mean) / (n - 1) as f64).max(0.0);
            let half = Z95 * (var / n as f64).sqrt();
            if best.is_none_or(|(m, _)| mean > m) {
                best = Some((mean, half));
            }
        }
    }
    best.map_or_else(
        || Figure::absent("no second with two or more samples in this phase"),
        |(m, h)| Figure::value(m, m - h, m + h),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ratio estimator: equal ratios have a zero-width interval; scattered ones a wider
    /// one around Σe/Σb.
    #[test]
    fn energy_per_byte_is_the_ratio_of_sums_with_its_interval() {
        let (r, lo, hi) = ratio_interval(&[(2.0, 1.0), (4.0, 2.0), (6.0, 3.0)]).unwrap();
        assert_eq!((r, lo, hi), (2.0, 2.0, 2.0));
        let (r, lo, hi) =
            ratio_interval(&[(1.0, 1.0), (3.0, 1.0), (2.0, 1.0), (2.0, 1.0)]).unwrap();
        assert!(
            (r - 2.0).abs() < 1e-12 && lo < 2.0 && hi > 2.0 && (hi - r - (r - lo)).abs() < 1e-12
        );
        assert!(ratio_interval(&[(1.0, 1.0)]).is_none());
    }

    /// The highest second wins and its interval is its samples' standard error.
    #[test]
    fn the_highest_second_mean_is_found_with_its_interval() {
        let t: Vec<i64> = (0..40).map(|k| k * 100_000_000).collect();
        // Second 2 (samples 20..30) reads 5 ± 1, the others 3.
        let v: Vec<f64> = (0..40)
            .map(|k| {
                if (20..30).contains(&k) {
                    if k % 2 == 0 {
                        6.0
                    } else {
                        4.0
                    }
                } else {
                    3.0
                }
            })
            .collect();
        let (m, lo, hi) = highest_second(&t, &v, (0, 4_000_000_000))
            .interval()
            .unwrap();
        let half = Z95 * (10.0f64 / 9.0).sqrt() / 10f64.sqrt();
        assert!(
            (m - 5.0).abs() < 1e-12 && (hi - m - half).abs() < 1e-9 && (m - lo - half).abs() < 1e-9
        );
        assert!(highest_second(&t, &v, (5_000_000_000, 6_000_000_000))
            .get()
            .is_none());
    }
}
