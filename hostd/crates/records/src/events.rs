//! `events.json`: the analysis result (events with causes and evidence, per-phase
//! statistics, multi-target overlap), the same document `hostd analyze --json` prints.
//! Every number is defined in docs/methodology.md.

use crate::cause::{Cause, EventKind};
use crate::error::Result;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// File name in the run directory.
pub const FILE_NAME: &str = "events.json";
/// Newest format this build reads and the one it writes.
pub const FORMAT_VERSION: u32 = 1;

/// Whole result of analysing one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    /// Drop and recovery events, ordered by onset time.
    pub events: Vec<Event>,
    /// Robust statistics per target and phase.
    pub phases: Vec<PhaseStats>,
    /// Multi-target overlap (window empty for a single target).
    pub overlap: Overlap,
    /// Series too short to tell a throttle from noise (no events are looked for in them).
    #[serde(default)]
    pub insufficient: Vec<Insufficient>,
    /// Repeated throttling: one summary per series with at least two drops.
    #[serde(default)]
    pub cycles: Vec<CycleSummary>,
    /// Headline figures per target and phase and the enclosure's thermal fit.
    #[serde(default)]
    pub headlines: crate::headline::Headlines,
    /// The temperature gate's waits before measured steps (none without a gate).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gate_waits: Vec<crate::gate_wait::GateWait>,
}

/// A series with too little data to detect throttling in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Insufficient {
    /// Target.
    pub target: String,
    /// Phase.
    pub phase: String,
    /// Files in the series.
    pub files: usize,
    /// Bytes in the series.
    pub bytes: u64,
    /// Seconds from the first file's start to the last file's end.
    pub seconds: f64,
    /// What is missing, in words.
    pub reason: String,
}

/// Summary of repeated drop/recovery cycles of one series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CycleSummary {
    /// Target.
    pub target: String,
    /// Phase.
    pub phase: String,
    /// Number of drops.
    pub count: usize,
    /// Mean time between successive drop onsets, s.
    pub period_s: f64,
    /// Fraction of the time from the first drop to the end of the last slow stretch spent slow.
    pub duty: f64,
    /// Total time spent slow, s.
    pub throttled_s: f64,
}

/// The stalls of one series (kind `stall`): stretches of ≥ 0.5 s at under a tenth of the
/// series' typical rate, found in the 100 ms byte counters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StallSummary {
    /// Number of stalls.
    pub count: usize,
    /// Series bytes before the first stall.
    pub first_bytes: u64,
    /// Start of the first stall, host ns.
    pub first_ns: i64,
    /// Each stall's length, s.
    pub durations_s: Vec<f64>,
    /// Median time between successive stall starts, s (None with one stall).
    pub period_s: Option<f64>,
    /// Sum of the durations, s.
    pub total_s: f64,
    /// Mean rate while stalled, bytes/s.
    pub rate_during_bps: f64,
    /// Rate under which a 100 ms interval counts as stalled, bytes/s.
    pub threshold_bps: f64,
}

/// One drop or recovery.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Target whose throughput changed.
    pub target: String,
    /// Phase (write/read).
    pub phase: String,
    /// Drop or recovery.
    pub kind: EventKind,
    /// Bytes of this target and phase written/read before the change.
    pub onset_bytes: u64,
    /// Host Unix ns of the change.
    pub onset_ns: i64,
    /// Lower end of the onset's interval, bytes (see methodology.md).
    #[serde(default)]
    pub onset_bytes_low: u64,
    /// Upper end of the onset's interval, bytes.
    #[serde(default)]
    pub onset_bytes_high: u64,
    /// Lower end of the onset's interval, host ns.
    #[serde(default)]
    pub onset_ns_low: i64,
    /// Upper end of the onset's interval, host ns.
    #[serde(default)]
    pub onset_ns_high: i64,
    /// Block-permutation p-value of "no change" (stall: of "no run this long").
    #[serde(default)]
    pub p_value: f64,
    /// Permutations behind `p_value`.
    #[serde(default)]
    pub permutations: u32,
    /// True when the rate moved gradually (a ramp fits better than a step).
    #[serde(default)]
    pub gradual: bool,
    /// Bytes at which the new level was reached (= onset for a step).
    #[serde(default)]
    pub settle_bytes: u64,
    /// Host ns at which the new level was reached (= onset for a step).
    #[serde(default)]
    pub settle_ns: i64,
    /// Throughput of the segment before, bytes/s.
    pub rate_before_bps: f64,
    /// Throughput of the segment after, bytes/s.
    pub rate_after_bps: f64,
    /// rate_after / rate_before − 1.
    #[serde(default)]
    pub relative_change: f64,
    /// The stalls (kind `stall` only).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub stall: Option<StallSummary>,
    /// Which view of the throughput found the event, and why the other did not.
    #[serde(default)]
    pub found_by: FoundBy,
    /// Attributed cause.
    pub cause: Cause,
    /// 0..1: winning score minus half the runner-up's (see methodology.md).
    pub confidence: f64,
    /// The numbers and reasons the attribution used.
    pub evidence: Evidence,
}

