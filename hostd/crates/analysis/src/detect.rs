//! Turning change points in per-file throughput into drops and recoveries that the data
//! carries: enough data on both sides, a practical size beyond the series' own wander, a
//! block-permutation significance test, a step or a ramp, and an interval for the onset.
//! See docs/methodology.md ("Change points", "Significance", "Onset and its interval").

use crate::changepoint::{self, Settings};
use crate::series::Series;
use crate::significance;
use crate::stall::SeriesStalls;
use crate::stats;
use hostd_records::cause::EventKind;
use hostd_records::FileRecord;
use std::collections::HashMap;

/// A change in throughput found in one series, before attribution.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// Drop or recovery.
    pub kind: EventKind,
    /// Bytes of the series before the change.
    pub onset_bytes: u64,
    /// Host ns of the change.
    pub onset_ns: i64,
    /// Interval of the onset, bytes.
    pub onset_bytes_range: (u64, u64),
    /// Interval of the onset, host ns.
    pub onset_ns_range: (i64, i64),
    /// Where the new level is reached (= onset for a step), bytes.
    pub settle_bytes: u64,
    /// Where the new level is reached, host ns.
    pub settle_ns: i64,
    /// A ramp, not a step.
    pub gradual: bool,
    /// Block-permutation p-value of the test that accepted the change.
    pub p_value: f64,
    /// Permutations behind it.
    pub permutations: u32,
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

/// Δ(χ²) of the onset's profile-likelihood interval: 10.83 = χ²₁ at 99.9 %.
const INTERVAL_CHI2: f64 = 10.83;
/// Fewest files of a ramp (fewer: a step, the odd file straddling it).
const MIN_RAMP_FILES: usize = 3;
/// Window of the moving median behind the wander estimate, files.
const WANDER_WINDOW: usize = 7;

/// A series in which no change can be told from noise: why, in words.
#[derive(Debug, Clone, PartialEq)]
pub struct TooLittle {
    /// What is missing.
    pub reason: String,
}

/// How much the series' local level wanders inside `x` (one segment), beyond its per-file
/// noise: the 10–90 % range of its 7-file moving median relative to the segment's median,
/// less (in quadrature) the range that independent noise alone gives a 7-file median
/// (2.56 × 1.2533·σ/√7, σ from the MAD of first differences, which a slow drift barely
/// moves). 0 when shorter than three windows (too few medians to tell drift from noise).
pub fn wander(x: &[f64]) -> f64 {
    if x.len() < 3 * WANDER_WINDOW {
        return 0.0;
    }
    let mut meds: Vec<f64> = x
        .windows(WANDER_WINDOW)
        .map(|w| stats::median(w).unwrap_or(0.0))
        .collect();
    meds.sort_by(f64::total_cmp);
    let q = |p: f64| meds[((meds.len() - 1) as f64 * p).round() as usize];
    let level = stats::median(x).unwrap_or(0.0);
    if level <= 0.0 {
        return 0.0;
    }
    let raw = (q(0.9) - q(0.1)) / level;
    let noise = 2.56 * 1.2533 * changepoint::noise_sigma(x) / (WANDER_WINDOW as f64).sqrt() / level;
    (raw * raw - noise * noise).max(0.0).sqrt()
}

/// Prefix sums for the ramp fit: Σx, Σx², Σi·x.
struct Sums {
    s1: Vec<f64>,
    s2: Vec<f64>,
    si: Vec<f64>,
}

impl Sums {
    fn new(x: &[f64]) -> Sums {
        let mut s = Sums {
            s1: vec![0.0],
            s2: vec![0.0],
            si: vec![0.0],
        };
        for (i, v) in x.iter().enumerate() {
            s.s1.push(s.s1[i] + v);
            s.s2.push(s.s2[i] + v * v);
            s.si.push(s.si[i] + i as f64 * v);
        }
        s
    }
    fn sum(&self, a: usize, b: usize) -> f64 {
        self.s1[b] - self.s1[a]
    }
    fn mean(&self, a: usize, b: usize) -> f64 {
        self.sum(a, b) / (b - a).max(1) as f64
    }
    /// Σ(x − mean)² on [a, b).
    fn ss(&self, a: usize, b: usize) -> f64 {
        let n = (b - a) as f64;
        if n <= 0.0 {
            return 0.0;
        }
        let s = self.sum(a, b);
        ((self.s2[b] - self.s2[a]) - s * s / n).max(0.0)
    }
    /// SSE of the model: level mean[a,s) before s, a straight line over [s, e), level
    /// mean[e,c) from e (e = s: a step).
    fn ramp_sse(&self, a: usize, s: usize, e: usize, c: usize) -> f64 {
        let (l1, l2) = (self.mean(a, s), self.mean(e, c));
        let mut sse = self.ss(a, s) + self.ss(e, c);
        if e > s {
            let len = (e - s) as f64;
            let d = l2 - l1;
            let sx = self.sum(s, e);
            let six = self.si[e] - self.si[s];
            // r_i = l1 + d·(i − s + 1)/(len + 1)
            let sxr = l1 * sx + d / (len + 1.0) * (six - (s as f64 - 1.0) * sx);
            let su = len / 2.0;
            let su2 = len * (2.0 * len + 1.0) / (6.0 * (len + 1.0));
            let srr = len * l1 * l1 + 2.0 * l1 * d * su + d * d * su2;
            sse += ((self.s2[e] - self.s2[s]) - 2.0 * sxr + srr).max(0.0);
        }
        sse
    }
}

