//! Attribution of a drop or recovery to thermal throttling, an exhausted SLC cache or
//! contention for a shared link, with the evidence in numbers and words.
//! Rules and weights are documented in docs/methodology.md.

use crate::detect::Change;
use crate::series::Series;
use crate::stall::SeriesStalls;
use crate::stats;
use hostd_records::events::{Cause, Event, EventKind, Evidence, Scores, StallSummary};
use hostd_records::{FileRecord, ProbeSeries};

const NS: f64 = 1e9;
/// Probe windows around an onset are at most this long, s.
const WINDOW_S: f64 = 60.0;
/// Samples this close to the onset are left out of before/after means, s (at most a tenth
/// of the shorter segment).
const SETTLE_S: f64 = 1.0;
/// A cause needs at least this score; below it the event is `unknown`.
const MIN_SCORE: f64 = 0.5;

/// What the attribution may look at besides the change itself.
pub struct Context<'a> {
    /// All series of the run (for other targets' activity).
    pub all: &'a [Series],
    /// Probe samples, when the probe measured this event's target.
    pub probe: Option<&'a ProbeSeries>,
    /// First file start of the run, host ns.
    pub run_start_ns: i64,
    /// Link ceiling, bytes/s, and whether the user gave it (else: the peak aggregate over
    /// whole seconds of the run, when at least 5 were measured).
    pub link_ceiling: Option<(f64, bool)>,
    /// The drive's own (SMART) temperature readings of this target, (host ns, °C), in time
    /// order (`drive_temp.csv`), when polled.
    pub drive_temp: Option<&'a [(i64, f64)]>,
}

/// A drive's SMART temperature must rise at least this much (1 °C resolution) before its
/// plateau means anything, °C.
const DRIVE_MIN_RISE_C: f64 = 3.0;

/// The drive's own temperature around an onset: at onset (readings within ±2 s), its rise
/// from the lowest reading of the series before, where that lies between its low and high
/// over the series, and its slope from the onset to `after_end`.
fn drive_evidence(
    temps: &[(i64, f64)],
    series: &Series,
    onset_ns: i64,
    after_end: i64,
    ev: &mut Evidence,
) {
    let span: Vec<(i64, f64)> = temps
        .iter()
        .copied()
        .filter(|&(t, v)| t >= series.start_ns() && t <= series.end_ns() && v.is_finite())
        .collect();
    let near: Vec<f64> = span
        .iter()
        .filter(|(t, _)| (t - onset_ns).abs() <= 2 * NS as i64)
        .map(|&(_, v)| v)
        .collect();
    let Some(at) = stats::mean(&near) else {
        return;
    };
    let low_before = span
        .iter()
        .filter(|(t, _)| *t <= onset_ns)
        .map(|&(_, v)| v)
        .fold(f64::INFINITY, f64::min);
    let (lo, hi) = span
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &(_, v)| {
            (l.min(v), h.max(v))
        });
    ev.drive_temp_at_onset_c = Some(at);
    ev.drive_temp_rise_c = low_before.is_finite().then_some(at - low_before);
    if hi - lo >= DRIVE_MIN_RISE_C {
        ev.drive_temp_plateau_fraction = Some(((at - lo) / (hi - lo)).clamp(0.0, 1.0));
    }
    let after: Vec<(f64, f64)> = span
        .iter()
        .filter(|(t, _)| *t >= onset_ns && *t <= after_end)
        .map(|&(t, v)| ((t - onset_ns) as f64 / NS, v))
        .collect();
    if after.len() >= 5 {
        let (x, y): (Vec<f64>, Vec<f64>) = after.into_iter().unzip();
        ev.drive_temp_slope_after_c_per_s = stats::least_squares(&x, &y).map(|l| l.slope);
    }
}

/// A temperature rise counts only beyond max(this, 6 × the sensor's noise), °C.
const MIN_RISE_C: f64 = 0.5;
/// The rise must exceed this many times the sensor's noise σ.
const RISE_NOISE_FACTOR: f64 = 6.0;

/// Robust σ of a sensor's sample-to-sample noise: 1.4826·MAD of first differences / √2.
fn sensor_noise(values: &[f64]) -> Option<f64> {
    let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.len() < 10 {
        return None;
    }
    let d: Vec<f64> = v.windows(2).map(|w| w[1] - w[0]).collect();
    stats::mad_sigma(&d).map(|s| s / std::f64::consts::SQRT_2)
}

/// Largest rise of the 1 s means of `values` on `[a, b)`: max over bins of (bin − lowest
/// bin before it).
fn largest_rise(p: &ProbeSeries, values: &[f64], a: i64, b: i64) -> Option<f64> {
    let bin = (NS as i64).min((b - a) / 100).max(1);
    let mut low = f64::INFINITY;
    let mut rise: Option<f64> = None;
    let mut t = a;
    while t < b {
        if let Some(m) = p.mean_in(values, t, (t + bin).min(b)) {
            low = low.min(m);
            rise = Some(rise.map_or(m - low, |r: f64| r.max(m - low)));
        }
        t += bin;
    }
    rise
}

