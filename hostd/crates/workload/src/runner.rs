//! The run orchestrator: one thread per target, all targets start their
//! measured steps together, events go to the observer, a sampler thread turns
//! byte counters into 1 s intervals, and on stop or fault every target stops
//! cleanly and removes its test files (unless `keep`).

use crate::backend::{StepContext, StepError, TargetBackend};
use crate::events::OnEvent;
use crate::latency::IntervalLatency;
use crate::plan::Plan;
use crate::program::Action;
use crate::step::{Goal, Step};
use crate::unix_ns;
use hostd_records::latency::LatencyHistogram;
use hostd_records::programs::MixedSplit;
use hostd_records::{
    FileRecord, IntervalRecord, LatencyRecord, LatencyScope, RunEvent, RunOutcome, RunStatus,
    TargetInfo,
};

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Live counters of one target (read by the live view and the sampler).
#[derive(Debug, Default)]
pub struct TargetProgress {
    /// Bytes completed so far (all phases).
    pub bytes: AtomicU64,
    /// What ends the target's work.
    pub goal: Goal,
    /// Current phase name.
    pub phase: Mutex<String>,
    /// Set when the target has finished (or failed).
    pub done: AtomicBool,
    /// Phases entered since the sampler last closed an interval, so an
    /// interval that spans a phase change is labelled with both.
    pub phases_entered: Mutex<Vec<String>>,
    /// When the target entered its first phase.
    pub started: OnceLock<Instant>,
    /// When the target finished (or failed).
    pub ended: OnceLock<Instant>,
    /// I/O latencies not yet assigned to an interval.
    pub latency: IntervalLatency,
    /// A backend's plan of [`TargetProgress::bytes`] at record times, step after step, from
    /// the point in force at the sampler's last sample on (the sampler forgets the points it
    /// has passed: [`TargetProgress::planned_bytes_at`]; see [`StepContext::schedule`]).
    pub scheduled: Mutex<Vec<(u64, u64)>>,
}

/// Forgets the points of `plan` (time order) before the one in force at `t_ns`, which is
/// then its first; false, and nothing forgotten, when `t_ns` lies before the plan.
fn in_force_first(plan: &mut Vec<(u64, u64)>, t_ns: u64) -> bool {
    match plan.partition_point(|&(t, _)| t <= t_ns) {
        0 => false,
        i => {
            plan.drain(..i - 1);
            true
        }
    }
}

impl TargetProgress {
    /// The bytes done by record time `now_ns`: [`TargetProgress::bytes`], or the backend's
    /// plan for then when it is ahead (its thread has not woken to count them yet). Asked in
    /// time order, as [`TargetProgress::planned_bytes_at`] is: the plan's points before the
    /// one in force are forgotten, so a plan never outgrows the step under way.
    pub fn bytes_at(&self, now_ns: u64) -> u64 {
        let counted = self.bytes.load(Ordering::Relaxed);
        let mut plan = self.scheduled.lock().unwrap_or_else(|p| p.into_inner());
        let due = if in_force_first(&mut plan, now_ns) {
            plan[0].1
        } else {
            0
        };
        counted.max(due)
    }

    /// The bytes done by record time `t_ns` on the backend's plan alone (what was counted
    /// when there is none): the plan's count then, linear between its points (a plan gives
    /// one at every change of rate), its first when `t_ns` lies before it, whatever the
    /// backend's thread has counted by now. For a time the plan reaches
    /// ([`TargetProgress::planned_until`]), asked in time order: the plan's points before
    /// the one in force at `t_ns` are forgotten.
    pub fn planned_bytes_at(&self, t_ns: u64) -> u64 {
        let mut plan = self.scheduled.lock().unwrap_or_else(|p| p.into_inner());
        if plan.is_empty() {
            return self.bytes.load(Ordering::Relaxed);
        }
        if !in_force_first(&mut plan, t_ns) {
            return plan[0].1;
        }
        let (t0, b0) = plan[0];
        match plan.get(1) {
            Some(&(t1, b1)) if b1 > b0 && t1 > t0 => {
                let share = (t_ns - t0) as f64 / (t1 - t0) as f64;
                b0 + ((b1 - b0) as f64 * share) as u64
            }
            _ => b0,
        }
    }

