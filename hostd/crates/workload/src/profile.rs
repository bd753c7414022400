//! Workload profiles: TOML files (built in or the user's) describing what to
//! write and read. See `fixtures/profiles/` for the built-in ones.

pub use crate::profile_programs::{CacheRecoverySpec, DurationText, PacedSweepSpec};
pub mod certify;

use crate::units::ByteSize;
pub use certify::{CertifySpec, Gates};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Block sizes and file sizes must be multiples of this for direct I/O.
pub const ALIGN: u64 = 4096;
/// The deepest queue a profile may ask for.
pub const MAX_QUEUE_DEPTH: usize = 64;

/// The built-in profiles, name and TOML text.
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "quick",
        include_str!("../../../../fixtures/profiles/quick.toml"),
    ),
    (
        "stibium-160",
        include_str!("../../../../fixtures/profiles/stibium-160.toml"),
    ),
    (
        "sustained-100GB",
        include_str!("../../../../fixtures/profiles/sustained-100GB.toml"),
    ),
    (
        "fill-90",
        include_str!("../../../../fixtures/profiles/fill-90.toml"),
    ),
    (
        "diskmark",
        include_str!("../../../../fixtures/profiles/diskmark.toml"),
    ),
    (
        "video",
        include_str!("../../../../fixtures/profiles/video.toml"),
    ),
    (
        "cache-recovery",
        include_str!("../../../../fixtures/profiles/cache-recovery.toml"),
    ),
    (
        "paced-sweep",
        include_str!("../../../../fixtures/profiles/paced-sweep.toml"),
    ),
    (
        "diskmark-mixed",
        include_str!("../../../../fixtures/profiles/diskmark-mixed.toml"),
    ),
    (
        "soak-8h",
        include_str!("../../../../fixtures/profiles/soak-8h.toml"),
    ),
    (
        "certify",
        include_str!("../../../../fixtures/profiles/certify.toml"),
    ),
];

/// What a profile is wrong about, with where it came from.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// Neither a built-in name nor an existing file.
    #[error("unknown profile `{name}`: not a built-in ({builtins}) and no such file")]
    Unknown {
        /// What the user asked for.
        name: String,
        /// The built-in names, comma separated.
        builtins: String,
    },
    /// The file could not be read.
    #[error("cannot read profile {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// TOML syntax or schema error (message carries line and column).
    #[error("profile {origin} is malformed: {message}")]
    Malformed {
        /// File path or `built-in NAME`.
        origin: String,
        /// The parser's message.
        message: String,
    },
    /// Parsed, but the values make no sense.
    #[error("profile {origin} is invalid: {message}")]
    Invalid {
        /// File path or `built-in NAME`.
        origin: String,
        /// What is wrong and how to fix it.
        message: String,
    },
}

/// The kind of workload a profile describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A set of files of random sizes, written then read (Stibium-style).
    Files,
    /// Sequential files until the target is a fraction full.
    Fill,
    /// Fixed tests on one file, several repetitions (CrystalDiskMark-style).
    Diskmark,
    /// Frame-sized writes on a frame clock.
    Video,
    /// Write until the fast stage ends, idle, write again (`[cache_recovery]`).
    #[serde(rename = "cache-recovery")]
    CacheRecovery,
    /// Paced writes at stepped fractions of the unthrottled rate (`[paced_sweep]`).
    #[serde(rename = "paced-sweep")]
    PacedSweep,
    /// Write and verify every block, several passes, judged by `[gates]`.
    Certify,
}

/// A phase of a files/fill/video workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PhaseKind {
    /// Write every file.
    Write,
    /// Read every file back (and verify).
    Read,
}

