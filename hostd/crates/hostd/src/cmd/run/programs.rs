//! The adaptive workloads' results (`summary.json` `programs[]`, computed by
//! the workload) get what only the probe knows: each paced-sweep step's mean
//! power and highest enclosure temperature, from the probe's per-file figures
//! on the file records ([`Stage::Analyse`], after the probe added them), where a probe was
//! on that target.

use hostd_records::programs::ProgramFigures;
use hostd_records::{FileRecord, Summary};
use hostd_store::{RunPart, RunRecords, Stage};

/// The paced sweep's probe figures as a part of the run.
pub struct SweepFiguresPart;

impl RunPart for SweepFiguresPart {
    fn name(&self) -> &str {
        "paced-sweep"
    }

    fn stage(&self) -> Stage {
        Stage::Analyse
    }

    fn finish(&mut self, run: &mut RunRecords<'_>) -> anyhow::Result<()> {
        add_probe_figures(&mut run.summary, &run.data.files);
        Ok(())
    }
}

/// Adds the probe figures of every paced-sweep step to the summary.
pub fn add_probe_figures(summary: &mut Summary, files: &[FileRecord]) {
    if !summary
        .programs
        .iter()
        .any(|p| matches!(p.figures, ProgramFigures::PacedSweep(_)))
    {
        return;
    }
    for report in summary.programs.iter_mut() {
        let ProgramFigures::PacedSweep(sweep) = &mut report.figures else {
            continue;
        };
        let mut lines = Vec::new();
        for step in sweep.steps.iter_mut() {
            let mine: Vec<&FileRecord> = files
                .iter()
                .filter(|f| f.target == report.target && f.phase == step.phase)
                .collect();
            let (mut energy, mut secs, mut tmax) = (0.0, 0.0, f64::NEG_INFINITY);
            for f in &mine {
                let Some(p) = f.probe.as_deref() else {
                    continue;
                };
                if let Some(w) = p.mean_power_w {
                    energy += w * f.seconds();
                    secs += f.seconds();
                }
                if let Some(c) = p.temp_max_c {
                    tmax = tmax.max(c);
                }
            }
            step.mean_power_w = (secs > 0.0).then(|| energy / secs);
            step.temp_max_c = tmax.is_finite().then_some(tmax);
            lines.push(match (step.mean_power_w, step.temp_max_c) {
                (Some(w), Some(c)) => format!(
                    "  {:<12} mean power {w:.2} W, enclosure up to {c:.1} °C",
                    step.phase
                ),
                (Some(w), None) => format!("  {:<12} mean power {w:.2} W", step.phase),
                _ => format!("  {:<12} no probe figures", step.phase),
            });
        }
        if lines.iter().all(|l| l.ends_with("no probe figures")) {
            report
                .text
                .push("  power and temperature per step: no probe on this target".into());
        } else {
            report.text.extend(lines);
        }
    }
}

/// The fill-state sweep's table (`kind = "fill-states"`) as a part of the run
/// ([`Stage::Analyse`], after the analysis): per target, the cache size and post-cache
/// rate of each level into `summary.json` `programs[]` and the printed summary, with the
/// fill level each measured write actually began at (the manifest's capacity and free
/// space, plus what the run had written before).
pub struct FillStatesPart;

impl RunPart for FillStatesPart {
    fn name(&self) -> &str {
        "fill-states"
    }

    fn stage(&self) -> Stage {
        Stage::Analyse
    }

    fn finish(&mut self, run: &mut RunRecords<'_>) -> anyhow::Result<()> {
        let Some(analysis) = &run.analysis else {
            return Ok(());
        };
        let reports = fill_states_reports(&run.manifest.targets, &run.data.files, analysis);
        run.summary.programs.extend(reports);
        Ok(())
    }
}

/// The fill-state table of every target that ran a fill-state sweep, as `hostd run` adds it
/// to the summary (and prints it) and `hostd analyze` prints it again from the files: per
/// level the cache size and post-cache rate, with the fill level each measured write
/// actually began at (the target's capacity and free space, plus what the run had written
/// before).
pub fn fill_states_reports(
    targets: &[hostd_records::TargetInfo],
    files: &[FileRecord],
    analysis: &hostd_records::events::Analysis,
) -> Vec<hostd_records::ProgramReport> {
    let mut out = Vec::new();
    for t in targets {
        let Some(mut figures) = hostd_analysis::fill_states::figures(files, analysis, &t.label)
        else {
            continue;
        };
        if let (Some(total), Some(free)) = (t.capacity_bytes, t.free_bytes) {
            for level in figures.levels.iter_mut() {
                let begins = files
                    .iter()
                    .filter(|f| f.target == t.label && f.phase == level.phase)
                    .map(|f| f.start_ns)
                    .min()
                    .unwrap_or(0);
                let ours: u64 = files
                    .iter()
                    .filter(|f| {
                        f.target == t.label
                            && f.end_ns <= begins
                            && (f.phase.starts_with("fill-") || f.phase.starts_with("write-"))
                    })
                    .map(|f| f.bytes)
                    .sum();
                level.actual_pct = (total > 0)
                    .then(|| (total.saturating_sub(free) + ours) as f64 / total as f64 * 100.0);
            }
        }
        let mut text = vec!["fill states (SLC cache and post-cache rate per level):".into()];
        text.extend(hostd_analysis::fill_states::lines(&figures));
        out.push(hostd_records::ProgramReport {
            target: t.label.clone(),
            text,
            figures: ProgramFigures::FillStates(figures),
        });
    }
    out
}
