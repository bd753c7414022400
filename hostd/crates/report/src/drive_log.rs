//! The drive's own thermal record: per target, what its counters (NVMe thermal management
//! transitions and time, warning/critical temperature time, SATA SCT over-limit events) read
//! at the first and last reading of the run and how much they grew; nothing when the run has
//! no `drive_log.csv`.

use crate::svg::esc;
use crate::view::Targets;
use hostd_records::drive_log::{DriveLogDelta, DriveLogRecord};
use hostd_records::RunData;
use std::fmt::Write;

/// One counter of a reading, if the drive reports it.
type Counter = fn(&DriveLogRecord) -> Option<u64>;

/// The rows of the table: name and value of one reading.
const COUNTERS: [(&str, Counter); 7] = [
    ("TMT1 transitions", |r| r.tmt1_transitions),
    ("s at TMT1", |r| r.tmt1_time_s),
    ("TMT2 transitions", |r| r.tmt2_transitions),
    ("s at TMT2", |r| r.tmt2_time_s),
    ("min above warning temperature", |r| r.warning_temp_time_min),
    ("min above critical temperature", |r| {
        r.critical_comp_time_min
    }),
    ("SCT over-limit events", |r| r.sct_over_limit_count),
];

/// The section, or nothing without a drive log.
pub(crate) fn section(run: &RunData, targets: &Targets) -> String {
    let Some(logs) = run
        .drive_log
        .as_ref()
        .filter(|l| l.values().any(|v| !v.is_empty()))
    else {
        return String::new();
    };
    let mut h = String::from(
        r#"<section id="drive-log"><h2>The drive's own thermal record</h2><p class="note">What the drive itself counted (smartctl: the NVMe health log, or a SATA drive's SCT status), first and last reading of the run; a grown counter is the drive logging throttling or heat (docs/methodology.md).</p><div class="scroll"><table id="drive-log-table"><tr><th class="l">target</th><th class="l">counter</th><th>first</th><th>last</th><th>grew by</th></tr>"#,
    );
    for (target, rows) in logs {
        let (Some(first), Some(last)) = (rows.first(), rows.last()) else {
            continue;
        };
        let short = targets.short(target);
        let d = DriveLogDelta::between(first, last);
        for (name, get) in COUNTERS {
            let (Some(a), Some(b)) = (get(first), get(last)) else {
                continue;
            };
            let _ = write!(
                h,
                r#"<tr><td class="l">{}</td><td class="l">{name}</td><td>{a}</td><td>{b}</td><td>{}</td></tr>"#,
                esc(short),
                b.saturating_sub(a)
            );
        }
        let sensors = [&first.sensors, &last.sensors];
        if sensors.iter().any(|s| !s.is_empty()) {
            let _ = write!(
                h,
                r#"<tr><td class="l">{}</td><td class="l">temperature sensors, °C</td><td>{}</td><td>{}</td><td></td></tr>"#,
                esc(short),
                esc(sensors[0]),
                esc(sensors[1])
            );
        }
        let verdict = if !d.has_counters() {
            "no thermal counters reported".to_string()
        } else if d.logged_heat() {
            format!("logged {}", d.words())
        } else {
            "logged no throttling".to_string()
        };
        let _ = write!(
            h,
            r#"<tr><td class="l">{}</td><td class="l" colspan="4">{} readings over {:.0} s: {}</td></tr>"#,
            esc(short),
            rows.len(),
            d.seconds,
            esc(&verdict)
        );
    }
    h.push_str("</table></div></section>");
    h
}
