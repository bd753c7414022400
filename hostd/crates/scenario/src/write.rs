//! Writing a simulated run as a run directory: files.csv, probe.csv, truth.json and a
//! minimal manifest.json naming the probed target.

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

/// Writes files.csv (and, with `probe`, probe.csv), truth.json and manifest.json into `dir`.
pub fn write_run(
    dir: &Path,
    sc: &Scenario,
    trace: &Trace,
    probe: Option<ProbeOptions>,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("could not create {}", dir.display()))?;
    let mut f = create(&dir.join("files.csv"))?;
    writeln!(f, "target,phase,index,start_ns,end_ns,bytes,mbps,verified")?;
    for r in &trace.files {
        let mbps = r.bytes as f64 / 1e6 / ((r.end_ns - r.start_ns) as f64 * 1e-9);
        writeln!(
            f,
            "{},{},{},{},{},{},{:.3},",
            r.target,
            r.phase,
            r.index,
            BASE_UNIX_NS + r.start_ns,
            BASE_UNIX_NS + r.end_ns,
            r.bytes,
            mbps
        )?;
    }
    f.flush()?;
    if let Some(p) = probe {
        let mut w = create(&dir.join("probe.csv"))?;
        writeln!(
            w,
            "time_ns,seq,vbus_v,current_a,power_w,energy_j,charge_c,die_temp_c,enclosure_temp_c"
        )?;
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
                    if let Err(e) = writeln!(
                        w,
                        "{},{},{:.5},{:.5},{:.4},{:.4},{:.4},{:.3},{:.3}",
                        BASE_UNIX_NS + s.t_ns,
                        seq,
                        s.vbus_v,
                        s.current_a,
                        s.power_w,
                        s.energy_j,
                        charge,
                        s.die_temp_c,
                        s.enclosure_temp_c
                    ) {
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