/// A complete profile.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Short name (`quick`).
    pub name: String,
    /// One line for `hostd profiles`.
    #[serde(default)]
    pub description: String,
    /// Which workload.
    pub kind: Kind,
    /// Parameters of `kind = "files"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<FilesSpec>,
    /// Parameters of `kind = "fill"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill: Option<FillSpec>,
    /// Parameters of `kind = "diskmark"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diskmark: Option<DiskmarkSpec>,
    /// Parameters of `kind = "video"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub video: Option<VideoSpec>,
    /// Parameters of `kind = "cache-recovery"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_recovery: Option<CacheRecoverySpec>,
    /// Parameters of `kind = "paced-sweep"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paced_sweep: Option<PacedSweepSpec>,
    /// Parameters of `kind = "certify"` (see [`certify`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certify: Option<CertifySpec>,
    /// Pass/fail gates of `kind = "certify"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gates: Option<Gates>,
    /// I/O parameters shared by all kinds.
    pub io: IoSpec,
}

/// Files of random size: either `count` files or files until `total` bytes;
/// with `duration`, cycles of write, read (verify) and delete until the time is
/// up, each cycle `count` files, `total` bytes, or 90 % of the free space.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FilesSpec {
    /// Run for this long (`"8h"`), cycling write/read/delete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<DurationText>,
    /// Number of files (exclusive with `total`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// Write files until this many bytes (exclusive with `count`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<ByteSize>,
    /// Smallest file.
    pub min_size: ByteSize,
    /// Largest file.
    pub max_size: ByteSize,
}

/// Fill a target to a fraction of its capacity.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FillSpec {
    /// Fraction of capacity to reach (0 < f < 1).
    pub fraction: f64,
    /// Size of each file written.
    pub file_size: ByteSize,
}

/// One diskmark test (e.g. SEQ1M QD8).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiskmarkTest {
    /// Name used as the phase prefix (`SEQ1M-QD8`).
    pub name: String,
    /// `sequential` or `random`.
    pub pattern: Pattern,
    /// I/O size.
    pub block_size: ByteSize,
    /// Queue depth.
    pub queue_depth: usize,
    /// Bytes moved per repetition (default: the whole file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<ByteSize>,
    /// Mixed I/O: the percentage of I/Os that read (fio's `rwmixread`); the
    /// test then runs once per repetition as phase `NAME-mix`, each I/O's
    /// direction drawn from the seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_percent: Option<u8>,
}

/// Access pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    /// Offsets in order.
    Sequential,
    /// Uniformly random aligned offsets.
    Random,
}

/// CrystalDiskMark-style tests.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiskmarkSpec {
    /// The test file's size.
    pub file_size: ByteSize,
    /// Repetitions of each test.
    pub repetitions: u32,
    /// The tests, in order.
    pub tests: Vec<DiskmarkTest>,
}

/// Frame-sized writes at a frame rate.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VideoSpec {
    /// Bytes per frame (rounded up to 4 KiB for direct I/O).
    pub frame_size: ByteSize,
    /// Frames per second.
    pub fps: f64,
    /// Length of each clip in seconds.
    pub seconds: f64,
    /// Number of clips (files).
    pub clips: u32,
}

/// I/O parameters.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IoSpec {
    /// Size of each I/O.
    pub block_size: ByteSize,
    /// I/Os in flight.
    pub queue_depth: usize,
    /// Phases in order (`write`, `read`); for diskmark the order within a test.
    pub phases: Vec<PhaseKind>,
    /// Verify every block on read.
    #[serde(default = "yes")]
    pub verify: bool,
}

fn yes() -> bool {
    true
}

