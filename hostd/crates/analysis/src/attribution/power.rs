//! The host port's power: a drive held at the port's budget (its bus power at the budget
//! before and after the onset, a clipped top), or VBUS sagging under load (below vSafe5V's
//! 4.75 V at the onset; a link reset or disconnect the OS logged at the dip). Against: bus
//! power well below the budget with no sag; with no budget known and no sag the rules
//! cannot reach [`super::MIN_SCORE`]. See docs/methodology.md, "Power".
//!
//! The budget is the probe's CC reading or the user's `--port-budget` (the manifest's
//! `power_budget`), the one in force at the onset when the port's advertisement changed
//! during the run (the timeline); the sag is read from each point's lowest VBUS
//! (`vbus_min_v`: a sample's reading or its batch's minimum, or a bin's minimum).

use super::link::{evidence_line, lines_in, DROP_AFTER_S, DROP_BEFORE_S};
use super::{CauseRule, Checks, Facts, NS};
use hostd_records::cause::Cause;
use hostd_records::events::Evidence;
use hostd_records::os_log::OsLogKind;
use hostd_records::port_budget::VSAFE5V_MIN_V;
use hostd_records::ProbeSeries;

/// Bus power at least this share of the budget is "at the budget" (a few per cent:
/// the INA228's and the advertisement's tolerances).
pub const AT_BUDGET: f64 = 0.95;
/// Bus power below this share of the budget at the onset is "well below".
pub const WELL_BELOW: f64 = 0.75;
/// A clipped top: the 99th percentile of bus power after the onset no more than this much
/// above its median.
const FLAT_TOP: f64 = 0.03;
/// VBUS is read this long either side of the onset interval, s.
const ONSET_VBUS_S: f64 = 1.0;
/// A logged link event lies at a VBUS dip when VBUS fell below vSafe5V within this long of
/// it, s.
const DIP_S: f64 = 0.5;

/// Weights (docs/methodology.md, "Power").
const W_AT_BUDGET: f64 = 0.45;
const W_BEFORE: f64 = 0.15;
const W_CLIPPED: f64 = 0.2;
const W_SAG: f64 = 0.4;
const W_RESET_AT_DIP: f64 = 0.4;
const W_ALONE: f64 = 0.1;
/// The port's budget fell around the onset (its advertisement changed) and the drive is
/// at the new one.
const W_BUDGET_FELL: f64 = 0.3;
/// Taken off when bus power is well below the budget and VBUS did not sag.
const W_WELL_BELOW: f64 = 0.5;
/// What the port's rules take off the SLC cache's and the link's scores when they explain
/// the same signs (a flat bus power at the budget; a reset at a VBUS dip).
pub const EXPLAINS_AWAY: f64 = 0.5;

/// The rules for "the host port's power limited the drive".
pub(super) struct Power;

impl CauseRule for Power {
    fn cause(&self) -> Cause {
        Cause::Power
    }

    fn score(&self, facts: &Facts, ev: &mut Evidence, r: &mut Checks) {
        let Some(p) = facts.ctx.probe else {
            return;
        };
        if !facts.drop {
            r.cannot("a recovery: the port's budget explains only a drop".into());
            return;
        }
        let (before_at, after_at) = budget_times(facts);
        let budget = facts.ctx.budget_at(after_at);
        ev.port_budget_w = budget;
        let sag = onset_vbus_min(p, facts);
        ev.vbus_min_at_onset_v = sag;
        let sagged = sag.is_some_and(|v| v < VSAFE5V_MIN_V);
        if let Some(v) = sag {
            r.check(
                W_SAG,
                sagged,
                format!(
                    "VBUS {v:.2} V at its lowest around the onset (vSafe5V's minimum is {VSAFE5V_MIN_V} V)"
                ),
            );
        }
        if sagged {
            reset_at_dip(p, facts, ev, r);
        }
        match budget {
            Some(b) => {
                let before = facts.ctx.budget_at(before_at).unwrap_or(b);
                budget_rules(p, facts, (before, b), sagged, ev, r)
            }
            None if !sagged => r.cannot(
                "no port budget known (the probe senses no CC, no --port-budget) and VBUS did not sag: no power evidence".into(),
            ),
            None => {}
        }
        if r.score > 0.0 {
            r.check(W_ALONE, facts.alone, "no other target active".to_string());
        }
    }
}

