//! Run records → InfluxDB points (the data model of `docs/data-model.md`).
//!
//! Measurements: `run`, `file`, `interval`, `probe`, `probe_agg`, `event`. Tags only for
//! low-cardinality keys: `rig`, `run`, `target`, `phase`, `probe`. Field types are fixed
//! by field name (see [`is_int_field`]) so that a live run and a later `hostd import` of
//! the same data never conflict.

mod csv;
mod json;
mod probe;
#[cfg(test)]
mod tests;
mod workload;

pub use self::csv::{csv_points, open_maybe_gz, CsvSpec, Rows, CSV_SPECS};
pub use self::json::{
    event_points, headline_points, overlap_points, probe_health_point, probe_link_points,
    run_point, stats_points,
};
pub use self::probe::{agg_point, sample_point};
pub use self::workload::{drive_temp_point, file_point, interval_point};

use crate::{FieldValue, Point};
use anyhow::Context as _;
use serde_json::Value;
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
}

impl RunTags {
    /// Reads the tags from a `manifest.json` value: `host.hostname` (or `rig`), `run_id`
    /// (else `fallback_run`), and `extra.probe.probe_id` / `probe.probe_id` if present.
    pub fn from_manifest(manifest: &Value, fallback_run: &str) -> RunTags {
        let s = |v: &Value| v.as_str().filter(|s| !s.is_empty()).map(str::to_owned);
        let probe = [&manifest["probe"], &manifest["extra"]["probe"]]
            .iter()
            .find_map(|p| {
                s(&p["probe_id"]).or_else(|| p["probe_id"].as_u64().map(|n| n.to_string()))
            });
        RunTags {
            rig: s(&manifest["rig"])
                .or_else(|| s(&manifest["host"]["hostname"]))
                .unwrap_or_else(|| "unknown".into()),
            run: s(&manifest["run_id"]).unwrap_or_else(|| fallback_run.to_owned()),
            probe,
        }
    }

    /// Adds `rig` and `run` to a point.
    pub fn apply(&self, p: Point) -> Point {
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

/// True for fields stored as integers: counters, byte counts, indices, sequence numbers
/// and nanosecond times. Everything else numeric is a float.
pub fn is_int_field(name: &str) -> bool {
    const INTS: &[&str] = &[
        "index",
        "bytes",
        "seq",
        "cum_bytes",
        "corrupt_blocks",
        "corrupt_bytes",
        "late_ops",
        "block_size",
        "queue_depth",
        "first_corrupt_offset",
        "samples",
        "dropped",
        "crc_errors",
        "seq_gaps",
        "i2c_errors",
        "overflows",
        "reconnects",
        "seed",
        "format_version",
        "count",
        "onset_bytes",
        "files",
    ];
    INTS.contains(&name)
        || name.ends_with("_ns")
        || name.ends_with("_bytes")
        || name.ends_with("_count")
}

/// Types a text value for field `name`: integer per [`is_int_field`], else bool
/// (`true`/`false`), float, or string. Empty text gives `None` (field left out).
pub fn typed_field(name: &str, text: &str) -> Option<FieldValue> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    // Names, whatever they look like: one type per field for every row.
    if name == "probe" {
        return Some(FieldValue::Str(t.to_owned()));
    }
    if is_int_field(name) {
        if let Ok(n) = t.parse::<i64>() {
            return Some(FieldValue::Int(n));
        }
        if let Ok(f) = t.parse::<f64>() {
            // An integer field stays an integer (rounded) so its type never changes.
            if f.is_finite() && f.abs() < 9.0e18 {
                return Some(FieldValue::Int(f.round() as i64));
            }
        }
    }
    match t {
        "true" => return Some(FieldValue::Bool(true)),
        "false" => return Some(FieldValue::Bool(false)),
        _ => {}
    }
    match t.parse::<f64>() {
        Ok(f) if f.is_finite() => Some(FieldValue::Float(f)),
        Ok(_) => None,
        Err(_) => Some(FieldValue::Str(t.to_owned())),
    }
}

/// Types a JSON scalar for field `name` (see [`typed_field`]); objects, arrays and null
/// give `None`.
pub fn json_field(name: &str, v: &Value) -> Option<FieldValue> {
    match v {
        Value::Bool(b) => Some(FieldValue::Bool(*b)),
        Value::Number(n) => {
            if is_int_field(name) {
                n.as_i64()
                    .map(FieldValue::Int)
                    .or_else(|| typed_field(name, &n.to_string()))
            } else {
                n.as_f64().filter(|f| f.is_finite()).map(FieldValue::Float)
            }
        }
        Value::String(s) => Some(FieldValue::Str(s.clone())),
        _ => None,
    }
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
    let monitor = hostd_records::manifest::read(dir)
        .map(|m| m.extra.contains_key("monitor"))
        .unwrap_or_else(|_| {
            // Written before monitor used the records manifest: `"kind": "monitor"`.
            std::fs::read_to_string(dir.join(hostd_records::manifest::FILE_NAME))
                .is_ok_and(|t| t.contains("\"kind\": \"monitor\""))
        });
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
    Ok(())
}