/// Bytes/s moved by `files` inside `[a, b)`, each file spread evenly over its duration.
pub fn rate_in_window<'f>(files: impl Iterator<Item = &'f FileRecord>, a: i64, b: i64) -> f64 {
    if b <= a {
        return 0.0;
    }
    let mut bytes = 0.0;
    for f in files {
        let lo = (f.start_ns as i64).max(a);
        let hi = (f.end_ns as i64).min(b);
        if hi > lo {
            bytes += f.bytes as f64 * (hi - lo) as f64
                / ((f.end_ns as i64) - (f.start_ns as i64)).max(1) as f64;
        }
    }
    bytes / ((b - a) as f64 / NS)
}

/// Least-squares slope of `values` against time (per s) on `[a, b)`, NaN-free samples only.
fn slope(p: &ProbeSeries, values: &[f64], a: i64, b: i64) -> Option<f64> {
    let r = p.range(a, b);
    let step = (r.len() / 4000).max(1);
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for i in r.step_by(step) {
        if values[i].is_finite() {
            x.push((p.time_ns[i] - a) as f64 / NS);
            y.push(values[i]);
        }
    }
    (x.len() >= 10)
        .then(|| stats::least_squares(&x, &y))
        .flatten()
        .map(|l| l.slope)
}

/// Min and max of the means of `values` over bins on `[a, b)`: 1 s bins, or a hundredth of
/// the span for short (accelerated) series.
fn smoothed_min_max(p: &ProbeSeries, values: &[f64], a: i64, b: i64) -> Option<(f64, f64)> {
    let bin = (NS as i64).min((b - a) / 100).max(1);
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    let mut t = a;
    while t < b {
        if let Some(m) = p.mean_in(values, t, (t + bin).min(b)) {
            lo = lo.min(m);
            hi = hi.max(m);
        }
        t += bin;
    }
    (lo.is_finite() && hi.is_finite()).then_some((lo, hi))
}

/// The finite sample of `values` nearest to `t` within `max_ns` (temperature sensors are
/// slower than the power channel, so most rows have no temperature).
fn nearest(p: &ProbeSeries, values: &[f64], t: i64, max_ns: i64) -> Option<f64> {
    let r = p.range(t - max_ns, t + max_ns);
    r.filter(|&i| values[i].is_finite())
        .min_by_key(|&i| (p.time_ns[i] - t).abs())
        .map(|i| values[i])
}

struct Rule<'a> {
    scores: &'a mut f64,
    reasons: &'a mut Vec<String>,
    label: &'static str,
}

impl Rule<'_> {
    fn check(&mut self, weight: f64, met: bool, words: String) {
        if met {
            *self.scores += weight;
        }
        self.reasons.push(format!(
            "{} {}: {}",
            if met { "✓" } else { "✗" },
            self.label,
            words
        ));
    }
}

