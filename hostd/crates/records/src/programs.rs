//! What the adaptive workloads found (`summary.json` `programs[]`): cache recovery, the
//! paced sweep, mixed I/O and duration runs (issue #12). One [`ProgramReport`] per target
//! and kind: the lines printed at the end of the run and the typed figures. How each figure
//! is computed: `docs/methodology.md`, "Adaptive profiles".

use serde::{Deserialize, Serialize};

/// One target's result of one adaptive workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgramReport {
    /// Target label.
    pub target: String,
    /// Lines for the terminal summary.
    pub text: Vec<String>,
    /// The figures, by kind.
    #[serde(flatten)]
    pub figures: ProgramFigures,
}

/// The figures of each kind (JSON: `"kind": "cache-recovery", "result": {…}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "result", rename_all = "kebab-case")]
pub enum ProgramFigures {
    /// `kind = "cache-recovery"`.
    CacheRecovery(CacheRecoveryFigures),
    /// `kind = "paced-sweep"`.
    PacedSweep(PacedSweepFigures),
    /// Diskmark tests with `read_percent`.
    Mixed(MixedFigures),
    /// A `files` profile with a `duration`.
    Duration(DurationFigures),
    /// `kind = "fill-states"`.
    FillStates(FillStatesFigures),
    /// A step that could end at steady state (`[steady_state]`).
    SteadyState(SteadyStateFigures),
}

impl ProgramFigures {
    /// `cache-recovery`, `paced-sweep`, `mixed`, `duration` or `steady-state`.
    pub fn kind(&self) -> &'static str {
        match self {
            ProgramFigures::CacheRecovery(_) => "cache-recovery",
            ProgramFigures::PacedSweep(_) => "paced-sweep",
            ProgramFigures::Mixed(_) => "mixed",
            ProgramFigures::Duration(_) => "duration",
            ProgramFigures::FillStates(_) => "fill-states",
            ProgramFigures::SteadyState(_) => "steady-state",
        }
    }
}

/// The fill-state sweep: the measured write at each fill level.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FillStatesFigures {
    /// One per level, in the order run.
    pub levels: Vec<FillLevel>,
}

/// The measured write at one fill level: the SLC-cache size (bytes written before the
/// analysis' first drop in that phase) and the rate after it, each with its interval, or
/// why there is none (docs/methodology.md, "Fill states").
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FillLevel {
    /// Fill level, percent of the capacity (as planned).
    pub level_pct: f64,
    /// Fill level when the measured write began, percent of the capacity, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual_pct: Option<f64>,
    /// Phase name (`write-25%`).
    pub phase: String,
    /// Bytes the measured write wrote.
    pub bytes: u64,
    /// Files it wrote.
    pub files: u64,
    /// Bytes written before the rate dropped: the cache size.
    pub cache_bytes: Option<u64>,
    /// … lower end of the onset's interval.
    pub cache_bytes_low: Option<u64>,
    /// … upper end.
    pub cache_bytes_high: Option<u64>,
    /// The rate before the drop (the cached rate), bytes/s.
    pub cached_bps: Option<f64>,
    /// The rate after the drop: the median of the per-file rates after it, bytes/s.
    pub post_cache_bps: Option<f64>,
    /// … 95 % interval of that median, low.
    pub post_cache_bps_low: Option<f64>,
    /// … high.
    pub post_cache_bps_high: Option<f64>,
    /// Why a figure is missing (no drop, too few files after it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Cache recovery: every burst and the recovery fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CacheRecoveryFigures {
    /// Chunk (file) size, bytes.
    pub chunk_bytes: u64,
    /// The bursts, the first one before any pause.
    pub bursts: Vec<Burst>,
    /// The fit, where the data carries one.
    pub fit: Option<RecoveryFit>,
    /// Why there is no fit.
    pub fit_error: Option<String>,
}

