//! The shapes of `manifest.json` written before this crate existed (`hostd monitor`'s and
//! `scenario-gen`'s), told apart from the current one and upgraded to it ([`upgrade`]).

use super::{extra, Manifest, TargetInfo};
use crate::error::{RecordError, Result};
use serde::Deserialize;
use std::path::Path;

/// The manifest of one of the shapes written before this crate existed, upgraded to the
/// current one; `None` for any other text (even malformed: the current reader's errors name
/// line and column).
///
/// `hostd monitor`'s (`"kind": "monitor"`, no run id or targets): the run id is the
/// directory's name, `probe` and `end_ns` go to `extra.probe` and `extra.monitor`.
/// `scenario-gen`'s (`scenario`, `probe_target`, `simulated` and `"sim:NAME:PHASE"` targets,
/// no start or run id): the run id is the directory's name and the start the earliest
/// record, the smallest `start_ns` of `files.csv` or the first sample of `probe.csv`.
pub(super) fn upgrade(dir: &Path, path: &Path, text: &str) -> Option<Result<Manifest>> {
    let upgraded = match Shape::of(text) {
        Shape::Current => return None,
        Shape::OldMonitor => serde_json::from_str::<OldMonitor>(text)
            .map_err(|e| RecordError::json(path, e))
            .map(|old| old.upgrade(&dir_name(dir))),
        Shape::OldScenarioGen => serde_json::from_str::<OldScenarioGen>(text)
            .map_err(|e| RecordError::json(path, e))
            .and_then(|old| {
                let start_ns = earliest_record_ns(dir)?.ok_or_else(|| RecordError::Incomplete {
                    path: path.to_path_buf(),
                    message: "this scenario-gen manifest has no start_ns, and neither \
                                  files.csv nor probe.csv holds a record to take it from"
                        .into(),
                })?;
                Ok(old.upgrade(&dir_name(dir), start_ns))
            }),
    };
    Some(upgraded)
}

/// Which shape a manifest text has.
enum Shape {
    /// Any `format_version` of [`Manifest`].
    Current,
    /// `hostd monitor` before it wrote [`Manifest`].
    OldMonitor,
    /// `scenario-gen` before it wrote [`Manifest`].
    OldScenarioGen,
}

impl Shape {
    /// Told apart by the keys only the old shapes have (and no `run_id`); anything else,
    /// even malformed, goes to the current reader, whose errors name line and column.
    fn of(text: &str) -> Shape {
        #[derive(Deserialize)]
        struct Keys {
            run_id: Option<serde::de::IgnoredAny>,
            kind: Option<String>,
            scenario: Option<serde::de::IgnoredAny>,
        }
        match serde_json::from_str::<Keys>(text) {
            Ok(Keys {
                run_id: None, kind, ..
            }) if kind.as_deref() == Some("monitor") => Shape::OldMonitor,
            Ok(Keys {
                run_id: None,
                scenario: Some(_),
                ..
            }) => Shape::OldScenarioGen,
            _ => Shape::Current,
        }
    }
}

/// The manifest `hostd monitor` wrote before it used [`Manifest`] (up to 5e52024).
#[derive(Deserialize)]
struct OldMonitor {
    #[serde(default)]
    hostd_version: String,
    #[serde(default)]
    command_line: Vec<String>,
    start_ns: u64,
    end_ns: Option<u64>,
    probe: Option<serde_json::Value>,
}

impl OldMonitor {
    fn upgrade(self, run_id: &str) -> Manifest {
        let mut m = Manifest::new(run_id, self.start_ns, Vec::new());
        m.format_version = 1;
        m.formats.clear();
        m.hostd_version = self.hostd_version;
        m.command_line = self.command_line;
        m.set_section(
            extra::MONITOR,
            &extra::MonitorSection {
                end_ns: self.end_ns,
                ..extra::MonitorSection::new()
            },
        );
        if let Some(probe) = self.probe {
            m.extra.insert(extra::PROBE.into(), probe);
        }
        m
    }
}

/// The manifest `scenario-gen` wrote before it used [`Manifest`] (up to 7ba61e5).
#[derive(Deserialize)]
struct OldScenarioGen {
    scenario: String,
    probe_target: Option<String>,
    #[serde(default)]
    simulated: bool,
    /// `sim:NAME:PHASE`.
    #[serde(default)]
    targets: Vec<String>,
}

impl OldScenarioGen {
    /// The targets as the current `scenario-gen` describes them (label NAME, mode PHASE).
    fn upgrade(self, run_id: &str, start_ns: u64) -> Manifest {
        let targets = self
            .targets
            .iter()
            .map(|t| {
                let (label, mode) = t
                    .strip_prefix("sim:")
                    .and_then(|rest| rest.rsplit_once(':'))
                    .unwrap_or((t.as_str(), ""));
                TargetInfo::simulated(label, mode, t)
            })
            .collect();
        let mut m = Manifest::new(run_id, start_ns, targets);
        m.format_version = 1;
        m.formats.clear();
        m.probe_target = self.probe_target;
        m.set_section(
            extra::SCENARIO,
            &extra::ScenarioSection {
                name: self.scenario,
                simulated: self.simulated,
                end_ns: None,
            },
        );
        m
    }
}

/// The directory's own name (the run id of manifests that have none).
fn dir_name(dir: &Path) -> String {
    dir.canonicalize()
        .ok()
        .as_deref()
        .unwrap_or(dir)
        .file_name()
        .map_or_else(|| "run".into(), |n| n.to_string_lossy().into_owned())
}

/// The earliest time of the run directory's records: the smallest `start_ns` of
/// `files.csv` and the first `time_ns` of `probe.csv`; `None` when neither has a row.
fn earliest_record_ns(dir: &Path) -> Result<Option<u64>> {
    let mut earliest = None;
    if dir.join(crate::files::FILE_NAME).is_file() {
        earliest = crate::files::read(dir)?.iter().map(|r| r.start_ns).min();
    }
    if dir.join(crate::probe::FILE_NAME).is_file() {
        let first = crate::probe::read(dir)?
            .first()
            .and_then(|s| u64::try_from(s.time_ns).ok());
        earliest = earliest.into_iter().chain(first).min();
    }
    Ok(earliest)
}
