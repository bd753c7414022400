//! hostd-drive: the drive's own view of a run, beside the probe's.
//!
//! - [`part`]: the drive's part of `hostd run` ([`DriveComponent`]): its link in the
//!   manifest, its temperature polled through the run (`drive_temp.csv`, `drive_log.csv`),
//!   its SMART readings around each phase (`summary.json` `drive.smart`).
//! - [`link`]: the link the drive sits on (USB speed and bridge, PCIe, Thunderbolt), from
//!   sysfs on Linux, [`link_macos`] (`system_profiler`) on macOS and `link_windows`
//!   (the storage property query) on Windows.
//! - [`smart`]: `smartctl --json` readings (temperature, NVMe thermal counters) before and
//!   after each phase and while the run goes.
//! - [`phase_smart`]: the readings before and after each phase, kept in bounded memory.
//! - [`thermal_log`]: the drive's own thermal record in a `smartctl --json` answer (NVMe
//!   thermal management counters and sensors, SATA SCT status and history), polled with
//!   the temperature into `drive_log.csv`.

#![warn(missing_docs)]

pub mod link;
pub mod link_macos;
#[cfg(windows)]
pub mod link_windows;
pub mod part;
pub mod phase_smart;
pub mod smart;
pub mod thermal_log;

pub use part::DriveComponent;
