//! hostd-store: where a run's records go.
//!
//! [`sink::RecordSink`] is the trait of a record destination (the run directory
//! here; InfluxDB is a `RunComponent` of `hostd-influx`); [`sink::SinkSet`] feeds them
//! all from the runner's events. [`manifest`] describes the run,
//! [`summary`] presents the per-phase statistics and the all-targets-active
//! window, both computed by `hostd_analysis` (one definition of each).

#![warn(missing_docs)]

pub mod component;
#[cfg(windows)]
mod kernel_windows;
pub mod labels;
pub mod manifest;
pub mod rundir;
pub mod sink;
pub mod summary;

pub use component::RunComponent;
pub use manifest::Manifest;
pub use rundir::RunDirSink;
pub use sink::{RecordSink, SinkSet};
pub use summary::{Summary, SummaryExt};
