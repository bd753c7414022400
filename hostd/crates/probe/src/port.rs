//! The host port's power budget as the probe reports it (wire v3): whether a
//! probe senses CC at all, and what a USB Type-C current advertisement allows.
//! The classification itself happens on the probe (`firmware/core/src/port.c`).

use crate::pb;
use hostd_records::port_budget::{BudgetSource, PortBudget};

/// Nominal VBUS of a Type-C current advertisement, V (the budget is the current at it).
pub const ADVERTISED_V: f64 = 5.0;

/// Whether the probe can tell the host port's budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PortSensing {
    /// The probe has not described itself yet.
    #[default]
    NotYet,
    /// An older probe (wire v1/v2) or one built without CC channels: the budget
    /// is unknown unless the user gives it.
    Absent,
    /// The probe reads CC1/CC2 and sends `PortStatus` on change and on request.
    Present,
}

impl PortSensing {
    /// From the probe's `DeviceInfo` (`None`: not received yet).
    pub fn from_info(info: Option<&pb::DeviceInfo>) -> Self {
        match info {
            None => PortSensing::NotYet,
            Some(i) if i.protocol_version >= 3 && i.cc_sensing => PortSensing::Present,
            Some(_) => PortSensing::Absent,
        }
    }
}

/// Current the advertisement allows at 5 V, in amperes; `None` when no budget
/// follows from it (open, unknown, a reading that fits no range).
/// Default USB power is the USB specification's: 500 mA for a USB 2 device,
/// 900 mA for a SuperSpeed (USB 3) one.
pub fn advertised_current_a(adv: pb::CcAdvertisement, superspeed: bool) -> Option<f64> {
    match adv {
        pb::CcAdvertisement::UsbDefault => Some(if superspeed { 0.9 } else { 0.5 }),
        pb::CcAdvertisement::CcAdvertisement1a5 => Some(1.5),
        pb::CcAdvertisement::CcAdvertisement3a0 => Some(3.0),
        _ => None,
    }
}

/// Short name of an advertisement for records and reports.
pub fn advertisement_name(adv: pb::CcAdvertisement) -> &'static str {
    match adv {
        pb::CcAdvertisement::Unknown => hostd_records::port_budget::NOT_YET_CLASSIFIED,
        pb::CcAdvertisement::Open => "open",
        pb::CcAdvertisement::UsbDefault => "default",
        pb::CcAdvertisement::CcAdvertisement1a5 => "1.5A",
        pb::CcAdvertisement::CcAdvertisement3a0 => "3.0A",
        pb::CcAdvertisement::OutOfRange => "out_of_range",
    }
}

/// Short name of a PD contract's supply kind for records (`fixed`, `pps`, …).
pub fn supply_name(supply: pb::PdSupply) -> &'static str {
    match supply {
        pb::PdSupply::Unspecified => "unspecified",
        pb::PdSupply::Fixed => "fixed",
        pb::PdSupply::Battery => "battery",
        pb::PdSupply::Variable => "variable",
        pb::PdSupply::Pps => "pps",
        pb::PdSupply::EprAvs => "epr_avs",
        pb::PdSupply::SprAvs => "spr_avs",
    }
}

/// The voltage a contract's budget is at, mV: its own (Fixed, PPS, AVS), else the top of a
/// Variable supply's range or the bottom of a Battery's (the probe's `budget_mv`).
fn contract_mv(c: &pb::PdContract) -> u32 {
    match pb::PdSupply::try_from(c.supply) {
        _ if c.mv != 0 => c.mv,
        Ok(pb::PdSupply::Battery) => c.mv_min,
        _ => c.mv_max,
    }
}

