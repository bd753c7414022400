//! Writing a simulated run as a run directory: files.csv, counters.csv, probe.csv,
//! truth.json and a minimal manifest.json naming the probed target.

use crate::device;
use crate::model::Scenario;
use crate::sim::Trace;
use anyhow::Context;
use std::io::{BufWriter, Write};
use std::path::Path;

/// Host Unix ns the simulated run starts at (2026-09-21 UTC; fixed for repeatability).
pub const BASE_UNIX_NS: i64 = 1_790_000_000_000_000_000;

/// How to write the probe samples.
#[derive(Debug, Clone, Copy)]
pub struct ProbeOptions {
    /// Samples per second.
    pub rate_hz: f64,
    /// Seconds of idle samples before the first file.
    pub lead_s: f64,
    /// Seconds of samples after the last file.
    pub tail_s: f64,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        ProbeOptions {
            rate_hz: 100.0,
            lead_s: 2.0,
            tail_s: 5.0,
        }
    }
}

fn create(path: &Path) -> anyhow::Result<BufWriter<std::fs::File>> {
    Ok(BufWriter::with_capacity(
        1 << 20,
        std::fs::File::create(path)
            .with_context(|| format!("could not create {}", path.display()))?,
    ))
}

/// Writes files.csv, counters.csv (and, with `probe`, probe.csv), truth.json and
/// manifest.json into `dir`.
pub fn write_run(
    dir: &Path,
    sc: &Scenario,
    trace: &Trace,
    probe: Option<ProbeOptions>,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("could not create {}", dir.display()))?;
    // Headers come from their owners (store: files.csv, probe link: probe.csv), so a column
    // change there cannot leave the generator behind; cells are filled by column name.
    let mut f = create(&dir.join("files.csv"))?;
    writeln!(f, "{}", hostd_store::rundir::FILES_HEADER)?;
    let file_columns: Vec<&str> = hostd_store::rundir::FILES_HEADER.split(',').collect();
    for r in &trace.files {
        let mbps = r.bytes as f64 / 1e6 / ((r.end_ns - r.start_ns) as f64 * 1e-9);
        let cells: Vec<String> = file_columns
            .iter()
            .map(|c| match *c {
                "target" => r.target.clone(),
                "phase" => r.phase.clone(),
                "index" => r.index.to_string(),
                "start_ns" => (BASE_UNIX_NS + r.start_ns).to_string(),
                "end_ns" => (BASE_UNIX_NS + r.end_ns).to_string(),
                "bytes" => r.bytes.to_string(),
                "mbps" => format!("{mbps:.3}"),
                "corrupt_blocks" | "corrupt_bytes" | "late_ops" => "0".into(),
                "direct_io" => "true".into(),
                "status" => "ok".into(),
                _ => String::new(),
            })
            .collect();
        writeln!(f, "{}", cells.join(","))?;
    }
    f.flush()?;
    // The 100 ms byte counters, through the writer `hostd run` uses.
    let (labels, samples): (Vec<String>, Vec<Vec<(u64, u64)>>) = trace
        .counters
        .iter()
        .map(|(target, s)| {
            let unix = s.iter().map(|&(t, b)| ((BASE_UNIX_NS + t) as u64, b));
            (target.clone(), unix.collect())
        })
        .unzip();
    hostd_store::rundir::write_counters(dir, &labels, &samples)?;
    if let Some(p) = probe {
        let mut w = create(&dir.join("probe.csv"))?;
        writeln!(w, "{}", hostd_probe::sample::PROBE_CSV_HEADER)?;
        let probe_columns: Vec<&str> = hostd_probe::sample::PROBE_CSV_HEADER.split(',').collect();
        let mut seq = 0u64;
        let mut charge = 0.0;
        let dt = 1.0 / p.rate_hz;
        let mut err = None;
        device::samples(
            &sc.device,
            trace,
            p.rate_hz,
            p.lead_s,
            p.tail_s,
            sc.seed,
            |s| {
                charge += s.current_a * dt;
                if err.is_none() {
                    let cells: Vec<String> = probe_columns
                        .iter()
                        .map(|c| match *c {
                            "time_ns" => (BASE_UNIX_NS + s.t_ns).to_string(),
                            "seq" => seq.to_string(),
                            "vbus_v" => format!("{:.5}", s.vbus_v),
                            "current_a" => format!("{:.5}", s.current_a),
                            "power_w" => format!("{:.4}", s.power_w),
                            "energy_j" => format!("{:.4}", s.energy_j),
                            "charge_c" => format!("{charge:.4}"),
                            "die_temp_c" => format!("{:.3}", s.die_temp_c),
                            "enclosure_temp_c" => format!("{:.3}", s.enclosure_temp_c),
                            _ => String::new(),
                        })
                        .collect();
                    if let Err(e) = writeln!(w, "{}", cells.join(",")) {
                        err = Some(e);
                    }
                }
                seq += 1;
            },
        );
        if let Some(e) = err {
            return Err(e).context("could not write probe.csv");
        }
        w.flush()?;
    }
    let truth: Vec<serde_json::Value> = trace
        .truth
        .iter()
        .map(|e| {
            serde_json::json!({
                "target": e.target, "phase": e.phase, "kind": e.kind, "cause": e.cause,
                "onset_bytes": e.onset_bytes, "onset_ns": BASE_UNIX_NS + e.onset_ns,
                "onset_gb": e.onset_bytes as f64 / 1e9, "total_bytes": e.total_bytes,
                "settle_bytes": e.settle_bytes, "count": e.count,
            })
        })
        .collect();
    std::fs::write(
        dir.join("truth.json"),
        serde_json::to_string_pretty(&serde_json::json!({ "scenario": sc.name, "events": truth }))?
            + "\n",
    )?;
    std::fs::write(
        dir.join("manifest.json"),
        serde_json::to_string_pretty(&serde_json::json!({
            "scenario": sc.name, "probe_target": sc.probe_target, "simulated": true,
            "targets": sc.targets.iter().map(|t| format!("sim:{}:{}", t.name, t.phase)).collect::<Vec<_>>(),
        }))? + "\n",
    )?;
    Ok(())
}
