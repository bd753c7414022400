//! Contention for a shared link: other targets active during the slow part, the aggregate
//! near the link's ceiling, and another target that started just before the drop or ended
//! just before the recovery.

use super::signal::rate_in_window;
use super::{CauseRule, Checks, Facts, NS};
use hostd_records::cause::Cause;
use hostd_records::events::Evidence;

/// The rules for "another target took the shared link's bandwidth".
pub(super) struct Contention;

impl CauseRule for Contention {
    fn cause(&self) -> Cause {
        Cause::Contention
    }

    fn score(&self, facts: &Facts, ev: &mut Evidence, r: &mut Checks) {
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
        near_the_ceiling(facts, ev, r);
        if facts.drop {
            another_started(facts, r);
        } else {
            another_ended(facts, ev, r);
        }
    }
}

/// The aggregate of all targets while the others were still there, against the link's
/// ceiling (the rule is checked only when both are known).
fn near_the_ceiling(facts: &Facts, ev: &mut Evidence, r: &mut Checks) {
    let slow = facts.slow;
    // Aggregate while the others were still there: up to the last end, inside the slow
    // part, of the other targets active during it.
    let others_end = facts
        .others
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
            facts.ctx.all.iter().flat_map(|s| s.files.iter()),
            slow.0,
            others_end,
        )
    });
    ev.aggregate_bps = agg;
    match (agg, facts.ctx.link_ceiling) {
        (None, _) => r.cannot(
            "the slow part with the others active lasted under 1 s: aggregate not measured".into(),
        ),
        (Some(_), None) => r.cannot(
            "link ceiling unknown (fewer than 5 whole seconds measured; give --link-ceiling-gbps)"
                .into(),
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
            r.check(0.3, !facts.alone && agg >= 0.8 * ceiling, words);
        }
    }
}

/// A drop: another target started within 5 s before it.
fn another_started(facts: &Facts, r: &mut Checks) {
    let started = facts.others.iter().filter_map(|s| {
        let lag = (facts.change.onset.ns - s.start_ns()) as f64 / NS;
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
}

/// A recovery: another target finished within 30 s before it (recorded in the evidence).
fn another_ended(facts: &Facts, ev: &mut Evidence, r: &mut Checks) {
    let ended = facts
        .others
        .iter()
        .filter_map(|s| {
            let lag = (facts.change.onset.ns - s.end_ns()) as f64 / NS;
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
