//! The host port's power budget as a run records it: in the manifest's probe section
//! (`power_budget`, the budget in force when the run started, or the user's) and, for a
//! change during the run, on the timeline (`probe-link.jsonl`, kind `port`). See
//! docs/run-directory.md and docs/hardware.md ("The port's power budget").

use serde::{Deserialize, Serialize};

/// The key of the probe section that holds the budget.
pub const MANIFEST_KEY: &str = "power_budget";
/// vSafe5V's minimum: VBUS below this is a sag, V.
pub const VSAFE5V_MIN_V: f64 = 4.75;
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

    /// One line for the run's text: "budget 4.5 W (CC: default)", "budget unknown".
    pub fn describe(&self) -> String {
        let from = match (self.source, &self.advertisement) {
            (BudgetSource::Cc, Some(a)) => format!("CC: {a}"),
            (BudgetSource::VbusLevel, _) => "PD contract, W unknown".to_string(),
            (BudgetSource::User, _) => "--port-budget".to_string(),
            (s, _) => s.as_str().to_string(),
        };
        match self.budget_w {
            Some(w) => format!("budget {w:.1} W ({from})"),
            None => format!("budget unknown ({from})"),
        }
    }
}

/// One phase's bus power against the port's budget and its VBUS (`phases[].port`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhasePower {
    /// The budget the shares are of, W (none known: no shares).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_w: Option<f64>,
    /// Highest bus power of the phase's points, W (a summary level's bin mean on a long run).
    pub peak_w: f64,
    /// Mean bus power, W.
    pub mean_w: f64,
    /// `peak_w` / budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_share: Option<f64>,
    /// `mean_w` / budget.
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
        };
        let back: PortBudget = serde_json::from_str(&serde_json::to_string(&b).unwrap()).unwrap();
        assert_eq!(back, b);
        assert_eq!(b.describe(), "budget 4.5 W (CC: default)");
        assert_eq!(PortBudget::unknown().describe(), "budget unknown (unknown)");
        assert_eq!(
            PortBudget::user(7.5).describe(),
            "budget 7.5 W (--port-budget)"
        );
    }
}
