//! Run records → InfluxDB points (the data model of `docs/data-model.md`).
//!
//! Measurements: `run`, `file`, `interval`, `probe`, `probe_agg`, `event`. Tags only for
//! low-cardinality keys: `rig`, `run`, `target`, `phase`, `probe`. Every point is built
//! from a typed record (`hostd-records`), one function per measurement, used alike by
//! `hostd run`, `hostd monitor` and `hostd import`: each field has one Rust type, so a live
//! run and a later import of the same data never conflict, and renaming a record field
//! fails to build instead of dropping an InfluxDB field. The CSV records (`file`,
//! `interval`, `probe`, `probe_agg`, `drive_temp`) get their tags and fields from their
//! column tables ([`with_columns`]), the same table that writes and reads their CSV file.

mod csv;
mod json;
mod os_log;
mod probe;
#[cfg(test)]
mod tests;
mod workload;

pub use self::csv::{csv_points, open_maybe_gz, CsvSpec, Rows, CSV_SPECS};
pub use self::json::{
    event_points, headline_points, overlap_points, probe_health_point, probe_link_points,
    run_point, stats_points,
};
pub use self::os_log::os_log_points;
pub use self::probe::{agg_point, sample_point};
pub use self::workload::{drive_log_point, drive_temp_point, file_point, interval_point};

use crate::{FieldValue, Point};
use anyhow::Context as _;
use hostd_records::columns::{Columns, Role, Value};
use hostd_records::Manifest;
use std::path::Path;

/// Measurement names.
pub mod m {
    /// Run manifest, one point at run start.
    pub const RUN: &str = "run";
    /// One point per file operation.
    pub const FILE: &str = "file";
    /// One point per 1 s interval and target.
    pub const INTERVAL: &str = "interval";
    /// Aligned probe samples.
    pub const PROBE: &str = "probe";
    /// 10 ms min/mean/max of the probe samples.
    pub const PROBE_AGG: &str = "probe_agg";
    /// Analysis events (onset/recovery), Grafana annotations.
    pub const EVENT: &str = "event";
    /// Multi-target window: one point per target and one with `target=all`.
    pub const OVERLAP: &str = "overlap";
    /// Robust statistics per target and phase (events.json `phases`).
    pub const STATS: &str = "stats";
    /// Probe link health totals, one point per run (summary.json `extra.probe`).
    pub const PROBE_HEALTH: &str = "probe_health";
    /// Probe link events (probe-link.jsonl: connected, disconnected, …).
    pub const PROBE_LINK: &str = "probe_link";
    /// Headline figures per target and phase (events.json `headlines.series`).
    pub const HEADLINE: &str = "headline";
    /// The enclosure's thermal fit (events.json `headlines.thermal_fit`).
    pub const THERMAL_FIT: &str = "thermal_fit";
    /// The drive's own (SMART) temperature through the run (drive_temp.csv).
    pub const DRIVE_TEMP: &str = "drive_temp";
    /// The drive's own thermal record through the run: NVMe thermal counters and sensors,
    /// SATA SCT status (drive_log.csv).
    pub const DRIVE_LOG: &str = "drive_log";
    /// What the operating system logged about the storage path (os-log.jsonl).
    pub const OS_LOG: &str = "os_log";
}

/// Tags every point of a run carries.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RunTags {
    /// The machine the run was made on (host name unless given).
    pub rig: String,
    /// Run id.
    pub run: String,
    /// Probe id, when a probe was used.
    pub probe: Option<String>,
    /// The user's `--tag KEY=VALUE`s (the manifest's `conditions.tags`), on every point.
    pub user: std::collections::BTreeMap<String, String>,
}

impl RunTags {
    /// The tags of the run a manifest describes: `host.hostname` as `rig` (`unknown` when
    /// empty), `run_id` as `run`, the probe section's `probe_id` as `probe`, and the
    /// user's tags (`conditions.tags`).
    pub fn from_manifest(manifest: &Manifest) -> RunTags {
        let rig = &manifest.host.hostname;
        RunTags {
            rig: if rig.is_empty() { "unknown" } else { rig }.to_owned(),
            run: manifest.run_id.clone(),
            probe: manifest.probe_id(),
            user: manifest.conditions.tags.clone(),
        }
    }

    /// Adds the user's tags, then `rig` and `run` to a point (hostd's own tags win; `hostd
    /// run` refuses a user tag of their names).
    pub fn apply(&self, mut p: Point) -> Point {
        for (k, v) in &self.user {
            p.set_tag(k, v);
        }
        p.tag("rig", &self.rig).tag("run", &self.run)
    }

