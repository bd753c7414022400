//! The evidence every cause's rules read, gathered once per event: the onset's place in the
//! run, the other targets active during the slow part, what the probe and the drive's own
//! temperature measured around the onset, the OS log's window (`log_window.rs`) and the host
//! port at the onset (`port_facts.rs`), with the notes that say which rules could not be
//! checked.

use super::log_window::LogWindow;
use super::signal::{largest_rise, nearest, rate_in_window, sensor_noise, slope, smoothed_min_max};
use super::signs::Signs;
use super::{port_facts, Context, Facts, NS};
use crate::detect::Change;
use crate::series::Series;
use crate::stats;
use hostd_records::cause::{Cause, EventKind};
use hostd_records::events::{Evidence, Source};
use hostd_records::published::signed;
use hostd_records::ProbeSeries;

/// Probe windows around an onset are at most this long, s.
pub(crate) const WINDOW_S: f64 = 60.0;
/// Samples this close to the onset are left out of before/after means, s (at most a tenth
/// of the shorter segment).
const SETTLE_S: f64 = 1.0;

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

/// The facts and evidence of one change, and its first signs: the notes on what could not
/// be checked, in the order the event lists them.
pub(super) fn gather<'a>(
    series: &'a Series,
    change: &'a Change,
    ctx: &'a Context<'a>,
    next_onset_ns: Option<i64>,
    later: &'a [Change],
) -> (Facts<'a>, Evidence, Signs) {
    let mut ev = onset(series, change, ctx, next_onset_ns);
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
    let alone = other_targets(&others, change, slow, &mut ev);
    let mut signs = Signs::default();
    let windows = Windows::of(change);
    let power_falls = match ctx.probe {
        Some(p) => probe_evidence(p, series, change, &windows, rate_ratio, &mut ev),
        None => {
            signs.unread(Source::Probe);
            None
        }
    };
    if let Some(temps) = ctx.drive_temp {
        let after_end = change
            .after_ns
            .1
            .min(change.onset.ns + (WINDOW_S * NS) as i64);
        drive_evidence(temps, series, change.onset.ns, after_end, &mut ev);
        if let Some(line) = drive_line(&ev) {
            signs.note(line);
        }
    }
    let rise_needed = rise_needed(&ev);
    let warmed = ev.temp_rise_c.is_some_and(|r| r > rise_needed);
    if ctx.probe.is_some() && !warmed {
        signs.rule(Cause::Thermal, 0.0, false, &format!(
            "the enclosure rose {} before the onset, not more than {rise_needed:.2} °C (6 × the sensor's noise σ {}, at least {MIN_RISE_C} °C): no thermal evidence",
            ev.temp_rise_c.map_or("by an unknown amount".into(), |r| format!("{r:.2} °C")),
            ev.temp_noise_c.map_or("unknown".into(), |n| format!("{n:.3} °C")),
        ));
    }
    // The OS log's window and the port are read for drops only: neither explains a recovery.
    let log = ctx
        .os_log
        .filter(|_| drop)
        .map(|log| LogWindow::around(log, &series.target, change));
    let port = ctx.probe.filter(|_| drop).map(|p| {
        let port = port_facts::gather(p, ctx, change, &windows, log.as_ref());
        port_figures(&port, &mut ev);
        port
    });
    let facts = Facts {
        series,
        change,
        ctx,
        later,
        drop,
        rate_ratio,
        slow,
        others,
        alone,
        power_falls,
        warmed,
        stalls: None,
        log,
        port,
    };
    (facts, ev, signs)
}

/// The port's figures in the evidence: the budget after the onset (W and A), the drive's
/// current as a share of the budget before and after, and VBUS's lowest at the onset.
fn port_figures(port: &port_facts::PortFacts, ev: &mut Evidence) {
    ev.port_budget_w = port.after.w;
    ev.port_budget_a = port.after.a;
    ev.power_share_before = port.share_before();
    ev.power_share_after = port.share_after();
    ev.vbus_min_at_onset_v = port.vbus_low_v;
}

/// The probe's windows around an onset, host ns: before = up to [`WINDOW_S`] before it (to
/// half the settling margin before it), after = from the settling margin to [`WINDOW_S`]
/// after it, the margin [`SETTLE_S`] or a tenth of the shorter segment, whichever is less.
pub(super) struct Windows {
    /// The window before the onset.
    pub before: (i64, i64),
    /// The window after the onset.
    pub after: (i64, i64),
    /// The settling margin, ns.
    pub settle: i64,
}

impl Windows {
    /// The windows of `change`.
    fn of(change: &Change) -> Windows {
        let w = (WINDOW_S * NS) as i64;
        // Short segments (accelerated simulations, quick runs) get a proportionally short
        // settling margin so both windows keep samples.
        let shorter =
            (change.before_ns.1 - change.before_ns.0).min(change.after_ns.1 - change.after_ns.0);
        let settle = ((SETTLE_S * NS) as i64).min(shorter / 10);
        Windows {
            before: (
                change.before_ns.0.max(change.onset.ns - w),
                change.onset.ns - settle / 2,
            ),
            after: (
                change.onset.ns + settle,
                change.after_ns.1.min(change.onset.ns + w),
            ),
            settle,
        }
    }
}

