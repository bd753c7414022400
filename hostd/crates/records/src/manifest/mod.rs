//! `manifest.json`: what ran, where, on what, with which parameters (docs/run-directory.md).
//! `hostd run`, `hostd monitor` and `scenario-gen` write the same shape; [`read`] also takes
//! the shapes `hostd monitor` and `scenario-gen` wrote before (`legacy.rs`).

mod legacy;

use crate::error::{RecordError, Result};
use crate::profile::Profile;
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
    /// The link the drive sits on (USB bridge and speed, PCIe, Thunderbolt), from sysfs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<crate::link::LinkInfo>,
}

/// The whole manifest. Sections other parts add (probe, influx) go in `extra`.
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
    /// The profile with all parameters (the TOML schema of `fixtures/profiles/`, as JSON);
    /// `None` (`null` or absent) for a session without one (`hostd monitor`, `scenario-gen`).
    #[serde(default)]
    pub profile: Option<RecordedProfile>,
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
    /// The user's notes and tags, and the starting state hostd set (trim, rest).
    #[serde(
        default,
        skip_serializing_if = "crate::conditions::Conditions::is_empty"
    )]
    pub conditions: crate::conditions::Conditions,
    /// Other parts' sections (`probe`, `influx`, `scenario`, …), keyed by name.
    #[serde(default)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// The profile a run recorded: typed when this build reads it, else kept as written
/// (a newer hostd's, with keys this one does not know, or an edited one), so that
/// `analyze` and `import`, which need only its name, still read the run, and nothing is
/// lost when the manifest is written again. `--resume` and `verify`, which need its
/// meaning, take it through [`Manifest::readable_profile`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RecordedProfile {
    /// A profile of this build's schema.
    Known(Box<Profile>),
    /// A profile this build cannot read, as written.
    Unread(serde_json::Value),
}

impl From<Profile> for RecordedProfile {
    fn from(p: Profile) -> Self {
        RecordedProfile::Known(Box::new(p))
    }
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
            profile: None,
            seed: 0,
            keep: false,
            allow_cached: false,
            probe_target: None,
            conditions: Default::default(),
            extra: serde_json::Map::new(),
        }
    }

    /// The target the probe measured: `probe_target`, else the probe section's `target`.
    pub fn probe_target(&self) -> Option<String> {
        self.probe_target
            .clone()
            .or_else(|| self.probe_section()?.target)
            .filter(|t| !t.is_empty())
    }

    /// The probe's id (the probe section's `probe_id`, from its DeviceInfo), when known.
    pub fn probe_id(&self) -> Option<String> {
        self.probe_section()?.probe_id.filter(|id| !id.is_empty())
    }

    /// The profile's name (`profile.name`), when the run had a profile.
    pub fn profile_name(&self) -> Option<&str> {
        match self.profile.as_ref()? {
            RecordedProfile::Known(p) => Some(p.name.as_str()),
            RecordedProfile::Unread(v) => v.get("name")?.as_str(),
        }
        .filter(|n| !n.is_empty())
    }

    /// The profile, when this build reads it; `None` for a session without one; for
    /// one it cannot read, [`RecordError::Profile`] with what serde said of it (`path`
    /// is the manifest's, for the message).
    pub fn readable_profile(&self, path: &Path) -> Result<Option<&Profile>> {
        match &self.profile {
            None => Ok(None),
            Some(RecordedProfile::Known(p)) => Ok(Some(p)),
            Some(RecordedProfile::Unread(v)) => Err(RecordError::Profile {
                path: path.to_path_buf(),
                message: match Profile::deserialize(v) {
                    Err(e) => e.to_string(),
                    Ok(_) => "read only on its own".into(),
                },
            }),
        }
    }

    /// The scenario's name of a `scenario-gen` run.
    pub fn scenario_name(&self) -> Option<String> {
        Some(
            self.section::<extra::ScenarioSection>(extra::SCENARIO)?
                .name,
        )
        .filter(|n| !n.is_empty())
    }

    /// True for a `hostd monitor` session (it has a monitor section), not a benchmark run.
    pub fn is_monitor(&self) -> bool {
        self.extra.contains_key(extra::MONITOR)
    }

    /// The host port's power budget the probe section records (`power_budget`), when any.
    pub fn port_budget(&self) -> Option<crate::port_budget::PortBudget> {
        let v = self
            .probe_section()?
            .rest
            .get(crate::port_budget::MANIFEST_KEY)?
            .clone();
        serde_json::from_value(v).ok()
    }

    /// The playback of a run whose simulated targets played faster (`extra.playback`, see
    /// [`crate::clock::Playback`]); None for a run in real time, and for runs written before
    /// it was recorded (their figures stay the host's).
    pub fn playback(&self) -> Option<crate::clock::Playback> {
        serde_json::from_value(self.extra.get(crate::clock::MANIFEST_KEY)?.clone()).ok()
    }

    /// The probe's section, when there was a probe (and the section has its shape).
    pub fn probe_section(&self) -> Option<extra::ProbeSection> {
        self.section(extra::PROBE)
    }

    /// Sets the section `name` of a part (one of [`extra`]'s types).
    pub fn set_section(&mut self, name: &str, section: &impl Serialize) {
        self.extra.insert(name.to_string(), extra::value(section));
    }

    /// The section `name` of a part read as `T`; `None` when absent or of another shape.
    fn section<T: serde::de::DeserializeOwned>(&self, name: &str) -> Option<T> {
        serde_json::from_value(self.extra.get(name)?.clone()).ok()
    }
}

