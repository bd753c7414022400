//! Run records → InfluxDB points (the data model of `docs/data-model.md`).
//!
//! Measurements: `run`, `file`, `interval`, `probe`, `probe_agg`, `event`. Tags only for
//! low-cardinality keys: `rig`, `run`, `target`, `phase`, `probe`. Field types are fixed
//! by field name (see [`is_int_field`]) so that a live run and a later `hostd import` of
//! the same data never conflict.

use crate::{FieldValue, Point};
use anyhow::Context as _;
use serde_json::Value;
use std::collections::HashMap;
use std::io::Read;
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

/// How one CSV file of the run directory maps to a measurement.
#[derive(Debug, Clone, Copy)]
pub struct CsvSpec {
    /// File name in the run directory (a `.gz` sibling is read too).
    pub file: &'static str,
    /// Measurement.
    pub measurement: &'static str,
    /// Candidate time columns (host Unix ns), first present wins.
    pub time: &'static [&'static str],
    /// Columns that become tags.
    pub tags: &'static [&'static str],
    /// Whether points carry the `probe` tag.
    pub probe_tag: bool,
}

/// The CSV files of a run directory and their measurements.
pub const CSV_SPECS: &[CsvSpec] = &[
    CsvSpec {
        file: "files.csv",
        measurement: m::FILE,
        time: &["end_ns", "start_ns"],
        tags: &["target", "phase"],
        probe_tag: false,
    },
    CsvSpec {
        file: "intervals.csv",
        measurement: m::INTERVAL,
        time: &["start_ns", "time_ns", "end_ns"],
        tags: &["target", "phase"],
        probe_tag: false,
    },
    CsvSpec {
        file: "probe.csv",
        measurement: m::PROBE,
        time: &["time_ns"],
        tags: &[],
        probe_tag: true,
    },
    CsvSpec {
        file: "probe_agg.csv",
        measurement: m::PROBE_AGG,
        time: &["time_ns", "start_ns"],
        tags: &[],
        probe_tag: true,
    },
];

/// Opens `dir/file`, or `dir/file.gz` decompressed; `None` when neither exists.
pub fn open_maybe_gz(dir: &Path, file: &str) -> anyhow::Result<Option<Box<dyn Read>>> {
    let plain = dir.join(file);
    if plain.is_file() {
        let f = std::fs::File::open(&plain)
            .with_context(|| format!("cannot open {}", plain.display()))?;
        return Ok(Some(Box::new(std::io::BufReader::new(f))));
    }
    let gz = dir.join(format!("{file}.gz"));
    if gz.is_file() {
        let f =
            std::fs::File::open(&gz).with_context(|| format!("cannot open {}", gz.display()))?;
        return Ok(Some(Box::new(flate2::read::MultiGzDecoder::new(
            std::io::BufReader::new(f),
        ))));
    }
    Ok(None)
}

