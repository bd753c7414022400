//! `hostd monitor`: record the probe alone (idle power, cool-down curves)
//! into a directory — and InfluxDB with `--influx-url` — until Ctrl-C /
//! SIGTERM or `--duration`.

use anyhow::Context;
use hostd_correlate::{ProbeOptions, SampleListener};
use hostd_influx::schema::{m as measurement, RunTags};
use hostd_influx::{Point, Writer, WriterConfig};
use hostd_probe::agg::AggRow;
use hostd_probe::link::{LinkEvent, ProbeSource};
use hostd_probe::stream::StreamEvent;
use hostd_probe::ProbeSample;
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
        move |dir: &Path| {
            let mut listeners: Vec<Box<dyn SampleListener>> = Vec::new();
            if let Some(target) = influx {
                listeners.push(Box::new(InfluxListener::start(
                    target,
                    dir,
                    secs,
                    report_slot,
                )?));
            }
            Ok(listeners)
        },
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
    let mut complete = true;
    if let Some((line, ok)) = influx_report
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
    {
        println!("{line}");
        complete = ok;
    }
    println!("results: {}", out.display());
    Ok(if complete {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Streams the monitor's samples and 10 ms bins to InfluxDB (spooling to
/// `DIR/spool/` while the server is away), tagged rig / run
/// (`monitor-<unix seconds>`) / probe.
struct InfluxListener {
    writer: Option<Writer>,
    tags: RunTags,
    report: Arc<Mutex<Option<(String, bool)>>>,
}

impl InfluxListener {
    fn start(
        target: hostd_influx::Target,
        dir: &Path,
        secs: i64,
        report: Arc<Mutex<Option<(String, bool)>>>,
    ) -> anyhow::Result<Self> {
        let writer = Writer::start(WriterConfig::new(target, Some(dir.join("spool"))))?;
        let rig = hostname::get()
            .map(|h| h.to_string_lossy().into_owned())
            .unwrap_or_else(|_| "unknown".into());
        Ok(Self {
            writer: Some(writer),
            tags: RunTags {
                rig,
                run: format!("monitor-{secs}"),
                probe: None,
            },
            report,
        })
    }
}

fn opt_field(p: Point, name: &str, v: Option<f64>) -> Point {
    match v {
        Some(v) if v.is_finite() => p.field(name, v),
        _ => p,
    }
}

impl SampleListener for InfluxListener {
    fn samples(&mut self, samples: &[ProbeSample]) -> anyhow::Result<()> {
        let Some(w) = &self.writer else { return Ok(()) };
        for s in samples {
            let mut p = self
                .tags
                .apply_probe(Point::new(measurement::PROBE))
                .field("seq", s.seq as i64);
            for (name, v) in [
                ("vbus_v", s.vbus_v),
                ("current_a", s.current_a),
                ("power_w", s.power_w),
                ("energy_j", s.energy_j),
                ("charge_c", s.charge_c),
                ("die_temp_c", s.die_temp_c),
                ("enclosure_temp_c", s.enclosure_temp_c),
            ] {
                p = opt_field(p, name, v);
            }
            w.write(&p.timestamp_ns(s.time_ns))?;
        }
        Ok(())
    }

    fn agg(&mut self, r: &AggRow) -> anyhow::Result<()> {
        let Some(w) = &self.writer else { return Ok(()) };
        let mut p = self
            .tags
            .apply_probe(Point::new(measurement::PROBE_AGG))
            .field("samples", r.samples as i64);
        for (name, st) in [
            ("vbus_v", r.vbus_v),
            ("current_a", r.current_a),
            ("power_w", r.power_w),
            ("die_temp_c", r.die_temp_c),
            ("enclosure_temp_c", r.enclosure_temp_c),
        ] {
            p = opt_field(p, &format!("{name}_min"), Some(st.min));
            p = opt_field(p, &format!("{name}_mean"), Some(st.mean));
            p = opt_field(p, &format!("{name}_max"), Some(st.max));
        }
        p = opt_field(p, "energy_j", Some(r.energy_j));
        w.write(&p.timestamp_ns(r.time_ns))?;
        Ok(())
    }

    fn event(&mut self, event: &LinkEvent) -> anyhow::Result<()> {
        if let LinkEvent::Stream(StreamEvent::Info(info)) = event {
            if !info.probe_id.is_empty() {
                self.tags.probe = Some(info.probe_id.clone());
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> anyhow::Result<()> {
        if let Some(w) = self.writer.take() {
            let report = w.close(hostd_influx::sink::FINISH_TIMEOUT);
            *self.report.lock().unwrap_or_else(|e| e.into_inner()) =
                Some((report.summary(), report.is_complete()));
        }
        Ok(())
    }
}
