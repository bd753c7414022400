//! Target backends: what a `--target` is. A backend runs plan steps (one file
//! operation each) and describes its target. Built in: `dir` (a directory on a
//! mounted filesystem) and raw block devices (`--raw-device`). Other crates add
//! schemes (e.g. `sim:SCENARIO`) with [`BackendRegistry::register`]; the
//! runner never knows which kind it drives.

mod dir;

use crate::block::DataPool;
use crate::engine::EngineChoice;
use crate::events::OnEvent;
use crate::fault::FaultPlan;
use crate::jobloop::{JobError, JobOutcome};
use crate::latency::IntervalLatency;
use crate::plan::TargetPlan;
use crate::step::{Capacity, Step};
use crate::target::TargetSpec;
use hostd_records::{RunEvent, TargetInfo};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;

pub use dir::{is_test_file_name, test_dir_name, DirBackend, DIRECT_PROBE_FILE};

/// Options shared by all targets of a run.
#[derive(Clone)]
pub struct BackendOptions {
    /// Run id (names the test subdirectory `throttlescope-<run_id>`).
    pub run_id: String,
    /// Seed of the data pool and offsets.
    pub seed: u64,
    /// Engine choice.
    pub engine: EngineChoice,
    /// Whether the engines' waits poll before they sleep (`hostd run --poll`,
    /// the profile's `io.poll`); off, they sleep at once, as fio's do.
    pub poll: bool,
    /// Accept cached I/O where direct I/O is refused or ineffective.
    pub allow_cached: bool,
    /// The target is a raw block device (`--raw-device`).
    pub raw_device: bool,
    /// Permission to overwrite a raw device (`--destroy-data`).
    pub destroy_data: bool,
    /// Injected faults (tests).
    pub fault: FaultPlan,
    /// Block contents, shared by all targets.
    pub pool: Arc<DataPool>,
    /// Resume an interrupted run (`hostd run --resume`): adopt the existing
    /// `throttlescope-<run_id>` test directory and the files in it instead of
    /// creating them.
    pub resume: bool,
}

/// Shared per-run state a step needs.
pub struct StepContext<'a> {
    /// Index of the target.
    pub target_index: usize,
    /// Bytes done by this target (live view, intervals).
    pub progress: &'a AtomicU64,
    /// The backend's plan of `progress` at record times ([`StepContext::schedule`]).
    pub scheduled: &'a std::sync::Mutex<Vec<(u64, u64)>>,
    /// Latencies of this target's I/Os, for the 1 s intervals.
    pub interval_latency: &'a IntervalLatency,
    /// Stop request (Ctrl-C or a fault elsewhere).
    pub stop: &'a AtomicBool,
    /// The run's observers (for backends that report their own activity).
    pub observer: &'a OnEvent<'a>,
}

impl StepContext<'_> {
    /// A backend that moves its bytes on a plan (the simulator) gives it here as (record ns,
    /// `progress` then), in time order, at each step's start: the 100 ms counters take the
    /// plan's count when the backend's thread is late to count it, so a host hiccup is no
    /// stall of the target (a run played N× faster stretches it N×). Each step's plan goes
    /// on from the one before (the sampler forgets what it has passed); the runner extends
    /// it over a pause ([`TargetBackend::counts_on_plan`]).
    pub fn schedule(&self, plan: Vec<(u64, u64)>) {
        let mut s = self.scheduled.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(first) = plan.first() {
            // A pause's end (or an open pause) gives way to the step that ends it.
            while s.last().is_some_and(|l| l.0 >= first.0) {
                s.pop();
            }
        }
        s.extend(plan);
    }

    /// Drops the plan: what was counted is what moved (a step interrupted mid-plan).
    pub fn unschedule(&self) {
        self.scheduled
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    /// Reports this target's device activity (0..1) — what the probe
    /// simulator's `load` follows. Only backends whose
    /// [`TargetBackend::reports_activity`] is true call this.
    pub fn activity(&self, level: f64) {
        (self.observer)(&RunEvent::Activity {
            target_index: self.target_index,
            level,
            time_ns: crate::unix_ns(),
        });
    }
}

/// Why a step failed.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// The filesystem or device is full (ENOSPC).
    #[error("disk full after {bytes_done} bytes of this file ({path})")]
    DiskFull {
        /// File path.
        path: String,
        /// Bytes completed in this file.
        bytes_done: u64,
    },
    /// Any other I/O error.
    #[error("{path}: {source}")]
    Io {
        /// File path.
        path: String,
        /// Error with offset.
        #[source]
        source: JobError,
    },
    /// Could not open/sync/etc.
    #[error("{0:#}")]
    Other(anyhow::Error),
}

