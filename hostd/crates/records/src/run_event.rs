//! The events of a run as it goes (`run-events.jsonl` holds them, one a line, except the
//! file, interval, latency and counter records, which have their own files): what the workload's runner
//! reports to every part of a run, in order per target.

use crate::files::FileRecord;
use crate::intervals::IntervalRecord;
use crate::latency::LatencyHistogram;
use crate::manifest::TargetInfo;
use serde::Serialize;

/// Its file name in a run directory.
pub const FILE_NAME: &str = "run-events.jsonl";

/// What a [`LatencyRecord`] covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "scope", rename_all = "snake_case")]
pub enum LatencyScope {
    /// One file operation (the [`FileRecord`] with this phase and index).
    File {
        /// Phase.
        phase: String,
        /// Index within the phase.
        index: u32,
    },
    /// One interval (the [`IntervalRecord`] with the same target and times).
    Interval {
        /// Phase label of the interval (`write`, `write+read`).
        phase: String,
    },
}

/// The latency histogram of one file or one interval of one target: every
/// I/O that completed in it, submission to completion.
#[derive(Debug, Clone, Serialize)]
pub struct LatencyRecord {
    /// Target label.
    pub target: String,
    /// Target index.
    pub target_index: usize,
    /// File or interval.
    #[serde(flatten)]
    pub scope: LatencyScope,
    /// Start, host Unix ns.
    pub start_ns: u64,
    /// End, host Unix ns.
    pub end_ns: u64,
    /// The histogram (serialised as its percentiles).
    pub histogram: LatencyHistogram,
}

/// Everything the runner reports, in order per target.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum RunEvent {
    /// The run starts; targets are described.
    RunStart {
        /// Run id.
        run_id: String,
        /// Host Unix ns.
        time_ns: u64,
        /// All targets.
        targets: Vec<TargetInfo>,
    },
    /// A target enters a phase.
    PhaseStart {
        /// Target index.
        target_index: usize,
        /// Phase name.
        phase: String,
        /// Host Unix ns.
        time_ns: u64,
        /// Whether the phase is measured (false for `prepare`).
        measured: bool,
    },
    /// A target leaves a phase.
    PhaseEnd {
        /// Target index.
        target_index: usize,
        /// Phase name.
        phase: String,
        /// Host Unix ns.
        time_ns: u64,
    },
    /// A file operation begins.
    FileStart {
        /// Target index.
        target_index: usize,
        /// Phase name.
        phase: String,
        /// Index in the phase.
        index: u32,
        /// Bytes it will move.
        bytes: u64,
        /// Host Unix ns.
        time_ns: u64,
    },
    /// A file operation ended (successfully or not).
    FileEnd(FileRecord),
    /// One second of throughput of one target.
    Interval(IntervalRecord),
    /// I/O latencies of a file (right after its [`RunEvent::FileEnd`]) or of
    /// an interval (right after its [`RunEvent::Interval`]); none for
    /// backends that do no real I/O.
    Latency(LatencyRecord),
    /// One 100 ms sample of every target's byte counter (a row of `counters.csv` per
    /// target), from the sampler that makes the intervals.
    Counters {
        /// Host Unix ns of the sample.
        time_ns: u64,
        /// Per target index: cumulative bytes of all its phases (prepare included).
        bytes: Vec<u64>,
    },
    /// Device activity of one target changed (0 idle … 1 full load). The
    /// probe link drives the simulator with `load` = min(1, Σ levels).
    Activity {
        /// Target index.
        target_index: usize,
        /// Activity level 0..1.
        level: f64,
        /// Host Unix ns.
        time_ns: u64,
    },
    /// The set of targets doing measured I/O changed.
    ActiveTargets {
        /// Indices of the targets now active.
        active: Vec<usize>,
        /// Host Unix ns.
        time_ns: u64,
    },
    /// A warning for the user (also recorded in the summary).
    Warning {
        /// Target index, if specific.
        target_index: Option<usize>,
        /// Text.
        message: String,
    },
    /// The run ended.
    RunEnd {
        /// Host Unix ns.
        time_ns: u64,
        /// `completed`, `interrupted`, `failed: …`.
        status: String,
    },
}
