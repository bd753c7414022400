//! The summary section: the events in one line each, numbered as the charts mark them, or
//! why there are none.

use crate::svg::esc;
use crate::view::EventView;
use hostd_records::events::Analysis;
use std::fmt::Write;

/// The summary of analysis `a`, its events as `events` lays them out.
pub(crate) fn section(a: &Analysis, events: &[EventView]) -> String {
    let mut h = String::new();
    // Summary: the events, numbered as the charts mark them.
    h.push_str(r#"<section id="summary"><h2>Summary</h2>"#);
    if let Some(line) = hostd_analysis::event_lines::too_little_line(a) {
        let _ = write!(h, "<p>{}</p>", esc(&line));
    } else if events.is_empty() {
        h.push_str("<p>No change in throughput beyond noise.</p>");
    } else {
        h.push_str(r#"<ol class="events" id="event-list">"#);
        for e in events {
            let _ = write!(
                h,
                r#"<li data-event="{n}"><span class="badge" style="color:{c};border-color:{c}">{n}</span>{line}</li>"#,
                n = e.number,
                c = e.color,
                line = esc(&e.line),
            );
        }
        h.push_str("</ol>");
    }
    h.push_str("</section>");
    h
}