    /// The record time up to which [`TargetProgress::bytes_at`] is known from the backend's
    /// plan (None: no plan, the count is what was counted).
    pub fn planned_until(&self) -> Option<u64> {
        let plan = self.scheduled.lock().unwrap_or_else(|p| p.into_inner());
        plan.last().map(|p| p.0)
    }

    /// The target idles on its plan (nothing moves) for `pause` of record time, or, when
    /// None, until its next step, whenever the host starts it (a gate).
    pub fn plan_pause(&self, pause: Option<Duration>) {
        let mut plan = self.scheduled.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(&(t, bytes)) = plan.last() {
            let until = pause.map_or(u64::MAX, |d| t.saturating_add(d.as_nanos() as u64));
            plan.push((until, bytes));
        }
    }

    /// Enters `phase`: the live view and the sampler see it.
    pub fn enter_phase(&self, phase: &str) {
        let _ = self.started.set(Instant::now());
        *self.phase.lock().unwrap() = phase.to_string();
        self.phases_entered.lock().unwrap().push(phase.to_string());
    }

    /// The target has finished (or failed).
    pub fn mark_done(&self) {
        let _ = self.ended.set(Instant::now());
        self.done.store(true, Ordering::SeqCst);
    }

    /// Seconds from the first phase to the end (or to now while running).
    pub fn active_seconds(&self) -> f64 {
        self.active_at(Instant::now()).as_secs_f64()
    }

    /// Time from the first phase to the end, or to `now` while running; zero
    /// before the first phase.
    pub fn active_at(&self, now: Instant) -> Duration {
        match (self.started.get(), self.ended.get()) {
            (Some(s), Some(e)) => e.saturating_duration_since(*s),
            (Some(s), None) => now.saturating_duration_since(*s),
            _ => Duration::ZERO,
        }
    }

    /// The label of the interval that ends now, which began in `previous`:
    /// every phase it touched, in order, joined with `+` (`write+read`).
    /// Returns the label and the phase the next interval begins in.
    pub fn close_interval(&self, previous: &str) -> (String, String) {
        let entered = std::mem::take(&mut *self.phases_entered.lock().unwrap());
        let current = self.phase.lock().unwrap().clone();
        let mut touched: Vec<&str> = Vec::new();
        for p in std::iter::once(previous).chain(entered.iter().map(String::as_str)) {
            if !p.is_empty() && touched.last() != Some(&p) {
                touched.push(p);
            }
        }
        let label = if touched.is_empty() {
            current.clone()
        } else {
            touched.join("+")
        };
        (label, current)
    }
}

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

/// When the sampler takes its 100 ms samples.
struct Ticks<'a> {
    /// Every target counts on its backend's plan ([`TargetBackend::counts_on_plan`]): the
    /// samples lie on an exact 100 ms grid of record time, each taken once every target's
    /// plan reaches it, so a late thread (a host hiccup) changes no sample.
    on_plan: bool,
    /// Every target thread has ended.
    finished: &'a AtomicBool,
    /// The run is stopping.
    stop: &'a AtomicBool,
}

/// The sampler's next sample time after `last_ns` (100 ms of record time), and whether the
/// run has finished: sleeps 100 ms and reads the record clock, or, on the plan, waits for
/// the grid's next time until every target's plan has reached it. On the plan the samples
/// end at the last plan's end.
fn next_tick(ticks: &Ticks<'_>, progress: &[Arc<TargetProgress>], last_ns: u64) -> (u64, bool) {
    const TICK: Duration = Duration::from_millis(100);
    let tick = hostd_records::clock::real_duration(TICK);
    if !ticks.on_plan {
        let done = ticks.finished.load(Ordering::Relaxed);
        std::thread::sleep(tick);
        return (unix_ns(), done);
    }
    let t = last_ns + TICK.as_nanos() as u64;
    loop {
        if ticks.stop.load(Ordering::Relaxed) && !ticks.finished.load(Ordering::Relaxed) {
            // Stopping: the targets end at once, on the record clock.
            std::thread::sleep(tick);
            return (unix_ns().max(last_ns + 1), false);
        }
        if ticks.finished.load(Ordering::Relaxed) {
            // The plans' tail on the grid, then their end.
            let end = progress
                .iter()
                .filter_map(|p| p.planned_until())
                .filter(|&u| u != u64::MAX)
                .max();
            return match end {
                Some(end) if end > t => (t, false),
                Some(end) if end > last_ns => (end, true),
                _ => (unix_ns().max(last_ns + 1), true),
            };
        }
        let behind = progress
            .iter()
            .any(|p| !p.done.load(Ordering::Relaxed) && p.planned_until().is_some_and(|u| u < t));
        let now = unix_ns();
        if now >= t && !behind {
            return (t, false);
        }
        let wait = hostd_records::clock::real_duration(Duration::from_nanos(t.saturating_sub(now)));
        std::thread::sleep(wait.clamp(Duration::from_millis(1), tick));
    }
}

