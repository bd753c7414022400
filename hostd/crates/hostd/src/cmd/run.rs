//! `hostd run`: plan a workload, run it on every target at once, record it in
//! a run directory, print the summary. [`execute`] is the run's steps in order: what the run
//! is and its targets (`setup.rs`), its parts in one list (`parts.rs`: probe link, drive,
//! analysis, InfluxDB, the temperature gate and thermometer, the run directory last;
//! ordered by their stage in a [`Pipeline`]), the start, the workload, the end, the closing
//! lines. Extra target kinds (e.g. `sim:SCENARIO`) register in [`backends`].

mod certify;
pub(crate) mod closing;
mod footprint;
mod gate;
mod live;
mod parts;
pub(crate) mod programs;
mod setup;
mod thermo;

use hostd_records::conditions::Conditions;
use hostd_records::manifest::FORMAT_VERSION;
use hostd_records::{Manifest, RunEvent, RunOutcome, RunStatus, Summary, TargetInfo};
use hostd_store::manifest::collect_host;
use hostd_store::{rundir, Pipeline, RunRecords, Stage, SummaryExt};
use hostd_workload::backend::{BackendRegistry, TargetBackend};
use hostd_workload::engine::EngineChoice;
use hostd_workload::runner::{self, RunConfig};
use hostd_workload::Plan;
use parts::RunParts;
use setup::{Setup, Targets};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Arguments of `hostd run`.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Built-in profile name (see `hostd profiles`) or a TOML file.
    #[arg(long, short = 'p', required_unless_present = "resume")]
    pub profile: Option<String>,
    /// Target directory, optionally with a mode: DIR[:write|:read|:rw]. Repeat for concurrent targets.
    #[arg(long = "target", short = 't', required_unless_present = "resume")]
    pub targets: Vec<String>,
    /// Continue a stopped or killed certify run from its first unverified file
    /// (profile, seed and targets come from RUN_DIR/manifest.json; this session
    /// is recorded in RUN_DIR/resume-N/).
    #[arg(long, value_name = "RUN_DIR", conflicts_with_all = ["profile", "seed", "out", "dry_run"])]
    pub resume: Option<PathBuf>,
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
    /// I/O engine (the engines of this build, `hostd_workload::engine::ENGINES`).
    #[arg(long, default_value = "auto", help = format!("I/O engine: {}", EngineChoice::described()))]
    pub engine: EngineChoice,
    /// Poll for completions (up to 30 µs) before sleeping, as the profile key `io.poll`
    /// does: faster at QD1 on fast devices, at more CPU. By default the engine sleeps at
    /// once, as fio's io_uring engine does, so the figures mean what fio's mean. Recorded
    /// in the manifest, the summary and the report.
    #[arg(long)]
    pub poll: bool,
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
    /// The host port's power budget in watts (0.5–240), when the probe cannot read it (no
    /// CC sensing, or a PD contract whose wattage it cannot decode); it replaces the
    /// probe's reading and the manifest says it came from the user.
    #[arg(long, value_name = "WATTS", value_parser = parse_port_budget)]
    pub port_budget: Option<f64>,
    /// No live view.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// A note on the run (the bench, the room, anything worth keeping); repeatable. Goes in
    /// the manifest, the summary and the report.
    #[arg(long = "note", value_name = "TEXT")]
    pub notes: Vec<String>,
    /// A KEY=VALUE tag on the run (e.g. enclosure=Orico-L cable=TB4-0.8m port=hub-2 fan=off);
    /// repeatable. Goes in the manifest, the summary and the report, and is an InfluxDB tag
    /// on every point of the run (`hostd compare --group-by KEY`).
    #[arg(long = "tag", value_name = "KEY=VALUE")]
    pub tags: Vec<String>,
    /// Before the measured part, trim each target's free space (FITRIM, as fstrim does); a
    /// raw device (--raw-device --destroy-data) is discarded whole (BLKDISCARD). Where the
    /// OS or device has no trim, the run goes on and records "not available".
    #[arg(long)]
    pub trim: bool,
    /// Then rest each target: SECONDS, or `idle[:WINDOW_S[:TIMEOUT_S]]` — until the
    /// device's I/O counters are unchanged for WINDOW_S (default 5), at most TIMEOUT_S
    /// (default 300). Recorded in the manifest, the summary and the report.
    #[arg(long, value_name = "SECONDS|idle[:W[:T]]", value_parser = hostd_workload::start_state::Rest::parse)]
    pub rest: Option<hostd_workload::start_state::Rest>,
    /// Also write the run to InfluxDB (live, spooled to RUN_DIR/spool/ while it is away).
    #[command(flatten)]
    pub influx: hostd_influx::InfluxArgs,
    /// The spool's cap.
    #[command(flatten)]
    pub influx_spool: hostd_influx::SpoolArgs,
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

