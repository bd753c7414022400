//! hostd-correlate: joins the probe's aligned samples with the workload's
//! file records, and runs the probe as a part of `hostd run`.
//!
//! - [`timeline`]: the compact probe record correlation reads.
//! - [`correlate`]: per-file energy, J/GB, power, temperature; per-phase
//!   power profile; the energy balance.
//! - [`recorder`]: writes `probe.csv`, `probe_agg.csv`, `probe-link.jsonl`.
//! - [`filescsv`]: the probe columns of `files.csv`.
//! - [`drive`]: the drive's part of `hostd run`: link in the manifest,
//!   temperature polled through the run (`drive_temp.csv`).
//! - [`smart`]: the drive's own SMART view before and after each phase.
//! - [`monitor`]: `hostd monitor`, the probe alone until stopped.
//! - [`component`]: the probe's part of `hostd run` tying them together.

#![warn(missing_docs)]

pub mod component;
pub mod correlate;
pub mod drive;
pub mod filescsv;
pub mod monitor;
pub mod recorder;
pub mod smart;
pub mod timeline;

pub use component::{ProbeComponent, ProbeOptions};
pub use correlate::{correlate, Correlation, EnergyBalance, FileEnergy, PhasePower};
pub use recorder::{ProbeRecorder, Recording};
pub use timeline::{PowerBin, Timeline};