/// Streams the points of one CSV file to `sink`, in file order. For `files.csv` a
/// `cum_bytes` field (bytes of this target and phase up to and including the file, in
/// file order) and `seconds` are added when absent. Returns the number of points, or
/// `None` when the file does not exist. A row without a usable time is an error naming
/// the file and line.
pub fn csv_points(
    dir: &Path,
    spec: &CsvSpec,
    tags: &RunTags,
    mut sink: impl FnMut(Point) -> anyhow::Result<()>,
) -> anyhow::Result<Option<usize>> {
    let Some(reader) = open_maybe_gz(dir, spec.file)? else {
        return Ok(None);
    };
    let mut rdr = csv::ReaderBuilder::new().flexible(true).from_reader(reader);
    let headers: Vec<String> = rdr
        .headers()
        .with_context(|| format!("{}: cannot read the header", spec.file))?
        .iter()
        .map(|h| h.trim().to_owned())
        .collect();
    let time_col = spec
        .time
        .iter()
        .find_map(|t| headers.iter().position(|h| h == t))
        .with_context(|| format!("{}: no time column (one of {:?})", spec.file, spec.time))?;
    let col = |name: &str| headers.iter().position(|h| h == name);
    let is_files = spec.measurement == m::FILE;
    let (start_col, end_col, bytes_col) = (col("start_ns"), col("end_ns"), col("bytes"));
    let add_cum = is_files && col("cum_bytes").is_none() && bytes_col.is_some();
    let add_secs = is_files && col("seconds").is_none() && start_col.is_some() && end_col.is_some();
    let mut cum: HashMap<(String, String), i64> = HashMap::new();
    let mut n = 0;
    for (i, row) in rdr.records().enumerate() {
        let line = i + 2;
        let row = row.with_context(|| format!("{}: line {line}", spec.file))?;
        let t_text = row.get(time_col).unwrap_or("").trim();
        let ts: i64 = t_text.parse().with_context(|| {
            format!(
                "{}: line {line}: time {:?} is not an integer (ns)",
                spec.file, t_text
            )
        })?;
        let mut p = Point::new(spec.measurement).timestamp_ns(ts);
        p = if spec.probe_tag {
            tags.apply_probe(p)
        } else {
            tags.apply(p)
        };
        for (h, v) in headers.iter().zip(row.iter()) {
            if spec.tags.contains(&h.as_str()) {
                p = p.tag(h, v.trim());
            } else if h == "time_ns" {
                // the point's own time
            } else if let Some(fv) = typed_field(h, v) {
                p = p.field(h, fv);
            }
        }
        let get = |c: Option<usize>| {
            c.and_then(|c| row.get(c))
                .and_then(|v| v.trim().parse::<i64>().ok())
        };
        if add_cum {
            let key = (
                col("target")
                    .and_then(|c| row.get(c))
                    .unwrap_or("")
                    .to_owned(),
                col("phase")
                    .and_then(|c| row.get(c))
                    .unwrap_or("")
                    .to_owned(),
            );
            let total = cum.entry(key).or_default();
            *total += get(bytes_col).unwrap_or(0);
            p = p.field("cum_bytes", *total);
        }
        if add_secs {
            if let (Some(s), Some(e)) = (get(start_col), get(end_col)) {
                p = p.field("seconds", (e - s) as f64 / 1e9);
            }
        }
        sink(p)?;
        n += 1;
    }
    Ok(Some(n))
}

/// The `run` point of a manifest (time = `start_ns`).
pub fn run_point(manifest: &Value, tags: &RunTags) -> anyhow::Result<Point> {
    let start = manifest["start_ns"]
        .as_i64()
        .context("manifest.json has no integer start_ns")?;
    let mut p = tags.apply(Point::new(m::RUN)).timestamp_ns(start);
    let str_of = |v: &Value| v.as_str().map(str::to_owned);
    if let Some(v) = str_of(&manifest["profile"]["name"]).or_else(|| str_of(&manifest["profile"])) {
        p = p.field("profile", v);
    }
    for key in [
        "hostd_version",
        "format_version",
        "seed",
        "keep",
        "allow_cached",
    ] {
        if let Some(v) = json_field(key, &manifest[key]) {
            p = p.field(key, v);
        }
    }
    if let Some(cl) = manifest["command_line"].as_array() {
        let words: Vec<&str> = cl.iter().filter_map(Value::as_str).collect();
        p = p.field("command_line", words.join(" "));
    }
    if let Some(h) = str_of(&manifest["host"]["hostname"]) {
        p = p.field("hostname", h);
    }
    if let Some(targets) = manifest["targets"].as_array() {
        let names: Vec<String> = targets
            .iter()
            .filter_map(|t| str_of(&t["label"]).or_else(|| str_of(&t["path"])))
            .collect();
        p = p.field("targets", names.join(","));
        let direct: Vec<bool> = targets
            .iter()
            .filter_map(|t| match &t["direct_io"] {
                Value::Bool(b) => Some(*b),
                Value::String(s) => Some(s != "no" && s != "off" && s != "none" && s != "false"),
                Value::Object(o) => o.get("in_force").and_then(Value::as_bool),
                _ => None,
            })
            .collect();
        if !direct.is_empty() {
            p = p.field("direct_io", direct.iter().all(|b| *b));
        }
    }
    Ok(p)
}

