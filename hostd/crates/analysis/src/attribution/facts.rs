//! The facts of one event that every cause's rules read, gathered once (`evidence.rs`):
//! the change and its run, the other targets, what the probe measured, the OS log's lines
//! around the onset and the host port at it. A rule reads these and never calls another
//! rule; where one cause explains another's signs, the rule declares it
//! ([`super::ExplainsAway`]) and `mod.rs` applies it.

use super::log_window::LogWindow;
use super::port_facts::PortFacts;
use super::Context;
use crate::detect::Change;
use crate::series::Series;
use crate::stall::SeriesStalls;

/// What every cause's rules read besides the evidence: the change, its series, the run, and
/// the judgements drawn from the evidence once for all causes.
pub struct Facts<'a> {
    /// The series the change happened in.
    pub series: &'a Series,
    /// The change being attributed.
    pub change: &'a Change,
    /// The run around it.
    pub ctx: &'a Context<'a>,
    /// The series' later changes (a recovery later argues against a full cache).
    pub later: &'a [Change],
    /// A drop (else a recovery).
    pub drop: bool,
    /// Rate after / rate before the onset.
    pub rate_ratio: f64,
    /// The slow part, host ns: after a drop, before a recovery.
    pub slow: (i64, i64),
    /// The run's other series (other targets).
    pub others: Vec<&'a Series>,
    /// No other target was active during the slow part or at the onset.
    pub alone: bool,
    /// Bus power followed throughput, when power was measured on both sides.
    pub power_falls: Option<bool>,
    /// The enclosure rose beyond its sensor's noise before the onset.
    pub warmed: bool,
    /// The stalls, when the event is the series' `stall` event.
    pub stalls: Option<&'a SeriesStalls>,
    /// The OS log's lines around a drop's onset, when the log was read (not for a stall:
    /// its windows are its stalls').
    pub log: Option<LogWindow<'a>>,
    /// The host port at a drop's onset, when the probe measured this target.
    pub port: Option<PortFacts<'a>>,
}

impl Facts<'_> {
    /// The probe measured this target and its enclosure warmed: the thermal rules can be
    /// checked (the SLC rules need the probe only).
    pub fn thermal_evidence(&self) -> bool {
        self.ctx.probe.is_some() && self.warmed
    }
}
