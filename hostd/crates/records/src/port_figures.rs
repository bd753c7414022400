//! Each phase's bus power against the host port's budget, and its VBUS: peak (the highest
//! 1 s mean, [`crate::peak_second`]) and mean as shares of the budget in force at each
//! point, the lowest VBUS and its 1st percentile (docs/methodology.md, "Power").

use crate::port_budget::{BudgetTimeline, PhasePower, VSAFE5V_MIN_V};
use crate::ProbeSeries;

/// The phase's figures over `[start_ns, end_ns)`, each point's power a share of the budget
/// `budget` had in force at its time; None without power samples in it.
pub fn phase_power(
    p: &ProbeSeries,
    (start_ns, end_ns): (i64, i64),
    budget: &BudgetTimeline,
) -> Option<PhasePower> {
    let r = p.range(start_ns, end_ns);
    let finite = |v: &[f64]| -> Vec<f64> {
        v.get(r.clone())
            .unwrap_or_default()
            .iter()
            .copied()
            .filter(|x| x.is_finite())
            .collect()
    };
    let power = finite(&p.power_w);
    if power.is_empty() {
        return None;
    }
    // The peak is the highest 1 s mean (`peak_second`), as every output publishes it; a
    // series of one point a second (a very long run's summary level) has only its points.
    let times = &p.time_ns[r.clone()];
    let peak_of = |values: &[f64]| {
        crate::peak_second::highest_second(times, values, (start_ns, end_ns))
            .map(|s| s.mean)
            .or_else(|| {
                values
                    .iter()
                    .copied()
                    .filter(|v| v.is_finite())
                    .reduce(f64::max)
            })
    };
    let peak_w = peak_of(&p.power_w[r.clone()]).unwrap_or(f64::NAN);
    let mean_w = power.iter().sum::<f64>() / power.len() as f64;
    let mut vbus = finite(&p.vbus_v);
    vbus.sort_by(f64::total_cmp);
    let vbus_min_v = finite(&p.vbus_min_v).into_iter().reduce(f64::min);
    // Each point's share (NaN where no budget is known, left out of both figures).
    let share_at: Vec<f64> = budget
        .at_each(times)
        .zip(&p.power_w[r.clone()])
        .map(|(b, &w)| b.filter(|b| *b > 0.0).map_or(f64::NAN, |b| w / b))
        .collect();
    let shares: Vec<f64> = share_at.iter().copied().filter(|s| s.is_finite()).collect();
    let (budget_w, from) = (budget.at(end_ns - 1), budget.at(start_ns));
    Some(PhasePower {
        budget_w,
        budget_from_w: from.filter(|_| from != budget_w),
        peak_w,
        mean_w,
        peak_share: (!shares.is_empty()).then(|| peak_of(&share_at)).flatten(),
        mean_share: (!shares.is_empty()).then(|| shares.iter().sum::<f64>() / shares.len() as f64),
        vbus_min_v,
        // Nearest rank: the smallest value with at least 1 % of the points at or below it.
        vbus_p1_v: (!vbus.is_empty())
            .then(|| vbus[(vbus.len() as f64 * 0.01).ceil().max(1.0) as usize - 1]),
    })
}

/// A port's budget as every output writes it: "4.5 W" (a setting of the port, in the
/// tenths of a watt the Type-C and PD levels are given in).
pub fn budget_text(watts: f64) -> String {
    format!("{watts:.1} W")
}

