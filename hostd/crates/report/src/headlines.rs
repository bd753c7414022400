//! The headline figures section: per target and phase, each figure with its interval or
//! why it is missing, and the enclosure's thermal fit.

use crate::svg::esc;
use crate::view::Targets;
use hostd_analysis::summary::RateUnit;
use hostd_records::events::Analysis;
use std::fmt::Write;

/// Headline figures per target and phase, each with its interval or the reason it is
/// missing, and the enclosure's thermal fit.
pub(crate) fn section(a: &Analysis, targets: &Targets) -> String {
    use hostd_records::headline::Figure;
    let h = &a.headlines;
    if h.series.is_empty() {
        return String::new();
    }
    // The value, and its interval below it in the same unit (keeps the table narrow).
    let rate = |f: &Figure| match f.interval() {
        Some((v, lo, hi)) => {
            let u = RateUnit::of(v);
            format!(
                "{} {}<br><span class=\"note\">[{}–{}]</span>",
                u.num(v),
                u.name,
                u.num(lo),
                u.num(hi)
            )
        }
        None => "–".into(),
    };
    let num = |f: &Figure, unit: f64, d: usize| match f.interval() {
        Some((v, lo, hi)) => format!(
            "{:.d$}<br><span class=\"note\">[{:.d$}–{:.d$}]</span>",
            v / unit,
            lo / unit,
            hi / unit
        ),
        None => "–".into(),
    };
    let mut out = String::from(
        r#"<section id="headlines"><h2>Headline figures</h2><div class="scroll"><table id="headline-table"><tr><th class="l">target</th><th class="l">phase</th><th>average</th><th>sustained (last third)</th><th>SLC cache, GB</th><th>after the cache</th><th>to throttle, s</th><th>to throttle, GB</th><th>throttled</th><th>peak power / port budget</th></tr>"#,
    );
    let mut reasons: Vec<String> = Vec::new();
    for s in &h.series {
        let _ = write!(
            out,
            r#"<tr><td class="l">{}</td><td class="l">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
            esc(targets.short(&s.target)),
            esc(&s.phase),
            rate(&s.average_bps),
            rate(&s.sustained_bps),
            num(&s.slc_cache_bytes, 1e9, 1),
            rate(&s.post_cache_bps),
            num(&s.throttle_s, 1.0, 1),
            num(&s.throttle_bytes, 1e9, 1),
            rate(&s.throttled_bps),
            peak_against_budget(a, &s.target, &s.phase),
        );
        for (what, f) in [
            ("SLC cache", &s.slc_cache_bytes),
            ("throttle", &s.throttle_s),
            ("sustained", &s.sustained_bps),
        ] {
            if let Figure::Absent { absent } = f {
                let r = format!("{} {} {what}: {absent}", targets.short(&s.target), s.phase);
                if !reasons.contains(&r) {
                    reasons.push(r);
                }
            }
        }
    }
    out.push_str("</table></div>");
    if !reasons.is_empty() {
        let _ = write!(
            out,
            r#"<p class="note">– : {}.</p>"#,
            esc(&reasons.join("; "))
        );
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
    out.push_str(r#"<p class="note">Brackets: 95 % intervals (onsets: the onset's 99.9 % interval); docs/methodology.md, "Headline figures".</p></section>"#);
    out
}

/// The phase's peak bus power against the host port's budget: "4.50 W of 4.5 W<br>(100 %)",
/// "4.50 W<br>(budget unknown)", or "–" where the probe did not measure the phase.
fn peak_against_budget(a: &Analysis, target: &str, phase: &str) -> String {
    let Some(p) = a
        .phases
        .iter()
        .find(|p| p.target == target && p.phase == phase)
        .and_then(|p| p.port.as_ref())
    else {
        return "–".into();
    };
    match (p.budget_w, p.peak_share) {
        (Some(b), Some(share)) => format!(
            "{:.2} W of {b:.1} W<br><span class=\"note\">({:.0} %)</span>",
            p.peak_w,
            share * 100.0
        ),
        _ => format!(
            "{:.2} W<br><span class=\"note\">(budget unknown)</span>",
            p.peak_w
        ),
    }
}
