//! Thermal throttling: the enclosure (or the drive's own sensor) at its plateau when the rate
//! fell, its slope flat after, and bus power that follows throughput; a recovery while it cools.

use super::evidence::drive_at_plateau;
use super::evidence::WINDOW_S;
use super::signal::smoothed_min_max;
use super::{CauseRule, Checks, Facts};
use hostd_records::cause::Cause;
use hostd_records::drive_log::{DriveLogDelta, DriveLogRecord};
use hostd_records::events::Evidence;
use hostd_records::published::signed;

/// A drive that logged throttling or heat in the window adds this much to thermal.
const DRIVE_LOG_CONFIRMS: f64 = 0.3;
/// A drive whose thermal management counters are known and did not move (nor its warning
/// time) takes this much off thermal.
const DRIVE_LOG_CONTRADICTS: f64 = 0.25;

/// The drive log's change over the window from the phase's start to a minute after the
/// onset (at most the phase's end): from the last reading at or before the start (else the
/// first after it) to the first at or after the end (else the last before it).
fn window_delta(log: &[DriveLogRecord], start: i64, end: i64) -> Option<DriveLogDelta> {
    let first = log
        .iter()
        .rev()
        .find(|r| r.time_ns <= start)
        .or_else(|| log.iter().find(|r| r.time_ns > start && r.time_ns <= end))?;
    let last = log.iter().find(|r| r.time_ns >= end).or_else(|| {
        log.iter()
            .rev()
            .find(|r| r.time_ns < end && r.time_ns >= start)
    })?;
    (last.time_ns > first.time_ns).then(|| DriveLogDelta::between(first, last))
}

/// The drive's own thermal record as evidence: counters that grew confirm thermal
/// throttling; known thermal management counters and warning time that did not move argue
/// against it (docs/methodology.md "The drive's own thermal record").
fn drive_log(facts: &Facts, ev: &mut Evidence, r: &mut Checks) {
    let Some(log) = facts.ctx.drive_log else {
        return;
    };
    let start = facts.series.start_ns();
    let end = (facts.change.onset.ns + (WINDOW_S * 1e9) as i64).min(facts.series.end_ns());
    let Some(d) = window_delta(log, start, end) else {
        r.cannot("the drive's thermal record has no two readings in this phase".into());
        return;
    };
    let when = format!(
        "over {:.0} s from the phase's start to {:.0} s after the onset",
        d.seconds,
        (end - facts.change.onset.ns) as f64 / 1e9
    );
    if d.logged_heat() {
        r.check(
            DRIVE_LOG_CONFIRMS,
            true,
            format!(
                "the drive logged {} {when} (its own record of throttling)",
                d.words()
            ),
        );
    } else if d.tmt1_transitions.is_some() && d.warning_temp_time_min.is_none_or(|w| w == 0) {
        r.against(
            DRIVE_LOG_CONTRADICTS,
            format!("the drive logged no throttling {when}: {} (a drive that throttles counts its transitions)", d.words()),
        );
    } else if d.has_counters() {
        r.cannot(format!(
            "the drive logged nothing {when} ({}), but it does not report its thermal management counters: no evidence either way",
            d.words()
        ));
    }
    ev.drive_thermal_log = Some(d);
}

/// The rules for "the drive throttled to hold its temperature" (checked only where the
/// enclosure rose beyond its noise before the onset).
pub(super) struct Thermal;

impl CauseRule for Thermal {
    fn cause(&self) -> Cause {
        Cause::Thermal
    }

    fn score(&self, facts: &Facts, ev: &mut Evidence, r: &mut Checks) {
        if !facts.thermal_evidence() {
            // The drive's own record is independent of the probe: read it even where the
            // enclosure could not be checked.
            drive_log(facts, ev, r);
            return;
        }
        let plateau = ev.temp_plateau_fraction;
        let (sb, sa) = (ev.temp_slope_before_c_per_s, ev.temp_slope_after_c_per_s);
        if facts.drop {
            // The controller heats before the enclosure: a drive (SMART) temperature at its
            // plateau meets this rule where the enclosure is still on its way.
            let drive_plateau = drive_at_plateau(ev).filter(|&f| f >= 0.85);
            match (plateau, ev.temp_at_onset_c, drive_plateau) {
                (Some(f), Some(t), None) => r.check(0.35, f >= 0.85, format!("enclosure {t:.1} °C at onset, {:.0} % of the way from its low to its plateau {:.1} °C", f * 100.0, ev.temp_max_c.unwrap_or(t))),
                (f, _, Some(d)) if f.is_none_or(|f| f < 0.85) => r.check(0.35, true, format!("drive (SMART) {:.0} °C at onset, {:.0} % of the way to its plateau (the controller at its limit; the enclosure {})", ev.drive_temp_at_onset_c.unwrap_or(f64::NAN), d * 100.0, f.map_or("not measured".into(), |f| format!("{:.0} % of the way to its own", f * 100.0)))),
                (Some(f), Some(t), Some(_)) => r.check(0.35, f >= 0.85, format!("enclosure {t:.1} °C at onset, {:.0} % of the way from its low to its plateau {:.1} °C (the drive's own temperature at its plateau too)", f * 100.0, ev.temp_max_c.unwrap_or(t))),
                _ => {}
            }
            if let (Some(b), Some(a)) = (sb, sa) {
                let flat = a <= 0.25 * b.max(0.0) + 0.005;
                r.check(0.2, flat, format!("temperature slope {} °C/s before, {} °C/s after (flat or falling after onset means held at a limit)", signed(b, 3), signed(a, 3)));
            }
        } else {
            let peak_before = facts
                .ctx
                .probe
                .and_then(|p| {
                    smoothed_min_max(
                        p,
                        &p.enclosure_temp_c,
                        facts.series.start_ns(),
                        facts.change.onset.ns,
                    )
                })
                .map(|m| m.1);
            if let (Some(b), Some(t), Some(hi)) = (sb, ev.temp_at_onset_c, peak_before) {
                let cooled = b < -0.005 || t < hi - 2.0;
                r.check(0.5, cooled, format!("enclosure {t:.1} °C at recovery, peak before it {hi:.1} °C, slope before {} °C/s (cooling means a thermal limit released)", signed(b, 3)));
            }
        }
        // Bus power that follows throughput (falls with a drop, rises with a recovery).
        if let (Some(pb), Some(pa), Some(follows)) =
            (ev.power_before_w, ev.power_after_w, facts.power_falls)
        {
            let rate_ratio = facts.rate_ratio;
            r.check(
                0.3,
                follows,
                format!("bus power {pb:.2} → {pa:.2} W with throughput ×{rate_ratio:.2}"),
            );
        }
        r.check(
            if facts.drop { 0.15 } else { 0.2 },
            facts.alone,
            "no other target active".to_string(),
        );
        // Last, so that a sign against takes off what the other rules gave.
        drive_log(facts, ev, r);
    }
}
