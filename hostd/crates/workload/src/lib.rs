//! hostd-workload: the disk workload engine.
//!
//! A [`profile::Profile`] (TOML, built in or a user file) and a seed become a
//! [`plan::Plan`]: per target, the files with their sizes and the phases to run.
//! The [`runner`] executes a plan on one [`backend::TargetBackend`] per target,
//! concurrently, through an [`engine::IoEngine`] (io_uring or threads), and
//! reports everything it does as [`hostd_records::RunEvent`]s to one callback
//! ([`events::OnEvent`]; `hostd run`'s pipeline). Blocks carry a header and CRC-32C ([`block`]) so the
//! read phase can locate corruption.

#![warn(missing_docs)]

pub mod backend;
pub mod bench;
pub mod block;
pub mod buffer;
pub mod certify;
pub mod cputime;
pub mod crc32c;
pub mod direct;
pub mod engine;
pub mod events;
pub mod fault;
pub mod fsinfo;
#[cfg(windows)]
pub mod fsinfo_windows;
pub mod gate;
pub mod jobloop;
pub mod latency;
pub mod plan;
pub mod plan_fill_states;
pub mod profile;
mod profile_programs;
pub mod program;
#[cfg(windows)]
pub mod rawdisk_windows;
pub mod reverify;
pub mod runner;
pub mod sizes;
pub mod start_state;
pub mod steady;
pub mod step;
pub mod target;

pub use plan::Plan;
pub use profile::ProfileExt;
pub use target::{TargetMode, TargetSpec};

/// Unix nanoseconds on the process's monotonic timeline (the time base of all
/// records; see [`hostd_records::clock`]): a stepped host clock changes no duration.
pub fn unix_ns() -> u64 {
    hostd_records::clock::now_ns().max(0) as u64
}
