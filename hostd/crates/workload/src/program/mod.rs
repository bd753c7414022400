//! Adaptive workloads: programs that choose each next step from what the
//! previous ones measured, instead of a fixed list (issue #12).
//!
//! - [`cycles`]: a `files` profile with a `duration` — write, read (verify),
//!   delete, again, until the time is up.
//! - [`recovery`]: `cache-recovery` — write until the fast stage ends, idle,
//!   write again; bytes at the fast rate per pause and a fitted time constant.
//! - [`sweep`]: `paced-sweep` — the unthrottled rate, then paced steps at
//!   fractions of it; the highest rate held.
//!
//! A [`ProgramSpec`] is plan data (serialisable, repeatable from the seed); the
//! runner starts it as a [`Program`] per target and asks it for [`Action`]s.

pub mod cycles;
pub mod fit;
pub mod mixed;
pub mod recovery;
pub mod sweep;

use crate::step::{Capacity, Goal, IoJob, Rw, Step};
use crate::target::TargetSpec;
use hostd_records::profile::{Kind, Profile};
use hostd_records::programs::{ProgramFigures, ProgramReport};
use hostd_records::FileRecord;
use serde::Serialize;
use std::time::Duration;

/// What a program asks the runner to do next.
#[derive(Debug, Clone)]
pub enum Action {
    /// Run one step (one file operation).
    Run(Step),
    /// Do nothing for a while (no I/O; the device may recover).
    Idle {
        /// Phase name the live view and intervals show.
        phase: String,
        /// How long.
        duration: Duration,
    },
    /// Remove these test files (by file number).
    Delete(Vec<u32>),
}

/// A running program.
pub trait Program: Send {
    /// The next action, given the record of the step just run (None before
    /// the first); None when the program is done.
    fn next(&mut self, last: Option<&FileRecord>) -> Option<Action>;
    /// What it found so far (also after an interrupted run).
    fn report(&self, target: &str) -> ProgramReport;
}

/// The program of one target: plan data.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "program", rename_all = "kebab-case")]
pub enum ProgramSpec {
    /// Duration cycles.
    Duration(cycles::CyclesSpec),
    /// Cache recovery.
    CacheRecovery(recovery::RecoverySpec),
    /// Paced sweep.
    PacedSweep(sweep::SweepSpec),
}

/// The I/O parameters every program step shares.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct StepIo {
    /// I/O size.
    pub block_size: usize,
    /// I/Os in flight.
    pub queue_depth: usize,
    /// Verify reads.
    pub verify: bool,
    /// Seed of the target's files.
    pub seed: u64,
}

impl StepIo {
    /// A sequential job over a whole file of `size` bytes.
    pub fn job(&self, rw: Rw, size: u64, file: u32, pace_ns: Option<u64>) -> IoJob {
        IoJob {
            rw,
            file_size: size,
            bytes: size,
            block_size: self.block_size,
            queue_depth: self.queue_depth,
            verify: self.verify,
            pace_ns,
            seed: self.seed.wrapping_add(file as u64),
        }
    }
}

impl ProgramSpec {
    /// The program a profile gives a target, if it is an adaptive one.
    pub fn for_target(
        profile: &Profile,
        spec: &TargetSpec,
        seed: u64,
        cap: Option<Capacity>,
    ) -> Option<ProgramSpec> {
        let io = StepIo {
            block_size: profile.io.block_size.0 as usize,
            queue_depth: profile.io.queue_depth,
            verify: profile.io.verify,
            seed,
        };
        match profile.kind {
            Kind::Files => {
                let f = profile.files.as_ref()?;
                let d = f.duration?;
                Some(ProgramSpec::Duration(cycles::CyclesSpec::new(
                    f, d, profile, spec, io, cap,
                )))
            }
            Kind::CacheRecovery => Some(ProgramSpec::CacheRecovery(recovery::RecoverySpec::new(
                profile.cache_recovery.as_ref()?,
                io,
            ))),
            Kind::PacedSweep => Some(ProgramSpec::PacedSweep(
                sweep::SweepSpec::new(profile.paced_sweep.as_ref()?, io).with_steady(
                    profile.steady_state.as_ref().map(|s| {
                        crate::steady::SteadySpec::new(s, None)
                            .expect("the profile check passed it")
                    }),
                ),
            )),
            _ => None,
        }
    }

