//! The parts of a run, in one list ([`assemble`]): every part that takes part in `hostd run`
//! besides the workload is added here, and only here. Their stages order them
//! (`hostd_store::pipeline`), not their place in the list.

use super::{gate, programs, thermo, RunArgs};
use hostd_records::manifest::TargetInfo;
use hostd_records::profile::Profile;
use hostd_store::{RunDirPart, RunPart};
use hostd_workload::gate::StepGate;
use hostd_workload::steady::Thermometer;
use std::path::Path;
use std::sync::Arc;

/// The parts of a run, and what two of them hand the workload's runner: the temperature
/// gate's hold between steps and the steady-state thermometer.
pub struct RunParts {
    /// Every part, the run directory last.
    pub list: Vec<Box<dyn RunPart>>,
    /// The temperature gate the runner waits on before each step, when the profile has one.
    pub gate: Option<Arc<dyn StepGate>>,
    /// The temperature the runner's steady-state criteria read, when they need one.
    pub thermometer: Option<Arc<dyn Thermometer>>,
}

/// The parts of this run, chosen from the arguments and the profile: a new part is one
/// `list.push(..)` here. Each is built before anything is written, so that a part that
/// cannot work is refused (naming why) before the run starts: a probe that cannot be
/// reached, a temperature gate or a steady-state criterion with no temperature to read, a
/// run directory that exists. The run directory (`out_dir`) is created last.
pub fn assemble(
    args: &RunArgs,
    profile: &Profile,
    targets: &[TargetInfo],
    out_dir: &Path,
) -> anyhow::Result<RunParts> {
    let mut list: Vec<Box<dyn RunPart>> = Vec::new();
    if let Some(target) = args.influx.target()? {
        list.push(Box::new(
            hostd_influx::InfluxPart::new(target, None).spool_limits(args.influx_spool.limits()),
        ));
    }
    let probe_on = probe_part(args)?.map(|part| {
        list.push(Box::new(part));
        usize::from(args.probe_on) - 1
    });
    // The drive's link (manifest) and its own temperature through the run.
    list.push(Box::new(hostd_drive::DrivePart::new(Some(
        hostd_drive::smart::PollerConfig::default(),
    ))));
    // What the OS logged about the targets' storage path (the `link` cause's evidence).
    list.push(Box::new(hostd_oslog::OsLogPart::new()));
    list.push(Box::new(hostd_report::AnalysisPart));
    list.push(Box::new(programs::SweepFiguresPart));
    list.push(Box::new(programs::FillStatesPart));
    let gate = gate::build(profile, probe_on, targets)?.map(|(hold, part)| {
        list.push(Box::new(part));
        Arc::new(hold) as Arc<dyn StepGate>
    });
    let thermometer = thermo::build(profile, probe_on, targets)?.map(|(thermometer, part)| {
        list.push(Box::new(part));
        thermometer
    });
    list.push(Box::new(RunDirPart::create(out_dir)?));
    Ok(RunParts {
        list,
        gate,
        thermometer,
    })
}

/// The probe's part, when `--probe` names one; its options checked (a rate, channels or a
/// budget without a probe refused).
fn probe_part(args: &RunArgs) -> anyhow::Result<Option<hostd_correlate::ProbePart>> {
    let probe: hostd_probe::link::ProbeSource = args.probe.parse().map_err(anyhow::Error::msg)?;
    if probe == hostd_probe::link::ProbeSource::None {
        if args.probe_rate.is_some() || args.probe_channels.is_some() || args.port_budget.is_some()
        {
            anyhow::bail!("--probe-rate, --probe-channels and --port-budget need a probe (--probe sim, auto or PORT)");
        }
        return Ok(None);
    }
    let defaults = hostd_correlate::ProbeOptions::default();
    let opts = hostd_correlate::ProbeOptions {
        source: probe,
        sim_args: hostd_scenario::backend::probe_sim_args(&args.targets)?,
        target_index: usize::from(args.probe_on) - 1,
        rate_hz: args.probe_rate.unwrap_or(defaults.rate_hz),
        channels: args.probe_channels.unwrap_or(defaults.channels),
        port_budget_w: args.port_budget,
    };
    if opts.target_index >= args.targets.len() {
        anyhow::bail!(
            "--probe-on {} but only {} --target given",
            args.probe_on,
            args.targets.len()
        );
    }
    opts.check()?;
    Ok(Some(hostd_correlate::ProbePart::new(opts)))
}
