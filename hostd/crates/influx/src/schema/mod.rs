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
mod rows;
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
pub use self::rows::{row_point, rows_points, run_rows_points};
pub use self::workload::{file_point, interval_point};

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
    R::visit(r, &mut |name, role, v| add_column(&mut p, name, role, v));
    p
}

/// Adds one column of a record to a point as [`with_columns`] does (the time column is the
/// caller's).
fn add_column(p: &mut Point, name: &str, role: Role, v: Value<'_>) {
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
}

/// Streams the points of everything a finished run directory holds besides the spool:
/// every file of the run-file registry (`hostd_records::run_files::RUN_FILES`) that is
/// imported, in its order — the manifest's `run` point, the CSV files, `events.json`
/// (events, overlap, stats, headlines), `summary.json` (probe health), `probe-link.jsonl`,
/// `os-log.jsonl` and the files of one point per record. `emit` gets the points in chunks of
/// at most 5 000; `done` is called after each source with its point count (`None`:
/// absent).
pub fn run_dir_points(
    dir: &Path,
    manifest: &Manifest,
    tags: &RunTags,
    mut emit: impl FnMut(&[Point]) -> anyhow::Result<()>,
    mut done: impl FnMut(&str, Option<usize>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    use hostd_records::run_files::{Import, RUN_FILES};
    for file in RUN_FILES {
        match file.import {
            Import::No | Import::With(_) => {}
            Import::Rows { .. } => {
                let n = rows_points(dir, manifest, file, tags, |pts| emit(pts))
                    .with_context(|| format!("reading {}", dir.join(file.name).display()))?;
                done(file.name, n)?;
            }
            Import::Mapped => mapped_points(dir, manifest, file.name, tags, &mut emit, &mut done)?,
        }
    }
    Ok(())
}

/// The points of a run file that [`Import::Mapped`](hostd_records::run_files::Import) says
/// is mapped by its own functions here.
fn mapped_points(
    dir: &Path,
    manifest: &Manifest,
    name: &str,
    tags: &RunTags,
    emit: &mut impl FnMut(&[Point]) -> anyhow::Result<()>,
    done: &mut impl FnMut(&str, Option<usize>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    use hostd_records as records;
    if let Some(spec) = CSV_SPECS.iter().find(|s| s.file == name) {
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
        return done(spec.file, n);
    }
    let present = dir.join(name).is_file();
    match name {
        records::manifest::FILE_NAME => {
            emit(&[run_point(manifest, tags)])?;
            done(name, Some(1))
        }
        records::events::FILE_NAME if present => {
            let a = records::events::read(dir)?;
            for (source, pts) in [
                ("events.json", event_points(&a, tags)),
                ("events.json overlap", overlap_points(&a, tags)),
                ("events.json phases", stats_points(&a, tags)),
                ("events.json headlines", headline_points(&a, tags)),
            ] {
                emit(&pts)?;
                done(source, Some(pts.len()))?;
            }
            Ok(())
        }
        // A `hostd monitor` directory's summary.json is the session's, not a run summary.
        records::summary::FILE_NAME if present && !manifest.is_monitor() => {
            let s = records::summary::read(dir)?;
            let pts: Vec<Point> = probe_health_point(&s, tags).into_iter().collect();
            emit(&pts)?;
            done(name, Some(pts.len()))
        }
        records::probe_link::FILE_NAME if present => {
            let pts = probe_link_points(&records::probe_link::read(dir)?, tags);
            emit(&pts)?;
            done(name, Some(pts.len()))
        }
        records::os_log::FILE_NAME if present => {
            let pts = os_log_points(&records::os_log::read(dir)?, tags);
            emit(&pts)?;
            done(name, Some(pts.len()))
        }
        records::events::FILE_NAME
        | records::summary::FILE_NAME
        | records::probe_link::FILE_NAME
        | records::os_log::FILE_NAME => done(name, None),
        other => anyhow::bail!("{other} is registered as mapped to InfluxDB, but nothing maps it"),
    }
}
