//! The events section: each event's line, onset interval and strength, the signs that
//! decided its cause (every rule checked behind a fold), its scores, the sources the run's
//! events could not read (once), and the cycle summaries.

use crate::svg::esc;
use crate::view::EventView;
use hostd_records::cause::EventKind;
use hostd_records::events::{Analysis, Event};
use hostd_records::published::Kind;
use std::fmt::Write;

/// The events and their causes, each beside its view's number and colour.
pub(crate) fn section(a: &Analysis, events: &[EventView]) -> String {
    let mut h = String::from(r#"<section id="attribution"><h2>Events and their causes</h2>"#);
    if let Some(line) = hostd_analysis::event_lines::too_little_line(a) {
        let _ = write!(h, "<p>{}</p>", esc(&line));
    } else if a.events.is_empty() {
        h.push_str("<p>No events.</p>");
    }
    h.push_str(&unread_html(a));
    for c in &a.cycles {
        let _ = write!(
            h,
            "<p>{}</p>",
            esc(&hostd_analysis::event_lines::cycle_line(c))
        );
    }
    for (e, v) in a.events.iter().zip(events) {
        let _ = write!(
            h,
            r#"<div class="event" style="border-left-color:{c}"><div><span class="badge" style="color:{c};border-color:{c}">{n}</span>{text}</div><ul>"#,
            c = v.color,
            n = v.number,
            // The analysis' line already carries the p-value and the onset interval.
            text = esc(&e.evidence.text),
        );
        let _ = write!(
            h,
            "<li>onset {} ({}), 99.9 % intervals; {} ({} {}){}</li>",
            Kind::Data.interval(
                e.onset_bytes as f64,
                e.onset_bytes_low as f64,
                e.onset_bytes_high as f64
            ),
            Kind::Seconds.interval(
                e.evidence.onset_s,
                e.evidence.onset_interval_s[0],
                e.evidence.onset_interval_s[1]
            ),
            esc(&hostd_analysis::event_lines::strength(e)),
            e.permutations,
            // docs/methodology.md: a drop is tested by block permutations; a stall against
            // draws from the run's own steady stalls (a Markov model of slow intervals).
            if e.kind == EventKind::Stall {
                "draws of the steady part's model"
            } else {
                "block permutations"
            },
            if e.gradual {
                format!(
                    "; gradual, settled at {}",
                    Kind::Data.text(e.settle_bytes as f64)
                )
            } else {
                String::new()
            }
        );
        h.push_str(&signs_html(e));
        for l in &e.evidence.os_log {
            let _ = write!(h, "<li>OS log: {}</li>", esc(l));
        }
        let scores: Vec<String> = e
            .evidence
            .scores
            .listed()
            .map(|(cause, score)| format!("{} {score:.2}", cause.label()))
            .collect();
        let _ = write!(h, "<li>scores: {}</li></ul></div>", scores.join(", "));
    }
    h.push_str("</section>");
    h
}

/// The run's sources its events could not read, once each (`hostd_analysis::event_lines::
/// unread_lines`); empty when every source was read.
pub(crate) fn unread_html(a: &Analysis) -> String {
    let lines = hostd_analysis::event_lines::unread_lines(a);
    if lines.is_empty() {
        return String::new();
    }
    let mut h = String::from(r#"<ul class="note unread">"#);
    for l in &lines {
        let _ = write!(h, "<li>{}</li>", esc(l));
    }
    h.push_str("</ul>");
    h
}

/// An event's signs as list items: the deciding ones (`evidence.deciding`), then every rule
/// checked behind a fold.
pub(crate) fn signs_html(e: &Event) -> String {
    let mut h = String::new();
    for d in &e.evidence.deciding {
        let _ = write!(h, r#"<li class="deciding">{}</li>"#, esc(d));
    }
    let reasons = &e.evidence.reasons;
    if !reasons.is_empty() {
        let _ = write!(
            h,
            r#"<li><details><summary>every rule checked ({})</summary><ul>"#,
            reasons.len()
        );
        for r in reasons {
            let _ = write!(h, "<li>{}</li>", esc(r));
        }
        h.push_str("</ul></details></li>");
    }
    h
}
