//! The headline figures section: per target and phase the rates, the first drop whatever
//! its cause (with the SLC cache where the cache is the cause), the phase's energy, power
//! and enclosure figures, each with its interval or "none" and why; then the enclosure's
//! thermal fit. Every figure is written through its [`Kind`], as the terminal writes it.

use crate::svg::esc;
use crate::view::Targets;
use hostd_records::events::Analysis;
use hostd_records::headline::{Figure, SeriesHeadline};
use hostd_records::published::Kind;
use std::fmt::Write;

/// A table cell of figure `key`: the value with its unit and its interval below it, or
/// "none" with the reason below it. Its text (tags left out, the line break a space) is
/// [`Figure::text`].
pub(crate) fn figure_cell(key: &str, f: &Figure, kind: Kind) -> String {
    match f {
        Figure::Value { value, low, high } => {
            let u = kind.unit(*value);
            format!(
                r#"<td data-figure="{key}">{}<br><span class="note">[{}–{}]</span></td>"#,
                esc(&u.text(*value)),
                esc(&u.num(*low)),
                esc(&u.num(*high))
            )
        }
        Figure::Absent { absent } => format!(
            r#"<td data-figure="{key}" class="none">none<br><span class="note">({})</span></td>"#,
            esc(absent)
        ),
    }
}

/// The first drop's cause and its confidence (the column names it), or "none" and why
/// there is no drop.
fn cause_cell(s: &SeriesHeadline) -> String {
    match (s.drop_cause, s.drop_confidence) {
        (Some(c), Some(conf)) => format!(
            r#"<td data-figure="drop_cause" class="l"><span class="cause">{}</span><br><span class="note">({conf:.2})</span></td>"#,
            esc(c.as_str())
        ),
        _ => format!(
            r#"<td data-figure="drop_cause" class="l none">none<br><span class="note">({})</span></td>"#,
            esc(s.drop_bytes.absent_reason().unwrap_or("no drop"))
        ),
    }
}

/// Headline figures per target and phase, each with its interval or "none" and the reason,
/// and the enclosure's thermal fit.
pub(crate) fn section(a: &Analysis, targets: &Targets) -> String {
    let h = &a.headlines;
    if h.series.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        r#"<section id="headlines"><h2>Headline figures</h2><div class="scroll"><table id="headline-table"><tr><th class="l">target</th><th class="l">phase</th><th>average</th><th>sustained (last third)</th><th>first drop at</th><th>time</th><th>rate after</th><th class="l">cause</th><th>SLC cache</th><th>after the cache</th></tr>"#,
    );
    for s in &h.series {
        let _ = write!(
            out,
            r#"<tr><td class="l">{}</td><td class="l">{}</td>{}{}{}{}{}{}{}{}</tr>"#,
            esc(targets.short(&s.target)),
            esc(&s.phase),
            figure_cell("average_bps", &s.average_bps, Kind::Rate),
            figure_cell("sustained_bps", &s.sustained_bps, Kind::Rate),
            figure_cell("drop_bytes", &s.drop_bytes, Kind::Data),
            figure_cell("drop_s", &s.drop_s, Kind::Seconds),
            figure_cell("after_drop_bps", &s.after_drop_bps, Kind::Rate),
            cause_cell(s),
            figure_cell("slc_cache_bytes", &s.slc_cache_bytes, Kind::Data),
            figure_cell("post_cache_bps", &s.post_cache_bps, Kind::Rate),
        );
    }
    out.push_str("</table></div>");
    // The phases the probe measured: energy, power and the enclosure.
    let probed: Vec<&SeriesHeadline> = h
        .series
        .iter()
        .filter(|s| s.j_per_gb.get().is_some() || s.peak_power_w.get().is_some())
        .collect();
    if !probed.is_empty() {
        out.push_str(r#"<div class="scroll"><table id="probe-figures-table"><tr><th class="l">target</th><th class="l">phase</th><th>energy per GB</th><th>mean bus power</th><th>peak bus power (1 s mean)</th><th>against the port's budget</th><th>enclosure maximum (1 s mean)</th></tr>"#);
        for s in probed {
            let _ = write!(
                out,
                r#"<tr><td class="l">{}</td><td class="l">{}</td>{}{}{}{}{}</tr>"#,
                esc(targets.short(&s.target)),
                esc(&s.phase),
                figure_cell("j_per_gb", &s.j_per_gb, Kind::JPerGb),
                figure_cell("mean_power_w", &s.mean_power_w, Kind::Power),
                figure_cell("peak_power_w", &s.peak_power_w, Kind::Power),
                budget_cell(a, &s.target, &s.phase),
                figure_cell("enclosure_max_c", &s.enclosure_max_c, Kind::Temperature),
            );
        }
        out.push_str("</table></div>");
    }
    match &h.thermal_fit {
        None => {}
        Some(Err(why)) => {
            let _ = write!(
                out,
                r#"<p id="thermal-fit">Enclosure thermal fit: none ({}).</p>"#,
                esc(why)
            );
        }
        Some(Ok(f)) => {
            let _ = write!(out, r#"<p id="thermal-fit">{}.</p>"#, esc(&f.text()));
            if let Some(p) = f.prediction_text() {
                let _ = write!(out, r#"<p id="thermal-prediction">{}.</p>"#, esc(&p));
            }
        }
    }
    out.push_str(r#"<p class="note">Brackets: 95 % intervals (onsets: the onset's 99.9 % interval); the first drop is the first of any cause, with that cause and its confidence; docs/methodology.md, "Headline figures".</p></section>"#);
    out
}

/// The phase's peak bus power as a share of the host port's budget: "peak 100 % of 4.5 W",
/// "unknown", or "none" where the probe did not measure the phase.
fn budget_cell(a: &Analysis, target: &str, phase: &str) -> String {
    let Some(p) = a
        .phases
        .iter()
        .find(|p| p.target == target && p.phase == phase)
        .and_then(|p| p.port.as_ref())
    else {
        return r#"<td class="none">none<br><span class="note">(no probe on this phase)</span></td>"#.into();
    };
    match (p.budget_w, p.peak_share) {
        (Some(b), Some(share)) => format!(
            "<td>peak {:.0} % of {}</td>",
            share * 100.0,
            esc(&hostd_records::port_figures::budget_text(b)),
        ),
        _ => "<td>budget unknown</td>".into(),
    }
}
