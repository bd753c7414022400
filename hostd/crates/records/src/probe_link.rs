//! `probe-link.jsonl`: one JSON object a line for each probe-link event worth keeping
//! (connected, disconnected, reconnected, gap, sequence restart, probe error, alignment,
//! device info), written by `hostd_correlate::recorder`, read by `hostd import`.

use crate::Result;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Its file name in a run directory.
pub const FILE_NAME: &str = "probe-link.jsonl";

/// One line of `probe-link.jsonl`. The scalars are typed; the nested details of a
/// reconnect, an alignment or the device info stay as the probe crate writes them
/// (`nested`, not mapped to InfluxDB).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkRecord {
    /// What happened (`connected`, `gap`, `probe_error`, …).
    pub event: String,
    /// When, host Unix ns.
    pub time_ns: i64,
    /// Serial port (`connected`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<String>,
    /// Why the link went down (`disconnected`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// First sequence number after a gap (`gap`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_seq: Option<u64>,
    /// Samples missing (`gap`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing: Option<u64>,
    /// Of them, reported dropped by the probe (`gap`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_reported: Option<u64>,
    /// First sequence number after a restart (`sequence_restart`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_seq: Option<u64>,
    /// Error code the probe sent (`probe_error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<i64>,
    /// Its detail (`probe_error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Nested objects (`reconnect`, `alignment`, `info`), kept as written.
    #[serde(flatten)]
    pub nested: serde_json::Map<String, serde_json::Value>,
}

impl LinkRecord {
    /// An event at `time_ns` with no details yet.
    pub fn new(event: &str, time_ns: i64) -> LinkRecord {
        LinkRecord {
            event: event.to_owned(),
            time_ns,
            ..LinkRecord::default()
        }
    }

    /// Its line (no newline).
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("a link record serialises")
    }
}

/// Parses the text of a `probe-link.jsonl` at `path` (blank lines skipped); a line that is
/// not a link record is an error naming its line.
pub fn parse(path: &Path, text: &str) -> Result<Vec<LinkRecord>> {
    crate::jsonl::parse(path, text)
}

/// Reads `dir/probe-link.jsonl`.
pub fn read(dir: &Path) -> Result<Vec<LinkRecord>> {
    crate::jsonl::read(dir, FILE_NAME)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip_and_bad_lines_name_their_number() {
        let mut gap = LinkRecord::new("gap", 7);
        gap.missing = Some(15);
        gap.next_seq = Some(40);
        let mut info = LinkRecord::new("device_info", 8);
        info.nested
            .insert("info".into(), serde_json::json!({"fw": "1.2"}));
        let text = format!("{}\n\n{}\n", gap.to_line(), info.to_line());
        let p = Path::new(FILE_NAME);
        assert_eq!(parse(p, &text).unwrap(), vec![gap, info]);
        let err = parse(p, "\n{\"event\":\"x\"}").unwrap_err().to_string();
        assert!(err.contains("line 2") && err.contains("time_ns"), "{err}");
    }
}
