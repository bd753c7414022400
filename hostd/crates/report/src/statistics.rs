//! The statistics section: per target and phase, the average (bytes / time) and the rate
//! by every other estimator, the per-file overhead, energy per GB and bimodality.

use crate::svg::esc;
use crate::view::Targets;
use hostd_records::events::Analysis;
use hostd_records::published::{Kind, Unit};
use std::fmt::Write;

/// The statistics table of every phase, its rates in one unit named in the header (a cell
/// in another unit names its own), each figure written through its [`Kind`] as everywhere
/// else; `probed` is the probed target.
pub(crate) fn section(a: &Analysis, targets: &Targets, probed: Option<&str>) -> String {
    // One rate unit for the table (MB/s when every phase is slow), named once in the header
    // row: a unit in every cell made the table wider than a narrow window.
    let u: Unit = Kind::Rate.common_unit(a.phases.iter().map(|p| p.throughput_bps));
    let rate = |bps: f64| Kind::Rate.cell(bps, u);
    let data = Kind::Data.common_unit(a.phases.iter().map(|p| p.bytes as f64));
    let secs = Kind::Seconds.unit(1.0);
    let jgb = Kind::JPerGb.unit(1.0);
    let mut h = format!(
        r#"<section id="statistics"><h2>Statistics per target and phase</h2><div class="scroll"><table id="stats-table"><tr><th class="l">target</th><th class="l">phase</th><th>files</th><th>data, {d}</th><th>time, s</th><th>average, {u}</th><th>mean of files</th><th>median</th><th>20 % trimmed</th><th>Theil–Sen</th><th>least squares</th><th>overhead per file, ms</th><th>J/GB</th><th>bimodal</th></tr>"#,
        u = u.name,
        d = data.name
    );
    let mut bimodal_notes = Vec::new();
    let mut no_overhead = false;
    for p in &a.phases {
        let short = targets.short(&p.target);
        let _ = write!(
            h,
            r#"<tr><td class="l">{}</td><td class="l">{}</td><td>{}</td><td>{}</td><td>{}</td><td data-figure="average_bps">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td data-figure="j_per_gb">{}</td><td>{}</td></tr>"#,
            esc(short),
            esc(&p.phase),
            p.files,
            esc(&Kind::Data.cell(p.bytes as f64, data)),
            esc(&Kind::Seconds.cell(p.seconds, secs)),
            esc(&rate(p.throughput_bps)),
            esc(&rate(p.mean_bps)),
            esc(&rate(p.median_bps)),
            esc(&rate(p.trimmed_mean_bps)),
            p.theil_sen_bps.map_or("–".into(), |v| esc(&rate(v))),
            p.least_squares_bps.map_or("–".into(), |v| esc(&rate(v))),
            match (p.theil_sen_bps, p.theil_sen_overhead_s) {
                (Some(_), None) => {
                    no_overhead = true;
                    "none*".into()
                }
                (_, o) => opt(o.map(|s| s * 1e3), 1),
            },
            match (p.j_per_gb, probed) {
                (None, Some(t)) if t != p.target => "no probe".into(),
                (j, _) => j.map_or("–".into(), |j| esc(&Kind::JPerGb.cell(j, jgb))),
            },
            match (p.bimodal, &p.levels_explained_by) {
                (false, _) => "no",
                (true, None) => r#"<span class="bimodal">yes</span>"#,
                (true, Some(_)) => "two levels",
            }
        );
        match (p.bimodal, p.bimodality, &p.levels_explained_by) {
            (true, Some(b), None) => bimodal_notes.push(format!(
                r#"<span class="bimodal">{} {}</span>: two groups of per-file rates, split at {}, {:.1} spreads apart, and no event between them: averages mislead."#,
                esc(short),
                esc(&p.phase),
                esc(&Kind::Rate.text(b.split_at)),
                b.separation
            )),
            (true, Some(b), Some(by)) => bimodal_notes.push(format!(
                "{} {}: per-file rates at two levels in time, split at {}, before and after {}: the events say what happened, not an average.",
                esc(short),
                esc(&p.phase),
                esc(&Kind::Rate.text(b.split_at)),
                esc(by)
            )),
            _ => {}
        }
    }
    h.push_str("</table></div>");
    for n in bimodal_notes {
        let _ = write!(h, r#"<p class="note">{n}</p>"#);
    }
    if no_overhead {
        h.push_str(r#"<p class="note">none*: the fit of file time against size crosses zero below no size (a negative fixed cost), so the files' times are not one rate plus a fixed cost: the rate changed within the phase (read the events).</p>"#);
    }
    let _ = write!(
        h,
        r#"<p class="note">Rates in {} (10⁹ or 10⁶ bytes/s) where a cell names no other unit; average = bytes / file time (the headline's); mean of files = the mean of the per-file rates. Theil–Sen and least squares fit file time against file size; their slope is the drive's rate without the fixed per-file cost (overhead, from Theil–Sen). When the rates are bimodal, averages mislead: read the events.</p></section>"#,
        u.name
    );
    h
}

/// `v` with `digits` decimals, or – when absent.
fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("–".into(), |x| format!("{x:.digits$}"))
}
