//! `hostd compare RUN_A RUN_B …`: the same statistics and events of several runs side by
//! side (e.g. a drive on a direct port against the same drive on a hub).

use hostd_analysis::{Analysis, Options};
use std::fmt::Write;
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

fn gbps(v: Option<f64>) -> String {
    v.map_or("–".into(), |b| format!("{:.2}", b / 1e9))
}

/// The side-by-side table: one column per run, one block of rows per target/phase.
pub fn table(names: &[String], analyses: &[Analysis]) -> String {
    let mut keys: Vec<(String, String)> = Vec::new();
    for a in analyses {
        for p in &a.phases {
            if !keys.contains(&(p.target.clone(), p.phase.clone())) {
                keys.push((p.target.clone(), p.phase.clone()));
            }
        }
    }
    let width = names
        .iter()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(8)
        .clamp(12, 40);
    let mut s = String::new();
    let _ = write!(s, "{:<28}", "");
    for n in names {
        let _ = write!(s, " {n:>width$}");
    }
    s.push('\n');
    type Row = (&'static str, fn(&hostd_analysis::PhaseStats) -> String);
    let rows: [Row; 11] = [
        ("files", |p| p.files.to_string()),
        ("GB", |p| format!("{:.2}", p.bytes as f64 / 1e9)),
        ("overall GB/s", |p| gbps(Some(p.throughput_bps))),
        ("mean GB/s", |p| gbps(Some(p.mean_bps))),
        ("median GB/s", |p| gbps(Some(p.median_bps))),
        ("20% trimmed GB/s", |p| gbps(Some(p.trimmed_mean_bps))),
        ("Theil–Sen GB/s", |p| gbps(p.theil_sen_bps)),
        ("least squares GB/s", |p| gbps(p.least_squares_bps)),
        ("bimodal", |p| {
            if p.bimodal {
                "yes".into()
            } else {
                "no".into()
            }
        }),
        ("J/GB", |p| {
            p.j_per_gb.map_or("–".into(), |j| format!("{j:.2}"))
        }),
        ("mean power W", |p| {
            p.mean_power_w.map_or("–".into(), |w| format!("{w:.2}"))
        }),
    ];
    for (target, phase) in &keys {
        let _ = writeln!(s, "{target} {phase}");
        for (label, f) in rows {
            let _ = write!(s, "  {label:<26}");
            for a in analyses {
                let cell = a
                    .phases
                    .iter()
                    .find(|p| &p.target == target && &p.phase == phase)
                    .map_or("–".into(), f);
                let _ = write!(s, " {cell:>width$}");
            }
            s.push('\n');
        }
        let _ = write!(s, "  {:<26}", "events");
        for a in analyses {
            let n = a
                .events
                .iter()
                .filter(|e| &e.target == target && &e.phase == phase)
                .count();
            let _ = write!(s, " {n:>width$}");
        }
        s.push('\n');
    }
    for (name, a) in names.iter().zip(analyses) {
        let _ = writeln!(s, "\n{name}:");
        if a.events.is_empty() {
            let _ = writeln!(s, "  no throughput changes beyond noise");
        }
        for e in &a.events {
            let _ = writeln!(s, "  {}", e.evidence.text);
        }
        if let (Some(w), Some(agg)) = (&a.overlap.window, a.overlap.aggregate_bps) {
            let _ = writeln!(
                s,
                "  all targets active {:.1} s, aggregate {:.2} GB/s",
                w.duration_s,
                agg / 1e9
            );
        }
    }
    s
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
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{}", table(&names, &analyses));
    }
    Ok(ExitCode::SUCCESS)
}
