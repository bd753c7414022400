//! Stalls: stretches in which a target moved (almost) nothing, found in the run's 100 ms
//! byte counters (`counters.csv`), not in per-file rates — a 2 GB file hides a 4 s stall.
//! See docs/methodology.md, "Stalls".

use crate::series::Series;
use crate::significance::{ALPHA, PERMUTATIONS};
use crate::stats;
use hostd_records::FileRecord;
use rand::seq::SliceRandom;
use rand::SeedableRng;

/// A 100 ms interval below this fraction of the series' median 100 ms rate counts as stalled.
pub const STALL_FRACTION: f64 = 0.1;
/// A stall lasts at least this long, s.
pub const MIN_STALL_S: f64 = 0.5;
/// Block of the permutation test, intervals (0.3 s: keeps the dependence of neighbouring
/// samples; longer blocks would chop a series of frequent stalls into whole stalled blocks).
const STALL_BLOCK: usize = 3;
/// At least this many 100 ms intervals are needed to look for stalls.
const MIN_INTERVALS: usize = 20;

/// One stall: its start and end include the stalled share of the partly stalled 100 ms
/// intervals on either side.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stall {
    /// Start, host ns.
    pub start_ns: i64,
    /// End, host ns.
    pub end_ns: i64,
    /// Series bytes before the stall.
    pub bytes_at_start: u64,
    /// Bytes moved during the stall.
    pub bytes: u64,
    /// Interval of the start: it began after the sample before the first stalled interval
    /// (that interval was not stalled) and before a tenth into the interval after it (host ns).
    pub start_range_ns: (i64, i64),
    /// The same interval in series bytes.
    pub start_range_bytes: (u64, u64),
}

/// The stalls of one series and the test behind them.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesStalls {
    /// Stalls in time order.
    pub stalls: Vec<Stall>,
    /// Median 100 ms rate of the series, bytes/s.
    pub typical_bps: f64,
    /// Stall threshold, bytes/s.
    pub threshold_bps: f64,
    /// Block-permutation p-value of the longest stalled run.
    pub p_value: f64,
    /// Permutations run.
    pub permutations: u32,
}

impl SeriesStalls {
    /// Time of `f` spent in stalls, s.
    pub fn overlap_s(&self, f: &FileRecord) -> f64 {
        self.stalls
            .iter()
            .map(|s| {
                (s.end_ns.min(f.end_ns as i64) - s.start_ns.max(f.start_ns as i64)).max(0) as f64
                    * 1e-9
            })
            .sum()
    }
}

/// Counter value at `t` (linear interpolation; clamped at the ends).
fn bytes_at(c: &[(i64, u64)], t: i64) -> f64 {
    let i = c.partition_point(|&(ts, _)| ts < t);
    if i == 0 {
        return c[0].1 as f64;
    }
    if i >= c.len() {
        return c[c.len() - 1].1 as f64;
    }
    let (t0, b0) = c[i - 1];
    let (t1, b1) = c[i];
    if t1 == t0 {
        return b1 as f64;
    }
    b0 as f64 + (b1 as f64 - b0 as f64) * (t - t0) as f64 / (t1 - t0) as f64
}

