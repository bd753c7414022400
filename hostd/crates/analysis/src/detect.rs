//! Turning change points in per-file throughput into located drops and recoveries.

use crate::changepoint::{self, Settings};
use crate::model::EventKind;
use crate::series::Series;

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

/// A file whose time per byte lies less than this far (as a fraction of the step)
/// from either segment's level is taken as wholly in that segment.
const MIXED_FILE_MARGIN: f64 = 0.2;

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
        let first_new = pos_start[k];
        let (onset_bytes, onset_ns, file_pos) = locate_onset(series, first_new, r1, r2);
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

/// Fraction of a file's bytes moved at the new rate, from its time per byte.
fn new_rate_fraction(seconds: f64, bytes: f64, r1: f64, r2: f64) -> f64 {
    let per_byte = seconds / bytes.max(1.0);
    (per_byte - 1.0 / r1) / (1.0 / r2 - 1.0 / r1)
}

/// Locates the onset inside the file where the rate changed: a file that took
/// T = a/r1 + (b − a)/r2 moved its first a bytes at the old rate. Looks at the last file
/// of the old segment and the first of the new one; a file that is clearly mixed gives
/// the split point, otherwise the boundary between the two files is the onset.
fn locate_onset(series: &Series, first_new: usize, r1: f64, r2: f64) -> (u64, i64, usize) {
    let files = &series.files;
    let split = |pos: usize| {
        let f = &files[pos];
        let frac = new_rate_fraction(f.seconds(), f.bytes as f64, r1, r2);
        (f, frac)
    };
    let at = |pos: usize, frac: f64| {
        let f = &files[pos];
        let old_bytes = (f.bytes as f64 * (1.0 - frac.clamp(0.0, 1.0))).round();
        let ns = f.start_ns + (old_bytes / r1 * 1e9).round() as i64;
        (
            series.cum_bytes[pos] + old_bytes as u64,
            ns.min(f.end_ns),
            pos,
        )
    };
    let (_, f_new) = split(first_new);
    if f_new < 1.0 - MIXED_FILE_MARGIN {
        return at(first_new, f_new);
    }
    if first_new > 0 {
        let (_, f_old) = split(first_new - 1);
        if f_old > MIXED_FILE_MARGIN {
            return at(first_new - 1, f_old);
        }
    }
    (
        series.cum_bytes[first_new],
        files[first_new].start_ns,
        first_new,
    )
}
