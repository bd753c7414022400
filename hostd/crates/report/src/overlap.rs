//! The overlap section: the window when all targets were active, the aggregate and each
//! target's share, and which target recovered after another finished.

use crate::svg::esc;
use crate::view::Targets;
use crate::NS;
use hostd_records::events::Analysis;
use hostd_records::published::Kind;
use std::fmt::Write;

/// A rate as every output writes it.
fn rate(bps: f64) -> String {
    Kind::Rate.text(bps)
}

/// The overlap of the targets, times from `t0`.
pub(crate) fn section(a: &Analysis, t0: i64, targets: &Targets) -> String {
    let o = &a.overlap;
    let mut h = String::from(r#"<section id="overlap"><h2>Targets active together</h2>"#);
    match (&o.window, o.aggregate_bps) {
        (Some(w), Some(agg)) => {
            let _ = write!(
                h,
                "<p>All {} targets were active from {:.1} s to {:.1} s ({:.1} s). Aggregate {}{}.</p><table><tr><th class=\"l\">target</th><th>GB in window</th><th>rate</th></tr>",
                o.targets.len(),
                (w.start_ns - t0) as f64 / NS,
                (w.end_ns - t0) as f64 / NS,
                w.duration_s,
                rate(agg),
                o.peak_aggregate_bps.map_or(String::new(), |p| format!(" (peak 1 s aggregate of the run {})", rate(p)))
            );
            for t in &o.per_target {
                let _ = write!(
                    h,
                    r#"<tr><td class="l">{}</td><td>{:.2}</td><td>{}</td></tr>"#,
                    esc(targets.short(&t.target)),
                    t.bytes / 1e9,
                    rate(t.rate_bps)
                );
            }
            h.push_str("</table>");
            for l in &o.lags {
                let _ = write!(
                    h,
                    "<p>{} recovered {:.1} s after {} finished.</p>",
                    esc(targets.short(&l.recovered_target)),
                    l.lag_s,
                    esc(targets.short(&l.ended_target))
                );
            }
        }
        _ => h.push_str("<p>One target (or no common time): no overlap window.</p>"),
    }
    h.push_str("</section>");
    h
}
