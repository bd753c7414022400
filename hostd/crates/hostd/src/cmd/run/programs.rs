//! The adaptive workloads' results (`summary.json` `programs[]`, computed by
//! the workload) get what only the probe knows: each paced-sweep step's mean
//! power and highest enclosure temperature, from the probe's per-file figures
//! on the file records ([`Stage::Analyse`], after the probe added them), where a probe was
//! on that target.

use hostd_records::programs::ProgramFigures;
use hostd_records::{FileRecord, Summary};
use hostd_store::{RunPart, RunRecords, Stage};

/// The paced sweep's probe figures as a part of the run.
pub struct SweepFigures;

impl RunPart for SweepFigures {
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
