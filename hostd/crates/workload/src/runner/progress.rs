//! One target's live counters ([`TargetProgress`]): the bytes it has done, its phase, its
//! latencies not yet in an interval, and, for a backend that counts on a plan (a simulated
//! drive: [`crate::backend::StepContext::schedule`]), that plan of bytes at record times,
//! which the sampler reads when the backend's thread is late.

use crate::latency::IntervalLatency;
use crate::step::Goal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::StepContext;

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