/// The `event` points of an `events.json` value: an array of events or an object with an
/// `events` array. Time = `onset_ns` (else `time_ns`, `start_ns`). Scalars of the event
/// and of its `evidence` object become fields; `target` and `phase` become tags;
/// `rate_*_bps` also gives `rate_*_mbps` and `onset_bytes` gives `onset_gb`.
pub fn event_points(events: &Value, tags: &RunTags) -> anyhow::Result<Vec<Point>> {
    let list = events
        .as_array()
        .or_else(|| events["events"].as_array())
        .context("events.json holds neither an array nor an \"events\" array")?;
    let mut out = Vec::with_capacity(list.len());
    for (i, ev) in list.iter().enumerate() {
        let ts = ["onset_ns", "time_ns", "start_ns"]
            .iter()
            .find_map(|k| ev[*k].as_i64())
            .with_context(|| format!("events.json: event {i} has no onset_ns/time_ns"))?;
        let mut p = tags.apply(Point::new(m::EVENT)).timestamp_ns(ts);
        let mut fields: Vec<(String, FieldValue)> = Vec::new();
        let mut put = |k: &str, v: &Value| {
            if let Some(fv) = json_field(k, v) {
                fields.push((k.to_owned(), fv));
            }
        };
        if let Some(obj) = ev.as_object() {
            for (k, v) in obj {
                if k == "target" || k == "phase" {
                    continue;
                }
                put(k, v);
            }
        }
        if let Some(obj) = ev["evidence"].as_object() {
            for (k, v) in obj {
                if ev.get(k).is_none() {
                    put(k, v);
                }
            }
        }
        for (bps, mbps) in [
            ("rate_before_bps", "rate_before_mbps"),
            ("rate_after_bps", "rate_after_mbps"),
        ] {
            if let (Some(v), true) = (ev[bps].as_f64(), fields.iter().all(|(k, _)| k != mbps)) {
                fields.push((mbps.into(), FieldValue::Float(v / 1e6)));
            }
        }
        if let (Some(b), true) = (
            ev["onset_bytes"].as_f64(),
            fields.iter().all(|(k, _)| k != "onset_gb"),
        ) {
            fields.push(("onset_gb".into(), FieldValue::Float(b / 1e9)));
        }
        for (k, v) in fields {
            p = p.field(k, v);
        }
        for t in ["target", "phase"] {
            if let Some(s) = ev[t].as_str() {
                p = p.tag(t, s);
            }
        }
        out.push(p);
    }
    Ok(out)
}

/// Converts `*_bps` keys to `*_mbps` (÷ 10⁶) and types the other scalars of `obj`.
fn scalar_fields(obj: &serde_json::Map<String, Value>, skip: &[&str]) -> Vec<(String, FieldValue)> {
    let mut out = Vec::new();
    for (k, v) in obj {
        if skip.contains(&k.as_str()) {
            continue;
        }
        if let Some(stem) = k.strip_suffix("_bps") {
            if let Some(f) = v.as_f64().filter(|f| f.is_finite()) {
                out.push((format!("{stem}_mbps"), FieldValue::Float(f / 1e6)));
            }
        } else if let Some(fv) = json_field(k, v) {
            out.push((k.clone(), fv));
        }
    }
    out
}

fn with_fields(mut p: Point, fields: Vec<(String, FieldValue)>) -> Point {
    for (k, v) in fields {
        p = p.field(k, v);
    }
    p
}

/// `overlap` points of events.json's `overlap` object when it has a window: one per
/// target at the window start (tags `target`; fields `end_ns`, `duration_s`, `bytes`,
/// `mbps`) and one with `target=all` (`mbps` = aggregate, `peak_mbps`).
pub fn overlap_points(events: &Value, tags: &RunTags) -> Vec<Point> {
    let o = &events["overlap"];
    let w = &o["window"];
    let (Some(start), Some(end)) = (w["start_ns"].as_i64(), w["end_ns"].as_i64()) else {
        return Vec::new();
    };
    let duration = w["duration_s"]
        .as_f64()
        .unwrap_or((end - start) as f64 / 1e9);
    let base = |target: &str| {
        tags.apply(Point::new(m::OVERLAP))
            .timestamp_ns(start)
            .tag("target", target)
            .field("end_ns", end)
            .field("duration_s", duration)
    };
    let mut out = Vec::new();
    for t in o["per_target"].as_array().into_iter().flatten() {
        let Some(name) = t["target"].as_str() else {
            continue;
        };
        let mut p = base(name);
        if let Some(b) = json_field("bytes", &t["bytes"]) {
            p = p.field("bytes", b);
        }
        if let Some(r) = t["rate_bps"].as_f64() {
            p = p.field("mbps", r / 1e6);
        }
        out.push(p);
    }
    if let Some(a) = o["aggregate_bps"].as_f64() {
        let mut p = base("all").field("mbps", a / 1e6);
        if let Some(pk) = o["peak_aggregate_bps"].as_f64() {
            p = p.field("peak_mbps", pk / 1e6);
        }
        out.push(p);
    }
    out
}

