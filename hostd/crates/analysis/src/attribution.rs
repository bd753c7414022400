//! Attribution of a drop or recovery to thermal throttling, an exhausted SLC cache or
//! contention for a shared link, with the evidence in numbers and words.
//! Rules and weights are documented in docs/methodology.md.

use crate::detect::Change;
use crate::input::{FileRecord, ProbeSeries};
use crate::model::{Cause, Event, EventKind, Evidence, Scores};
use crate::series::Series;
use crate::stats;

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
    /// Link ceiling, bytes/s (given, or the peak 1 s aggregate of the run).
    pub link_ceiling_bps: Option<f64>,
}

/// Bytes/s moved by `files` inside `[a, b)`, each file spread evenly over its duration.
pub fn rate_in_window<'f>(files: impl Iterator<Item = &'f FileRecord>, a: i64, b: i64) -> f64 {
    if b <= a {
        return 0.0;
    }
    let mut bytes = 0.0;
    for f in files {
        let lo = f.start_ns.max(a);
        let hi = f.end_ns.min(b);
        if hi > lo {
            bytes += f.bytes as f64 * (hi - lo) as f64 / (f.end_ns - f.start_ns).max(1) as f64;
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
) -> Event {
    let mut ev = Evidence {
        onset_gb: change.onset_bytes as f64 / 1e9,
        onset_s: (change.onset_ns - ctx.run_start_ns) as f64 / NS,
        duration_s: (next_onset_ns.unwrap_or(series.end_ns()) - change.onset_ns).max(0) as f64 / NS,
        onset_file_index: series.files[change.file_pos].index,
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
        if let Some((lo, hi)) =
            smoothed_min_max(p, &p.enclosure_temp_c, series.start_ns(), series.end_ns())
        {
            ev.temp_min_c = Some(lo);
            ev.temp_max_c = Some(hi);
            if let Some(t) = ev.temp_at_onset_c {
                ev.temp_plateau_fraction = Some(if hi - lo > 0.5 {
                    ((t - lo) / (hi - lo)).clamp(0.0, 1.0)
                } else {
                    1.0
                });
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
            let power_ratio = pa / pb;
            // "Falls with throughput": at least 30 % of the relative throughput change.
            let expected = 1.0 - 0.3 * (1.0 - rate_ratio).abs();
            power_falls = Some(if drop {
                power_ratio <= expected
            } else {
                power_ratio >= 1.0 / expected
            });
        }
    } else {
        reasons.push(
            "no probe samples for this target: thermal and SLC rules cannot be checked".to_string(),
        );
    }

    let plateau = ev.temp_plateau_fraction;
    let (sb, sa) = (ev.temp_slope_before_c_per_s, ev.temp_slope_after_c_per_s);
    if ctx.probe.is_some() {
        let mut r = Rule {
            scores: &mut thermal,
            reasons: &mut reasons,
            label: "thermal",
        };
        if drop {
            if let (Some(f), Some(t)) = (plateau, ev.temp_at_onset_c) {
                r.check(0.35, f >= 0.85, format!("enclosure {t:.1} °C at onset, {:.0} % of the way from its low to its plateau {:.1} °C", f * 100.0, ev.temp_max_c.unwrap_or(t)));
            }
            if let (Some(b), Some(a)) = (sb, sa) {
                let flat = a <= 0.25 * b.max(0.0) + 0.005;
                r.check(0.2, flat, format!("temperature slope {b:+.3} °C/s before, {a:+.3} °C/s after (flat or falling after onset means held at a limit)"));
            }
            if let (Some(pb), Some(pa), Some(falls)) =
                (ev.power_before_w, ev.power_after_w, power_falls)
            {
                r.check(
                    0.3,
                    falls,
                    format!("bus power {pb:.2} → {pa:.2} W while throughput went ×{rate_ratio:.2}"),
                );
            }
            r.check(0.15, alone, "no other target active".to_string());
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
            if let (Some(pb), Some(pa), Some(rises)) =
                (ev.power_before_w, ev.power_after_w, power_falls)
            {
                r.check(
                    0.3,
                    rises,
                    format!("bus power {pb:.2} → {pa:.2} W with throughput ×{rate_ratio:.2}"),
                );
            }
            r.check(0.2, alone, "no other target active".to_string());
        }
        let mut r = Rule {
            scores: &mut slc,
            reasons: &mut reasons,
            label: "slc_cache",
        };
        if drop {
            if let Some(f) = plateau {
                let rising = sa.is_some_and(|a| a > 0.005);
                r.check(0.3, f < 0.7 && rising, format!("temperature {:.0} % of the way to its plateau at onset and still rising ({:+.3} °C/s)", f * 100.0, sa.unwrap_or(f64::NAN)));
            }
            if let (Some(pb), Some(pa)) = (ev.power_before_w, ev.power_after_w) {
                r.check(
                    0.25,
                    pa / pb >= 0.85,
                    format!("bus power held: {pb:.2} → {pa:.2} W"),
                );
            }
            if let (Some(b), Some(a)) = (ev.j_per_gb_before, ev.j_per_gb_after) {
                r.check(
                    0.25,
                    a >= 1.1 * b,
                    format!("energy per GB {b:.2} → {a:.2} J/GB"),
                );
            }
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
        let agg = rate_in_window(
            ctx.all.iter().flat_map(|s| s.files.iter()),
            slow.0,
            others_end,
        );
        ev.aggregate_bps = Some(agg);
        ev.link_ceiling_bps = ctx.link_ceiling_bps;
        if let Some(ceiling) = ctx.link_ceiling_bps {
            r.check(0.3, !alone && agg >= 0.8 * ceiling, format!("aggregate {:.2} GB/s during the slow part = {:.0} % of the link ceiling {:.2} GB/s", agg / 1e9, agg / ceiling * 100.0, ceiling / 1e9));
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
        rate_before_bps: change.rate_before_bps,
        rate_after_bps: change.rate_after_bps,
        cause,
        confidence: (confidence * 100.0).round() / 100.0,
        evidence: ev,
    };
    Event {
        evidence: Evidence {
            text: crate::summary::event_line(&event),
            ..event.evidence.clone()
        },
        ..event
    }
}
