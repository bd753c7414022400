//! The run orchestrator: one thread per target, all targets start their
//! measured steps together, events go to the observer, a sampler thread turns
//! byte counters into 1 s intervals (`sampler.rs`, from each target's counters and a
//! simulated drive's plan in `progress.rs`), and on stop or fault every target stops
//! cleanly and removes its test files (unless `keep`). The free-space check before any
//! write is `space.rs`.

mod progress;
mod sampler;
mod space;

pub use progress::TargetProgress;
pub use space::check_space;

use crate::backend::{StepContext, StepError, TargetBackend};
use crate::events::OnEvent;
use crate::plan::Plan;
use crate::program::Action;
use crate::step::Step;
use crate::unix_ns;
use hostd_records::programs::MixedSplit;
use hostd_records::{
    FileRecord, IntervalRecord, LatencyRecord, LatencyScope, RunEvent, RunOutcome, RunStatus,
    TargetInfo,
};

use sampler::{sampler, Ticks};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Run parameters that are not in the plan.
pub struct RunConfig {
    /// Run id.
    pub run_id: String,
    /// Keep test files afterwards.
    pub keep: bool,
    /// Set by the signal handler to stop.
    pub stop: Arc<AtomicBool>,
    /// Interval length (1 s by default).
    pub interval: Duration,
    /// The starting state each target is brought to after its unmeasured steps and
    /// before its measured part (trim, rest: [`crate::start_state`]).
    pub start_state: crate::start_state::StartState,
    /// What measured steps wait for before they start (a temperature gate), if anything.
    pub gate: Option<Arc<dyn crate::gate::StepGate>>,
    /// Whether [`RunOutcome`] collects every file record, interval and 100 ms counter
    /// sample (`files`, `intervals`, `samples`). `false` leaves them empty: the records
    /// reach only the observer ([`RunEvent::FileEnd`], [`RunEvent::Interval`],
    /// [`RunEvent::Counters`]; a long run's caller streams them to disk and reads them
    /// back, so its memory does not grow with the run).
    pub collect_records: bool,
    /// Where `[steady_state]`'s `temp_slope` reads each target's temperature, if anywhere.
    pub thermometer: Option<Arc<dyn crate::steady::Thermometer>>,
}

/// Makes the progress counters for a plan.
pub fn progress_for(plan: &Plan) -> Vec<Arc<TargetProgress>> {
    plan.targets
        .iter()
        .map(|t| {
            Arc::new(TargetProgress {
                goal: t.goal(),
                ..Default::default()
            })
        })
        .collect()
}

/// A barrier that can be broken (a target that fails in prepare must not leave
/// the others waiting).
struct StartGate {
    state: Mutex<(usize, bool)>,
    cv: Condvar,
    parties: usize,
}

impl StartGate {
    fn wait(&self) -> bool {
        let mut s = self.state.lock().unwrap();
        s.0 += 1;
        if s.0 >= self.parties {
            self.cv.notify_all();
        }
        while s.0 < self.parties && !s.1 {
            s = self.cv.wait(s).unwrap();
        }
        !s.1
    }
    fn breaks(&self) {
        self.state.lock().unwrap().1 = true;
        self.cv.notify_all();
    }
}

/// Prepares every backend (test directory, direct-I/O probe, engine).
/// Returns the first error; backends prepared so far are cleaned up.
pub fn prepare_all(plan: &Plan, backends: &mut [Box<dyn TargetBackend>]) -> anyhow::Result<()> {
    for i in 0..backends.len() {
        if let Err(e) = backends[i].prepare(&plan.targets[i]) {
            for b in backends.iter_mut().take(i + 1) {
                let _ = b.cleanup(false);
            }
            return Err(e);
        }
    }
    Ok(())
}