impl Profile {
    /// Loads a built-in profile by name, or a TOML file by path.
    pub fn load(name_or_path: &str) -> Result<Profile, ProfileError> {
        if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
            return Profile::parse(text, &format!("built-in `{name_or_path}`"));
        }
        let path = Path::new(name_or_path);
        if !path.exists() {
            return Err(ProfileError::Unknown {
                name: name_or_path.to_string(),
                builtins: BUILTIN
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        let text = std::fs::read_to_string(path).map_err(|source| ProfileError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Profile::parse(&text, &path.display().to_string())
    }

    /// All built-in profiles, parsed.
    pub fn builtins() -> Vec<Profile> {
        BUILTIN
            .iter()
            .map(|(n, t)| Profile::parse(t, n).expect("built-in profiles are valid"))
            .collect()
    }

    /// Parses and validates TOML text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Profile, ProfileError> {
        let profile: Profile = toml::from_str(text).map_err(|e| ProfileError::Malformed {
            origin: origin.to_string(),
            message: e.to_string().trim_end().to_string(),
        })?;
        profile
            .validate()
            .map_err(|message| ProfileError::Invalid {
                origin: origin.to_string(),
                message,
            })?;
        Ok(profile)
    }

    /// Checks values that TOML types cannot express.
    fn validate(&self) -> Result<(), String> {
        check_block(self.io.block_size, "[io] block_size")?;
        check_qd(self.io.queue_depth, "[io] queue_depth")?;
        if self.io.phases.is_empty() {
            return Err("[io] phases is empty: give at least one of \"write\", \"read\"".into());
        }
        certify::validate(
            self.kind == Kind::Certify,
            self.certify.as_ref(),
            self.gates.as_ref(),
        )?;
        match self.kind {
            Kind::Certify => {
                if !self.io.verify || self.io.phases != [PhaseKind::Write, PhaseKind::Read] {
                    return Err("kind = \"certify\" writes then verifies every block: give [io] phases = [\"write\", \"read\"] and verify = true".into());
                }
            }
            Kind::Files => {
                let f = self
                    .files
                    .as_ref()
                    .ok_or("kind = \"files\" needs a [files] section")?;
                if let Some(d) = f.duration {
                    crate::profile_programs::validate_duration(d)?;
                }
                match (f.count, f.total) {
                    (Some(0), _) => return Err("[files] count must be at least 1".into()),
                    (Some(_), Some(_)) => {
                        return Err("[files] give either count or total, not both".into())
                    }
                    (None, None) if f.duration.is_none() => {
                        return Err("[files] needs count, total or duration".into())
                    }
                    (None, Some(t)) if t.0 == 0 => {
                        return Err("[files] total must be more than 0".into())
                    }
                    (Some(n), _) if n > MAX_FILES => {
                        return Err(format!("[files] count {n} is above {MAX_FILES}"))
                    }
                    (None, Some(t)) if t.0 / f.min_size.0.max(ALIGN) > MAX_FILES as u64 => {
                        return Err(format!(
                            "[files] total {t} would take more than {MAX_FILES} files of min_size {}",
                            f.min_size
                        ))
                    }
                    _ => {}
                }
                if f.max_size.0 > MAX_FILE_SIZE {
                    return Err(format!("[files] max_size {} is above 1 TiB", f.max_size));
                }
                if f.min_size.0 < ALIGN {
                    return Err(format!("[files] min_size {} is below 4 KiB", f.min_size));
                }
                if f.min_size > f.max_size {
                    return Err(format!(
                        "[files] min_size {} is larger than max_size {}",
                        f.min_size, f.max_size
                    ));
                }
            }
            Kind::Fill => {
                let f = self
                    .fill
                    .as_ref()
                    .ok_or("kind = \"fill\" needs a [fill] section")?;
                if !(f.fraction > 0.0 && f.fraction < 1.0) {
                    return Err(format!(
                        "[fill] fraction {} must be between 0 and 1",
                        f.fraction
                    ));
                }
                if f.file_size.0 < ALIGN {
                    return Err("[fill] file_size is below 4 KiB".into());
                }
            }
            Kind::Diskmark => {
                let d = self
                    .diskmark
                    .as_ref()
                    .ok_or("kind = \"diskmark\" needs a [diskmark] section")?;
                if d.tests.is_empty() || d.repetitions == 0 {
                    return Err("[diskmark] needs at least one test and one repetition".into());
                }
                if d.file_size.0 < ALIGN {
                    return Err("[diskmark] file_size is below 4 KiB".into());
                }
                for t in &d.tests {
                    check_block(
                        t.block_size,
                        &format!("[diskmark] test {} block_size", t.name),
                    )?;
                    check_qd(
                        t.queue_depth,
                        &format!("[diskmark] test {} queue_depth", t.name),
                    )?;
                    if t.read_percent.is_some_and(|p| p > 100) {
                        return Err(format!(
                            "[diskmark] test {} read_percent = {} must be 0 to 100",
                            t.name,
                            t.read_percent.unwrap_or_default()
                        ));
                    }
                    if t.block_size > d.file_size {
                        return Err(format!(
                            "[diskmark] test {} block is larger than the file",
                            t.name
                        ));
                    }
                }
            }
            Kind::Video => {
                let v = self
                    .video
                    .as_ref()
                    .ok_or("kind = \"video\" needs a [video] section")?;
                if !(v.fps > 0.0 && v.fps <= 1000.0) {
                    return Err(format!("[video] fps {} must be in (0, 1000]", v.fps));
                }
                if v.seconds.is_nan() || v.seconds <= 0.0 || v.clips == 0 || v.frame_size.0 == 0 {
                    return Err("[video] seconds, clips and frame_size must be positive".into());
                }
                if v.seconds > MAX_VIDEO_SECONDS || v.clips > MAX_FILES {
                    return Err(format!(
                        "[video] seconds must be at most {MAX_VIDEO_SECONDS} and clips at most {MAX_FILES}"
                    ));
                }
                let frames = (v.seconds * v.fps).ceil() as u64;
                if frames
                    .checked_mul(v.frame_size.0)
                    .is_none_or(|clip| clip > MAX_FILE_SIZE)
                {
                    return Err(format!(
                        "[video] a clip of {} s at {} fps with {} frames is above 1 TiB",
                        v.seconds, v.fps, v.frame_size
                    ));
                }
            }
            Kind::CacheRecovery => self
                .cache_recovery
                .as_ref()
                .ok_or("kind = \"cache-recovery\" needs a [cache_recovery] section")?
                .validate(self.io.block_size)?,
            Kind::PacedSweep => self
                .paced_sweep
                .as_ref()
                .ok_or("kind = \"paced-sweep\" needs a [paced_sweep] section")?
                .validate(self.io.block_size)?,
        }
        Ok(())
    }

    /// The profile as TOML (what `hostd profiles` prints and the manifest stores).
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).unwrap_or_default()
    }
}

