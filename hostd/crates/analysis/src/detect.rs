//! Turning change points in a series' throughput — its spans in either view, the per-file
//! rates or the throughput over time (`observation`) — into drops and recoveries that the
//! data carries: enough data on both sides, a practical size beyond the series' own wander,
//! a block-permutation significance test, a step or a ramp, and an interval for the onset.
//! One search, one cost, one test and one onset interval serve both views.
//! See docs/methodology.md ("Change points", "Significance", "Onset and its interval").

use crate::changepoint;
use crate::observation::Observations;
use crate::onset::{locate_onset, refine_ramp, relative_noise, Onset};
use crate::ramp_fit::{fit_ramp, PrefixSums};
use crate::settings::{Settings, MIN_RAMP_FILES, TRANSIENT_S, WANDER_WINDOW};
use crate::significance;
use crate::stats;
use hostd_records::cause::EventKind;
use hostd_records::events::View;
use std::collections::HashMap;

/// A change in throughput found in one series, before attribution.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// Drop or recovery.
    pub kind: EventKind,
    /// Where it began, with its interval.
    pub onset: Onset,
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
    /// The view that found it.
    pub view: View,
    /// Throughput of the segment before (Σ bytes / Σ time), bytes/s.
    pub rate_before_bps: f64,
    /// Throughput of the segment after, bytes/s.
    pub rate_after_bps: f64,
    /// Time span of the segment before: (first start, onset) host ns.
    pub before_ns: (i64, i64),
    /// Time span of the segment after: (onset, last end) host ns.
    pub after_ns: (i64, i64),
}

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

/// The means of consecutive groups of `g` values (the last group may be shorter).
fn group_means(x: &[f64], g: usize) -> Vec<f64> {
    if g <= 1 {
        return x.to_vec();
    }
    x.chunks(g)
        .map(|c| c.iter().sum::<f64>() / c.len() as f64)
        .collect()
}

/// A candidate change a rule removed: where (series bytes) and which rule, in words.
#[derive(Debug, Clone, PartialEq)]
pub struct Removed {
    /// Series bytes at the candidate.
    pub bytes: u64,
    /// The rule that removed it.
    pub rule: String,
}

/// The changes a view found, and the candidates its rules removed.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// Drops and recoveries, in series order.
    pub changes: Vec<Change>,
    /// Candidates removed by the rules, in the order removed.
    pub removed: Vec<Removed>,
}

/// Finds the drops and recoveries in one view of a series (`Err`: too little data to
/// tell): the change points of its spans' rates, pruned until every one that is left is
/// carried by the data, each then located as a step or a ramp.
pub fn changes(obs: &Observations, settings: &Settings) -> Result<Found, TooLittle> {
    let detector = ChangeDetector::of(obs, settings)?;
    let mut removed = Vec::new();
    let (bounds, accepted) = detector.prune(
        changepoint::segments(&detector.rates, settings),
        &mut removed,
    );
    let mut changes = Vec::new();
    for w in bounds.windows(3) {
        let c = detector.change(w[0], w[1], w[2], accepted[&w[1]]);
        // The levels the event reports (bytes over time moving them) must differ by the
        // practical minimum too: the robust rates the rules judged can differ where the
        // bytes do not (lumpy 100 ms intervals of a steady device).
        let (r1, r2) = (c.rate_before_bps, c.rate_after_bps);
        let rel = (r2 - r1).abs() / r1.abs().max(r2.abs()).max(f64::MIN_POSITIVE);
        if rel < settings.min_relative_change {
            removed.push(Removed {
                bytes: c.onset.bytes,
                rule: format!(
                    "its levels {:.0} → {:.0} MB/s differ by {:.1} %, below the {:.0} % a change needs",
                    r1 / 1e6,
                    r2 / 1e6,
                    rel * 100.0,
                    settings.min_relative_change * 100.0
                ),
            });
        } else {
            changes.push(c);
        }
    }
    Ok(Found { changes, removed })
}

/// The detector of one view's changes: the robust rates of its spans (and their prefix
/// sums), and the rules, tests and fits that turn their change points into changes.
struct ChangeDetector<'a> {
    obs: &'a Observations,
    settings: &'a Settings,
    /// Robust bytes/s of each span.
    rates: Vec<f64>,
    sums: PrefixSums,
}

