//! The link to the drive failed: the operating system logged a reset of the USB device or
//! the storage link, a UAS error, a fallback to usb-storage, a slower re-enumeration, a
//! disconnect or an I/O error on this target's device around the onset (`os-log.jsonl`).
//! A drop counts when such a line lies within the event's log window (`log_window.rs`: 5 s
//! before to 2 s after its onset interval); a stall when one lies within [`STALL_BEFORE_S`]
//! before it began to [`STALL_AFTER_S`] after it ended (a command that hangs is aborted and the
//! device reset only when its timeout runs out, inside the stall). Lines about other or
//! unknown devices are listed as context and weigh nothing. See docs/methodology.md, "Link".

use super::log_window::{evidence_line, lines_in, secs, DROP_AFTER_S, DROP_BEFORE_S};
use super::{CauseRule, Checks, Facts, NS};
use hostd_records::cause::Cause;
use hostd_records::events::{Evidence, Source};
use hostd_records::os_log::OsLogRecord;
use hostd_records::published::signed;
/// A line counts for a stall from this long before it began, s.
pub const STALL_BEFORE_S: f64 = 2.0;
/// …to this long after it ended, s.
pub const STALL_AFTER_S: f64 = 1.0;
/// The weight of a logged link event on this target's device.
pub const WEIGHT: f64 = 0.9;

/// The rules for "the link to the drive failed".
pub(super) struct Link;

impl CauseRule for Link {
    fn cause(&self) -> Cause {
        Cause::Link
    }

    fn weighs_stalls(&self) -> bool {
        true
    }

    fn score(&self, facts: &Facts, ev: &mut Evidence, r: &mut Checks) {
        let Some(log) = facts.ctx.os_log else {
            r.unread(Source::OsLog);
            return;
        };
        if let Some(st) = facts.stalls {
            let spans: Vec<(i64, i64)> = st.stalls.iter().map(|s| (s.start_ns, s.end_ns)).collect();
            let (share, lines, words) = stalls(log, &facts.series.target, &spans);
            ev.os_log = lines;
            r.check(WEIGHT * share, share >= 0.5, words);
            return;
        }
        let Some(window) = facts.log.as_ref().filter(|_| facts.drop) else {
            r.cannot("a recovery: a logged link event explains only a drop or a stall".into());
            return;
        };
        let at = facts.change.onset.ns;
        let ours = &window.ours;
        ev.os_log = ours.iter().map(|r| evidence_line(r, at)).collect();
        context_lines(&window.context, at, r);
        r.check(
            WEIGHT,
            !ours.is_empty(),
            match ours.first() {
                Some(first) => format!(
                    "the OS logged {} on this drive's link {} s from the onset ({} line{} within −{DROP_BEFORE_S:.0}/+{DROP_AFTER_S:.0} s)",
                    first.kind.as_str(),
                    signed((first.time_ns - at) as f64 / NS, 1),
                    ours.len(),
                    if ours.len() == 1 { "" } else { "s" }
                ),
                None => format!(
                    "the OS logged nothing about this drive's link within −{DROP_BEFORE_S:.0}/+{DROP_AFTER_S:.0} s of the onset"
                ),
            },
        );
    }
}

/// Lines about other or unknown devices near the onset: listed, weighing nothing.
fn context_lines(context: &[&OsLogRecord], at: i64, r: &mut Checks) {
    if let Some(first) = context.first() {
        r.cannot(format!(
            "{} line{} about another or an unknown device (context, no weight), first: {}",
            context.len(),
            if context.len() == 1 { "" } else { "s" },
            evidence_line(first, at)
        ));
    }
}

/// The stalls' attribution: the share of stalls with a logged link event of `target` in
/// their window, the lines (from the first stall's start), and a reason.
pub(super) fn stalls(
    log: &[OsLogRecord],
    target: &str,
    stalls: &[(i64, i64)],
) -> (f64, Vec<String>, String) {
    let Some(&(first, _)) = stalls.first() else {
        return (0.0, Vec::new(), String::new());
    };
    let mut lines = Vec::new();
    let mut with = 0usize;
    for &(a, b) in stalls {
        let (ours, _) = lines_in(
            log,
            target,
            (a - secs(STALL_BEFORE_S), b + secs(STALL_AFTER_S)),
        );
        if !ours.is_empty() {
            with += 1;
        }
        lines.extend(ours.into_iter().map(|r| evidence_line(r, first)));
    }
    lines.dedup();
    let share = with as f64 / stalls.len() as f64;
    let reason = format!(
        "the OS logged a link event on this drive's link within −{STALL_BEFORE_S:.0} s/+{STALL_AFTER_S:.0} s of {with} of {} stalls (link when at least half)",
        stalls.len()
    );
    (share, lines, reason)
}
