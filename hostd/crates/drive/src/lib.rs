//! hostd-drive: the drive's own view of a run, beside the probe's.
//!
//! - [`part`]: the drive's part of `hostd run` ([`DriveComponent`]): its link in the
//!   manifest, its temperature polled through the run (`drive_temp.csv`).
//! - [`smart`]: `smartctl --json` readings (temperature, NVMe thermal counters) before and
//!   after each phase and while the run goes.

#![warn(missing_docs)]

pub mod part;
pub mod smart;

pub use part::DriveComponent;
