//! The targets section: each target once, with its short label, path, phases, file count
//! and whether the probe was on it.

use crate::svg::esc;
use crate::view::Targets;
use hostd_records::RunData;
use std::fmt::Write;

/// Each target once: its short label (used everywhere else), full path, and
/// whether the probe was on it.
pub(crate) fn section(run: &RunData, targets: &Targets, probed: Option<&str>) -> String {
    let mut h = String::from(
        r#"<section id="targets"><h2>Targets</h2><div class="scroll"><table id="targets-table"><tr><th class="l">label</th><th class="l">target</th><th class="l">phases</th><th>files</th><th class="l">probe</th></tr>"#,
    );
    for (full, short) in targets.full.iter().zip(&targets.short) {
        let mut phases: Vec<&str> = Vec::new();
        for f in run.files.iter().filter(|f| &f.target == full) {
            if !phases.contains(&f.phase.as_str()) {
                phases.push(&f.phase);
            }
        }
        let files = run.files.iter().filter(|f| &f.target == full).count();
        let probe = match (probed, &run.probe) {
            (_, None) => "none in this run",
            (Some(p), Some(_)) if p == full => "on this target",
            (Some(_), Some(_)) => "no probe",
            (None, Some(_)) => "–",
        };
        let _ = write!(
            h,
            r#"<tr><td class="l">{}</td><td class="l path">{}</td><td class="l">{}</td><td>{files}</td><td class="l">{probe}</td></tr>"#,
            esc(short),
            esc(full),
            esc(&phases.join(", "))
        );
    }
    h.push_str("</table></div>");
    // Stated once: the times and rates of every section are the modelled drive's.
    if let Some(p) = &run.playback {
        let _ = write!(
            h,
            r#"<p id="targets-playback">Simulated targets {}.</p>"#,
            esc(&hostd_records::clock::Playback::note(p.factor))
        );
    }
    h.push_str("</section>");
    h
}