/// Rule scores of each cause, 0..1, keyed by the cause: a new cause's rules add their
/// entry (`hostd_analysis::attribution::RULES`); nothing here names a cause but the causes
/// of format 1, which `events.json` always carries.
#[derive(Debug, Clone, Default)]
pub struct Scores(BTreeMap<Cause, f64>);

/// Equal when every cause has the same score, a cause without one scoring 0.
impl PartialEq for Scores {
    fn eq(&self, other: &Self) -> bool {
        self.0
            .keys()
            .chain(other.0.keys())
            .all(|&c| self.get(c) == other.get(c))
    }
}

/// The causes every `events.json` lists a score for, 0 when no rule gave one (format 1);
/// any later cause is listed only when it scored.
const ALWAYS_LISTED: [Cause; 3] = [Cause::Thermal, Cause::SlcCache, Cause::Contention];

impl Scores {
    /// The score of `cause`, 0 when no rule gave one.
    pub fn get(&self, cause: Cause) -> f64 {
        self.0.get(&cause).copied().unwrap_or(0.0)
    }

    /// Sets the score of `cause`.
    pub fn set(&mut self, cause: Cause, score: f64) {
        self.0.insert(cause, score);
    }

    /// The scores `events.json` lists and the report shows, in the order of [`Cause`]: the
    /// causes of format 1 always, any other when it scored.
    pub fn listed(&self) -> impl Iterator<Item = (Cause, f64)> + '_ {
        let extra = self
            .0
            .iter()
            .filter(|(c, s)| !ALWAYS_LISTED.contains(c) && **s != 0.0)
            .map(|(c, s)| (*c, *s));
        let mut all: Vec<(Cause, f64)> = ALWAYS_LISTED
            .iter()
            .map(|&c| (c, self.get(c)))
            .chain(extra)
            .collect();
        all.sort_by_key(|(c, _)| *c);
        all.into_iter()
    }
}

impl FromIterator<(Cause, f64)> for Scores {
    fn from_iter<I: IntoIterator<Item = (Cause, f64)>>(iter: I) -> Self {
        Scores(iter.into_iter().collect())
    }
}

impl Serialize for Scores {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        serializer.collect_map(self.listed().map(|(c, s)| (c.as_str(), s)))
    }
}

impl<'de> Deserialize<'de> for Scores {
    /// A cause this build does not know (from a newer hostd) is skipped.
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Self, D::Error> {
        let named = BTreeMap::<String, f64>::deserialize(deserializer)?;
        Ok(named
            .into_iter()
            .filter_map(|(name, score)| {
                let de = serde::de::value::StrDeserializer::<serde::de::value::Error>::new(&name);
                Cause::deserialize(de).ok().map(|c| (c, score))
            })
            .collect())
    }
}

/// The most signs an event shows before its full list ([`Evidence::deciding`]).
pub const DECIDING_MAX: usize = 4;

/// A source of evidence the attribution could not read for an event: one line for the
/// run says so, not one per event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The operating system's log (`os-log.jsonl`): the link rules, and a reset at a VBUS
    /// collapse, are not checked.
    OsLog,
    /// The probe's samples of the event's target: the thermal, SLC-cache and power rules
    /// are not checked.
    Probe,
    /// The host port's budget (no CC sensed, no PD contract decoded, no `--port-budget`):
    /// the drive's draw is not judged against it.
    PortBudget,
}

