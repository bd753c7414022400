//! The results of adaptive workloads (cache recovery, paced sweep, duration)
//! in the summary: section `programs` of `summary.json`, its lines printed at
//! the end. A paced sweep's steps get the probe's power and temperature from
//! the probe columns of `files.csv`, where a probe was on that target.

use hostd_store::Summary;
use hostd_workload::program::ProgramReport;
use serde_json::{json, Value};
use std::path::Path;

/// Adds the programs' section to the summary (nothing when there were none).
pub fn add(summary: &mut Summary, reports: &[ProgramReport], run_dir: &Path) {
    if reports.is_empty() {
        return;
    }
    let mut reports = reports.to_vec();
    for r in reports.iter_mut().filter(|r| r.kind == "paced-sweep") {
        add_probe_figures(r, &run_dir.join("files.csv"));
    }
    let text: Vec<String> = reports.iter().flat_map(|r| r.text.clone()).collect();
    summary.extra.insert(
        "programs".into(),
        json!({ "text": text, "results": reports }),
    );
}

/// Mean power (weighted by file time) and the highest enclosure temperature
/// of each sweep step's files.
fn add_probe_figures(report: &mut ProgramReport, files_csv: &Path) {
    let Ok(mut rdr) = csv::Reader::from_path(files_csv) else {
        return;
    };
    let Ok(h) = rdr.headers().cloned() else {
        return;
    };
    let col = |n: &str| h.iter().position(|c| c == n);
    let (Some(t), Some(p), Some(s), Some(e), Some(pw), Some(tm)) = (
        col("target"),
        col("phase"),
        col("start_ns"),
        col("end_ns"),
        col("mean_power_w"),
        col("temp_max_c"),
    ) else {
        report
            .text
            .push("  power and temperature per step: no probe on this run".into());
        return;
    };
    let rows: Vec<csv::StringRecord> = rdr.records().filter_map(Result::ok).collect();
    let mut lines = Vec::new();
    if let Some(steps) = report.result["steps"].as_array_mut() {
        for step in steps.iter_mut() {
            let phase = step["phase"].as_str().unwrap_or_default().to_string();
            let (mut energy, mut secs, mut tmax) = (0.0, 0.0, f64::NEG_INFINITY);
            for r in rows
                .iter()
                .filter(|r| r[t] == report.target && r[p] == phase)
            {
                let dt =
                    (r[e].parse::<f64>().unwrap_or(0.0) - r[s].parse::<f64>().unwrap_or(0.0)) / 1e9;
                if let Ok(w) = r[pw].parse::<f64>() {
                    energy += w * dt;
                    secs += dt;
                }
                if let Ok(c) = r[tm].parse::<f64>() {
                    tmax = tmax.max(c);
                }
            }
            if secs > 0.0 {
                step["mean_power_w"] = json!(energy / secs);
            }
            if tmax.is_finite() {
                step["temp_max_c"] = json!(tmax);
            }
            lines.push(match (step.get("mean_power_w"), step.get("temp_max_c")) {
                (Some(Value::Number(w)), Some(Value::Number(c))) => format!(
                    "  {phase:<12} mean power {:.2} W, enclosure up to {:.1} °C",
                    w.as_f64().unwrap_or(0.0),
                    c.as_f64().unwrap_or(0.0)
                ),
                _ => format!("  {phase:<12} no probe figures"),
            });
        }
    }
    report.text.extend(lines);
}
