//! `hostd compare RUN_A RUN_B …`: the same statistics and events of several runs side by
//! side (e.g. a drive on a direct port against the same drive on a hub); `--group-by KEY`
//! orders and heads the runs by one of their `--tag KEY=VALUE`s.

use hostd_analysis::Options;
use hostd_records::conditions::Conditions;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `hostd compare`.
#[derive(clap::Args)]
pub struct CompareArgs {
    /// Two or more run directories.
    #[arg(required = true, num_args = 2..)]
    pub runs: Vec<PathBuf>,
    /// Print JSON: [{"run": DIR, "tags": {…}, "group": VALUE, "analysis": {…}}, …].
    #[arg(long)]
    pub json: bool,
    /// Group the runs by the value of their tag KEY (`hostd run --tag KEY=VALUE`): the runs
    /// of one value side by side, each column headed KEY=VALUE (`(none)` without the tag).
    #[arg(long, value_name = "KEY")]
    pub group_by: Option<String>,
}

/// The `(none)` group: a run without the tag.
const NO_VALUE: &str = "(none)";

/// Runs `hostd compare`.
pub fn execute(args: CompareArgs) -> anyhow::Result<ExitCode> {
    let mut runs = Vec::new();
    for dir in &args.runs {
        let (data, a) = hostd_analysis::analyze_run_dir(dir, &Options::default())?;
        runs.push((dir.display().to_string(), data.conditions, a));
    }
    let group_of = |c: &Conditions| -> Option<String> {
        let key = args.group_by.as_ref()?;
        Some(c.tags.get(key).cloned().unwrap_or_else(|| NO_VALUE.into()))
    };
    if let Some(key) = &args.group_by {
        if runs.iter().all(|(_, c, _)| !c.tags.contains_key(key)) {
            anyhow::bail!(
                "--group-by {key}: none of the {} runs has a tag {key} (hostd run --tag {key}=VALUE)",
                runs.len()
            );
        }
        // Stable: the runs of one group keep the order given.
        runs.sort_by_key(|(_, c, _)| group_of(c));
    }
    if args.json {
        let v: Vec<serde_json::Value> = runs
            .iter()
            .map(|(n, c, a)| {
                serde_json::json!({ "run": n, "tags": c.tags, "group": group_of(c), "analysis": a })
            })
            .collect();
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        let names: Vec<String> = runs
            .iter()
            .map(|(n, c, _)| match (&args.group_by, group_of(c)) {
                (Some(key), Some(value)) => format!("{key}={value} {n}"),
                _ => n.clone(),
            })
            .collect();
        let analyses: Vec<_> = runs.into_iter().map(|(_, _, a)| a).collect();
        out!(
            "{}",
            hostd_analysis::summary::compare_table(&names, &analyses)
        );
    }
    Ok(ExitCode::SUCCESS)
}
