//! What the change-point detection looks at: spans of throughput, each with its time and the
//! series' bytes before it — one per file (the per-file view), or one per interval of the
//! target's byte counters (the throughput over time). The search, the cost, the test and the
//! onset interval in `detect` run on either. See docs/methodology.md, "Change points".

use crate::changepoint::noise_sigma;
use crate::series::Series;
use crate::stall::SeriesStalls;
use crate::stats;
use hostd_records::events::View;

/// One span of throughput: a file or an interval of the byte counters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    /// Start, host ns.
    pub start_ns: i64,
    /// End, host ns.
    pub end_ns: i64,
    /// Bytes of the series before the span.
    pub bytes_before: u64,
    /// Bytes the span moved.
    pub bytes: u64,
    /// Seconds in which it moved them (its length less the time spent in stalls).
    pub active_s: f64,
}

impl Span {
    /// Bytes of the series at its end.
    pub fn bytes_after(&self) -> u64 {
        self.bytes_before + self.bytes
    }
}

/// A series' spans in one view, those that say something about the drive's sustained rate.
#[derive(Debug, Clone)]
pub struct Observations {
    /// The view they come from.
    pub view: View,
    /// The spans kept, in series order.
    pub spans: Vec<Span>,
    /// The robust rate of each span, bytes/s: its bytes over its active time, clipped to its neighbours' median ± [`CLIP_SIGMAS`] σ (a file taken in
    /// one burst by a buffer moves the median of its neighbours no more than any other).
    pub rates: Vec<f64>,
    /// Fixed cost of a span, s (the per-file overhead; 0 for intervals).
    pub overhead_s: f64,
    /// Fewest spans on each side of a change.
    pub min_side: usize,
    /// Spans averaged into one point before the wander of a segment is measured (intervals
    /// are noisier than files: their wander is that of half-second means).
    pub wander_group: usize,
    /// Bytes of the whole series.
    pub total_bytes: u64,
    /// Spans before any was left out (files, or intervals).
    pub all: usize,
    /// Seconds from the series' first start to its last end.
    pub span_s: f64,
    /// Spans left out, and why, in words (for the other view's reason).
    pub left_out: Vec<String>,
    /// Rates clipped as outliers (bursts or hiccups).
    pub clipped: usize,
    /// (series bytes, host ns) points at which the series' position is known, in order.
    track: Vec<(u64, i64)>,
}

/// Rates further than this many robust σ from the median of their neighbours are clipped.
pub const CLIP_SIGMAS: f64 = 4.0;
/// Neighbours (with the span) of the moving median the clipping is measured from.
const CLIP_WINDOW: usize = 7;
/// Most intervals in the throughput-over-time view: longer runs get coarser intervals.
pub const MAX_INTERVALS: usize = 1000;
/// Files smaller than this fraction of the series' median size are left out of the per-file
/// view: their rate is mostly per-file cost (open, fsync), and the onset search, counting
/// files, would lose reach over them. (The throughput over time needs no such cut.)
pub const SMALL_FILE_FRACTION: f64 = 0.1;
/// An interval needs files of the series in flight for at least this share of it.
const MIN_COVER: f64 = 0.5;
/// Fewest seconds on each side of a change in the throughput over time.
const MIN_SIDE_S: f64 = 0.5;
/// Fewest intervals on each side of a change in the throughput over time.
const MIN_SIDE_INTERVALS: usize = 5;

/// Host ns at `bytes` on a track of (bytes, ns) points (linear between points; the first
/// point at or after a run of equal bytes).
pub fn time_on_track(track: &[(u64, i64)], bytes: u64) -> i64 {
    let i = track.partition_point(|&(b, _)| b <= bytes);
    if i == 0 {
        return track.first().map_or(0, |p| p.1);
    }
    if i >= track.len() {
        return track[track.len() - 1].1;
    }
    let ((b0, t0), (b1, t1)) = (track[i - 1], track[i]);
    if b1 == b0 {
        return t0;
    }
    t0 + ((t1 - t0) as f64 * (bytes - b0) as f64 / (b1 - b0) as f64) as i64
}

