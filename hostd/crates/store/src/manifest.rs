//! `manifest.json`: what was run, where, on what, with which parameters.

use hostd_workload::events::TargetInfo;
use hostd_workload::Profile;
use serde::Serialize;

/// Host facts.
#[derive(Debug, Clone, Serialize)]
pub struct HostInfo {
    /// Host name.
    pub hostname: String,
    /// OS (`linux`, `macos`).
    pub os: String,
    /// Kernel release and version (uname).
    pub kernel: String,
    /// CPU architecture.
    pub arch: String,
    /// Logical CPUs.
    pub cpus: usize,
}

impl HostInfo {
    /// Reads the host's facts.
    pub fn collect() -> HostInfo {
        HostInfo {
            hostname: hostname::get()
                .map(|h| h.to_string_lossy().into_owned())
                .unwrap_or_default(),
            os: std::env::consts::OS.to_string(),
            kernel: uname(),
            arch: std::env::consts::ARCH.to_string(),
            cpus: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
        }
    }
}

fn uname() -> String {
    // SAFETY: uname fills a zeroed struct.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return String::new();
    }
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|c| **c != 0)
            .map(|c| *c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    format!(
        "{} {} {}",
        field(&u.sysname),
        field(&u.release),
        field(&u.version)
    )
}

/// The whole manifest. Sections other components add (probe, influx) go in `extra`.
#[derive(Debug, Clone, Serialize)]
pub struct Manifest {
    /// Format version of the run directory.
    pub format_version: u32,
    /// Run id.
    pub run_id: String,
    /// hostd version.
    pub hostd_version: String,
    /// Command line as given.
    pub command_line: Vec<String>,
    /// Start, host Unix ns.
    pub start_ns: u64,
    /// Host.
    pub host: HostInfo,
    /// Targets (path, filesystem, device, free space, direct I/O, engine).
    pub targets: Vec<TargetInfo>,
    /// Profile with all parameters.
    pub profile: Profile,
    /// Seed of sizes, offsets and data.
    pub seed: u64,
    /// Test files kept after the run.
    pub keep: bool,
    /// Cached I/O accepted.
    pub allow_cached: bool,
    /// Other components' sections (`probe`, `influx`, …), keyed by name.
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// Current format version of the run directory.
pub const FORMAT_VERSION: u32 = 1;
