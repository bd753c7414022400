//! The OS log as a part of `hostd run` ([`Stage::Record`]): from the start of the run to
//! its end, this OS's log is read ([`crate::start_reader`]) for lines about USB and storage
//! trouble; each is matched to the target whose device it names (the whole-disk block
//! device, a partition of it, or the USB device of its bridge or a hub above it, from the
//! manifest's `targets[].link`); lines about other or unknown devices are kept with no
//! target, as context. At the end: `os-log.jsonl`, the records in memory for the analysis,
//! the `summary.json` `os_log` section, and a warning, once, where the log cannot be read.
//! Runs with no target on a physical device (simulated targets only) read no log.

use crate::{Collected, LogReader, Logged};
use hostd_records::link::LinkInfo;
use hostd_records::os_log::OsLogRecord;
use hostd_store::{RunPart, RunRecords, RunStart, Stage};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// How a target's device is named in the OS's log.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetDevice {
    /// Target label.
    pub label: String,
    /// Whole-disk block device (`sda`, `loop0`, `disk4`, `pd2`).
    pub block: Option<String>,
    /// USB bus path of its bridge (`2-1.4`).
    pub usb_path: Option<String>,
    /// The speed its bridge was connected at when the run started, Mb/s.
    pub usb_speed_mbps: Option<f64>,
}

impl TargetDevice {
    /// The device of `link` for target `label`, if the link names one.
    pub fn of(label: &str, link: &LinkInfo) -> Option<TargetDevice> {
        let d = TargetDevice {
            label: label.to_string(),
            block: link.block.clone(),
            usb_path: link.usb.as_ref().map(|u| u.bus_path.clone()),
            usb_speed_mbps: link.usb.as_ref().and_then(|u| u.speed_mbps),
        };
        (d.block.is_some() || d.usb_path.is_some()).then_some(d)
    }

    /// Whether a log line naming `device` is about this target's drive or its link.
    pub fn named_by(&self, device: &str) -> bool {
        // The disk or a partition: `sdb1` of `sdb`, `nvme0n1p2` of `nvme0n1`.
        let disk = self.block.as_deref().is_some_and(|b| {
            device.strip_prefix(b).is_some_and(|rest| {
                let digits = if b.ends_with(|c: char| c.is_ascii_digit()) {
                    rest.strip_prefix('p')
                        .unwrap_or(if rest.is_empty() { "" } else { "x" })
                } else {
                    rest
                };
                digits.chars().all(|c| c.is_ascii_digit())
            })
        });
        let usb = self.usb_path.as_deref().is_some_and(|p| {
            device == p || p.strip_prefix(device).is_some_and(|r| r.starts_with('.'))
        });
        disk || usb
    }

    /// Whether a device enumerated at `path` (`1-2`) at `mbps` is this target's bridge come
    /// back slower: on the same port (a USB 3 device falls back to the USB 2 bus, whose
    /// number differs) at a lower speed than the run started with.
    pub fn came_back_slower(&self, path: &str, mbps: f64) -> bool {
        let ports = |p: &str| p.split_once('-').map(|(_, ports)| ports.to_string());
        match (&self.usb_path, self.usb_speed_mbps) {
            (Some(ours), Some(speed)) => {
                ports(ours).is_some() && ports(ours) == ports(path) && mbps < speed
            }
            _ => false,
        }
    }
}

/// The lines as records, each with the target whose device it names (the first). A
/// device enumerated during the run (Linux `new … USB device`) is kept only where it is a
/// target's bridge come back at a lower speed (`lower_speed`).
pub fn match_targets(lines: Vec<Logged>, targets: &[TargetDevice]) -> Vec<OsLogRecord> {
    lines
        .into_iter()
        .filter_map(|l| {
            let target = match crate::kmsg::enumeration(&l.line) {
                Some((path, mbps)) => Some(
                    targets
                        .iter()
                        .find(|t| t.came_back_slower(&path, mbps))?
                        .label
                        .clone(),
                ),
                None => l.device.as_deref().and_then(|d| {
                    targets
                        .iter()
                        .find(|t| t.named_by(d))
                        .map(|t| t.label.clone())
                }),
            };
            Some(OsLogRecord {
                time_ns: l.time_ns,
                kind: l.kind,
                target,
                device: l.device,
                source: l.source,
                line: l.line,
            })
        })
        .collect()
}

/// Starts a log reader, or says in words why it cannot.
pub type StartReader = fn() -> Result<Box<dyn LogReader>, String>;

/// The OS log part of a run; see the module documentation.
pub struct OsLogPart {
    start_reader: StartReader,
    targets: Vec<TargetDevice>,
    reader: Mutex<Option<Box<dyn LogReader>>>,
    /// Why the log is not read, when it is not.
    not_read: Option<String>,
    physical: bool,
}

impl Default for OsLogPart {
    fn default() -> Self {
        Self::with_reader(crate::start_reader)
    }
}