/// Attributes one change and builds its event.
pub fn attribute(
    series: &Series,
    change: &Change,
    ctx: &Context,
    next_onset_ns: Option<i64>,
    later: &[Change],
) -> Event {
    let since = |ns: i64| (ns - ctx.run_start_ns) as f64 / NS;
    let mut ev = Evidence {
        onset_gb: change.onset_bytes as f64 / 1e9,
        onset_s: since(change.onset_ns),
        onset_interval_gb: [
            change.onset_bytes_range.0 as f64 / 1e9,
            change.onset_bytes_range.1 as f64 / 1e9,
        ],
        onset_interval_s: [
            since(change.onset_ns_range.0),
            since(change.onset_ns_range.1),
        ],
        duration_s: (next_onset_ns.unwrap_or(series.end_ns()) - change.onset_ns).max(0) as f64 / NS,
        onset_file_index: u64::from(series.files[change.file_pos].index),
        ..Default::default()
    };
    let drop = change.kind == EventKind::Drop;
    let rate_ratio = change.rate_after_bps / change.rate_before_bps.max(1.0);
    // The slow segment is where contention would be acting.
    let slow = if drop {
        change.after_ns
    } else {
        change.before_ns
    };
    let others: Vec<&Series> = ctx
        .all
        .iter()
        .filter(|s| s.target != series.target)
        .collect();
    let slow_len = (slow.1 - slow.0).max(1) as f64;
    ev.other_targets_active = others
        .iter()
        .filter(|s| {
            let overlap = (s.end_ns().min(slow.1) - s.start_ns().max(slow.0)).max(0) as f64;
            overlap / slow_len >= 0.5
        })
        .map(|s| s.target.clone())
        .collect();
    ev.other_targets_active.dedup();
    let active_at_onset = others
        .iter()
        .any(|s| s.start_ns() <= change.onset_ns && s.end_ns() >= change.onset_ns);
    let alone = ev.other_targets_active.is_empty() && !active_at_onset;

    let (mut thermal, mut slc, mut contention) = (0.0, 0.0, 0.0);
    let mut reasons = Vec::new();

    // Probe evidence.
    let mut power_falls = None;
    if let Some(p) = ctx.probe {
        let w = (WINDOW_S * NS) as i64;
        // Short segments (accelerated simulations, quick runs) get a proportionally short
        // settling margin so both windows keep samples.
        let shorter =
            (change.before_ns.1 - change.before_ns.0).min(change.after_ns.1 - change.after_ns.0);
        let settle = ((SETTLE_S * NS) as i64).min(shorter / 10);
        let before = (
            change.before_ns.0.max(change.onset_ns - w),
            change.onset_ns - settle / 2,
        );
        let after = (
            change.onset_ns + settle,
            change.after_ns.1.min(change.onset_ns + w),
        );
        let half = settle / 2;
        ev.temp_at_onset_c = p
            .mean_in(
                &p.enclosure_temp_c,
                change.onset_ns - half,
                change.onset_ns + half,
            )
            .or_else(|| {
                nearest(
                    p,
                    &p.enclosure_temp_c,
                    change.onset_ns,
                    (SETTLE_S * NS) as i64,
                )
            });
        let r = p.range(series.start_ns(), series.end_ns());
        ev.temp_noise_c = sensor_noise(&p.enclosure_temp_c[r]);
        let rise_needed = MIN_RISE_C.max(RISE_NOISE_FACTOR * ev.temp_noise_c.unwrap_or(0.0));
        ev.temp_rise_c = largest_rise(p, &p.enclosure_temp_c, series.start_ns(), change.onset_ns);
        if let Some((lo, hi)) =
            smoothed_min_max(p, &p.enclosure_temp_c, series.start_ns(), series.end_ns())
        {
            ev.temp_min_c = Some(lo);
            ev.temp_max_c = Some(hi);
            // A range within the sensor's noise is no plateau: no fraction at all.
            if let Some(t) = ev.temp_at_onset_c.filter(|_| hi - lo > rise_needed) {
                ev.temp_plateau_fraction = Some(((t - lo) / (hi - lo)).clamp(0.0, 1.0));
            }
        }
        ev.temp_slope_before_c_per_s = slope(p, &p.enclosure_temp_c, before.0, before.1);
        ev.temp_slope_after_c_per_s = slope(p, &p.enclosure_temp_c, after.0, after.1);
        ev.power_before_w = p.mean_in(&p.power_w, before.0, before.1);
        ev.power_after_w = p.mean_in(&p.power_w, after.0, after.1);
        let j_per_gb = |a: i64, b: i64| {
            let e = p.energy_between(a, b)?;
            let gb = rate_in_window(series.files.iter(), a, b) * (b - a) as f64 / NS / 1e9;
            (gb > 0.0).then(|| e / gb)
        };
        ev.j_per_gb_before = j_per_gb(before.0, before.1);
        ev.j_per_gb_after = j_per_gb(after.0, after.1);
        if let (Some(pb), Some(pa)) = (ev.power_before_w, ev.power_after_w) {
            // "Falls with throughput": slow/fast power at most 1 − 0.3·(1 − slow/fast rate),
            // i.e. power follows at least 30 % of the relative change (read from the slow
            // side for a recovery too, so a ×3 recovery is not held to a ×3 power rise).
            let (slow_p, fast_p) = if drop { (pa, pb) } else { (pb, pa) };
            let slow_fast_rate = rate_ratio.min(1.0 / rate_ratio.max(1e-12));
            power_falls = Some(slow_p / fast_p <= 1.0 - 0.3 * (1.0 - slow_fast_rate));
        }
    } else {
        reasons.push(
            "no probe samples for this target: thermal and SLC rules cannot be checked".to_string(),
        );
    }

    if let Some(temps) = ctx.drive_temp {
        let after_end = change
            .after_ns
            .1
            .min(change.onset_ns + (WINDOW_S * NS) as i64);
        drive_evidence(temps, series, change.onset_ns, after_end, &mut ev);
        if let Some(t) = ev.drive_temp_at_onset_c {
            reasons.push(format!(
                "drive (SMART) {t:.0} °C at onset{}{}{}",
                ev.drive_temp_rise_c.map_or(String::new(), |r| format!(
                    ", {r:+.0} °C since the phase began"
                )),
                ev.drive_temp_plateau_fraction
                    .map_or(String::new(), |f| format!(
                        ", {:.0} % of the way to its high",
                        f * 100.0
                    )),
                ev.drive_temp_slope_after_c_per_s
                    .map_or(String::new(), |a| format!(", {a:+.3} °C/s after")),
            ));
        }
    }
    let drive_at_plateau = ev
        .drive_temp_plateau_fraction
        .filter(|_| ev.drive_temp_rise_c.is_some_and(|r| r >= DRIVE_MIN_RISE_C));
    let plateau = ev.temp_plateau_fraction;
    let (sb, sa) = (ev.temp_slope_before_c_per_s, ev.temp_slope_after_c_per_s);
    let rise_needed = MIN_RISE_C.max(RISE_NOISE_FACTOR * ev.temp_noise_c.unwrap_or(0.0));
    let warmed = ev.temp_rise_c.is_some_and(|r| r > rise_needed);
    if ctx.probe.is_some() && !warmed {
        reasons.push(format!(
            "✗ thermal, slc_cache: the enclosure rose {} before the onset, not more than {rise_needed:.2} °C (6 × the sensor's noise σ {}, at least {MIN_RISE_C} °C): no thermal evidence",
            ev.temp_rise_c.map_or("by an unknown amount".into(), |r| format!("{r:.2} °C")),
            ev.temp_noise_c.map_or("unknown".into(), |n| format!("{n:.3} °C")),
        ));
    }
    let is_write = series.phase.contains("write");
    if ctx.probe.is_some() && warmed {
        let mut r = Rule {
            scores: &mut thermal,
            reasons: &mut reasons,
            label: "thermal",
        };
        if drop {
            // The controller heats before the enclosure: a drive (SMART) temperature at its
            // plateau meets this rule where the enclosure is still on its way.
            let drive_plateau = drive_at_plateau.filter(|&f| f >= 0.85);
            match (plateau, ev.temp_at_onset_c, drive_plateau) {
                (Some(f), Some(t), None) => r.check(0.35, f >= 0.85, format!("enclosure {t:.1} °C at onset, {:.0} % of the way from its low to its plateau {:.1} °C", f * 100.0, ev.temp_max_c.unwrap_or(t))),
                (f, _, Some(d)) if f.is_none_or(|f| f < 0.85) => r.check(0.35, true, format!("drive (SMART) {:.0} °C at onset, {:.0} % of the way to its plateau (the controller at its limit; the enclosure {})", ev.drive_temp_at_onset_c.unwrap_or(f64::NAN), d * 100.0, f.map_or("not measured".into(), |f| format!("{:.0} % of the way to its own", f * 100.0)))),
                (Some(f), Some(t), Some(_)) => r.check(0.35, f >= 0.85, format!("enclosure {t:.1} °C at onset, {:.0} % of the way from its low to its plateau {:.1} °C (the drive's own temperature at its plateau too)", f * 100.0, ev.temp_max_c.unwrap_or(t))),
                _ => {}
            }
            if let (Some(b), Some(a)) = (sb, sa) {
                let flat = a <= 0.25 * b.max(0.0) + 0.005;
                r.check(0.2, flat, format!("temperature slope {b:+.3} °C/s before, {a:+.3} °C/s after (flat or falling after onset means held at a limit)"));
            }
        } else {
            let peak_before = ctx
                .probe
                .and_then(|p| {
                    smoothed_min_max(p, &p.enclosure_temp_c, series.start_ns(), change.onset_ns)
                })
                .map(|m| m.1);
            if let (Some(b), Some(t), Some(hi)) = (sb, ev.temp_at_onset_c, peak_before) {
                let cooled = b < -0.005 || t < hi - 2.0;
                r.check(0.5, cooled, format!("enclosure {t:.1} °C at recovery, peak before it {hi:.1} °C, slope before {b:+.3} °C/s (cooling means a thermal limit released)"));
            }
        }
        // Bus power that follows throughput (falls with a drop, rises with a recovery).
        if let (Some(pb), Some(pa), Some(follows)) =
            (ev.power_before_w, ev.power_after_w, power_falls)
        {
            r.check(
                0.3,
                follows,
                format!("bus power {pb:.2} → {pa:.2} W with throughput ×{rate_ratio:.2}"),
            );
        }
        r.check(
            if drop { 0.15 } else { 0.2 },
            alone,
            "no other target active".to_string(),
        );
        let mut r = Rule {
            scores: &mut slc,
            reasons: &mut reasons,
            label: "slc_cache",
        };
        if drop && !is_write {
            r.reasons.push(format!(
                "✗ slc_cache: a {} phase; an SLC cache only fills on writes",
                series.phase
            ));
        } else if drop {
            if let (Some(pb), Some(pa)) = (ev.power_before_w, ev.power_after_w) {
                r.check(
                    0.3,
                    pa / pb >= 0.85,
                    format!("bus power held: {pb:.2} → {pa:.2} W (the drive works as hard, writing TLC directly)"),
                );
            }
            // A drive (SMART) temperature at its plateau and flat after the onset says the
            // controller may be at its thermal limit, whatever the enclosure does.
            let drive_held = drive_at_plateau.is_some_and(|f| f >= 0.85)
                && ev
                    .drive_temp_slope_after_c_per_s
                    .is_some_and(|a| a <= 0.005);
            if let Some(f) = plateau {
                let rising = sa.is_some_and(|a| a > 0.005);
                if drive_held {
                    r.check(0.3, false, format!("enclosure {:.0} % of the way to its plateau and rising ({:+.3} °C/s), but the drive (SMART) is at its plateau and flat after onset: a thermal limit is not ruled out", f * 100.0, sa.unwrap_or(f64::NAN)));
                } else {
                    r.check(0.3, f < 0.7 && rising, format!("temperature {:.0} % of the way to its plateau at onset and still rising ({:+.3} °C/s): not a thermal limit", f * 100.0, sa.unwrap_or(f64::NAN)));
                }
            }
            let recovers = later.iter().any(|c| c.kind == EventKind::Recovery);
            r.check(
                0.2,
                !recovers,
                if recovers {
                    "throughput recovers later while writing (a full SLC cache does not)".into()
                } else {
                    "no recovery for the rest of the phase".into()
                },
            );
            r.check(0.2, alone, "no other target active".to_string());
        }
    }
    {
        let mut r = Rule {
            scores: &mut contention,
            reasons: &mut reasons,
            label: "contention",
        };
        r.check(
            0.4,
            !ev.other_targets_active.is_empty(),
            if ev.other_targets_active.is_empty() {
                "no other target active during the slow part".to_string()
            } else {
                format!(
                    "{} active during the slow part",
                    ev.other_targets_active.join(", ")
                )
            },
        );
        // Aggregate while the others were still there: up to the last end, inside the slow
        // part, of the other targets active during it.
        let others_end = others
            .iter()
            .filter(|s| ev.other_targets_active.contains(&s.target))
            .map(|s| s.end_ns())
            .filter(|&e| e > slow.0 && e < slow.1)
            .max()
            .unwrap_or(slow.1);
        // Only over at least one whole second: a shorter window's average says nothing
        // about a link's ceiling.
        let agg = (others_end - slow.0 >= NS as i64).then(|| {
            rate_in_window(
                ctx.all.iter().flat_map(|s| s.files.iter()),
                slow.0,
                others_end,
            )
        });
        ev.aggregate_bps = agg;
        match (agg, ctx.link_ceiling) {
            (None, _) => r.reasons.push(
                "✗ contention: the slow part with the others active lasted under 1 s: aggregate not measured".into(),
            ),
            (Some(_), None) => r.reasons.push(
                "✗ contention: link ceiling unknown (fewer than 5 whole seconds measured; give --link-ceiling-gbps)".into(),
            ),
            (Some(agg), Some((ceiling, given))) => {
                // A measured ceiling is at least every aggregate the run sustained for a
                // whole second; a given one is taken as is, and a figure above it says so.
                let ceiling = if given { ceiling } else { ceiling.max(agg) };
                ev.link_ceiling_bps = Some(ceiling);
                let words = if agg > ceiling {
                    format!("aggregate {:.2} GB/s during the slow part is above the given link ceiling {:.2} GB/s: the ceiling is wrong", agg / 1e9, ceiling / 1e9)
                } else {
                    format!("aggregate {:.2} GB/s during the slow part = {:.0} % of the link ceiling {:.2} GB/s ({})", agg / 1e9, agg / ceiling * 100.0, ceiling / 1e9, if given { "given" } else { "highest aggregate over whole seconds of the run" })
                };
                r.check(0.3, !alone && agg >= 0.8 * ceiling, words);
            }
        }
        if drop {
            let started = others.iter().filter_map(|s| {
                let lag = (change.onset_ns - s.start_ns()) as f64 / NS;
                (0.0..=5.0).contains(&lag).then(|| (s.target.clone(), lag))
            });
            let best = started.min_by(|a, b| a.1.total_cmp(&b.1));
            r.check(
                0.3,
                best.is_some(),
                match &best {
                    Some((t, lag)) => format!("{t} started {lag:.1} s before the drop"),
                    None => "no other target started within 5 s before the drop".to_string(),
                },
            );
        } else {
            let ended = others
                .iter()
                .filter_map(|s| {
                    let lag = (change.onset_ns - s.end_ns()) as f64 / NS;
                    (lag > 0.0 && lag <= 30.0).then(|| (s.target.clone(), lag))
                })
                .min_by(|a, b| a.1.total_cmp(&b.1));
            if let Some((t, lag)) = &ended {
                ev.lag_after_other_end_s = Some(*lag);
                ev.other_target = Some(t.clone());
            }
            r.check(
                0.3,
                ended.is_some(),
                match &ended {
                    Some((t, lag)) => format!("recovered {lag:.1} s after {t} finished"),
                    None => "no other target finished within 30 s before the recovery".to_string(),
                },
            );
        }
    }

    ev.scores = Scores {
        thermal,
        slc_cache: slc,
        contention,
    };
    let mut ranked = [
        (Cause::Thermal, thermal),
        (Cause::SlcCache, slc),
        (Cause::Contention, contention),
    ];
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
    let (cause, confidence) = if ranked[0].1 >= MIN_SCORE {
        (
            ranked[0].0,
            (ranked[0].1 - 0.5 * ranked[1].1).clamp(0.0, 1.0),
        )
    } else {
        (Cause::Unknown, 0.0)
    };
    ev.reasons = reasons;
    let event = Event {
        target: series.target.clone(),
        phase: series.phase.clone(),
        kind: change.kind,
        onset_bytes: change.onset_bytes,
        onset_ns: change.onset_ns,
        onset_bytes_low: change.onset_bytes_range.0,
        onset_bytes_high: change.onset_bytes_range.1,
        onset_ns_low: change.onset_ns_range.0,
        onset_ns_high: change.onset_ns_range.1,
        p_value: change.p_value,
        permutations: change.permutations,
        gradual: change.gradual,
        settle_bytes: change.settle_bytes,
        settle_ns: change.settle_ns,
        rate_before_bps: change.rate_before_bps,
        rate_after_bps: change.rate_after_bps,
        relative_change: change.rate_after_bps / change.rate_before_bps.max(1.0) - 1.0,
        stall: None,
        cause,
        confidence: (confidence * 100.0).round() / 100.0,
        evidence: ev,
    };
    with_text(event)
}