/// The best ramp (or step) for the change near `b` inside `[a, c)`.
struct Fit {
    s: usize,
    e: usize,
    gradual: bool,
}

/// Most (start, end) pairs a ramp's fit tries one by one. Past it (a change inside a long
/// run of files: 10 000 files either side are 10^8 pairs) the fit tries a grid of about as
/// many pairs, then every pair around the grid's best: proportionate time for a run of
/// 100 000 files, the same fit wherever the error is smooth in the ramp's ends.
const EXHAUSTIVE_RAMP_PAIRS: usize = 250_000;

/// The least-error ramp (error, start, end) with its start in `lo..=b` and its end in
/// `b..=hi` (start ≤ end) over `[a, c)`.
fn best_ramp(
    sums: &Sums,
    a: usize,
    c: usize,
    (lo, b, hi): (usize, usize, usize),
) -> (f64, usize, usize) {
    let search = |starts: &mut dyn Iterator<Item = usize>, ends: &dyn Fn(usize) -> Vec<usize>| {
        let mut best = (f64::INFINITY, b, b);
        for s in starts {
            for e in ends(s) {
                let v = sums.ramp_sse(a, s, e, c);
                if v < best.0 {
                    best = (v, s, e);
                }
            }
        }
        best
    };
    let pairs = (b - lo + 1) * (hi - b + 1);
    if pairs <= EXHAUSTIVE_RAMP_PAIRS {
        return search(&mut (lo..=b), &|s| (b.max(s)..=hi).collect());
    }
    let stride = (pairs as f64 / EXHAUSTIVE_RAMP_PAIRS as f64).sqrt().ceil() as usize;
    // The grid, with both ends of each range on it.
    let grid = |from: usize, to: usize| -> Vec<usize> {
        let mut v: Vec<usize> = (from..=to).step_by(stride).collect();
        if v.last() != Some(&to) {
            v.push(to);
        }
        v
    };
    let coarse = search(&mut grid(lo, b).into_iter(), &|s| grid(b.max(s), hi));
    let (s0, e0) = (coarse.1, coarse.2);
    let fine = search(
        &mut (s0.saturating_sub(stride).max(lo)..=(s0 + stride).min(b)),
        &|s| (b.max(s).max(e0.saturating_sub(stride))..=(e0 + stride).min(hi)).collect(),
    );
    if fine.0 <= coarse.0 {
        fine
    } else {
        coarse
    }
}

fn fit_ramp(x: &[f64], sums: &Sums, a: usize, b: usize, c: usize, settings: &Settings) -> Fit {
    let edge = MIN_RAMP_FILES.max(settings.min_segment);
    let lo = (a + edge).min(b);
    let hi = c.saturating_sub(edge).max(b);
    let mut best_step = (f64::INFINITY, b);
    for s in lo..=hi {
        let v = sums.ramp_sse(a, s, s, c);
        if v < best_step.0 {
            best_step = (v, s);
        }
    }
    let best = best_ramp(sums, a, c, (lo, b, hi));
    // Noise: the larger of the two flat sides' robust σ (a noisy regime must not pass as
    // a ramp fitting better).
    let sigma = changepoint::noise_sigma(&x[a..best.1.max(a + 1)])
        .max(changepoint::noise_sigma(&x[best.2.min(c - 1)..c]))
        .max(1e-12);
    let var = sigma * sigma;
    let gain = (best_step.0 - best.0) / var;
    let gradual =
        best.2 - best.1 >= MIN_RAMP_FILES && gain > INTERVAL_CHI2.max(2.0 * ((c - a) as f64).ln());
    if !gradual {
        return Fit {
            s: best_step.1,
            e: best_step.1,
            gradual: false,
        };
    }
    Fit {
        s: best.1,
        e: best.2,
        gradual: true,
    }
}

/// Per-file durations without the time spent in stalls (stalls are their own events).
fn active_seconds(f: &FileRecord, stalls: Option<&SeriesStalls>) -> f64 {
    let stalled = stalls.map_or(0.0, |s| s.overlap_s(f));
    (f.seconds() - stalled).max(1e-9)
}

/// Finds the drops and recoveries in one series (`Err`: too little data to tell): the
/// change points of the files' rates, pruned until every one that is left is carried by
/// the data, each then located as a step or a ramp.
pub fn changes(
    series: &Series,
    settings: &Settings,
    stalls: Option<&SeriesStalls>,
) -> Result<Vec<Change>, TooLittle> {
    let rates = Rates::of(series, settings, stalls)?;
    let (bounds, accepted) = rates.prune(changepoint::segments(&rates.rates, settings));
    let overhead_s = file_overhead_s(&series.files);
    Ok(bounds
        .windows(3)
        .map(|w| rates.change(w[0], w[1], w[2], accepted[&w[1]], overhead_s))
        .collect())
}

