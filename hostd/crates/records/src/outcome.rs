//! How a run ended and everything it produced ([`RunOutcome`]): what the workload's runner
//! returns and every part of the run finishes from.

use crate::files::FileRecord;
use crate::intervals::IntervalRecord;
use crate::manifest::TargetInfo;
use crate::programs::ProgramReport;
use serde::Serialize;

/// How the run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", content = "reason", rename_all = "snake_case")]
pub enum RunStatus {
    /// Every step ran.
    Completed,
    /// Stopped by the user (Ctrl-C / SIGTERM).
    Interrupted,
    /// Stopped by a fault (disk full, I/O error, …).
    Failed(String),
}

impl RunStatus {
    /// Short text for events and summaries.
    pub fn describe(&self) -> String {
        match self {
            RunStatus::Completed => "completed".into(),
            RunStatus::Interrupted => "interrupted".into(),
            RunStatus::Failed(r) => format!("failed: {r}"),
        }
    }
}

/// Everything the run produced.
#[derive(Debug, Serialize)]
pub struct RunOutcome {
    /// How it ended.
    pub status: RunStatus,
    /// Start, host Unix ns.
    pub start_ns: u64,
    /// End, host Unix ns.
    pub end_ns: u64,
    /// Targets as described after preparation.
    pub targets: Vec<TargetInfo>,
    /// One record per file operation, in completion order.
    pub files: Vec<FileRecord>,
    /// 1 s intervals.
    pub intervals: Vec<IntervalRecord>,
    /// Per target: (host Unix ns, cumulative bytes) every 100 ms (empty when the runner
    /// collected no records: then in `counters.csv`).
    pub samples: Vec<Vec<(u64, u64)>>,
    /// Warnings shown to the user.
    pub warnings: Vec<String>,
    /// What cleanup did, per target.
    pub cleanup: Vec<String>,
    /// What the adaptive programs (cache recovery, paced sweep, duration) found.
    pub programs: Vec<ProgramReport>,
    /// The starting state each target was brought to before its measured part (trim,
    /// rest), in the order the targets got there; empty when none was asked for.
    pub preparation: Vec<crate::conditions::Preparation>,
}