/// The `stall` event of a series: onset at its first stall, the count, durations and period
/// in `stall`. Its cause is `unknown` (no rule attributes stalls yet).
pub fn stall_event(series: &Series, st: &SeriesStalls, run_start_ns: i64) -> Event {
    let first = st.stalls[0];
    let durations: Vec<f64> = st
        .stalls
        .iter()
        .map(|s| (s.end_ns - s.start_ns) as f64 / NS)
        .collect();
    let total_s: f64 = durations.iter().sum();
    let moved: u64 = st.stalls.iter().map(|s| s.bytes).sum();
    let gaps: Vec<f64> = st
        .stalls
        .windows(2)
        .map(|w| (w[1].start_ns - w[0].start_ns) as f64 / NS)
        .collect();
    let period_s = stats::median(&gaps);
    let since = |ns: i64| (ns - run_start_ns) as f64 / NS;
    let summary = StallSummary {
        count: st.stalls.len(),
        first_bytes: first.bytes_at_start,
        first_ns: first.start_ns,
        durations_s: durations,
        period_s,
        total_s,
        rate_during_bps: moved as f64 / total_s.max(1e-9),
        threshold_bps: st.threshold_bps,
    };
    let event = Event {
        target: series.target.clone(),
        phase: series.phase.clone(),
        kind: EventKind::Stall,
        onset_bytes: first.bytes_at_start,
        onset_ns: first.start_ns,
        onset_bytes_low: first.start_range_bytes.0,
        onset_bytes_high: first.start_range_bytes.1,
        onset_ns_low: first.start_range_ns.0,
        onset_ns_high: first.start_range_ns.1,
        p_value: st.p_value,
        permutations: st.permutations,
        gradual: false,
        settle_bytes: first.bytes_at_start,
        settle_ns: first.start_ns,
        rate_before_bps: st.typical_bps,
        rate_after_bps: summary.rate_during_bps,
        relative_change: summary.rate_during_bps / st.typical_bps.max(1.0) - 1.0,
        stall: Some(summary),
        cause: Cause::Unknown,
        confidence: 0.0,
        evidence: Evidence {
            onset_gb: first.bytes_at_start as f64 / 1e9,
            onset_s: since(first.start_ns),
            onset_interval_gb: [
                first.start_range_bytes.0 as f64 / 1e9,
                first.start_range_bytes.1 as f64 / 1e9,
            ],
            onset_interval_s: [since(first.start_range_ns.0), since(first.start_range_ns.1)],
            duration_s: total_s,
            onset_file_index: series
                .files
                .iter()
                .rev()
                .find(|f| (f.start_ns as i64) <= first.start_ns)
                .map_or(0, |f| u64::from(f.index)),
            reasons: vec![format!(
                "stall: 100 ms intervals under {:.0} MB/s (a tenth of the typical {:.2} GB/s) for at least {} s; no cause rule for stalls",
                st.threshold_bps / 1e6,
                st.typical_bps / 1e9,
                crate::stall::MIN_STALL_S
            )],
            ..Default::default()
        },
    };
    with_text(event)
}