/// `--port-budget WATTS`: a number of watts in 0.5–240.
fn parse_port_budget(s: &str) -> Result<f64, String> {
    let w: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("--port-budget takes watts (a number), not '{s}'"))?;
    hostd_records::port_budget::check_user_watts(w)
}

/// Runs `hostd run`: what the run is and its targets, its parts, then the run from start
/// to end, and the closing lines.
pub fn execute(args: RunArgs) -> anyhow::Result<ExitCode> {
    let setup = Setup::read(args)?;
    let mut targets = Targets::open(&setup)?;
    if setup.args.dry_run {
        return Ok(print_dry_run(&setup, &targets));
    }
    targets.space.clone().map_err(anyhow::Error::msg)?;
    let parts = assemble_parts(&setup, &mut targets)?;
    let mut run = start_run(&setup, targets, parts)?;
    let outcome = run_workload(&setup, &mut run);
    let end = finish_run(&setup, run, outcome);
    Ok(print_closing(&setup, &end))
}

/// The run's parts ([`parts::assemble`]), on the targets as they opened; when one is
/// refused, the targets' test directories are taken back.
fn assemble_parts(setup: &Setup, targets: &mut Targets) -> anyhow::Result<RunParts> {
    let infos: Vec<TargetInfo> = targets.backends.iter().map(|b| b.info()).collect();
    parts::assemble(&setup.args, &setup.profile, &infos, &setup.out_dir).inspect_err(|_| {
        targets.take_back();
    })
}

