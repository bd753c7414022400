//! Test support shared by hostd's crates' tests, never by their code.
//!
//! [`probe_sim`]: the probe simulator, found or built, so that a plain `cargo test` runs
//! the tests that need it.
//!
//! [`blkio`]: a cgroup of the kernel's block I/O controller (cgroup v1 `blkio` or v2 `io`)
//! that slows a real block device (a loop device) in bytes or I/Os per second, exactly and
//! mid-run, and counts what its tasks moved: the truth a real-device test checks against.
//!
//! [`table`]: the cells of a printed table's row, by the columns its header sets.

#[cfg(target_os = "linux")]
pub mod blkio;
pub mod probe_sim;
pub mod table;