/// `stats` points of events.json's `phases` array: per target and phase at the phase
/// start, every scalar (`files`, `bytes`, `seconds`, `bimodal`, …) with `*_bps` given as
/// `*_mbps` (`mean_mbps`, `median_mbps`, `trimmed_mean_mbps`, `theil_sen_mbps`, …).
pub fn stats_points(events: &Value, tags: &RunTags) -> Vec<Point> {
    let mut out = Vec::new();
    for ph in events["phases"].as_array().into_iter().flatten() {
        let (Some(obj), Some(start)) = (ph.as_object(), ph["start_ns"].as_i64()) else {
            continue;
        };
        let fields = scalar_fields(obj, &["target", "phase"]);
        if fields.is_empty() {
            continue;
        }
        let mut p = tags.apply(Point::new(m::STATS)).timestamp_ns(start);
        for t in ["target", "phase"] {
            if let Some(v) = ph[t].as_str() {
                p = p.tag(t, v);
            }
        }
        out.push(with_fields(p, fields));
    }
    out
}

/// The `probe_health` point of a run: totals from summary.json `extra.probe` at the run's
/// end (`samples`, `dropped`, `i2c_errors`, `overflows`, `crc_errors`, `seq_gaps`,
/// `reconnects`, `alignment_uncertainty_us`) and `sample_rate_hz` from the manifest.
/// `None` without a probe section.
pub fn probe_health_point(summary: &Value, manifest: &Value, tags: &RunTags) -> Option<Point> {
    let pr = &summary["extra"]["probe"];
    if !pr.is_object() {
        return None;
    }
    let end = summary["end_ns"].as_i64()?;
    let link = &pr["link"];
    let int = |v: &Value| v.as_i64().or_else(|| v.as_f64().map(|f| f.round() as i64));
    let mut p = tags
        .apply_probe(Point::new(m::PROBE_HEALTH))
        .timestamp_ns(end);
    let probe = &link["probe"];
    for (field, v) in [
        ("samples", &probe["samples_taken"]),
        ("dropped", &probe["samples_dropped"]),
        ("i2c_errors", &probe["i2c_errors"]),
        ("crc_errors", &link["stats"]["frames"]["crc_errors"]),
        ("seq_gaps", &link["stats"]["sequence"]["gaps"]),
    ] {
        if let Some(n) = int(v) {
            p = p.field(field, n);
        }
    }
    if let (Some(a), Some(b)) = (int(&probe["ring_overflows"]), int(&probe["tx_overflows"])) {
        p = p.field("overflows", a + b);
    }
    if let Some(r) = link["reconnects"].as_array() {
        p = p.field("reconnects", r.len() as i64);
    }
    if let Some(u) = pr["alignment_uncertainty_ns"].as_f64() {
        p = p.field("alignment_uncertainty_us", u / 1e3);
    }
    let rate = &manifest["extra"]["probe"]["rate_hz"];
    if let Some(r) = rate.as_f64() {
        p = p.field("sample_rate_hz", r);
    }
    (!p.fields().is_empty()).then_some(p)
}

