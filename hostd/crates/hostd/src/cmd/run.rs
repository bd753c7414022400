//! `hostd run`: plan a workload, run it on every target at once, record it in
//! a run directory, print the summary. Optional components (probe link,
//! InfluxDB sink, analysis) attach in [`components`]; extra target kinds
//! (e.g. `sim:SCENARIO`) register in [`backends`].

mod closing;
mod live;

use super::probe_influx::InfluxProbe;
use anyhow::{bail, Context};
use hostd_store::manifest::{collect_host, FORMAT_VERSION};
use hostd_store::{Manifest, RunComponent, RunDirSink, SinkSet, Summary, SummaryExt};
use hostd_workload::backend::{BackendOptions, BackendRegistry, TargetBackend};
use hostd_workload::block::DataPool;
use hostd_workload::engine::EngineChoice;
use hostd_workload::events::{RunEvent, RunObserver};
use hostd_workload::fault::FaultPlan;
use hostd_workload::runner::{self, RunConfig, RunStatus};
use hostd_workload::{Plan, Profile, TargetSpec};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Arguments of `hostd run`.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Built-in profile name (see `hostd profiles`) or a TOML file.
    #[arg(long, short = 'p')]
    pub profile: String,
    /// Target directory, optionally with a mode: DIR[:write|:read|:rw]. Repeat for concurrent targets.
    #[arg(long = "target", short = 't', required = true)]
    pub targets: Vec<String>,
    /// Seed of file sizes, offsets and data (default: random, printed and recorded).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Run directory to create (default: ./runs/<run-id>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Keep the test files after the run.
    #[arg(long)]
    pub keep: bool,
    /// Print the plan and the free-space check; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Run even where direct I/O is refused or ineffective (tmpfs); recorded in the manifest.
    #[arg(long)]
    pub allow_cached: bool,
    /// I/O engine: auto (io_uring, else threads), io_uring, threads.
    #[arg(long, default_value = "auto")]
    pub engine: EngineChoice,
    /// The target is a raw block device (fill profiles only; needs --destroy-data).
    #[arg(long)]
    pub raw_device: bool,
    /// Allow overwriting a raw block device.
    #[arg(long)]
    pub destroy_data: bool,
    /// Probe to record alongside: PORT, auto[:SERIAL] (by USB id), sim (the simulator), none.
    #[arg(long, default_value = "none")]
    pub probe: String,
    /// Which --target the probe is inline with (1 = the first); its power and
    /// temperature are evidence for that target's slowdowns only.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
    pub probe_on: u16,
    /// Probe sample rate in Hz (default 1000). One INA228 conversion per sample:
    /// the probe picks conversion time × averaging to match and records the
    /// rate it achieved; a rate above its I²C ceiling is refused.
    #[arg(long, value_name = "HZ", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub probe_rate: Option<u32>,
    /// Probe channels read on every sample: a comma list of vbus, vshunt,
    /// current, power, or all (default vbus,vshunt; the host computes current
    /// and power). Fewer channels allow a higher rate.
    #[arg(long, value_name = "LIST", value_parser = parse_probe_channels)]
    pub probe_channels: Option<u32>,
    /// No live view.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Also write the run to InfluxDB (live, spooled to RUN_DIR/spool/ while it is away).
    #[command(flatten)]
    pub influx: hostd_influx::InfluxArgs,
}

/// `--probe-channels`: channel names to the probe's Channel bits.
fn parse_probe_channels(list: &str) -> Result<u32, String> {
    hostd_probe::packed::parse_channels(list)
}

/// The target kinds of this build. Other crates register extra schemes here
/// (e.g. `registry.register("sim", hostd_analysis::sim::factory())`).
pub fn backends() -> BackendRegistry {
    let mut registry = BackendRegistry::with_builtins();
    hostd_scenario::backend::register(&mut registry);
    registry
}

/// Optional components of a run, chosen from the arguments. Each component
/// owner adds one line here (probe link, InfluxDB sink, analysis).
pub fn components(args: &RunArgs) -> anyhow::Result<Vec<Box<dyn RunComponent>>> {
    let mut list: Vec<Box<dyn RunComponent>> = Vec::new();
    let mut influx = args
        .influx
        .target()?
        .map(|target| hostd_influx::InfluxComponent::new(target, None));
    let probe: hostd_probe::link::ProbeSource = args.probe.parse().map_err(anyhow::Error::msg)?;
    if probe != hostd_probe::link::ProbeSource::None {
        let defaults = hostd_correlate::ProbeOptions::default();
        let opts = hostd_correlate::ProbeOptions {
            source: probe,
            sim_args: hostd_scenario::backend::probe_sim_args(&args.targets)?.unwrap_or_default(),
            target_index: usize::from(args.probe_on) - 1,
            rate_hz: args.probe_rate.unwrap_or(defaults.rate_hz),
            channels: args.probe_channels.unwrap_or(defaults.channels),
            ..defaults
        };
        if opts.target_index >= args.targets.len() {
            anyhow::bail!(
                "--probe-on {} but only {} --target given",
                args.probe_on,
                args.targets.len()
            );
        }
        opts.check()?;
        let mut probe = hostd_correlate::ProbeComponent::new(opts);
        if let Some(influx) = &mut influx {
            // Samples and 10 ms bins into the run's writer as they arrive.
            probe = probe.with_listener(Box::new(InfluxProbe::new(influx.probe_stream())));
        }
        list.push(Box::new(probe));
    } else if args.probe_rate.is_some() || args.probe_channels.is_some() {
        anyhow::bail!("--probe-rate and --probe-channels need a probe (--probe sim, auto or PORT)");
    }
    // Last: reads the files.csv and probe.csv the others finish.
    list.push(Box::new(hostd_report::AnalysisComponent));
    // After analysis: probe samples stream live through it; at the end it pushes what
    // probe and analysis wrote (data-model.md).
    if let Some(influx) = influx {
        list.push(Box::new(influx));
    }
    Ok(list)
}

