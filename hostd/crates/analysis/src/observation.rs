//! What the change-point detection looks at: spans of throughput, each with its time and the
//! series' bytes before it — one per file (the per-file view), or one per interval of the
//! target's byte counters (the throughput over time). The search, the cost, the test and the
//! onset interval in `detect` run on either. See docs/methodology.md, "Change points".

use crate::changepoint::noise_sigma;
use crate::series::Series;
use crate::settings::{
    CLIP_SIGMAS, CLIP_WINDOW, MAX_INTERVALS, MAX_SHARED, MIN_COVER, MIN_SIDE_INTERVALS, MIN_SIDE_S,
    SMALL_FILE_FRACTION,
};
use crate::stall::SeriesStalls;
use crate::stats;
use hostd_records::events::View;
use hostd_records::FileRecord;

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
    /// out, and so are those more than [`MAX_SHARED`] inside `beside` (the merged stretches
    /// in which another target's files were in flight, when others shared the link: each
    /// start and end of another's file moves this target's rate, so the view searches the
    /// stretches it had the link alone). None without enough samples.
    pub fn over_time(
        series: &Series,
        counter: &[(i64, u64)],
        stalls: Option<&SeriesStalls>,
        beside: &[(i64, i64)],
    ) -> Option<Observations> {
        let (start, end) = (series.start_ns(), series.end_ns());
        let inside = phase_counter(series, counter)?;
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
        let (mut spans, mut between, mut stalled, mut shared) = (Vec::new(), 0, 0, 0);
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
            } else if overlap_s(beside, t0, t1) > MAX_SHARED * len_s {
                shared += 1;
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
        if shared > 0 {
            left_out.push(format!(
                "{shared} intervals left out while another target's files were in flight"
            ));
        }
        let min_side = MIN_SIDE_INTERVALS.max((MIN_SIDE_S * 1e9 / width).ceil() as usize);
        let all = spans.len() + between + stalled + shared;
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

/// The target's counter over the series alone: the samples strictly inside its span, between
/// two points made at its first start and last end ([`phase_base`], and that plus the series'
/// bytes). A sample interval that straddles a phase boundary also holds the other phase's
/// bytes (a fast read just before a write fills most of it); cut at the boundary, the
/// series' cumulative bytes match the per-file view's at every file end to within one
/// interval of the series' own rate. None without samples or files.
pub fn phase_counter(series: &Series, counter: &[(i64, u64)]) -> Option<Vec<(i64, u64)>> {
    let (start, end) = (series.start_ns(), series.end_ns());
    let first = counter.partition_point(|&(t, _)| t <= start);
    let last = counter.partition_point(|&(t, _)| t < end).max(first);
    if counter.is_empty() || end <= start {
        return None;
    }
    let base = phase_base(series, counter);
    let before = counter[..last].last().map_or(base, |s| s.1.max(base));
    let after = (base + series.total_bytes()).max(before);
    let end_bytes = counter
        .get(last)
        .map_or(after, |s| after.min(s.1.max(before)));
    let mut out = Vec::with_capacity(last.saturating_sub(first) + 2);
    out.push((start, base));
    out.extend(counter[first..last].iter().map(|&(t, b)| (t, b.max(base))));
    out.push((end, end_bytes));
    Some(out)
}

/// The target's counter at the series' first start: the median, over the series' file
/// starts and ends whose counter interval lies wholly inside the series' span, of the
/// counter there (linear within the interval) less the series' bytes the files give there.
/// Each estimate is off by less than that interval's bytes of this series alone. Without
/// such a point (a series shorter than two intervals, or one large file), the counter at
/// the first sample after the start less the files' bytes there (linear within the file in
/// flight). Held between the samples either side of the start.
fn phase_base(series: &Series, counter: &[(i64, u64)]) -> u64 {
    let (start, end) = (series.start_ns(), series.end_ns());
    let first = counter.partition_point(|&(t, _)| t <= start);
    let lo = first.checked_sub(1).map_or(0, |i| counter[i].1);
    let Some(&(t1, hi)) = counter.get(first) else {
        return lo;
    };
    let mut estimates: Vec<f64> = Vec::new();
    for (i, f) in series.files.iter().enumerate() {
        for (t, bytes) in [
            (f.start_ns as i64, series.cum_bytes[i]),
            (f.end_ns as i64, series.cum_bytes[i + 1]),
        ] {
            let b = counter.partition_point(|&(ts, _)| ts < t);
            let (Some(&(t0, c0)), Some(&(t1, c1))) = (
                b.checked_sub(1).and_then(|a| counter.get(a)),
                counter.get(b),
            ) else {
                continue;
            };
            if t0 < start || t1 > end || t1 <= t0 {
                continue;
            }
            let at = c0 as f64 + (c1 - c0) as f64 * (t - t0) as f64 / (t1 - t0) as f64;
            estimates.push(at - bytes as f64);
        }
    }
    let base = if estimates.is_empty() {
        hi as f64 - series_bytes_at(series, t1) as f64
    } else {
        stats::median_in_place(&mut estimates)
    };
    (base.round().max(0.0) as u64).clamp(lo, hi.max(lo))
}

/// The series' bytes at host ns `t` as its files give them: whole files ended by then, and
/// the file in flight pro rata of its time.
fn series_bytes_at(series: &Series, t: i64) -> u64 {
    let files = &series.files;
    let i = files.partition_point(|f| (f.end_ns as i64) <= t);
    let done = series.cum_bytes[i.min(files.len())];
    match files.get(i) {
        Some(f) if (f.start_ns as i64) < t && f.end_ns > f.start_ns => {
            let share = (t - f.start_ns as i64) as f64 / (f.end_ns - f.start_ns) as f64;
            done + (f.bytes as f64 * share) as u64
        }
        _ => done,
    }
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

/// Seconds of `[a, b)` inside the sorted, disjoint stretches `busy` (host ns).
pub fn overlap_s(busy: &[(i64, i64)], a: i64, b: i64) -> f64 {
    let first = busy.partition_point(|&(_, e)| e <= a);
    busy[first..]
        .iter()
        .take_while(|&&(s, _)| s < b)
        .map(|&(s, e)| (e.min(b) - s.max(a)).max(0) as f64 * 1e-9)
        .sum()
}

/// The stretches in which any of `files` were in flight (host ns), sorted and merged.
pub fn busy_stretches<'a>(files: impl IntoIterator<Item = &'a FileRecord>) -> Vec<(i64, i64)> {
    let mut v: Vec<(i64, i64)> = files
        .into_iter()
        .map(|f| (f.start_ns as i64, f.end_ns as i64))
        .filter(|(s, e)| e > s)
        .collect();
    v.sort_unstable();
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(v.len());
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use hostd_records::FileRecord;
    use rand::{Rng, SeedableRng};

    const MS: i64 = 1_000_000;

    #[test]
    fn busy_stretches_merge_and_overlap_counts_only_inside_them() {
        let f = |s: i64, e: i64| FileRecord::new("b", "write", 0, s as u64, e as u64, 1);
        let busy = busy_stretches(&[f(500, 700), f(0, 100), f(50, 200), f(900, 900)]);
        assert_eq!(busy, [(0, 200), (500, 700)]);
        assert!((overlap_s(&busy, 100, 600) - 200e-9).abs() < 1e-15);
        assert_eq!(overlap_s(&busy, 200, 500), 0.0);
        assert_eq!(overlap_s(&[], 0, 1000), 0.0);
    }

    /// A write phase of 2–16 MB files at `rate` bytes/s from `start` (host ns), with its
    /// target's 100 ms counter: `before` bytes of an earlier phase, the last `tail` of them
    /// moved in the `tail_ns` just before the write began.
    fn write_after_fast_read(
        start: i64,
        rate: f64,
        before: u64,
        tail: u64,
        tail_ns: i64,
    ) -> (Series, Vec<(i64, u64)>) {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(44);
        let mut files = Vec::new();
        let mut t = start;
        for i in 0..80u32 {
            let bytes: u64 = rng.gen_range(2_000_000..16_000_000);
            let end = t + (bytes as f64 / rate * 1e9) as i64;
            files.push(FileRecord::new(
                "t",
                "write-25%",
                i,
                t as u64,
                end as u64,
                bytes,
            ));
            t = end;
        }
        let series = crate::series::group(&files).remove(0);
        let phase_bytes = |at: i64| super::series_bytes_at(&series, at);
        let earlier = |at: i64| {
            let from = start - tail_ns;
            let share = ((at - from) as f64 / tail_ns as f64).clamp(0.0, 1.0);
            before - tail + (tail as f64 * share) as u64
        };
        let counter = (0..=(t / (100 * MS) + 2))
            .map(|k| {
                let at = k * 100 * MS;
                (at, earlier(at) + phase_bytes(at))
            })
            .collect();
        (series, counter)
    }

    #[test]
    fn the_over_time_view_counts_only_its_phase_bytes() {
        // issue 44: a verify phase read 27.3 MB in the 80 ms before the write began, in the
        // write's first 100 ms interval; given to the write, it put every later byte of the
        // write 27.3 MB (here 0.27 s at 100 MB/s) late.
        let rate = 100e6;
        let (series, counter) =
            write_after_fast_read(1080 * MS, rate, 500_000_000, 27_300_000, 80 * MS);
        let obs = Observations::over_time(&series, &counter, None, &[]).expect("a view over time");
        let bin_bytes = (rate * 0.1) as i64;
        for (i, f) in series.files.iter().enumerate() {
            let at = obs.time_at(series.cum_bytes[i + 1]);
            let off_bytes = ((at - f.end_ns as i64) as f64 * 1e-9 * rate) as i64;
            assert!(
                off_bytes.abs() <= bin_bytes,
                "file {i}: the over-time view reaches its end bytes {off_bytes} B away from the file's end"
            );
        }
        // The spans hold the phase's bytes and no more, and start at its first byte.
        let moved: u64 = obs.spans.iter().map(|s| s.bytes).sum();
        assert!(
            moved <= series.total_bytes(),
            "{moved} > {}",
            series.total_bytes()
        );
        assert_eq!(obs.spans[0].start_ns, series.start_ns());
        assert_eq!(obs.spans[0].bytes_before, 0);
        let first_rate = obs.rates[0];
        assert!(
            (first_rate - rate).abs() < 0.1 * rate,
            "first interval {first_rate:.3e} B/s"
        );
    }

    #[test]
    fn the_phase_base_holds_without_an_earlier_phase_and_with_one_large_file() {
        // No earlier phase: the base is the counter's own zero.
        let (series, counter) = write_after_fast_read(1000 * MS, 200e6, 0, 0, 1);
        assert_eq!(phase_base(&series, &counter), 0);
        // One 1 GB file: no file end with an interval inside the series; the base comes from
        // the file's own progress at the first sample.
        let f = FileRecord::new(
            "t",
            "write",
            0,
            (1050 * MS) as u64,
            (6050 * MS) as u64,
            1_000_000_000,
        );
        let series = crate::series::group(&[f]).remove(0);
        let counter: Vec<(i64, u64)> = (0..70)
            .map(|k| {
                let at = k * 100 * MS;
                (at, 7_000_000 + series_bytes_at(&series, at))
            })
            .collect();
        assert_eq!(phase_base(&series, &counter), 7_000_000);
    }
}
