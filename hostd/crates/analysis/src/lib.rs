//! hostd-analysis: turns a run's per-file records and probe samples into robust
//! statistics, located throughput drops and recoveries, their causes with evidence, and
//! the multi-target overlap. Everything here is offline: it reads a run directory.

#![warn(missing_docs)]

pub mod attribution;
pub mod changepoint;
pub mod detect;
pub mod event_lines;
pub mod fill_states;
pub mod headline;
pub mod input;
pub mod observation;
pub mod onset;
pub mod overlap;
mod ramp_fit;
pub mod run_summary;
pub mod series;
pub mod settings;
pub mod significance;
pub mod stall;
pub mod stats;
pub mod throughput;
pub mod views;

pub use input::read_run_dir;

use settings::{SHARED_FRACTION, WARM_UP_FRACTION};

use hostd_records::cause::EventKind;
use hostd_records::events::{CycleSummary, Insufficient};
use hostd_records::{Analysis, FileRecord, RunData};
use std::path::Path;

/// Knobs of one analysis; the defaults are what `hostd analyze` uses.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Change-point settings.
    pub changepoint: settings::Settings,
    /// Known link ceiling, bytes/s; otherwise the peak 1 s aggregate of the run.
    pub link_ceiling_bps: Option<f64>,
    /// Target the probe sits on; otherwise the only target, or the manifest's
    /// `probe_target`, or none (probe evidence unused for attribution).
    pub probe_target: Option<String>,
}

/// Analyses records already in memory.
pub fn analyze(run: &RunData, options: &Options) -> Analysis {
    // Only completed files (status `ok`), as the run's summary counts them: a file cut short
    // by an error or an interrupt is no throughput sample.
    let ok: Vec<FileRecord> = run
        .files
        .iter()
        .filter(|f| f.status == "ok")
        .cloned()
        .collect();
    let all = series::group(&ok);
    let run_start_ns = all.iter().map(series::Series::start_ns).min().unwrap_or(0);
    let mut distinct: Vec<&str> = all.iter().map(|s| s.target.as_str()).collect();
    distinct.dedup();
    distinct.sort_unstable();
    distinct.dedup();
    let probe_target = options
        .probe_target
        .clone()
        .or_else(|| run.probe_target.clone())
        .or_else(|| (distinct.len() == 1).then(|| distinct[0].to_string()));
    let ceiling = options
        .link_ceiling_bps
        .map(|c| (c, true))
        .or_else(|| overlap::peak_aggregate_bps(&all).map(|c| (c, false)));
    let mut events = Vec::new();
    let mut phases = Vec::new();
    let mut insufficient = Vec::new();
    let mut cycles = Vec::new();
    for s in &all {
        let probe = run
            .probe
            .as_ref()
            .filter(|_| probe_target.as_deref() == Some(s.target.as_str()));
        let mut stats = series::phase_stats(s, probe, &run.latency);
        stats.port = probe.and_then(|p| {
            hostd_records::port_figures::phase_power(
                p,
                (stats.start_ns, stats.end_ns),
                &run.budget_timeline,
            )
        });
        phases.push(stats);
        let ctx = attribution::Context {
            all: &all,
            probe,
            run_start_ns,
            link_ceiling: ceiling,
            drive_temp: run
                .drive_temp
                .as_ref()
                .and_then(|d| d.get(&s.target))
                .map(Vec::as_slice),
            drive_log: run
                .drive_log
                .as_ref()
                .and_then(|d| d.get(&s.target))
                .map(Vec::as_slice),
            os_log: run.os_log.as_deref(),
            port_budget: Some(&run.budget_timeline),
        };
        let counter = input::counter_points(run, &s.target);
        // Over time, a target sharing the link sees every start and end of the others' files:
        // its view over time searches the stretches it had the link alone.
        let beside = all
            .iter()
            .filter(|o| o.target != s.target)
            .map(|o| (o.end_ns().min(s.end_ns()) - o.start_ns().max(s.start_ns())).max(0))
            .max()
            .unwrap_or(0) as f64;
        let share = beside / (s.end_ns() - s.start_ns()).max(1) as f64;
        let busy = if share > SHARED_FRACTION {
            observation::busy_stretches(
                all.iter()
                    .filter(|o| o.target != s.target)
                    .flat_map(|o| &o.files),
            )
        } else {
            Vec::new()
        };
        let stalls = counter.as_ref().and_then(|c| stall::find(s, c));
        let over_time = match counter.as_deref() {
            None => Err("no byte counters for this target (counters.csv)".to_string()),
            Some(points) => Ok(views::Counter {
                points,
                busy: &busy,
                shared: format!(
                    "another target shared the link for {:.0} % of this phase",
                    100.0 * share
                ),
            }),
        };
        let detected = match views::changes(s, over_time, stalls.as_ref(), &options.changepoint) {
            Ok(c) => c,
            Err(too_little) => {
                insufficient.push(Insufficient {
                    target: s.target.clone(),
                    phase: s.phase.clone(),
                    files: s.files.len(),
                    bytes: s.total_bytes(),
                    seconds: (s.end_ns() - s.start_ns()) as f64 * 1e-9,
                    reason: too_little.reason,
                });
                continue;
            }
        };
        let changes: Vec<detect::Change> = detected.iter().map(|d| d.change.clone()).collect();
        for (k, (c, d)) in changes.iter().zip(&detected).enumerate() {
            let next = changes.get(k + 1).map(|n| n.onset.ns);
            let mut e = attribution::attribute(s, c, &ctx, next, &changes[k + 1..]);
            e.found_by = d.found_by.clone();
            if k == 0 && is_warm_up(&e, s.total_bytes()) {
                e = attribution::as_warm_up(e);
            }
            events.push(e);
        }
        if let Some(st) = &stalls {
            events.push(attribution::stall_event(s, st, &ctx));
        }
        if let Some(c) = cycle_summary(s, &changes) {
            cycles.push(c);
        }
    }
    events.sort_by_key(|e| e.onset_ns);
    for p in &mut phases {
        p.levels_explained_by = series::levels_explained_by(p, &events);
    }
    let overlap = overlap::overlap(&all, &events);
    let headlines = headline::headlines(
        &all,
        &events,
        headline::Context {
            probe: run.probe.as_ref(),
            probe_target: probe_target.as_deref(),
            phases: &phases,
            insufficient: &insufficient,
        },
    );
    Analysis {
        events,
        phases,
        overlap,
        insufficient,
        cycles,
        headlines,
        gate_waits: run.gate_waits.clone(),
    }
}

