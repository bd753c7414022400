//! hostd-store: where a run's records go.
//!
//! [`pipeline`] is the one trait of whatever takes part in a run ([`RunPart`]) and the
//! [`Pipeline`] that orders the parts by stage; [`rundir`] is the run directory, the last
//! part. [`manifest`] describes the run, [`summary`] presents the per-phase statistics and
//! the all-targets-active window, which the analysis computes and its part hands over.

#![warn(missing_docs)]

pub mod footprint;
#[cfg(windows)]
mod kernel_windows;
pub mod labels;
pub mod manifest;
pub mod outcome_summary;
pub mod pipeline;
pub mod rundir;

pub use outcome_summary::SummaryExt;
pub use pipeline::{
    DriveData, DriveFeed, DriveReading, Pipeline, ProbeData, ProbeFeed, RunPart, RunRecords,
    RunStart, Stage,
};
pub use rundir::RunDirPart;
