//! The comparison's tables: the runs (and the directories that could not be compared),
//! what was left out, the conditions with those that differ highlighted, and every run's
//! events with their causes and confidence.

use super::{CompareRun, Comparison};
use crate::svg::esc;
use std::fmt::Write;

/// Each run's events numbered through the page (1, 2, … over all runs, in run order).
pub(crate) fn event_numbers(runs: &[CompareRun]) -> Vec<Vec<usize>> {
    let mut next = 1;
    runs.iter()
        .map(|r| {
            let n: Vec<usize> = (next..next + r.analysis.events.len()).collect();
            next += r.analysis.events.len();
            n
        })
        .collect()
}

/// The runs compared, the directories skipped with their reasons, and what was left out.
pub(crate) fn runs_section(
    runs: &[CompareRun],
    c: &Comparison,
    skipped: &[(String, String)],
) -> String {
    let mut h = String::from(
        r#"<section id="runs"><h2>Runs</h2><div class="scroll"><table id="runs-table"><tr><th class="l">run</th><th class="l">directory</th><th class="l">profile</th><th class="l">target followed</th><th>files</th><th>GB</th><th>events</th></tr>"#,
    );
    for (r, cr) in runs.iter().zip(&c.runs) {
        let subject = r.subject().unwrap_or("");
        let mine = r.run.files.iter().filter(|f| f.target == subject);
        let (n, bytes) = mine.fold((0usize, 0u64), |(n, b), f| (n + 1, b + f.bytes));
        let _ = write!(
            h,
            r#"<tr><td class="l"><span class="swatch" style="background:{}"></span>{}</td><td class="l path">{}</td><td class="l">{}</td><td class="l">{}</td><td>{n}</td><td>{:.1}</td><td>{}</td></tr>"#,
            cr.color,
            esc(&cr.label),
            esc(&cr.run),
            esc(cr.profile.as_deref().unwrap_or("—")),
            esc(subject),
            bytes as f64 / 1e9,
            r.analysis.events.len()
        );
    }
    h.push_str("</table></div>");
    if !skipped.is_empty() {
        h.push_str(r#"<p>Not compared:</p><ul id="skipped">"#);
        for (dir, why) in skipped {
            let _ = write!(h, "<li><b>{}</b>: {}</li>", esc(dir), esc(why));
        }
        h.push_str("</ul>");
    }
    if !c.left_out.is_empty() {
        h.push_str(r#"<p>Left out:</p><ul id="left-out">"#);
        for l in &c.left_out {
            let _ = write!(h, "<li>{}</li>", esc(l));
        }
        h.push_str("</ul>");
    }
    if !c.phases.is_empty() {
        let _ = write!(
            h,
            r#"<p class="note" id="compared-phases">Compared: {} of each run's followed target.</p>"#,
            esc(&c.phases.join(", "))
        );
    }
    h.push_str("</section>");
    h
}

/// One row of the conditions table: what, and its value in each run.
fn condition_rows(runs: &[CompareRun]) -> Vec<(String, Vec<String>)> {
    let mut rows: Vec<(String, Vec<String>)> = Vec::new();
    let target_info = |r: &CompareRun| {
        let s = r.subject()?;
        r.manifest
            .as_ref()?
            .targets
            .iter()
            .find(|t| t.label == s)
            .cloned()
    };
    let opt = |v: Option<String>| v.unwrap_or_else(|| "—".into());
    rows.push((
        "profile".into(),
        runs.iter().map(|r| opt(r.profile())).collect(),
    ));
    rows.push((
        "target".into(),
        runs.iter()
            .map(|r| opt(r.subject().map(str::to_string)))
            .collect(),
    ));
    rows.push((
        "device model".into(),
        runs.iter()
            .map(|r| opt(target_info(r).and_then(|t| t.device_model)))
            .collect(),
    ));
    rows.push((
        "link".into(),
        runs.iter()
            .map(|r| opt(target_info(r).and_then(|t| t.link).map(|l| l.text)))
            .collect(),
    ));
    rows.push((
        "engine".into(),
        runs.iter()
            .map(|r| opt(target_info(r).map(|t| t.engine)))
            .collect(),
    ));
    rows.push((
        "host".into(),
        runs.iter()
            .map(|r| {
                opt(r
                    .manifest
                    .as_ref()
                    .map(|m| m.host.hostname.clone())
                    .filter(|h| !h.is_empty()))
            })
            .collect(),
    ));
    let mut keys: Vec<&String> = runs
        .iter()
        .flat_map(|r| r.run.conditions.tags.keys())
        .collect();
    keys.sort();
    keys.dedup();
    for k in keys {
        rows.push((
            format!("tag {k}"),
            runs.iter()
                .map(|r| opt(r.run.conditions.tags.get(k).cloned()))
                .collect(),
        ));
    }
    rows.push((
        "notes".into(),
        runs.iter()
            .map(|r| r.run.conditions.notes.join("; "))
            .map(|n| if n.is_empty() { "—".into() } else { n })
            .collect(),
    ));
    rows.push((
        "preparation".into(),
        runs.iter()
            .map(|r| {
                let p: Vec<String> = r
                    .run
                    .conditions
                    .preparation
                    .iter()
                    .map(|p| p.describe())
                    .collect();
                if p.is_empty() {
                    "—".into()
                } else {
                    p.join("; ")
                }
            })
            .collect(),
    ));
    rows
}

/// The conditions of every run side by side; the rows whose values differ are highlighted
/// and listed first.
pub(crate) fn conditions_section(runs: &[CompareRun], c: &Comparison) -> String {
    let rows = condition_rows(runs);
    let differs = |v: &[String]| v.iter().any(|x| x != &v[0]);
    let (mut diff, same): (Vec<_>, Vec<_>) = rows.into_iter().partition(|(_, v)| differs(v));
    let names: Vec<&str> = diff.iter().map(|(k, _)| k.as_str()).collect();
    let mut h = String::from(r#"<section id="compare-conditions"><h2>Conditions</h2>"#);
    let _ = write!(
        h,
        r#"<p id="conditions-differ">{}</p>"#,
        if names.is_empty() {
            "The runs' recorded conditions are the same.".to_string()
        } else {
            esc(&format!(
                "Differing between the runs (highlighted): {}.",
                names.join(", ")
            ))
        }
    );
    h.push_str(
        r#"<div class="scroll"><table id="conditions-table"><tr><th class="l">condition</th>"#,
    );
    for r in &c.runs {
        let _ = write!(h, r#"<th class="l">{}</th>"#, esc(&r.label));
    }
    h.push_str("</tr>");
    diff.extend(same);
    for (k, v) in &diff {
        let _ = write!(
            h,
            r#"<tr{}><td class="l">{}</td>"#,
            if differs(v) {
                r#" class="differs""#
            } else {
                ""
            },
            esc(k)
        );
        for x in v {
            let _ = write!(h, r#"<td class="l path">{}</td>"#, esc(x));
        }
        h.push_str("</tr>");
    }
    h.push_str("</table></div></section>");
    h
}

/// Every run's events, numbered as on the charts, with cause, confidence and evidence.
pub(crate) fn events_section(
    runs: &[CompareRun],
    c: &Comparison,
    numbers: &[Vec<usize>],
) -> String {
    let mut h = String::from(r#"<section id="compare-events"><h2>Events</h2>"#);
    for ((r, cr), nums) in runs.iter().zip(&c.runs).zip(numbers) {
        let _ = write!(
            h,
            r#"<h3><span class="swatch" style="background:{}"></span>{}</h3>"#,
            cr.color,
            esc(&cr.label)
        );
        if r.analysis.events.is_empty() {
            let line = hostd_analysis::event_lines::too_little_line(&r.analysis)
                .unwrap_or_else(|| "no throttling: no drop or recovery found".into());
            let _ = write!(h, r#"<p class="note">{}.</p>"#, esc(&line));
            continue;
        }
        h.push_str(&crate::attribution::unread_html(&r.analysis));
        h.push_str(r#"<ol class="events">"#);
        for (e, n) in r.analysis.events.iter().zip(nums) {
            let _ = write!(
                h,
                r#"<li data-event="{n}"><span class="badge" style="border-color:{c};color:{c}">{n}</span>{} <span class="note">— cause <span class="cause">{}</span>, confidence {:.2}</span><ul class="note">"#,
                esc(&hostd_analysis::event_lines::event_line(e)),
                esc(e.cause.as_str()),
                e.confidence,
                c = cr.color
            );
            h.push_str(&crate::attribution::signs_html(e));
            h.push_str("</ul></li>");
        }
        h.push_str("</ol>");
    }
    h.push_str("</section>");
    h
}