/// Where the budget before and after the onset is read: 1 s either side of the onset
/// interval (where bus power is compared with it).
fn budget_times(facts: &Facts) -> (i64, i64) {
    let (a, b) = facts.change.onset.ns_range;
    let w = (ONSET_VBUS_S * NS) as i64;
    (a - w, b + w)
}

/// Bus power against the budget before and after the onset (each against the budget then
/// in force), a fall of the budget itself, and a clipped top.
fn budget_rules(
    p: &ProbeSeries,
    facts: &Facts,
    (budget_before, budget): (f64, f64),
    sagged: bool,
    ev: &mut Evidence,
    r: &mut Checks,
) {
    let (Some(pb), Some(pa)) = (ev.power_before_w, ev.power_after_w) else {
        return;
    };
    let (share_b, share_a) = (pb / budget_before, pa / budget);
    ev.power_share_after = Some(share_a);
    if !sagged && share_a < WELL_BELOW {
        r.against(
            W_WELL_BELOW,
            format!(
                "bus power {pa:.2} W after the onset, {:.0} % of the port's {budget:.1} W budget: well below it",
                share_a * 100.0
            ),
        );
        return;
    }
    r.check(
        W_AT_BUDGET,
        share_a >= AT_BUDGET,
        format!(
            "bus power {pa:.2} W after the onset, {:.0} % of the port's {budget:.1} W budget (at it from {:.0} %)",
            share_a * 100.0,
            AT_BUDGET * 100.0
        ),
    );
    if budget < budget_before {
        // The port's advertisement fell: the drive was under another budget before.
        let (from, _) = budget_times(facts);
        let at = facts
            .ctx
            .port_budget
            .and_then(|t| {
                t.changes_in(from, budget_times(facts).1)
                    .last()
                    .map(|c| c.0)
            })
            .unwrap_or(facts.change.onset.ns);
        r.check(
            W_BUDGET_FELL,
            share_a >= AT_BUDGET,
            format!(
                "the port's budget fell from {budget_before:.1} W to {budget:.1} W {:+.1} s from the onset, and bus power is at the new one",
                (at - facts.change.onset.ns) as f64 / NS
            ),
        );
    } else {
        r.check(
            W_BEFORE,
            share_b >= AT_BUDGET - 0.05,
            format!(
                "bus power {pb:.2} W before the onset, {:.0} % of the budget",
                share_b * 100.0
            ),
        );
    }
    let after = (facts.change.onset.ns_range.1, facts.slow.1);
    if let Some((median, p99)) = median_p99(&p.power_w, p, after) {
        let clipped = p99 <= median * (1.0 + FLAT_TOP) && p99 >= AT_BUDGET * budget;
        r.check(
            W_CLIPPED,
            clipped,
            format!(
                "bus power after the onset: median {median:.2} W, 99th percentile {p99:.2} W (a clipped top stays within {:.0} % of its median, at the budget)",
                FLAT_TOP * 100.0
            ),
        );
    }
}

