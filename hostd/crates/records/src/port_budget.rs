//! The host port's power budget as a run records it: in the manifest's probe section
//! (`power_budget`, the budget in force when the run started, or the user's) and, for a
//! change during the run, on the timeline (`probe-link.jsonl`, kind `port`). See
//! docs/run-directory.md and docs/hardware.md ("The port's power budget").

use serde::{Deserialize, Serialize};

/// The key of the probe section that holds the budget.
pub const MANIFEST_KEY: &str = "power_budget";
/// vSafe5V's minimum: VBUS below this is a sag, V.
pub const VSAFE5V_MIN_V: f64 = 4.75;
/// The advertisement a probe reports before its CC debounce has classified the port
/// (the wire's `CC_ADVERTISEMENT_UNKNOWN`; `hostd_probe::port` names it with this).
pub const NOT_YET_CLASSIFIED: &str = "unknown";
/// The voltage a Type-C current advertisement (and a user's `--port-budget` watts) is at, V.
pub const TYPE_C_V: f64 = 5.0;
/// `--port-budget` takes watts in this range (a USB 2 port's 0.5 W… USB PD EPR's 240 W).
pub const USER_RANGE_W: std::ops::RangeInclusive<f64> = 0.5..=240.0;

/// Where the budget came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetSource {
    /// The USB Type-C current advertisement the probe read on CC, at 5 V.
    Cc,
    /// VBUS above vSafe5V: a PD contract exists; its wattage is unknown.
    VbusLevel,
    /// A USB PD contract whose terms (voltage, current) the probe's PD decoder read: the
    /// budget is the contracted current at the contracted voltage.
    PdContract,
    /// PD is in force but no explicit contract: a Soft_Reset, until the source's next
    /// PS_RDY (the supply keeps its output meanwhile); the terms are unknown.
    PdRenegotiating,
    /// `--port-budget WATTS`, given by the user.
    User,
    /// The probe senses no CC (an older probe, or one built without it) or the port
    /// advertises nothing the budget follows from.
    Unknown,
}

impl BudgetSource {
    /// The name used in records and text.
    pub fn as_str(self) -> &'static str {
        match self {
            BudgetSource::Cc => "cc",
            BudgetSource::VbusLevel => "vbus_level",
            BudgetSource::PdContract => "pd_contract",
            BudgetSource::PdRenegotiating => "pd_renegotiating",
            BudgetSource::User => "user",
            BudgetSource::Unknown => "unknown",
        }
    }
}

/// The port's budget and what it was read from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PortBudget {
    /// The budget in watts, when known.
    pub budget_w: Option<f64>,
    /// Where it came from.
    pub source: BudgetSource,
    /// The CC advertisement (`default`, `1.5A`, `3.0A`, `open`, `out_of_range`, `unknown`),
    /// when the probe reads CC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advertisement: Option<String>,
    /// Current the advertisement allows at 5 V, A.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advertised_a: Option<f64>,
    /// VBUS the probe reported with the status, V.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vbus_v: Option<f64>,
    /// VBUS above vSafe5V: a PD contract exists.
    #[serde(default)]
    pub pd_contract: bool,
    /// The PD contract's voltage, V, when its terms are known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract_v: Option<f64>,
    /// The PD contract's current, A, when its terms are known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract_a: Option<f64>,
    /// The power the PD contract allows, W (the budget when its terms are known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract_w: Option<f64>,
    /// The kind of supply the contract is drawn from: `fixed`, `battery`, `variable`,
    /// `pps`, `epr_avs` or `spr_avs` (the PDO the sink requested).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract_supply: Option<String>,
    /// That PDO's object position in the source's capabilities, 1-based.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract_object: Option<u32>,
    /// Probe time of the PS_RDY that put the contract in force, µs (the probe's clock; the
    /// record's own time is when the host heard of it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract_agreed_us: Option<u64>,
}

impl PortBudget {
    /// A budget the user gave (`--port-budget`), whatever the probe reads.
    pub fn user(watts: f64) -> PortBudget {
        PortBudget {
            budget_w: Some(watts),
            source: BudgetSource::User,
            advertisement: None,
            advertised_a: None,
            vbus_v: None,
            pd_contract: false,
            contract_v: None,
            contract_a: None,
            contract_w: None,
            contract_supply: None,
            contract_object: None,
            contract_agreed_us: None,
        }
    }

