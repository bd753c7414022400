//! `os-log.jsonl`: what the operating system logged about a run's storage path while it
//! ran — USB link resets, UAS errors and fallbacks to usb-storage, re-enumeration at a
//! lower speed, disconnects, I/O errors — one JSON object a line, written by
//! `hostd_oslog` (the kernel log on Linux, the unified log on macOS, the System event log
//! on Windows), read by the analysis (the `link` cause) and `hostd analyze`.

use crate::Result;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Its file name in a run directory.
pub const FILE_NAME: &str = "os-log.jsonl";

/// What a logged line says happened on the storage path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OsLogKind {
    /// The host reset the USB device or the storage link (`reset SuperSpeed USB device`,
    /// a SCSI/ATA link or host reset, Windows' storport reset, event 129).
    LinkReset,
    /// A UAS command was aborted or timed out (`uas_eh_abort_handler`).
    UasError,
    /// The drive was bound to usb-storage instead of UAS (quirk, fallback).
    UasFallback,
    /// The device came back at a lower speed than it supports.
    LowerSpeed,
    /// The device disconnected (or was taken offline).
    Disconnect,
    /// An I/O request failed (`I/O error, dev sda`, `critical medium error`, `Buffer I/O
    /// error`, Windows disk events 7, 11, 51, 153).
    IoError,
}

impl OsLogKind {
    /// The name used in JSON and text.
    pub fn as_str(self) -> &'static str {
        match self {
            OsLogKind::LinkReset => "link_reset",
            OsLogKind::UasError => "uas_error",
            OsLogKind::UasFallback => "uas_fallback",
            OsLogKind::LowerSpeed => "lower_speed",
            OsLogKind::Disconnect => "disconnect",
            OsLogKind::IoError => "io_error",
        }
    }
}

/// One line of `os-log.jsonl`: a logged line about the storage path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OsLogRecord {
    /// When it was logged, host Unix ns (the log's own clock converted to the run's).
    pub time_ns: i64,
    /// What it says happened.
    pub kind: OsLogKind,
    /// The target whose drive it names, when the line names its device (`sda`, the USB
    /// bus path `2-1`, …); `None` for a line about another or an unknown device, kept as
    /// context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The device the line names, as the log spells it (`sda`, `2-1`, `RaidPort1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// Which log: `kernel` (Linux, logged by the kernel), `user` (Linux, written into the
    /// kernel log by a user-space process), `unified` (macOS), `system` (Windows).
    pub source: String,
    /// The line as logged (its message text).
    pub line: String,
}

impl OsLogRecord {
    /// Its line (no newline).
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("an OS log record serialises")
    }
}

/// Writes `dir/os-log.jsonl`, one record a line, in the given order.
pub fn write(dir: &Path, records: &[OsLogRecord]) -> Result<()> {
    let text: String = records.iter().map(|r| r.to_line() + "\n").collect();
    crate::write_atomic(&dir.join(FILE_NAME), text.as_bytes())
}

/// Parses the text of an `os-log.jsonl` at `path` (blank lines skipped); a line that is not
/// a record is an error naming its line.
pub fn parse(path: &Path, text: &str) -> Result<Vec<OsLogRecord>> {
    crate::jsonl::parse(path, text)
}

/// Reads `dir/os-log.jsonl`, in time order.
pub fn read(dir: &Path) -> Result<Vec<OsLogRecord>> {
    let mut records: Vec<OsLogRecord> = crate::jsonl::read(dir, FILE_NAME)?;
    records.sort_by_key(|r| r.time_ns);
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_in_time_order_and_bad_lines_name_their_number() {
        let d = tempfile::tempdir().unwrap();
        let reset = OsLogRecord {
            time_ns: 9,
            kind: OsLogKind::LinkReset,
            target: Some("/mnt/x".into()),
            device: Some("2-1".into()),
            source: "kernel".into(),
            line: "usb 2-1: reset SuperSpeed USB device number 3 using xhci_hcd".into(),
        };
        let io = OsLogRecord {
            time_ns: 4,
            kind: OsLogKind::IoError,
            target: None,
            device: Some("sdb".into()),
            source: "user".into(),
            line: "I/O error, dev sdb, sector 8".into(),
        };
        write(d.path(), &[reset.clone(), io.clone()]).unwrap();
        let text = std::fs::read_to_string(d.path().join(FILE_NAME)).unwrap();
        assert!(text.contains("\"kind\":\"link_reset\""), "{text}");
        assert!(!text.lines().nth(1).unwrap().contains("target"), "{text}");
        assert_eq!(read(d.path()).unwrap(), vec![io, reset]);
        let err = parse(Path::new(FILE_NAME), "\n{\"time_ns\":1}")
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 2") && err.contains("kind"), "{err}");
    }
}