/// Prints the plan, the footprint, the free-space check and the engine, writing nothing
/// (`--dry-run`); fails when the space is short.
fn print_dry_run(setup: &Setup, targets: &Targets) -> ExitCode {
    let args = &setup.args;
    out!("{}", targets.plan.render());
    let probe_rate = match args.probe.parse() {
        Ok(hostd_probe::link::ProbeSource::None) => 0,
        _ => u64::from(
            args.probe_rate
                .unwrap_or(hostd_correlate::ProbeOptions::default().rate_hz),
        ),
    };
    // With InfluxDB, the spool at its cap: the worst case of a server away long.
    let spool_max = if args.influx.enabled() {
        args.influx_spool.spool_max
    } else {
        0
    };
    outln!(
        "{}",
        footprint::render(&targets.plan, probe_rate, spool_max)
    );
    match &targets.space {
        Ok(lines) => lines.iter().for_each(|l| outln!("{l}")),
        Err(e) => outln!("{e}"),
    }
    #[cfg(windows)]
    outln!("engine: I/O completion port (iocp), else threads");
    #[cfg(not(windows))]
    match hostd_workload::engine::probe_io_uring() {
        Ok(()) => outln!("engine: io_uring available"),
        Err(e) => outln!("engine: io_uring unavailable ({e}); threads would run"),
    }
    outln!("dry run: nothing written");
    if targets.space.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// A run started: its targets prepared, its parts started with the manifest, Ctrl-C caught.
struct StartedRun {
    backends: Vec<Box<dyn TargetBackend>>,
    plan: Plan,
    planned_steps: usize,
    pipeline: Pipeline,
    manifest: Manifest,
    journal: Option<certify::JournalObserver>,
    stop: Arc<AtomicBool>,
    gate: Option<Arc<dyn hostd_workload::gate::StepGate>>,
    thermometer: Option<Arc<dyn hostd_workload::steady::Thermometer>>,
}

/// Starts the run: its log in the run directory, the targets prepared, the manifest made,
/// Ctrl-C caught, every part started, the certify journal opened. A failure takes back
/// everything the run created, as a refused run leaves no trace.
fn start_run(setup: &Setup, targets: Targets, parts: RunParts) -> anyhow::Result<StartedRun> {
    let Targets {
        mut backends,
        plan,
        planned_steps,
        ..
    } = targets;
    let out_dir = &setup.out_dir;
    let mut pipeline = Pipeline::new(parts.list);
    // From here warnings and errors go to RUN_DIR/hostd.log too.
    if let Err(e) = crate::logging::log_to_dir(out_dir) {
        drop(pipeline);
        rundir::discard(out_dir);
        return Err(e);
    }
    if let Err(e) = runner::prepare_all(&plan, &mut backends) {
        discard(&mut [], pipeline, out_dir); // prepare_all took back its own
        return Err(e);
    }
    let mut manifest = match run_manifest(setup, &backends, planned_steps) {
        Ok(m) => m,
        Err(e) => {
            discard(&mut backends, pipeline, out_dir);
            return Err(e);
        }
    };
    warn_of_cached_targets(&manifest);
    // Ctrl-C is caught before anything is started, so a run never has parts to stop that a
    // failed hook would leave running.
    let stop = Arc::new(AtomicBool::new(false));
    if let Err(e) = crate::stop::on_interrupt(&stop) {
        discard(&mut backends, pipeline, out_dir);
        return Err(e);
    }
    if let Err(e) = pipeline.start(&mut manifest, out_dir) {
        // Nothing was measured: take back the test directories and the run
        // directory this run created, as a refused run leaves no trace.
        discard(&mut backends, pipeline, out_dir);
        return Err(e);
    }
    let journal = if setup.is_certify {
        match certify::JournalObserver::open(
            &setup.journal_root,
            setup.session(),
            setup
                .resume
                .as_ref()
                .map_or(Vec::new(), |r| r.entries.clone()),
        ) {
            Ok(j) => Some(j),
            Err(e) => {
                discard(&mut backends, pipeline, out_dir);
                return Err(e);
            }
        }
    } else {
        None
    };
    Ok(StartedRun {
        backends,
        plan,
        planned_steps,
        pipeline,
        manifest,
        journal,
        stop,
        gate: parts.gate,
        thermometer: parts.thermometer,
    })
}

/// The manifest at the run's start: the host, the targets, the profile, the seed, the
/// conditions, and what a certify session, a faster playback or an injected fault adds.
fn run_manifest(
    setup: &Setup,
    backends: &[Box<dyn TargetBackend>],
    planned_steps: usize,
) -> anyhow::Result<Manifest> {
    let mut manifest = Manifest {
        format_version: FORMAT_VERSION,
        formats: hostd_records::version::current(),
        run_id: setup.run_id.clone(),
        hostd_version: env!("CARGO_PKG_VERSION").to_string(),
        command_line: std::env::args().collect(),
        start_ns: hostd_workload::unix_ns(),
        host: collect_host(),
        targets: backends.iter().map(|b| b.info()).collect(),
        profile: Some(setup.profile.clone().into()),
        seed: setup.seed,
        keep: setup.keep,
        allow_cached: setup.args.allow_cached,
        probe_target: None,
        conditions: setup.conditions.clone(),
        extra: serde_json::Map::new(),
    };
    if setup.is_certify {
        manifest.extra.insert(
            "certify".into(),
            serde_json::json!({
                "session": setup.session(),
                "journal": setup.journal_root.join(hostd_records::certify::JOURNAL_FILE_NAME),
                "steps_planned": planned_steps,
                "steps_skipped_as_done": setup.resume.as_ref().map_or(0, |r| r.done.len()),
            }),
        );
    }
    if let Some(p) = hostd_records::clock::playback() {
        manifest.extra.insert(
            hostd_records::clock::MANIFEST_KEY.into(),
            serde_json::to_value(p)?,
        );
    }
    if !setup.fault.is_empty() {
        manifest.extra.insert(
            "injected_fault".into(),
            serde_json::json!({ "enospc_after_bytes": setup.fault.enospc_after_bytes }),
        );
    }
    Ok(manifest)
}

/// Warns of every target on which direct I/O is not in force.
fn warn_of_cached_targets(manifest: &Manifest) {
    for t in &manifest.targets {
        if !t.direct_io.is_direct() {
            tracing::warn!(
                "target {}: direct I/O NOT in force ({:?}); the numbers measure the page cache",
                t.label,
                t.direct_io
            );
        }
    }
}

/// Runs the workload on every target at once, with the live view, every event going to the
/// certify journal first, then to every part.
fn run_workload(setup: &Setup, run: &mut StartedRun) -> RunOutcome {
    let progress = runner::progress_for(&run.plan);
    let header = format!(
        "run {}: profile {} seed {}, {} target(s), results in {}",
        setup.run_id,
        setup.profile.name,
        setup.seed,
        setup.specs.len(),
        setup.out_dir.display()
    );
    let view = live::LiveView::start(&run.plan, &progress, setup.args.quiet, &header);
    let (journal, pipeline) = (&run.journal, &run.pipeline);
    let on_event = |ev: &RunEvent| {
        // First: a verified file is durable before anything else hears of it.
        if let Some(j) = journal {
            j.on_event(ev);
        }
        pipeline.on_event(ev);
        view.on_event(ev);
        // Once a second per target is often enough to refresh the status line.
        if matches!(ev, RunEvent::Interval(_)) {
            view.set_status(&pipeline.live_status());
        }
    };
    let cfg = RunConfig {
        run_id: setup.run_id.clone(),
        // A certify run keeps its files until it has completed (see `finish_run`), so
        // that a stopped run can be resumed.
        keep: setup.keep || setup.is_certify,
        stop: run.stop.clone(),
        interval: Duration::from_secs(1),
        start_state: hostd_workload::start_state::StartState {
            trim: setup.args.trim,
            rest: setup.args.rest,
        },
        gate: run.gate.clone(),
        // Each record goes to the run directory (and the sinks) as it comes; none is kept.
        collect_records: false,
        thermometer: run.thermometer.clone(),
    };
    let backends = std::mem::take(&mut run.backends);
    let outcome = runner::execute(&run.plan, backends, &progress, &cfg, &on_event);
    view.finish();
    outcome
}

/// What the end of a run leaves to print: what the workload did, the final manifest and
/// summary, what the cleanup did, and a certify run's verdict.
struct RunEnd {
    outcome: RunOutcome,
    manifest: Manifest,
    summary: Summary,
    cleanup_notes: Vec<String>,
    verdict: Option<hostd_records::certify::Verdict>,
}

/// Ends the run: the records the run directory streamed read back once, the summary made,
/// every part finished stage by stage (a certify run's verdict concluded before the run
/// directory, the last, archives the summary and the final manifest).
fn finish_run(setup: &Setup, run: StartedRun, mut outcome: RunOutcome) -> RunEnd {
    let StartedRun {
        mut pipeline,
        mut manifest,
        journal,
        planned_steps,
        ..
    } = run;
    manifest.targets = outcome.targets.clone();
    manifest.conditions.preparation = outcome.preparation.clone();
    // The analysis of the end works on the records the run directory holds, read back
    // once: memory through the run stays bounded however many files it makes.
    let labels: Vec<String> = outcome.targets.iter().map(|t| t.label.clone()).collect();
    let latency = match rundir::read_back(&setup.out_dir, &labels) {
        Ok((files, intervals, latency)) => {
            (outcome.files, outcome.intervals) = (files, intervals);
            latency
        }
        Err(e) => {
            outcome.warnings.push(format!("{e:#}"));
            Default::default()
        }
    };
    let counters = rundir::read_back_counters(&setup.out_dir).unwrap_or_else(|e| {
        outcome.warnings.push(format!("{e:#}"));
        None
    });
    let mut summary = Summary::compute(&setup.run_id, &outcome);
    summary.conditions = manifest.conditions.clone();
    // From here the run's records flow in memory from stage to stage: after that one read
    // of what the run directory streamed, no part reads back what another wrote.
    let data = run_data(&outcome, counters, latency, &manifest.conditions);
    let mut records = RunRecords {
        dir: &setup.out_dir,
        manifest,
        outcome: &outcome,
        summary,
        data,
        probe_link: Vec::new(),
        analysis: None,
    };
    pipeline.finish(..Stage::Archive, &mut records);
    let summary = &mut records.summary;
    let mut cleanup_notes = outcome.cleanup.clone();
    let verdict = if setup.is_certify {
        if matches!(outcome.status, RunStatus::Completed) && !setup.keep {
            cleanup_notes = certify::remove_test_files(&outcome.targets);
        }
        let entries = journal.as_ref().map_or(Vec::new(), |j| j.entries());
        match certify::conclude(
            &setup.profile,
            &setup.journal_root,
            planned_steps,
            &entries,
            summary,
        ) {
            Ok(v) => Some(v),
            Err(e) => {
                summary.warnings.push(format!("certify verdict: {e:#}"));
                None
            }
        }
    } else {
        None
    };
    // The run directory last: summary.json and the final manifest record all of the above.
    pipeline.finish(Stage::Archive.., &mut records);
    let RunRecords {
        manifest, summary, ..
    } = records;
    RunEnd {
        outcome,
        manifest,
        summary,
        cleanup_notes,
        verdict,
    }
}

/// Prints the closing lines (and a certify run's verdict), closes the log file, and gives
/// the exit code: 0 for a completed run, 3 for a certify gate that failed, 130 when
/// interrupted, 1 when stopped by a failure.
fn print_closing(setup: &Setup, end: &RunEnd) -> ExitCode {
    let out_dir = &setup.out_dir;
    out!(
        "{}",
        closing::closing(
            &setup.profile,
            &end.manifest.targets,
            &end.summary,
            &end.cleanup_notes,
            out_dir
        )
    );
    if let Some(v) = &end.verdict {
        out!("{}", certify::render(v, &end.manifest.targets));
        if !matches!(end.outcome.status, RunStatus::Completed) {
            eprintln!(
                "hostd: the certify run can continue with: hostd run --resume {}",
                setup.journal_root.display()
            );
        }
    }
    crate::logging::stop_log_file();
    match &end.outcome.status {
        RunStatus::Completed if end.verdict.as_ref().is_some_and(|v| !v.passed()) => {
            eprintln!("hostd: certify FAIL: a gate failed (exit 3)");
            ExitCode::from(3)
        }
        RunStatus::Completed if setup.is_certify && end.verdict.is_none() => ExitCode::from(1),
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
    }
}

/// Takes back what a run refused before any I/O created: the test directories, the parts'
/// state and the run directory's files, with its log file.
fn discard(backends: &mut [Box<dyn TargetBackend>], pipeline: Pipeline, out_dir: &std::path::Path) {
    for b in backends.iter_mut() {
        let _ = b.cleanup(false);
    }
    crate::logging::stop_log_file();
    let _ = std::fs::remove_file(out_dir.join(crate::logging::LOG_FILE));
    drop(pipeline);
    rundir::discard(out_dir);
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
pub(crate) fn civil_from_days(z: i64) -> (i64, u32, u32) {
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

/// The analysis input of a finished run from the records in memory (those the run directory
/// streamed read back once): the same value `hostd analyze` reads from the run directory
/// (`RunData::read`).
fn run_data(
    outcome: &RunOutcome,
    counters: Option<hostd_records::counters::Counters>,
    latency: hostd_records::latency::RunLatency,
    conditions: &Conditions,
) -> hostd_records::RunData {
    // The parts add the rest: the drive's and the OS log's records (Stage::Record), the
    // probe's series, the port's budget and the gate's waits (Stage::Enrich).
    let mut run = hostd_records::RunData {
        files: outcome.files.clone(),
        counters,
        latency,
        conditions: conditions.clone(),
        playback: hostd_records::clock::playback(),
        ..Default::default()
    };
    run.sort();
    run
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