impl StepError {
    /// Bytes moved before the failure.
    pub fn bytes_done(&self) -> u64 {
        match self {
            StepError::DiskFull { bytes_done, .. } => *bytes_done,
            StepError::Io { source, .. } => source.bytes_done,
            StepError::Other(_) => 0,
        }
    }
}

/// What a step did. Backends that do not run in real time (simulators) may
/// report their own times in `timing` (host Unix ns); otherwise the runner's
/// wall-clock measurement is used.
#[derive(Debug)]
pub struct StepOutput {
    /// The job loop's outcome.
    pub outcome: JobOutcome,
    /// Start and end override, host Unix ns.
    pub timing: Option<(u64, u64)>,
    /// Whether this step's I/O bypassed the page cache.
    pub direct_io: bool,
}

/// One target.
pub trait TargetBackend: Send {
    /// Facts for the manifest (valid after `prepare`).
    fn info(&self) -> TargetInfo;
    /// Size and free space, for plans and the free-space check.
    fn capacity(&self) -> Option<Capacity>;
    /// Identity of the storage (targets on the same one share free space).
    fn storage_key(&self) -> Option<String>;
    /// Called once before any step: create the test directory, probe direct I/O.
    fn prepare(&mut self, plan: &TargetPlan) -> anyhow::Result<()>;
    /// Runs one step.
    fn run_step(&mut self, step: &Step, ctx: &StepContext<'_>) -> Result<StepOutput, StepError>;
    /// True when the backend emits its own [`RunEvent::Activity`] through
    /// [`StepContext::activity`] (a simulator). Otherwise the runner emits 1.0
    /// when the target starts I/O and 0.0 when it goes idle.
    fn reports_activity(&self) -> bool {
        false
    }
    /// Says that the target now stays idle until its next step: for `planned` (an adaptive
    /// program's pause, record time), or for as long as the host says (None: a temperature
    /// gate), so a simulated device can recover during it.
    fn idle_started(&mut self, _planned: Option<std::time::Duration>) {}
    /// True when the backend moves its bytes on a plan of record times it gives with
    /// [`StepContext::schedule`] (a simulator), its records not the host's timing: a run
    /// whose every target does is sampled on that plan, so the host's scheduling leaves
    /// no trace in its records.
    fn counts_on_plan(&self) -> bool {
        false
    }
    /// Removes one test file this backend created (a duration run's cycle
    /// ends so). Backends without files have nothing to remove.
    fn delete_file(&mut self, _file: u32) -> anyhow::Result<()> {
        Ok(())
    }
    /// Removes what the backend created (unless `keep`); returns what it did.
    fn cleanup(&mut self, keep: bool) -> anyhow::Result<String>;
}

/// Builds a backend for a target spec (its index among the run's targets).
pub type BackendFactory = Box<
    dyn Fn(&TargetSpec, usize, &BackendOptions) -> anyhow::Result<Box<dyn TargetBackend>>
        + Send
        + Sync,
>;

/// Maps target schemes to backend factories.
pub struct BackendRegistry {
    factories: Vec<(String, BackendFactory)>,
}

impl BackendRegistry {
    /// The built-in `dir` backend (which also handles `--raw-device`).
    pub fn with_builtins() -> BackendRegistry {
        let mut r = BackendRegistry {
            factories: Vec::new(),
        };
        r.register(
            "dir",
            Box::new(|spec, idx, opts| {
                Ok(Box::new(DirBackend::new(spec, idx, opts)?) as Box<dyn TargetBackend>)
            }),
        );
        r
    }

    /// Adds (or replaces) the factory of `scheme` (e.g. `sim`).
    pub fn register(&mut self, scheme: &str, factory: BackendFactory) {
        self.factories.retain(|(s, _)| s != scheme);
        self.factories.push((scheme.to_string(), factory));
    }

    /// Registered schemes other than `dir` (for [`TargetSpec::parse`]).
    pub fn schemes(&self) -> Vec<&str> {
        self.factories
            .iter()
            .map(|(s, _)| s.as_str())
            .filter(|s| *s != "dir")
            .collect()
    }

    /// Opens the backend of `spec`.
    pub fn open(
        &self,
        spec: &TargetSpec,
        index: usize,
        opts: &BackendOptions,
    ) -> anyhow::Result<Box<dyn TargetBackend>> {
        let (_, f) = self
            .factories
            .iter()
            .find(|(s, _)| *s == spec.scheme)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "target {}: no backend for scheme `{}`",
                    spec.label,
                    spec.scheme
                )
            })?;
        f(spec, index, opts)
    }
}