/// What a series' changes are found in: the rates of the files that say something about
/// the drive's rate (not small, not mostly stalled), in series order.
struct Rates<'a> {
    series: &'a Series,
    settings: &'a Settings,
    /// Series positions of the kept files: kept index k ↔ file `kept[k]`.
    kept: Vec<usize>,
    /// Active seconds of each kept file (without its stalls).
    durations: Vec<f64>,
    /// Bytes/s of each kept file.
    rates: Vec<f64>,
    sums: Sums,
}

/// Significance tests already run, by (from, to, block length).
type Tests = HashMap<(usize, usize, usize), significance::TestResult>;

/// What the significance step says of the candidate changes.
enum Significance {
    /// The series as a whole does not reject "no change": none is left.
    NoneOverall,
    /// The candidate at this boundary index is the least significant failing one.
    Weakest(usize),
    /// Every candidate is significant.
    All,
}

impl<'a> Rates<'a> {
    /// The kept files' rates, or why the series is too short to hold a change.
    fn of(
        series: &'a Series,
        settings: &'a Settings,
        stalls: Option<&SeriesStalls>,
    ) -> Result<Rates<'a>, TooLittle> {
        let files = &series.files;
        let span_s = (series.end_ns() - series.start_ns()) as f64 * 1e-9;
        if files.is_empty() {
            return Err(TooLittle {
                reason: "no files".into(),
            });
        }
        let mut sizes: Vec<f64> = files.iter().map(|f| f.bytes as f64).collect();
        let min_bytes = SMALL_FILE_FRACTION * crate::stats::median_in_place(&mut sizes);
        // Files mostly inside a stall say nothing about the drive's rate when it moves.
        let kept: Vec<usize> = (0..files.len())
            .filter(|&i| {
                let f = &files[i];
                f.bytes as f64 >= min_bytes
                    && stalls.is_none_or(|s| s.overlap_s(f) <= 0.5 * f.seconds())
            })
            .collect();
        let need_files = 2 * settings.min_side_files;
        let need_s = 2.0 * settings.min_side_seconds;
        if kept.len() < need_files || span_s < need_s {
            return Err(TooLittle {
                reason: format!(
                    "{} files, {:.2} s (an event needs at least {} files and {:.1} s on each side)",
                    files.len(),
                    span_s,
                    settings.min_side_files,
                    settings.min_side_seconds
                ),
            });
        }
        let durations: Vec<f64> = kept
            .iter()
            .map(|&i| active_seconds(&files[i], stalls))
            .collect();
        let rates: Vec<f64> = kept
            .iter()
            .zip(&durations)
            .map(|(&i, d)| files[i].bytes as f64 / d)
            .collect();
        let sums = Sums::new(&rates);
        Ok(Rates {
            series,
            settings,
            kept,
            durations,
            rates,
            sums,
        })
    }

    /// Prunes the change points' segments until no rule removes a boundary: the
    /// boundaries (0 and n at the ends) and the significance test of each change left.
    fn prune(
        &self,
        segments: Vec<changepoint::Segment>,
    ) -> (Vec<usize>, HashMap<usize, significance::TestResult>) {
        let n = self.rates.len();
        let mut bounds: Vec<usize> = segments.iter().map(|s| s.start).collect();
        bounds.push(n);
        let mut accepted = HashMap::new();
        let mut tests = Tests::new();
        loop {
            let before = bounds.clone();
            if let Some(k) = self.ramp_cut_in_pieces(&bounds) {
                let mid = (bounds[k] + bounds[k + 1]) / 2;
                bounds.splice(k..k + 2, [mid]);
                continue;
            }
            if let Some(k) = self.side_too_short(&bounds) {
                bounds.remove(k);
                continue;
            }
            if let Some(k) = self.too_small(&bounds) {
                bounds.remove(k);
                continue;
            }
            accepted.clear();
            match self.significance(&bounds, &mut tests, &mut accepted) {
                Significance::NoneOverall => {
                    bounds = vec![0, n];
                    continue;
                }
                Significance::Weakest(k) => {
                    bounds.remove(k);
                    continue;
                }
                Significance::All => {}
            }
            if bounds == before {
                break;
            }
        }
        (bounds, accepted)
    }

    /// (0) A ramp cut into pieces: two neighbouring changes in the same direction become
    /// one when a single ramp over them fits as well as the two steps (BIC-type margin).
    /// The index of the first of the two.
    fn ramp_cut_in_pieces(&self, bounds: &[usize]) -> Option<usize> {
        let sums = &self.sums;
        (1..bounds.len().saturating_sub(2)).find(|&k| {
            let (a, b1, b2, c) = (bounds[k - 1], bounds[k], bounds[k + 1], bounds[k + 2]);
            let (m0, m1, m2) = (sums.mean(a, b1), sums.mean(b1, b2), sums.mean(b2, c));
            if (m0 - m1) * (m1 - m2) <= 0.0 {
                return false;
            }
            let steps = sums.ss(a, b1) + sums.ss(b1, b2) + sums.ss(b2, c);
            let edge = MIN_RAMP_FILES.min(b1 - a);
            let mut ramp = f64::INFINITY;
            for s in (a + edge).min(b1)..=b1 {
                for e in b2..=c.saturating_sub(edge.min(c - b2)).max(b2) {
                    ramp = ramp.min(sums.ramp_sse(a, s, e, c));
                }
            }
            let sigma = changepoint::noise_sigma(&self.rates[a..c]).max(1e-12);
            ramp <= steps + 2.0 * ((c - a) as f64).ln() * sigma * sigma
        })
    }

    /// True when kept files `[a, b)` are enough for one side of a change: files, seconds
    /// and share of the series' bytes.
    fn side_ok(&self, a: usize, b: usize) -> bool {
        let settings = self.settings;
        if b - a < settings.min_side_files {
            return false;
        }
        let (files, kept) = (&self.series.files, &self.kept);
        let (fa, fb) = (kept[a], kept[b - 1]);
        let secs = ((files[fb].end_ns as i64) - (files[fa].start_ns as i64)) as f64 * 1e-9;
        let bytes = (self.series.cum_bytes[fb + 1] - self.series.cum_bytes[fa]) as f64;
        let total = self.series.total_bytes() as f64;
        secs >= settings.min_side_seconds && bytes >= settings.min_side_bytes_fraction * total
    }

    /// (1) Both sides long enough: the boundary with the shortest failing side.
    fn side_too_short(&self, bounds: &[usize]) -> Option<usize> {
        let mut worst: Option<(usize, usize)> = None;
        for k in 1..bounds.len() - 1 {
            let (a, b, c) = (bounds[k - 1], bounds[k], bounds[k + 1]);
            if !(self.side_ok(a, b) && self.side_ok(b, c)) {
                let shorter = (b - a).min(c - b);
                if worst.is_none_or(|(_, s)| shorter < s) {
                    worst = Some((k, shorter));
                }
            }
        }
        worst.map(|(k, _)| k)
    }

    /// (2) Practical size: beyond the minimum and beyond the series' own wander on either
    /// side (a ramp's flat parts only). The boundary furthest below what it needs.
    fn too_small(&self, bounds: &[usize]) -> Option<usize> {
        let (rates, sums, settings) = (&self.rates, &self.sums, self.settings);
        let mut weakest: Option<(usize, f64)> = None;
        for k in 1..bounds.len() - 1 {
            let (a, b, c) = (bounds[k - 1], bounds[k], bounds[k + 1]);
            let fit = fit_ramp(rates, sums, a, b, c, settings);
            let (m1, m2) = (sums.mean(a, fit.s), sums.mean(fit.e, c));
            let rel = (m2 - m1).abs() / m1.abs().max(m2.abs()).max(f64::MIN_POSITIVE);
            let w = wander(&rates[a..fit.s]).max(wander(&rates[fit.e..c]));
            let need = settings.min_relative_change.max(settings.wander_factor * w);
            if rel < need && weakest.is_none_or(|(_, r)| rel / need < r) {
                weakest = Some((k, rel / need));
            }
        }
        weakest.map(|(k, _)| k)
    }

    /// (3) Significance: the whole series must reject "no change" (so a change-free series
    /// makes an event with probability ≤ α); then each change is tested on the stretch
    /// between its neighbours, those that pass go into `accepted`, and the least
    /// significant failing one is named.
    fn significance(
        &self,
        bounds: &[usize],
        tests: &mut Tests,
        accepted: &mut HashMap<usize, significance::TestResult>,
    ) -> Significance {
        let n = self.rates.len();
        if bounds.len() > 2 {
            let inner = &bounds[1..bounds.len() - 1];
            if self.test_at(tests, 0, n, inner).p_value >= significance::ALPHA {
                return Significance::NoneOverall;
            }
        }
        let mut weakest: Option<(usize, f64)> = None;
        for k in 1..bounds.len() - 1 {
            let t = self.test_at(tests, bounds[k - 1], bounds[k + 1], &[bounds[k]]);
            if t.p_value >= significance::ALPHA {
                if weakest.is_none_or(|(_, p)| t.p_value > p) {
                    weakest = Some((k, t.p_value));
                }
            } else {
                accepted.insert(bounds[k], t);
            }
        }
        weakest.map_or(Significance::All, |(k, _)| Significance::Weakest(k))
    }

    /// The block-permutation test of kept files `[lo, hi)` against "no change", its block
    /// length decided by the residuals about the candidate levels cut at `inner`.
    fn test_at(
        &self,
        tests: &mut Tests,
        lo: usize,
        hi: usize,
        inner: &[usize],
    ) -> significance::TestResult {
        let (rates, sums) = (&self.rates, &self.sums);
        let mut cuts = vec![lo];
        cuts.extend(inner.iter().copied());
        cuts.push(hi);
        let resid: Vec<f64> = cuts
            .windows(2)
            .flat_map(|w| {
                let m = sums.mean(w[0], w[1]);
                rates[w[0]..w[1]].iter().map(move |v| v - m)
            })
            .collect();
        let l = significance::block_for(&resid);
        *tests.entry((lo, hi, l)).or_insert_with(|| {
            significance::test(
                &rates[lo..hi],
                self.settings.min_side_files,
                l,
                (lo * 31 + hi) as u64,
            )
        })
    }

    /// Σ bytes / Σ active time of kept files `[from, to)`, without the file at series
    /// position `skip` (the file a change happened in moved at both rates).
    fn level(&self, from: usize, to: usize, skip: Option<usize>) -> Option<f64> {
        let (mut bytes, mut t) = (0u64, 0.0);
        for q in from..to {
            if Some(self.kept[q]) != skip {
                bytes += self.series.files[self.kept[q]].bytes;
                t += self.durations[q];
            }
        }
        (t > 0.0).then(|| bytes as f64 / t)
    }

    /// The change at boundary `b` between its neighbours `a` and `c`, located as a ramp or
    /// a step, with its levels and its test.
    fn change(
        &self,
        a: usize,
        b: usize,
        c: usize,
        t: significance::TestResult,
        overhead_s: f64,
    ) -> Change {
        let (series, kept, rates) = (self.series, &self.kept, &self.rates);
        let files = &series.files;
        let n = rates.len();
        let pos_of = |k: usize| if k >= n { files.len() } else { kept[k] };
        let fit = fit_ramp(rates, &self.sums, a, b, c, self.settings);
        let (onset_bytes, onset_ns, file_pos, range_b, settle_b, settle_ns) = if fit.gradual {
            let r1 = self.level(a, fit.s, None).unwrap_or(1.0);
            let r2 = self.level(fit.e, c, None).unwrap_or(1.0);
            let noise = relative_noise(&rates[a..fit.s]).max(relative_noise(&rates[fit.e..c]));
            let r = refine_ramp(
                series,
                kept,
                (a, fit.s, fit.e, c),
                (r1, r2),
                noise,
                overhead_s,
            );
            let pos = series
                .cum_bytes
                .partition_point(|&x| x <= r.onset)
                .saturating_sub(1)
                .min(files.len() - 1);
            (
                r.onset,
                time_at(series, r.onset),
                pos,
                r.range,
                r.settle,
                time_at(series, r.settle),
            )
        } else {
            let r1 = self.level(a, fit.s, None).unwrap_or(1.0);
            let r2 = self.level(fit.s, c, None).unwrap_or(1.0);
            let noise = (
                relative_noise(&rates[a..fit.s]),
                relative_noise(&rates[fit.s..c]),
            );
            let o = locate_onset(series, kept, fit.s, r1, r2, noise, overhead_s);
            (o.bytes, o.ns, o.pos, o.range, o.bytes, o.ns)
        };
        let r1 = self.level(a, fit.s, Some(file_pos)).unwrap_or(1.0);
        let r2 = self.level(fit.e, c, Some(file_pos)).unwrap_or(1.0);
        let range_ns = (
            time_at(series, range_b.0).min(onset_ns),
            time_at(series, range_b.1).max(onset_ns),
        );
        Change {
            kind: if r2 < r1 {
                EventKind::Drop
            } else {
                EventKind::Recovery
            },
            onset_bytes,
            onset_ns,
            onset_bytes_range: (range_b.0.min(onset_bytes), range_b.1.max(onset_bytes)),
            onset_ns_range: range_ns,
            settle_bytes: settle_b.max(onset_bytes),
            settle_ns: settle_ns.max(onset_ns),
            gradual: fit.gradual,
            p_value: t.p_value,
            permutations: t.permutations,
            file_pos,
            rate_before_bps: r1,
            rate_after_bps: r2,
            before_ns: ((files[pos_of(a)].start_ns as i64), onset_ns),
            after_ns: (
                settle_ns.max(onset_ns),
                (files[pos_of(c) - 1].end_ns as i64),
            ),
        }
    }
}

