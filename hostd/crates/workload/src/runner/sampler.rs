//! The sampler: a thread beside the targets' that takes every target's byte count each
//! 100 ms of record time ([`RunEvent::Counters`]) and closes a 1 s interval per target
//! ([`RunEvent::Interval`], with its latency histogram), on the record clock or, when every
//! backend counts on a plan, on an exact grid of that plan.

use super::{RunConfig, TargetProgress};
use crate::events::OnEvent;
use crate::plan::Plan;
use crate::unix_ns;
use hostd_records::latency::LatencyHistogram;
use hostd_records::{IntervalRecord, LatencyRecord, LatencyScope, RunEvent};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// When the sampler takes its 100 ms samples.
pub(super) struct Ticks<'a> {
    /// Every target counts on its backend's plan ([`TargetBackend::counts_on_plan`]): the
    /// samples lie on an exact 100 ms grid of record time, each taken once every target's
    /// plan reaches it, so a late thread (a host hiccup) changes no sample.
    pub(super) on_plan: bool,
    /// Every target thread has ended.
    pub(super) finished: &'a AtomicBool,
    /// The run is stopping.
    pub(super) stop: &'a AtomicBool,
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

/// Samples every target's count each 100 ms and closes each target's interval every
/// `cfg.interval` (and at the end), until every target has ended; hands each to `observer`
/// and, when `cfg.collect_records`, keeps them in `intervals` and `samples`.
pub(super) fn sampler(
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
