//! `hostd monitor`: record the probe alone (idle power, cool-down curves)
//! into a directory until Ctrl-C / SIGTERM or `--duration`.

use anyhow::Context;
use hostd_correlate::ProbeOptions;
use hostd_probe::link::ProbeSource;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Arguments of `hostd monitor`.
#[derive(clap::Args, Debug)]
pub struct MonitorArgs {
    /// Probe: PORT, auto[:SERIAL] (by USB id), sim (the simulator).
    #[arg(long, default_value = "auto")]
    pub probe: String,
    /// Directory to create for the recording (default: ./monitor/<UTC time>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Sample rate in Hz (0: the probe's default).
    #[arg(long, default_value_t = 1000)]
    pub rate_hz: u32,
    /// Stop after this many seconds (default: until Ctrl-C or SIGTERM).
    #[arg(long)]
    pub duration: Option<f64>,
    /// Seconds between status lines on stderr (0: none).
    #[arg(long, default_value_t = 5.0)]
    pub status_every: f64,
    /// Extra simulator flag for --probe sim (repeat; e.g. --sim-arg=--idle-w --sim-arg=1.5).
    #[arg(long = "sim-arg", allow_hyphen_values = true)]
    pub sim_args: Vec<String>,
}

/// Runs `hostd monitor`.
pub fn execute(args: MonitorArgs) -> anyhow::Result<ExitCode> {
    let source: ProbeSource = args.probe.parse().map_err(anyhow::Error::msg)?;
    anyhow::ensure!(
        source != ProbeSource::None,
        "hostd monitor needs a probe (--probe PORT|auto|sim)"
    );
    let out = args.out.unwrap_or_else(|| {
        let secs = hostd_probe::link::host_now_ns() / 1_000_000_000;
        PathBuf::from("monitor").join(format!("{secs}"))
    });
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(sig, 130, stop.clone())
            .context("cannot install signal handler")?;
        signal_hook::flag::register(sig, stop.clone()).context("cannot install signal handler")?;
    }
    let opts = ProbeOptions {
        source,
        sim_args: args.sim_args,
        rate_hz: args.rate_hz,
        smart: false,
    };
    eprintln!(
        "hostd monitor: recording {} into {} (Ctrl-C to stop)",
        opts.source,
        out.display()
    );
    let summary = hostd_correlate::monitor::run_monitor(
        &opts,
        &out,
        stop,
        args.duration.map(Duration::from_secs_f64),
        (args.status_every > 0.0).then(|| Duration::from_secs_f64(args.status_every)),
        Vec::new(),
        |line| eprintln!("{line}"),
    )?;
    let f = |v: Option<f64>, unit: &str| v.map_or("–".to_string(), |v| format!("{v:.3} {unit}"));
    println!(
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
    println!("results: {}", out.display());
    Ok(ExitCode::SUCCESS)
}