/// The evidence's onset, its interval (GB and s from the run's start), the event's duration
/// and the file it happened in.
pub(super) fn onset(
    series: &Series,
    change: &Change,
    ctx: &Context,
    next_onset_ns: Option<i64>,
) -> Evidence {
    let since = |ns: i64| (ns - ctx.run_start_ns) as f64 / NS;
    Evidence {
        onset_gb: change.onset.bytes as f64 / 1e9,
        onset_s: since(change.onset.ns),
        onset_interval_gb: [
            change.onset.bytes_range.0 as f64 / 1e9,
            change.onset.bytes_range.1 as f64 / 1e9,
        ],
        onset_interval_s: [
            since(change.onset.ns_range.0),
            since(change.onset.ns_range.1),
        ],
        duration_s: (next_onset_ns.unwrap_or(series.end_ns()) - change.onset.ns).max(0) as f64 / NS,
        onset_file_index: u64::from(series.files[series.file_at(change.onset.bytes)].index),
        ..Default::default()
    }
}

/// Fills in the other targets active for at least half of the slow part; true when the
/// series ran alone (none of them, and none active at the onset either).
fn other_targets(others: &[&Series], change: &Change, slow: (i64, i64), ev: &mut Evidence) -> bool {
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
        .any(|s| s.start_ns() <= change.onset.ns && s.end_ns() >= change.onset.ns);
    ev.other_targets_active.is_empty() && !active_at_onset
}

/// Fills in the enclosure temperature and bus power around the onset; returns whether power
/// followed throughput, when power was measured on both sides.
fn probe_evidence(
    p: &ProbeSeries,
    series: &Series,
    change: &Change,
    windows: &Windows,
    rate_ratio: f64,
    ev: &mut Evidence,
) -> Option<bool> {
    let drop = change.kind == EventKind::Drop;
    let (before, after, settle) = (windows.before, windows.after, windows.settle);
    let half = settle / 2;
    ev.temp_at_onset_c = p
        .mean_in(
            &p.enclosure_temp_c,
            change.onset.ns - half,
            change.onset.ns + half,
        )
        .or_else(|| {
            nearest(
                p,
                &p.enclosure_temp_c,
                change.onset.ns,
                (SETTLE_S * NS) as i64,
            )
        });
    let r = p.range(series.start_ns(), series.end_ns());
    ev.temp_noise_c = sensor_noise(&p.enclosure_temp_c[r]);
    let rise_needed = rise_needed(ev);
    ev.temp_rise_c = largest_rise(p, &p.enclosure_temp_c, series.start_ns(), change.onset.ns);
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
    let (pb, pa) = (ev.power_before_w?, ev.power_after_w?);
    // "Falls with throughput": slow/fast power at most 1 − 0.3·(1 − slow/fast rate),
    // i.e. power follows at least 30 % of the relative change (read from the slow
    // side for a recovery too, so a ×3 recovery is not held to a ×3 power rise).
    let (slow_p, fast_p) = if drop { (pa, pb) } else { (pb, pa) };
    let slow_fast_rate = rate_ratio.min(1.0 / rate_ratio.max(1e-12));
    Some(slow_p / fast_p <= 1.0 - 0.3 * (1.0 - slow_fast_rate))
}

/// The drive (SMART) temperature at the onset in words, when it was read there.
fn drive_line(ev: &Evidence) -> Option<String> {
    let t = ev.drive_temp_at_onset_c?;
    Some(format!(
        "drive (SMART) {t:.0} °C at onset{}{}{}",
        ev.drive_temp_rise_c.map_or(String::new(), |r| format!(
            ", {} °C since the phase began",
            signed(r, 0)
        )),
        ev.drive_temp_plateau_fraction
            .map_or(String::new(), |f| format!(
                ", {:.0} % of the way to its high",
                f * 100.0
            )),
        ev.drive_temp_slope_after_c_per_s
            .map_or(String::new(), |a| format!(", {} °C/s after", signed(a, 3))),
    ))
}

/// How far the enclosure must have risen before the onset to be thermal evidence, °C.
fn rise_needed(ev: &Evidence) -> f64 {
    MIN_RISE_C.max(RISE_NOISE_FACTOR * ev.temp_noise_c.unwrap_or(0.0))
}

/// How far the drive's (SMART) temperature was on the way to its high at the onset, when it
/// rose enough for that to mean anything.
pub(super) fn drive_at_plateau(ev: &Evidence) -> Option<f64> {
    ev.drive_temp_plateau_fraction
        .filter(|_| ev.drive_temp_rise_c.is_some_and(|r| r >= DRIVE_MIN_RISE_C))
}