impl Source {
    /// What was not read and what that leaves unchecked, in words.
    pub fn words(self) -> &'static str {
        match self {
            Source::OsLog => "the operating system's log was not read: no drop was checked for a reset or error of its link",
            Source::Probe => "no probe samples: the thermal, SLC-cache and power rules were not checked",
            Source::PortBudget => "the host port's budget is unknown (the probe sensed no CC and decoded no contract, no --port-budget): the drive's draw was not judged against a budget",
        }
    }
}

/// Each source some event could not read, once, with the targets of those events (in the
/// order of their first event): the run's lines instead of one per event.
pub fn unread_sources(events: &[Event]) -> Vec<(Source, Vec<&str>)> {
    let mut out: Vec<(Source, Vec<&str>)> = Vec::new();
    for e in events {
        for &s in &e.evidence.unread {
            let at = match out.iter().position(|(o, _)| *o == s) {
                Some(k) => k,
                None => {
                    out.push((s, Vec::new()));
                    out.len() - 1
                }
            };
            if !out[at].1.contains(&e.target.as_str()) {
                out[at].1.push(&e.target);
            }
        }
    }
    out.sort_by_key(|(s, _)| *s);
    out
}

/// Evidence behind an event; absent numbers were not measurable (e.g. no probe).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// One-line human summary.
    pub text: String,
    /// Each rule checked, in words, with its outcome.
    pub reasons: Vec<String>,
    /// The signs that decided the cause, strongest first, at most [`DECIDING_MAX`]: the
    /// rules that carried the cause's score (for `unknown`, the best-scoring cause's), by
    /// weight, and the strongest sign against it. Chosen by the attribution from the
    /// weights; the terminal and the report show these first, `reasons` holds every rule.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub deciding: Vec<String>,
    /// The sources this event's rules could not read: said once for the run
    /// ([`unread_sources`]), not among `reasons`.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub unread: Vec<Source>,
    /// Score per cause.
    pub scores: Scores,
    /// Onset in GB (10⁹ bytes).
    pub onset_gb: f64,
    /// Onset in seconds since the run's first file started.
    pub onset_s: f64,
    /// The onset's interval in GB.
    #[serde(default)]
    pub onset_interval_gb: [f64; 2],
    /// The onset's interval in seconds since the run's first file started.
    #[serde(default)]
    pub onset_interval_s: [f64; 2],
    /// Temperature rise over the phase up to the onset (1 s means: at onset − lowest before), °C.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub temp_rise_c: Option<f64>,
    /// Noise of the temperature sensor (robust σ of sample-to-sample differences / √2), °C.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub temp_noise_c: Option<f64>,
    /// Seconds until the next event of this target/phase or its end.
    pub duration_s: f64,
    /// Index (in files.csv) of the file in which the change happened.
    pub onset_file_index: u64,
    /// Enclosure temperature at onset, °C.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub temp_at_onset_c: Option<f64>,
    /// Lowest (1 s mean) enclosure temperature during the phase, °C.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub temp_min_c: Option<f64>,
    /// Highest (1 s mean) enclosure temperature during the phase, °C.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub temp_max_c: Option<f64>,
    /// Where the onset temperature lies between min (0) and max (1).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub temp_plateau_fraction: Option<f64>,
    /// Temperature slope before onset, °C/s.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub temp_slope_before_c_per_s: Option<f64>,
    /// Temperature slope after onset, °C/s.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub temp_slope_after_c_per_s: Option<f64>,
    /// Mean bus power before onset, W.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub power_before_w: Option<f64>,
    /// Mean bus power after onset, W.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub power_after_w: Option<f64>,
    /// Energy per GB before onset, J/GB.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub j_per_gb_before: Option<f64>,
    /// Energy per GB after onset, J/GB.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub j_per_gb_after: Option<f64>,
    /// The drive's own (SMART) temperature at onset, °C (`drive_temp.csv`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub drive_temp_at_onset_c: Option<f64>,
    /// Its rise from the lowest reading of the phase before the onset, °C.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub drive_temp_rise_c: Option<f64>,
    /// Where it lies at onset between its low (0) and high (1) over the phase (only when
    /// those are ≥ 3 °C apart: SMART reports whole degrees).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub drive_temp_plateau_fraction: Option<f64>,
    /// Its slope after the onset, °C/s.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub drive_temp_slope_after_c_per_s: Option<f64>,
    /// What the drive's own thermal record (`drive_log.csv`) counted from the phase's start
    /// to a minute after the onset (at most to the phase's end): throttle transitions, time
    /// at TMT1/TMT2 and above the warning temperature, SCT over-limit events.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub drive_thermal_log: Option<crate::drive_log::DriveLogDelta>,
    /// Other targets active during the slow segment.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub other_targets_active: Vec<String>,
    /// Aggregate throughput of all targets during the slow segment, bytes/s.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub aggregate_bps: Option<f64>,
    /// Link ceiling used (given, or the highest aggregate over whole seconds of the run when
    /// at least 5 whole seconds were measured), bytes/s.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub link_ceiling_bps: Option<f64>,
    /// For a recovery: seconds from another target's end to this onset.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub lag_after_other_end_s: Option<f64>,
    /// The other target meant by `lag_after_other_end_s`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub other_target: Option<String>,
    /// The operating system's log lines about this target's link near the onset (or a
    /// stall): each `+s.sss kind: line`, seconds from the onset (`os-log.jsonl`).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub os_log: Vec<String>,
    /// The host port's power budget, W, when known (the `power` rules).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub port_budget_w: Option<f64>,
    /// The current the budget allows, A (the advertised or contracted current; a user's
    /// watts at 5 V), in force 1 s after the onset interval.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub port_budget_a: Option<f64>,
    /// The drive's current before the onset as a share of the current the budget then in
    /// force allowed (the name is older than the rule's amps).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub power_share_before: Option<f64>,
    /// The drive's current after the onset as a share of the current the budget allows.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub power_share_after: Option<f64>,
    /// The lowest VBUS around the onset, V.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub vbus_min_at_onset_v: Option<f64>,
}

