//! `hostd compare RUN_A RUN_B …`: the headline figures of several runs side by side, one
//! column per run in the order given and one row per figure, the runs matched by phase
//! (e.g. a drive on a direct port against the same drive on a hub); `--group-by KEY` heads
//! each column by one of its run's `--tag KEY=VALUE`s; `--report FILE.html` draws them on
//! one page (`hostd_report::compare`), `--highlight RUN` marks the drive under review on its
//! bar charts, and `--charts DIR` writes its charts as SVG and CSV. A directory that cannot
//! be read is named with the reason and the others are still compared.

use anyhow::Context;
use hostd_analysis::Options;
use hostd_records::conditions::Conditions;
use hostd_report::compare::{self, CompareRun};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `hostd compare`.
#[derive(clap::Args)]
pub struct CompareArgs {
    /// Two or more run directories.
    #[arg(required = true, num_args = 2..)]
    pub runs: Vec<PathBuf>,
    /// Print JSON of the table's shape: {"runs": [{"run": DIR, "tags", "group", "label",
    /// "color", "target", "profile", "analysis"}, …] in the order given, "phases": [{"phase",
    /// "runs": [{"label", "figures", "drop_cause"} or {"label", "absent"}, …]}, …],
    /// "left_out", "skipped"}.
    #[arg(long)]
    pub json: bool,
    /// Head each run's column by the value of its tag KEY (`hostd run --tag KEY=VALUE`):
    /// KEY=VALUE (`(none)` without the tag); the runs keep the order given.
    #[arg(long, value_name = "KEY")]
    pub group_by: Option<String>,
    /// Write the comparison as one self-contained HTML page (charts, bars with 95 %
    /// intervals, events, the conditions that differ).
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
    /// Write every chart of the comparison page into DIR as ID.svg with its data as ID.csv.
    #[arg(long, value_name = "DIR")]
    pub charts: Option<PathBuf>,
    /// Mark the drive under review on every bar chart: a run directory, a run's label or its
    /// group's value (`x5` with `--group-by drive`).
    #[arg(long, value_name = "RUN")]
    pub highlight: Option<String>,
}

/// The `(none)` group: a run without the tag.
const NO_VALUE: &str = "(none)";

/// Why `dir` cannot be compared, in words, from the error reading it.
fn reason(dir: &Path, e: &anyhow::Error) -> String {
    if !dir.is_dir() {
        "not a directory".into()
    } else if !dir.join(hostd_records::files::FILE_NAME).exists() {
        format!(
            "not a run directory (no {})",
            hostd_records::files::FILE_NAME
        )
    } else {
        format!("{e:#}")
    }
}

/// Runs `hostd compare`.
pub fn execute(args: CompareArgs) -> anyhow::Result<ExitCode> {
    let mut runs = Vec::new();
    let mut skipped: Vec<(String, String)> = Vec::new();
    for dir in &args.runs {
        match hostd_analysis::analyze_run_dir(dir, &Options::default()) {
            Ok((run, analysis)) => runs.push(CompareRun {
                dir: dir.display().to_string(),
                group: None,
                manifest: hostd_records::manifest::read(dir).ok(),
                run,
                analysis,
            }),
            Err(e) => {
                let why = reason(dir, &e);
                eprintln!("hostd compare: {} left out: {why}", dir.display());
                skipped.push((dir.display().to_string(), why));
            }
        }
    }
    anyhow::ensure!(
        runs.len() >= 2,
        "fewer than two runs to compare ({} could not be read: {})",
        skipped.len(),
        skipped
            .iter()
            .map(|(d, w)| format!("{d}: {w}"))
            .collect::<Vec<_>>()
            .join("; ")
    );
    let group_of = |c: &Conditions| -> Option<String> {
        let key = args.group_by.as_ref()?;
        Some(c.tags.get(key).cloned().unwrap_or_else(|| NO_VALUE.into()))
    };
    if let Some(key) = &args.group_by {
        if runs
            .iter()
            .all(|r| !r.run.conditions.tags.contains_key(key))
        {
            anyhow::bail!(
                "--group-by {key}: none of the {} runs has a tag {key} (hostd run --tag {key}=VALUE)",
                runs.len()
            );
        }
        for r in &mut runs {
            r.group = group_of(&r.run.conditions).map(|v| format!("{key}={v}"));
        }
    }
    let mut plan = compare::plan(&runs);
    if let Some(run) = &args.highlight {
        compare::highlight(&runs, &mut plan, run).map_err(anyhow::Error::msg)?;
    }
    if args.report.is_some() || args.charts.is_some() {
        let title = runs
            .iter()
            .zip(&plan.runs)
            .map(|(_, c)| c.label.as_str())
            .collect::<Vec<_>>()
            .join(" · ");
        let (html, files) = hostd_report::chart_files::collecting(|| {
            compare::render(&runs, &plan, &skipped, &title)
        });
        if let Some(path) = &args.report {
            hostd_records::write_atomic(path, html.as_bytes())
                .with_context(|| format!("could not write {}", path.display()))?;
            eprintln!("wrote {}", path.display());
        }
        if let Some(dir) = &args.charts {
            let written = hostd_report::chart_files::write_all(dir, &files)?;
            eprintln!(
                "wrote {} charts as SVG and CSV into {}",
                written.len() / 2,
                dir.display()
            );
        }
    }
    if args.json {
        let v: Vec<serde_json::Value> = runs
            .iter()
            .zip(&plan.runs)
            .map(|(r, c)| {
                serde_json::json!({
                    "run": r.dir, "tags": r.run.conditions.tags, "group": group_of(&r.run.conditions),
                    "label": c.label, "color": c.color, "target": c.target, "profile": c.profile,
                    "analysis": r.analysis,
                })
            })
            .collect();
        let skipped: Vec<serde_json::Value> = skipped
            .iter()
            .map(|(d, w)| serde_json::json!({ "run": d, "reason": w }))
            .collect();
        let doc = serde_json::json!({
            "runs": v, "phases": compare::side_by_side::columns(&plan),
            "left_out": plan.left_out, "skipped": skipped,
        });
        outln!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        out!("{}", compare::side_by_side::text(&runs, &plan));
    }
    Ok(ExitCode::SUCCESS)
}