/// Most files (or video clips) one target may plan; keeps a mistyped profile
/// from allocating gigabytes before the free-space check can refuse it.
const MAX_FILES: u32 = 1_000_000;
/// Largest single file (or video clip) a profile may ask for.
const MAX_FILE_SIZE: u64 = 1 << 40;
/// Longest video clip: one day.
const MAX_VIDEO_SECONDS: f64 = 86_400.0;

fn check_block(b: ByteSize, what: &str) -> Result<(), String> {
    if b.0 == 0 || !b.0.is_multiple_of(ALIGN) {
        return Err(format!(
            "{what} {b} must be a positive multiple of 4 KiB (direct I/O)"
        ));
    }
    if b.0 > 64 << 20 {
        return Err(format!("{what} {b} is above 64 MiB"));
    }
    Ok(())
}

fn check_qd(qd: usize, what: &str) -> Result<(), String> {
    if qd == 0 || qd > MAX_QUEUE_DEPTH {
        return Err(format!(
            "{what} {qd} must be between 1 and {MAX_QUEUE_DEPTH}"
        ));
    }
    Ok(())
}

/// Rounds `n` up to a multiple of 4 KiB.
pub fn align_up(n: u64) -> u64 {
    n.div_ceil(ALIGN) * ALIGN
}
