//! The fill-state sweep's figures (`kind = "fill-states"`): for each level's measured
//! write (phase `write-L%`), the SLC-cache size — the bytes written before the
//! analysis' first drop in that phase ([`crate::detect`], with its onset interval) — and
//! the post-cache rate: the median of the per-file rates after the new level was
//! reached, with a 95 % order-statistic interval. A level without a drop, or with too
//! few files after it, says so instead (docs/methodology.md, "Fill states").

use hostd_records::cause::EventKind;
use hostd_records::events::Analysis;
use hostd_records::programs::{FillLevel, FillStatesFigures};
use hostd_records::FileRecord;

/// Fewest files after the drop for a post-cache rate with an interval.
pub const MIN_POST_FILES: usize = 6;

/// The level (percent) of a measured-write phase `write-L%`, else None.
pub fn level_of(phase: &str) -> Option<f64> {
    phase
        .strip_prefix("write-")?
        .strip_suffix('%')?
        .parse()
        .ok()
}

/// The figures of `target`'s fill-state sweep, or None when it has no `write-L%` phase.
pub fn figures(files: &[FileRecord], a: &Analysis, target: &str) -> Option<FillStatesFigures> {
    let mut phases: Vec<(String, f64)> = Vec::new();
    for f in files.iter().filter(|f| f.target == target) {
        if let Some(l) = level_of(&f.phase) {
            if !phases.iter().any(|(p, _)| *p == f.phase) {
                phases.push((f.phase.clone(), l));
            }
        }
    }
    if phases.is_empty() {
        return None;
    }
    phases.sort_by(|a, b| a.1.total_cmp(&b.1));
    let levels = phases
        .into_iter()
        .map(|(phase, level)| level_figures(files, a, target, &phase, level))
        .collect();
    Some(FillStatesFigures { levels })
}

fn level_figures(
    files: &[FileRecord],
    a: &Analysis,
    target: &str,
    phase: &str,
    level: f64,
) -> FillLevel {
    let mut mine: Vec<&FileRecord> = files
        .iter()
        .filter(|f| f.target == target && f.phase == phase && f.status == "ok")
        .collect();
    mine.sort_by_key(|f| f.start_ns);
    let bytes: u64 = mine.iter().map(|f| f.bytes).sum();
    let mut out = FillLevel {
        level_pct: level,
        phase: phase.to_string(),
        bytes,
        files: mine.len() as u64,
        ..FillLevel::default()
    };
    let drop = a
        .events
        .iter()
        .filter(|e| e.target == target && e.phase == phase && e.kind == EventKind::Drop)
        .min_by_key(|e| e.onset_bytes);
    let Some(e) = drop else {
        out.note = Some(format!(
            "no drop in {:.2} GB: a cache at least this large, or none",
            bytes as f64 / 1e9
        ));
        return out;
    };
    out.cache_bytes = Some(e.onset_bytes);
    out.cache_bytes_low = Some(e.onset_bytes_low);
    out.cache_bytes_high = Some(e.onset_bytes_high);
    out.cached_bps = Some(e.rate_before_bps);
    // The files that began once the new level was reached.
    let mut before = 0u64;
    let mut rates = Vec::new();
    for f in &mine {
        if before >= e.settle_bytes {
            rates.push(f.rate_bps());
        }
        before += f.bytes;
    }
    if rates.len() < MIN_POST_FILES {
        out.note = Some(format!(
            "not enough data after the drop: {} files (at least {MIN_POST_FILES} for a rate with an interval)",
            rates.len()
        ));
        return out;
    }
    rates.sort_by(f64::total_cmp);
    let (lo, hi) = median_interval(rates.len());
    out.post_cache_bps = crate::stats::median(&rates);
    out.post_cache_bps_low = Some(rates[lo]);
    out.post_cache_bps_high = Some(rates[hi]);
    out
}

/// Ranks (0-based) of the 95 % distribution-free interval of the median of `n` sorted
/// values: n/2 ∓ 1.96·√n/2 (normal approximation to the binomial).
pub fn median_interval(n: usize) -> (usize, usize) {
    let half = 1.96 * (n as f64).sqrt() / 2.0;
    let mid = n as f64 / 2.0;
    let lo = (mid - half).floor().max(0.0) as usize;
    let hi = ((mid + half).ceil() as usize).min(n - 1);
    (lo, hi)
}

/// The table as text lines (the run's summary), one per level.
pub fn lines(f: &FillStatesFigures) -> Vec<String> {
    let mut out = vec![format!(
        "  {:<13} {:>9} {:>24} {:>24}",
        "level", "written", "SLC cache GB [95 %]", "post-cache MB/s [95 %]"
    )];
    for l in &f.levels {
        let level = match l.actual_pct {
            Some(a) => format!("{:.0} % ({a:.1})", l.level_pct),
            None => format!("{:.0} %", l.level_pct),
        };
        let cache = match (l.cache_bytes, l.cache_bytes_low, l.cache_bytes_high) {
            (Some(c), Some(lo), Some(hi)) => format!(
                "{:.3} [{:.3}–{:.3}]",
                c as f64 / 1e9,
                lo as f64 / 1e9,
                hi as f64 / 1e9
            ),
            _ => "–".into(),
        };
        let post = match (
            l.post_cache_bps,
            l.post_cache_bps_low,
            l.post_cache_bps_high,
        ) {
            (Some(r), Some(lo), Some(hi)) => {
                format!("{:.1} [{:.1}–{:.1}]", r / 1e6, lo / 1e6, hi / 1e6)
            }
            _ => "–".into(),
        };
        let mut line = format!(
            "  {level:<13} {:>6.2} GB {cache:>24} {post:>24}",
            l.bytes as f64 / 1e9
        );
        if let Some(n) = &l.note {
            line.push_str(&format!("  ({n})"));
        }
        out.push(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_level_is_read_from_the_phase_name() {
        assert_eq!(level_of("write-25%"), Some(25.0));
        assert_eq!(level_of("write-12.5%"), Some(12.5));
        assert_eq!(level_of("fill-25%"), None);
        assert_eq!(level_of("write"), None);
    }

    #[test]
    fn the_median_interval_widens_with_fewer_values_and_stays_inside() {
        assert_eq!(median_interval(100), (40, 60));
        let (lo, hi) = median_interval(6);
        assert!(lo == 0 && hi == 5, "{lo} {hi}");
    }
}
