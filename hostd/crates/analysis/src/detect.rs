//! Turning change points in per-file throughput into located drops and recoveries.

use crate::changepoint::{self, Settings};
use crate::input::FileRecord;
use crate::model::EventKind;
use crate::series::Series;
use crate::stats;

/// A change in throughput found in one series, before attribution.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// Drop or recovery.
    pub kind: EventKind,
    /// Bytes of the series before the change.
    pub onset_bytes: u64,
    /// Host ns of the change.
    pub onset_ns: i64,
    /// Position (in the series) of the file in which it happened.
    pub file_pos: usize,
    /// Throughput of the segment before (Σ bytes / Σ time), bytes/s.
    pub rate_before_bps: f64,
    /// Throughput of the segment after, bytes/s.
    pub rate_after_bps: f64,
    /// Time span of the segment before: (first start, onset) host ns.
    pub before_ns: (i64, i64),
    /// Time span of the segment after: (onset, last end) host ns.
    pub after_ns: (i64, i64),
}

/// Files smaller than this fraction of the median size are left out of the change-point
/// series: their rate is dominated by per-file costs (open, fsync), not the drive's speed.
pub const SMALL_FILE_FRACTION: f64 = 0.1;

/// Finds the drops and recoveries in one series.
pub fn changes(series: &Series, settings: &Settings) -> Vec<Change> {
    let files = &series.files;
    if files.is_empty() {
        return Vec::new();
    }
    let mut sizes: Vec<f64> = files.iter().map(|f| f.bytes as f64).collect();
    let min_bytes = SMALL_FILE_FRACTION * crate::stats::median_in_place(&mut sizes);
    let kept: Vec<usize> = (0..files.len())
        .filter(|&i| files[i].bytes as f64 >= min_bytes)
        .collect();
    let rates: Vec<f64> = kept.iter().map(|&i| files[i].rate_bps()).collect();
    let segs = changepoint::segments(&rates, settings);
    let overhead_s = {
        let sizes: Vec<f64> = files.iter().map(|f| f.bytes as f64).collect();
        let times: Vec<f64> = files.iter().map(FileRecord::seconds).collect();
        stats::theil_sen(&sizes, &times).map_or(0.0, |l| l.intercept.max(0.0))
    };
    // Segment k covers series positions [pos_start[k], pos_start[k+1]).
    let pos_start: Vec<usize> = segs
        .iter()
        .enumerate()
        .map(|(k, s)| if k == 0 { 0 } else { kept[s.start] })
        .chain([files.len()])
        .collect();
    let seg_rate = |k: usize| {
        let fs = &files[pos_start[k]..pos_start[k + 1]];
        let b: u64 = fs.iter().map(|f| f.bytes).sum();
        let t: f64 = fs.iter().map(|f| f.seconds()).sum();
        b as f64 / t.max(1e-9)
    };
    let mut out = Vec::new();
    for k in 1..segs.len() {
        let (r1, r2) = (seg_rate(k - 1), seg_rate(k));
        let noise = (
            relative_noise(&files[pos_start[k - 1]..pos_start[k]]),
            relative_noise(&files[pos_start[k]..pos_start[k + 1]]),
        );
        let (onset_bytes, onset_ns, file_pos) =
            locate_onset(series, &kept, segs[k].start, r1, r2, noise, overhead_s);
        // Levels without the file the change happened in (it moved at both rates).
        let without = |a: usize, b: usize| {
            let (mut bytes, mut t) = (0u64, 0.0);
            for (i, f) in files[a..b].iter().enumerate() {
                if a + i != file_pos {
                    bytes += f.bytes;
                    t += f.seconds();
                }
            }
            (t > 0.0).then(|| bytes as f64 / t)
        };
        let r1 = without(pos_start[k - 1], pos_start[k]).unwrap_or(r1);
        let r2 = without(pos_start[k], pos_start[k + 1]).unwrap_or(r2);
        out.push(Change {
            kind: if r2 < r1 {
                EventKind::Drop
            } else {
                EventKind::Recovery
            },
            onset_bytes,
            onset_ns,
            file_pos,
            rate_before_bps: r1,
            rate_after_bps: r2,
            before_ns: (files[pos_start[k - 1]].start_ns, onset_ns),
            after_ns: (onset_ns, files[pos_start[k + 1] - 1].end_ns),
        });
    }
    out
}

/// Relative noise of per-file rates in `files` (MAD σ / median), at least 1 %.
fn relative_noise(files: &[FileRecord]) -> f64 {
    let rates: Vec<f64> = files.iter().map(FileRecord::rate_bps).collect();
    match (stats::mad_sigma(&rates), stats::median(&rates)) {
        (Some(s), Some(m)) if m > 0.0 => (s / m).max(0.01),
        _ => 0.05,
    }
}

/// Files before the first file of the new segment searched for the onset (the last file
/// of the old segment may be a small one left out of the change-point series).
const ONSET_SPAN_BEFORE: usize = 2;
/// Files from the first file of the new segment on searched for the onset.
const ONSET_SPAN_AFTER: usize = 1;

/// Grid points per file when searching for the onset inside the two candidate files.
const ONSET_GRID: usize = 400;

/// Locates the onset to the byte: the change lies in the files around the boundary PELT
/// found (the two change-point files before it and two from it on; small files are left
/// out, as in the change-point series). For each candidate byte position a, each file's
/// expected duration is overhead + (its bytes before a)/r1 + (its bytes after a)/r2
/// (overhead = Theil–Sen intercept of time against size); the onset is the a that
/// minimises the squared relative duration errors, each scaled by its regime's noise (a
/// least-squares fit of one split point to those files).
fn locate_onset(
    series: &Series,
    kept: &[usize],
    first_new_kept: usize,
    r1: f64,
    r2: f64,
    noise: (f64, f64),
    overhead_s: f64,
) -> (u64, i64, usize) {
    let files = &series.files;
    let cand: Vec<usize> = kept[first_new_kept.saturating_sub(ONSET_SPAN_BEFORE)
        ..(first_new_kept + ONSET_SPAN_AFTER + 1).min(kept.len())]
        .to_vec();
    let span_start = series.cum_bytes[cand[0]] as f64;
    let span_end = series.cum_bytes[cand[cand.len() - 1] + 1] as f64;
    let cost = |a: f64| {
        let mut c = 0.0;
        for &pos in &cand {
            let f = &files[pos];
            let start = series.cum_bytes[pos] as f64;
            let old = (a - start).clamp(0.0, f.bytes as f64);
            let new = f.bytes as f64 - old;
            let expected = overhead_s + old / r1 + new / r2;
            let frac_new = new / f.bytes.max(1) as f64;
            let sigma = (1.0 - frac_new) * noise.0 + frac_new * noise.1;
            c += ((f.seconds() - expected) / (expected * sigma)).powi(2);
        }
        c
    };
    let steps = ONSET_GRID * cand.len();
    let mut best = (f64::INFINITY, span_start);
    for i in 0..=steps {
        let a = span_start + (span_end - span_start) * i as f64 / steps as f64;
        let c = cost(a);
        if c < best.0 {
            best = (c, a);
        }
    }
    let onset = best.1;
    let pos = (0..files.len())
        .rev()
        .find(|&p| series.cum_bytes[p] as f64 <= onset && files[p].bytes > 0)
        .unwrap_or(cand[0]);
    let f = &files[pos];
    let old_bytes = (onset - series.cum_bytes[pos] as f64).min(f.bytes as f64);
    let ns = f.start_ns + (old_bytes / r1 * 1e9).round() as i64;
    (onset.round() as u64, ns.min(f.end_ns), pos)
}
