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
    #[arg(long, value_name = "GBPS", value_parser = positive_gbps)]
    pub link_ceiling_gbps: Option<f64>,
    /// Target the probe was on (default: the only target, or manifest.json's probe_target).
    #[arg(long, value_name = "TARGET")]
    pub probe_target: Option<String>,
    /// Do not write report.html.
    #[arg(long)]
    pub no_report: bool,
    /// Replace events.json / report.html even if hostd did not write them (by default only
    /// files hostd wrote are replaced).
    #[arg(long)]
    pub force: bool,
}

fn positive_gbps(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("`{text}` is not a positive number of GB/s")),
    }
}

/// Runs `hostd analyze`.
pub fn execute(args: AnalyzeArgs) -> anyhow::Result<ExitCode> {
    let options = Options {
        link_ceiling_bps: args.link_ceiling_gbps.map(|g| g * 1e9),
        probe_target: args.probe_target.clone(),
        ..Options::default()
    };
    let events = args.run_dir.join("events.json");
    let report = args.run_dir.join("report.html");
    if !args.force {
        let mut foreign = Vec::new();
        if !hostd_analysis::events_replaceable(&events) {
            foreign.push(events.display().to_string());
        }
        if !args.no_report && !hostd_report::report_replaceable(&report) {
            foreign.push(report.display().to_string());
        }
        anyhow::ensure!(
            foreign.is_empty(),
            "{} exists and was not written by hostd; not replacing it (pass --force to replace, or --no-report)",
            foreign.join(" and ")
        );
    }
    let (run, analysis) = hostd_analysis::analyze_run_dir(&args.run_dir, &options)?;
    hostd_analysis::write_events(&args.run_dir, &analysis)?;
    if !args.no_report {
        hostd_report::write_report(&args.run_dir, &run, &analysis)?;
    }
    if args.json {
        let doc = hostd_records::events::to_json(&analysis);
        outln!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        out!("{}", hostd_analysis::summary::text(&analysis));
        outln!("wrote {}", events.display());
        if !args.no_report {
            outln!("wrote {}", report.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
