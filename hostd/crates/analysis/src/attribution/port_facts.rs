//! The host port at a drop's onset, gathered once per event for every rule that reads it:
//! the budget before and after the onset (the current it allows, and its watts), the drive's
//! current on each side as a share of it, the shape of the current after, VBUS's level
//! before the onset and its lowest at the onset, and the logged resets at a VBUS collapse.
//! The `power` rules weigh these facts, and what `power` explains away (`mod.rs`) reads the
//! same ones. See docs/methodology.md, "Power".
//!
//! The draw is judged in amps: the port limits current (its advertisement, or its contract's
//! current), and the drive's current is each point's power over its VBUS at the probe. The
//! probe plugs into the host port, so VBUS at the probe is the port's own; a cable beyond the
//! probe drops its voltage where the probe cannot see it.

use super::evidence::Windows;
use super::log_window::LogWindow;
use super::{Context, NS};
use crate::detect::Change;
use hostd_records::os_log::{OsLogKind, OsLogRecord};
use hostd_records::port_budget::VSAFE5V_MIN_V;
use hostd_records::ProbeSeries;

/// The probe's tolerance on a current against the budget, as a share: a 1 % shunt
/// uncalibrated, the INA228's gain and offset, and the ripple left in a window's mean. A
/// draw within it of the budget is at the budget.
pub const TOLERANCE: f64 = 0.03;
/// Under this share of the budget the drive is well below it.
pub const WELL_BELOW: f64 = 0.75;
/// A flat top: the 99th percentile of the current after the onset no more than this share
/// above its median.
pub const FLAT_TOP: f64 = 0.03;
/// The budget and VBUS are read this long either side of the onset interval, s.
pub const ONSET_S: f64 = 1.0;
/// A logged line lies at a VBUS collapse when VBUS collapsed within this long of it, s.
pub const DIP_S: f64 = 0.5;
/// VBUS collapsed when it fell under vSafe5V's minimum and at least this far below its level
/// before the onset, V (a port's own I·R under a changing load moves it by tens of mV).
pub const COLLAPSE_V: f64 = 0.25;

/// Where a draw lies against the current the budget allows, within [`TOLERANCE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Below the budget.
    Below,
    /// At the budget.
    At,
    /// Above it: the port gives more than it offers, or the budget is misread.
    Above,
}

/// The level of a draw at `share` of the budget.
pub fn level(share: f64) -> Level {
    if share < 1.0 - TOLERANCE {
        Level::Below
    } else if share <= 1.0 + TOLERANCE {
        Level::At
    } else {
        Level::Above
    }
}

/// The port's budget in force at one time.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Budget {
    /// Its watts, when known.
    pub w: Option<f64>,
    /// The current it allows, A, when known.
    pub a: Option<f64>,
}

/// The host port around one drop's onset.
#[derive(Debug, Clone, Default)]
pub struct PortFacts<'a> {
    /// The budget in force [`ONSET_S`] before the onset interval.
    pub before: Budget,
    /// The budget in force [`ONSET_S`] after the onset interval.
    pub after: Budget,
    /// When the current the budget allows fell between the two, host ns.
    pub fell_at_ns: Option<i64>,
    /// The drive's mean current in the probe's window before the onset, A.
    pub current_before_a: Option<f64>,
    /// The drive's mean current in the probe's window after the onset, A.
    pub current_after_a: Option<f64>,
    /// Median and 99th percentile of the drive's current in the window after the onset, A.
    pub current_after_median_p99_a: Option<(f64, f64)>,
    /// VBUS's level before the onset: the median of its readings in the window before, V.
    pub vbus_before_v: Option<f64>,
    /// VBUS's lowest around the onset interval (each point's minimum), V.
    pub vbus_low_v: Option<f64>,
    /// The resets, disconnects and re-enumerations of this drive the OS logged at a VBUS
    /// collapse (within [`DIP_S`]), when VBUS collapsed at the onset.
    pub resets_at_dip: Vec<&'a OsLogRecord>,
}