fn sampler(
    plan: &Plan,
    progress: &[Arc<TargetProgress>],
    cfg: &RunConfig,
    ticks: Ticks<'_>,
    observer: &OnEvent<'_>,
    intervals: &Mutex<Vec<IntervalRecord>>,
    samples: &Mutex<Vec<Vec<(u64, u64)>>>,
) {
    // 100 ms and the interval are record time (a drive played N× faster is sampled every
    // 100 ms of its own time); the record clock is monotonic (`hostd_records::clock`).
    let n = progress.len();
    let start_ns = unix_ns();
    let mut last_bytes = vec![0u64; n];
    // Each target's count as sampled: never less than at the sample before.
    let mut floor = vec![0u64; n];
    let mut last_ns = start_ns;
    let mut last_phase = vec![String::new(); n];
    let mut k: u64 = 1;
    let record = |now_ns: u64, bytes: &[u64]| {
        observer(&RunEvent::Counters {
            time_ns: now_ns,
            bytes: bytes.to_vec(),
        });
        if cfg.collect_records {
            let mut s = samples.lock().unwrap();
            for (i, &b) in bytes.iter().enumerate() {
                s[i].push((now_ns, b));
            }
        }
    };
    record(start_ns, &last_bytes);
    let mut sampled_ns = start_ns;
    loop {
        let (now_ns, done) = next_tick(&ticks, progress, sampled_ns);
        sampled_ns = now_ns;
        let bytes: Vec<u64> = progress
            .iter()
            .zip(&mut floor)
            .map(|(p, floor)| {
                let at = if ticks.on_plan {
                    p.planned_bytes_at(now_ns)
                } else {
                    p.bytes_at(now_ns)
                };
                *floor = (*floor).max(at);
                *floor
            })
            .collect();
        record(now_ns, &bytes);
        let boundary = now_ns - start_ns >= (cfg.interval * k as u32).as_nanos() as u64;
        if boundary || done {
            for i in 0..n {
                let b = bytes[i] - last_bytes[i];
                let (phase, next) = progress[i].close_interval(&last_phase[i]);
                last_phase[i] = next;
                let secs = (now_ns - last_ns) as f64 / 1e9;
                let histogram: LatencyHistogram = progress[i].latency.take();
                let rec = IntervalRecord {
                    target: plan.targets[i].spec.label.clone(),
                    target_index: i,
                    start_ns: last_ns,
                    end_ns: now_ns,
                    bytes: b,
                    mbps: if secs > 0.0 {
                        b as f64 / secs / 1e6
                    } else {
                        0.0
                    },
                    phase,
                    latency: (!histogram.is_empty()).then(|| histogram.stats()),
                };
                observer(&RunEvent::Interval(rec.clone()));
                if !histogram.is_empty() {
                    observer(&RunEvent::Latency(LatencyRecord {
                        target: rec.target.clone(),
                        target_index: i,
                        scope: LatencyScope::Interval {
                            phase: rec.phase.clone(),
                        },
                        start_ns: rec.start_ns,
                        end_ns: rec.end_ns,
                        histogram,
                    }));
                }
                if cfg.collect_records {
                    intervals.lock().unwrap().push(rec);
                }
            }
            last_bytes = bytes;
            last_ns = now_ns;
            k += 1;
        }
        if done {
            return;
        }
    }
}