/// Runs a prepared plan. Backends must have been through [`prepare_all`]: announces the
/// run, runs each target on its own thread (with the sampler and the stop watcher beside
/// them), cleans up and reports how it ended.
pub fn execute(
    plan: &Plan,
    backends: Vec<Box<dyn TargetBackend>>,
    progress: &[Arc<TargetProgress>],
    cfg: &RunConfig,
    observer: &OnEvent<'_>,
) -> RunOutcome {
    let start_ns = unix_ns();
    let targets: Vec<TargetInfo> = backends.iter().map(|b| b.info()).collect();
    let mut warnings = announce(cfg, &targets, start_ns, observer);
    let shared = Shared::new(backends.len(), cfg.collect_records);
    let on_plan = backends.iter().all(|b| b.counts_on_plan());
    let mut backends = backends;

    std::thread::scope(|scope| {
        // Sampler: 100 ms samples, 1 s intervals.
        scope.spawn(|| {
            sampler(
                plan,
                progress,
                cfg,
                Ticks {
                    on_plan,
                    finished: &shared.finished,
                    stop: &shared.stop_all,
                },
                observer,
                &shared.intervals,
                &shared.samples,
            );
        });
        scope.spawn(|| shared.watch_stop(cfg));
        let handles: Vec<_> = backends
            .iter_mut()
            .enumerate()
            .map(|(i, backend)| {
                let tp = &plan.targets[i];
                let target = TargetRun {
                    index: i,
                    label: tp.spec.label.clone(),
                    prog: progress[i].clone(),
                    observer,
                    shared: &shared,
                    mixed: Mutex::new(Vec::new()),
                    start_state: &cfg.start_state,
                    gate: cfg.gate.as_deref(),
                    steady: plan.steady.as_ref(),
                    thermometer: cfg.thermometer.as_ref(),
                };
                scope.spawn(move || target.run(backend, tp))
            })
            .collect();
        for h in handles {
            let _ = h.join();
        }
        shared.finished.store(true, Ordering::SeqCst);
    });

    let cleanup = clean_up(plan, &mut backends, cfg.keep, &mut warnings);
    let status = if let Some(f) = shared.failure.into_inner().unwrap() {
        RunStatus::Failed(f)
    } else if cfg.stop.load(Ordering::Relaxed) {
        RunStatus::Interrupted
    } else {
        RunStatus::Completed
    };
    let end_ns = unix_ns();
    observer(&RunEvent::RunEnd {
        time_ns: end_ns,
        status: status.describe(),
    });
    RunOutcome {
        status,
        start_ns,
        end_ns,
        targets: backends.iter().map(|b| b.info()).collect(),
        files: shared.files.into_inner().unwrap(),
        intervals: shared.intervals.into_inner().unwrap(),
        samples: shared.samples.into_inner().unwrap(),
        warnings,
        cleanup,
        programs: shared.programs.into_inner().unwrap(),
        preparation: shared.preparation.into_inner().unwrap(),
    }
}

/// Sends `RunStart` and a warning for each target without direct I/O or with an engine
/// note (a simulated target's, its time scale, is no warning: the summary states it once as
/// a note); returns those warnings.
fn announce(
    cfg: &RunConfig,
    targets: &[TargetInfo],
    start_ns: u64,
    observer: &OnEvent<'_>,
) -> Vec<String> {
    observer(&RunEvent::RunStart {
        run_id: cfg.run_id.clone(),
        time_ns: start_ns,
        targets: targets.to_vec(),
    });
    let mut warnings = Vec::new();
    for (i, t) in targets.iter().enumerate() {
        if let Some(note) = t.engine_note.as_ref().filter(|_| !t.is_simulated()) {
            warnings.push(format!("target {}: {note}", t.label));
            observer(&RunEvent::Warning {
                target_index: Some(i),
                message: note.clone(),
            });
        }
        if !t.direct_io.is_direct() {
            let m = format!(
                "target {}: NOT DIRECT I/O ({:?}); throughput reflects the page cache",
                t.label, t.direct_io
            );
            observer(&RunEvent::Warning {
                target_index: Some(i),
                message: m.clone(),
            });
            warnings.push(m);
        }
    }
    warnings
}

