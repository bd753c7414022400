//! Writing a simulated run as a run directory: files.csv, counters.csv, probe.csv and
//! manifest.json through the writers `hostd run` uses (hostd-records), plus truth.json.

use crate::device;
use crate::model::Scenario;
use crate::sim::Trace;
use anyhow::Context;
use hostd_records::counters::CounterRecord;
use hostd_records::{self as records, Manifest, ProbeSample, TargetInfo};
use std::path::Path;

pub use crate::sim::BASE_UNIX_NS;

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

/// Writes files.csv, counters.csv (and, with `probe`, probe.csv), truth.json and
/// manifest.json into `dir`.
pub fn write_run(
    dir: &Path,
    sc: &Scenario,
    trace: &Trace,
    probe: Option<ProbeOptions>,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("could not create {}", dir.display()))?;
    let mut files = records::files::Writer::create(dir)?;
    for r in &trace.files {
        files.write(r)?;
    }
    drop(files);
    let (labels, samples): (Vec<String>, Vec<Vec<CounterRecord>>) = trace
        .counters
        .iter()
        .map(|(target, s)| {
            let unix = s.iter().map(|&(t, bytes)| CounterRecord {
                time_ns: (BASE_UNIX_NS + t) as u64,
                bytes,
            });
            (target.clone(), unix.collect())
        })
        .unzip();
    records::counters::write(dir, &labels, &samples)?;
    if let Some(p) = probe {
        let mut w = records::probe::Writer::create(dir)?;
        let mut batch = Vec::with_capacity(4096);
        let mut seq = 0u64;
        let mut charge = 0.0;
        let dt = 1.0 / p.rate_hz;
        let mut err = None;
        // Rounded as a real probe's resolution would be, which also keeps the file small.
        let round = |x: f64, decimals: i32| {
            let k = 10f64.powi(decimals);
            Some((x * k).round() / k)
        };
        device::samples(
            &sc.device,
            trace,
            p.rate_hz,
            p.lead_s,
            p.tail_s,
            sc.seed,
            |s| {
                charge += s.current_a * dt;
                batch.push(ProbeSample {
                    time_ns: BASE_UNIX_NS + s.t_ns,
                    seq,
                    probe_time_us: 0,
                    vbus_v: round(s.vbus_v, 5),
                    current_a: round(s.current_a, 5),
                    power_w: round(s.power_w, 4),
                    energy_j: round(s.energy_j, 4),
                    charge_c: round(charge, 4),
                    die_temp_c: round(s.die_temp_c, 3),
                    enclosure_temp_c: round(s.enclosure_temp_c, 3),
                });
                if batch.len() == batch.capacity() && err.is_none() {
                    err = w.write(&batch).err();
                    batch.clear();
                }
                seq += 1;
            },
        );
        if let Some(e) = err {
            return Err(e.into());
        }
        w.write(&batch)?;
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
    // The run starts with its first record: the probe's lead, if any.
    let lead_ns = probe.map_or(0, |p| (p.lead_s * 1e9) as i64);
    let start_ns = (BASE_UNIX_NS - lead_ns) as u64;
    records::manifest::write(dir, &manifest(sc, trace, start_ns))?;
    Ok(())
}

/// The manifest of a simulated run: the shape `hostd run` writes, with `sim` targets and
/// the scenario's name under `extra.scenario`.
fn manifest(sc: &Scenario, trace: &Trace, start_ns: u64) -> Manifest {
    let targets = sc
        .targets
        .iter()
        .map(|t| TargetInfo::simulated(&t.name, &t.phase, &format!("sim:{}:{}", t.name, t.phase)))
        .collect();
    let mut m = Manifest::new(&format!("scenario-{}", sc.name), start_ns, targets);
    m.hostd_version = env!("CARGO_PKG_VERSION").into();
    m.command_line = vec!["scenario-gen".into(), sc.name.clone()];
    m.seed = sc.seed;
    m.probe_target = Some(sc.probe_target.clone());
    m.set_section(
        records::manifest::extra::SCENARIO,
        &records::manifest::extra::ScenarioSection {
            name: sc.name.clone(),
            simulated: true,
            end_ns: Some(BASE_UNIX_NS + trace.end_ns),
        },
    );
    m
}
