//! How the report names and colours what it draws: the targets' short labels, one view per
//! target and phase, and one per event with its markers on the charts.

use crate::svg::{Chart, Marker, PALETTE};
use crate::NS;
use hostd_records::events::{Analysis, Event};
use hostd_records::RunData;
use hostd_store::labels;

/// One target and phase as the charts draw it: its label, colour and key.
pub(crate) struct SeriesView {
    pub(crate) label: String,
    pub(crate) color: &'static str,
    pub(crate) target: String,
    pub(crate) phase: String,
}

/// Targets in order of first appearance, with their short labels.
pub(crate) struct Targets {
    pub(crate) full: Vec<String>,
    pub(crate) short: Vec<String>,
}

impl Targets {
    pub(crate) fn of(run: &RunData) -> Targets {
        let mut full: Vec<String> = Vec::new();
        for f in &run.files {
            if !full.contains(&f.target) {
                full.push(f.target.clone());
            }
        }
        let short = labels::short_labels(&full);
        Targets { full, short }
    }

    /// The short label of `target` (the target itself if unknown).
    pub(crate) fn short<'a>(&'a self, target: &'a str) -> &'a str {
        self.full
            .iter()
            .position(|t| t == target)
            .map_or(target, |i| self.short[i].as_str())
    }
}

/// One view per target and phase, in order of first appearance, each with its colour.
pub(crate) fn series_views(run: &RunData, targets: &Targets) -> Vec<SeriesView> {
    let mut v: Vec<SeriesView> = Vec::new();
    for f in &run.files {
        if !v.iter().any(|s| s.target == f.target && s.phase == f.phase) {
            let color = PALETTE[v.len() % PALETTE.len()];
            v.push(SeriesView {
                label: format!("{} {}", targets.short(&f.target), f.phase),
                color,
                target: f.target.clone(),
                phase: f.phase.clone(),
            });
        }
    }
    v
}

/// One event as the report lays it out: its number in the list, where it is
/// on each axis with its onset interval, and the analysis' own line for it.
pub(crate) struct EventView {
    pub(crate) number: usize,
    pub(crate) onset_gb: f64,
    pub(crate) onset_s: f64,
    pub(crate) gb_interval: Option<(f64, f64)>,
    pub(crate) s_interval: Option<(f64, f64)>,
    pub(crate) color: &'static str,
    /// The event's line in the list (also the markers' tooltip).
    pub(crate) line: String,
}

/// The view of every event of the analysis, numbered from 1.
pub(crate) fn event_views(
    a: &Analysis,
    views: &[SeriesView],
    targets: &Targets,
    t0: i64,
) -> Vec<EventView> {
    a.events
        .iter()
        .enumerate()
        .map(|(k, e)| event_view(k + 1, e, views, targets, t0))
        .collect()
}

/// The view of one event; its line is `hostd_analysis::event_lines::event_line` with the
/// target's short name.
pub(crate) fn event_view(
    number: usize,
    e: &Event,
    views: &[SeriesView],
    targets: &Targets,
    t0: i64,
) -> EventView {
    let since_t0 = |ns: i64| (ns - t0) as f64 / NS;
    let gb = |b: u64| b as f64 / 1e9;
    let color = views
        .iter()
        .find(|s| s.target == e.target && s.phase == e.phase)
        .map_or("#000", |s| s.color);
    let short = Event {
        target: targets.short(&e.target).to_string(),
        ..e.clone()
    };
    EventView {
        number,
        onset_gb: gb(e.onset_bytes),
        onset_s: since_t0(e.onset_ns),
        gb_interval: Some((gb(e.onset_bytes_low), gb(e.onset_bytes_high))),
        s_interval: Some((since_t0(e.onset_ns_low), since_t0(e.onset_ns_high))),
        color,
        line: hostd_analysis::event_lines::event_line(&short),
    }
}

/// The events' markers on a chart by time (`on_time`) or by data written.
pub(crate) fn markers_by(events: &[EventView], on_time: bool) -> Vec<Marker> {
    events
        .iter()
        .map(|e| Marker {
            x: if on_time { e.onset_s } else { e.onset_gb },
            band: if on_time { e.s_interval } else { e.gb_interval },
            number: e.number,
            title: format!("{}. {}", e.number, e.line),
            color: e.color.to_string(),
        })
        .collect()
}

/// Marks the events on a chart by time.
pub(crate) fn mark_events(c: &mut Chart, events: &[EventView]) {
    for m in markers_by(events, true) {
        c.marker(m);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An event is the analysis' line for it, with the target's short name, and its
    /// markers stand at its onset with its interval on both axes.
    #[test]
    fn events_read_as_the_analysis_says_them_and_mark_their_onset_interval() {
        let targets = Targets {
            full: vec!["/var/tmp/demo.X/target".into()],
            short: vec!["target".into()],
        };
        let views = vec![SeriesView {
            label: "target write".into(),
            color: PALETTE[0],
            target: "/var/tmp/demo.X/target".into(),
            phase: "write".into(),
        }];
        let t0 = 1_000_000_000_000;
        let event: Event = serde_json::from_value(serde_json::json!({
            "target": "/var/tmp/demo.X/target", "phase": "write", "kind": "drop",
            "onset_bytes": 23_900_000_000u64, "onset_ns": t0 + 312_000_000_000i64,
            "onset_bytes_low": 23_500_000_000u64, "onset_bytes_high": 24_300_000_000u64,
            "onset_ns_low": t0 + 308_200_000_000i64, "onset_ns_high": t0 + 316_100_000_000i64,
            "p_value": 0.004, "permutations": 999, "gradual": false,
            "settle_bytes": 23_900_000_000u64, "settle_ns": t0 + 312_000_000_000i64,
            "rate_before_bps": 2.31e9, "rate_after_bps": 0.66e9, "relative_change": -0.71,
            "cause": "slc_cache", "confidence": 0.9,
            "evidence": {"onset_gb": 23.9, "onset_s": 312.0,
                "onset_interval_gb": [23.5, 24.3], "onset_interval_s": [308.2, 316.1],
                "reasons": [], "text": "", "duration_s": 10.0, "onset_file_index": 40,
                "scores": {"thermal": 0.1, "slc_cache": 0.9, "contention": 0.0}}
        }))
        .unwrap();
        let e = event_view(3, &event, &views, &targets, t0);
        assert_eq!(
            e.line,
            hostd_analysis::event_lines::event_line(&Event {
                target: "target".into(),
                ..event.clone()
            })
        );
        assert!(
            e.line.starts_with("target write dropped at 23.9 GB"),
            "{}",
            e.line
        );
        let by_gb = &markers_by(std::slice::from_ref(&e), false)[0];
        assert_eq!(
            (by_gb.x, by_gb.band, by_gb.number),
            (23.9, Some((23.5, 24.3)), 3)
        );
        let by_time = &markers_by(std::slice::from_ref(&e), true)[0];
        assert_eq!(by_time.band, Some((308.2, 316.1)));
    }
}