/// Robust statistics of one target and phase: `events.json` `phases[]` and `summary.json`
/// `phases[]` (one type, one computation: `hostd_analysis::series::phase_stats`). Rates are
/// in bytes/s, times in s or host Unix ns, latencies in ns; displays convert (MB/s = 10⁶ bytes/s).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseStats {
    /// Target.
    pub target: String,
    /// Phase.
    pub phase: String,
    /// Number of files.
    pub files: usize,
    /// Total bytes.
    pub bytes: u64,
    /// Sum of file durations, s.
    pub seconds: f64,
    /// First file start, host Unix ns.
    pub start_ns: i64,
    /// Last file end, host Unix ns.
    pub end_ns: i64,
    /// Total bytes / total seconds.
    pub throughput_bps: f64,
    /// Mean of per-file rates.
    pub mean_bps: f64,
    /// Median of per-file rates.
    pub median_bps: f64,
    /// Slowest file's rate.
    #[serde(default)]
    pub min_bps: f64,
    /// Fastest file's rate.
    #[serde(default)]
    pub max_bps: f64,
    /// 20 % trimmed mean of per-file rates (20 % cut from each end).
    pub trimmed_mean_bps: f64,
    /// 1 / Theil–Sen slope of time against size.
    pub theil_sen_bps: Option<f64>,
    /// Theil–Sen intercept: fixed cost per file, s.
    pub theil_sen_overhead_s: Option<f64>,
    /// 1 / least-squares slope of time against size.
    pub least_squares_bps: Option<f64>,
    /// Least-squares intercept, s.
    pub least_squares_overhead_s: Option<f64>,
    /// Two-cluster gap test says the per-file rates have two modes.
    pub bimodal: bool,
    /// Gap test details (None below 6 files).
    pub bimodality: Option<Bimodality>,
    /// When `bimodal`: the event whose two sides are the two groups of per-file rates, in
    /// words ("the drop at 23.9 GB (thermal)"). The rates are then two levels in time, not
    /// two modes of one population, and no bimodality warning is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub levels_explained_by: Option<String>,
    /// Sarle's bimodality coefficient, for reference.
    pub bimodality_coefficient: Option<f64>,
    /// Energy over this phase's files from the probe, J.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub energy_j: Option<f64>,
    /// Energy per GB, J/GB.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub j_per_gb: Option<f64>,
    /// Mean bus power while this phase ran, W.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mean_power_w: Option<f64>,
    /// Bus power against the host port's budget and VBUS while this phase ran (probed
    /// target only).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub port: Option<crate::port_budget::PhasePower>,
    /// Corrupt blocks found by verifying reads.
    #[serde(default)]
    pub corrupt_blocks: u64,
    /// Corrupt bytes found by verifying reads.
    #[serde(default)]
    pub corrupt_bytes: u64,
    /// Files verified clean.
    #[serde(default)]
    pub verified_files: usize,
    /// Late paced I/Os (video frames).
    #[serde(default)]
    pub late_ops: u64,
    /// I/O size, bytes, when every file of the phase used the same.
    #[serde(default)]
    pub block_size: Option<usize>,
    /// Queue depth, when every file of the phase used the same.
    #[serde(default)]
    pub queue_depth: Option<usize>,
    /// I/Os per second over the phase's file time (with `block_size`).
    #[serde(default)]
    pub iops: Option<f64>,
    /// Latency of the phase's I/Os, submission to completion, ns (`latency.p99_9_ns` …;
    /// absent where no I/O was timed: simulated targets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<crate::LatencyStats>,
}

