//! `hostd compare RUN_A RUN_B …`: the same statistics and events of several runs side by
//! side (e.g. a drive on a direct port against the same drive on a hub).

use hostd_analysis::Options;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `hostd compare`.
#[derive(clap::Args)]
pub struct CompareArgs {
    /// Two or more run directories.
    #[arg(required = true, num_args = 2..)]
    pub runs: Vec<PathBuf>,
    /// Print JSON: [{"run": DIR, "analysis": {…}}, …].
    #[arg(long)]
    pub json: bool,
}

/// Runs `hostd compare`.
pub fn execute(args: CompareArgs) -> anyhow::Result<ExitCode> {
    let mut analyses = Vec::new();
    for dir in &args.runs {
        let (_, a) = hostd_analysis::analyze_run_dir(dir, &Options::default())?;
        analyses.push(a);
    }
    let names: Vec<String> = args.runs.iter().map(|p| p.display().to_string()).collect();
    if args.json {
        let v: Vec<serde_json::Value> = names
            .iter()
            .zip(&analyses)
            .map(|(n, a)| serde_json::json!({ "run": n, "analysis": a }))
            .collect();
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        out!(
            "{}",
            hostd_analysis::summary::compare_table(&names, &analyses)
        );
    }
    Ok(ExitCode::SUCCESS)
}
