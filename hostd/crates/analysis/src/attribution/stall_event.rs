//! The `stall` event of a series: its stalls summarised, attributed through the same
//! [`CauseRule`](super::CauseRule)s as every event — `link` weighs stalls (a logged link
//! event on the target's device at at least half of them, `link.rs`), the other causes say
//! they do not.

use super::signs::Signs;
use super::{evidence, weigh, with_text, Context, Facts, NS};
use crate::detect::Change;
use crate::series::Series;
use crate::stall::SeriesStalls;
use crate::stats;
use hostd_records::cause::EventKind;
use hostd_records::events::{Event, FoundBy, StallSummary, View};

/// The `stall` event of a series: onset at its first stall, the count, durations and period
/// in `stall`; its cause from the rules that weigh stalls (`link`), else `unknown`.
pub fn stall_event(series: &Series, st: &SeriesStalls, ctx: &Context) -> Event {
    let first = st.stalls[0];
    let durations: Vec<f64> = st
        .stalls
        .iter()
        .map(|s| (s.end_ns - s.start_ns) as f64 / NS)
        .collect();
    let total_s: f64 = durations.iter().sum();
    let moved: u64 = st.stalls.iter().map(|s| s.bytes).sum();
    let gaps: Vec<f64> = st
        .stalls
        .windows(2)
        .map(|w| (w[1].start_ns - w[0].start_ns) as f64 / NS)
        .collect();
    let summary = StallSummary {
        count: st.stalls.len(),
        first_bytes: first.onset.bytes,
        first_ns: first.onset.ns,
        durations_s: durations,
        period_s: stats::median(&gaps),
        total_s,
        rate_during_bps: moved as f64 / total_s.max(1e-9),
        threshold_bps: st.threshold_bps,
    };
    let change = Change {
        kind: EventKind::Stall,
        onset: first.onset,
        settle_bytes: first.onset.bytes,
        settle_ns: first.onset.ns,
        gradual: false,
        p_value: st.p_value,
        permutations: st.chain_draws,
        view: View::OverTime,
        rate_before_bps: st.typical_bps,
        rate_after_bps: summary.rate_during_bps,
        before_ns: (series.start_ns(), first.start_ns),
        after_ns: (first.start_ns, series.end_ns()),
    };
    let mut ev = evidence::onset(series, &change, ctx, None);
    ev.duration_s = total_s;
    let facts = Facts {
        series,
        change: &change,
        ctx,
        later: &[],
        drop: true,
        rate_ratio: summary.rate_during_bps / st.typical_bps.max(1.0),
        slow: (first.start_ns, first.end_ns),
        others: Vec::new(),
        alone: true,
        power_falls: None,
        warmed: false,
        stalls: Some(st),
        log: None,
        port: None,
    };
    let mut signs = Signs::default();
    signs.note(format!(
        "stall: 100 ms intervals under {:.0} MB/s (a tenth of the typical {:.2} GB/s) for at least {} s",
        st.threshold_bps / 1e6,
        st.typical_bps / 1e9,
        crate::settings::MIN_STALL_S
    ));
    let mut event = weigh(facts, ev, signs);
    event.stall = Some(summary);
    event.found_by = FoundBy {
        view: View::OverTime,
        other_view: "per-file rates: a stall inside a file only slows that file".into(),
    };
    with_text(event)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stall::Stall;
    use hostd_records::cause::Cause;
    use hostd_records::os_log::OsLogKind;
    use hostd_records::os_log::OsLogRecord;
    use hostd_records::FileRecord;

    const S: i64 = 1_000_000_000;

    /// A series of 60 one-second files and its four 1.5 s stalls, 10 s apart from 10 s.
    fn stalled() -> (Series, SeriesStalls) {
        let files: Vec<FileRecord> = (0..60u32)
            .map(|i| {
                FileRecord::new(
                    "t",
                    "write",
                    i,
                    u64::from(i) * S as u64,
                    u64::from(i + 1) * S as u64,
                    100_000_000,
                )
            })
            .collect();
        let series = crate::series::group(&files).remove(0);
        let stalls = (0..4)
            .map(|k| {
                let start = (10 + 10 * k) * S;
                Stall {
                    start_ns: start,
                    end_ns: start + 3 * S / 2,
                    bytes: 10_000,
                    onset: crate::onset::Onset {
                        bytes: start as u64 / 10,
                        ns: start,
                        ns_range: (start - S / 10, start),
                        bytes_range: (start as u64 / 10 - 10_000_000, start as u64 / 10),
                    },
                }
            })
            .collect();
        let st = SeriesStalls {
            stalls,
            typical_bps: 1e8,
            threshold_bps: 1e7,
            p_value: 0.001,
            chain_draws: 999,
        };
        (series, st)
    }

    /// The context of `s` alone, with `log` as the OS's log.
    fn ctx<'a>(s: &'a Series, log: Option<&'a [OsLogRecord]>) -> Context<'a> {
        Context {
            all: std::slice::from_ref(s),
            probe: None,
            run_start_ns: 0,
            link_ceiling: None,
            drive_temp: None,
            drive_log: None,
            os_log: log,
            port_budget: None,
        }
    }

    /// An I/O error of target `t` logged at `at` ns.
    fn io_error(at: i64) -> OsLogRecord {
        OsLogRecord {
            time_ns: at,
            kind: OsLogKind::IoError,
            target: Some("t".into()),
            device: Some("sdb".into()),
            source: "kernel".into(),
            line: "blk_update_request: I/O error, dev sdb, sector 2048".into(),
        }
    }

    #[test]
    fn stalls_with_a_logged_link_event_at_half_or_more_of_them_are_link() {
        let (s, st) = stalled();
        // At the first two stalls: 0.3 s after one began, 0.5 s after the other ended.
        let log = [io_error(10 * S + 3 * S / 10), io_error(20 * S + 2 * S)];
        let e = stall_event(&s, &st, &ctx(&s, Some(&log[..])));
        assert_eq!(e.cause, Cause::Link, "{:#?}", e.evidence.reasons);
        assert_eq!(e.confidence, 0.45);
        assert_eq!(e.evidence.os_log.len(), 2);
        assert!(
            e.evidence.os_log[0].starts_with("+0.300 s io_error: blk_update_request"),
            "{:?}",
            e.evidence.os_log
        );
        assert!(e
            .evidence
            .reasons
            .iter()
            .any(|r| r.starts_with("✓ link:") && r.contains("2 of 4 stalls")));
    }

    #[test]
    fn stalls_without_a_logged_link_event_or_with_one_at_a_minority_stay_unknown() {
        let (s, st) = stalled();
        for log in [
            vec![],
            vec![io_error(30 * S)],
            vec![io_error(15 * S), io_error(26 * S)],
        ] {
            let e = stall_event(&s, &st, &ctx(&s, Some(&log[..])));
            assert_eq!(
                (e.cause, e.confidence),
                (Cause::Unknown, 0.0),
                "{log:?}: {:#?}",
                e.evidence.reasons
            );
        }
        let e = stall_event(&s, &st, &ctx(&s, None));
        assert_eq!(e.cause, Cause::Unknown);
        assert!(e
            .evidence
            .unread
            .contains(&hostd_records::events::Source::OsLog));
    }
}
