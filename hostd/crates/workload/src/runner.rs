//! The run orchestrator: one thread per target, all targets start their
//! measured steps together, events go to the observer, a sampler thread turns
//! byte counters into 1 s intervals, and on stop or fault every target stops
//! cleanly and removes its test files (unless `keep`).

use crate::backend::{StepContext, StepError, TargetBackend};
use crate::events::OnEvent;
use crate::latency::IntervalLatency;
use crate::plan::{Plan, Step};
use crate::program::Action;
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
}

impl TargetProgress {
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

/// Runs a prepared plan. Backends must have been through [`prepare_all`].
pub fn execute(
    plan: &Plan,
    backends: Vec<Box<dyn TargetBackend>>,
    progress: &[Arc<TargetProgress>],
    cfg: &RunConfig,
    observer: &OnEvent<'_>,
) -> RunOutcome {
    let n = backends.len();
    let start_ns = unix_ns();
    let targets: Vec<TargetInfo> = backends.iter().map(|b| b.info()).collect();
    observer(&RunEvent::RunStart {
        run_id: cfg.run_id.clone(),
        time_ns: start_ns,
        targets: targets.clone(),
    });
    let mut warnings = Vec::new();
    for (i, t) in targets.iter().enumerate() {
        if let Some(note) = &t.engine_note {
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

    let gate = StartGate {
        state: Mutex::new((0, false)),
        cv: Condvar::new(),
        parties: n,
    };
    let halt = AtomicBool::new(false); // stop because of a fault somewhere
    let stop_all = AtomicBool::new(false); // what the job loops watch
    let failure: Mutex<Option<String>> = Mutex::new(None);
    let files: Mutex<Vec<FileRecord>> = Mutex::new(Vec::new());
    let active: Mutex<Vec<usize>> = Mutex::new(Vec::new());
    let finished = AtomicBool::new(false);
    let intervals: Mutex<Vec<IntervalRecord>> = Mutex::new(Vec::new());
    let samples: Mutex<Vec<Vec<(u64, u64)>>> = Mutex::new(vec![Vec::new(); n]);
    let mut backends = backends;
    let cleanup: Mutex<Vec<String>> = Mutex::new(vec![String::new(); n]);
    let programs: Mutex<Vec<hostd_records::programs::ProgramReport>> = Mutex::new(Vec::new());

    std::thread::scope(|scope| {
        // Sampler: 100 ms samples, 1 s intervals.
        scope.spawn(|| {
            sampler(
                plan, progress, cfg, &finished, &stop_all, observer, &intervals, &samples,
            );
        });
        // Stop watcher: the user's stop flag reaches the job loops.
        scope.spawn(|| {
            while !finished.load(Ordering::Relaxed) {
                if cfg.stop.load(Ordering::Relaxed) || halt.load(Ordering::Relaxed) {
                    stop_all.store(true, Ordering::SeqCst);
                    gate.breaks();
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        let mut handles = Vec::new();
        for (i, backend) in backends.iter_mut().enumerate() {
            let tp = &plan.targets[i];
            let prog = progress[i].clone();
            let (gate, halt, stop_all, failure, files, active, observer, label, programs) = (
                &gate,
                &halt,
                &stop_all,
                &failure,
                &files,
                &active,
                observer,
                tp.spec.label.clone(),
                &programs,
            );
            handles.push(scope.spawn(move || {
                let ctx = StepContext {
                    target_index: i,
                    progress: &prog.bytes,
                    interval_latency: &prog.latency,
                    stop: stop_all,
                    observer,
                };
                let own_activity = backend.reports_activity();
                let activity = |level: f64| {
                    if !own_activity {
                        observer(&RunEvent::Activity {
                            target_index: i,
                            level,
                            time_ns: unix_ns(),
                        });
                    }
                };
                let mixed: Mutex<Vec<MixedSplit>> = Mutex::new(Vec::new());
                let end_phase = |current: &mut String| {
                    if !current.is_empty() {
                        observer(&RunEvent::PhaseEnd {
                            target_index: i,
                            phase: std::mem::take(current),
                            time_ns: unix_ns(),
                        });
                    }
                };
                // Runs one step; its record, and whether the run may go on.
                let run_one = |backend: &mut Box<dyn TargetBackend>,
                               step: &Step,
                               measured: bool,
                               current: &mut String|
                 -> (FileRecord, bool) {
                    if step.phase != *current {
                        if !current.is_empty() {
                            observer(&RunEvent::PhaseEnd {
                                target_index: i,
                                phase: current.clone(),
                                time_ns: unix_ns(),
                            });
                        }
                        *current = step.phase.clone();
                        prog.enter_phase(current);
                        observer(&RunEvent::PhaseStart {
                            target_index: i,
                            phase: current.clone(),
                            time_ns: unix_ns(),
                            measured,
                        });
                    }
                    let t0 = unix_ns();
                    let clock = Instant::now();
                    observer(&RunEvent::FileStart {
                        target_index: i,
                        phase: step.phase.clone(),
                        index: step.index,
                        bytes: step.job.bytes,
                        time_ns: t0,
                    });
                    let counted_before = prog.bytes.load(Ordering::Relaxed);
                    let result = backend.run_step(step, &ctx);
                    let t1 = t0 + clock.elapsed().as_nanos() as u64;
                    let latency = match &result {
                        Ok(out) if !out.outcome.latency.is_empty() => {
                            Some(out.outcome.latency.clone())
                        }
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
                    let (rec, ok) = file_record(&label, i, step, t0, t1, result, halt, failure);
                    // A backend that does not count bytes as it goes (the
                    // simulator) has its file counted when the file ends, so
                    // the live view and the intervals still see its data.
                    let counted = prog.bytes.load(Ordering::Relaxed) - counted_before;
                    if counted < rec.bytes {
                        prog.bytes.fetch_add(rec.bytes - counted, Ordering::Relaxed);
                    }
                    observer(&RunEvent::FileEnd(rec.clone()));
                    if let Some(histogram) = latency {
                        observer(&RunEvent::Latency(LatencyRecord {
                            target: label.clone(),
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
                    files.lock().unwrap().push(rec.clone());
                    if let Some(split) = split.filter(|_| ok) {
                        mixed.lock().unwrap().push(MixedSplit {
                            seconds: rec.seconds(),
                            ..split
                        });
                    }
                    (rec, ok)
                };
                let run_steps = |backend: &mut Box<dyn TargetBackend>,
                                 steps: &[Step],
                                 measured: bool|
                 -> bool {
                    let mut current = String::new();
                    for step in steps {
                        if stop_all.load(Ordering::Relaxed) {
                            return false;
                        }
                        if !run_one(backend, step, measured, &mut current).1 {
                            return false;
                        }
                    }
                    end_phase(&mut current);
                    true
                };
                if !tp.prepare.is_empty() {
                    activity(1.0);
                }
                let ok = run_steps(backend, &tp.prepare, false);
                if !tp.prepare.is_empty() {
                    activity(0.0);
                }
                if !ok {
                    gate.breaks();
                } else if gate.wait() {
                    set_active(active, observer, i, true);
                    activity(1.0);
                    match &tp.program {
                        None => {
                            run_steps(backend, &tp.measured, true);
                        }
                        Some(spec) => {
                            let mut program = spec.start();
                            let mut current = String::new();
                            let mut last: Option<FileRecord> = None;
                            while !stop_all.load(Ordering::Relaxed) {
                                let Some(action) = program.next(last.take().as_ref()) else {
                                    break;
                                };
                                match action {
                                    Action::Run(step) => {
                                        let (rec, ok) = run_one(backend, &step, true, &mut current);
                                        if !ok {
                                            program.next(Some(&rec));
                                            break;
                                        }
                                        last = Some(rec);
                                    }
                                    Action::Idle { phase, duration } => {
                                        end_phase(&mut current);
                                        prog.enter_phase(&phase);
                                        backend.idle_started();
                                        // Idle is idle on every backend (the probe
                                        // simulator's load follows this).
                                        observer(&RunEvent::Activity {
                                            target_index: i,
                                            level: 0.0,
                                            time_ns: unix_ns(),
                                        });
                                        let until = Instant::now() + duration;
                                        while Instant::now() < until
                                            && !stop_all.load(Ordering::Relaxed)
                                        {
                                            std::thread::sleep(
                                                (until - Instant::now())
                                                    .min(Duration::from_millis(20)),
                                            );
                                        }
                                        activity(1.0);
                                    }
                                    Action::Delete(list) => {
                                        for f in list {
                                            if let Err(e) = backend.delete_file(f) {
                                                let m = format!("target {label}: {e:#}");
                                                failure.lock().unwrap().get_or_insert(m);
                                                halt.store(true, Ordering::SeqCst);
                                                break;
                                            }
                                        }
                                    }
                                }
                            }
                            end_phase(&mut current);
                            programs.lock().unwrap().push(program.report(&label));
                        }
                    }
                    activity(0.0);
                    set_active(active, observer, i, false);
                    let mixed = mixed.lock().unwrap();
                    if !mixed.is_empty() {
                        programs
                            .lock()
                            .unwrap()
                            .push(crate::program::mixed::report(&label, &mixed));
                    }
                }
                prog.mark_done();
            }));
        }
        for h in handles {
            let _ = h.join();
        }
        finished.store(true, Ordering::SeqCst);
    });

    for (i, b) in backends.iter_mut().enumerate() {
        let msg = match b.cleanup(cfg.keep) {
            Ok(m) => m,
            Err(e) => {
                let m = format!(
                    "target {}: cleanup failed: {e:#}",
                    plan.targets[i].spec.label
                );
                warnings.push(m.clone());
                m
            }
        };
        cleanup.lock().unwrap()[i] = msg;
    }
    let status = if let Some(f) = failure.into_inner().unwrap() {
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
        files: files.into_inner().unwrap(),
        intervals: intervals.into_inner().unwrap(),
        samples: samples.into_inner().unwrap(),
        warnings,
        cleanup: cleanup.into_inner().unwrap(),
        programs: programs.into_inner().unwrap(),
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

#[allow(clippy::too_many_arguments)]
fn sampler(
    plan: &Plan,
    progress: &[Arc<TargetProgress>],
    cfg: &RunConfig,
    finished: &AtomicBool,
    _stop: &AtomicBool,
    observer: &OnEvent<'_>,
    intervals: &Mutex<Vec<IntervalRecord>>,
    samples: &Mutex<Vec<Vec<(u64, u64)>>>,
) {
    let tick = Duration::from_millis(100);
    let n = progress.len();
    let start = Instant::now();
    let start_ns = unix_ns();
    let mut last_bytes = vec![0u64; n];
    let mut last_ns = start_ns;
    let mut last_phase = vec![String::new(); n];
    let mut k: u64 = 1;
    let record = |now_ns: u64, bytes: &[u64]| {
        let mut s = samples.lock().unwrap();
        for (i, &b) in bytes.iter().enumerate() {
            s[i].push((now_ns, b));
        }
    };
    record(start_ns, &last_bytes);
    loop {
        let done = finished.load(Ordering::Relaxed);
        std::thread::sleep(tick);
        let now_ns = start_ns + start.elapsed().as_nanos() as u64;
        let bytes: Vec<u64> = progress
            .iter()
            .map(|p| p.bytes.load(Ordering::Relaxed))
            .collect();
        record(now_ns, &bytes);
        let boundary = start.elapsed() >= cfg.interval * k as u32;
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
                intervals.lock().unwrap().push(rec);
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