/// Checks, before any write, that each filesystem has room for the files of
/// all targets on it (plus 1 % and up to 64 MiB of headroom for metadata). Returns one line per
/// storage for `--dry-run`, or the error.
pub fn check_space(
    plan: &Plan,
    backends: &[Box<dyn TargetBackend>],
) -> Result<Vec<String>, String> {
    use hostd_records::units::human_bytes;
    let mut groups: Vec<(String, u64, u64, Vec<String>)> = Vec::new();
    for (i, b) in backends.iter().enumerate() {
        let Some(cap) = b.capacity() else { continue };
        let key = b.storage_key().unwrap_or_else(|| format!("target{i}"));
        let need = plan.targets[i].footprint();
        match groups.iter_mut().find(|g| g.0 == key) {
            Some(g) => {
                g.1 += need;
                g.3.push(plan.targets[i].spec.label.clone());
            }
            None => groups.push((
                key,
                need,
                cap.available,
                vec![plan.targets[i].spec.label.clone()],
            )),
        }
    }
    let mut lines = Vec::new();
    for (_, need, avail, labels) in groups {
        let headroom = need / 100 + (64u64 << 20).min(avail / 50);
        let line = format!(
            "free space on {}: need {} (+{} headroom), available {}",
            labels.join(", "),
            human_bytes(need),
            human_bytes(headroom),
            human_bytes(avail)
        );
        if need + headroom > avail {
            return Err(format!(
                "too little free space — {line}; use a smaller profile or free some space"
            ));
        }
        lines.push(format!("{line}: ok"));
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_late_backend_is_counted_on_its_plan() {
        let p = TargetProgress::default();
        p.bytes.store(100, Ordering::Relaxed);
        *p.scheduled.lock().unwrap() = vec![(1_000, 100), (2_000, 300), (3_000, 600)];
        assert_eq!(p.bytes_at(500), 100, "before the plan: what was counted");
        assert_eq!(
            p.bytes_at(2_500),
            300,
            "the plan's count when the thread is late"
        );
        assert_eq!(
            *p.scheduled.lock().unwrap(),
            [(2_000, 300), (3_000, 600)],
            "the points passed are forgotten, the one in force kept"
        );
        p.bytes.store(700, Ordering::Relaxed);
        assert_eq!(p.bytes_at(2_500), 700, "what was counted when it is ahead");
        p.scheduled.lock().unwrap().clear();
        assert_eq!(p.bytes_at(9_000), 700);
    }

    #[test]
    fn a_plan_is_counted_as_planned_across_steps_and_pauses() {
        let p = TargetProgress::default();
        assert_eq!(p.planned_until(), None, "no plan: nothing to wait for");
        *p.scheduled.lock().unwrap() = vec![(1_000, 0), (2_000, 300)];
        // The thread has counted ahead of the sample's time: the plan's count, not that.
        p.bytes.store(300, Ordering::Relaxed);
        assert_eq!(
            p.planned_bytes_at(1_500),
            150,
            "linear between the plan's points"
        );
        // A pause of 1 µs on the plan, then the next step, which replaces the pause's end.
        p.plan_pause(Some(Duration::from_micros(1)));
        assert_eq!(p.planned_until(), Some(3_000));
        let ctx = StepContext {
            target_index: 0,
            progress: &p.bytes,
            scheduled: &p.scheduled,
            interval_latency: &p.latency,
            stop: &AtomicBool::new(false),
            observer: &|_| {},
        };
        ctx.schedule(vec![(3_000, 300), (4_000, 500)]);
        assert_eq!(p.planned_until(), Some(4_000));
        assert_eq!(p.planned_bytes_at(2_500), 300, "the pause: nothing moved");
        assert_eq!(p.planned_bytes_at(3_500), 400);
        assert_eq!(p.planned_bytes_at(4_000), 500);
        // A gate's pause is open-ended: its count holds whatever the time.
        p.plan_pause(None);
        assert_eq!(p.planned_until(), Some(u64::MAX));
        assert_eq!(p.planned_bytes_at(1 << 40), 500);
    }
}