impl Observations {
    /// Host ns at which the series had moved `bytes`.
    pub fn time_at(&self, bytes: u64) -> i64 {
        time_on_track(&self.track, bytes)
    }

    /// The per-file view: each file a span, its time less its stalls. Files more than half
    /// inside stalls (stalls are their own event) and small files (under
    /// [`SMALL_FILE_FRACTION`] of the median size) are left out.
    pub fn per_file(
        series: &Series,
        stalls: Option<&SeriesStalls>,
        min_side: usize,
    ) -> Observations {
        let files = &series.files;
        let overhead_s = file_overhead_s(series);
        let (mut spans, mut left_out) = (Vec::new(), Vec::new());
        let (mut stalled, mut costly) = (0, 0);
        let mut sizes: Vec<f64> = files.iter().map(|f| f.bytes as f64).collect();
        let median = stats::median_in_place(&mut sizes);
        for (i, f) in files.iter().enumerate() {
            let in_stalls = stalls.map_or(0.0, |s| s.overlap_s(f));
            let active_s = (f.seconds() - in_stalls).max(1e-9);
            if in_stalls > 0.5 * f.seconds() {
                stalled += 1;
            } else if (f.bytes as f64) < SMALL_FILE_FRACTION * median || f.bytes == 0 {
                costly += 1;
            } else {
                spans.push(Span {
                    start_ns: f.start_ns as i64,
                    end_ns: f.end_ns as i64,
                    bytes_before: series.cum_bytes[i],
                    bytes: f.bytes,
                    active_s,
                });
            }
        }
        if costly > 0 {
            left_out.push(format!(
                "{costly} files under a tenth of the median size left out"
            ));
        }
        if stalled > 0 {
            left_out.push(format!("{stalled} files left out as mostly stalled"));
        }
        let track = files
            .iter()
            .enumerate()
            .flat_map(|(i, f)| {
                [
                    (series.cum_bytes[i], f.start_ns as i64),
                    (series.cum_bytes[i + 1], f.end_ns as i64),
                ]
            })
            .collect();
        let mut obs = Observations::new(
            View::PerFile,
            spans,
            overhead_s,
            min_side,
            series,
            left_out,
            track,
        );
        obs.all = files.len();
        obs
    }

    /// The throughput over time: the target's byte counter (host ns, cumulative bytes of all
    /// its phases) cut to the series' span, in intervals of at least the counter's own step
    /// and at most [`MAX_INTERVALS`] of them. Intervals in which the series' files were in
    /// flight less than half the time (between phases) or that are mostly stalled are left
    /// out. None without enough samples.
    pub fn over_time(
        series: &Series,
        counter: &[(i64, u64)],
        stalls: Option<&SeriesStalls>,
    ) -> Option<Observations> {
        let (start, end) = (series.start_ns(), series.end_ns());
        let first = counter.partition_point(|&(t, _)| t < start);
        let last = counter.partition_point(|&(t, _)| t <= end);
        let inside = counter.get(first.saturating_sub(1)..last.min(counter.len()))?;
        if inside.len() < 2 * MIN_SIDE_INTERVALS + 1 {
            return None;
        }
        let mut steps: Vec<f64> = inside
            .windows(2)
            .map(|w| (w[1].0 - w[0].0) as f64)
            .collect();
        let step = stats::median_in_place(&mut steps).max(1.0);
        let width = step.max((end - start) as f64 / MAX_INTERVALS as f64);
        let base = inside[0].1;
        let mut track: Vec<(u64, i64)> = inside
            .iter()
            .map(|&(t, b)| (b.saturating_sub(base), t))
            .collect();
        track.dedup_by_key(|p| p.0);
        let (mut spans, mut between, mut stalled) = (Vec::new(), 0, 0);
        let mut j = 0;
        while j + 1 < inside.len() {
            let mut k = j + 1;
            while k + 1 < inside.len() && ((inside[k].0 - inside[j].0) as f64) < 0.999 * width {
                k += 1;
            }
            let ((t0, b0), (t1, b1)) = (inside[j], inside[k]);
            j = k;
            let len_s = (t1 - t0) as f64 * 1e-9;
            if len_s <= 0.0 {
                continue;
            }
            let in_stalls = stalls.map_or(0.0, |s| s.overlap_span_s(t0, t1));
            if covered_s(series, t0, t1) < MIN_COVER * len_s {
                between += 1;
            } else if in_stalls > 0.5 * len_s {
                stalled += 1;
            } else {
                spans.push(Span {
                    start_ns: t0,
                    end_ns: t1,
                    bytes_before: b0.saturating_sub(base),
                    bytes: b1.saturating_sub(b0),
                    active_s: (len_s - in_stalls).max(1e-9),
                });
            }
        }
        let mut left_out = Vec::new();
        if between > 0 {
            left_out.push(format!(
                "{between} intervals left out with files in flight less than half the time"
            ));
        }
        if stalled > 0 {
            left_out.push(format!("{stalled} intervals left out as mostly stalled"));
        }
        let min_side = MIN_SIDE_INTERVALS.max((MIN_SIDE_S * 1e9 / width).ceil() as usize);
        let all = spans.len() + between + stalled;
        let mut obs = Observations::new(
            View::OverTime,
            spans,
            0.0,
            min_side,
            series,
            left_out,
            track,
        );
        obs.all = all;
        Some(obs)
    }