/// True when `e`, the first event of a series of `total` bytes, is a warm-up.
fn is_warm_up(e: &hostd_records::Event, total: u64) -> bool {
    e.kind == EventKind::Recovery
        && e.cause == hostd_records::cause::Cause::Unknown
        && (e.onset_bytes as f64) <= WARM_UP_FRACTION * total as f64
}

/// The cycle summary of a series that throttled at least twice: count, mean period between
/// the starts of its slow stretches, time spent slow and duty. A slow stretch starts at a drop
/// from full speed and ends at the next recovery (or the series' end); a further drop inside
/// it (a stepped decline) deepens that stretch rather than counting again, so stretches never
/// overlap and the duty never passes 100 %.
fn cycle_summary(s: &series::Series, changes: &[detect::Change]) -> Option<CycleSummary> {
    let mut ordered: Vec<&detect::Change> = changes.iter().collect();
    ordered.sort_by_key(|c| c.onset.ns);
    let mut stretches: Vec<(i64, i64)> = Vec::new();
    let mut slow_since: Option<i64> = None;
    for c in ordered {
        match (c.kind, slow_since) {
            (EventKind::Drop, None) => slow_since = Some(c.onset.ns),
            (EventKind::Recovery, Some(from)) => {
                stretches.push((from, c.onset.ns.max(from)));
                slow_since = None;
            }
            _ => {}
        }
    }
    if let Some(from) = slow_since {
        stretches.push((from, s.end_ns().max(from)));
    }
    let (first, last) = match stretches.as_slice() {
        [first, .., last] => (*first, *last),
        _ => return None,
    };
    let slow_ns: i64 = stretches.iter().map(|(a, b)| b - a).sum();
    let span = (last.1 - first.0).max(1) as f64;
    Some(CycleSummary {
        target: s.target.clone(),
        phase: s.phase.clone(),
        count: stretches.len(),
        period_s: (last.0 - first.0) as f64 * 1e-9 / (stretches.len() - 1) as f64,
        duty: slow_ns as f64 / span,
        throttled_s: slow_ns as f64 * 1e-9,
    })
}

