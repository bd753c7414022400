//! `hostd monitor`: the probe alone, recorded into a directory until
//! stopped — idle power and cool-down curves between runs.

use crate::part::{
    alignment_uncertainty_ns, final_manifest_section, live_line, start_probe, ProbeOptions,
};
use anyhow::Context;
use hostd_probe::link::{host_now_ns, LinkReport};
use hostd_records::manifest::extra;
use hostd_records::Manifest;
use hostd_store::ProbeFeed;
use serde::Serialize;
use serde_json::json;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What a monitor session recorded.
#[derive(Debug, Clone, Serialize)]
pub struct MonitorSummary {
    /// Start, host Unix ns.
    pub start_ns: i64,
    /// End, host Unix ns.
    pub end_ns: i64,
    /// Samples recorded.
    pub samples: u64,
    /// Accumulator energy over the session, J.
    pub energy_j: Option<f64>,
    /// Mean bus power (energy / time between the first and last reading), W.
    pub mean_power_w: Option<f64>,
    /// Lowest and highest 10 ms mean power, W.
    pub min_power_w: Option<f64>,
    /// Highest 10 ms mean power, W.
    pub peak_power_w: Option<f64>,
    /// Enclosure temperature at the start and end, °C.
    pub enclosure_temp_start_c: Option<f64>,
    /// Enclosure temperature at the end, °C.
    pub enclosure_temp_end_c: Option<f64>,
    /// Alignment uncertainty, ns.
    pub alignment_uncertainty_ns: Option<f64>,
    /// The link's counters and reconnects.
    pub link: LinkReport,
}

/// Records the probe into `dir` (created if missing; must be empty) until
/// `stop` is set or `duration` passes. `listeners` makes the extra probe feeds
/// (e.g. InfluxDB) once `dir` and its manifest (handed in) exist. Calls `status` with a one-line status
/// every `status_every` (if set).
pub fn run_monitor(
    opts: &ProbeOptions,
    dir: &Path,
    stop: Arc<AtomicBool>,
    duration: Option<Duration>,
    status_every: Option<Duration>,
    listeners: impl FnOnce(&Path, &Manifest) -> anyhow::Result<Vec<ProbeFeed>>,
    mut status: impl FnMut(&str),
) -> anyhow::Result<MonitorSummary> {
    if dir.exists()
        && std::fs::read_dir(dir)
            .map(|mut d| d.next().is_some())
            .unwrap_or(true)
    {
        anyhow::bail!(
            "{} already exists and is not empty; choose another --out",
            dir.display()
        );
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let start_ns = host_now_ns();
    // The manifest `hostd run` writes (hostd-records), with no targets: the probe alone.
    let run_id = dir
        .file_name()
        .map_or_else(|| "monitor".into(), |n| n.to_string_lossy().into_owned());
    let mut manifest = Manifest::new(&run_id, start_ns as u64, Vec::new());
    manifest.hostd_version = env!("CARGO_PKG_VERSION").into();
    manifest.command_line = std::env::args().collect();
    manifest.host = hostd_store::manifest::collect_host();
    manifest.set_section(extra::MONITOR, &extra::MonitorSection::new());
    let mut probe = extra::ProbeSection {
        source: opts.source.to_string(),
        rest: json!({ "rate_hz": opts.rate_hz, "sim_args": opts.sim_args })
            .as_object()
            .cloned()
            .unwrap_or_default(),
        ..Default::default()
    };
    manifest.set_section(extra::PROBE, &probe);
    hostd_records::manifest::write(dir, &manifest)?;

    let (link, recorder) = start_probe(opts, dir, listeners(dir, &manifest)?)?;
    let started = Instant::now();
    let mut next_status = Instant::now();
    while !stop.load(Ordering::SeqCst) && duration.is_none_or(|d| started.elapsed() < d) {
        if let Some(every) = status_every {
            if Instant::now() >= next_status {
                next_status += every;
                status(&live_line(&link.snapshot(), None));
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let report = link.stop();
    let rec = recorder.finish()?;
    let end_ns = host_now_ns();
    let energy = rec
        .correlator
        .energy_span()
        .map(|((a, ea), (b, eb))| (eb - ea, (b - a) as f64 / 1e9));
    let totals = rec.correlator.totals();
    let summary = MonitorSummary {
        start_ns,
        end_ns,
        samples: rec.samples,
        energy_j: energy.map(|e| e.0),
        mean_power_w: energy.filter(|e| e.1 > 0.0).map(|e| e.0 / e.1),
        min_power_w: totals.min_power_w,
        peak_power_w: totals.peak_power_w,
        enclosure_temp_start_c: totals.temp_first_c,
        enclosure_temp_end_c: totals.temp_last_c,
        alignment_uncertainty_ns: alignment_uncertainty_ns(&report),
        link: report,
    };
    // The probe tag `hostd import` gives this session's points, as the live stream did.
    probe.probe_id = summary.link.identity.as_ref().map(|i| i.probe_id.clone());
    probe
        .rest
        .insert("final".into(), final_manifest_section(&summary.link));
    manifest.set_section(extra::PROBE, &probe);
    manifest.set_section(
        extra::MONITOR,
        &extra::MonitorSection {
            end_ns: Some(end_ns as u64),
            ..extra::MonitorSection::new()
        },
    );
    hostd_records::manifest::write(dir, &manifest)?;
    write_json(&dir.join("summary.json"), &summary)?;
    Ok(summary)
}

fn write_json(path: &Path, value: &impl Serialize) -> anyhow::Result<()> {
    Ok(hostd_records::write_atomic(
        path,
        &serde_json::to_vec_pretty(value)?,
    )?)
}