/// The port's budget: the user's `--port-budget` if given, else what the probe's latest
/// status says (the PD contract's terms its decoder read; a PD contract whose terms it has
/// not: watts unknown; a current advertisement at 5 V), else unknown. A storage drive is a
/// SuperSpeed device: default USB power is 900 mA.
pub fn budget(status: Option<&pb::PortStatus>, user_w: Option<f64>) -> PortBudget {
    let mut b = PortBudget::unknown();
    if let Some(st) = status {
        let adv =
            pb::CcAdvertisement::try_from(st.advertisement).unwrap_or(pb::CcAdvertisement::Unknown);
        b.advertisement = Some(advertisement_name(adv).to_string());
        b.advertised_a = advertised_current_a(adv, true);
        b.vbus_v = (st.vbus_mv > 0).then(|| f64::from(st.vbus_mv) / 1000.0);
        b.pd_contract = st.pd_contract;
        let above = st.vbus_level == pb::VbusLevel::Above as i32;
        if let Some(c) = st.contract.as_ref().filter(|_| st.pd_contract) {
            let supply = pb::PdSupply::try_from(c.supply).unwrap_or(pb::PdSupply::Unspecified);
            b.source = BudgetSource::PdContract;
            b.contract_v = Some(f64::from(contract_mv(c)) / 1000.0);
            b.contract_a = Some(f64::from(c.ma) / 1000.0);
            b.contract_w = Some(f64::from(c.mw) / 1000.0);
            b.contract_supply = Some(supply_name(supply).to_string());
            b.contract_object = Some(c.object_position);
            b.contract_agreed_us = Some(c.agreed_us);
            b.budget_w = b.contract_w;
        } else if st.pd_contract && !above {
            // Only the decoder says PD without VBUS above vSafe5V: a Soft_Reset's wait.
            b.source = BudgetSource::PdRenegotiating;
        } else if st.pd_contract {
            b.source = BudgetSource::VbusLevel;
        } else if let Some(a) = b.advertised_a {
            b.source = BudgetSource::Cc;
            b.budget_w = Some(a * ADVERTISED_V);
        }
    }
    if let Some(w) = user_w {
        b.source = BudgetSource::User;
        b.budget_w = Some(w);
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_v3_probe_that_says_so_senses_cc() {
        let v2 = pb::DeviceInfo {
            protocol_version: 2,
            cc_sensing: true, // a v2 probe cannot mean it
            ..Default::default()
        };
        let v3 = |cc_sensing| pb::DeviceInfo {
            protocol_version: 3,
            cc_sensing,
            ..Default::default()
        };
        assert_eq!(PortSensing::from_info(None), PortSensing::NotYet);
        assert_eq!(PortSensing::from_info(Some(&v2)), PortSensing::Absent);
        assert_eq!(
            PortSensing::from_info(Some(&v3(false))),
            PortSensing::Absent
        );
        assert_eq!(
            PortSensing::from_info(Some(&v3(true))),
            PortSensing::Present
        );
    }

    #[test]
    fn the_budget_follows_the_advertisement_the_contract_or_the_user() {
        use pb::CcAdvertisement as A;
        let st = |adv: A, pd_contract| pb::PortStatus {
            advertisement: adv as i32,
            vbus_mv: 5020,
            pd_contract,
            ..Default::default()
        };
        let b = budget(Some(&st(A::UsbDefault, false)), None);
        assert_eq!((b.budget_w, b.source), (Some(4.5), BudgetSource::Cc));
        assert_eq!(b.vbus_v, Some(5.02));
        let b = budget(Some(&st(A::CcAdvertisement1a5, false)), None);
        assert_eq!(b.budget_w, Some(7.5));
        let above = |adv: A| pb::PortStatus {
            vbus_level: pb::VbusLevel::Above as i32,
            vbus_mv: 9010,
            ..st(adv, true)
        };
        let b = budget(Some(&above(A::CcAdvertisement3a0)), None);
        assert_eq!((b.budget_w, b.source), (None, BudgetSource::VbusLevel));
        assert_eq!(b.describe(), "budget unknown (PD contract, W unknown)");
        let b = budget(Some(&st(A::OutOfRange, false)), None);
        assert_eq!((b.budget_w, b.source), (None, BudgetSource::Unknown));
        let b = budget(Some(&st(A::CcAdvertisement3a0, true)), Some(27.0));
        assert_eq!((b.budget_w, b.source), (Some(27.0), BudgetSource::User));
        assert!(
            b.pd_contract,
            "what the probe read is kept beside the user's figure"
        );
        assert_eq!(budget(None, None), PortBudget::unknown());
    }

    #[test]
    fn a_decoded_contract_is_the_budget_and_a_soft_reset_leaves_it_unknown() {
        let contract = |mv, ma, mw, supply: pb::PdSupply| pb::PortStatus {
            advertisement: pb::CcAdvertisement::CcAdvertisement3a0 as i32,
            vbus_level: pb::VbusLevel::Safe5v as i32,
            vbus_mv: 5010,
            pd_contract: true,
            contract: Some(pb::PdContract {
                mv,
                ma,
                mw,
                supply: supply as i32,
                object_position: 1,
                agreed_us: 1_234_567,
                mv_min: mv,
                mv_max: mv,
                ..Default::default()
            }),
            ..Default::default()
        };
        let b = budget(
            Some(&contract(5000, 3000, 15000, pb::PdSupply::Fixed)),
            None,
        );
        assert_eq!(
            (b.budget_w, b.source),
            (Some(15.0), BudgetSource::PdContract)
        );
        assert_eq!((b.contract_v, b.contract_a), (Some(5.0), Some(3.0)));
        assert_eq!(b.current_a(), Some(3.0), "the contract's current, not Rp's");
        assert_eq!(b.contract_supply.as_deref(), Some("fixed"));
        assert_eq!(
            (b.contract_object, b.contract_agreed_us),
            (Some(1), Some(1_234_567))
        );
        assert_eq!(b.describe(), "budget 15.0 W (PD contract 5 V 3 A)");
        // A Variable supply's budget is at the top of its range.
        let mut var = contract(0, 1500, 30000, pb::PdSupply::Variable);
        if let Some(c) = var.contract.as_mut() {
            (c.mv_min, c.mv_max) = (5000, 20000);
        }
        let b = budget(Some(&var), None);
        assert_eq!((b.contract_v, b.budget_w), (Some(20.0), Some(30.0)));
        // After a Soft_Reset: PD, no terms, VBUS still at 5 V.
        let soft = pb::PortStatus {
            contract: None,
            ..contract(5000, 3000, 15000, pb::PdSupply::Fixed)
        };
        let b = budget(Some(&soft), None);
        assert_eq!(
            (b.budget_w, b.source),
            (None, BudgetSource::PdRenegotiating)
        );
        // An older probe (no `contract`): a contract known only from VBUS, as before.
        let old = pb::PortStatus {
            vbus_level: pb::VbusLevel::Above as i32,
            ..soft
        };
        assert_eq!(budget(Some(&old), None).source, BudgetSource::VbusLevel);
    }

    #[test]
    fn advertisements_map_to_the_type_c_currents() {
        use pb::CcAdvertisement as A;
        assert_eq!(advertised_current_a(A::UsbDefault, false), Some(0.5));
        assert_eq!(advertised_current_a(A::UsbDefault, true), Some(0.9));
        assert_eq!(advertised_current_a(A::CcAdvertisement1a5, true), Some(1.5));
        assert_eq!(
            advertised_current_a(A::CcAdvertisement3a0, false),
            Some(3.0)
        );
        for a in [A::Unknown, A::Open, A::OutOfRange] {
            assert_eq!(advertised_current_a(a, true), None, "{a:?}");
        }
        assert_eq!(advertisement_name(A::CcAdvertisement1a5), "1.5A");
    }
}