fn longest_run(flags: &[bool]) -> usize {
    let (mut best, mut run) = (0, 0);
    for &f in flags {
        run = if f { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

/// Seconds of `[a, b)` covered by the series' files.
fn covered_s(files: &[FileRecord], a: i64, b: i64) -> f64 {
    let first = files.partition_point(|f| (f.end_ns as i64) <= a);
    files[first..]
        .iter()
        .take_while(|f| (f.start_ns as i64) < b)
        .map(|f| ((f.end_ns as i64).min(b) - (f.start_ns as i64).max(a)).max(0) as f64 * 1e-9)
        .sum()
}

/// Finds the stalls of `series` in its target's counter samples; None when there are too
/// few samples, none, or they are not significant.
pub fn find(series: &Series, counter: &[(i64, u64)]) -> Option<SeriesStalls> {
    let (start, end) = (series.start_ns(), series.end_ns());
    let inside: Vec<(i64, u64)> = counter
        .iter()
        .copied()
        .filter(|&(t, _)| t >= start && t <= end)
        .collect();
    if inside.len() < MIN_INTERVALS + 1 {
        return None;
    }
    let base = bytes_at(counter, start);
    let rates: Vec<f64> = inside
        .windows(2)
        .map(|w| (w[1].1 - w[0].1) as f64 / ((w[1].0 - w[0].0).max(1) as f64 * 1e-9))
        .collect();
    let typical = stats::median(&rates)?;
    if typical <= 0.0 {
        return None;
    }
    let threshold = STALL_FRACTION * typical;
    let below: Vec<bool> = rates.iter().map(|&r| r < threshold).collect();
    let mut stalls = Vec::new();
    let mut j = 0;
    while j < below.len() {
        if !below[j] {
            j += 1;
            continue;
        }
        let k0 = j;
        while j < below.len() && below[j] {
            j += 1;
        }
        // Runs touching the first or last interval are warm-up or the final flush.
        if k0 == 0 || j == below.len() {
            continue;
        }
        let (a, b) = (inside[k0].0, inside[j].0);
        let len_s = (b - a) as f64 * 1e-9;
        // Only while a file of this series was in flight (not between phases).
        if len_s < MIN_STALL_S || covered_s(&series.files, a, b) < 0.9 * len_s {
            continue;
        }
        let rel = |v: u64| (v as f64 - base).max(0.0) as u64;
        let (prev_t, prev_b) = inside[k0 - 1];
        let tenth = (a - prev_t) / 10;
        // The stall also covers part of the interval on each side: the share that brings
        // that interval's rate from typical down to what it moved (the stalled rate taken
        // as the run's own mean rate inside the stall).
        let stalled_rate = (inside[j].1 - inside[k0].1) as f64 / ((b - a).max(1) as f64 * 1e-9);
        let share = |r: f64| ((typical - r) / (typical - stalled_rate).max(1.0)).clamp(0.0, 1.0);
        let before = share(rates[k0 - 1]) * (a - prev_t) as f64;
        let after = share(rates[j]) * (inside[j + 1].0 - b) as f64;
        let start = a - before as i64;
        let end = b + after as i64;
        stalls.push(Stall {
            start_ns: start,
            end_ns: end,
            bytes_at_start: (bytes_at(counter, start) - base).max(0.0) as u64,
            bytes: (bytes_at(counter, end) - bytes_at(counter, start)).max(0.0) as u64,
            start_range_ns: (prev_t, a + tenth),
            start_range_bytes: (
                rel(prev_b),
                rel(inside[k0].1
                    + (inside[k0].1 - prev_b) / 10
                    + (inside[k0 + 1].1 - inside[k0].1)),
            ),
        });
    }
    if stalls.is_empty() {
        return None;
    }
    // Could a run this long come from the same intervals in another order?
    let observed = longest_run(&below);
    let l = STALL_BLOCK;
    let blocks: Vec<&[bool]> = below.chunks(l).collect();
    let mut order: Vec<usize> = (0..blocks.len()).collect();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(below.len() as u64);
    let stop_after = (ALPHA * f64::from(PERMUTATIONS + 1)).ceil() as u32;
    let (mut exceed, mut done) = (0u32, 0u32);
    let mut buf = Vec::with_capacity(below.len());
    while done < PERMUTATIONS && exceed < stop_after {
        order.shuffle(&mut rng);
        buf.clear();
        for &b in &order {
            buf.extend_from_slice(blocks[b]);
        }
        done += 1;
        if longest_run(&buf) >= observed {
            exceed += 1;
        }
    }
    let p_value = f64::from(1 + exceed) / f64::from(1 + done);
    (p_value < ALPHA).then_some(SeriesStalls {
        stalls,
        typical_bps: typical,
        threshold_bps: threshold,
        p_value,
        permutations: done,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(start: i64, end: i64) -> Series {
        let files: Vec<FileRecord> = (0..10)
            .map(|i| {
                FileRecord::new(
                    "t",
                    "write",
                    i as u32,
                    (start + (end - start) / 10 * i as i64) as u64,
                    (start + (end - start) / 10 * (i as i64 + 1)) as u64,
                    1,
                )
            })
            .collect();
        crate::series::group(&files).remove(0)
    }

    /// 100 ms counter at `rate(t_s)` bytes/s for `secs` seconds.
    fn counter(secs: f64, rate: impl Fn(f64) -> f64) -> Vec<(i64, u64)> {
        let mut v = vec![(0i64, 0u64)];
        let mut b = 0.0;
        let n = (secs * 10.0) as i64;
        for k in 1..=n {
            let t = k as f64 * 0.1;
            b += rate(t - 0.05) * 0.1;
            v.push((k * 100_000_000, b as u64));
        }
        v
    }

    #[test]
    fn periodic_stalls_are_counted_with_their_period_and_durations() {
        // 1.4 GB/s; from 20 s on a 4 s stall at 30 MB/s every 16 s.
        let c = counter(110.0, |t| {
            if t > 20.0 && (t - 20.0) % 16.0 >= 12.0 {
                30e6
            } else {
                1.4e9 * (1.0 + 0.05 * (t * 7.0).sin())
            }
        });
        let s = find(&series(0, 110_000_000_000), &c).expect("stalls");
        assert_eq!(s.stalls.len(), 5, "{:?}", s.stalls);
        let first = s.stalls[0];
        assert!(
            (first.start_ns - 32_000_000_000).abs() < 20_000_000,
            "{first:?}"
        );
        assert!(((first.end_ns - first.start_ns) as f64 * 1e-9 - 4.0).abs() < 0.05);
        let (lo, hi) = first.start_range_ns;
        assert!(lo <= 32_000_000_000 && 32_000_000_000 <= hi, "{first:?}");
        assert!((first.bytes_at_start as f64 / 1e9 - 44.8).abs() < 0.5);
        assert!(s.p_value < ALPHA);
    }

    #[test]
    fn a_stall_between_samples_gets_its_partial_intervals() {
        // 1.4 GB/s with one stall from 40.35 s to 43.65 s (3.3 s; starts and ends mid-sample).
        let c = counter(80.0, |t| {
            if (40.35..43.65).contains(&t) {
                0.0
            } else {
                1.4e9
            }
        });
        // The counter helper samples rate at interval midpoints; build an exact one instead.
        let exact: Vec<(i64, u64)> = c
            .iter()
            .map(|&(t, _)| {
                let ts = t as f64 * 1e-9;
                let moving = ts.min(40.35) + (ts - 43.65).max(0.0);
                (t, (moving * 1.4e9) as u64)
            })
            .collect();
        let s = find(&series(0, 80_000_000_000), &exact).expect("stall");
        let st = s.stalls[0];
        let d = (st.end_ns - st.start_ns) as f64 * 1e-9;
        assert!((d - 3.3).abs() < 0.02, "{d} {st:?}");
        assert!((st.start_ns as f64 * 1e-9 - 40.35).abs() < 0.01, "{st:?}");
    }

    #[test]
    fn a_steady_counter_and_a_throttle_have_no_stall() {
        let steady = counter(60.0, |t| 1.6e9 * (1.0 + 0.1 * (t * 13.0).sin()));
        assert!(find(&series(0, 60_000_000_000), &steady).is_none());
        let throttled = counter(60.0, |t| if t < 30.0 { 2.3e9 } else { 0.66e9 });
        assert!(find(&series(0, 60_000_000_000), &throttled).is_none());
    }

    #[test]
    fn a_slow_start_or_end_is_no_stall() {
        let c = counter(30.0, |t| {
            if !(1.0..=29.0).contains(&t) {
                1e6
            } else {
                1.5e9
            }
        });
        assert!(find(&series(0, 30_000_000_000), &c).is_none());
    }
}