/// Runs `hostd run`.
pub fn execute(args: RunArgs) -> anyhow::Result<ExitCode> {
    let profile = Profile::load(&args.profile)?;
    let registry = backends();
    let schemes = registry.schemes();
    let specs: Vec<TargetSpec> = args
        .targets
        .iter()
        .map(|t| TargetSpec::parse(t, &schemes).map_err(anyhow::Error::msg))
        .collect::<anyhow::Result<_>>()?;
    if args.raw_device && profile.kind != hostd_workload::profile::Kind::Fill {
        bail!(
            "--raw-device works only with fill profiles (e.g. fill-90); profile {} is {:?}",
            profile.name,
            profile.kind
        );
    }
    let seed = args.seed.unwrap_or_else(random_seed);
    let run_id = run_id();
    let fault = FaultPlan::from_env();
    let opts = BackendOptions {
        run_id: run_id.clone(),
        seed,
        engine: args.engine,
        allow_cached: args.allow_cached,
        raw_device: args.raw_device,
        destroy_data: args.destroy_data,
        fault: fault.clone(),
        pool: DataPool::new(seed),
    };
    let mut backends: Vec<Box<dyn TargetBackend>> = specs
        .iter()
        .enumerate()
        .map(|(i, s)| registry.open(s, i, &opts))
        .collect::<anyhow::Result<_>>()?;
    let capacity: Vec<_> = backends
        .iter()
        .map(|b| {
            b.capacity().unwrap_or(hostd_workload::plan::Capacity {
                total: 0,
                available: 0,
            })
        })
        .collect();
    let plan = Plan::build(&profile, &specs, seed, &capacity);
    let space = runner::check_space(&plan, &backends);

    if args.dry_run {
        print!("{}", plan.render());
        match &space {
            Ok(lines) => lines.iter().for_each(|l| println!("{l}")),
            Err(e) => println!("{e}"),
        }
        match hostd_workload::engine::probe_io_uring() {
            Ok(()) => println!("engine: io_uring available"),
            Err(e) => println!("engine: io_uring unavailable ({e}); threads would run"),
        }
        println!("dry run: nothing written");
        return Ok(if space.is_ok() {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        });
    }
    space.map_err(anyhow::Error::msg)?;
    // Built before anything is written: a probe that cannot be reached is refused here.
    let mut comps = components(&args)?;

    let out_dir = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("runs").join(&run_id));
    let run_dir = RunDirSink::create(&out_dir)?;
    // From here warnings and errors go to RUN_DIR/hostd.log too.
    if let Err(e) = crate::logging::log_to_dir(&out_dir) {
        run_dir.discard();
        return Err(e);
    }
    if let Err(e) = runner::prepare_all(&plan, &mut backends) {
        discard(run_dir, &out_dir);
        return Err(e);
    }

    let mut manifest = Manifest {
        format_version: FORMAT_VERSION,
        formats: hostd_records::version::current(),
        run_id: run_id.clone(),
        hostd_version: env!("CARGO_PKG_VERSION").to_string(),
        command_line: std::env::args().collect(),
        start_ns: hostd_workload::unix_ns(),
        host: collect_host(),
        targets: backends.iter().map(|b| b.info()).collect(),
        profile: serde_json::to_value(&profile)?,
        seed,
        keep: args.keep,
        allow_cached: args.allow_cached,
        probe_target: None,
        extra: serde_json::Map::new(),
    };
    if !fault.is_empty() {
        manifest.extra.insert(
            "injected_fault".into(),
            serde_json::json!({ "enospc_after_bytes": fault.enospc_after_bytes }),
        );
    }
    for t in &manifest.targets {
        if !t.direct_io.is_direct() {
            tracing::warn!(
                "target {}: direct I/O NOT in force ({:?}); the numbers measure the page cache",
                t.label,
                t.direct_io
            );
        }
    }
    if let Err(e) = start_components(&mut comps, &mut manifest, &out_dir) {
        // Nothing was measured: take back the test directories and the run
        // directory this run created, as a refused run leaves no trace.
        for b in backends.iter_mut() {
            let _ = b.cleanup(false);
        }
        discard(run_dir, &out_dir);
        return Err(e);
    }

    let sinks = SinkSet::new();
    sinks.add(Box::new(run_dir));
    sinks.begin(&manifest);

    let stop = Arc::new(AtomicBool::new(false));
    install_signal_handlers(&stop)?;
    let progress = runner::progress_for(&plan);
    let header = format!(
        "run {run_id}: profile {} seed {seed}, {} target(s), results in {}",
        profile.name,
        specs.len(),
        out_dir.display()
    );
    let view = live::LiveView::start(&plan, &progress, args.quiet, &header);

    let observers = ComponentObservers {
        sinks: &sinks,
        components: &comps,
        view: &view,
    };
    let cfg = RunConfig {
        run_id: run_id.clone(),
        keep: args.keep,
        stop,
        interval: Duration::from_secs(1),
    };
    let outcome = runner::execute(&plan, backends, &progress, &cfg, &observers);
    view.finish();

    manifest.targets = outcome.targets.clone();
    let mut summary = Summary::compute(&run_id, &outcome);
    // The 100 ms byte counters, before the analysis component reads the directory.
    let labels: Vec<String> = outcome.targets.iter().map(|t| t.label.clone()).collect();
    if let Err(e) = hostd_store::rundir::write_counters(&out_dir, &labels, &outcome.samples) {
        summary.warnings.push(format!("counters.csv: {e:#}"));
    }
    for c in comps.iter_mut() {
        if let Err(e) = c.finish(&outcome, &mut summary, &out_dir) {
            summary.warnings.push(format!("{}: {e:#}", c.name()));
        }
    }
    // Final figures a component keeps under `manifest` in its summary section
    // (the probe's alignment uncertainty and link counters) go into the manifest too.
    for (name, section) in &summary.extra {
        if let (Some(last), Some(serde_json::Value::Object(m))) =
            (section.get("manifest"), manifest.extra.get_mut(name))
        {
            m.insert("final".into(), last.clone());
        }
    }
    let failures = sinks.finish(&manifest, &summary);
    print!(
        "{}",
        closing::closing(
            &profile,
            &manifest.targets,
            &summary,
            &outcome.cleanup,
            &out_dir
        )
    );
    for f in failures {
        tracing::warn!("{f}");
    }
    crate::logging::stop_log_file();
    Ok(match outcome.status {
        RunStatus::Completed => ExitCode::SUCCESS,
        RunStatus::Interrupted => {
            eprintln!(
                "hostd: interrupted; results so far are in {}",
                out_dir.display()
            );
            ExitCode::from(130)
        }
        RunStatus::Failed(reason) => {
            eprintln!(
                "hostd: run stopped: {reason}; results so far are in {}",
                out_dir.display()
            );
            ExitCode::from(1)
        }
    })
}

