//! The run directory's JSON files → points: manifest (`run`), events.json (`event`,
//! `overlap`, `stats`), summary.json (`probe_health`) and probe-link.jsonl (`probe_link`).

use super::{json_field, m, RunTags};
use crate::{FieldValue, Point};
use anyhow::Context as _;
use serde_json::Value;

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
    // `scenario-gen` runs name their scenario instead of a profile.
    if let Some(v) =
        str_of(&manifest["extra"]["scenario"]["name"]).or_else(|| str_of(&manifest["scenario"]))
    {
        p = p.field("scenario", v);
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
            .filter_map(|t| {
                str_of(&t["label"])
                    .or_else(|| str_of(&t["path"]))
                    .or_else(|| str_of(t))
            })
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
