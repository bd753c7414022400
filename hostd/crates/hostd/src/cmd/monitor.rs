//! `hostd monitor`: record the probe alone (idle power, cool-down curves)
//! into a directory — and InfluxDB with `--influx-url` — until Ctrl-C /
//! SIGTERM or `--duration`.

use hostd_correlate::ProbeOptions;
use hostd_influx::schema::RunTags;
use hostd_influx::{LiveSlot, LiveWriter, ProbeStream, Writer, WriterConfig};
use hostd_probe::link::ProbeSource;
use hostd_store::{ProbeData, ProbeFeed};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Arguments of `hostd monitor`.
#[derive(clap::Args)]
pub struct MonitorArgs {
    /// Probe: PORT, auto[:SERIAL] (by USB id), sim (the simulator).
    #[arg(long, default_value = "auto")]
    pub probe: String,
    /// Directory to create for the recording (default: ./monitor/<unix seconds>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Sample rate in Hz (0: the probe's default).
    #[arg(long, default_value_t = 1000)]
    pub rate_hz: u32,
    /// Stop after this many seconds (default: until Ctrl-C or SIGTERM).
    #[arg(long, value_parser = positive_seconds)]
    pub duration: Option<f64>,
    /// Seconds between status lines on stderr (0: none).
    #[arg(long, default_value_t = 5.0, value_parser = seconds_or_zero)]
    pub status_every: f64,
    /// Extra simulator flag for --probe sim (repeat; e.g. --sim-arg=--idle-w --sim-arg=1.5).
    #[arg(long = "sim-arg", allow_hyphen_values = true)]
    pub sim_args: Vec<String>,
    /// Stream to InfluxDB too (probe and probe_agg points, live).
    #[command(flatten)]
    pub influx: hostd_influx::InfluxArgs,
    /// The spool's cap.
    #[command(flatten)]
    pub influx_spool: hostd_influx::SpoolArgs,
}

fn seconds_or_zero(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if (0.0..1e9).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{s} seconds: give a finite number ≥ 0"))
    }
}

fn positive_seconds(s: &str) -> Result<f64, String> {
    match seconds_or_zero(s)? {
        v if v > 0.0 => Ok(v),
        _ => Err(format!("{s} seconds: give a finite number > 0")),
    }
}

/// Runs `hostd monitor`.
pub fn execute(args: MonitorArgs) -> anyhow::Result<ExitCode> {
    let source: ProbeSource = args.probe.parse().map_err(anyhow::Error::msg)?;
    anyhow::ensure!(
        source != ProbeSource::None,
        "hostd monitor needs a probe (--probe PORT|auto|sim)"
    );
    let secs = hostd_probe::link::host_now_ns() / 1_000_000_000;
    let out = args
        .out
        .unwrap_or_else(|| PathBuf::from("monitor").join(format!("{secs}")));
    let influx = args.influx.target()?;
    let spool_limits = args.influx_spool.limits();
    let stop = Arc::new(AtomicBool::new(false));
    crate::stop::on_interrupt(&stop)?;
    let opts = ProbeOptions {
        source,
        sim_args: args.sim_args,
        rate_hz: args.rate_hz,
        ..Default::default()
    };
    eprintln!(
        "hostd monitor: recording {} into {} (Ctrl-C to stop)",
        opts.source,
        out.display()
    );
    let influx_report = Arc::new(Mutex::new(None));
    let report_slot = Arc::clone(&influx_report);
    let summary = hostd_correlate::monitor::run_monitor(
        &opts,
        &out,
        stop,
        args.duration.map(Duration::from_secs_f64),
        (args.status_every > 0.0).then(|| Duration::from_secs_f64(args.status_every)),
        move |dir: &Path, manifest: &hostd_records::Manifest| {
            let mut listeners: Vec<ProbeFeed> = Vec::new();
            if let Some(target) = influx {
                // The points `hostd import` makes of this directory: tags and `run` point
                // from its manifest (as written before the probe starts); the probe tag
                // follows from DeviceInfo.
                let tags = RunTags::from_manifest(manifest);
                let mut config = WriterConfig::new(target, Some(dir.join("spool")));
                config.spool_limits = spool_limits;
                let writer = Writer::start(config)?;
                writer.write(&hostd_influx::schema::run_point(manifest, &tags))?;
                let slot = LiveSlot::default();
                slot.fill(LiveWriter { writer, tags });
                listeners.push(closing_feed(slot, report_slot));
            }
            Ok(listeners)
        },
        |line| eprintln!("{line}"),
    )?;
    let f = |v: Option<f64>, unit: &str| v.map_or("–".to_string(), |v| format!("{v:.3} {unit}"));
    outln!(
        "monitor: {} samples over {:.1} s; energy {}, mean power {} (min {}, peak {}); enclosure {} → {}; alignment ±{}; {} gaps, {} reconnects",
        summary.samples,
        (summary.end_ns - summary.start_ns) as f64 / 1e9,
        f(summary.energy_j, "J"),
        f(summary.mean_power_w, "W"),
        f(summary.min_power_w, "W"),
        f(summary.peak_power_w, "W"),
        f(summary.enclosure_temp_start_c, "°C"),
        f(summary.enclosure_temp_end_c, "°C"),
        f(summary.alignment_uncertainty_ns.map(|u| u / 1e6), "ms"),
        summary.link.stats.sequence.gaps,
        summary.link.reconnects.len()
    );
    let mut complete = true;
    if let Some(report) = influx_report
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
    {
        outln!("{}", report.summary());
        complete = report.is_complete();
    }
    outln!("results: {}", out.display());
    Ok(if complete {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// How long the writer keeps backfilling at the end before leaving the rest in the spool.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(30);

/// The probe stream into `slot`'s writer, closed when the stream ends with its report left
/// in `report`.
fn closing_feed(slot: LiveSlot, report: Arc<Mutex<Option<hostd_influx::Report>>>) -> ProbeFeed {
    let mut stream = ProbeStream::new(slot.clone());
    Box::new(move |data| {
        stream.feed(data)?;
        if matches!(data, ProbeData::End) {
            if let Some(live) = slot.take() {
                *report.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some(live.writer.close(CLOSE_TIMEOUT));
            }
        }
        Ok(())
    })
}
