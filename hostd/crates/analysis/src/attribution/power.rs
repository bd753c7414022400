//! The host port's power: something at the port changed at the onset. The drive's draw
//! rose to the budget and flat-topped there, or the budget itself fell (the advertisement
//! or the PD contract changed), or VBUS collapsed with a reset or re-enumeration logged at
//! the dip. A level is no change: a drive at the same share of its budget before and after
//! the onset was not held by its port (a bigger port would not remove that drop), a draw
//! above the budget says the budget is misread, and a VBUS that sits under vSafe5V all along
//! did not collapse. See docs/methodology.md, "Power".
//!
//! The rules read the port's facts (`port_facts.rs`: the draw in amps against the
//! advertised or contracted current, within the probe's tolerance; VBUS at the probe, which
//! plugs into the host port) and call no other rule. What the port explains of other
//! causes is declared here ([`Power::explains_away`]) and applied in `mod.rs`.

use super::log_window::evidence_line;
use super::port_facts::{
    level, Level, PortFacts, COLLAPSE_V, DIP_S, FLAT_TOP, TOLERANCE, WELL_BELOW,
};
use super::{CauseRule, Checks, ExplainsAway, Facts, NS};
use hostd_records::cause::Cause;
use hostd_records::events::{Evidence, Source};
use hostd_records::port_budget::VSAFE5V_MIN_V;
use hostd_records::published::signed;

// Weights (docs/methodology.md, "Power").

/// The drive's draw rose to the budget (below it before the onset, at it after).
const W_ROSE: f64 = 0.5;
/// The budget fell around the onset and the drive is at the new one.
const W_FELL: f64 = 0.6;
/// After a rise or a fall: the current flat-topped at the budget.
const W_FLAT: f64 = 0.3;
/// VBUS collapsed at the onset.
const W_COLLAPSE: f64 = 0.3;
/// With the collapse: a reset, disconnect or re-enumeration of this drive logged at the dip.
const W_RESET_AT_DIP: f64 = 0.5;
/// No other target active (only when another rule gave weight).
const W_ALONE: f64 = 0.1;
/// What the port's facts take off the SLC cache's and the link's scores when they explain
/// the same signs.
pub const EXPLAINS_AWAY: f64 = 0.5;

/// The rules for "the host port's power limited the drive".
pub(super) struct Power;

impl CauseRule for Power {
    fn cause(&self) -> Cause {
        Cause::Power
    }

    /// A drive its port held works as hard for fewer bytes: the SLC cache's "bus power
    /// held" and "energy per byte rising" say nothing of the cache then. A reset logged at a
    /// VBUS collapse comes from the port's power, not the link itself.
    fn explains_away(&self) -> &'static [ExplainsAway] {
        &[
            ExplainsAway {
                cause: Cause::SlcCache,
                weight: EXPLAINS_AWAY,
                when: port_held_the_drive,
            },
            ExplainsAway {
                cause: Cause::Link,
                weight: EXPLAINS_AWAY,
                when: reset_at_a_collapse,
            },
        ]
    }

    fn score(&self, facts: &Facts, ev: &mut Evidence, r: &mut Checks) {
        if facts.ctx.probe.is_none() {
            return;
        }
        let Some(port) = facts.port.as_ref().filter(|_| facts.drop) else {
            r.cannot("a recovery: the port's budget explains only a drop".into());
            return;
        };
        vbus_rules(facts, port, ev, r);
        match port.after.a {
            Some(budget) => budget_rules(facts, port, budget, r),
            None => r.unread(Source::PortBudget),
        }
        if r.score > 0.0 {
            r.check(W_ALONE, facts.alone, "no other target active".to_string());
        }
    }
}