/// Window in which all targets were active and what happened in it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Overlap {
    /// Targets in the run.
    pub targets: Vec<String>,
    /// The window, None with fewer than two targets or no common time.
    pub window: Option<Window>,
    /// Throughput of each target in the window.
    pub per_target: Vec<TargetRate>,
    /// Sum over targets in the window, bytes/s.
    pub aggregate_bps: Option<f64>,
    /// Highest aggregate over 1 s bins of the run, bytes/s.
    pub peak_aggregate_bps: Option<f64>,
    /// Lags from one target's end to another's recovery.
    pub lags: Vec<Lag>,
}

/// A time window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Window {
    /// Start, host Unix ns.
    pub start_ns: i64,
    /// End, host Unix ns.
    pub end_ns: i64,
    /// Length, s.
    pub duration_s: f64,
}

/// Throughput of one target inside the overlap window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetRate {
    /// Target.
    pub target: String,
    /// Bytes moved inside the window (files cut at its edges pro rata).
    pub bytes: f64,
    /// bytes / window length.
    pub rate_bps: f64,
}

/// Delay between one target finishing and another recovering.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lag {
    /// Target that finished.
    pub ended_target: String,
    /// Its last file's end, host Unix ns.
    pub ended_ns: i64,
    /// Target that recovered afterwards.
    pub recovered_target: String,
    /// Onset of the recovery, host Unix ns.
    pub recovery_ns: i64,
    /// recovery − end, s.
    pub lag_s: f64,
}

/// Result of the two-cluster gap test of per-file rates (computed in `hostd-analysis`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bimodality {
    /// True when the data split into two well-separated groups.
    pub bimodal: bool,
    /// Widest gap between neighbouring sorted values with ≥ 10 % of values each side.
    pub gap: f64,
    /// Gap divided by the larger of the two groups' robust spreads (MAD σ).
    pub separation: f64,
    /// Value at which the data split (middle of the gap).
    pub split_at: f64,
    /// Fraction of values below the split.
    pub low_fraction: f64,
}

/// The file as written: the analysis with its format version in front.
#[derive(Serialize)]
struct EventsFile<'a> {
    format_version: u32,
    #[serde(flatten)]
    analysis: &'a Analysis,
}

/// The events.json document (with its `format_version`), as `hostd analyze --json` prints it.
pub fn to_json(analysis: &Analysis) -> serde_json::Value {
    serde_json::to_value(EventsFile {
        format_version: FORMAT_VERSION,
        analysis,
    })
    .expect("an analysis serialises")
}

