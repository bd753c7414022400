//! The workload profile: the TOML schema of `fixtures/profiles/` and the `profile` key of
//! `manifest.json`, one type for both, so `hostd run` (which writes it) and `--resume`,
//! `hostd verify` and every other reader of a manifest cannot drift apart.
//!
//! These are the data types only. Loading, parsing and checking a profile (built-in names,
//! files, values TOML types cannot express) is `hostd_workload::profile::ProfileExt`.
//!
//! Unknown keys are refused in every section, by name: a mistyped key in a profile file is
//! an error, not a default silently taken (and a manifest's profile holding a key this
//! build does not know is refused the same way, see [`crate::manifest::read`]).

use crate::units::{ByteSize, DurationText};
use serde::{Deserialize, Serialize};

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
    /// The same sustained write at several fill levels, verified fill data between them
    /// (`[fill_states]`).
    #[serde(rename = "fill-states")]
    FillStates,
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// Parameters of `kind = "certify"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certify: Option<CertifySpec>,
    /// Pass/fail gates of `kind = "certify"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gates: Option<Gates>,
    /// `kind = "fill-states"`: the fill levels and the write measured at each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill_states: Option<FillStatesSpec>,
    /// Wait before measured steps until the drive has cooled to near its idle temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature_gate: Option<TemperatureGate>,
    /// End the measured step early once throughput has settled (fio's `ss=`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_state: Option<SteadyStateSpec>,
    /// I/O parameters shared by all kinds.
    pub io: IoSpec,
}

/// `[steady_state]`: fio's steady-state detection. Throughput is sampled once a second;
/// once `ramp` has passed, the step ends as soon as the last `window` of samples meets any
/// of `criteria` (fio's `ss`, `ss_dur`, `ss_ramp`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SteadyStateSpec {
    /// `METRIC:LIMIT` with METRIC `bw`, `bw_slope`, `iops` or `iops_slope` and LIMIT a
    /// number, `%` of the window's mean when it ends so (`bw:10%`, `iops_slope:0.5%`); or
    /// `temp_slope:L`, the temperature's slope in °C/min, which must hold as well.
    pub criteria: Vec<String>,
    /// The window judged (fio's `ss_dur`).
    pub window: DurationText,
    /// Time from the step's start before samples count (fio's `ss_ramp`, default 0).
    #[serde(default = "zero_duration")]
    pub ramp: DurationText,
}

fn zero_duration() -> DurationText {
    DurationText(std::time::Duration::ZERO)
}

/// `[temperature_gate]`: before each gated step the target waits, idle, until the chosen
/// temperature is within `margin_c` of the idle temperature, or `timeout_s` has passed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TemperatureGate {
    /// Which temperature to wait on.
    pub source: GateSource,
    /// How close to idle counts as cooled, °C (above 0).
    pub margin_c: f64,
    /// Longest wait at one gate, s; then the step starts anyway (recorded as timed out).
    pub timeout_s: f64,
    /// The idle temperature, °C; default: the temperature read just before the run's
    /// first measured step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_c: Option<f64>,
    /// Which steps wait.
    #[serde(default)]
    pub at: GateAt,
}

/// The temperature a [`TemperatureGate`] waits on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GateSource {
    /// The probe's enclosure sensor (the probed target only).
    Probe,
    /// The drive's own temperature through SMART (smartctl).
    Drive,
}

/// Which steps a [`TemperatureGate`] holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GateAt {
    /// Every measured step (each file; each repetition of a diskmark test).
    #[default]
    Step,
    /// The first step of each measured phase.
    Phase,
}

/// Files of random size: either `count` files or files until `total` bytes;
/// with `duration`, cycles of write, read (verify) and delete until the time is
/// up, each cycle `count` files, `total` bytes, or 90 % of the free space.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FillSpec {
    /// Fraction of capacity to reach (0 < f < 1).
    pub fraction: f64,
    /// Size of each file written.
    pub file_size: ByteSize,
}

/// The same sustained write at several fill levels: fill (and verify) up to each level,
/// then write `write` bytes in `file_size` files and measure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FillStatesSpec {
    /// Fill levels, percent of the target's capacity, rising, each 0 ≤ level < 100.
    pub levels: Vec<f64>,
    /// Bytes of the sustained write measured at each level.
    pub write: ByteSize,
    /// Size of each fill file and each file of the measured write.
    pub file_size: ByteSize,
}

/// One diskmark test (e.g. SEQ1M QD8).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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

/// `kind = "cache-recovery"`: write until the fast stage ends, idle, write again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheRecoverySpec {
    /// Each burst is written as files of this size; a drop is found (and the
    /// bytes written at the fast rate are resolved) to within one chunk.
    pub chunk: ByteSize,
    /// A burst ends after this many bytes even without a drop (the fallback
    /// when the drive has no fast stage this test can exhaust).
    pub limit: ByteSize,
    /// The idle times between bursts, in order (`["5s", "15s", …]`).
    pub pauses: Vec<DurationText>,
    /// A chunk slower than `(1 − drop_fraction)` × the burst's fast rate is
    /// slow; two slow chunks in a row end the burst (default 0.3).
    #[serde(default = "default_drop_fraction")]
    pub drop_fraction: f64,
}

/// `kind = "paced-sweep"`: measure the unthrottled rate, then write at
/// fractions of it, each for a set time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PacedSweepSpec {
    /// Files of this size make up each step (rates are checked per file).
    pub chunk: ByteSize,
    /// How long each step (and the first, unpaced one) writes.
    pub step_time: DurationText,
    /// The paced rates as percentages of the unthrottled rate, in order.
    pub percents: Vec<f64>,
    /// A step is held when every file reached at least `(1 − tolerance)` ×
    /// its paced rate (default 0.1).
    #[serde(default = "default_tolerance")]
    pub tolerance: f64,
    /// Stop the sweep at the first step not held (default true).
    #[serde(default = "yes")]
    pub stop_at_first_miss: bool,
}

/// Parameters of `kind = "certify"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CertifySpec {
    /// Write-then-verify passes over the same files.
    pub passes: u32,
    /// Fraction of the free space (directory) or of the device (raw) to cover, 0 < f ≤ 1.
    pub fraction: f64,
    /// Size of each file (the last one takes the remainder).
    pub file_size: ByteSize,
}

/// The pass/fail gates of a certify profile. Each is optional; a profile
/// must give at least one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gates {
    /// Most corrupt bytes allowed over all verify reads (normally 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_corrupt_bytes: Option<u64>,
    /// Lowest per-file write rate allowed, MB/s (10^6 B/s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_write_mbps: Option<f64>,
    /// Lowest per-file read rate allowed, MB/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_read_mbps: Option<f64>,
    /// Highest enclosure (probe) or drive (SMART) temperature allowed, °C.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_temperature_c: Option<f64>,
    /// Highest 99.9th-percentile I/O latency allowed, a duration (`"50ms"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_p999_latency: Option<String>,
}

impl Gates {
    /// True when no gate is set.
    pub fn is_empty(&self) -> bool {
        self.max_corrupt_bytes.is_none()
            && self.min_write_mbps.is_none()
            && self.min_read_mbps.is_none()
            && self.max_temperature_c.is_none()
            && self.max_p999_latency.is_none()
    }
}

/// I/O parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// Let the engine poll for completions before it sleeps (as `hostd run --poll`);
    /// default off: it sleeps at once, as fio's io_uring engine does.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub poll: bool,
}

fn default_drop_fraction() -> f64 {
    0.3
}
fn default_tolerance() -> f64 {
    0.1
}
fn yes() -> bool {
    true
}