    /// No budget known: the probe does not sense CC.
    pub fn unknown() -> PortBudget {
        PortBudget {
            budget_w: None,
            source: BudgetSource::Unknown,
            ..PortBudget::user(0.0)
        }
    }

    /// The current the budget allows, A: the advertised current of a Type-C advertisement,
    /// the contracted current of a PD contract whose terms are known, a user's watts at
    /// [`TYPE_C_V`]. The drive's draw is judged in amps against it (the port limits current;
    /// the watts at the probe also carry VBUS).
    pub fn current_a(&self) -> Option<f64> {
        match self.source {
            BudgetSource::Cc => self.advertised_a.or(self.budget_w.map(|w| w / TYPE_C_V)),
            BudgetSource::PdContract => self.contract_a,
            BudgetSource::User => self.budget_w.map(|w| w / TYPE_C_V),
            BudgetSource::VbusLevel | BudgetSource::PdRenegotiating | BudgetSource::Unknown => None,
        }
    }

    /// A PD contract's terms as the contract states them: "5 V 3 A", "9.02 V 2.1 A, PPS"
    /// (volts and amps in the specification's steps, the supply named when not Fixed).
    pub fn contract_terms(&self) -> Option<String> {
        let (v, a) = (self.contract_v?, self.contract_a?);
        let kind = match self.contract_supply.as_deref() {
            None | Some("fixed") => String::new(),
            Some("pps") => ", PPS".to_string(),
            Some("epr_avs") => ", EPR AVS".to_string(),
            Some("spr_avs") => ", SPR AVS".to_string(),
            Some(other) => format!(", {other}"),
        };
        Some(format!("{} V {} A{kind}", spec_number(v), spec_number(a)))
    }

    /// One line for the run's text: "budget 4.5 W (CC: default)", "budget 15.0 W (PD
    /// contract 5 V 3 A)", "budget unknown".
    pub fn describe(&self) -> String {
        let from = match (self.source, &self.advertisement) {
            (BudgetSource::Cc, Some(a)) => format!("CC: {a}"),
            (BudgetSource::PdContract, _) => format!(
                "PD contract {}",
                self.contract_terms()
                    .unwrap_or_else(|| "terms unknown".into())
            ),
            (BudgetSource::VbusLevel, _) => "PD contract, W unknown".to_string(),
            (BudgetSource::PdRenegotiating, _) => "PD contract renegotiating".to_string(),
            (BudgetSource::User, _) => "--port-budget".to_string(),
            (s, _) => s.as_str().to_string(),
        };
        match (self.budget_w, self.source) {
            (Some(w), _) => format!("budget {w:.1} W ({from})"),
            (None, BudgetSource::Unknown) => "budget unknown".to_string(),
            (None, _) => format!("budget unknown ({from})"),
        }
    }
}

/// A figure the PD specification sets in steps of 10 mV or 10 mA (or finer), as it is
/// stated: up to three decimals, no trailing zeros ("5", "14.8", "2.25", "9.02").
fn spec_number(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The budget in force over a run: the one the run started with (the manifest's
/// `power_budget`) until the probe reported another (the timeline's `port` records of
/// `probe-link.jsonl`). A user's `--port-budget` holds throughout. Empty: no budget known.
/// Each budget is kept in watts (the figures against bus power) and in amps (the current
/// the port allows, [`PortBudget::current_a`], which the `power` cause judges the draw by).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BudgetTimeline {
    /// The budgets, in time order; the first holds from the start.
    steps: Vec<Step>,
}

/// One budget of a [`BudgetTimeline`] and the time it holds from.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Step {
    /// From host Unix ns.
    from_ns: i64,
    /// Budget, W.
    w: Option<f64>,
    /// The current it allows, A.
    a: Option<f64>,
}

impl Step {
    /// The budget `b` from `from_ns`; watts whose current nothing says are taken at
    /// [`TYPE_C_V`].
    fn of(from_ns: i64, b: &PortBudget) -> Step {
        Step {
            from_ns,
            w: b.budget_w,
            a: b.current_a().or(b.budget_w.map(|w| w / TYPE_C_V)),
        }
    }
}

impl BudgetTimeline {
    /// One budget for the whole run, in watts at [`TYPE_C_V`] (a user's `--port-budget`).
    pub fn constant(budget_w: Option<f64>) -> BudgetTimeline {
        BudgetTimeline {
            steps: vec![Step {
                from_ns: i64::MIN,
                w: budget_w,
                a: budget_w.map(|w| w / TYPE_C_V),
            }],
        }
    }