/// Writes `dir/events.json` atomically.
pub fn write(dir: &Path, analysis: &Analysis) -> Result<()> {
    crate::version::write_json(&dir.join(FILE_NAME), &to_json(analysis))
}

/// Reads `dir/events.json`, refusing a newer format.
pub fn read(dir: &Path) -> Result<Analysis> {
    read_path(&dir.join(FILE_NAME))
}

/// Reads an events.json at any path, refusing a newer format.
pub fn read_path(path: &Path) -> Result<Analysis> {
    crate::version::read_json(path, FORMAT_VERSION)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RecordError;

    /// The scores are keyed by cause, and written as format 1 wrote its fields: the three
    /// first causes always, a later one only when it scored; a cause a newer hostd wrote is
    /// skipped on reading.
    #[test]
    fn scores_are_keyed_by_cause_and_written_as_format_1_wrote_them() {
        let mut s: Scores = [(Cause::Thermal, 0.9), (Cause::Link, 0.0)]
            .into_iter()
            .collect();
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(json, r#"{"thermal":0.9,"slc_cache":0.0,"contention":0.0}"#);
        s.set(Cause::Link, 0.35);
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(
            json,
            r#"{"thermal":0.9,"slc_cache":0.0,"contention":0.0,"link":0.35}"#
        );
        assert_eq!(serde_json::from_str::<Scores>(&json).unwrap(), s);
        let newer: Scores =
            serde_json::from_str(r#"{"thermal":0.2,"brownout":0.8,"contention":0.1}"#).unwrap();
        assert_eq!(
            (
                newer.get(Cause::Thermal),
                newer.get(Cause::Contention),
                newer.get(Cause::Link)
            ),
            (0.2, 0.1, 0.0)
        );
    }

    fn analysis() -> Analysis {
        Analysis {
            events: Vec::new(),
            phases: Vec::new(),
            overlap: serde_json::from_value(serde_json::json!({
                "targets": ["a"], "window": null, "per_target": [], "aggregate_bps": null,
                "peak_aggregate_bps": null, "lags": []
            }))
            .unwrap(),
            insufficient: vec![Insufficient {
                target: "a".into(),
                phase: "write".into(),
                files: 3,
                bytes: 10,
                seconds: 0.5,
                reason: "too few files".into(),
            }],
            cycles: Vec::new(),
            headlines: Default::default(),
            gate_waits: vec![crate::gate_wait::GateWait {
                target: "a".into(),
                phase: "write".into(),
                index: 1,
                start_ns: 7,
                waited_s: 3.5,
                outcome: crate::gate_wait::WaitOutcome::Reached,
                idle_c: Some(40.0),
                start_c: Some(45.0),
                end_c: Some(41.5),
            }],
        }
    }

    #[test]
    fn events_round_trip_with_their_version() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), &analysis()).unwrap();
        let text = std::fs::read_to_string(d.path().join(FILE_NAME)).unwrap();
        assert!(text.contains("\"format_version\": 1"), "{text}");
        assert_eq!(read(d.path()).unwrap(), analysis());
    }

    #[test]
    fn newer_events_are_refused() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join(FILE_NAME),
            r#"{"format_version": 3, "events": 5}"#,
        )
        .unwrap();
        assert!(matches!(
            read(d.path()).unwrap_err(),
            RecordError::NewerFormat { found: 3, .. }
        ));
    }
}

/// A view of a series' throughput in which events are looked for (docs/methodology.md,
/// "Change points").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum View {
    /// The throughput over time: the target's byte counters (`counters.csv`) in intervals
    /// of 100 ms or more.
    OverTime,
    /// The per-file rates (`files.csv`).
    #[default]
    PerFile,
    /// Both views found it (the onset is the one with the narrower interval).
    Both,
}

/// Which view found an event and, when only one did, why the other did not.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FoundBy {
    /// The view that found it.
    pub view: View,
    /// Why the other view found no such event; empty when both found it in one place, where
    /// the other view put it when both found it apart.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub other_view: String,
}
