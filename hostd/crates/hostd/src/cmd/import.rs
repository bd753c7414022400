//! `hostd import RUN_DIR`: push a finished (offline) run directory to InfluxDB.

use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `hostd import`.
#[derive(clap::Args)]
pub struct ImportArgs {
    /// The run directory (holds manifest.json).
    pub run_dir: PathBuf,
    /// Tag the points with this rig name instead of the manifest's host name.
    #[arg(long)]
    pub rig: Option<String>,
    /// Where to send the points.
    #[command(flatten)]
    pub influx: hostd_influx::InfluxArgs,
}

/// Runs `hostd import`.
pub fn execute(args: ImportArgs) -> anyhow::Result<ExitCode> {
    let Some(target) = args.influx.target()? else {
        anyhow::bail!(
            "hostd import needs --influx-url (and a token: INFLUX_TOKEN or --influx-token-file)"
        );
    };
    let summary = hostd_influx::import::import_run(&args.run_dir, target, args.rig.as_deref())?;
    outln!(
        "imported run {} (rig {}) from {}",
        summary.tags.run,
        summary.tags.rig,
        args.run_dir.display()
    );
    for s in &summary.sources {
        match s.points {
            Some(n) => outln!("  {:<20} {n} points", s.source),
            None => outln!("  {:<20} absent", s.source),
        }
    }
    outln!("{}", summary.report.summary());
    Ok(if summary.report.is_complete() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