    fn new(
        view: View,
        spans: Vec<Span>,
        overhead_s: f64,
        min_side: usize,
        series: &Series,
        left_out: Vec<String>,
        track: Vec<(u64, i64)>,
    ) -> Observations {
        let raw: Vec<f64> = spans.iter().map(|s| s.bytes as f64 / s.active_s).collect();
        let (rates, clipped) = clip_outliers(&raw);
        Observations {
            view,
            spans,
            rates,
            overhead_s,
            min_side,
            wander_group: match view {
                View::OverTime => min_side,
                _ => 1,
            },
            total_bytes: series.total_bytes(),
            all: 0,
            span_s: (series.end_ns() - series.start_ns()) as f64 * 1e-9,
            left_out,
            clipped,
            track,
        }
    }
}

/// `x` with every value further than [`CLIP_SIGMAS`] robust σ (MAD of first differences)
/// from the median of its [`CLIP_WINDOW`] neighbours moved to that bound (a Huber-type
/// robust cost: one file at bus speed weighs no more than a file a few σ fast), and the
/// number clipped.
pub fn clip_outliers(x: &[f64]) -> (Vec<f64>, usize) {
    let n = x.len();
    let sigma = noise_sigma(x);
    if n < CLIP_WINDOW || sigma <= 0.0 {
        return (x.to_vec(), 0);
    }
    let h = CLIP_WINDOW / 2;
    let mut clipped = 0;
    let out = (0..n)
        .map(|i| {
            let lo = i.saturating_sub(h).min(n - CLIP_WINDOW);
            let m = stats::median(&x[lo..lo + CLIP_WINDOW]).unwrap_or(x[i]);
            let bound = CLIP_SIGMAS * sigma;
            let v = x[i].clamp(m - bound, m + bound);
            if v != x[i] {
                clipped += 1;
            }
            v
        })
        .collect();
    (out, clipped)
}

/// The fixed cost of a file in seconds (open, close, allocation), whatever its size: the
/// intercept of a robust line through the files' (size, time), at least 0.
pub fn file_overhead_s(series: &Series) -> f64 {
    let sizes: Vec<f64> = series.files.iter().map(|f| f.bytes as f64).collect();
    let times: Vec<f64> = series.files.iter().map(|f| f.seconds()).collect();
    stats::theil_sen(&sizes, &times).map_or(0.0, |l| l.intercept.max(0.0))
}

/// Seconds of `[a, b)` covered by the series' files.
pub fn covered_s(series: &Series, a: i64, b: i64) -> f64 {
    let files = &series.files;
    let first = files.partition_point(|f| (f.end_ns as i64) <= a);
    files[first..]
        .iter()
        .take_while(|f| (f.start_ns as i64) < b)
        .map(|f| ((f.end_ns as i64).min(b) - (f.start_ns as i64).max(a)).max(0) as f64 * 1e-9)
        .sum()
}
