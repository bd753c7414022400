//! Thermal throttling: the enclosure (or the drive's own sensor) at its plateau when the rate
//! fell, its slope flat after, and bus power that follows throughput; a recovery while it cools.

use super::evidence::drive_at_plateau;
use super::signal::smoothed_min_max;
use super::{CauseRule, Checks, Facts};
use hostd_records::cause::Cause;
use hostd_records::events::Evidence;

/// The rules for "the drive throttled to hold its temperature" (checked only where the
/// enclosure rose beyond its noise before the onset).
pub(super) struct Thermal;

impl CauseRule for Thermal {
    fn cause(&self) -> Cause {
        Cause::Thermal
    }

    fn score(&self, facts: &Facts, ev: &mut Evidence, r: &mut Checks) {
        if !facts.thermal_evidence() {
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
                r.check(0.2, flat, format!("temperature slope {b:+.3} °C/s before, {a:+.3} °C/s after (flat or falling after onset means held at a limit)"));
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
                        facts.change.onset_ns,
                    )
                })
                .map(|m| m.1);
            if let (Some(b), Some(t), Some(hi)) = (sb, ev.temp_at_onset_c, peak_before) {
                let cooled = b < -0.005 || t < hi - 2.0;
                r.check(0.5, cooled, format!("enclosure {t:.1} °C at recovery, peak before it {hi:.1} °C, slope before {b:+.3} °C/s (cooling means a thermal limit released)"));
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
    }
}