/// A logged link reset or disconnect of this target at a VBUS dip, listed as evidence.
fn reset_at_dip(p: &ProbeSeries, facts: &Facts, ev: &mut Evidence, r: &mut Checks) {
    let Some(log) = facts.ctx.os_log else {
        r.cannot(
            "the operating system's log was not read: a reset at the dip cannot be checked".into(),
        );
        return;
    };
    let c = facts.change;
    let window = (
        c.onset.ns_range.0 - (DROP_BEFORE_S * NS) as i64,
        c.onset.ns_range.1 + (DROP_AFTER_S * NS) as i64,
    );
    let (ours, _) = lines_in(log, &facts.series.target, window);
    let dip = (DIP_S * NS) as i64;
    let at_dip: Vec<_> = ours
        .into_iter()
        .filter(|l| matches!(l.kind, OsLogKind::LinkReset | OsLogKind::Disconnect))
        .filter(|l| {
            min_in(&p.vbus_min_v, p, (l.time_ns - dip, l.time_ns + dip))
                .is_some_and(|v| v < VSAFE5V_MIN_V)
        })
        .collect();
    for l in &at_dip {
        let line = evidence_line(l, c.onset.ns);
        if !ev.os_log.contains(&line) {
            ev.os_log.push(line);
        }
    }
    r.check(
        W_RESET_AT_DIP,
        !at_dip.is_empty(),
        match at_dip.first() {
            Some(l) => format!(
                "the OS logged {} on this drive's link {:+.1} s from the onset, with VBUS under {VSAFE5V_MIN_V} V within {DIP_S} s of it",
                l.kind.as_str(),
                (l.time_ns - c.onset.ns) as f64 / NS
            ),
            None => "no link reset or disconnect logged at the VBUS dip".into(),
        },
    );
}

/// The lowest VBUS around the onset interval.
fn onset_vbus_min(p: &ProbeSeries, facts: &Facts) -> Option<f64> {
    let c = facts.change;
    let w = (ONSET_VBUS_S * NS) as i64;
    min_in(
        &p.vbus_min_v,
        p,
        (c.onset.ns_range.0 - w, c.onset.ns_range.1 + w),
    )
}

/// The lowest finite value of `values` in `[a, b)`.
fn min_in(values: &[f64], p: &ProbeSeries, (a, b): (i64, i64)) -> Option<f64> {
    let r = p.range(a, b);
    values
        .get(r)?
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .reduce(f64::min)
}

