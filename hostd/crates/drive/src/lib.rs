//! hostd-drive: the drive's own view of a run, beside the probe's.
//!
//! - [`part`]: the drive's part of `hostd run` ([`DrivePart`]): its link in the
//!   manifest, its temperature and thermal record polled through the run (`drive_temp.csv`,
//!   `drive_log.csv`) and handed to the run's drive feeds, its SMART readings around each
//!   phase (`summary.json` `drive.smart`).
//! - [`link`]: the link the drive sits on (USB speed and bridge, PCIe, Thunderbolt), from
//!   sysfs on Linux, [`link_macos`] (`system_profiler`) on macOS and `link_windows`
//!   (the storage property query) on Windows.
//! - [`smart`]: the drive through `smartctl --json`: how it is asked, the one parser of
//!   its answers (temperature, NVMe thermal counters and sensors, SATA SCT status and
//!   history), how a drive is found to answer, and the one poller.
//! - [`phase_smart`]: the readings before and after each phase, taken from the drive feed
//!   and kept in bounded memory.

#![warn(missing_docs)]

pub mod link;
pub mod link_macos;
#[cfg(windows)]
pub mod link_windows;
pub mod part;
pub mod phase_smart;
pub mod smart;

pub use part::DrivePart;
