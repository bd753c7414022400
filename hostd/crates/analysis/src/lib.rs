//! hostd-analysis: turns a run's per-file records and probe samples into robust
//! statistics, located throughput drops and recoveries, their causes with evidence, and
//! the multi-target overlap. Everything here is offline: it reads a run directory.

#![warn(missing_docs)]

pub mod attribution;
pub mod changepoint;
pub mod detect;
pub mod energy;
pub mod input;
pub mod model;
pub mod overlap;
pub mod series;
pub mod significance;
pub mod stall;
pub mod stats;
pub mod summary;

pub use input::{read_run_dir, FileRecord, InputError, ProbeSeries, RunData};
pub use model::{
    Analysis, Cause, CycleSummary, Event, EventKind, Evidence, Insufficient, Overlap, PhaseStats,
    StallSummary,
};

use std::path::Path;

/// Knobs of one analysis; the defaults are what `hostd analyze` uses.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Change-point settings.
    pub changepoint: changepoint::Settings,
    /// Known link ceiling, bytes/s; otherwise the peak 1 s aggregate of the run.
    pub link_ceiling_bps: Option<f64>,
    /// Target the probe sits on; otherwise the only target, or the manifest's
    /// `probe_target`, or none (probe evidence unused for attribution).
    pub probe_target: Option<String>,
}

/// Analyses records already in memory.
pub fn analyze(run: &RunData, options: &Options) -> Analysis {
    let all = series::group(&run.files);
    let run_start_ns = all.iter().map(series::Series::start_ns).min().unwrap_or(0);
    let mut distinct: Vec<&str> = all.iter().map(|s| s.target.as_str()).collect();
    distinct.dedup();
    distinct.sort_unstable();
    distinct.dedup();
    let probe_target = options
        .probe_target
        .clone()
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
        phases.push(series::phase_stats(s, probe));
        let ctx = attribution::Context {
            all: &all,
            probe,
            run_start_ns,
            link_ceiling: ceiling,
        };
        let stalls = run
            .counters
            .as_ref()
            .and_then(|c| c.get(&s.target))
            .and_then(|c| stall::find(s, c));
        let changes = match detect::changes(s, &options.changepoint, stalls.as_ref()) {
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
        for (k, c) in changes.iter().enumerate() {
            let next = changes.get(k + 1).map(|n| n.onset_ns);
            events.push(attribution::attribute(s, c, &ctx, next, &changes[k + 1..]));
        }
        if let Some(st) = &stalls {
            events.push(attribution::stall_event(s, st, run_start_ns));
        }
        if let Some(c) = cycle_summary(s, &changes) {
            cycles.push(c);
        }
    }
    events.sort_by_key(|e| e.onset_ns);
    let overlap = overlap::overlap(&all, &events);
    Analysis {
        events,
        phases,
        overlap,
        insufficient,
        cycles,
    }
}

/// The cycle summary of a series with at least two drops: count, mean period between drop
/// onsets, time spent slow (each drop to the next recovery or the series' end) and duty.
fn cycle_summary(s: &series::Series, changes: &[detect::Change]) -> Option<CycleSummary> {
    let drops: Vec<usize> = (0..changes.len())
        .filter(|&k| changes[k].kind == EventKind::Drop)
        .collect();
    if drops.len() < 2 {
        return None;
    }
    let mut slow_ns = 0i64;
    let mut last_end = 0i64;
    for &k in &drops {
        let end = changes[k + 1..]
            .iter()
            .find(|c| c.kind == EventKind::Recovery)
            .map_or(s.end_ns(), |c| c.onset_ns);
        slow_ns += end - changes[k].onset_ns;
        last_end = end;
    }
    let first = changes[drops[0]].onset_ns;
    let last = changes[drops[drops.len() - 1]].onset_ns;
    let span = (last_end - first).max(1) as f64;
    Some(CycleSummary {
        target: s.target.clone(),
        phase: s.phase.clone(),
        count: drops.len(),
        period_s: (last - first) as f64 * 1e-9 / (drops.len() - 1) as f64,
        duty: slow_ns as f64 / span,
        throttled_s: slow_ns as f64 * 1e-9,
    })
}

/// Reads the target a run's `manifest.json` says the probe is on, if any: `probe_target`,
/// `probe.target` or `extra.probe.target` (the probe component's section).
pub fn manifest_probe_target(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join("manifest.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v.get("probe_target")
        .or_else(|| v.get("probe").and_then(|p| p.get("target")))
        .or_else(|| v.pointer("/extra/probe/target"))
        .and_then(|t| t.as_str())
        .map(str::to_string)
}

/// Reads a run directory and analyses it (the manifest may name the probed target).
pub fn analyze_run_dir(dir: &Path, options: &Options) -> anyhow::Result<(RunData, Analysis)> {
    let run = read_run_dir(dir)?;
    let mut options = options.clone();
    if options.probe_target.is_none() {
        options.probe_target = manifest_probe_target(dir);
    }
    let analysis = analyze(&run, &options);
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
    let text = serde_json::to_string_pretty(analysis)? + "\n";
    Ok(hostd_records::write_atomic(
        &dir.join("events.json"),
        text.as_bytes(),
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_names_the_probed_target_in_any_of_its_places() {
        let d = tempfile::tempdir().unwrap();
        for (json, want) in [
            (r#"{"probe_target":"A"}"#, Some("A")),
            (r#"{"probe":{"target":"B"}}"#, Some("B")),
            (r#"{"extra":{"probe":{"target":"C"}}}"#, Some("C")),
            (r#"{"extra":{"probe":{}}}"#, None),
        ] {
            std::fs::write(d.path().join("manifest.json"), json).unwrap();
            assert_eq!(manifest_probe_target(d.path()).as_deref(), want, "{json}");
        }
    }
}
