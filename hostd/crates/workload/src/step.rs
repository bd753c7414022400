//! The step types every part of a run shares: one file operation ([`Step`]) and its I/O
//! ([`IoJob`], [`Rw`]), a target's [`Capacity`], and the [`Goal`] that ends a target's work.
//! A leaf: it uses nothing else of this crate, so the plan, the programs, the runner, the
//! job loop and the backends all import it without importing each other.

use serde::Serialize;
use std::time::Duration;

/// The direction and order of one step's I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Rw {
    /// Sequential write.
    Write,
    /// Sequential read.
    Read,
    /// Random-offset write.
    RandWrite,
    /// Random-offset read.
    RandRead,
    /// Mixed reads and writes (fio's `rw=randrw`/`rw=rw` with `rwmixread`):
    /// each I/O reads with probability `read_percent` %, drawn from the seed.
    Mixed {
        /// Percentage of I/Os that read.
        read_percent: u8,
        /// Random offsets (else sequential).
        random: bool,
    },
}

impl Rw {
    /// True for writes (a mixed job is not: it reads existing data too).
    pub fn is_write(self) -> bool {
        matches!(self, Rw::Write | Rw::RandWrite)
    }
    /// True for random offsets.
    pub fn is_random(self) -> bool {
        matches!(
            self,
            Rw::RandRead | Rw::RandWrite | Rw::Mixed { random: true, .. }
        )
    }
    /// The read share of a mixed job, in percent.
    pub fn read_percent(self) -> Option<u8> {
        match self {
            Rw::Mixed { read_percent, .. } => Some(read_percent),
            _ => None,
        }
    }
}

/// The I/O of one step.
#[derive(Debug, Clone, Serialize)]
pub struct IoJob {
    /// Direction and order.
    pub rw: Rw,
    /// Size of the file the job works on.
    pub file_size: u64,
    /// Bytes to move (the file size for sequential jobs).
    pub bytes: u64,
    /// I/O size.
    pub block_size: usize,
    /// I/Os in flight.
    pub queue_depth: usize,
    /// Verify blocks on read.
    pub verify: bool,
    /// Issue one I/O per this many nanoseconds at most (video frame clock).
    pub pace_ns: Option<u64>,
    /// Seed of random offsets.
    pub seed: u64,
}

/// One file operation: one row of `files.csv`.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    /// Phase name (`write`, `read`, `prepare`, `SEQ1M-QD8-read`, …).
    pub phase: String,
    /// Index of the row within its phase (file number or repetition).
    pub index: u32,
    /// Which file of the target (names `f00000.dat` …).
    pub file: u32,
    /// The I/O.
    pub job: IoJob,
}

/// Free and total bytes of a target's storage, for `fill` plans and checks.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Capacity {
    /// Filesystem (or device) size.
    pub total: u64,
    /// Bytes available to us.
    pub available: u64,
}

/// What ends a target's work: how far along it is and when it will end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Goal {
    /// A fixed plan: this many bytes.
    Bytes(u64),
    /// An adaptive program that runs for about this long from its first
    /// phase: a duration run (then it finishes its last cycle), a paced sweep
    /// (each step lasts at least its time, ending on a whole chunk; it may
    /// also stop at its first missed step).
    Time {
        /// How long.
        run: Duration,
        /// Only roughly (a sweep): the ETA says `~`.
        approximate: bool,
    },
    /// An adaptive program whose end depends on what it measures (cache
    /// recovery: each burst lasts until the drive slows).
    Open,
}

impl Default for Goal {
    fn default() -> Goal {
        Goal::Bytes(0)
    }
}