/// The terminal's words for a phase's figures: "bus power peak 100 %, mean 93 % of the
/// port's 4.5 W; VBUS min 4.62 V" ("15.0→7.5 W" when the budget changed in the phase). With
/// no budget known only a sag under vSafe5V is told ("VBUS min 4.52 V, under vSafe5V's
/// 4.75 V"); otherwise None (the run already said once that the budget is unknown).
pub fn text(p: &PhasePower) -> Option<String> {
    let vbus = p.vbus_min_v.map(|v| {
        let under = if v < VSAFE5V_MIN_V {
            format!(", under vSafe5V's {VSAFE5V_MIN_V} V")
        } else {
            String::new()
        };
        format!("VBUS min {v:.2} V{under}")
    });
    match (p.budget_w, p.peak_share, p.mean_share) {
        (Some(b), Some(peak), Some(mean)) => {
            let budget = match p.budget_from_w {
                Some(from) => format!("{from:.1}→{}", budget_text(b)),
                None => budget_text(b),
            };
            Some(format!(
                "bus power peak {:.0} %, mean {:.0} % of the port's {budget}{}",
                peak * 100.0,
                mean * 100.0,
                vbus.map(|v| format!("; {v}")).unwrap_or_default()
            ))
        }
        _ => vbus.filter(|_| p.vbus_min_v.is_some_and(|v| v < VSAFE5V_MIN_V)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ProbeSample;

    #[test]
    fn shares_of_the_budget_and_the_vbus_tail_of_a_phase() {
        // 1000 samples: 4.0 W at 5.0 V, every 100th at 4.5 W and 4.6 V; one outside.
        let samples: Vec<ProbeSample> = (0..1001)
            .map(|k| ProbeSample {
                time_ns: k * 1_000_000,
                power_w: Some(if k % 100 == 0 { 4.5 } else { 4.0 }),
                vbus_v: Some(if k == 1000 {
                    3.0
                } else if k % 100 == 0 {
                    4.6
                } else {
                    5.0
                }),
                ..Default::default()
            })
            .collect();
        let p = ProbeSeries::from_samples(&samples);
        let f = phase_power(&p, (0, 1_000_000_000), &BudgetTimeline::constant(Some(4.5))).unwrap();
        // The peak is the second's mean, not its highest sample.
        assert!((f.peak_w - 4.005).abs() < 1e-9, "{}", f.peak_w);
        assert!((f.peak_share.unwrap() - 4.005 / 4.5).abs() < 1e-9);
        assert!((f.mean_w - 4.005).abs() < 1e-9, "{}", f.mean_w);
        assert_eq!(
            f.vbus_min_v,
            Some(4.6),
            "the sample after the phase is not in it"
        );
        // 10 of 1000 at 4.6 V: the 1st percentile (nearest rank) is the 10th lowest.
        assert_eq!(f.vbus_p1_v, Some(4.6));
        let none = BudgetTimeline::default();
        let unknown = phase_power(&p, (0, 1_000_000_000), &none).unwrap();
        assert_eq!((unknown.peak_share, unknown.mean_share), (None, None));
        assert_eq!(phase_power(&p, (2_000_000_000, 3_000_000_000), &none), None);
    }

    #[test]
    fn each_point_is_a_share_of_the_budget_in_force_at_it() {
        use crate::port_budget::{BudgetSource, PortBudget};
        use crate::probe_link::LinkRecord;
        // 8 W for 1 s, then 7.5 W for 1 s; the budget falls from 15 to 7.5 W at 1 s.
        let samples: Vec<ProbeSample> = (0..2000)
            .map(|k| ProbeSample {
                time_ns: k * 1_000_000,
                power_w: Some(if k < 1000 { 8.0 } else { 7.5 }),
                ..Default::default()
            })
            .collect();
        let p = ProbeSeries::from_samples(&samples);
        let start = PortBudget {
            budget_w: Some(15.0),
            source: BudgetSource::Cc,
            ..PortBudget::unknown()
        };
        let mut fell = LinkRecord::new("port", 1_000_000_000);
        fell.nested.insert(
            "power_budget".into(),
            serde_json::to_value(PortBudget::user(7.5)).unwrap(),
        );
        let t = BudgetTimeline::of_run(Some(&start), &[fell]);
        // The phase before the change: against 15 W only.
        let early = phase_power(&p, (0, 1_000_000_000), &t).unwrap();
        assert_eq!((early.budget_w, early.budget_from_w), (Some(15.0), None));
        assert!((early.peak_share.unwrap() - 8.0 / 15.0).abs() < 1e-12);
        // The phase after it: against 7.5 W.
        let late = phase_power(&p, (1_000_000_000, 2_000_000_000), &t).unwrap();
        assert_eq!(late.peak_share, Some(1.0));
        // Across the change: each point against its own budget.
        let both = phase_power(&p, (0, 2_000_000_000), &t).unwrap();
        assert_eq!((both.budget_w, both.budget_from_w), (Some(7.5), Some(15.0)));
        assert_eq!(both.peak_share, Some(1.0));
        assert!((both.mean_share.unwrap() - (8.0 / 15.0 + 1.0) / 2.0).abs() < 1e-12);
    }

    #[test]
    fn the_terminal_says_the_shares_and_vbus_and_nothing_without_a_budget_or_a_sag() {
        let mut p = PhasePower {
            budget_w: Some(7.5),
            budget_from_w: Some(15.0),
            peak_w: 7.6,
            mean_w: 6.0,
            peak_share: Some(1.013),
            mean_share: Some(0.62),
            vbus_min_v: Some(4.93),
            vbus_p1_v: Some(4.95),
        };
        assert_eq!(
            text(&p).unwrap(),
            "bus power peak 101 %, mean 62 % of the port's 15.0→7.5 W; VBUS min 4.93 V"
        );
        (p.budget_w, p.budget_from_w, p.peak_share, p.mean_share) = (None, None, None, None);
        assert_eq!(text(&p), None);
        p.vbus_min_v = Some(4.52);
        assert_eq!(text(&p).unwrap(), "VBUS min 4.52 V, under vSafe5V's 4.75 V");
    }
}