/// Median and 99th percentile of the finite `values` in `[a, b)` (at least 10).
fn median_p99(values: &[f64], p: &ProbeSeries, (a, b): (i64, i64)) -> Option<(f64, f64)> {
    let mut v: Vec<f64> = values
        .get(p.range(a, b))?
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    if v.len() < 10 {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let q = |f: f64| v[((v.len() - 1) as f64 * f).round() as usize];
    Some((q(0.5), q(0.99)))
}

/// Whether the port's budget explains a flat bus power: power after the onset at the
/// budget (the SLC cache's "bus power held" then says nothing of the cache).
pub(super) fn held_at_budget(facts: &Facts, ev: &Evidence) -> Option<String> {
    let b = facts.ctx.budget_at(budget_times(facts).1)?;
    let pa = ev.power_after_w?;
    (pa >= AT_BUDGET * b).then(|| {
        format!(
            "bus power {pa:.2} W after the onset is at the port's {b:.1} W budget: a drive held by its port, not a full cache, works as hard for fewer bytes"
        )
    })
}

/// Whether VBUS sagged below vSafe5V around the onset (a logged reset then comes from the
/// port's power, not the link itself).
pub(super) fn sag_at_onset(facts: &Facts) -> Option<f64> {
    let p = facts.ctx.probe?;
    onset_vbus_min(p, facts).filter(|&v| v < VSAFE5V_MIN_V)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{ctx, drop_series, power_falls_after, probe, usb_reset};
    use super::super::{attribute, Context};
    use crate::detect::Change;
    use crate::series::Series;
    use hostd_records::cause::Cause;
    use hostd_records::events::Event;
    use hostd_records::os_log::OsLogRecord;
    use hostd_records::port_budget::{BudgetSource, BudgetTimeline, PortBudget};
    use hostd_records::probe_link::LinkRecord;
    use hostd_records::ProbeSeries;

    /// `p` with bus power `before` W up to `onset` and `after` W from it (±1 % ripple), and
    /// VBUS `vbus(t_ns)`.
    fn shaped(
        mut p: ProbeSeries,
        onset: i64,
        (before, after): (f64, f64),
        vbus: impl Fn(i64) -> f64,
    ) -> ProbeSeries {
        for (k, &t) in p.time_ns.iter().enumerate() {
            let ripple = 1.0 + 0.01 * ((k * 7919 % 13) as f64 / 6.0 - 1.0);
            p.power_w[k] = if t < onset { before } else { after } * ripple;
        }
        p.vbus_v = p.time_ns.iter().map(|&t| vbus(t)).collect();
        p.vbus_min_v = p.vbus_v.clone();
        p
    }

    /// The event of `c` in `s` with probe `p`, a budget of `budget_w` and the OS's `log`.
    fn judged(
        (s, c): (&Series, &Change),
        p: &ProbeSeries,
        budget_w: Option<f64>,
        log: Option<&[OsLogRecord]>,
    ) -> Event {
        judged_over((s, c), p, &BudgetTimeline::constant(budget_w), log)
    }

    /// [`judged`] with the budget changing over the run.
    fn judged_over(
        (s, c): (&Series, &Change),
        p: &ProbeSeries,
        budget: &BudgetTimeline,
        log: Option<&[OsLogRecord]>,
    ) -> Event {
        let all = vec![s.clone()];
        let ctx = Context {
            port_budget: Some(budget),
            os_log: log,
            ..ctx(&all, Some(p))
        };
        attribute(s, c, &ctx, None, &[])
    }

    #[test]
    fn a_drive_held_at_its_ports_budget_is_power_not_its_cache() {
        // A 4.5 W port: 4.3 W before the onset, held at 4.5 W after it while the rate
        // falls ×0.67 (energy per byte rises: today's SLC signature).
        let (s, c) = drop_series("x", 0);
        let p = shaped(
            probe(-1_000_000_000, 80.0, 0.0, |_| 25.0),
            c.onset.ns,
            (4.3, 4.5),
            |_| 5.0,
        );
        let e = judged((&s, &c), &p, Some(4.5), None);
        assert_eq!(e.cause, Cause::Power, "{:#?}", e.evidence.reasons);
        assert!(e.confidence >= 0.6, "{}", e.confidence);
        assert!(e.evidence.scores.get(Cause::SlcCache) < 0.6);
        assert!((e.evidence.power_share_after.unwrap() - 1.0).abs() < 0.02);
        // Without a budget known and no sag: the same drop stays what it is today.
        let e = judged((&s, &c), &p, None, None);
        assert_eq!(e.cause, Cause::SlcCache, "{:#?}", e.evidence.reasons);
        assert!(e.evidence.scores.get(Cause::Power) < 0.5);
        assert!(e
            .evidence
            .reasons
            .iter()
            .any(|r| r.starts_with("✗ power: no port budget known")));
    }

    #[test]
    fn heat_on_a_15_w_port_is_thermal_never_power() {
        let (s, c) = drop_series("x", 0);
        let onset_s = c.onset.ns as f64 * 1e-9;
        let mut p = power_falls_after(c.onset.ns, |t| 40.0 + 20.0 * (t / onset_s).clamp(0.0, 1.0));
        p.vbus_min_v = vec![4.98; p.len()];
        let e = judged((&s, &c), &p, Some(15.0), None);
        assert_eq!(e.cause, Cause::Thermal, "{:#?}", e.evidence.reasons);
        assert_eq!(e.evidence.scores.get(Cause::Power), 0.0);
    }

    #[test]
    fn a_cache_far_below_a_7_5_w_budget_is_slc_never_power() {
        let (s, c) = drop_series("x", 0);
        let p = shaped(
            probe(-1_000_000_000, 80.0, 0.0, |_| 25.0),
            c.onset.ns,
            (4.0, 4.0),
            |_| 5.0,
        );
        let e = judged((&s, &c), &p, Some(7.5), None);
        assert_eq!(e.cause, Cause::SlcCache, "{:#?}", e.evidence.reasons);
        assert_eq!(e.evidence.scores.get(Cause::Power), 0.0);
        assert!(e
            .evidence
            .reasons
            .iter()
            .any(|r| r.starts_with("✗ power: bus power") && r.contains("well below")));
    }

    #[test]
    fn a_reset_logged_at_a_vbus_sag_is_power_with_the_line() {
        // A long cable on a 15 W port: 7.9 W drawn, VBUS 4.5 V from 0.3 s before the onset,
        // and the OS logged a reset of this drive 0.2 s before the onset.
        let (s, c) = drop_series("x", 0);
        let sag_from = c.onset.ns - 300_000_000;
        let p = shaped(
            probe(-1_000_000_000, 80.0, 0.0, |_| 25.0),
            c.onset.ns,
            (7.9, 5.3),
            |t| if t >= sag_from { 4.5 } else { 4.9 },
        );
        let log = [usb_reset(c.onset.ns - 200_000_000, Some("x"))];
        let e = judged((&s, &c), &p, Some(15.0), Some(&log));
        assert_eq!(e.cause, Cause::Power, "{:#?}", e.evidence.reasons);
        assert!(e.evidence.scores.get(Cause::Link) < e.evidence.scores.get(Cause::Power));
        assert_eq!(e.evidence.vbus_min_at_onset_v, Some(4.5));
        assert_eq!(
            e.evidence.os_log,
            ["-0.200 s link_reset: usb 2-1: reset SuperSpeed USB device number 3 using xhci_hcd"]
        );
        // The same reset with VBUS steady at 4.9 V: the link, as today.
        let steady = shaped(
            probe(-1_000_000_000, 80.0, 0.0, |_| 25.0),
            c.onset.ns,
            (7.9, 5.3),
            |_| 4.9,
        );
        let e = judged((&s, &c), &steady, Some(15.0), Some(&log));
        assert_eq!(e.cause, Cause::Link, "{:#?}", e.evidence.reasons);
    }

    #[test]
    fn a_budget_that_falls_at_the_onset_is_judged_there_and_the_first_one_before() {
        // A 15 W port (3.0 A) whose advertisement falls to 1.5 A (7.5 W) 0.1 s before the
        // onset: 8.2 W before (55 % of 15 W), held at 7.5 W after while the rate falls.
        let (s, c) = drop_series("x", 0);
        let p = shaped(
            probe(-1_000_000_000, 80.0, 0.0, |_| 25.0),
            c.onset.ns,
            (8.2, 7.5),
            |_| 5.0,
        );
        let start = PortBudget {
            budget_w: Some(15.0),
            source: BudgetSource::Cc,
            ..PortBudget::unknown()
        };
        let mut fell = LinkRecord::new("port", c.onset.ns - 100_000_000);
        fell.nested.insert(
            "power_budget".into(),
            serde_json::to_value(PortBudget {
                budget_w: Some(7.5),
                ..start.clone()
            })
            .unwrap(),
        );
        let timeline = BudgetTimeline::of_run(Some(&start), &[fell]);
        let e = judged_over((&s, &c), &p, &timeline, None);
        assert_eq!(e.cause, Cause::Power, "{:#?}", e.evidence.reasons);
        assert_eq!(e.evidence.port_budget_w, Some(7.5));
        assert!((e.evidence.power_share_after.unwrap() - 1.0).abs() < 0.02);
        assert!(e.evidence.reasons.iter().any(|r| r.starts_with(
            "✓ power: the port's budget fell from 15.0 W to 7.5 W -0.1 s from the onset"
        )));
        // Judged against the first budget all along, the same drop is far below it.
        let e = judged((&s, &c), &p, Some(15.0), None);
        assert_ne!(e.cause, Cause::Power, "{:#?}", e.evidence.reasons);
        assert_eq!(e.evidence.scores.get(Cause::Power), 0.0);
    }
}
