//! `hostd analyze RUN_DIR [--json]`: robust statistics, throttle events with causes and
//! the multi-target overlap of a run directory; writes events.json and report.html.

use hostd_analysis::Options;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `hostd analyze`.
#[derive(clap::Args)]
pub struct AnalyzeArgs {
    /// Run directory holding files.csv (and optionally probe.csv, manifest.json).
    pub run_dir: PathBuf,
    /// Print the analysis as JSON (the events.json document) instead of the summary.
    #[arg(long)]
    pub json: bool,
    /// Known link ceiling in GB/s (default: the run's peak 1 s aggregate).
    #[arg(long, value_name = "GBPS")]
    pub link_ceiling_gbps: Option<f64>,
    /// Target the probe was on (default: the only target, or manifest.json's probe_target).
    #[arg(long, value_name = "TARGET")]
    pub probe_target: Option<String>,
    /// Do not write report.html.
    #[arg(long)]
    pub no_report: bool,
}

/// Runs `hostd analyze`.
pub fn execute(args: AnalyzeArgs) -> anyhow::Result<ExitCode> {
    let options = Options {
        link_ceiling_bps: args.link_ceiling_gbps.map(|g| g * 1e9),
        probe_target: args.probe_target.clone(),
        ..Options::default()
    };
    let (run, analysis) = hostd_analysis::analyze_run_dir(&args.run_dir, &options)?;
    hostd_analysis::write_events(&args.run_dir, &analysis)?;
    if !args.no_report {
        hostd_report::write_report(&args.run_dir, &run, &analysis)?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&analysis)?);
    } else {
        print!("{}", hostd_analysis::summary::text(&analysis));
        println!("wrote {}", args.run_dir.join("events.json").display());
        if !args.no_report {
            println!("wrote {}", args.run_dir.join("report.html").display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