/// Takes back a run directory nothing was measured into, with its log file.
fn discard(run_dir: RunDirSink, out_dir: &std::path::Path) {
    crate::logging::stop_log_file();
    let _ = std::fs::remove_file(out_dir.join(crate::logging::LOG_FILE));
    run_dir.discard();
}

/// Starts every component, adding each one's manifest section.
fn start_components(
    comps: &mut [Box<dyn RunComponent>],
    manifest: &mut Manifest,
    out_dir: &std::path::Path,
) -> anyhow::Result<()> {
    for c in comps.iter_mut() {
        if let Some(section) = c
            .start(manifest, out_dir)
            .with_context(|| format!("cannot start {}", c.name()))?
        {
            manifest.extra.insert(c.name().to_string(), section);
        }
    }
    Ok(())
}

/// Sinks, components and the live view as one observer.
struct ComponentObservers<'a> {
    sinks: &'a SinkSet,
    components: &'a [Box<dyn RunComponent>],
    view: &'a live::LiveView,
}

impl RunObserver for ComponentObservers<'_> {
    fn on_event(&self, ev: &RunEvent) {
        self.sinks.on_event(ev);
        for c in self.components {
            c.on_event(ev);
        }
        self.view.on_event(ev);
        // Once a second per target is often enough to refresh the status line.
        if matches!(ev, RunEvent::Interval(_)) {
            let lines: Vec<String> = self
                .components
                .iter()
                .filter_map(|c| c.live_status())
                .collect();
            self.view.set_status(&lines);
        }
    }
}

fn install_signal_handlers(stop: &Arc<AtomicBool>) -> anyhow::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    for sig in [SIGINT, SIGTERM] {
        // A second signal while stopping terminates at once.
        signal_hook::flag::register_conditional_shutdown(sig, 130, stop.clone())
            .context("cannot install signal handler")?;
        signal_hook::flag::register(sig, stop.clone()).context("cannot install signal handler")?;
    }
    Ok(())
}

fn random_seed() -> u64 {
    let t = hostd_workload::unix_ns();
    (t ^ (std::process::id() as u64).rotate_left(32)) % 1_000_000_000
}

/// `YYYYmmddTHHMMSSZ-xxxx` from the Unix clock.
fn run_id() -> String {
    let ns = hostd_workload::unix_ns();
    let secs = ns / 1_000_000_000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z-{:04x}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        (ns / 1000) as u16 ^ std::process::id() as u16
    )
}

/// Days since 1970-01-01 to (year, month, day) (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_000), (2024, 10, 4));
    }
}