/// The fixed cost of a file in seconds (open, close, allocation), whatever its size: the
/// intercept of a robust line through the files' (size, time), at least 0.
fn file_overhead_s(files: &[FileRecord]) -> f64 {
    let sizes: Vec<f64> = files.iter().map(|f| f.bytes as f64).collect();
    let times: Vec<f64> = files.iter().map(FileRecord::seconds).collect();
    stats::theil_sen(&sizes, &times).map_or(0.0, |l| l.intercept.max(0.0))
}

struct Ramp {
    onset: u64,
    settle: u64,
    range: (u64, u64),
}

/// Seconds to move bytes [x0, x1) when the rate is r1 before `a`, r2 after `b` and linear
/// in between.
fn ramp_time(x0: f64, x1: f64, a: f64, b: f64, r1: f64, r2: f64) -> f64 {
    let mut t = (x1.min(a) - x0).max(0.0) / r1 + (x1 - x0.max(b)).max(0.0) / r2;
    let (lo, hi) = (x0.max(a), x1.min(b));
    if hi > lo {
        let rate = |x: f64| r1 + (r2 - r1) * (x - a) / (b - a);
        t += if (r2 - r1).abs() < 1e-9 * r1 {
            (hi - lo) / r1
        } else {
            (b - a) / (r2 - r1) * (rate(hi) / rate(lo)).ln()
        };
    }
    t
}