/// The parts' sections of [`Manifest::extra`] other crates read: their names, and the
/// typed keys every writer of a section goes through (so the keys read above cannot drift
/// from the ones written).
pub mod extra {
    use serde::{Deserialize, Serialize};

    /// The probe's section (`hostd run --probe`, `hostd monitor`).
    pub const PROBE: &str = "probe";
    /// `scenario-gen`'s section.
    pub const SCENARIO: &str = "scenario";
    /// `hostd monitor`'s section.
    pub const MONITOR: &str = "monitor";

    /// The probe section: the keys read elsewhere, typed, and what else its writer records
    /// (port, identity, rates, and at the end `final`).
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    pub struct ProbeSection {
        /// The `--probe` value (`sim`, a port, `auto`).
        #[serde(default)]
        pub source: String,
        /// The target (label) the probe was inline with (`hostd run`).
        #[serde(default)]
        pub target: Option<String>,
        /// The probe's id from its DeviceInfo, once it answered.
        #[serde(default)]
        pub probe_id: Option<String>,
        /// The writer's other keys.
        #[serde(flatten)]
        pub rest: serde_json::Map<String, serde_json::Value>,
    }

    /// `scenario-gen`'s section.
    #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
    pub struct ScenarioSection {
        /// The scenario's name.
        pub name: String,
        /// Always true: the run was simulated.
        #[serde(default)]
        pub simulated: bool,
        /// End of the simulated run, host Unix ns.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub end_ns: Option<i64>,
    }

    /// `hostd monitor`'s section.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct MonitorSection {
        /// Always `monitor`.
        pub kind: String,
        /// End of the session, host Unix ns (written at the end).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub end_ns: Option<u64>,
    }

    impl MonitorSection {
        /// The section at the session's start.
        pub fn new() -> MonitorSection {
            MonitorSection {
                kind: "monitor".into(),
                end_ns: None,
            }
        }
    }

    impl Default for MonitorSection {
        fn default() -> Self {
            MonitorSection::new()
        }
    }

    /// One section as its JSON value (what [`super::Manifest::extra`] holds).
    pub fn value(section: &impl Serialize) -> serde_json::Value {
        serde_json::to_value(section).unwrap_or_default()
    }
}

/// Writes `dir/manifest.json` atomically.
pub fn write(dir: &Path, manifest: &Manifest) -> Result<()> {
    crate::version::write_json(&dir.join(FILE_NAME), manifest)
}

