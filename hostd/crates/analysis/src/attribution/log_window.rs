//! What the operating system logged about the storage path around one event
//! (`os-log.jsonl`), gathered once per event for every rule that reads it: the lines of this
//! target's device inside the drop's window, and those of no known device (context).

use super::NS;
use crate::detect::Change;
use hostd_records::os_log::OsLogRecord;

/// A line counts for a drop from this long before its onset interval, s (a re-enumeration
/// at a lower speed takes a few seconds from the disconnect to the slower transfers).
pub const DROP_BEFORE_S: f64 = 5.0;
/// …to this long after it, s.
pub const DROP_AFTER_S: f64 = 2.0;

/// The OS log's lines around a drop's onset interval, from [`DROP_BEFORE_S`] before it to
/// [`DROP_AFTER_S`] after it.
#[derive(Debug, Clone)]
pub struct LogWindow<'a> {
    /// Lines about this target's device, in time order.
    pub ours: Vec<&'a OsLogRecord>,
    /// Lines about no known device (context, weighing nothing), in time order.
    pub context: Vec<&'a OsLogRecord>,
}

impl<'a> LogWindow<'a> {
    /// The lines of `log` around `change`'s onset interval, for `target`.
    pub fn around(log: &'a [OsLogRecord], target: &str, change: &Change) -> LogWindow<'a> {
        let window = (
            change.onset.ns_range.0 - secs(DROP_BEFORE_S),
            change.onset.ns_range.1 + secs(DROP_AFTER_S),
        );
        let (ours, context) = lines_in(log, target, window);
        LogWindow { ours, context }
    }
}

/// `s` seconds in ns.
pub fn secs(s: f64) -> i64 {
    (s * NS) as i64
}

/// The records inside `window` (host ns, inclusive): those of `target`, and those of no
/// known target (context).
pub fn lines_in<'a>(
    log: &'a [OsLogRecord],
    target: &str,
    window: (i64, i64),
) -> (Vec<&'a OsLogRecord>, Vec<&'a OsLogRecord>) {
    let inside = log
        .iter()
        .filter(move |r| r.time_ns >= window.0 && r.time_ns <= window.1);
    let ours = inside
        .clone()
        .filter(|r| r.target.as_deref() == Some(target))
        .collect();
    let context = inside.filter(|r| r.target.is_none()).collect();
    (ours, context)
}

/// A record as the event's evidence lists it: seconds from `at`, its kind, its line.
pub fn evidence_line(r: &OsLogRecord, at: i64) -> String {
    format!(
        "{} s {}: {}",
        hostd_records::published::signed((r.time_ns - at) as f64 / NS, 3),
        r.kind.as_str(),
        r.line
    )
}