impl PortFacts<'_> {
    /// The drive's current before the onset as a share of the budget then in force.
    pub fn share_before(&self) -> Option<f64> {
        Some(self.current_before_a? / self.before.a?)
    }

    /// The drive's current after the onset as a share of the budget then in force.
    pub fn share_after(&self) -> Option<f64> {
        Some(self.current_after_a? / self.after.a?)
    }

    /// The current the budget allows fell around the onset.
    pub fn fell(&self) -> bool {
        self.fell_at_ns.is_some()
    }

    /// The drive's draw rose to the budget: below it before the onset and at it after, the
    /// budget unchanged.
    pub fn rose(&self) -> bool {
        !self.fell()
            && self.share_before().map(level) == Some(Level::Below)
            && self.share_after().map(level) == Some(Level::At)
    }

    /// The port held the drive at the onset: its draw rose to the budget, or the budget fell
    /// and the draw is at the new one.
    pub fn held(&self) -> bool {
        self.rose() || (self.fell() && self.share_after().map(level) == Some(Level::At))
    }

    /// A flat top at the budget after the onset: the 99th percentile of the current within
    /// [`FLAT_TOP`] of its median, and the median at the budget.
    pub fn flat_top(&self) -> Option<bool> {
        let (median, p99) = self.current_after_median_p99_a?;
        let budget = self.after.a?;
        Some(p99 <= median * (1.0 + FLAT_TOP) && level(median / budget) == Level::At)
    }

    /// VBUS collapsed at the onset: under vSafe5V's minimum and at least [`COLLAPSE_V`]
    /// below its level before (a VBUS that sits low all along did not collapse).
    pub fn collapsed(&self) -> bool {
        matches!((self.vbus_low_v, self.vbus_before_v), (Some(low), Some(level)) if collapse(low, level))
    }
}

/// `low` is a collapse from `level`.
fn collapse(low: f64, level: f64) -> bool {
    low < VSAFE5V_MIN_V && level - low >= COLLAPSE_V
}

/// The port's facts around `change` from the probe `p`, the budget over the run and the OS
/// log's window; `w` the probe's windows before and after the onset.
pub(super) fn gather<'a>(
    p: &ProbeSeries,
    ctx: &Context,
    change: &Change,
    w: &Windows,
    log: Option<&LogWindow<'a>>,
) -> PortFacts<'a> {
    let (a, b) = change.onset.ns_range;
    let margin = (ONSET_S * NS) as i64;
    let budget_at = |t: i64| Budget {
        w: ctx.port_budget.and_then(|tl| tl.at(t)),
        a: ctx.port_budget.and_then(|tl| tl.current_at(t)),
    };
    let (before, after) = (budget_at(a - margin), budget_at(b + margin));
    let fell_at_ns = match (before.a, after.a) {
        (Some(x), Some(y)) if y < x => ctx
            .port_budget
            .and_then(|tl| tl.changes_in(a - margin, b + margin).last().map(|c| c.0))
            .or(Some(change.onset.ns)),
        _ => None,
    };
    let mut facts = PortFacts {
        before,
        after,
        fell_at_ns,
        current_before_a: mean(&currents(p, w.before)),
        current_after_a: mean(&currents(p, w.after)),
        current_after_median_p99_a: median_p99(currents(p, w.after)),
        vbus_before_v: median_p99(finite(&p.vbus_v, p, w.before)).map(|m| m.0),
        vbus_low_v: lowest(&p.vbus_min_v, p, (a - margin, b + margin)),
        resets_at_dip: Vec::new(),
    };
    if let (true, Some(log), Some(level)) = (facts.collapsed(), log, facts.vbus_before_v) {
        let dip = (DIP_S * NS) as i64;
        facts.resets_at_dip = log
            .ours
            .iter()
            .copied()
            .filter(|l| {
                matches!(
                    l.kind,
                    OsLogKind::LinkReset | OsLogKind::Disconnect | OsLogKind::LowerSpeed
                )
            })
            .filter(|l| {
                lowest(&p.vbus_min_v, p, (l.time_ns - dip, l.time_ns + dip))
                    .is_some_and(|v| collapse(v, level))
            })
            .collect();
    }
    facts
}

/// The drive's current at each point of `[a, b)`: its power over its VBUS at the probe, A
/// (empty without VBUS readings).
fn currents(p: &ProbeSeries, (a, b): (i64, i64)) -> Vec<f64> {
    p.range(a, b)
        .filter_map(|i| {
            let (w, v) = (*p.power_w.get(i)?, *p.vbus_v.get(i)?);
            (w.is_finite() && v.is_finite() && v > 0.0).then(|| w / v)
        })
        .collect()
}

/// The finite `values` in `[a, b)`.
fn finite(values: &[f64], p: &ProbeSeries, (a, b): (i64, i64)) -> Vec<f64> {
    values
        .get(p.range(a, b))
        .unwrap_or_default()
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .collect()
}

/// The lowest finite value of `values` in `[a, b)`.
fn lowest(values: &[f64], p: &ProbeSeries, window: (i64, i64)) -> Option<f64> {
    finite(values, p, window).into_iter().reduce(f64::min)
}

/// The mean of `v`, when not empty.
fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Median and 99th percentile of `v` (nearest rank; at least 10 values).
fn median_p99(mut v: Vec<f64>) -> Option<(f64, f64)> {
    if v.len() < 10 {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let q = |f: f64| v[((v.len() - 1) as f64 * f).round() as usize];
    Some((q(0.5), q(0.99)))
}
