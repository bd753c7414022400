//! The waits of a run's temperature gate (`[temperature_gate]`): each measured step the
//! gate held, how long it waited and how the wait ended. `hostd run` records them in the
//! summary (`extra.temperature_gate.waits`) and in `events.json` (`gate_waits`, beside the
//! events); `hostd analyze` reads them back from the summary.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// How one wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitOutcome {
    /// The first gate of a target: its reading became the idle temperature.
    IdleMeasured,
    /// The temperature came within the margin (possibly at once).
    Reached,
    /// The timeout passed first; the step started anyway.
    TimedOut,
    /// The run was stopped while waiting.
    Stopped,
    /// No reading came (probe silent, smartctl failing); the step started after the timeout.
    NoReading,
}

impl WaitOutcome {
    /// In words, for the report.
    pub fn text(self) -> &'static str {
        match self {
            WaitOutcome::IdleMeasured => "idle measured",
            WaitOutcome::Reached => "reached",
            WaitOutcome::TimedOut => "timed out",
            WaitOutcome::Stopped => "stopped",
            WaitOutcome::NoReading => "no reading",
        }
    }
}

/// One wait at the gate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateWait {
    /// Target label.
    pub target: String,
    /// Step's phase.
    pub phase: String,
    /// Step's index in its phase.
    pub index: u32,
    /// When the wait began, Unix ns.
    pub start_ns: u64,
    /// Time waited, s.
    pub waited_s: f64,
    /// How it ended.
    pub outcome: WaitOutcome,
    /// The idle temperature it waited for, °C.
    pub idle_c: Option<f64>,
    /// Temperature when the wait began, °C.
    pub start_c: Option<f64>,
    /// Temperature when the wait ended, °C.
    pub end_c: Option<f64>,
}

/// The summary's section the waits are in (`extra.temperature_gate`).
pub const SUMMARY_KEY: &str = "temperature_gate";

/// The waits recorded in `dir`'s `summary.json`; none when it has no gate section (or no
/// summary: a run stopped before its end).
pub fn read(dir: &Path) -> Vec<GateWait> {
    let Ok(text) = std::fs::read_to_string(dir.join(crate::summary::FILE_NAME)) else {
        return Vec::new();
    };
    serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v["extra"][SUMMARY_KEY].get("waits").cloned())
        .and_then(|w| serde_json::from_value(w).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_read_back_from_the_summary_and_a_run_without_a_gate_has_none() {
        let d = tempfile::tempdir().unwrap();
        assert!(read(d.path()).is_empty());
        let w = GateWait {
            target: "sim:x5".into(),
            phase: "write".into(),
            index: 1,
            start_ns: 5,
            waited_s: 2.5,
            outcome: WaitOutcome::TimedOut,
            idle_c: Some(42.4),
            start_c: Some(50.0),
            end_c: Some(44.0),
        };
        let summary = serde_json::json!({ "extra": { SUMMARY_KEY: { "waits": [w] } } });
        std::fs::write(
            d.path().join(crate::summary::FILE_NAME),
            summary.to_string(),
        )
        .unwrap();
        assert_eq!(read(d.path()), [w]);
        std::fs::write(d.path().join(crate::summary::FILE_NAME), "{\"extra\":{}}").unwrap();
        assert!(read(d.path()).is_empty());
    }
}
