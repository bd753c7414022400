//! Multi-target overlap: the window in which every target was active, who moved what in
//! it, the peak aggregate of the run, and the lag from one target's end to another's
//! recovery.

use crate::attribution::rate_in_window;
use crate::series::Series;
use hostd_records::cause::EventKind;
use hostd_records::events::{Event, Lag, Overlap, TargetRate, Window};

const NS: i64 = 1_000_000_000;

/// Distinct targets in order of first appearance.
fn targets(all: &[Series]) -> Vec<String> {
    let mut t: Vec<String> = Vec::new();
    for s in all {
        if !t.contains(&s.target) {
            t.push(s.target.clone());
        }
    }
    t
}

/// Active span of a target across its phases.
fn span(all: &[Series], target: &str) -> (i64, i64) {
    let mine = all.iter().filter(|s| s.target == target);
    let start = mine.clone().map(Series::start_ns).min().unwrap_or(0);
    let end = mine.map(Series::end_ns).max().unwrap_or(0);
    (start, end)
}

/// Whole seconds a run needs before its peak aggregate counts as a link ceiling.
pub const MIN_WHOLE_SECONDS: usize = 5;

/// Highest aggregate throughput over the whole 1 s bins of the run, bytes/s; None when
/// fewer than [`MIN_WHOLE_SECONDS`] whole seconds were measured.
pub fn peak_aggregate_bps(all: &[Series]) -> Option<f64> {
    let start = all.iter().map(Series::start_ns).min()?;
    let end = all.iter().map(Series::end_ns).max()?;
    let bins = ((end - start) / NS + 1) as usize;
    if bins > 10_000_000 {
        return None;
    }
    let mut bytes = vec![0.0f64; bins];
    for f in all.iter().flat_map(|s| s.files.iter()) {
        let dur = ((f.end_ns as i64) - (f.start_ns as i64)).max(1) as f64;
        let (a, b) = ((f.start_ns as i64) - start, (f.end_ns as i64) - start);
        let mut t = a;
        while t < b {
            let bin = (t / NS) as usize;
            let next = ((bin as i64 + 1) * NS).min(b);
            bytes[bin] += f.bytes as f64 * (next - t) as f64 / dur;
            t = next;
        }
    }
    // Only whole bins: the last one is partial.
    let whole = ((end - start) / NS) as usize;
    if whole < MIN_WHOLE_SECONDS {
        return None;
    }
    bytes
        .into_iter()
        .take(whole)
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
}

/// The overlap summary; `events` supply the recoveries for the lags.
pub fn overlap(all: &[Series], events: &[Event]) -> Overlap {
    let names = targets(all);
    let mut out = Overlap {
        targets: names.clone(),
        peak_aggregate_bps: peak_aggregate_bps(all),
        ..Default::default()
    };
    if names.len() < 2 {
        return out;
    }
    let spans: Vec<(i64, i64)> = names.iter().map(|t| span(all, t)).collect();
    let start = spans.iter().map(|s| s.0).max().unwrap_or(0);
    let end = spans.iter().map(|s| s.1).min().unwrap_or(0);
    if end > start {
        out.window = Some(Window {
            start_ns: start,
            end_ns: end,
            duration_s: (end - start) as f64 / 1e9,
        });
        let mut total = 0.0;
        for t in &names {
            let rate = rate_in_window(
                all.iter()
                    .filter(|s| &s.target == t)
                    .flat_map(|s| s.files.iter()),
                start,
                end,
            );
            total += rate;
            out.per_target.push(TargetRate {
                target: t.clone(),
                bytes: rate * (end - start) as f64 / 1e9,
                rate_bps: rate,
            });
        }
        out.aggregate_bps = Some(total);
    }
    for (i, ended) in names.iter().enumerate() {
        let ended_ns = spans[i].1;
        for e in events
            .iter()
            .filter(|e| e.kind == EventKind::Recovery && &e.target != ended)
        {
            let lag = (e.onset_ns - ended_ns) as f64 / 1e9;
            let other_still_active =
                spans[names.iter().position(|n| n == &e.target).unwrap_or(0)].1 > ended_ns;
            if other_still_active && lag > 0.0 && lag <= 30.0 {
                out.lags.push(Lag {
                    ended_target: ended.clone(),
                    ended_ns,
                    recovered_target: e.target.clone(),
                    recovery_ns: e.onset_ns,
                    lag_s: lag,
                });
            }
        }
    }
    out
}
