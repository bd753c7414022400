//! `hostd analyze RUN_DIR [--json]`: robust statistics, throttle events with causes and
//! the multi-target overlap of a run directory; writes events.json and report.html (with
//! `--charts DIR`, its charts as SVG and CSV too) and prints what `hostd run` printed at the
//! end of the run, with the analysis and the fill-state table made again from the files.

use super::run::closing::closing;
use super::run::programs::fill_states_reports;
use hostd_analysis::Options;
use hostd_records::events::Analysis;
use hostd_records::programs::ProgramFigures;
use hostd_records::RunData;
use std::path::{Path, PathBuf};
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
    /// Also write every chart of report.html into DIR as ID.svg with its data as ID.csv.
    #[arg(long, value_name = "DIR", conflicts_with = "no_report")]
    pub charts: Option<PathBuf>,
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
    let mut charts = Vec::new();
    if !args.no_report {
        charts = hostd_report::write_report_and_charts(
            &args.run_dir,
            &run,
            &analysis,
            args.charts.as_deref(),
        )?;
    }
    if args.json {
        let doc = hostd_records::events::to_json(&analysis);
        outln!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        match what_run_printed(&args.run_dir, &run, &analysis) {
            Some(text) => out!("{text}"),
            None => {
                out!("{}", hostd_analysis::event_lines::text(&analysis));
                let targets = hostd_records::manifest::read(&args.run_dir)
                    .map(|m| m.targets)
                    .unwrap_or_default();
                for report in fill_states_reports(&targets, &run.files, &analysis) {
                    report.text.iter().for_each(|l| outln!("{l}"));
                }
            }
        }
        outln!("wrote {}", events.display());
        if !args.no_report {
            outln!("wrote {}", report.display());
        }
        if let Some(dir) = &args.charts {
            outln!(
                "wrote {} charts as SVG and CSV into {}",
                charts.len() / 2,
                dir.display()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What `hostd run` printed at the end of the run in `dir` (its summary.json through the
/// same closing text), with the analysis' lines and the fill-state tables made again from
/// this analysis; None for a directory without a readable summary, manifest and profile
/// (a scenario, an older run): the analysis' own summary is printed then.
fn what_run_printed(dir: &Path, run: &RunData, analysis: &Analysis) -> Option<String> {
    let manifest = hostd_records::manifest::read(dir).ok()?;
    let path = dir.join(hostd_records::manifest::FILE_NAME);
    let profile = manifest.readable_profile(&path).ok()??;
    let mut summary = hostd_records::summary::read(dir).ok()?;
    let lines = hostd_report::run_summary_lines(analysis);
    match summary
        .extra
        .get_mut("analysis")
        .and_then(|v| v.as_object_mut())
    {
        Some(section) => {
            section.insert("text".into(), serde_json::json!(lines));
            section.insert("headlines".into(), serde_json::json!(analysis.headlines));
        }
        None => {
            summary.extra.insert(
                "analysis".into(),
                serde_json::json!({ "text": lines, "headlines": analysis.headlines }),
            );
        }
    }
    // A run of an older hostd printed each phase's probe figures on the probe's lines:
    // they are the analysis' headline figures now, printed once, with them.
    if let Some(text) = summary
        .extra
        .get_mut("probe")
        .and_then(|p| p.get_mut("text"))
        .and_then(|t| t.as_array_mut())
    {
        text.retain(|l| {
            let l = l.as_str().unwrap_or("");
            !analysis
                .phases
                .iter()
                .any(|p| l.starts_with(&format!("probe {} {}: ", p.target, p.phase)))
        });
    }
    // Nor did it know which bimodal rates an event explains.
    summary.warnings.retain(|w| {
        !analysis.phases.iter().any(|p| {
            p.levels_explained_by.is_some()
                && w.starts_with(&format!(
                    "{} {}: per-file rates look bimodal",
                    p.target, p.phase
                ))
        })
    });
    summary
        .programs
        .retain(|p| !matches!(p.figures, ProgramFigures::FillStates(_)));
    summary
        .programs
        .extend(fill_states_reports(&manifest.targets, &run.files, analysis));
    Some(closing(profile, &manifest.targets, &summary, &[], dir))
}
