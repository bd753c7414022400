//! The statistics section: per target and phase, the rate by every estimator, the per-file
//! overhead, energy per GB and bimodality.

use crate::svg::esc;
use crate::view::Targets;
use hostd_analysis::summary::RateUnit;
use hostd_records::events::Analysis;
use std::fmt::Write;

/// The statistics table of every phase, in one rate unit; `probed` is the probed target.
pub(crate) fn section(a: &Analysis, targets: &Targets, probed: Option<&str>) -> String {
    // One rate unit for the whole table (MB/s when every phase is slow), named once in the
    // header row: a unit in every cell made the table wider than a narrow window.
    let u = RateUnit::of(
        a.phases
            .iter()
            .map(|p| p.throughput_bps)
            .fold(0.0, f64::max),
    );
    let rate = |bps: f64| u.num(bps);
    let mut h = format!(
        r#"<section id="statistics"><h2>Statistics per target and phase</h2><div class="scroll"><table id="stats-table"><tr><th class="l">target</th><th class="l">phase</th><th>files</th><th>GB</th><th>s</th><th>overall, {u}</th><th>mean</th><th>median</th><th>20 % trimmed</th><th>Theil–Sen</th><th>least squares</th><th>overhead per file, ms</th><th>J/GB</th><th>bimodal</th></tr>"#,
        u = u.name
    );
    let mut bimodal_notes = Vec::new();
    let mut no_overhead = false;
    for p in &a.phases {
        let short = targets.short(&p.target);
        let _ = write!(
            h,
            r#"<tr><td class="l">{}</td><td class="l">{}</td><td>{}</td><td>{:.2}</td><td>{:.1}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
            esc(short),
            esc(&p.phase),
            p.files,
            p.bytes as f64 / 1e9,
            p.seconds,
            rate(p.throughput_bps),
            rate(p.mean_bps),
            rate(p.median_bps),
            rate(p.trimmed_mean_bps),
            p.theil_sen_bps.map_or("–".into(), rate),
            p.least_squares_bps.map_or("–".into(), rate),
            match (p.theil_sen_bps, p.theil_sen_overhead_s) {
                (Some(_), None) => {
                    no_overhead = true;
                    "none*".into()
                }
                (_, o) => opt(o.map(|s| s * 1e3), 1),
            },
            match (p.j_per_gb, probed) {
                (None, Some(t)) if t != p.target => "no probe".into(),
                (j, _) => opt(j, 2),
            },
            if p.bimodal {
                r#"<span class="bimodal">yes</span>"#
            } else {
                "no"
            }
        );
        if let (true, Some(b)) = (p.bimodal, p.bimodality) {
            bimodal_notes.push(format!(
                r#"<span class="bimodal">{} {}</span>: two groups of per-file rates, split at {}, {:.1} spreads apart."#,
                esc(short),
                esc(&p.phase),
                hostd_analysis::summary::rate(b.split_at),
                b.separation
            ));
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
        r#"<p class="note">Rates in {} (10⁹ or 10⁶ bytes/s); overall = bytes / file time. Theil–Sen and least squares fit file time against file size; their slope is the drive's rate without the fixed per-file cost (overhead, from Theil–Sen). When the rates are bimodal, averages mislead: read the events.</p></section>"#,
        u.name
    );
    h
}

/// `v` with `digits` decimals, or – when absent.
fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("–".into(), |x| format!("{x:.digits$}"))
}
