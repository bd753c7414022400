//! `manifest.json`: what ran, where, on what, with which parameters (docs/run-directory.md).
//! `hostd run` and `scenario-gen` write the same shape.

use crate::error::Result;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// File name in the run directory.
pub const FILE_NAME: &str = "manifest.json";
/// Newest format this build reads and the one it writes (2: `formats` added and
/// `scenario-gen` writes this shape; version-1 manifests read as before).
pub const FORMAT_VERSION: u32 = 2;

/// Whether a file's I/O bypasses the page cache.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum DirectIo {
    /// Direct I/O is in force.
    Direct,
    /// The filesystem refused direct I/O (e.g. `O_DIRECT` → EINVAL).
    Refused {
        /// What the OS said.
        reason: String,
    },
    /// Accepted, but the filesystem keeps data in memory anyway (tmpfs, ramfs).
    Ineffective {
        /// Why the numbers are not the disk's.
        reason: String,
    },
}

impl DirectIo {
    /// True when the numbers measure the device.
    pub fn is_direct(&self) -> bool {
        matches!(self, DirectIo::Direct)
    }
}

/// Host facts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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

/// Facts about one target established before any I/O.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetInfo {
    /// Label as given on the command line.
    pub label: String,
    /// Backend scheme (`dir`, `raw`, `sim`, …).
    pub scheme: String,
    /// Mode (`write`, `read`, `rw`).
    pub mode: String,
    /// Path (or scheme argument).
    pub path: String,
    /// The fresh subdirectory holding the test files, if any.
    pub test_dir: Option<String>,
    /// Filesystem type.
    pub fs_type: Option<String>,
    /// Mount point.
    pub mount_point: Option<String>,
    /// Device (mount source).
    pub device: Option<String>,
    /// Device model, where readable.
    pub device_model: Option<String>,
    /// Total bytes of the filesystem.
    pub capacity_bytes: Option<u64>,
    /// Free bytes before the run.
    pub free_bytes: Option<u64>,
    /// Direct-I/O status.
    pub direct_io: DirectIo,
    /// Engine that ran (`io_uring`, `threads`, `simulated`).
    pub engine: String,
    /// Why the engine differs from the one asked for, if it does.
    pub engine_note: Option<String>,
}

/// The whole manifest. Sections other components add (probe, influx) go in `extra`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Format version of this file.
    #[serde(default = "crate::version::one")]
    pub format_version: u32,
    /// Format version of each CSV file of the run directory, by file name (absent: 1).
    #[serde(default)]
    pub formats: BTreeMap<String, u32>,
    /// Run id.
    pub run_id: String,
    /// hostd version.
    #[serde(default)]
    pub hostd_version: String,
    /// Command line as given.
    #[serde(default)]
    pub command_line: Vec<String>,
    /// Start, host Unix ns.
    pub start_ns: u64,
    /// Host.
    #[serde(default)]
    pub host: HostInfo,
    /// Targets (path, filesystem, device, free space, direct I/O, engine).
    pub targets: Vec<TargetInfo>,
    /// The profile with all parameters, as JSON (the TOML schema of `fixtures/profiles/`).
    #[serde(default)]
    pub profile: serde_json::Value,
    /// Seed of sizes, offsets and data.
    #[serde(default)]
    pub seed: u64,
    /// Test files kept after the run.
    #[serde(default)]
    pub keep: bool,
    /// Cached I/O accepted.
    #[serde(default)]
    pub allow_cached: bool,
    /// The target (label) the probe was inline with, when there was a probe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_target: Option<String>,
    /// Other components' sections (`probe`, `influx`, `scenario`, …), keyed by name.
    #[serde(default)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl Manifest {
    /// A manifest of the current format with the given identity and nothing else.
    pub fn new(run_id: &str, start_ns: u64, targets: Vec<TargetInfo>) -> Manifest {
        Manifest {
            format_version: FORMAT_VERSION,
            formats: crate::version::current(),
            run_id: run_id.to_string(),
            hostd_version: String::new(),
            command_line: Vec::new(),
            start_ns,
            host: HostInfo::default(),
            targets,
            profile: serde_json::Value::Null,
            seed: 0,
            keep: false,
            allow_cached: false,
            probe_target: None,
            extra: serde_json::Map::new(),
        }
    }

    /// The target the probe measured: `probe_target`, else the probe section's `target`.
    pub fn probe_target(&self) -> Option<&str> {
        self.probe_target.as_deref().or_else(|| {
            self.extra
                .get("probe")
                .and_then(|p| p.get("target"))
                .and_then(|t| t.as_str())
        })
    }
}

/// Writes `dir/manifest.json` atomically.
pub fn write(dir: &Path, manifest: &Manifest) -> Result<()> {
    crate::version::write_json(&dir.join(FILE_NAME), manifest)
}

/// Reads `dir/manifest.json`, refusing a newer format.
pub fn read(dir: &Path) -> Result<Manifest> {
    crate::version::read_json(&dir.join(FILE_NAME), FORMAT_VERSION)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RecordError;

    fn manifest() -> Manifest {
        let mut m = Manifest::new(
            "20261121T164551Z-1125",
            1_795_279_551_649_908_087,
            vec![TargetInfo {
                label: "/mnt/x5".into(),
                scheme: "dir".into(),
                mode: "rw".into(),
                path: "/mnt/x5".into(),
                test_dir: Some("/mnt/x5/t".into()),
                fs_type: Some("ext4".into()),
                mount_point: None,
                device: None,
                device_model: None,
                capacity_bytes: Some(1),
                free_bytes: None,
                direct_io: DirectIo::Refused {
                    reason: "EINVAL".into(),
                },
                engine: "threads".into(),
                engine_note: None,
            }],
        );
        m.probe_target = Some("/mnt/x5".into());
        m.profile = serde_json::json!({"name": "quick"});
        m
    }

    #[test]
    fn manifest_round_trips() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), &manifest()).unwrap();
        assert_eq!(read(d.path()).unwrap(), manifest());
    }

    #[test]
    fn a_newer_manifest_is_refused_before_its_fields_are_looked_at() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join(FILE_NAME),
            r#"{"format_version": 7, "whatever": []}"#,
        )
        .unwrap();
        let e = read(d.path()).unwrap_err();
        assert!(
            matches!(e, RecordError::NewerFormat { found: 7, .. }),
            "{e}"
        );
    }

    #[test]
    fn a_bad_field_names_line_and_column() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join(FILE_NAME),
            "{\n  \"run_id\": \"r\",\n  \"start_ns\": \"soon\"\n}\n",
        )
        .unwrap();
        let e = read(d.path()).unwrap_err().to_string();
        assert!(e.contains("manifest.json: line 3, column"), "{e}");
    }
}
