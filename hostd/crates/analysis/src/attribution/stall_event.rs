//! The `stall` event of a series: its stalls summarised; `link` when the operating system
//! logged a link event on the target's device at at least half of them (`link.rs`), else
//! no cause.

use super::{with_text, NS};
use crate::series::Series;
use crate::stall::SeriesStalls;
use crate::stats;
use hostd_records::cause::{Cause, EventKind};
use hostd_records::events::{Event, Evidence, Scores, StallSummary};
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
            scores: Scores {
                link: link_score,
                ..Default::default()
            },
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
