//! hostd-drive: the drive's own view of a run, beside the probe's.
//!
//! - [`part`]: the drive's part of `hostd run` ([`DriveComponent`]): its link in the
//!   manifest, its temperature polled through the run (`drive_temp.csv`).
//! - [`smart`]: `smartctl --json` readings (temperature, NVMe thermal counters) before and
//!   after each phase and while the run goes.
//! - [`thermal_log`]: the drive's own thermal record in a `smartctl --json` answer (NVMe
//!   thermal management counters and sensors, SATA SCT status and history), polled with
//!   the temperature into `drive_log.csv`.

#![warn(missing_docs)]

pub mod part;
pub mod smart;
pub mod thermal_log;

pub use part::DriveComponent;