/// `event` with its one-line text (`evidence.text`) written from its figures.
fn with_text(mut event: Event) -> Event {
    event.evidence.text = crate::summary::event_line(&event);
    event
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A context from `run_start_ns` 0 with no link ceiling and no drive temperature.
    fn ctx<'a>(all: &'a [Series], probe: Option<&'a ProbeSeries>) -> Context<'a> {
        Context {
            all,
            probe,
            run_start_ns: 0,
            link_ceiling: None,
            drive_temp: None,
        }
    }
    use hostd_records::FileRecord;

    const GB: u64 = 1_000_000_000;

    /// 40 files of 1 GB at 1.5 GB/s, then 40 at 1.0 GB/s, starting at `t0` ns.
    fn drop_series(target: &str, t0: i64) -> (Series, Change) {
        let mut t = t0;
        let files: Vec<FileRecord> = (0..80)
            .map(|i| {
                let rate = if i < 40 { 1.5 } else { 1.0 };
                let d = (1e9 / rate) as i64;
                let f = FileRecord::new(target, "write", i as u32, (t) as u64, (t + d) as u64, GB);
                t += d;
                f
            })
            .collect();
        let s = crate::series::group(&files).remove(0);
        let onset = s.files[40].start_ns as i64;
        let c = Change {
            kind: EventKind::Drop,
            onset_bytes: 40 * GB,
            onset_ns: onset,
            onset_bytes_range: (40 * GB, 40 * GB),
            onset_ns_range: (onset, onset),
            settle_bytes: 40 * GB,
            settle_ns: onset,
            gradual: false,
            p_value: 0.001,
            permutations: 999,
            file_pos: 40,
            rate_before_bps: 1.5e9,
            rate_after_bps: 1.0e9,
            before_ns: (s.start_ns(), onset),
            after_ns: (onset, s.end_ns()),
        };
        (s, c)
    }

    /// A probe at 100 Hz with constant power and a temperature `temp(t_s)` (±0.05 °C noise).
    fn probe(t0: i64, secs: f64, power: f64, temp: impl Fn(f64) -> f64) -> ProbeSeries {
        let mut p = ProbeSeries::default();
        let n = (secs * 100.0) as i64;
        for k in 0..n {
            let ts = k as f64 / 100.0;
            p.time_ns.push(t0 + k * 10_000_000);
            p.power_w.push(power);
            p.enclosure_temp_c
                .push(temp(ts) + 0.05 * ((k * 7919 % 13) as f64 / 6.0 - 1.0));
        }
        p
    }

    /// 80 s of probe samples from −1 s at 8 W that fall to 5 W after `onset_ns`, the
    /// enclosure following `temp`.
    fn power_falls_after(onset_ns: i64, temp: impl Fn(f64) -> f64) -> ProbeSeries {
        let mut p = probe(-1_000_000_000, 80.0, 8.0, temp);
        for (k, t) in p.time_ns.clone().iter().enumerate() {
            if *t > onset_ns {
                p.power_w[k] = 5.0;
            }
        }
        p
    }

    #[test]
    fn a_flat_enclosure_is_no_thermal_evidence_and_no_plateau() {
        let (s, c) = drop_series("x", 0);
        let p = probe(-1_000_000_000, 80.0, 6.0, |_| 25.0);
        let all = vec![s.clone()];
        let ctx = ctx(&all, Some(&p));
        let e = attribute(&s, &c, &ctx, None, &[]);
        assert_eq!(e.cause, Cause::Unknown, "{:#?}", e.evidence.reasons);
        assert_eq!(e.confidence, 0.0);
        assert_eq!(e.evidence.scores.thermal, 0.0);
        assert_eq!(e.evidence.temp_plateau_fraction, None);
        assert!(
            e.evidence
                .reasons
                .iter()
                .any(|r| r.contains("no thermal evidence")),
            "{:#?}",
            e.evidence.reasons
        );
        assert!(!e.evidence.text.contains("thermal"), "{}", e.evidence.text);
    }

    #[test]
    fn a_warming_enclosure_at_its_plateau_is_thermal() {
        let (s, c) = drop_series("x", 0);
        // Warms 40 → 60 °C until the onset (~26.7 s), then held; power falls after it.
        let onset_s = c.onset_ns as f64 * 1e-9;
        let p = power_falls_after(c.onset_ns, |t| 40.0 + 20.0 * (t / onset_s).clamp(0.0, 1.0));
        let all = vec![s.clone()];
        let ctx = ctx(&all, Some(&p));
        let e = attribute(&s, &c, &ctx, None, &[]);
        assert_eq!(e.cause, Cause::Thermal, "{:#?}", e.evidence.reasons);
        assert!(e.evidence.temp_rise_c.unwrap() > 15.0);
    }

    #[test]
    fn a_drive_at_its_own_plateau_makes_a_still_warming_enclosure_thermal() {
        let (s, c) = drop_series("x", 0);
        // The enclosure warms 40 → 60 °C over the whole run (still rising at the onset);
        // power falls after the onset.
        let end_s = s.end_ns() as f64 * 1e-9;
        let onset_s = c.onset_ns as f64 * 1e-9;
        let p = power_falls_after(c.onset_ns, |t| 40.0 + 20.0 * (t / end_s).clamp(0.0, 1.0));
        let all = vec![s.clone()];
        let mut ctx = Context {
            all: &all,
            probe: Some(&p),
            run_start_ns: 0,
            link_ceiling: None,
            drive_temp: None,
        };
        let without = attribute(&s, &c, &ctx, None, &[]);
        assert_ne!(
            without.cause,
            Cause::Thermal,
            "{:#?}",
            without.evidence.reasons
        );
        // The controller, read once a second in whole degrees, reached 75 °C at the onset
        // and held there.
        let drive: Vec<(i64, f64)> = (0..80)
            .map(|k| {
                let t = k as f64;
                let v = 45.0 + 30.0 * (t / onset_s).min(1.0);
                ((t * 1e9) as i64, v.round())
            })
            .collect();
        ctx.drive_temp = Some(&drive);
        let with = attribute(&s, &c, &ctx, None, &[]);
        assert_eq!(with.cause, Cause::Thermal, "{:#?}", with.evidence.reasons);
        let ev = &with.evidence;
        // Readings within ±2 s of the onset: the last of the climb and the held 75 °C.
        assert!((73.0..=75.0).contains(&ev.drive_temp_at_onset_c.unwrap()));
        assert!(ev.drive_temp_rise_c.unwrap() >= 29.0);
        assert!(ev.drive_temp_plateau_fraction.unwrap() >= 0.95);
        assert!(ev.drive_temp_slope_after_c_per_s.unwrap().abs() < 0.005);
        assert!(
            ev.reasons
                .iter()
                .any(|r| r.contains("✓") && r.contains("drive (SMART)")),
            "{:#?}",
            ev.reasons
        );
    }

    #[test]
    fn without_a_probe_or_other_targets_the_cause_is_unknown() {
        let (s, c) = drop_series("x", 0);
        let all = vec![s.clone()];
        let ctx = Context {
            link_ceiling: crate::overlap::peak_aggregate_bps(&all).map(|c| (c, false)),
            ..ctx(&all, None)
        };
        let e = attribute(&s, &c, &ctx, None, &[]);
        assert_eq!((e.cause, e.confidence), (Cause::Unknown, 0.0));
    }

    #[test]
    fn a_short_run_has_no_link_ceiling_and_no_figure_exceeds_one() {
        // Under 5 whole seconds: the ceiling is unknown.
        let short: Vec<FileRecord> = (0..12)
            .map(|i| {
                FileRecord::new(
                    "q",
                    "write",
                    i as u32,
                    (i as i64 * 20_000_000) as u64,
                    ((i as i64 + 1) * 20_000_000) as u64,
                    28_000_000,
                )
            })
            .collect();
        assert_eq!(
            crate::overlap::peak_aggregate_bps(&crate::series::group(&short)),
            None
        );
        // Two targets: A drops while B runs; whatever the bins, the aggregate is ≤ 100 %.
        let (a, c) = drop_series("A", 0);
        let (b, _) = drop_series("B", 0);
        let all = vec![a.clone(), b];
        let ceiling = crate::overlap::peak_aggregate_bps(&all).unwrap();
        let ctx = Context {
            link_ceiling: Some((ceiling * 0.5, false)),
            ..ctx(&all, None)
        };
        let e = attribute(&a, &c, &ctx, None, &[]);
        let agg = e.evidence.aggregate_bps.unwrap();
        let used = e.evidence.link_ceiling_bps.unwrap();
        assert!(agg <= used * (1.0 + 1e-9), "{agg} > {used}");
        assert!(
            !e.evidence.reasons.iter().any(|r| {
                r.split(" = ")
                    .nth(1)
                    .and_then(|x| x.split(" %").next())
                    .and_then(|x| x.trim().parse::<f64>().ok())
                    .is_some_and(|pct| pct > 100.0)
            }),
            "{:#?}",
            e.evidence.reasons
        );
        assert_eq!(e.cause, Cause::Contention, "{:#?}", e.evidence.reasons);
    }
}