/// One burst of writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Burst {
    /// Phase name (`fill`, `after-5s`).
    pub phase: String,
    /// The idle time before it as asked, s (None for the first).
    pub pause_s: Option<f64>,
    /// The idle time as it was: from the end of the last write before the
    /// pause to the start of the first after it, s (what the fit uses).
    pub idle_s: Option<f64>,
    /// Bytes written in the burst.
    pub bytes: u64,
    /// The fast stage ended inside the burst.
    pub dropped: bool,
    /// Bytes written at the fast rate: estimate.
    pub fast_bytes: f64,
    /// … at least (the whole chunks before the one before the first slow one).
    pub fast_bytes_low: u64,
    /// … at most (through the first slow chunk).
    pub fast_bytes_high: u64,
    /// Fast rate (median of the fast chunks), bytes/s.
    pub fast_bps: Option<f64>,
    /// Slow rate (median of the chunks after the drop), bytes/s.
    pub slow_bps: Option<f64>,
}

/// The fit of `recovered = C·(1 − e^(−t/τ))`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RecoveryFit {
    /// Recovery time constant τ, s.
    pub tau_s: f64,
    /// Its interval (Δχ² = 1), s.
    pub tau_low_s: f64,
    /// Upper end, s.
    pub tau_high_s: f64,
    /// Bytes a full recovery gives, C.
    pub capacity_bytes: f64,
    /// 1σ of C at the best τ.
    pub capacity_sigma: f64,
    /// Reduced χ² of the fit.
    pub reduced_chi2: f64,
}

/// Paced sweep: the unthrottled rate, every step, the highest held.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PacedSweepFigures {
    /// Unthrottled rate (the 100 % rate), bytes/s.
    pub unthrottled_bps: Option<f64>,
    /// Chunk of the unpaced step where it throttled, if it did.
    pub unpaced_throttled_after_chunks: Option<usize>,
    /// The steps, the unpaced one first.
    pub steps: Vec<SweepStep>,
    /// The highest paced rate held, bytes/s.
    pub highest_held_bps: Option<f64>,
    /// … as a percentage of the unthrottled rate.
    pub highest_held_percent: Option<f64>,
}

/// One step of the sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepStep {
    /// Phase name (`unpaced`, `pace-50%`).
    pub phase: String,
    /// Percentage of the unthrottled rate (None for the unpaced step).
    pub percent: Option<f64>,
    /// Paced rate, bytes/s.
    pub target_bps: Option<f64>,
    /// Rate achieved over the step, bytes/s.
    pub achieved_bps: f64,
    /// Rate over its second half, bytes/s.
    pub second_half_bps: f64,
    /// Chunks written.
    pub chunks: usize,
    /// Bytes written.
    pub bytes: u64,
    /// Start, host Unix ns.
    pub start_ns: u64,
    /// End.
    pub end_ns: u64,
    /// Held its paced rate (None for the unpaced step).
    pub held: Option<bool>,
    /// Mean bus power over the step's files (time-weighted), W — with a probe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_power_w: Option<f64>,
    /// Highest enclosure temperature during the step, °C — with a probe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temp_max_c: Option<f64>,
    /// With `[steady_state]`: which criterion ended the step and when, or that it ran its
    /// full time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<SteadyStateFigures>,
}

/// Mixed I/O: per test, each direction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MixedFigures {
    /// One per mixed test, in run order.
    pub tests: Vec<MixedTest>,
}

/// One mixed test over its repetitions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MixedTest {
    /// Phase (`RND4K-QD32-70R-mix`).
    pub phase: String,
    /// Repetitions.
    pub repetitions: usize,
    /// Bytes read over the jobs' time, bytes/s.
    pub read_bps: f64,
    /// Slowest repetition's read rate.
    pub read_bps_min: f64,
    /// Fastest repetition's read rate.
    pub read_bps_max: f64,
    /// Read I/Os per second.
    pub read_iops: f64,
    /// Bytes written over the jobs' time, bytes/s.
    pub write_bps: f64,
    /// Slowest repetition's write rate.
    pub write_bps_min: f64,
    /// Fastest repetition's write rate.
    pub write_bps_max: f64,
    /// Write I/Os per second.
    pub write_iops: f64,
    /// Share of the I/Os that read, as drawn.
    pub read_share: f64,
    /// Every job.
    pub jobs: Vec<MixedSplit>,
}