/// Cleans up every backend (keeping the test files when `keep`); what each did, a failure
/// also going into `warnings`.
fn clean_up(
    plan: &Plan,
    backends: &mut [Box<dyn TargetBackend>],
    keep: bool,
    warnings: &mut Vec<String>,
) -> Vec<String> {
    let mut cleanup = Vec::with_capacity(backends.len());
    for (i, b) in backends.iter_mut().enumerate() {
        cleanup.push(match b.cleanup(keep) {
            Ok(m) => m,
            Err(e) => {
                let m = format!(
                    "target {}: cleanup failed: {e:#}",
                    plan.targets[i].spec.label
                );
                warnings.push(m.clone());
                m
            }
        });
    }
    cleanup
}

/// What the threads of one run share.
struct Shared {
    /// All targets start their measured steps together.
    gate: StartGate,
    /// Stop because of a fault somewhere.
    halt: AtomicBool,
    /// What the job loops watch: the user's stop or a fault.
    stop_all: AtomicBool,
    /// The first fault, in words.
    failure: Mutex<Option<String>>,
    /// Whether `files` and `intervals` collect the records ([`RunConfig::collect_records`]).
    collect_records: bool,
    /// Every file record, in completion order.
    files: Mutex<Vec<FileRecord>>,
    /// Targets running measured work now.
    active: Mutex<Vec<usize>>,
    /// Every target thread has ended.
    finished: AtomicBool,
    /// The sampler's 1 s intervals.
    intervals: Mutex<Vec<IntervalRecord>>,
    /// The sampler's 100 ms samples per target (when collecting records).
    samples: Mutex<Vec<Vec<(u64, u64)>>>,
    /// What the adaptive programs and mixed jobs found.
    programs: Mutex<Vec<hostd_records::programs::ProgramReport>>,
    /// What each target's trim and rest did.
    preparation: Mutex<Vec<hostd_records::conditions::Preparation>>,
}

impl Shared {
    /// The shared state of a run of `n` targets.
    fn new(n: usize, collect_records: bool) -> Shared {
        Shared {
            collect_records,
            gate: StartGate {
                state: Mutex::new((0, false)),
                cv: Condvar::new(),
                parties: n,
            },
            halt: AtomicBool::new(false),
            stop_all: AtomicBool::new(false),
            failure: Mutex::new(None),
            files: Mutex::new(Vec::new()),
            active: Mutex::new(Vec::new()),
            finished: AtomicBool::new(false),
            intervals: Mutex::new(Vec::new()),
            samples: Mutex::new(if collect_records {
                vec![Vec::new(); n]
            } else {
                Vec::new()
            }),
            programs: Mutex::new(Vec::new()),
            preparation: Mutex::new(Vec::new()),
        }
    }

