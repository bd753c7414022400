//! The operating system's section: what it logged about the storage path during the run
//! (`os-log.jsonl`: USB resets, UAS errors, disconnects, I/O errors), each line at its time
//! from the run's start, with the target it names. Absent where the log was not read.

use crate::svg::esc;
use crate::view::Targets;
use crate::NS;
use hostd_records::os_log::OsLogRecord;
use std::fmt::Write;

/// The lines of `log`, times from `t0`.
pub(crate) fn section(log: Option<&[OsLogRecord]>, t0: i64, targets: &Targets) -> String {
    let Some(log) = log else {
        return String::new();
    };
    let mut h = String::from(r#"<section id="os-log"><h2>What the operating system saw</h2>"#);
    if log.is_empty() {
        h.push_str("<p>The operating system logged no USB or storage trouble during the run.</p>");
    } else {
        h.push_str(r#"<table><tr><th>s</th><th class="l">target</th><th class="l">kind</th><th class="l">line</th></tr>"#);
        for r in log {
            let _ = write!(
                h,
                r#"<tr><td>{:.3}</td><td class="l">{}</td><td class="l">{}</td><td class="l">{}</td></tr>"#,
                (r.time_ns - t0) as f64 / NS,
                esc(r
                    .target
                    .as_deref()
                    .map_or("(another device)", |t| targets.short(t))),
                r.kind.as_str(),
                esc(&r.line)
            );
        }
        h.push_str("</table>");
    }
    h.push_str("</section>");
    h
}