    /// The run's timeline: `start` (the manifest's budget), then each budget the probe's
    /// `port` records in `link` gave after the start's own that differs from the one before. A user's budget, or
    /// no start and no record, gives one budget throughout.
    pub fn of_run(start: Option<&PortBudget>, link: &[crate::probe_link::LinkRecord]) -> Self {
        let mut t = BudgetTimeline {
            steps: vec![Step::of(i64::MIN, start.unwrap_or(&PortBudget::unknown()))],
        };
        if start.is_some_and(|b| b.source == BudgetSource::User) {
            return t;
        }
        let mut ports: Vec<Step> = link
            .iter()
            .filter(|r| r.event == "port")
            .filter_map(|r| {
                let b: PortBudget =
                    serde_json::from_value(r.nested.get(MANIFEST_KEY)?.clone()).ok()?;
                // A status while the CC debounce settles (at the start, or after a re-attach)
                // classifies nothing yet: the budget in force stays (a run played faster
                // sees those statuses inside its first file, where they would read as a
                // fall to "unknown" and back).
                (b.advertisement.as_deref() != Some(NOT_YET_CLASSIFIED))
                    .then(|| Step::of(r.time_ns, &b))
            })
            .collect();
        ports.sort_by_key(|p| p.from_ns);
        // The manifest's budget is the port as it settled after the attach debounce: the
        // statuses up to the first that gives it (open, then classified) are that settling,
        // not changes (they lie inside the probe's first seconds, which the report charts;
        // a run played N× faster sees them inside its first file, N× longer on its clock).
        let settled = start
            .and_then(|b| b.budget_w)
            .and_then(|w| ports.iter().position(|p| p.w == Some(w)))
            .unwrap_or(0);
        for &step in &ports[settled..] {
            if t.steps
                .last()
                .is_some_and(|l| (l.w, l.a) != (step.w, step.a))
            {
                t.steps.push(step);
            }
        }
        t
    }

    /// The stretches between `from_ns` and `to_ns` over which one budget held: (start, end,
    /// budget W), in time order (a chart's budget line).
    pub fn stretches(&self, from_ns: i64, to_ns: i64) -> Vec<(i64, i64, Option<f64>)> {
        let mut out = vec![(from_ns, to_ns, self.at(from_ns))];
        for (t, _, w) in self.changes_in(from_ns, to_ns) {
            if let Some(last) = out.last_mut() {
                last.1 = t;
            }
            out.push((t, to_ns, w));
        }
        out
    }

    /// The step in force at host time `t_ns`.
    fn step_at(&self, t_ns: i64) -> Option<&Step> {
        let i = self.steps.partition_point(|s| s.from_ns <= t_ns);
        self.steps.get(i.checked_sub(1)?)
    }

    /// The budget in force at host time `t_ns`, W.
    pub fn at(&self, t_ns: i64) -> Option<f64> {
        self.step_at(t_ns)?.w
    }

    /// The current the budget in force at host time `t_ns` allows, A.
    pub fn current_at(&self, t_ns: i64) -> Option<f64> {
        self.step_at(t_ns)?.a
    }

    /// The changes in `(from_ns, to_ns]`: (host Unix ns, budget before, budget after), W.
    pub fn changes_in(&self, from_ns: i64, to_ns: i64) -> Vec<(i64, Option<f64>, Option<f64>)> {
        self.steps
            .windows(2)
            .filter(|w| w[1].from_ns > from_ns && w[1].from_ns <= to_ns)
            .map(|w| (w[1].from_ns, w[0].w, w[1].w))
            .collect()
    }

    /// The budget at each of `times_ns` (ascending), in one pass.
    pub fn at_each<'a>(&'a self, times_ns: &'a [i64]) -> impl Iterator<Item = Option<f64>> + 'a {
        let mut k = 0usize;
        times_ns.iter().map(move |&t| {
            while k + 1 < self.steps.len() && self.steps[k + 1].from_ns <= t {
                k += 1;
            }
            self.steps
                .get(k)
                .filter(|s| s.from_ns <= t)
                .and_then(|s| s.w)
        })
    }
}

