//! An exhausted SLC write cache: a drop while writing with bus power held, the enclosure
//! still below its plateau and rising, and no recovery for the rest of the phase.

use super::evidence::drive_at_plateau;
use super::{CauseRule, Checks, Facts};
use hostd_records::cause::{Cause, EventKind};
use hostd_records::events::Evidence;

/// The rules for "the SLC write cache filled" (drops only; checked only where the enclosure
/// rose beyond its noise before the onset).
pub(super) struct SlcCache;

impl CauseRule for SlcCache {
    fn cause(&self) -> Cause {
        Cause::SlcCache
    }

    fn score(&self, facts: &Facts, ev: &mut Evidence, r: &mut Checks) {
        if !facts.thermal_evidence() || !facts.drop {
            return;
        }
        if !facts.series.phase.contains("write") {
            r.cannot(format!(
                "a {} phase; an SLC cache only fills on writes",
                facts.series.phase
            ));
            return;
        }
        if let (Some(pb), Some(pa)) = (ev.power_before_w, ev.power_after_w) {
            r.check(
                0.3,
                pa / pb >= 0.85,
                format!("bus power held: {pb:.2} → {pa:.2} W (the drive works as hard, writing TLC directly)"),
            );
        }
        // A drive (SMART) temperature at its plateau and flat after the onset says the
        // controller may be at its thermal limit, whatever the enclosure does.
        let drive_held = drive_at_plateau(ev).is_some_and(|f| f >= 0.85)
            && ev
                .drive_temp_slope_after_c_per_s
                .is_some_and(|a| a <= 0.005);
        let sa = ev.temp_slope_after_c_per_s;
        if let Some(f) = ev.temp_plateau_fraction {
            let rising = sa.is_some_and(|a| a > 0.005);
            if drive_held {
                r.check(0.3, false, format!("enclosure {:.0} % of the way to its plateau and rising ({:+.3} °C/s), but the drive (SMART) is at its plateau and flat after onset: a thermal limit is not ruled out", f * 100.0, sa.unwrap_or(f64::NAN)));
            } else {
                r.check(0.3, f < 0.7 && rising, format!("temperature {:.0} % of the way to its plateau at onset and still rising ({:+.3} °C/s): not a thermal limit", f * 100.0, sa.unwrap_or(f64::NAN)));
            }
        }
        let recovers = facts.later.iter().any(|c| c.kind == EventKind::Recovery);
        r.check(
            0.2,
            !recovers,
            if recovers {
                "throughput recovers later while writing (a full SLC cache does not)".into()
            } else {
                "no recovery for the rest of the phase".into()
            },
        );
        r.check(0.2, facts.alone, "no other target active".to_string());
    }
}