    /// The same program, its steady-state steps reading target `target_index`'s
    /// temperature from `thermometer`.
    pub fn with_thermometer(
        self,
        thermometer: Option<&std::sync::Arc<dyn crate::steady::Thermometer>>,
        target_index: usize,
    ) -> ProgramSpec {
        match self {
            ProgramSpec::PacedSweep(s) => {
                let steady = s
                    .steady
                    .clone()
                    .map(|ss| ss.with_thermometer(thermometer, target_index));
                ProgramSpec::PacedSweep(s.with_steady(steady))
            }
            ProgramSpec::Duration(mut s) => {
                s.steady = s
                    .steady
                    .take()
                    .map(|ss| ss.with_thermometer(thermometer, target_index));
                ProgramSpec::Duration(s)
            }
            other => other,
        }
    }

    /// Starts the program.
    pub fn start(&self) -> Box<dyn Program> {
        match self {
            ProgramSpec::Duration(s) => Box::new(cycles::Cycles::new(s.clone())),
            ProgramSpec::CacheRecovery(s) => Box::new(recovery::Recovery::new(s.clone())),
            ProgramSpec::PacedSweep(s) => Box::new(sweep::Sweep::new(s.clone())),
        }
    }

    /// Its first steps (the plan lists them; buffers are sized from them).
    pub fn first_steps(&self) -> Vec<Step> {
        match self {
            ProgramSpec::Duration(s) => s.cycle_steps(0),
            ProgramSpec::CacheRecovery(s) => vec![s.step("fill", 0)],
            ProgramSpec::PacedSweep(s) => vec![s.step("unpaced", 0, None)],
        }
    }

    /// What ends the program (a static plan's byte total means nothing here).
    pub fn goal(&self) -> Goal {
        match self {
            ProgramSpec::Duration(s) => Goal::Time {
                run: s.duration,
                approximate: false,
            },
            ProgramSpec::PacedSweep(s) => Goal::Time {
                run: s.step_time * (1 + s.percents.len() as u32),
                approximate: true,
            },
            ProgramSpec::CacheRecovery(_) => Goal::Open,
        }
    }

    /// The most each of its files takes (index = file number): the free-space check.
    pub fn file_sizes(&self) -> Vec<u64> {
        match self {
            ProgramSpec::Duration(s) => s.sizes.clone(),
            ProgramSpec::CacheRecovery(s) => vec![s.chunk; s.files as usize],
            ProgramSpec::PacedSweep(s) => vec![s.chunk; s.files as usize],
        }
    }
}

/// Whether the step `last` failed, setting `failed` when it did: a program stops at a failed
/// step, and its report says so ([`report_of`]).
pub(crate) fn step_failed(last: Option<&FileRecord>, failed: &mut bool) -> bool {
    let bad = last.is_some_and(|rec| rec.status != "ok");
    *failed |= bad;
    bad
}

/// A program's report on `target`: its `text` (with a line saying so when a step failed
/// and the program stopped early) and its `figures`.
pub(crate) fn report_of(
    target: &str,
    mut text: Vec<String>,
    failed: bool,
    figures: ProgramFigures,
) -> ProgramReport {
    if failed {
        text.push("  stopped early: a step failed".into());
    }
    ProgramReport {
        target: target.to_string(),
        text,
        figures,
    }
}

/// MB/s of a record (10⁶ bytes per second), 0 for an empty one.
pub(crate) fn rate_bps(rec: &FileRecord) -> f64 {
    let s = rec.seconds();
    if s > 0.0 {
        rec.bytes as f64 / s
    } else {
        0.0
    }
}

/// Median of a non-empty slice.
pub(crate) fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n == 0 {
        return f64::NAN;
    }
    if !n.is_multiple_of(2) {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// `5s`, `1m30s`: a pause for phase names.
pub(crate) fn short_duration(d: Duration) -> String {
    let ms = d.as_millis() as u64;
    if !ms.is_multiple_of(1000) {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        humantime::format_duration(Duration::from_secs(ms / 1000))
            .to_string()
            .replace(' ', "")
    }
}

/// The report of a step that could end at steady state: which criterion ended it and when.
pub fn steady_report(target: &str, detector: &crate::steady::Detector) -> ProgramReport {
    report_of(
        target,
        vec![detector.text(target)],
        false,
        ProgramFigures::SteadyState(detector.figures()),
    )
}
