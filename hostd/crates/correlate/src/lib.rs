//! hostd-correlate: joins the probe's aligned samples with the workload's
//! file records, and runs the probe as a part of `hostd run`.
//!
//! - [`timeline`]: the compact probe record correlation reads.
//! - [`correlate`]: per-file energy, J/GB, power, temperature; per-phase
//!   power profile; the energy balance.
//! - [`recorder`]: writes `probe.csv`, `probe_agg.csv`, `probe-link.jsonl`.
//! - [`filescsv`]: the probe columns of `files.csv`.
//! - [`drive`]: the `hostd run` component for the drive: link in the manifest,
//!   temperature polled through the run (`drive_temp.csv`).
//! - [`smart`]: the drive's own SMART view before and after each phase.
//! - [`monitor`]: `hostd monitor`, the probe alone until stopped.
//! - [`component`]: the `hostd run` component tying them together.

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
pub use correlate::{correlate, Correlation, EnergyBalance, FileEnergy, FileSpan, PhasePower};
pub use recorder::{ProbeRecorder, Recording, SampleListener};
pub use timeline::Timeline;

/// Replaces `path` atomically with `bytes` (a fresh temporary file in the
/// same directory, then a rename), so readers never see half a file and no
/// other file is touched.
pub fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    use anyhow::Context;
    use std::io::Write;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write in {}", dir.display()))?;
    tmp.write_all(bytes)
        .with_context(|| format!("cannot write {}", path.display()))?;
    // A temporary file is private (0600); the replacement keeps the mode of
    // the file it replaces, or gets the usual 0644 (less the umask) when new.
    let mode = match std::fs::metadata(path) {
        Ok(m) => m.permissions(),
        Err(_) => default_file_permissions(),
    };
    tmp.as_file()
        .set_permissions(mode)
        .with_context(|| format!("cannot set the mode of {}", path.display()))?;
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("cannot replace {}", path.display()))?;
    Ok(())
}

/// The permissions `File::create` would give a new file (0666 less the
/// umask; the umask is read from /proc, as setting it to read it races with
/// other threads; 022 where /proc does not say).
fn default_file_permissions() -> std::fs::Permissions {
    use std::os::unix::fs::PermissionsExt as _;
    let mask = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o022);
    std::fs::Permissions::from_mode(0o666 & !mask)
}