/// One phase's bus power against the port's budget and its VBUS (`phases[].port`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhasePower {
    /// The budget in force at the phase's end, W (none known: no shares). Each sample's
    /// share is of the budget in force at it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_w: Option<f64>,
    /// The budget in force at the phase's start, W, when it differs from `budget_w` (the
    /// port's budget changed during the phase).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_from_w: Option<f64>,
    /// Peak bus power: the highest 1 s mean of the phase's points
    /// ([`crate::peak_second`]), W; the highest point where no second holds two.
    pub peak_w: f64,
    /// Mean bus power of the phase's points, W (the base of `mean_share`).
    pub mean_w: f64,
    /// The highest 1 s mean of the shares of the budget in force at each point (`peak_w` /
    /// budget when the budget held over the phase).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_share: Option<f64>,
    /// The mean share of the budget in force at each point (`mean_w` / budget when the
    /// budget held).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_share: Option<f64>,
    /// Lowest VBUS (each point's minimum: a batch's or a bin's), V.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vbus_min_v: Option<f64>,
    /// 1st percentile of VBUS, V.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vbus_p1_v: Option<f64>,
}

/// Checks a `--port-budget` value: watts in [`USER_RANGE_W`].
pub fn check_user_watts(watts: f64) -> Result<f64, String> {
    if watts.is_finite() && USER_RANGE_W.contains(&watts) {
        Ok(watts)
    } else {
        Err(format!(
            "--port-budget {watts} W is outside {}–{} W (a USB 2 port's 0.5 W to USB PD's 240 W)",
            USER_RANGE_W.start(),
            USER_RANGE_W.end()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_user_budget_is_refused_outside_its_range() {
        for ok in [0.5, 4.5, 15.0, 240.0] {
            assert_eq!(check_user_watts(ok), Ok(ok));
        }
        for bad in [0.49, 0.0, -3.0, 240.01, f64::NAN, f64::INFINITY] {
            let e = check_user_watts(bad).unwrap_err();
            assert!(e.contains("0.5–240 W"), "{e}");
        }
    }

    #[test]
    fn a_budget_reads_back_as_written_and_says_where_it_came_from() {
        let b = PortBudget {
            budget_w: Some(4.5),
            source: BudgetSource::Cc,
            advertisement: Some("default".into()),
            advertised_a: Some(0.9),
            vbus_v: Some(5.02),
            pd_contract: false,
            ..PortBudget::unknown()
        };
        let back: PortBudget = serde_json::from_str(&serde_json::to_string(&b).unwrap()).unwrap();
        assert_eq!(back, b);
        assert_eq!(b.describe(), "budget 4.5 W (CC: default)");
        assert_eq!(PortBudget::unknown().describe(), "budget unknown");
        assert_eq!(
            PortBudget::user(7.5).describe(),
            "budget 7.5 W (--port-budget)"
        );
        // In amps: the advertised current, a user's watts at 5 V, none for a contract
        // whose terms are unknown.
        assert_eq!(b.current_a(), Some(0.9));
        assert_eq!(PortBudget::user(7.5).current_a(), Some(1.5));
        let vbus_level = PortBudget {
            source: BudgetSource::VbusLevel,
            pd_contract: true,
            ..PortBudget::unknown()
        };
        assert_eq!(vbus_level.current_a(), None);
    }

    #[test]
    fn a_pd_contracts_terms_are_its_budget_in_amps_and_a_new_contract_a_change() {
        use crate::probe_link::LinkRecord;
        let contract = |v: f64, a: f64| PortBudget {
            budget_w: Some(v * a),
            source: BudgetSource::PdContract,
            pd_contract: true,
            contract_v: Some(v),
            contract_a: Some(a),
            contract_w: Some(v * a),
            contract_supply: Some("fixed".into()),
            contract_object: Some(1),
            contract_agreed_us: Some(2_446_964),
            ..PortBudget::unknown()
        };
        let start = contract(5.0, 3.0);
        assert_eq!(start.current_a(), Some(3.0));
        assert_eq!(start.describe(), "budget 15.0 W (PD contract 5 V 3 A)");
        let pps = PortBudget {
            contract_supply: Some("pps".into()),
            ..contract(9.02, 2.1)
        };
        assert_eq!(pps.contract_terms().unwrap(), "9.02 V 2.1 A, PPS");
        assert_eq!(
            contract(14.8, 2.25).contract_terms().unwrap(),
            "14.8 V 2.25 A"
        );
        // A Soft_Reset: PD in force, no terms, no current to judge a draw by.
        let renegotiating = PortBudget {
            source: BudgetSource::PdRenegotiating,
            pd_contract: true,
            ..PortBudget::unknown()
        };
        assert_eq!(renegotiating.current_a(), None);
        assert_eq!(
            renegotiating.describe(),
            "budget unknown (PD contract renegotiating)"
        );
        let back: PortBudget =
            serde_json::from_str(&serde_json::to_string(&start).unwrap()).unwrap();
        assert_eq!(back, start);
        // The source renegotiates 5 V 1.5 A at 100; a contract of the same watts at another
        // voltage (9 V 1.67 A against 15 W) is a change too: its current differs.
        let at = |t: i64, b: PortBudget| {
            let mut r = LinkRecord::new("port", t);
            r.nested
                .insert(MANIFEST_KEY.into(), serde_json::to_value(b).unwrap());
            r
        };
        let same_w = PortBudget {
            budget_w: Some(7.5),
            ..contract(9.0, 7.5 / 9.0)
        };
        let t = BudgetTimeline::of_run(
            Some(&start),
            &[at(100, contract(5.0, 1.5)), at(200, same_w)],
        );
        assert_eq!((t.at(0), t.current_at(0)), (Some(15.0), Some(3.0)));
        assert_eq!((t.at(100), t.current_at(100)), (Some(7.5), Some(1.5)));
        assert_eq!(t.at(200), Some(7.5));
        assert!((t.current_at(200).unwrap() - 7.5 / 9.0).abs() < 1e-12);
        assert_eq!(t.changes_in(0, 300).len(), 2);
        // A user's watts: at 5 V.
        assert_eq!(BudgetTimeline::constant(Some(4.5)).current_at(0), Some(0.9));
    }

    #[test]
    fn a_budget_change_on_the_timeline_holds_from_its_time_and_a_users_budget_throughout() {
        use crate::probe_link::LinkRecord;
        let port = |t: i64, w: Option<f64>| {
            let mut r = LinkRecord::new("port", t);
            let b = PortBudget {
                budget_w: w,
                ..PortBudget::unknown()
            };
            r.nested
                .insert(MANIFEST_KEY.into(), serde_json::to_value(b).unwrap());
            r
        };
        let start = PortBudget {
            budget_w: Some(15.0),
            source: BudgetSource::Cc,
            ..PortBudget::unknown()
        };
        // A status before the debounce settled (no change), the start's own status again,
        // then 3.0 A → 1.5 A at 100, then unplugged at 300.
        let mut unsettled = port(2, None);
        unsettled.nested.insert(
            MANIFEST_KEY.into(),
            serde_json::to_value(PortBudget {
                advertisement: Some(NOT_YET_CLASSIFIED.into()),
                ..PortBudget::unknown()
            })
            .unwrap(),
        );
        let link = [
            unsettled,
            port(3, None), // open, before the attach debounce settled on 15 W
            port(5, Some(15.0)),
            LinkRecord::new("gap", 50),
            port(300, None),
            port(100, Some(7.5)),
        ];
        let t = BudgetTimeline::of_run(Some(&start), &link);
        assert_eq!(t.at(0), Some(15.0));
        assert_eq!(t.at(3), Some(15.0));
        assert_eq!(t.at(4), Some(15.0));
        assert_eq!(t.at(99), Some(15.0));
        assert_eq!(t.at(100), Some(7.5));
        assert_eq!(t.at(299), Some(7.5));
        assert_eq!(t.at(300), None);
        assert_eq!(t.changes_in(0, 100), [(100, Some(15.0), Some(7.5))]);
        assert!(t.changes_in(100, 299).is_empty());
        assert_eq!(
            t.stretches(0, 200),
            [(0, 100, Some(15.0)), (100, 200, Some(7.5))]
        );
        let times = [-5, 100, 150, 400];
        let each: Vec<_> = t.at_each(&times).collect();
        assert_eq!(each, [Some(15.0), Some(7.5), Some(7.5), None]);
        // The user's budget is the budget, whatever the port says.
        let user = BudgetTimeline::of_run(Some(&PortBudget::user(4.5)), &link);
        assert_eq!((user.at(0), user.at(400)), (Some(4.5), Some(4.5)));
        assert!(user.changes_in(i64::MIN, i64::MAX).is_empty());
        // No budget at the start (a probe without CC sensing): none throughout.
        assert_eq!(BudgetTimeline::of_run(None, &[]).at(0), None);
        assert_eq!(BudgetTimeline::default().at(0), None);
    }
}
