//! The `stall` event of a series: its stalls summarised; `link` when the operating system
//! logged a link event on the target's device at at least half of them (`link.rs`), else
//! no cause.

use super::{with_text, NS};
use crate::series::Series;
use crate::stall::SeriesStalls;
use crate::stats;
use hostd_records::cause::{Cause, EventKind};
use hostd_records::events::{Event, Evidence, StallSummary};
use hostd_records::os_log::OsLogRecord;

/// The `stall` event of a series: onset at its first stall, the count, durations and period
/// in `stall`. Its cause is `link` when `os_log` (the OS's log, when read) has a link event
/// on this target's device at at least half of its stalls, else `unknown`.
pub fn stall_event(
    series: &Series,
    st: &SeriesStalls,
    run_start_ns: i64,
    os_log: Option<&[OsLogRecord]>,
) -> Event {
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
    let period_s = stats::median(&gaps);
    let since = |ns: i64| (ns - run_start_ns) as f64 / NS;
    let summary = StallSummary {
        count: st.stalls.len(),
        first_bytes: first.bytes_at_start,
        first_ns: first.start_ns,
        durations_s: durations,
        period_s,
        total_s,
        rate_during_bps: moved as f64 / total_s.max(1e-9),
        threshold_bps: st.threshold_bps,
    };
    let spans: Vec<(i64, i64)> = st.stalls.iter().map(|s| (s.start_ns, s.end_ns)).collect();
    let (share, os_lines, link_reason) = match os_log {
        Some(log) => super::link::stalls(log, &series.target, &spans),
        None => (
            0.0,
            Vec::new(),
            "✗ link: the operating system's log was not read".to_string(),
        ),
    };
    let link_score = super::link::WEIGHT * share;
    let (cause, confidence) = if share >= 0.5 {
        (Cause::Link, (link_score * 100.0).round() / 100.0)
    } else {
        (Cause::Unknown, 0.0)
    };
    let event = Event {
        target: series.target.clone(),
        phase: series.phase.clone(),
        kind: EventKind::Stall,
        onset_bytes: first.bytes_at_start,
        onset_ns: first.start_ns,
        onset_bytes_low: first.start_range_bytes.0,
        onset_bytes_high: first.start_range_bytes.1,
        onset_ns_low: first.start_range_ns.0,
        onset_ns_high: first.start_range_ns.1,
        p_value: st.p_value,
        permutations: st.permutations,
        gradual: false,
        settle_bytes: first.bytes_at_start,
        settle_ns: first.start_ns,
        rate_before_bps: st.typical_bps,
        rate_after_bps: summary.rate_during_bps,
        relative_change: summary.rate_during_bps / st.typical_bps.max(1.0) - 1.0,
        stall: Some(summary),
        cause,
        confidence,
        evidence: Evidence {
            scores: [(Cause::Link, link_score)].into_iter().collect(),
            os_log: os_lines,
            onset_gb: first.bytes_at_start as f64 / 1e9,
            onset_s: since(first.start_ns),
            onset_interval_gb: [
                first.start_range_bytes.0 as f64 / 1e9,
                first.start_range_bytes.1 as f64 / 1e9,
            ],
            onset_interval_s: [since(first.start_range_ns.0), since(first.start_range_ns.1)],
            duration_s: total_s,
            onset_file_index: series
                .files
                .iter()
                .rev()
                .find(|f| (f.start_ns as i64) <= first.start_ns)
                .map_or(0, |f| u64::from(f.index)),
            reasons: vec![
                format!(
                    "stall: 100 ms intervals under {:.0} MB/s (a tenth of the typical {:.2} GB/s) for at least {} s",
                    st.threshold_bps / 1e6,
                    st.typical_bps / 1e9,
                    crate::stall::MIN_STALL_S
                ),
                link_reason,
            ],
            ..Default::default()
        },
    };
    with_text(event)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stall::Stall;
    use hostd_records::os_log::OsLogKind;
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
                    bytes_at_start: start as u64 / 10,
                    bytes: 10_000,
                    start_range_ns: (start - S / 10, start),
                    start_range_bytes: (start as u64 / 10 - 10_000_000, start as u64 / 10),
                }
            })
            .collect();
        let st = SeriesStalls {
            stalls,
            typical_bps: 1e8,
            threshold_bps: 1e7,
            p_value: 0.001,
            permutations: 999,
        };
        (series, st)
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
        let e = stall_event(&s, &st, 0, Some(&log));
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
            let e = stall_event(&s, &st, 0, Some(&log));
            assert_eq!(
                (e.cause, e.confidence),
                (Cause::Unknown, 0.0),
                "{log:?}: {:#?}",
                e.evidence.reasons
            );
        }
        let e = stall_event(&s, &st, 0, None);
        assert_eq!(e.cause, Cause::Unknown);
        assert!(e
            .evidence
            .reasons
            .iter()
            .any(|r| r.contains("log was not read")));
    }
}
