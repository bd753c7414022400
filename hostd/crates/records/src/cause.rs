//! What an event in `events.json` is (a drop, a recovery, a stall) and what caused it: the
//! words both the events and the headline figures use. A leaf: it uses no other module of
//! this crate.

use serde::{Deserialize, Serialize};

/// Direction of a change in throughput.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// Throughput fell.
    Drop,
    /// Throughput rose again.
    Recovery,
    /// Transfers stopped (almost) completely for a while, repeatedly or once.
    Stall,
    /// Throughput rose near the start and held (a drive waking from a low-power state):
    /// no throttle.
    WarmUp,
}

/// Why throughput changed. The order of the variants is the order causes are listed in
/// (`events::Scores`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// The drive throttled to hold its temperature.
    Thermal,
    /// The SLC write cache filled.
    SlcCache,
    /// Another target took the shared link's bandwidth.
    Contention,
    /// The link to the drive failed: the operating system logged a reset, a UAS error, a
    /// disconnect, a slower re-enumeration or an I/O error on it (`os-log.jsonl`).
    Link,
    /// The drive was held at the host port's power budget, or VBUS sagged under load
    /// (the probe's CC reading or `--port-budget`, and its VBUS).
    Power,
    /// None of the rules matched well enough.
    Unknown,
}

impl EventKind {
    /// The name used in JSON and text.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Drop => "drop",
            EventKind::Recovery => "recovery",
            EventKind::Stall => "stall",
            EventKind::WarmUp => "warm_up",
        }
    }
}

impl Cause {
    /// The name used in JSON and text.
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::Thermal => "thermal",
            Cause::SlcCache => "slc_cache",
            Cause::Contention => "contention",
            Cause::Link => "link",
            Cause::Power => "power",
            Cause::Unknown => "unknown",
        }
    }

    /// The cause with its confidence as every line writes it: "thermal (confidence 0.80)".
    pub fn with_confidence(self, confidence: f64) -> String {
        format!("{} (confidence {confidence:.2})", self.as_str())
    }

    /// The name a reader is shown (the report's scores): "SLC cache" for `slc_cache`.
    pub fn label(self) -> &'static str {
        match self {
            Cause::SlcCache => "SLC cache",
            other => other.as_str(),
        }
    }
}