/// `probe_link` points of probe-link.jsonl (one JSON object per line with `time_ns` and
/// `event`); the other scalars become fields, nested objects are left out.
pub fn probe_link_points(text: &str, tags: &RunTags) -> anyhow::Result<Vec<Point>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line)
            .with_context(|| format!("probe-link.jsonl: line {} is not JSON", i + 1))?;
        let (Some(obj), Some(t)) = (v.as_object(), v["time_ns"].as_i64()) else {
            anyhow::bail!("probe-link.jsonl: line {} has no time_ns", i + 1);
        };
        let fields = scalar_fields(obj, &["time_ns"]);
        if fields.is_empty() {
            continue;
        }
        let p = tags.apply_probe(Point::new(m::PROBE_LINK)).timestamp_ns(t);
        out.push(with_fields(p, fields));
    }
    Ok(out)
}

/// Streams the points of everything a finished run directory holds besides the manifest
/// and the spool: the CSV files, `events.json` (events, overlap, stats), `summary.json`
/// (probe health) and `probe-link.jsonl`. `emit` gets the points in chunks of at most
/// 5 000; `done` is called after each source with its point count (`None`: absent).
pub fn run_dir_points(
    dir: &Path,
    manifest: &Value,
    tags: &RunTags,
    mut emit: impl FnMut(&[Point]) -> anyhow::Result<()>,
    mut done: impl FnMut(&str, Option<usize>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    for spec in CSV_SPECS {
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
    let read_json = |name: &str| -> anyhow::Result<Option<Value>> {
        let p = dir.join(name);
        if !p.is_file() {
            return Ok(None);
        }
        let text =
            std::fs::read_to_string(&p).with_context(|| format!("cannot read {}", p.display()))?;
        Ok(Some(serde_json::from_str(&text).with_context(|| {
            format!("{}: not valid JSON", p.display())
        })?))
    };
    match read_json("events.json")? {
        Some(v) => {
            let mut pts = event_points(&v, tags)?;
            let n = pts.len();
            emit(&pts)?;
            done("events.json", Some(n))?;
            pts = overlap_points(&v, tags);
            emit(&pts)?;
            done("events.json overlap", Some(pts.len()))?;
            pts = stats_points(&v, tags);
            emit(&pts)?;
            done("events.json phases", Some(pts.len()))?;
        }
        None => done("events.json", None)?,
    }
    match read_json("summary.json")? {
        Some(v) => {
            let pts: Vec<Point> = probe_health_point(&v, manifest, tags).into_iter().collect();
            emit(&pts)?;
            done("summary.json", Some(pts.len()))?;
        }
        None => done("summary.json", None)?,
    }
    let link = dir.join("probe-link.jsonl");
    if link.is_file() {
        let text = std::fs::read_to_string(&link)
            .with_context(|| format!("cannot read {}", link.display()))?;
        let pts = probe_link_points(&text, tags)?;
        emit(&pts)?;
        done("probe-link.jsonl", Some(pts.len()))?;
    } else {
        done("probe-link.jsonl", None)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tags() -> RunTags {
        RunTags {
            rig: "bench".into(),
            run: "r1".into(),
            probe: Some("p7".into()),
        }
    }

    #[test]
    fn field_types_are_fixed_by_name() {
        assert_eq!(
            typed_field("bytes", "1048576"),
            Some(FieldValue::Int(1_048_576))
        );
        assert_eq!(typed_field("start_ns", "17"), Some(FieldValue::Int(17)));
        assert_eq!(typed_field("mbps", "500"), Some(FieldValue::Float(500.0)));
        assert_eq!(
            typed_field("verified", "true"),
            Some(FieldValue::Bool(true))
        );
        assert_eq!(
            typed_field("status", "ok"),
            Some(FieldValue::Str("ok".into()))
        );
        assert_eq!(typed_field("mbps", ""), None);
        assert_eq!(typed_field("mbps", "NaN"), None);
        assert_eq!(json_field("seq", &json!(3)), Some(FieldValue::Int(3)));
        assert_eq!(
            json_field("power_w", &json!(3)),
            Some(FieldValue::Float(3.0))
        );
    }

    #[test]
    fn files_csv_gets_tags_cumulative_bytes_and_seconds() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("files.csv"),
            "target,phase,index,start_ns,end_ns,bytes,mbps,verified,status\n\
             /mnt/x,write,0,1000000000,2000000000,100,0.0001,,ok\n\
             /mnt/x,write,1,2000000000,2500000000,50,0.0001,,ok\n\
             /mnt/x,read,0,3000000000,4000000000,100,0.0001,true,ok\n",
        )
        .unwrap();
        let mut pts = Vec::new();
        let n = csv_points(dir.path(), &CSV_SPECS[0], &tags(), |p| {
            pts.push(p.to_line()?);
            Ok(())
        })
        .unwrap();
        assert_eq!(n, Some(3));
        assert_eq!(
            pts[1],
            "file,phase=write,rig=bench,run=r1,target=/mnt/x index=1i,start_ns=2000000000i,\
             end_ns=2500000000i,bytes=50i,mbps=0.0001,status=\"ok\",cum_bytes=150i,seconds=0.5 2500000000"
        );
        assert!(pts[2].contains("verified=true") && pts[2].contains("cum_bytes=100i"));
    }

    #[test]
    fn gzipped_probe_csv_is_read_and_bad_time_is_a_clear_error() {
        use std::io::Write as _;
        let dir = tempfile::tempdir().unwrap();
        let f = std::fs::File::create(dir.path().join("probe.csv.gz")).unwrap();
        let mut gz = flate2::write::GzEncoder::new(f, flate2::Compression::fast());
        gz.write_all(b"time_ns,seq,power_w\n10,0,4.5\nx,1,4.6\n")
            .unwrap();
        gz.finish().unwrap();
        let mut lines = Vec::new();
        let err = csv_points(dir.path(), &CSV_SPECS[2], &tags(), |p| {
            lines.push(p.to_line()?);
            Ok(())
        })
        .unwrap_err();
        assert_eq!(
            lines,
            ["probe,probe=p7,rig=bench,run=r1 seq=0i,power_w=4.5 10"]
        );
        assert!(format!("{err:#}").contains("probe.csv: line 3"), "{err:#}");
        assert_eq!(
            csv_points(dir.path(), &CSV_SPECS[3], &tags(), |_| Ok(())).unwrap(),
            None
        );
    }

    #[test]
    fn manifest_gives_tags_and_run_point() {
        let man = json!({
            "run_id": "2026-11-21T16-00-00Z-ab12", "start_ns": 5, "hostd_version": "0.1.0",
            "format_version": 1, "seed": 42, "host": {"hostname": "rig1"},
            "profile": {"name": "quick"}, "command_line": ["hostd", "run"],
            "targets": [{"label": "t0", "direct_io": true}],
            "extra": {"probe": {"probe_id": "abc"}}
        });
        let t = RunTags::from_manifest(&man, "dir");
        assert_eq!(
            (t.rig.as_str(), t.run.as_str(), t.probe.as_deref()),
            ("rig1", "2026-11-21T16-00-00Z-ab12", Some("abc"))
        );
        let line = run_point(&man, &t).unwrap().to_line().unwrap();
        assert_eq!(
            line,
            "run,rig=rig1,run=2026-11-21T16-00-00Z-ab12 profile=\"quick\",hostd_version=\"0.1.0\",\
             format_version=1i,seed=42i,command_line=\"hostd run\",hostname=\"rig1\",targets=\"t0\",direct_io=true 5"
        );
        assert!(run_point(&json!({}), &t).is_err());
    }

    #[test]
    fn events_map_with_units_and_evidence() {
        let ev = json!({"events": [{
            "kind": "drop", "target": "t0", "onset_ns": 99, "onset_bytes": 23900000000u64,
            "rate_before_bps": 2.31e9, "rate_after_bps": 6.6e8, "cause": "thermal",
            "confidence": 0.9, "evidence": {"duration_s": 12.5, "text": "thermal at 23.9 GB"}
        }]});
        let pts = event_points(&ev, &tags()).unwrap();
        let line = pts[0].to_line().unwrap();
        for want in [
            "event,rig=bench,run=r1,target=t0 ",
            "kind=\"drop\"",
            "cause=\"thermal\"",
            "confidence=0.9",
            "onset_bytes=23900000000i",
            "rate_before_mbps=2310",
            "rate_after_mbps=660",
            "onset_gb=23.9",
            "duration_s=12.5",
            "text=\"thermal at 23.9 GB\"",
            " 99",
        ] {
            assert!(line.contains(want), "{want} missing in {line}");
        }
        assert!(event_points(&json!({"x": 1}), &tags()).is_err());
        assert!(event_points(&json!([{"kind": "drop"}]), &tags()).is_err());
    }

    #[test]
    fn overlap_stats_probe_health_and_link_events() {
        let ev = json!({
            "events": [],
            "phases": [{"target": "A", "phase": "write", "files": 107, "bytes": 1.0e11,
                        "start_ns": 10, "mean_bps": 2.1e10, "trimmed_mean_bps": 1.6e10,
                        "bimodal": true, "bimodality": {"gap": 1.0}}],
            "overlap": {"window": {"start_ns": 100, "end_ns": 300, "duration_s": 2e-7},
                        "per_target": [{"target": "A", "bytes": 3.01e10, "rate_bps": 1.1e10},
                                       {"target": "B", "bytes": 5.0, "rate_bps": 2.0e6}],
                        "aggregate_bps": 5.7e10, "peak_aggregate_bps": 5.8e10}
        });
        let lines =
            |pts: Vec<Point>| -> Vec<String> { pts.iter().map(|p| p.to_line().unwrap()).collect() };
        assert_eq!(
            lines(overlap_points(&ev, &tags())),
            [
                "overlap,rig=bench,run=r1,target=A end_ns=300i,duration_s=0.0000002,bytes=30100000000i,mbps=11000 100",
                "overlap,rig=bench,run=r1,target=B end_ns=300i,duration_s=0.0000002,bytes=5i,mbps=2 100",
                "overlap,rig=bench,run=r1,target=all end_ns=300i,duration_s=0.0000002,mbps=57000,peak_mbps=58000 100",
            ]
        );
        assert!(overlap_points(&json!({"overlap": {"window": null}}), &tags()).is_empty());
        let st = lines(stats_points(&ev, &tags()));
        assert_eq!(st.len(), 1);
        for want in [
            "stats,phase=write,rig=bench,run=r1,target=A ",
            "files=107i",
            "bytes=100000000000i",
            "mean_mbps=21000",
            "trimmed_mean_mbps=16000",
            "bimodal=true",
            "start_ns=10i",
        ] {
            assert!(st[0].contains(want), "{want} in {}", st[0]);
        }
        assert!(!st[0].contains("gap"));

        let summary = json!({"end_ns": 999, "extra": {"probe": {
            "alignment_uncertainty_ns": 40105.3,
            "link": {"probe": {"samples_taken": 11835, "samples_dropped": 2, "i2c_errors": 0,
                               "ring_overflows": 1, "tx_overflows": 3},
                     "reconnects": [{}, {}],
                     "stats": {"frames": {"crc_errors": 4}, "sequence": {"gaps": 1}}}}}});
        let man = json!({"extra": {"probe": {"rate_hz": 1000}}});
        let ph = probe_health_point(&summary, &man, &tags())
            .unwrap()
            .to_line()
            .unwrap();
        assert_eq!(
            ph,
            "probe_health,probe=p7,rig=bench,run=r1 samples=11835i,dropped=2i,i2c_errors=0i,\
             crc_errors=4i,seq_gaps=1i,overflows=4i,reconnects=2i,alignment_uncertainty_us=40.1053,\
             sample_rate_hz=1000 999"
        );
        assert!(probe_health_point(&json!({"end_ns": 1, "extra": {}}), &man, &tags()).is_none());

        let jsonl = "{\"event\":\"connected\",\"port\":\"/dev/pts/0\",\"time_ns\":5}\n\
                     {\"event\":\"device_info\",\"info\":{\"x\":1},\"time_ns\":6}\n";
        assert_eq!(
            lines(probe_link_points(jsonl, &tags()).unwrap()),
            [
                "probe_link,probe=p7,rig=bench,run=r1 event=\"connected\",port=\"/dev/pts/0\" 5",
                "probe_link,probe=p7,rig=bench,run=r1 event=\"device_info\" 6",
            ]
        );
        assert!(probe_link_points("{\"event\":\"x\"}", &tags()).is_err());
    }
}