    /// Adds `rig`, `run` and `probe` to a point.
    pub fn apply_probe(&self, p: Point) -> Point {
        let p = self.apply(p);
        match &self.probe {
            Some(id) => p.tag("probe", id),
            None => p,
        }
    }
}

/// Adds the columns of a record (its column table in `hostd-records`) to a point: tag
/// columns as tags, the others as fields of their value's type (whole numbers as integers,
/// non-finite numbers and empty cells left out); the time column is the point's timestamp,
/// set by the caller. `None` adds nothing.
pub fn with_columns<R: Columns>(mut p: Point, r: Option<&R>) -> Point {
    R::visit(r, &mut |name, role, v| {
        let value: FieldValue = match v {
            Value::Absent => return,
            Value::Text(s) if role == Role::Tag => {
                p.set_tag(name, s);
                return;
            }
            _ if role != Role::Field => return,
            Value::Text(s) => s.into(),
            Value::Int(n) => n.into(),
            Value::Count(n) => FieldValue::Int(n as i64),
            Value::Float(f) | Value::Fixed(f, _) if f.is_finite() => f.into(),
            Value::Float(_) | Value::Fixed(..) => return,
            Value::Bool(b) => b.into(),
        };
        p.set_field(name, value);
    });
    p
}

/// Streams the points of everything a finished run directory holds besides the manifest
/// and the spool: the CSV files, `events.json` (events, overlap, stats), `summary.json`
/// (probe health) and `probe-link.jsonl`; CSV files named in `skip` are left out.
/// `emit` gets the points in chunks of at most 5 000; `done` is called after each source
/// with its point count (`None`: absent).
pub fn run_dir_points(
    dir: &Path,
    tags: &RunTags,
    skip: &[&str],
    mut emit: impl FnMut(&[Point]) -> anyhow::Result<()>,
    mut done: impl FnMut(&str, Option<usize>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    for spec in CSV_SPECS.iter().filter(|s| !skip.contains(&s.file)) {
        let mut batch: Vec<Point> = Vec::with_capacity(5_000);
        let n = csv_points(dir, spec, tags, |p| {
            batch.push(p);
            if batch.len() == 5_000 {
                emit(&batch)?;
                batch.clear();
            }
            Ok(())
        })
        .with_context(|| format!("reading {}", dir.join(spec.file).display()))?;
        emit(&batch)?;
        done(spec.file, n)?;
    }
    if dir.join(hostd_records::events::FILE_NAME).is_file() {
        let a = hostd_records::events::read(dir)?;
        let mut pts = event_points(&a, tags);
        emit(&pts)?;
        done("events.json", Some(pts.len()))?;
        pts = overlap_points(&a, tags);
        emit(&pts)?;
        done("events.json overlap", Some(pts.len()))?;
        pts = stats_points(&a, tags);
        emit(&pts)?;
        done("events.json phases", Some(pts.len()))?;
        pts = headline_points(&a, tags);
        emit(&pts)?;
        done("events.json headlines", Some(pts.len()))?;
    } else {
        done("events.json", None)?;
    }
    // A `hostd monitor` directory's summary.json is the session's, not a run summary.
    let monitor = hostd_records::manifest::read(dir).is_ok_and(|m| m.is_monitor());
    match (dir.join(hostd_records::summary::FILE_NAME).is_file() && !monitor)
        .then(|| hostd_records::summary::read(dir))
        .transpose()?
    {
        Some(s) => {
            let pts: Vec<Point> = probe_health_point(&s, tags).into_iter().collect();
            emit(&pts)?;
            done("summary.json", Some(pts.len()))?;
        }
        None => done("summary.json", None)?,
    }
    if dir.join(hostd_records::probe_link::FILE_NAME).is_file() {
        let pts = probe_link_points(&hostd_records::probe_link::read(dir)?, tags);
        emit(&pts)?;
        done("probe-link.jsonl", Some(pts.len()))?;
    } else {
        done("probe-link.jsonl", None)?;
    }
    if dir.join(hostd_records::os_log::FILE_NAME).is_file() {
        let pts = os_log_points(&hostd_records::os_log::read(dir)?, tags);
        emit(&pts)?;
        done("os-log.jsonl", Some(pts.len()))?;
    } else {
        done("os-log.jsonl", None)?;
    }
    Ok(())
}