/// Significance tests already run, by (from, to, block length, permutations).
type Tests = HashMap<(usize, usize, usize, u32), significance::TestResult>;

/// What the significance step says of the candidate changes.
enum Significance {
    /// The series as a whole does not reject "no change" (its p-value): none is left.
    NoneOverall(f64),
    /// The candidate at this boundary index is the least significant failing one (p-value).
    Weakest(usize, f64),
    /// Every candidate is significant.
    All,
}

impl<'a> ChangeDetector<'a> {
    /// The spans' rates, or why the view is too short to hold a change.
    fn of(obs: &'a Observations, settings: &'a Settings) -> Result<ChangeDetector<'a>, TooLittle> {
        let spans = &obs.spans;
        let span_s = match (spans.first(), spans.last()) {
            (Some(a), Some(b)) => (b.end_ns - a.start_ns) as f64 * 1e-9,
            _ => 0.0,
        };
        let need_s = 2.0 * settings.min_side_seconds;
        if spans.len() < 2 * obs.min_side || span_s < need_s {
            let what = match obs.view {
                View::OverTime => "intervals",
                _ => "files",
            };
            return Err(TooLittle {
                reason: format!(
                    "{} {what}, {:.2} s (an event needs at least {} {what} and {:.1} s on each side)",
                    obs.all,
                    obs.span_s,
                    obs.min_side,
                    settings.min_side_seconds
                ),
            });
        }
        let rates = obs.rates.clone();
        let sums = PrefixSums::new(&rates);
        Ok(ChangeDetector {
            obs,
            settings,
            rates,
            sums,
        })
    }

    /// Prunes the change points' segments until no rule removes a boundary: the
    /// boundaries (0 and n at the ends) and the significance test of each change left.
    fn prune(
        &self,
        segments: Vec<changepoint::Segment>,
        removed: &mut Vec<Removed>,
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
                // Over time, a stretch too short to be a side at either end of the series
                // (a run's first half second, when the host starves the device, or its
                // last) is left out of the search rather than merged into its neighbour:
                // merged, its near-empty intervals would be one block of the permutation
                // test whose shuffles rival a real change and hide it.
                let last = bounds.len() - 2;
                let edge = match k {
                    1 if !self.side_ok(bounds[0], bounds[1]) => Some(0),
                    _ if k == last && !self.side_ok(bounds[last], bounds[last + 1]) => {
                        Some(last + 1)
                    }
                    _ => None,
                };
                match edge.filter(|_| self.obs.view == View::OverTime) {
                    Some(e) => {
                        removed.push(self.removal(
                            bounds[k],
                            "too little data on its side at the series' edge: that side left out",
                        ));
                        bounds.remove(e);
                    }
                    None => {
                        removed.push(self.removal(bounds[k], "too little data on one side"));
                        bounds.remove(k);
                    }
                }
                continue;
            }
            if let Some(k) = self.transient(&bounds) {
                removed.push(self.removal(
                    bounds[k],
                    &format!(
                        "with its neighbour, an excursion of under {TRANSIENT_S:.0} s that comes back to where it left (a burst into a buffer, a hiccup): no change of state"
                    ),
                ));
                bounds.remove(k);
                continue;
            }
            if let Some((k, why)) = self.too_small(&bounds) {
                removed.push(self.removal(bounds[k], &why));
                bounds.remove(k);
                continue;
            }
            accepted.clear();
            match self.significance(&bounds, &mut tests, &mut accepted) {
                Significance::NoneOverall(p) => {
                    for &b in &bounds[1..bounds.len() - 1] {
                        removed.push(self.removal(
                            b,
                            &format!("the series as a whole is not significant (p = {p:.3})"),
                        ));
                    }
                    bounds = vec![bounds[0], bounds[bounds.len() - 1]];
                    continue;
                }
                Significance::Weakest(k, p) => {
                    removed.push(self.removal(bounds[k], &format!("not significant (p = {p:.3})")));
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

    /// The removal of the candidate at span `k`, in words.
    fn removal(&self, k: usize, rule: &str) -> Removed {
        let spans = &self.obs.spans;
        Removed {
            bytes: spans
                .get(k)
                .map_or(self.obs.total_bytes, |s| s.bytes_before),
            rule: rule.to_string(),
        }
    }

    /// True when spans `[a, b)` are enough for one side of a change: spans, seconds and
    /// bytes (a share of the series', at most `max_side_bytes`).
    fn side_ok(&self, a: usize, b: usize) -> bool {
        let settings = self.settings;
        if b - a < self.obs.min_side {
            return false;
        }
        let spans = &self.obs.spans;
        let (fa, fb) = (&spans[a], &spans[b - 1]);
        let secs = (fb.end_ns - fa.start_ns) as f64 * 1e-9;
        let bytes = (fb.bytes_after() - fa.bytes_before) as f64;
        let total = self.obs.total_bytes as f64;
        let need = (settings.min_side_bytes_fraction * total).min(settings.max_side_bytes);
        secs >= settings.min_side_seconds && bytes >= need
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

    /// (1b) Over time, two changes in opposite directions less than [`TRANSIENT_S`] apart
    /// whose outer levels agree within the larger of the two steps' halves: an excursion,
    /// not two changes of state (a burst file's bytes lift a few 100 ms intervals of a
    /// throttled device, which would read as a recovery and a drop). The index of the
    /// smaller of the two steps; stalls, the short excursions down, are found apart
    /// (`stall.rs`).
    fn transient(&self, bounds: &[usize]) -> Option<usize> {
        if self.obs.view != View::OverTime {
            return None;
        }
        let (sums, spans) = (&self.sums, &self.obs.spans);
        (1..bounds.len().saturating_sub(2)).find_map(|k| {
            let (a, b1, b2, c) = (bounds[k - 1], bounds[k], bounds[k + 1], bounds[k + 2]);
            let (m0, m1, m2) = (sums.mean(a, b1), sums.mean(b1, b2), sums.mean(b2, c));
            let middle_s = (spans[b2 - 1].end_ns - spans[b1].start_ns) as f64 * 1e-9;
            let (up, down) = ((m1 - m0).abs(), (m1 - m2).abs());
            let opposite = (m1 - m0) * (m1 - m2) > 0.0;
            let back = (m2 - m0).abs() <= 0.5 * up.max(down);
            (opposite && back && middle_s < TRANSIENT_S).then_some(if up <= down {
                k
            } else {
                k + 1
            })
        })
    }

    /// (2) Practical size: beyond the minimum and beyond the series' own wander on either
    /// side (a ramp's flat parts only). The boundary furthest below what it needs, and why.
    fn too_small(&self, bounds: &[usize]) -> Option<(usize, String)> {
        let (rates, sums, settings) = (&self.rates, &self.sums, self.settings);
        let mut weakest: Option<(usize, f64, String)> = None;
        for k in 1..bounds.len() - 1 {
            let (a, b, c) = (bounds[k - 1], bounds[k], bounds[k + 1]);
            let fit = fit_ramp(rates, sums, a, b, c, settings);
            let (m1, m2) = (sums.mean(a, fit.start), sums.mean(fit.end, c));
            let rel = (m2 - m1).abs() / m1.abs().max(m2.abs()).max(f64::MIN_POSITIVE);
            let g = self.obs.wander_group;
            let w = wander(&group_means(&rates[a..fit.start], g))
                .max(wander(&group_means(&rates[fit.end..c], g)));
            let need = settings.min_relative_change.max(settings.wander_factor * w);
            if rel < need && weakest.as_ref().is_none_or(|(_, r, _)| rel / need < *r) {
                let why = format!(
                    "a change of {:.0} % is below the {:.0} % it needs (15 %, and twice the series' wander)",
                    rel * 100.0,
                    need * 100.0
                );
                weakest = Some((k, rel / need, why));
            }
        }
        weakest.map(|(k, _, why)| (k, why))
    }

    /// (3) Significance: the series must reject "no change" (so a change-free series makes
    /// an event with probability ≤ α) — by the whole-series test or by its most significant
    /// candidate's own test times the number of candidates (Bonferroni), the smaller p of
    /// the two doubled (a drop and a recovery in a long series of dependent intervals are
    /// plain on their stretches even when the whole-series statistics, one split or a short
    /// window, are not); then each change is tested on the stretch between its neighbours,
    /// those that pass go into `accepted`, and the least significant failing one is named.
    fn significance(
        &self,
        bounds: &[usize],
        tests: &mut Tests,
        accepted: &mut HashMap<usize, significance::TestResult>,
    ) -> Significance {
        let mut each: Vec<significance::TestResult> = (1..bounds.len() - 1)
            .map(|k| self.test_at(tests, bounds[k - 1], bounds[k + 1], &[bounds[k]], None))
            .collect();
        if bounds.len() > 2 {
            let inner = &bounds[1..bounds.len() - 1];
            let (lo, hi) = (bounds[0], bounds[bounds.len() - 1]);
            let whole = self.test_at(tests, lo, hi, inner, None).p_value;
            let k = each.len();
            let best = each.iter().map(|t| t.p_value).fold(1.0, f64::min);
            // Bonferroni over k candidates needs a candidate's p below α/(2k), finer than
            // 999 permutations resolve from k = 3 on: a candidate at that floor is tested
            // again with enough of them.
            let need = significance::ALPHA / (2.0 * k as f64);
            if self.obs.view == View::OverTime && 2.0 * whole >= significance::ALPHA && best >= need
            {
                let draws = (8.0 * k as f64 / significance::ALPHA) as u32;
                for (q, t) in each.iter_mut().enumerate() {
                    if significance::at_floor(t) && t.permutations < draws {
                        let b = q + 1;
                        *t = self.test_at(
                            tests,
                            bounds[b - 1],
                            bounds[b + 1],
                            &[bounds[b]],
                            Some(draws),
                        );
                    }
                }
            }
            let best = each.iter().map(|t| t.p_value).fold(1.0, f64::min);
            // The Bonferroni alternative serves dependent intervals; files keep the
            // whole-series gate alone: among lumpy files of a steady device the alternative
            // would let false drops and recoveries through.
            let p = match self.obs.view {
                View::OverTime => (2.0 * whole.min(each.len() as f64 * best)).min(1.0),
                _ => whole,
            };
            if p >= significance::ALPHA {
                return Significance::NoneOverall(p);
            }
        }
        let mut weakest: Option<(usize, f64)> = None;
        for (k, t) in (1..bounds.len() - 1).zip(each) {
            if t.p_value >= significance::ALPHA {
                if weakest.is_none_or(|(_, p)| t.p_value > p) {
                    weakest = Some((k, t.p_value));
                }
            } else {
                accepted.insert(bounds[k], t);
            }
        }
        weakest.map_or(Significance::All, |(k, p)| Significance::Weakest(k, p))
    }

    /// The block-permutation test of kept files `[lo, hi)` against "no change", its block
    /// length decided by the residuals about the candidate levels cut at `inner`.
    fn test_at(
        &self,
        tests: &mut Tests,
        lo: usize,
        hi: usize,
        inner: &[usize],
        draws: Option<u32>,
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
        // Blocks no longer than half the shortest candidate segment: a side shorter than a
        // block could not be told from one block of noise however far it lies.
        let shortest = cuts.windows(2).map(|w| w[1] - w[0]).min().unwrap_or(1);
        let l = significance::block_for(&resid).min((shortest / 2).max(1));
        let draws = draws.unwrap_or(significance::PERMUTATIONS);
        *tests.entry((lo, hi, l, draws)).or_insert_with(|| {
            let seed = (lo * 31 + hi) as u64;
            significance::test_with(&rates[lo..hi], self.obs.min_side, l, seed, draws)
        })
    }

    /// Σ bytes / Σ active time of spans `[from, to)`, without span `skip` (the span a
    /// change happened in moved at both rates).
    fn level(&self, from: usize, to: usize, skip: Option<usize>) -> Option<f64> {
        let (mut bytes, mut t) = (0u64, 0.0);
        for (q, s) in self.obs.spans[from..to].iter().enumerate() {
            if Some(from + q) != skip {
                bytes += s.bytes;
                t += s.active_s;
            }
        }
        (t > 0.0).then(|| bytes as f64 / t)
    }

    /// The change at boundary `b` between its neighbours `a` and `c`, located as a ramp or
    /// a step, with its levels and its test.
    fn change(&self, a: usize, b: usize, c: usize, t: significance::TestResult) -> Change {
        let (obs, rates) = (self.obs, &self.rates);
        let spans = &obs.spans;
        let fit = fit_ramp(rates, &self.sums, a, b, c, self.settings);
        let (onset, settle_b, settle_ns) = if fit.gradual {
            let r1 = self.level(a, fit.start, None).unwrap_or(1.0);
            let r2 = self.level(fit.end, c, None).unwrap_or(1.0);
            let noise =
                relative_noise(&rates[a..fit.start]).max(relative_noise(&rates[fit.end..c]));
            let r = refine_ramp(
                obs,
                (a, fit.start, fit.end, c),
                (r1, r2),
                noise,
                self.settings.min_relative_change,
            );
            (r.onset, r.settle, obs.time_at(r.settle))
        } else {
            let r1 = self.level(a, fit.start, None).unwrap_or(1.0);
            let r2 = self.level(fit.start, c, None).unwrap_or(1.0);
            let noise = (
                relative_noise(&rates[a..fit.start]),
                relative_noise(&rates[fit.start..c]),
            );
            let o = locate_onset(obs, fit.start, r1, r2, noise);
            (o, o.bytes, o.ns)
        };
        // The span the change happened in moved at both rates.
        let within = spans
            .partition_point(|s| s.bytes_before <= onset.bytes)
            .checked_sub(1)
            .filter(|&q| spans[q].bytes_after() > onset.bytes);
        let r1 = self.level(a, fit.start, within).unwrap_or(1.0);
        let r2 = self.level(fit.end, c, within).unwrap_or(1.0);
        Change {
            kind: if r2 < r1 {
                EventKind::Drop
            } else {
                EventKind::Recovery
            },
            onset,
            settle_bytes: settle_b.max(onset.bytes),
            settle_ns: settle_ns.max(onset.ns),
            gradual: fit.gradual,
            p_value: t.p_value,
            permutations: t.permutations,
            view: obs.view,
            rate_before_bps: r1,
            rate_after_bps: r2,
            before_ns: (spans[a].start_ns, onset.ns),
            after_ns: (settle_ns.max(onset.ns), spans[c - 1].end_ns),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::series::Series;
    use hostd_records::FileRecord;
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

    /// The changes the per-file view of `s` finds with the default settings.
    fn found(s: &Series) -> Result<Vec<Change>, TooLittle> {
        let settings = Settings::default();
        let obs = Observations::per_file(s, None, settings.min_side_files);
        changes(&obs, &settings).map(|f| f.changes)
    }

    fn jitter(seed: u64, j: f64) -> impl Fn(usize) -> f64 {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let v: Vec<f64> = (0..10_000).map(|_| 1.0 + rng.gen_range(-j..j)).collect();
        move |i| v[i]
    }

    #[test]
    fn a_short_run_is_too_little_data() {
        let s = series(12, 30.0, |_| 1.5);
        let e = found(&s).unwrap_err();
        assert!(e.reason.starts_with("12 files, 0.24 s"), "{}", e.reason);
    }

    #[test]
    fn forty_percent_step_with_thirty_files_a_side_is_found_with_an_interval() {
        for seed in 0..10 {
            let j = jitter(seed, 0.05);
            let s = series(60, 500.0, |i| if i < 30 { 1.0 } else { 0.6 } * j(i));
            let c = found(&s).unwrap();
            assert_eq!(c.len(), 1, "seed {seed}: {c:?}");
            let c = &c[0];
            assert_eq!(c.kind, EventKind::Drop);
            assert!(!c.gradual);
            assert!(c.p_value < 0.01);
            let truth = 15_000_000_000u64;
            assert!(
                c.onset.bytes_range.0 <= truth && truth <= c.onset.bytes_range.1,
                "{c:?}"
            );
            assert!(c.onset.bytes.abs_diff(truth) < 500_000_000, "{c:?}");
        }
    }

    #[test]
    fn a_change_near_the_edges_or_small_or_wandering_is_no_event() {
        for seed in 0..10 {
            let j = jitter(seed, 0.05);
            // Last 5 files slow (final flush): fewer than 8 files on that side.
            let s = series(60, 500.0, |i| if i < 55 { 1.0 } else { 0.5 } * j(i));
            assert!(found(&s).unwrap().is_empty());
            // A 12 % step.
            let s = series(80, 500.0, |i| if i < 40 { 1.0 } else { 0.88 } * j(i));
            assert!(found(&s).unwrap().is_empty());
            // Wandering by ±7 % (sinusoid over the run).
            let s = series(200, 500.0, |i| {
                (1.0 + 0.07 * (i as f64 / 200.0 * 2.0 * std::f64::consts::PI * 1.5).sin()) * j(i)
            });
            let c = found(&s).unwrap();
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
            let c = found(&s).unwrap();
            assert_eq!(c.len(), 1, "seed {seed}: {c:?}");
            let c = &c[0];
            assert!(c.gradual, "{c:?}");
            assert!(
                c.onset.bytes.abs_diff(40_000_000_000) <= 1_500_000_000,
                "{c:?}"
            );
            assert!(
                c.settle_bytes.abs_diff(60_000_000_000) <= 2_000_000_000,
                "{c:?}"
            );
            assert!(
                c.onset.bytes_range.0 <= 40_000_000_000 && 40_000_000_000 <= c.onset.bytes_range.1,
                "{c:?}"
            );
        }
    }

    /// A real run's throughput in 100 ms intervals, MB/s: 2–64 MB files under a 250 MB/s
    /// blk-throttle limit on a loop device, an outside writer sharing it from interval 29
    /// (35 % of the bytes) to 78 (65 %), at load 14 on 2 cores: the host starved the device
    /// for the first 0.6 s (real-device matrix, "2-64M outside 2x@35% back@65% +2 bursts").
    const STARVED_START_MB_S: [f64; 108] = [
        0., 21., 0., 73., 167., 76., 554., 377., 207., 190., 227., 366., 247., 251., 206., 120.,
        419., 223., 272., 232., 257., 251., 372., 553., 251., 241., 253., 251., 244., 114., 122.,
        0., 147., 147., 84., 154., 106., 124., 146., 149., 136., 120., 126., 136., 146., 73., 118.,
        136., 94., 82., 126., 94., 105., 147., 33., 126., 157., 142., 169., 156., 147., 126., 146.,
        45., 78., 157., 146., 97., 136., 130., 108., 126., 83., 115., 136., 116., 136., 119., 20.,
        210., 263., 226., 172., 0., 275., 407., 302., 366., 453., 349., 251., 251., 246., 251.,
        249., 251., 243., 251., 255., 232., 251., 246., 94., 84., 7., 243., 249., 251.,
    ];

    #[test]
    fn a_starved_start_is_left_out_and_does_not_hide_a_later_drop() {
        // The counter every 100 ms, and 20 MB files cut from its byte stream.
        let step = 100_000_000i64;
        let mut counter = vec![(0i64, 0u64)];
        for (k, r) in STARVED_START_MB_S.iter().enumerate() {
            let b = counter[k].1 + (r * 1e5) as u64;
            counter.push(((k as i64 + 1) * step, b));
        }
        let total = counter.last().unwrap().1;
        let time_of = |b: u64| {
            let i = counter.partition_point(|&(_, x)| x < b).max(1);
            let ((t0, b0), (t1, b1)) = (counter[i - 1], counter[i]);
            (t0 + ((b - b0) as f64 / (b1 - b0).max(1) as f64 * (t1 - t0) as f64) as i64) as u64
        };
        let cuts: Vec<u64> = (0..total / 20_000_000)
            .map(|i| i * 20_000_000)
            .chain([total])
            .collect();
        let files: Vec<FileRecord> = cuts
            .windows(2)
            .enumerate()
            .map(|(i, w)| {
                let start = if i == 0 { 0 } else { time_of(w[0]) };
                FileRecord::new("t", "write", i as u32, start, time_of(w[1]), w[1] - w[0])
            })
            .collect();
        let s = crate::series::group(&files).remove(0);
        let settings = Settings::default();
        let obs = Observations::over_time(&s, &counter, None, &[]).expect("enough counter samples");
        let found = changes(&obs, &settings).expect("enough data");
        // The writer's start: the bytes before interval 29.
        let truth = counter[29].1 as f64;
        assert!(
            found.changes.iter().any(|c| c.kind == EventKind::Drop
                && (c.onset.bytes as f64 - truth).abs() < 0.01 * total as f64),
            "no drop within 1 % of {:.0} MB: {:#?}\nremoved: {:#?}",
            truth / 1e6,
            found.changes,
            found.removed
        );
        assert!(
            found
                .removed
                .iter()
                .any(|r| r.rule.contains("series' edge")),
            "the starved start left out: {:#?}",
            found.removed
        );
    }
}