/// Reads `dir/manifest.json`, refusing a newer format. Besides every `format_version`, it
/// takes the two shapes written before this crate existed, upgraded to the current one
/// (`legacy.rs`): `hostd monitor`'s and `scenario-gen`'s.
///
/// A `profile` this build cannot read is kept as written ([`RecordedProfile::Unread`]).
pub fn read(dir: &Path) -> Result<Manifest> {
    let path = dir.join(FILE_NAME);
    let text = std::fs::read_to_string(&path).map_err(|e| RecordError::io(&path, e))?;
    match legacy::upgrade(dir, &path, &text) {
        Some(upgraded) => upgraded,
        None => crate::version::parse_json(&path, &text, FORMAT_VERSION),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::PhaseKind;
    use crate::units::ByteSize;
    use crate::FileRecord;

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
                link: None,
            }],
        );
        m.probe_target = Some("/mnt/x5".into());
        m.profile = Some(quick().into());
        m
    }

    /// The `quick` profile as its TOML file gives it (sizes as text, `verify` left out).
    fn quick() -> Profile {
        serde_json::from_value(serde_json::json!({
            "name": "quick", "description": "demo", "kind": "files",
            "files": {"count": 12, "min_size": "2MB", "max_size": "64MB"},
            "io": {"block_size": "1MiB", "queue_depth": 4, "phases": ["write", "read"]}
        }))
        .unwrap()
    }

    #[test]
    fn manifest_round_trips() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), &manifest()).unwrap();
        assert_eq!(read(d.path()).unwrap(), manifest());
    }

    #[test]
    fn a_manifest_without_a_profile_reads_and_writes_profile_null() {
        let d = tempfile::tempdir().unwrap();
        let mut m = manifest();
        m.profile = None;
        write(d.path(), &m).unwrap();
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(d.path().join(FILE_NAME)).unwrap()).unwrap();
        assert_eq!(
            json["profile"],
            serde_json::Value::Null,
            "the key stays, as before"
        );
        assert_eq!(read(d.path()).unwrap(), m);
        // Without the key at all (a hand-trimmed or third-party manifest).
        let mut json = json;
        json.as_object_mut().unwrap().remove("profile");
        std::fs::write(d.path().join(FILE_NAME), json.to_string()).unwrap();
        let back = read(d.path()).unwrap();
        assert_eq!((back.profile_name(), &back), (None, &m));
    }

    #[test]
    fn a_profile_with_a_key_this_build_does_not_know_is_kept_as_written_and_named_when_needed() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), &manifest()).unwrap();
        let path = d.path().join(FILE_NAME);
        let mut json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        json["profile"]["io"]["wobble"] = 3.into();
        std::fs::write(&path, serde_json::to_string_pretty(&json).unwrap()).unwrap();
        // A newer hostd's manifest: read, with the profile's name, and kept as written.
        let m = read(d.path()).unwrap();
        assert!(
            matches!(m.profile, Some(RecordedProfile::Unread(_))),
            "{:?}",
            m.profile
        );
        assert_eq!(m.profile_name(), Some("quick"));
        write(d.path(), &m).unwrap();
        let again: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(
            again["profile"], json["profile"],
            "nothing lost on a rewrite"
        );
        // What needs its meaning is told which key this build does not know.
        let e = m.readable_profile(&path).unwrap_err();
        assert!(matches!(e, RecordError::Profile { .. }), "{e:?}");
        let e = e.to_string();
        assert!(
            e.contains("manifest.json: key profile: unknown field `wobble`")
                && e.contains("written by another hostd version"),
            "{e}"
        );
        // A syntax error inside the profile is the file's error, as anywhere else.
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("\"wobble\": 3", "\"wobble\": ")).unwrap();
        assert!(
            matches!(read(d.path()), Err(RecordError::Json { .. })),
            "{:?}",
            read(d.path())
        );
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
    fn a_section_reads_back_typed_with_its_other_keys() {
        let mut m = manifest();
        let probe = extra::ProbeSection {
            source: "sim".into(),
            target: Some("/mnt/x5".into()),
            probe_id: Some("sim-0001".into()),
            rest: serde_json::json!({"rate_hz": 1000, "final": {"reconnects": 0}})
                .as_object()
                .cloned()
                .unwrap(),
        };
        m.set_section(extra::PROBE, &probe);
        m.set_section(
            extra::SCENARIO,
            &extra::ScenarioSection {
                name: "x5-thermal".into(),
                simulated: true,
                end_ns: Some(9),
            },
        );
        let d = tempfile::tempdir().unwrap();
        write(d.path(), &m).unwrap();
        let back = read(d.path()).unwrap();
        assert_eq!(back.probe_section(), Some(probe));
        assert_eq!(back.probe_id().as_deref(), Some("sim-0001"));
        assert_eq!(back.scenario_name().as_deref(), Some("x5-thermal"));
        assert_eq!(back.extra[extra::PROBE]["final"]["reconnects"], 0);
        assert!(!back.is_monitor());
        m.set_section(extra::MONITOR, &extra::MonitorSection::new());
        assert!(m.is_monitor());
    }

    #[test]
    fn the_probe_target_is_found_in_either_place() {
        let mut m = manifest();
        assert_eq!(m.probe_target().as_deref(), Some("/mnt/x5"));
        m.probe_target = None;
        assert_eq!(m.probe_target().as_deref(), None);
        m.extra
            .insert("probe".into(), serde_json::json!({ "target": "C" }));
        assert_eq!(m.probe_target().as_deref(), Some("C"));
    }

    /// `dir/NAME/manifest.json` holding the fixture `file` (a manifest an older build wrote).
    fn old_manifest(dir: &Path, name: &str, file: &str) -> std::path::PathBuf {
        let run = dir.join(name);
        std::fs::create_dir(&run).unwrap();
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/manifests")
            .join(file);
        std::fs::copy(fixture, run.join(FILE_NAME)).unwrap();
        run
    }

    /// Written again in the current shape, it reads back the same.
    fn rewrites_the_same(m: &Manifest) {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), m).unwrap();
        assert_eq!(&read(d.path()).unwrap(), m);
    }

    #[test]
    fn a_format_1_manifest_of_hostd_run_reads() {
        // Written by `hostd run --probe sim` of 7ba61e5's time (two targets, a probe).
        let d = tempfile::tempdir().unwrap();
        let m = read(&old_manifest(d.path(), "run", "run-format1.json")).unwrap();
        assert_eq!(m.format_version, 1);
        assert!(m.formats.is_empty(), "format 1 names no CSV versions");
        assert_eq!(m.run_id, "20261123T190438Z-5be2");
        assert_eq!(m.start_ns, 1_795_460_678_601_967_116);
        assert_eq!(m.host.hostname, "vm");
        assert_eq!(m.hostd_version, "0.1.0");
        assert_eq!(m.command_line[1], "run");
        let labels: Vec<&str> = m.targets.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["/var/tmp/ddxzv6/a", "/var/tmp/ddxzv6/b"]);
        assert!(m.targets.iter().all(|t| t.direct_io.is_direct()));
        assert_eq!(m.targets[1].mode, "read");
        assert_eq!(m.profile_name(), Some("small"));
        // The profile as recorded, every parameter typed (sizes as integers then as now).
        let p = m.readable_profile(Path::new(FILE_NAME)).unwrap().unwrap();
        assert_eq!(p.kind, crate::profile::Kind::Files);
        let files = p.files.as_ref().unwrap();
        assert_eq!(
            (files.count, files.total, files.min_size, files.max_size),
            (Some(16), None, ByteSize(1_000_000), ByteSize(16_000_000))
        );
        assert_eq!((p.io.block_size, p.io.queue_depth), (ByteSize(1 << 20), 4));
        assert_eq!(p.io.phases, [PhaseKind::Write, PhaseKind::Read]);
        assert!(p.io.verify && p.gates.is_none() && p.certify.is_none());
        assert_eq!((m.seed, m.keep, m.allow_cached), (5, false, false));
        assert_eq!(m.probe_id().as_deref(), Some("sim-0001"));
        assert_eq!(m.probe_target().as_deref(), Some("/var/tmp/ddxzv6/a"));
        assert_eq!(m.scenario_name().as_deref(), None);
        assert!(!m.is_monitor());
        rewrites_the_same(&m);
    }

    #[test]
    fn a_monitor_manifest_from_before_records_reads() {
        // Written by `hostd monitor` before 5e52024: `kind`, top-level `probe` and `end_ns`.
        let d = tempfile::tempdir().unwrap();
        let m = read(&old_manifest(
            d.path(),
            "run1",
            "monitor-before-records.json",
        ))
        .unwrap();
        assert!(m.is_monitor());
        assert_eq!(m.run_id, "run1", "the directory names the session");
        assert_eq!(m.start_ns, 1_795_453_129_645_964_104);
        assert_eq!(
            m.extra[extra::MONITOR]["end_ns"].as_u64(),
            Some(1_795_453_137_507_544_249)
        );
        assert_eq!(m.hostd_version, "0.1.0");
        assert_eq!(m.command_line[1], "monitor");
        assert!(m.targets.is_empty());
        assert_eq!(m.extra[extra::PROBE]["source"], "/dev/pts/4");
        assert_eq!(m.extra[extra::PROBE]["final"]["frames"]["frames_ok"], 221);
        assert_eq!(
            m.probe_id(),
            None,
            "that monitor did not record the probe's id"
        );
        assert_eq!(m.format_version, 1);
        rewrites_the_same(&m);
    }

    #[test]
    fn a_scenario_gen_manifest_from_before_records_reads_with_the_first_record_as_start() {
        // Written by `scenario-gen hub-www-contention` before 862a295: no start, no run id.
        let d = tempfile::tempdir().unwrap();
        let run = old_manifest(
            d.path(),
            "hub-www-contention",
            "scenario-gen-before-records.json",
        );
        let t0 = 1_790_000_000_000_000_000u64;
        let e = read(&run).unwrap_err().to_string();
        assert!(
            e.contains("no start_ns") && e.contains("files.csv") && e.contains("probe.csv"),
            "{e}"
        );
        crate::files::write_all(
            &run,
            &[
                FileRecord::new("C", "write", 1, t0 + 9, t0 + 20, 1),
                FileRecord::new("A", "write", 0, t0 + 5, t0 + 20, 1),
            ],
        )
        .unwrap();
        let m = read(&run).unwrap();
        assert_eq!(m.start_ns, t0 + 5);
        assert_eq!(m.run_id, "hub-www-contention");
        assert_eq!(m.scenario_name().as_deref(), Some("hub-www-contention"));
        assert_eq!(m.probe_target().as_deref(), Some("A"));
        let targets: Vec<(&str, &str, &str)> = m
            .targets
            .iter()
            .map(|t| (t.label.as_str(), t.mode.as_str(), t.path.as_str()))
            .collect();
        assert_eq!(
            targets,
            [
                ("C", "write", "sim:C:write"),
                ("A", "write", "sim:A:write"),
                ("B", "write", "sim:B:write")
            ]
        );
        assert!(m.targets.iter().all(|t| t.scheme == "sim"));
        assert!(!m.is_monitor());
        rewrites_the_same(&m);
        // The probe's lead starts before the first file.
        std::fs::write(
            run.join(crate::probe::FILE_NAME),
            format!("time_ns,seq,power_w\n{},0,4.5\n{},1,4.5\n", t0 + 2, t0 + 3),
        )
        .unwrap();
        assert_eq!(read(&run).unwrap().start_ns, t0 + 2);
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