/// What one mixed job moved in each direction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MixedSplit {
    /// Phase (`RND4K-QD32-70R-mix`).
    pub phase: String,
    /// Repetition.
    pub index: u32,
    /// Seconds of the job (its file record's time).
    pub seconds: f64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Read I/Os issued.
    pub read_ops: u64,
    /// Write I/Os issued.
    pub write_ops: u64,
}

/// A duration run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DurationFigures {
    /// The duration asked for, s.
    pub duration_s: f64,
    /// Time from the first write to the end, s.
    pub elapsed_s: f64,
    /// Files per cycle.
    pub cycle_files: usize,
    /// Bytes per cycle.
    pub cycle_bytes: u64,
    /// Cycles that wrote all their files.
    pub full_cycles: u32,
    /// Bytes written.
    pub bytes_written: u64,
    /// Bytes read back.
    pub bytes_read: u64,
    /// Corrupt bytes found reading back.
    pub corrupt_bytes: u64,
    /// Files read back and verified.
    pub files_verified: u64,
    /// With `[steady_state]`: the cycle whose writes settled, which criterion ended the
    /// soak there and when; or, when none did, the last cycle's (it ran its full time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady: Option<SteadyStateFigures>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_is_kind_and_result_in_json_and_reads_back() {
        let r = ProgramReport {
            target: "/mnt/x".into(),
            text: vec!["line".into()],
            figures: ProgramFigures::Duration(DurationFigures {
                duration_s: 2.0,
                elapsed_s: 2.5,
                cycle_files: 3,
                cycle_bytes: 24_000_000,
                full_cycles: 2,
                bytes_written: 48_000_000,
                bytes_read: 48_000_000,
                corrupt_bytes: 0,
                files_verified: 6,
                steady: None,
            }),
        };
        let j = serde_json::to_value(&r).unwrap();
        assert_eq!(j["kind"], "duration");
        assert_eq!(j["result"]["full_cycles"], 2);
        assert_eq!(serde_json::from_value::<ProgramReport>(j).unwrap(), r);
    }
}

/// How a step with `[steady_state]` ended: which criterion was met first, and when, or
/// that the step ran its full course.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyStateFigures {
    /// The step (phase name).
    pub phase: String,
    /// The criteria asked for, as written (`bw:10%`, `iops_slope:0.5%`).
    pub criteria: Vec<String>,
    /// Window, s (fio's `ss_dur`).
    pub window_s: f64,
    /// Time before data is collected, s (fio's `ss_ramp`).
    pub ramp_s: f64,
    /// The criterion that ended the step; `None`: it ran its full course.
    pub ended_by: Option<String>,
    /// When the step ended at steady state (Unix ns), or ran out.
    pub end_ns: u64,
    /// From the step's first I/O to its end, s.
    pub elapsed_s: f64,
    /// The criterion's value over the window when it ended the step (deviation or slope,
    /// in the criterion's unit), and the window's mean (B/s or IOPS).
    pub value: Option<f64>,
    /// The window's mean, B/s or IOPS, when it ended the step.
    pub mean: Option<f64>,
    /// With `temp_slope`: the temperature's slope over the last window judged, °C/min.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temp_slope_c_per_min: Option<f64>,
    /// With `temp_slope`: the mean temperature over that window, °C.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temp_mean_c: Option<f64>,
    /// With `temp_slope` beside throughput criteria: when, from the step's first I/O, the
    /// throughput criteria were first met (the step then waited for the temperature), s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_settled_s: Option<f64>,
}