/// Grid points per side of the byte-level ramp search.
const RAMP_GRID: usize = 80;

/// Locates a ramp to the byte: start a and end b near the files the index fit chose; each
/// file's expected duration is overhead + ∫ 1/rate over its bytes; (a, b) minimise the
/// squared relative duration errors; the onset's interval is every a whose best b keeps
/// the cost within Δχ² = 10.83 of the minimum. The search spans four files before the
/// index fit's start to two after it (and three before to two after its end).
fn refine_ramp(
    series: &Series,
    kept: &[usize],
    (a, s, e, c): (usize, usize, usize, usize),
    (r1, r2): (f64, f64),
    noise: f64,
    overhead_s: f64,
) -> Ramp {
    let files = &series.files;
    let start = |q: usize| series.cum_bytes[kept[q]] as f64;
    let end = |q: usize| series.cum_bytes[kept[q] + 1] as f64;
    let a_lo = start(s.saturating_sub(4).max(a));
    let a_hi = end((s + 2).min(c - 1));
    let b_lo = start(e.saturating_sub(3).max(s));
    let b_hi = end((e + 2).min(c - 1));
    let cand: Vec<usize> = (s.saturating_sub(5).max(a)..(e + 4).min(c))
        .map(|q| kept[q])
        .collect();
    let cost = |x: f64, y: f64| {
        cand.iter()
            .map(|&p| {
                let f = &files[p];
                let x0 = series.cum_bytes[p] as f64;
                let exp = overhead_s + ramp_time(x0, x0 + f.bytes as f64, x, y, r1, r2);
                ((f.seconds() - exp) / (exp * noise)).powi(2)
            })
            .sum::<f64>()
    };
    let grid = |lo: f64, hi: f64, i: usize| lo + (hi - lo) * i as f64 / RAMP_GRID as f64;
    let mut profile = Vec::with_capacity(RAMP_GRID + 1);
    let mut best = (f64::INFINITY, a_lo, b_hi);
    for i in 0..=RAMP_GRID {
        let x = grid(a_lo, a_hi, i);
        let mut row = f64::INFINITY;
        for j in 0..=RAMP_GRID {
            let y = grid(b_lo, b_hi, j);
            if y <= x {
                continue;
            }
            let v = cost(x, y);
            row = row.min(v);
            if v < best.0 {
                best = (v, x, y);
            }
        }
        profile.push((x, row));
    }
    let step = (a_hi - a_lo) / RAMP_GRID as f64;
    // Scale by the reduced χ² when the files scatter more than the noise estimate says.
    let scale = (best.0 / (cand.len() as f64 - 2.0).max(1.0)).max(1.0);
    let inside: Vec<f64> = profile
        .iter()
        .filter(|p| p.1 - best.0 <= INTERVAL_CHI2 * scale)
        .map(|p| p.0)
        .collect();
    let lo = inside.iter().copied().fold(best.1, f64::min) - step;
    let hi = inside.iter().copied().fold(best.1, f64::max) + step;
    Ramp {
        onset: best.1.round() as u64,
        settle: best.2.round() as u64,
        range: (lo.max(0.0).round() as u64, hi.round() as u64),
    }
}