/// VBUS at the onset against its level before, and with a collapse the logged resets at
/// the dip (listed in the evidence).
fn vbus_rules(facts: &Facts, port: &PortFacts, ev: &mut Evidence, r: &mut Checks) {
    let Some(low) = port.vbus_low_v else {
        return;
    };
    let collapsed = port.collapsed();
    r.check(
        W_COLLAPSE,
        collapsed,
        format!(
            "VBUS {low:.2} V at its lowest around the onset, {} before it (a collapse: under vSafe5V's {VSAFE5V_MIN_V} V and at least {COLLAPSE_V} V below its level; a level that sits there all along is no change)",
            port.vbus_before_v
                .map_or("its level unknown".into(), |v| format!("{v:.2} V"))
        ),
    );
    if !collapsed {
        return;
    }
    if facts.log.is_none() {
        r.unread(Source::OsLog);
        return;
    }
    let at = facts.change.onset.ns;
    for l in &port.resets_at_dip {
        let line = evidence_line(l, at);
        if !ev.os_log.contains(&line) {
            ev.os_log.push(line);
        }
    }
    r.check(
        W_RESET_AT_DIP,
        !port.resets_at_dip.is_empty(),
        match port.resets_at_dip.first() {
            Some(l) => format!(
                "the OS logged {} on this drive's link {} s from the onset, with VBUS collapsed within {DIP_S} s of it",
                l.kind.as_str(),
                signed((l.time_ns - at) as f64 / NS, 1)
            ),
            None => "no link reset, disconnect or re-enumeration logged at the VBUS collapse".into(),
        },
    );
}

/// The drive's current against the current the budget allows (`budget`, A, after the onset):
/// a fall of the budget with the drive at the new one, or a rise of the draw to an unchanged
/// budget, and then a flat top. A level is no change; a draw above the budget is no
/// evidence at all.
fn budget_rules(facts: &Facts, port: &PortFacts, budget: f64, r: &mut Checks) {
    let (Some(ib), Some(ia), Some(sb), Some(sa)) = (
        port.current_before_a,
        port.current_after_a,
        port.share_before(),
        port.share_after(),
    ) else {
        r.cannot(
            "the drive's current around the onset is unknown (no VBUS readings, or no budget before it): the budget cannot be checked".into(),
        );
        return;
    };
    let pct = |s: f64| s * 100.0;
    let tol = TOLERANCE * 100.0;
    if let Some((side, i, s, b)) = [
        ("before", ib, sb, port.before.a),
        ("after", ia, sa, Some(budget)),
    ]
    .into_iter()
    .find(|x| level(x.2) == Level::Above)
    {
        r.cannot(format!(
            "the drive draws {i:.3} A {side} the onset, {:.0} % of the {:.2} A the port allows (at it within ±{tol:.0} %): above it, so the budget is misread (or the port gives more than it offers), never evidence for power",
            pct(s),
            b.unwrap_or(f64::NAN)
        ));
        return;
    }
    let words_after = format!(
        "the drive draws {ia:.3} A after the onset, {:.0} % of the {budget:.2} A the port allows",
        pct(sa)
    );
    if level(sa) == Level::Below {
        r.check(
            if port.fell() { W_FELL } else { W_ROSE },
            false,
            format!(
                "{words_after}: {} it (at it within ±{tol:.0} %), the port did not hold it",
                if sa < WELL_BELOW {
                    "well below"
                } else {
                    "below"
                }
            ),
        );
        return;
    }
    if port.fell() {
        let from = port.before.a.unwrap_or(f64::NAN);
        let t = port.fell_at_ns.unwrap_or(facts.change.onset.ns);
        r.check(
            W_FELL,
            true,
            format!(
                "the port's budget fell from {from:.2} A{} to {budget:.2} A{} {} s from the onset, and {words_after}: at the new one (±{tol:.0} %)",
                watts(port.before.w),
                watts(port.after.w),
                signed((t - facts.change.onset.ns) as f64 / NS, 1)
            ),
        );
    } else {
        let rose = level(sb) == Level::Below;
        r.check(
            W_ROSE,
            rose,
            if rose {
                format!(
                    "the drive's current rose from {ib:.3} A ({:.0} %) before the onset to {ia:.3} A ({:.0} %) of the {budget:.2} A the port allows: up to the budget (at it within ±{tol:.0} %)",
                    pct(sb),
                    pct(sa)
                )
            } else {
                format!(
                    "the drive draws {ib:.3} A before and {ia:.3} A after the onset, {:.0} % and {:.0} % of the {budget:.2} A the port allows: the same share of its budget before and after, so the port did not hold it (a bigger port would not remove this drop)",
                    pct(sb),
                    pct(sa)
                )
            },
        );
        if !rose {
            return;
        }
    }
    if let (Some(flat), Some((median, p99))) = (port.flat_top(), port.current_after_median_p99_a) {
        r.check(
            W_FLAT,
            flat,
            format!(
                "the drive's current after the onset: median {median:.3} A, 99th percentile {p99:.3} A (a flat top stays within {:.0} % of its median, at the budget)",
                FLAT_TOP * 100.0
            ),
        );
    }
}