/// Reads a run directory and analyses it (the manifest may name the probed target).
pub fn analyze_run_dir(dir: &Path, options: &Options) -> anyhow::Result<(RunData, Analysis)> {
    let run = read_run_dir(dir)?;
    let analysis = analyze(&run, options);
    Ok((run, analysis))
}

/// True when `path` does not exist or holds an events.json hostd wrote (it parses as an
/// [`Analysis`]); `hostd analyze` replaces only such files unless forced.
pub fn events_replaceable(path: &Path) -> bool {
    match std::fs::read_to_string(path) {
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
        Ok(text) => serde_json::from_str::<Analysis>(&text).is_ok(),
    }
}

/// Writes `events.json` (the `hostd analyze --json` document) into the run directory.
pub fn write_events(dir: &Path, analysis: &Analysis) -> anyhow::Result<()> {
    Ok(hostd_records::events::write(dir, analysis)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A change of `kind` at second `t` of a series of 1 GB/s.
    fn change_at(kind: EventKind, t: i64) -> detect::Change {
        let ns = t * 1_000_000_000;
        let bytes = (t * 1_000_000_000) as u64;
        detect::Change {
            kind,
            onset: onset::Onset {
                bytes,
                ns,
                bytes_range: (bytes, bytes),
                ns_range: (ns, ns),
            },
            settle_bytes: bytes,
            settle_ns: ns,
            gradual: false,
            p_value: 0.001,
            permutations: 999,
            view: hostd_records::events::View::PerFile,
            rate_before_bps: 1e9,
            rate_after_bps: 5e8,
            before_ns: (0, ns),
            after_ns: (ns, ns),
        }
    }

    #[test]
    fn a_stepped_decline_deepens_one_slow_stretch_and_the_duty_stays_a_share() {
        // 50 files of 1 GB in 50 s.
        let files = (0..50u32)
            .map(|i| {
                let s = u64::from(i) * 1_000_000_000;
                FileRecord::new("t", "write", i, s, s + 1_000_000_000, 1_000_000_000)
            })
            .collect();
        let s = series::Series::new("t".into(), "write".into(), files);
        use EventKind::{Drop, Recovery};
        // Slow 10–20 s (dropping twice, the second deeper, listed out of order), and 30–40 s.
        let changes = [
            change_at(Drop, 12),
            change_at(Drop, 10),
            change_at(Recovery, 20),
            change_at(Drop, 30),
            change_at(Recovery, 40),
        ];
        let c = cycle_summary(&s, &changes).expect("two slow stretches");
        assert_eq!(c.count, 2);
        assert!((c.throttled_s - 20.0).abs() < 1e-9, "{c:?}");
        assert!((c.period_s - 20.0).abs() < 1e-9, "{c:?}");
        assert!((c.duty - 20.0 / 30.0).abs() < 1e-9, "{c:?}");
        // Once slow, a further drop and no recovery: one stretch to the end, no cycle.
        assert!(cycle_summary(&s, &changes[..2]).is_none());
        // Still slow at the end: the last stretch runs to the series' end (50 s).
        let c = cycle_summary(&s, &changes[..4]).unwrap();
        assert!((c.throttled_s - 30.0).abs() < 1e-9, "{c:?}");
        assert!(c.duty <= 1.0, "{c:?}");
    }

    #[test]
    fn files_that_did_not_complete_are_no_throughput_samples() {
        let ms20 = 20_000_000u64;
        let mut files: Vec<FileRecord> = (0..12u32)
            .map(|i| {
                FileRecord::new(
                    "t",
                    "write",
                    i,
                    u64::from(i) * ms20,
                    u64::from(i + 1) * ms20,
                    20_000_000,
                )
            })
            .collect();
        files[5].status = "error: disk full after 1 bytes".into();
        files[5].bytes = 1;
        let run = RunData {
            files,
            ..Default::default()
        };
        let a = analyze(&run, &Options::default());
        assert_eq!(a.phases[0].files, 11);
        assert_eq!(a.phases[0].bytes, 11 * 20_000_000);
    }
}