/// Host ns at which the series had moved `bytes` (linear inside the file holding them).
fn time_at(series: &Series, bytes: u64) -> i64 {
    let files = &series.files;
    let p = series.cum_bytes.partition_point(|&c| c <= bytes);
    let i = p.saturating_sub(1).min(files.len() - 1);
    let f = &files[i];
    let into = bytes.saturating_sub(series.cum_bytes[i]) as f64 / f.bytes.max(1) as f64;
    (f.start_ns as i64)
        + (((f.end_ns as i64) - (f.start_ns as i64)) as f64 * into.clamp(0.0, 1.0)) as i64
}

/// Relative noise of rates for the onset's interval: the larger of the robust (MAD) and the
/// plain standard deviation over the median, raised to its 95 % upper confidence bound
/// (σ·√((n−1)/χ²₀.₀₅(n−1)), Wilson–Hilferty) — a σ estimated from a dozen files can come out
/// low by a third, and an interval built on it would be too narrow; at least 1 %.
fn relative_noise(rates: &[f64]) -> f64 {
    let n = rates.len();
    let (Some(mad), Some(m)) = (stats::mad_sigma(rates), stats::median(rates)) else {
        return 0.05;
    };
    if m <= 0.0 || n < 3 {
        return 0.05;
    }
    let mean = rates.iter().sum::<f64>() / n as f64;
    let sd = (rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
    let k = (n - 1) as f64;
    let h = 2.0 / (9.0 * k);
    let chi2_05 = k * (1.0 - h - 1.645 * h.sqrt()).powi(3);
    let upper = (k / chi2_05.max(1e-9)).sqrt();
    (mad.max(sd) / m * upper).max(0.01)
}

/// Files before the first file of the new segment searched for the onset (the last file
/// of the old segment may be a small one left out of the change-point series).
const ONSET_SPAN_BEFORE: usize = 3;
/// Files from the first file of the new segment on searched for the onset.
const ONSET_SPAN_AFTER: usize = 1;

/// Grid points per file when searching for the onset inside the candidate files.
const ONSET_GRID: usize = 400;

struct Onset {
    bytes: u64,
    ns: i64,
    pos: usize,
    range: (u64, u64),
}

/// Locates a step's onset to the byte: the change lies in the files around the boundary
/// (the three change-point files before it and two from it on). For each candidate byte
/// position a, each file's expected duration is overhead + (its bytes before a)/r1 + (its
/// bytes after a)/r2 (overhead = Theil–Sen intercept of time against size); the onset is
/// the a that minimises Σ((measured − expected)/(expected·σ_rel))², and its interval is
/// every a within Δχ² = 10.83 of that minimum (a 99.9 % profile-likelihood interval).
fn locate_onset(
    series: &Series,
    kept: &[usize],
    first_new_kept: usize,
    r1: f64,
    r2: f64,
    noise: (f64, f64),
    overhead_s: f64,
) -> Onset {
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
    let grid: Vec<(f64, f64)> = (0..=steps)
        .map(|i| {
            let a = span_start + (span_end - span_start) * i as f64 / steps as f64;
            (a, cost(a))
        })
        .collect();
    let best = grid
        .iter()
        .copied()
        .min_by(|x, y| x.1.total_cmp(&y.1))
        .unwrap_or((span_start, 0.0));
    // Scale by the reduced χ² when the files scatter more than the noise estimate says.
    let scale = (best.1 / (cand.len() as f64 - 1.0).max(1.0)).max(1.0);
    let inside: Vec<f64> = grid
        .iter()
        .filter(|g| g.1 - best.1 <= INTERVAL_CHI2 * scale)
        .map(|g| g.0)
        .collect();
    let step = (span_end - span_start) / steps as f64;
    let lo = inside.iter().copied().fold(best.0, f64::min) - step;
    let hi = inside.iter().copied().fold(best.0, f64::max) + step;
    let onset = best.0;
    let pos = (0..files.len())
        .rev()
        .find(|&p| series.cum_bytes[p] as f64 <= onset && files[p].bytes > 0)
        .unwrap_or(cand[0]);
    let f = &files[pos];
    let old_bytes = (onset - series.cum_bytes[pos] as f64).min(f.bytes as f64);
    let ns = (f.start_ns as i64) + (old_bytes / r1 * 1e9).round() as i64;
    // An interval reaching the edge of the searched files also covers the small files left
    // out next to them (the change may lie in one of those): up to the neighbouring kept file.
    let first = first_new_kept.saturating_sub(ONSET_SPAN_BEFORE);
    let last = (first_new_kept + ONSET_SPAN_AFTER).min(kept.len() - 1);
    let outer_lo = first
        .checked_sub(1)
        .map_or(0.0, |k| series.cum_bytes[kept[k] + 1] as f64);
    let outer_hi = kept
        .get(last + 1)
        .map_or(series.total_bytes() as f64, |&p| series.cum_bytes[p] as f64);
    let lo = if lo <= span_start { outer_lo } else { lo };
    let hi = if hi >= span_end { outer_hi } else { hi };
    Onset {
        bytes: onset.round() as u64,
        ns: ns.min(f.end_ns as i64),
        pos,
        range: (lo.round() as u64, hi.round() as u64),
    }
}

#[cfg(test)]
mod tests {

    /// Past the exhaustive limit the grid-then-refine search finds the same ramp as trying
    /// every pair: a noisy 2.0 → 1.0 ramp over files 1200–1800 of 3000.
    #[test]
    fn a_long_ramp_is_fitted_as_trying_every_pair_fits_it() {
        let n = 3000;
        let x: Vec<f64> = (0..n)
            .map(|i| {
                let level = match i {
                    ..1200 => 2.0,
                    1200..1800 => 2.0 - (i - 1200) as f64 / 600.0,
                    _ => 1.0,
                };
                // Deterministic noise of ±0.05.
                level + 0.05 * ((i * 7919 % 101) as f64 / 50.0 - 1.0)
            })
            .collect();
        let sums = Sums::new(&x);
        let (a, b, c) = (0, 1500, n);
        let (lo, hi) = (3, n - 3);
        assert!((b - lo + 1) * (hi - b + 1) > EXHAUSTIVE_RAMP_PAIRS);
        let mut every = (f64::INFINITY, b, b);
        for s in lo..=b {
            for e in b.max(s)..=hi {
                let v = sums.ramp_sse(a, s, e, c);
                if v < every.0 {
                    every = (v, s, e);
                }
            }
        }
        let found = best_ramp(&sums, a, c, (lo, b, hi));
        assert_eq!(
            (found.1, found.2),
            (every.1, every.2),
            "{found:?} {every:?}"
        );
        assert!(
            (1190..1210).contains(&found.1) && (1790..1810).contains(&found.2),
            "{found:?}"
        );
    }

    use super::*;
    use rand::{Rng, SeedableRng};

    /// A series of `n` files of `mb` MB each at rate `rate(i)` GB/s, back to back.
    fn series(n: usize, mb: f64, rate: impl Fn(usize) -> f64) -> Series {
        let mut t = 0i64;
        let files: Vec<FileRecord> = (0..n)
            .map(|i| {
                let bytes = (mb * 1e6) as u64;
                let d = (bytes as f64 / (rate(i) * 1e9) * 1e9) as i64;
                let f = FileRecord::new("t", "write", i as u32, (t) as u64, (t + d) as u64, bytes);
                t += d;
                f
            })
            .collect();
        crate::series::group(&files).remove(0)
    }

    fn jitter(seed: u64, j: f64) -> impl Fn(usize) -> f64 {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let v: Vec<f64> = (0..10_000).map(|_| 1.0 + rng.gen_range(-j..j)).collect();
        move |i| v[i]
    }

    #[test]
    fn a_short_run_is_too_little_data() {
        let s = series(12, 30.0, |_| 1.5);
        let e = changes(&s, &Settings::default(), None).unwrap_err();
        assert!(e.reason.starts_with("12 files, 0.24 s"), "{}", e.reason);
    }

    #[test]
    fn forty_percent_step_with_thirty_files_a_side_is_found_with_an_interval() {
        for seed in 0..10 {
            let j = jitter(seed, 0.05);
            let s = series(60, 500.0, |i| if i < 30 { 1.0 } else { 0.6 } * j(i));
            let c = changes(&s, &Settings::default(), None).unwrap();
            assert_eq!(c.len(), 1, "seed {seed}: {c:?}");
            let c = &c[0];
            assert_eq!(c.kind, EventKind::Drop);
            assert!(!c.gradual);
            assert!(c.p_value < 0.01);
            let truth = 15_000_000_000u64;
            assert!(
                c.onset_bytes_range.0 <= truth && truth <= c.onset_bytes_range.1,
                "{c:?}"
            );
            assert!(c.onset_bytes.abs_diff(truth) < 500_000_000, "{c:?}");
        }
    }

    #[test]
    fn a_change_near_the_edges_or_small_or_wandering_is_no_event() {
        for seed in 0..10 {
            let j = jitter(seed, 0.05);
            // Last 5 files slow (final flush): fewer than 8 files on that side.
            let s = series(60, 500.0, |i| if i < 55 { 1.0 } else { 0.5 } * j(i));
            assert!(changes(&s, &Settings::default(), None).unwrap().is_empty());
            // A 12 % step.
            let s = series(80, 500.0, |i| if i < 40 { 1.0 } else { 0.88 } * j(i));
            assert!(changes(&s, &Settings::default(), None).unwrap().is_empty());
            // Wandering by ±7 % (sinusoid over the run).
            let s = series(200, 500.0, |i| {
                (1.0 + 0.07 * (i as f64 / 200.0 * 2.0 * std::f64::consts::PI * 1.5).sin()) * j(i)
            });
            let c = changes(&s, &Settings::default(), None).unwrap();
            assert!(c.is_empty(), "seed {seed}: {c:?}");
        }
    }

    #[test]
    fn a_ramp_is_gradual_with_onset_where_it_starts_and_where_it_settles() {
        for seed in 0..10 {
            let j = jitter(seed, 0.03);
            let s = series(200, 500.0, |i| {
                let l = if i < 80 {
                    2.0
                } else if i < 120 {
                    2.0 - (i - 80) as f64 / 40.0
                } else {
                    1.0
                };
                l * j(i)
            });
            let c = changes(&s, &Settings::default(), None).unwrap();
            assert_eq!(c.len(), 1, "seed {seed}: {c:?}");
            let c = &c[0];
            assert!(c.gradual, "{c:?}");
            assert!(
                c.onset_bytes.abs_diff(40_000_000_000) <= 1_500_000_000,
                "{c:?}"
            );
            assert!(
                c.settle_bytes.abs_diff(60_000_000_000) <= 2_000_000_000,
                "{c:?}"
            );
            assert!(
                c.onset_bytes_range.0 <= 40_000_000_000 && 40_000_000_000 <= c.onset_bytes_range.1,
                "{c:?}"
            );
        }
    }
}