/// " (W W)" when the budget's watts are known.
fn watts(w: Option<f64>) -> String {
    w.map_or(String::new(), |w| format!(" ({w:.1} W)"))
}

/// The port held the drive at the onset (its draw rose to the budget, or the budget fell to
/// it): why, for the SLC cache's held power.
fn port_held_the_drive(facts: &Facts) -> Option<String> {
    let port = facts.port.as_ref()?;
    port.held().then(|| {
        format!(
            "the port held the drive at the onset ({} {:.0} % of the {:.2} A it allows): a drive held by its port, not a full cache, works as hard for fewer bytes",
            if port.fell() { "its budget fell, the drive at" } else { "its draw rose to" },
            port.share_after().unwrap_or(f64::NAN) * 100.0,
            port.after.a.unwrap_or(f64::NAN)
        )
    })
}

/// A reset logged at a VBUS collapse: why, for the link's logged event.
fn reset_at_a_collapse(facts: &Facts) -> Option<String> {
    let port = facts.port.as_ref()?;
    (!port.resets_at_dip.is_empty()).then(|| {
        format!(
            "VBUS collapsed to {:.2} V at the logged reset: the port's power failed first",
            port.vbus_low_v.unwrap_or(f64::NAN)
        )
    })
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

    /// A cool probe from −1 s for 80 s: bus power `watts` before and after `c`'s onset, VBUS
    /// `vbus(t_ns)`.
    fn port_probe(c: &Change, watts: (f64, f64), vbus: impl Fn(i64) -> f64) -> ProbeSeries {
        shaped(
            probe(-1_000_000_000, 80.0, 0.0, |_| 25.0),
            c.onset.ns,
            watts,
            vbus,
        )
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

    /// A timeline that starts with `start` and changes to `then` at `t_ns`.
    fn falls(start: PortBudget, then: PortBudget, t_ns: i64) -> BudgetTimeline {
        let mut fell = LinkRecord::new("port", t_ns);
        fell.nested
            .insert("power_budget".into(), serde_json::to_value(then).unwrap());
        BudgetTimeline::of_run(Some(&start), &[fell])
    }

    /// A PD contract at `v` V and `a` A, its terms decoded.
    fn contract(v: f64, a: f64) -> PortBudget {
        PortBudget {
            budget_w: Some(v * a),
            source: BudgetSource::PdContract,
            pd_contract: true,
            contract_v: Some(v),
            contract_a: Some(a),
            ..PortBudget::unknown()
        }
    }

    /// Whether `e` has a reason line starting with `start`.
    fn says(e: &Event, start: &str) -> bool {
        e.evidence.reasons.iter().any(|r| r.starts_with(start))
    }

    #[test]
    fn a_draw_that_rises_to_its_ports_budget_is_power_not_its_cache() {
        // A 4.5 W port (0.9 A): 4.3 W before the onset (0.86 A, 96 %), held flat at 4.5 W
        // after it while the rate falls ×0.67 (energy per byte rises: the SLC signature).
        let (s, c) = drop_series("x", 0);
        let p = port_probe(&c, (4.3, 4.5), |_| 5.0);
        let e = judged((&s, &c), &p, Some(4.5), None);
        assert_eq!(e.cause, Cause::Power, "{:#?}", e.evidence.reasons);
        assert!(e.confidence >= 0.6, "{}", e.confidence);
        assert!(e.evidence.scores.get(Cause::SlcCache) < 0.6);
        assert!((e.evidence.power_share_after.unwrap() - 1.0).abs() < 0.02);
        assert!((e.evidence.power_share_before.unwrap() - 0.956).abs() < 0.01);
        assert_eq!(e.evidence.port_budget_a, Some(0.9));
        assert!(says(&e, "✓ power: the drive's current rose from 0.86"));
        assert!(says(
            &e,
            "✓ power: the drive's current after the onset: median"
        ));
        // What the port explains of the cache, said under the cache, once.
        let explained: Vec<_> = e
            .evidence
            .reasons
            .iter()
            .filter(|r| r.starts_with("✗ slc_cache: the port held the drive"))
            .collect();
        assert_eq!(explained.len(), 1, "{:#?}", e.evidence.reasons);
        assert!(explained[0].ends_with("(explained by power)"));
        // Without a budget known and no collapse: the same drop is the cache's.
        let e = judged((&s, &c), &p, None, None);
        assert_eq!(e.cause, Cause::SlcCache, "{:#?}", e.evidence.reasons);
        assert!(e.evidence.scores.get(Cause::Power) < 0.5);
        assert!(e
            .evidence
            .unread
            .contains(&hostd_records::events::Source::PortBudget));
        assert!(!says(&e, "✗ power: no port budget known"));
    }

    #[test]
    fn a_drive_at_the_same_share_of_its_budget_before_and_after_is_not_held_by_its_port() {
        // 98 % of a 4.5 W port while the SLC cache takes the writes and after it ran out:
        // the port gave the same before and after; a bigger one would not remove the drop.
        let (s, c) = drop_series("x", 0);
        let p = port_probe(&c, (4.41, 4.41), |_| 5.0);
        let e = judged((&s, &c), &p, Some(4.5), None);
        assert_eq!(e.cause, Cause::SlcCache, "{:#?}", e.evidence.reasons);
        assert_eq!(e.evidence.scores.get(Cause::Power), 0.0);
        assert!(e.confidence >= 0.9, "{}", e.confidence);
        assert!(
            says(&e, "✗ power: the drive draws 0.882 A before and 0.882 A after the onset, 98 % and 98 %")
                && e.evidence
                    .reasons
                    .iter()
                    .any(|r| r.contains("the same share of its budget before and after")),
            "{:#?}",
            e.evidence.reasons
        );
        assert!(!e
            .evidence
            .reasons
            .iter()
            .any(|r| r.contains("explained by power")));
    }

    #[test]
    fn a_draw_above_the_budget_says_the_budget_is_misread_and_is_never_power() {
        // 4.5 → 6.75 W on what is taken for a 4.5 W port: 150 % after the onset.
        let (s, c) = drop_series("x", 0);
        let p = port_probe(&c, (4.3, 6.75), |_| 5.0);
        let e = judged((&s, &c), &p, Some(4.5), None);
        assert_eq!(e.evidence.scores.get(Cause::Power), 0.0);
        assert_ne!(e.cause, Cause::Power);
        assert!(
            says(
                &e,
                "✗ power: the drive draws 1.350 A after the onset, 150 %"
            ) && e
                .evidence
                .reasons
                .iter()
                .any(|r| r.contains("the budget is misread")),
            "{:#?}",
            e.evidence.reasons
        );
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
        let p = port_probe(&c, (4.0, 4.0), |_| 5.0);
        let e = judged((&s, &c), &p, Some(7.5), None);
        assert_eq!(e.cause, Cause::SlcCache, "{:#?}", e.evidence.reasons);
        assert_eq!(e.evidence.scores.get(Cause::Power), 0.0);
        assert!(
            says(&e, "✗ power: the drive draws 0.800 A after the onset, 53 %")
                && e.evidence.reasons.iter().any(|r| r.contains("well below")),
            "{:#?}",
            e.evidence.reasons
        );
    }

    #[test]
    fn a_reset_logged_at_a_vbus_collapse_is_power_with_the_line() {
        // A 15 W port whose VBUS collapses from 4.9 to 4.5 V 0.3 s before the onset; 7.9 W
        // drawn before, 5.3 W after, and the OS logged a reset of this drive 0.2 s before the
        // onset.
        let (s, c) = drop_series("x", 0);
        let sag_from = c.onset.ns - 300_000_000;
        let vbus = |t: i64| if t >= sag_from { 4.5 } else { 4.9 };
        let p = port_probe(&c, (7.9, 5.3), vbus);
        let log = [usb_reset(c.onset.ns - 200_000_000, Some("x"))];
        let e = judged((&s, &c), &p, Some(15.0), Some(&log));
        assert_eq!(e.cause, Cause::Power, "{:#?}", e.evidence.reasons);
        assert!(e.evidence.scores.get(Cause::Link) < e.evidence.scores.get(Cause::Power));
        assert_eq!(e.evidence.vbus_min_at_onset_v, Some(4.5));
        assert_eq!(
            e.evidence.os_log,
            ["-0.200 s link_reset: usb 2-1: reset SuperSpeed USB device number 3 using xhci_hcd"]
        );
        assert!(says(
            &e,
            "✗ link: VBUS collapsed to 4.50 V at the logged reset"
        ));
        // The collapse without the OS's log: a sign, not a cause.
        let e = judged((&s, &c), &p, Some(15.0), None);
        assert_ne!(e.cause, Cause::Power, "{:#?}", e.evidence.reasons);
        assert!(says(
            &e,
            "✓ power: VBUS 4.50 V at its lowest around the onset, 4.90 V before it"
        ));
        // The same reset with VBUS steady at 4.9 V: the link.
        let steady = port_probe(&c, (7.9, 5.3), |_| 4.9);
        let e = judged((&s, &c), &steady, Some(15.0), Some(&log));
        assert_eq!(e.cause, Cause::Link, "{:#?}", e.evidence.reasons);
        // VBUS at 4.6 V all along (under vSafe5V, but a level, not a collapse): the link.
        let low = port_probe(&c, (7.9, 5.3), |_| 4.6);
        let e = judged((&s, &c), &low, Some(15.0), Some(&log));
        assert_eq!(e.cause, Cause::Link, "{:#?}", e.evidence.reasons);
        assert_eq!(e.evidence.scores.get(Cause::Power), 0.0);
        assert!(says(
            &e,
            "✗ power: VBUS 4.60 V at its lowest around the onset, 4.60 V before it"
        ));
    }

    #[test]
    fn a_budget_that_falls_at_the_onset_is_judged_there_and_the_first_one_before() {
        // A 15 W port (3.0 A) whose advertisement falls to 1.5 A (7.5 W) 0.1 s before the
        // onset: 8.2 W before (55 % of 15 W), held at 7.5 W after while the rate falls.
        let (s, c) = drop_series("x", 0);
        let p = port_probe(&c, (8.2, 7.5), |_| 5.0);
        let start = PortBudget {
            budget_w: Some(15.0),
            source: BudgetSource::Cc,
            advertised_a: Some(3.0),
            ..PortBudget::unknown()
        };
        let then = PortBudget {
            budget_w: Some(7.5),
            advertised_a: Some(1.5),
            ..start.clone()
        };
        let timeline = falls(start, then, c.onset.ns - 100_000_000);
        let e = judged_over((&s, &c), &p, &timeline, None);
        assert_eq!(e.cause, Cause::Power, "{:#?}", e.evidence.reasons);
        assert_eq!(e.evidence.port_budget_w, Some(7.5));
        assert!((e.evidence.power_share_after.unwrap() - 1.0).abs() < 0.02);
        assert!(
            says(
                &e,
                "✓ power: the port's budget fell from 3.00 A (15.0 W) to 1.50 A (7.5 W) -0.1 s from the onset"
            ),
            "{:#?}",
            e.evidence.reasons
        );
        // Judged against the first budget all along, the same drop is far below it.
        let e = judged((&s, &c), &p, Some(15.0), None);
        assert_ne!(e.cause, Cause::Power, "{:#?}", e.evidence.reasons);
        assert_eq!(e.evidence.scores.get(Cause::Power), 0.0);
    }

    #[test]
    fn a_pd_contract_that_falls_is_judged_in_its_own_amps() {
        // A 9 V contract: 3 A (27 W), renegotiated to 1.5 A (13.5 W) 0.2 s after the onset.
        // The drive draws 20 W before (2.22 A, 74 %) and is held at 13.5 W (1.5 A) after. In
        // watts over 5 V the new budget would be 2.7 A and the drive below it.
        let (s, c) = drop_series("x", 0);
        let p = port_probe(&c, (20.0, 13.5), |_| 9.0);
        let timeline = falls(
            contract(9.0, 3.0),
            contract(9.0, 1.5),
            c.onset.ns + 200_000_000,
        );
        let e = judged_over((&s, &c), &p, &timeline, None);
        assert_eq!(e.cause, Cause::Power, "{:#?}", e.evidence.reasons);
        assert_eq!(e.evidence.port_budget_a, Some(1.5));
        assert!((e.evidence.power_share_after.unwrap() - 1.0).abs() < 0.02);
        assert!(
            says(
                &e,
                "✓ power: the port's budget fell from 3.00 A (27.0 W) to 1.50 A (13.5 W) +0.2 s"
            ),
            "{:#?}",
            e.evidence.reasons
        );
    }
}