impl OsLogPart {
    /// A part that reads this OS's log while the run goes.
    pub fn new() -> Self {
        Self::default()
    }

    /// A part that reads the log `start` opens (tests: a log that cannot be read).
    pub fn with_reader(start: StartReader) -> Self {
        OsLogPart {
            start_reader: start,
            targets: Vec::new(),
            reader: Mutex::new(None),
            not_read: None,
            physical: false,
        }
    }
}

impl RunPart for OsLogPart {
    fn name(&self) -> &str {
        "os_log"
    }

    fn stage(&self) -> Stage {
        Stage::Record
    }

    fn start(&mut self, run: &mut RunStart<'_>) -> anyhow::Result<Option<Value>> {
        let links: Vec<(&str, &LinkInfo)> = run
            .manifest
            .targets
            .iter()
            .filter_map(|t| t.link.as_ref().map(|l| (t.label.as_str(), l)))
            .filter(|(_, l)| l.bus != "none")
            .collect();
        self.physical = !links.is_empty();
        if !self.physical {
            return Ok(None);
        }
        self.targets = links
            .iter()
            .filter_map(|(label, l)| TargetDevice::of(label, l))
            .collect();
        match (self.start_reader)() {
            Ok(r) => *self.reader.lock().unwrap_or_else(|e| e.into_inner()) = Some(r),
            Err(why) => self.not_read = Some(why),
        }
        Ok(None)
    }

    fn finish(&mut self, records: &mut RunRecords<'_>) -> anyhow::Result<()> {
        if !self.physical {
            return Ok(());
        }
        let reader = self.reader.lock().unwrap_or_else(|e| e.into_inner()).take();
        let Some(reader) = reader else {
            let why = self.not_read.clone().unwrap_or_default();
            records.summary.warnings.push(format!("os log: {why}"));
            records
                .summary
                .extra
                .insert("os_log".into(), json!({ "read": false, "note": why }));
            return Ok(());
        };
        let Collected { lines, note } = reader.stop();
        let found = match_targets(lines, &self.targets);
        if let Some(n) = &note {
            records.summary.warnings.push(format!("os log: {n}"));
        }
        if let Err(e) = hostd_records::os_log::write(records.dir, &found) {
            records
                .summary
                .warnings
                .push(format!("{}: {e:#}", hostd_records::os_log::FILE_NAME));
        }
        records.summary.extra.insert(
            "os_log".into(),
            summary_section(&found, records.summary.start_ns as i64, note),
        );
        records.data.os_log = Some(found);
        Ok(())
    }
}

/// The `summary.json` `os_log` section: counts per kind and target, and each line with its
/// time from the run's start.
fn summary_section(found: &[OsLogRecord], start_ns: i64, note: Option<String>) -> Value {
    let mut counts: BTreeMap<String, BTreeMap<&'static str, usize>> = BTreeMap::new();
    for r in found {
        *counts
            .entry(
                r.target
                    .clone()
                    .unwrap_or_else(|| "(other or unknown device)".into()),
            )
            .or_default()
            .entry(r.kind.as_str())
            .or_default() += 1;
    }
    let text: Vec<String> = found
        .iter()
        .map(|r| {
            format!(
                "{:+.3} s {} {}: {}",
                (r.time_ns - start_ns) as f64 * 1e-9,
                r.target.as_deref().unwrap_or("(context)"),
                r.kind.as_str(),
                r.line
            )
        })
        .collect();
    json!({
        "read": true,
        "note": note,
        "lines": found.len(),
        "counts": counts,
        "text": text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_the_target_s_when_it_names_its_disk_a_partition_or_its_usb_path() {
        let t = TargetDevice {
            label: "/mnt/ssd".into(),
            block: Some("sdb".into()),
            usb_path: Some("2-1.4".into()),
            usb_speed_mbps: Some(5000.0),
        };
        for yes in ["sdb", "sdb1", "2-1.4", "2-1"] {
            assert!(t.named_by(yes), "{yes}");
        }
        for no in ["sda", "sdba", "2-1.3", "2-10", "2", ""] {
            assert!(!t.named_by(no), "{no}");
        }
        let nvme = TargetDevice {
            label: "n".into(),
            block: Some("nvme0n1".into()),
            usb_path: None,
            usb_speed_mbps: None,
        };
        assert!(nvme.named_by("nvme0n1p2") && nvme.named_by("nvme0n1"));
        assert!(!nvme.named_by("nvme0n12") && !nvme.named_by("nvme0n1x"));
        // Its bridge back on the USB 2 bus of the same port: slower; another port, or the
        // same speed: not.
        assert!(t.came_back_slower("1-1.4", 480.0));
        assert!(!t.came_back_slower("1-1.3", 480.0) && !t.came_back_slower("2-1.4", 5000.0));
        assert!(!nvme.came_back_slower("1-1.4", 480.0));
    }
}
