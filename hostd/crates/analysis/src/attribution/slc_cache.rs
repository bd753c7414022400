//! An exhausted SLC write cache: a drop while writing with bus power held, and no recovery
//! for the rest of the phase. Where the enclosure warmed, it is still below its plateau and
//! rising; where it did not (a well-cooled drive), the cache's own signs stand in: energy
//! per byte rising after the drop, and a sudden drop at a volume of data. A later full
//! recovery while writing goes on counts against the cause. A drive its port held at the
//! onset shows the same held power; `power` declares that it explains it away.

use super::evidence::drive_at_plateau;
use super::{CauseRule, Checks, Facts};
use hostd_records::cause::{Cause, EventKind};
use hostd_records::events::Evidence;
use hostd_records::published::signed;

/// A later recovery to at least this share of the rate before the drop is full.
const FULL_RECOVERY: f64 = 0.9;
/// A cache fills only after this much was written in the phase, bytes.
const MIN_VOLUME_BYTES: u64 = 1_000_000_000;

/// The rules for "the SLC write cache filled" (drops in a write phase whose target the
/// probe measured; no heat needed).
pub(super) struct SlcCache;

impl CauseRule for SlcCache {
    fn cause(&self) -> Cause {
        Cause::SlcCache
    }

    fn score(&self, facts: &Facts, ev: &mut Evidence, r: &mut Checks) {
        if facts.ctx.probe.is_none() || !facts.drop {
            return;
        }
        if !facts.series.phase.contains("write") {
            r.cannot(format!(
                "a {} phase; an SLC cache only fills on writes",
                facts.series.phase
            ));
            return;
        }
        let mut held = false;
        if let (Some(pb), Some(pa)) = (ev.power_before_w, ev.power_after_w) {
            held = pa / pb >= 0.85;
            r.check(
                0.3,
                held,
                format!("bus power held: {pb:.2} → {pa:.2} W (the drive works as hard, writing TLC directly)"),
            );
        }

        if facts.warmed {
            temperature_rule(ev, r);
        } else if !cool_rules(facts, ev, r) || !held {
            // Without heat the power signature is the evidence; the rest (no recovery,
            // alone) fits any drop.
            r.cannot(
                "the enclosure did not warm, and bus power and energy per byte do not both show a drive working as hard for fewer bytes: no SLC evidence".into(),
            );
            return;
        }
        let full = facts.later.iter().find(|c| {
            c.kind == EventKind::Recovery
                && c.rate_after_bps >= FULL_RECOVERY * facts.change.rate_before_bps
        });
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
        if let Some(c) = full {
            r.against(
                0.2,
                format!(
                    "full recovery at {:.1} GB to {:.2} GB/s ({:.0} % of the rate before the drop) while writing goes on: weak SLC evidence",
                    c.onset.bytes as f64 / 1e9,
                    c.rate_after_bps / 1e9,
                    100.0 * c.rate_after_bps / facts.change.rate_before_bps.max(1.0)
                ),
            );
        }
        r.check(0.2, facts.alone, "no other target active".to_string());
    }
}

/// Where the enclosure warmed: still below its plateau and rising at the onset (not a
/// thermal limit), unless the drive's own temperature is at its plateau.
fn temperature_rule(ev: &Evidence, r: &mut Checks) {
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
            r.check(0.3, false, format!("enclosure {:.0} % of the way to its plateau and rising ({} °C/s), but the drive (SMART) is at its plateau and flat after onset: a thermal limit is not ruled out", f * 100.0, signed(sa.unwrap_or(f64::NAN), 3)));
        } else {
            r.check(0.3, f < 0.7 && rising, format!("temperature {:.0} % of the way to its plateau at onset and still rising ({} °C/s): not a thermal limit", f * 100.0, signed(sa.unwrap_or(f64::NAN), 3)));
        }
    }
}

/// Where the enclosure did not warm (thermal has no evidence): energy per byte rising after
/// the drop by at least half of what held power gives, and a sudden drop after at least
/// [`MIN_VOLUME_BYTES`] of the phase. True when energy per byte rose.
fn cool_rules(facts: &Facts, ev: &Evidence, r: &mut Checks) -> bool {
    let mut rose = false;
    if let (Some(jb), Some(ja)) = (ev.j_per_gb_before, ev.j_per_gb_after) {
        let held = 1.0 / facts.rate_ratio.max(1e-9);
        rose = ja / jb >= 1.0 + 0.5 * (held - 1.0);
        r.check(
            0.2,
            rose,
            format!(
                "energy per byte {jb:.2} → {ja:.2} J/GB (×{:.2}; ×{held:.2} if the drive works as hard for fewer bytes)",
                ja / jb
            ),
        );
    }
    let at = facts.change.onset.bytes;
    r.check(
        0.1,
        !facts.change.gradual && at >= MIN_VOLUME_BYTES,
        format!(
            "{} after {:.1} GB of the phase (a cache runs out at a volume of data, in one step)",
            if facts.change.gradual {
                "a gradual decline"
            } else {
                "a sudden drop"
            },
            at as f64 / 1e9
        ),
    );
    rose
}