    /// Until every target has ended: the user's stop flag or a fault reaches the job loops
    /// and releases targets waiting at the start gate.
    fn watch_stop(&self, cfg: &RunConfig) {
        while !self.finished.load(Ordering::Relaxed) {
            if cfg.stop.load(Ordering::Relaxed) || self.halt.load(Ordering::Relaxed) {
                self.stop_all.store(true, Ordering::SeqCst);
                self.gate.breaks();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Records the first fault and stops the run.
    fn fail(&self, message: String) {
        self.failure.lock().unwrap().get_or_insert(message);
        self.halt.store(true, Ordering::SeqCst);
    }

    /// True once the run is stopping.
    fn stopping(&self) -> bool {
        self.stop_all.load(Ordering::Relaxed)
    }
}

/// One target's thread: its prepare steps, the start gate, its measured steps or program,
/// and the events of each.
struct TargetRun<'s> {
    index: usize,
    label: String,
    prog: Arc<TargetProgress>,
    observer: &'s OnEvent<'s>,
    shared: &'s Shared,
    /// Read/write split of each mixed step.
    mixed: Mutex<Vec<MixedSplit>>,
    /// Trim and rest before the measured part.
    start_state: &'s crate::start_state::StartState,
    /// What measured steps wait for.
    gate: Option<&'s dyn crate::gate::StepGate>,
    /// Ends the measured steps at steady state (a fill).
    steady: Option<&'s crate::steady::SteadySpec>,
    /// Temperatures for `temp_slope`.
    thermometer: Option<&'s Arc<dyn crate::steady::Thermometer>>,
}

impl TargetRun<'_> {
    /// The whole of the target's work, then marks it done.
    fn run(&self, backend: &mut Box<dyn TargetBackend>, tp: &crate::plan::TargetPlan) {
        let (i, shared, observer) = (self.index, self.shared, self.observer);
        let ctx = StepContext {
            target_index: i,
            progress: &self.prog.bytes,
            scheduled: &self.prog.scheduled,
            interval_latency: &self.prog.latency,
            stop: &shared.stop_all,
            observer,
        };
        let own_activity = backend.reports_activity();
        let activity = |level: f64| {
            if !own_activity {
                self.activity(level);
            }
        };
        if !tp.prepare.is_empty() {
            activity(1.0);
        }
        let ok = self.run_steps(backend, &ctx, &tp.prepare, false);
        if !tp.prepare.is_empty() {
            activity(0.0);
        }
        if ok && !self.start_state.is_empty() {
            let done =
                crate::start_state::prepare(&backend.info(), self.start_state, &shared.stop_all);
            shared.preparation.lock().unwrap().push(done);
        }
        if !ok {
            shared.gate.breaks();
        } else if shared.gate.wait() {
            set_active(&shared.active, observer, i, true);
            activity(1.0);
            match &tp.program {
                None => {
                    self.run_steps(backend, &ctx, &tp.measured, true);
                }
                Some(spec) => self.run_program(backend, &ctx, spec, &activity),
            }
            activity(0.0);
            set_active(&shared.active, observer, i, false);
            let mixed = self.mixed.lock().unwrap();
            if !mixed.is_empty() {
                shared
                    .programs
                    .lock()
                    .unwrap()
                    .push(crate::program::mixed::report(&self.label, &mixed));
            }
        }
        self.prog.mark_done();
    }

    /// Reports the target's device activity (0..1), for backends that do not.
    fn activity(&self, level: f64) {
        (self.observer)(&RunEvent::Activity {
            target_index: self.index,
            level,
            time_ns: unix_ns(),
        });
    }

    /// Runs `steps` in order; false when the run stopped or a step failed.
    fn run_steps(
        &self,
        backend: &mut Box<dyn TargetBackend>,
        ctx: &StepContext,
        steps: &[Step],
        measured: bool,
    ) -> bool {
        let mut current = String::new();
        let mut steady = self
            .steady
            .filter(|_| measured)
            .zip(steps.first())
            .map(|(s, first)| {
                crate::steady::Detector::new(
                    s.clone().with_thermometer(self.thermometer, self.index),
                    &first.phase,
                )
            });
        let mut ok = true;
        for step in steps {
            if self.shared.stopping() {
                ok = false;
                break;
            }
            let (rec, went_on) = self.run_one(backend, ctx, step, measured, &mut current);
            if !went_on {
                ok = false;
                break;
            }
            if steady.as_mut().is_some_and(|d| d.add(&rec)) {
                break;
            }
        }
        // An interrupted or failed step did not run its course: nothing to say of it.
        if let Some(d) = steady.filter(|_| ok) {
            self.shared
                .programs
                .lock()
                .unwrap()
                .push(crate::program::steady_report(&self.label, &d));
        }
        if ok {
            self.end_phase(&mut current);
        }
        ok
    }

    /// Runs an adaptive program: asks it for each next action until it ends or the run
    /// stops, then keeps its report.
    fn run_program(
        &self,
        backend: &mut Box<dyn TargetBackend>,
        ctx: &StepContext,
        spec: &crate::program::ProgramSpec,
        activity: &dyn Fn(f64),
    ) {
        let mut program = spec
            .clone()
            .with_thermometer(self.thermometer, self.index)
            .start();
        let mut current = String::new();
        let mut last: Option<FileRecord> = None;
        while !self.shared.stopping() {
            let Some(action) = program.next(last.take().as_ref()) else {
                break;
            };
            match action {
                Action::Run(step) => {
                    let (rec, ok) = self.run_one(backend, ctx, &step, true, &mut current);
                    if !ok {
                        program.next(Some(&rec));
                        break;
                    }
                    last = Some(rec);
                }
                Action::Idle { phase, duration } => {
                    self.end_phase(&mut current);
                    self.idle(backend, &phase, duration);
                    activity(1.0);
                }
                Action::Delete(list) => {
                    for f in list {
                        if let Err(e) = backend.delete_file(f) {
                            self.shared.fail(format!("target {}: {e:#}", self.label));
                            break;
                        }
                    }
                }
            }
        }
        self.end_phase(&mut current);
        self.shared
            .programs
            .lock()
            .unwrap()
            .push(program.report(&self.label));
    }

    /// The target idles until its next step, for `pause` of record time or (None) as long as
    /// the host says: the backend and its plan are told together, and the device's activity
    /// goes to 0 on every backend (the probe simulator's load follows it).
    fn idle_starts(&self, backend: &mut Box<dyn TargetBackend>, pause: Option<Duration>) {
        backend.idle_started(pause);
        self.prog.plan_pause(pause);
        self.activity(0.0);
    }

    /// A program's pause: the target idles in `phase` for `duration` or until the run stops.
    fn idle(&self, backend: &mut Box<dyn TargetBackend>, phase: &str, duration: Duration) {
        self.prog.enter_phase(phase);
        self.idle_starts(backend, Some(duration));
        // `duration` is record time (the modelled drive's, for one played faster).
        let until = Instant::now() + hostd_records::clock::real_duration(duration);
        while Instant::now() < until && !self.shared.stopping() {
            std::thread::sleep((until - Instant::now()).min(Duration::from_millis(20)));
        }
    }

    /// Waits, idle, at the run's gate when it holds `step`; the target is busy again after.
    fn hold_at_gate(&self, backend: &mut Box<dyn TargetBackend>, step: &Step) {
        let Some(gate) = self.gate.filter(|g| g.holds(self.index, step)) else {
            return;
        };
        self.idle_starts(backend, None);
        gate.wait(self.index, step, &self.shared.stop_all);
        if !backend.reports_activity() {
            self.activity(1.0);
        }
    }

    /// Ends the phase `current` (if any) with its event.
    fn end_phase(&self, current: &mut String) {
        if !current.is_empty() {
            (self.observer)(&RunEvent::PhaseEnd {
                target_index: self.index,
                phase: std::mem::take(current),
                time_ns: unix_ns(),
            });
        }
    }

    /// Moves from phase `current` to the step's phase, with its events, if it differs.
    fn enter_phase(&self, step: &Step, measured: bool, current: &mut String) {
        if step.phase == *current {
            return;
        }
        if !current.is_empty() {
            (self.observer)(&RunEvent::PhaseEnd {
                target_index: self.index,
                phase: current.clone(),
                time_ns: unix_ns(),
            });
        }
        *current = step.phase.clone();
        self.prog.enter_phase(current);
        (self.observer)(&RunEvent::PhaseStart {
            target_index: self.index,
            phase: current.clone(),
            time_ns: unix_ns(),
            measured,
        });
    }

    /// Runs one step; its record, and whether the run may go on.
    fn run_one(
        &self,
        backend: &mut Box<dyn TargetBackend>,
        ctx: &StepContext,
        step: &Step,
        measured: bool,
        current: &mut String,
    ) -> (FileRecord, bool) {
        let (i, prog, observer) = (self.index, &self.prog, self.observer);
        if measured {
            self.hold_at_gate(backend, step);
        }
        self.enter_phase(step, measured, current);
        let t0 = unix_ns();
        observer(&RunEvent::FileStart {
            target_index: i,
            phase: step.phase.clone(),
            index: step.index,
            bytes: step.job.bytes,
            time_ns: t0,
        });
        let counted_before = prog.bytes.load(Ordering::Relaxed);
        let result = backend.run_step(step, ctx);
        let t1 = unix_ns().max(t0);
        let latency = match &result {
            Ok(out) if !out.outcome.latency.is_empty() => Some(out.outcome.latency.clone()),
            _ => None,
        };
        let split = match (&result, step.job.rw.read_percent()) {
            (Ok(o), Some(_)) => Some(MixedSplit {
                phase: step.phase.clone(),
                index: step.index,
                seconds: 0.0,
                read_bytes: o.outcome.read_bytes,
                write_bytes: o.outcome.bytes - o.outcome.read_bytes,
                read_ops: o.outcome.read_ops,
                write_ops: o.outcome.write_ops,
            }),
            _ => None,
        };
        let (rec, ok) = file_record(
            &self.label,
            i,
            step,
            t0,
            t1,
            result,
            &self.shared.halt,
            &self.shared.failure,
        );
        // A backend that does not count bytes as it goes (the simulator) has its file
        // counted when the file ends, so the live view and the intervals still see its
        // data.
        let counted = prog.bytes.load(Ordering::Relaxed) - counted_before;
        if counted < rec.bytes {
            prog.bytes.fetch_add(rec.bytes - counted, Ordering::Relaxed);
        }
        observer(&RunEvent::FileEnd(rec.clone()));
        if let Some(histogram) = latency {
            observer(&RunEvent::Latency(LatencyRecord {
                target: self.label.clone(),
                target_index: i,
                scope: LatencyScope::File {
                    phase: rec.phase.clone(),
                    index: rec.index,
                },
                start_ns: rec.start_ns,
                end_ns: rec.end_ns,
                histogram,
            }));
        }
        if self.shared.collect_records {
            self.shared.files.lock().unwrap().push(rec.clone());
        }
        if let Some(split) = split.filter(|_| ok) {
            self.mixed.lock().unwrap().push(MixedSplit {
                seconds: rec.seconds(),
                ..split
            });
        }
        (rec, ok)
    }
}

fn set_active(active: &Mutex<Vec<usize>>, observer: &OnEvent<'_>, i: usize, on: bool) {
    let mut a = active.lock().unwrap();
    if on {
        a.push(i);
        a.sort_unstable();
    } else {
        a.retain(|&x| x != i);
    }
    observer(&RunEvent::ActiveTargets {
        active: a.clone(),
        time_ns: unix_ns(),
    });
}

#[allow(clippy::too_many_arguments)]
fn file_record(
    label: &str,
    i: usize,
    step: &Step,
    t0: u64,
    t1: u64,
    result: Result<crate::backend::StepOutput, StepError>,
    halt: &AtomicBool,
    failure: &Mutex<Option<String>>,
) -> (FileRecord, bool) {
    let mut rec = FileRecord {
        target: label.to_string(),
        target_index: i,
        phase: step.phase.clone(),
        index: step.index,
        start_ns: t0,
        end_ns: t1,
        bytes: 0,
        mbps: 0.0,
        verified: None,
        corrupt_blocks: 0,
        corrupt_bytes: 0,
        late_ops: 0,
        block_size: step.job.block_size,
        queue_depth: step.job.queue_depth,
        corrupt: Vec::new(),
        direct_io: false,
        status: "ok".into(),
        latency: None,
        probe: None,
    };
    let ok = match result {
        Ok(out) => {
            if !out.outcome.latency.is_empty() {
                rec.latency = Some(out.outcome.latency.stats());
            }
            if let Some((a, b)) = out.timing {
                rec.start_ns = a;
                rec.end_ns = b;
            }
            rec.bytes = out.outcome.bytes;
            rec.late_ops = out.outcome.late_ops;
            rec.direct_io = out.direct_io;
            if let Some(v) = out.outcome.verify {
                rec.verified = Some(v.corrupt_blocks == 0);
                rec.corrupt_blocks = v.corrupt_blocks;
                rec.corrupt_bytes = v.corrupt_bytes;
                rec.corrupt = v.corrupt;
            }
            if out.outcome.interrupted {
                rec.status = "interrupted".into();
                false
            } else {
                true
            }
        }
        Err(e) => {
            rec.bytes = e.bytes_done();
            let msg = format!("target {label}, {} #{}: {e}", step.phase, step.index);
            rec.status = format!("error: {e}");
            failure.lock().unwrap().get_or_insert(msg);
            halt.store(true, Ordering::SeqCst);
            false
        }
    };
    let secs = rec.seconds();
    rec.mbps = if secs > 0.0 {
        rec.bytes as f64 / secs / 1e6
    } else {
        0.0
    };
    (rec, ok)
}
