//! `cache-recovery`: write chunks until the fast stage is exhausted (two slow
//! chunks in a row, see [`find_drop`]) or a byte limit, idle for each pause,
//! write again; per pause the bytes written at the fast rate, then the fit of
//! `recovered = C·(1 − e^(−t/τ))` ([`super::fit`]).

use super::fit::{self, Point};
use super::{
    median, report_of, short_duration, step_failed, Action, Program, ProgramReport, StepIo,
};
use crate::step::{Rw, Step};
use hostd_records::profile::CacheRecoverySpec;
use hostd_records::programs::Burst;
use hostd_records::programs::{CacheRecoveryFigures, ProgramFigures};
use hostd_records::units::human_bytes;
use hostd_records::FileRecord;
use serde::Serialize;
use std::time::Duration;

/// The most the chunk files of a burst occupy: an SLC cache fills with writes
/// wherever they land, so a long burst rewrites its files in turn.
pub const RING_BYTES: u64 = 16 << 30;

/// Plan data of a cache-recovery run.
#[derive(Debug, Clone, Serialize)]
pub struct RecoverySpec {
    /// Chunk (file) size, bytes.
    pub chunk: u64,
    /// Chunks a burst writes at most (the byte limit).
    pub limit_chunks: u32,
    /// Files the chunks cycle through (rewritten in turn): the footprint is
    /// at most [`RING_BYTES`], whatever the limit.
    pub files: u32,
    /// Pauses, in order.
    pub pauses: Vec<Duration>,
    /// Slow = below (1 − this) × the fast rate.
    pub drop_fraction: f64,
    /// I/O parameters.
    pub io: StepIo,
}

impl RecoverySpec {
    /// From the profile section.
    pub fn new(s: &CacheRecoverySpec, io: StepIo) -> RecoverySpec {
        let limit_chunks = (s.limit.0 / s.chunk.0) as u32;
        RecoverySpec {
            chunk: s.chunk.0,
            limit_chunks,
            files: limit_chunks.min((RING_BYTES / s.chunk.0).max(4) as u32),
            pauses: s.pauses.iter().map(|p| p.0).collect(),
            drop_fraction: s.drop_fraction,
            io,
        }
    }

    /// Chunk `i` of a burst in `phase`.
    pub fn step(&self, phase: &str, i: u32) -> Step {
        let file = i % self.files;
        Step {
            phase: phase.to_string(),
            index: i,
            file,
            job: self.io.job(Rw::Write, self.chunk, file, None),
        }
    }
}

/// Where the fast stage of a burst ended: the first of two consecutive
/// chunks slower than `(1 − drop_fraction) × fast`. `fast` is the fast rate
/// (None for the first burst: then the median of the chunks before the
/// candidate, at least three of them).
pub fn find_drop(rates: &[f64], fast: Option<f64>, drop_fraction: f64) -> Option<usize> {
    let first = if fast.is_some() { 0 } else { 3 };
    (first..rates.len().saturating_sub(1)).find(|&i| {
        let base = fast.unwrap_or_else(|| median(&rates[..i]));
        let slow = base * (1.0 - drop_fraction);
        rates[i] < slow && rates[i + 1] < slow
    })
}

/// The running program.
pub struct Recovery {
    spec: RecoverySpec,
    /// Bursts finished.
    bursts: Vec<Burst>,
    /// The current burst's chunk records (bytes, seconds).
    current: Vec<(u64, f64)>,
    /// End of the last write, host Unix ns.
    last_end_ns: Option<u64>,
    /// The measured idle before the current burst, s.
    idle_s: Option<f64>,
    /// Fast rate of the first burst.
    fast: Option<f64>,
    /// Index of the next pause; the current burst follows pause `next_pause - 1`.
    next_pause: usize,
    /// Waiting for a burst to start after an idle.
    idle_done: bool,
    failed: bool,
}

impl Recovery {
    /// Starts before the first burst.
    pub fn new(spec: RecoverySpec) -> Recovery {
        Recovery {
            spec,
            bursts: Vec::new(),
            current: Vec::new(),
            last_end_ns: None,
            idle_s: None,
            fast: None,
            next_pause: 0,
            idle_done: true,
            failed: false,
        }
    }

    /// The pause before the current burst, s (`None` for the fill).
    fn last_pause_s(&self) -> Option<f64> {
        self.next_pause
            .checked_sub(1)
            .map(|k| self.spec.pauses[k].as_secs_f64())
    }

    fn phase(&self) -> String {
        match self.next_pause {
            0 => "fill".into(),
            k => format!("after-{}", short_duration(self.spec.pauses[k - 1])),
        }
    }

    /// Ends the current burst if it has found its drop or reached the limit.
    fn burst_over(&mut self) -> bool {
        let rates: Vec<f64> = self
            .current
            .iter()
            .map(|&(b, s)| if s > 0.0 { b as f64 / s } else { f64::INFINITY })
            .collect();
        let drop = find_drop(&rates, self.fast, self.spec.drop_fraction);
        let full = self.current.len() as u32 >= self.spec.limit_chunks;
        if drop.is_none() && !full {
            return false;
        }
        let chunk = self.spec.chunk;
        let bytes: u64 = self.current.iter().map(|c| c.0).sum();
        let burst = match drop {
            Some(i) => {
                let fast = self.fast.unwrap_or_else(|| median(&rates[..i]));
                let slow = median(&rates[i + 1..]);
                // The fast stage ends in chunk i (the first slow one) or in the one
                // before it (slowed too little to count as slow): each holds x bytes
                // at the fast rate and the rest slow, in its time T.
                let fast_part = |j: usize| {
                    let t = self.current[j].1;
                    let x = (t - chunk as f64 / slow) / (1.0 / fast - 1.0 / slow);
                    if x.is_finite() {
                        x.clamp(0.0, chunk as f64)
                    } else {
                        0.0
                    }
                };
                let first = i.saturating_sub(1);
                let x: f64 = (first..=i).map(fast_part).sum();
                let low = first as u64 * chunk;
                if self.fast.is_none() {
                    self.fast = Some(fast);
                }
                Burst {
                    phase: self.phase(),
                    pause_s: self.last_pause_s(),
                    idle_s: self.idle_s,
                    bytes,
                    dropped: true,
                    fast_bytes: low as f64 + x,
                    fast_bytes_low: low,
                    fast_bytes_high: (i as u64 + 1) * chunk,
                    fast_bps: (i > 0 || self.bursts.is_empty()).then_some(fast),
                    slow_bps: Some(slow),
                }
            }
            None => Burst {
                phase: self.phase(),
                pause_s: self.last_pause_s(),
                idle_s: self.idle_s,
                bytes,
                dropped: false,
                fast_bytes: bytes as f64,
                fast_bytes_low: bytes,
                fast_bytes_high: bytes,
                fast_bps: Some(median(&rates)),
                slow_bps: None,
            },
        };
        self.bursts.push(burst);
        self.current.clear();
        true
    }

    /// The recovery points: pauses whose burst found the drop.
    fn points(&self) -> Vec<Point> {
        self.bursts
            .iter()
            .filter(|b| b.dropped)
            .filter_map(|b| {
                Some(Point {
                    t_s: b.idle_s?,
                    bytes: b.fast_bytes,
                    // The drop lies within one chunk: uniform over it.
                    sigma: (b.fast_bytes_high - b.fast_bytes_low) as f64 / 12f64.sqrt(),
                })
            })
            .collect()
    }
}

impl Program for Recovery {
    fn next(&mut self, last: Option<&FileRecord>) -> Option<Action> {
        if step_failed(last, &mut self.failed) {
            return None;
        }
        if let Some(rec) = last {
            if self.current.is_empty() && self.next_pause > 0 {
                self.idle_s = self
                    .last_end_ns
                    .map(|e| rec.start_ns.saturating_sub(e) as f64 / 1e9);
            }
            self.last_end_ns = Some(rec.end_ns);
            self.current.push((rec.bytes, rec.seconds()));
            if self.burst_over() {
                // The first burst must find the fast stage's end, or there is
                // nothing to recover.
                if !self.bursts[0].dropped || self.next_pause >= self.spec.pauses.len() {
                    return None;
                }
                let pause = self.spec.pauses[self.next_pause];
                self.next_pause += 1;
                self.idle_done = false;
                return Some(Action::Idle {
                    phase: format!("idle-{}", short_duration(pause)),
                    duration: pause,
                });
            }
        }
        self.idle_done = true;
        Some(Action::Run(
            self.spec.step(&self.phase(), self.current.len() as u32),
        ))
    }

    fn report(&self, target: &str) -> ProgramReport {
        let mut text = vec![format!("cache recovery on {target}:")];
        let mb = |b: f64| b / 1e6;
        for b in &self.bursts {
            let what = match (b.pause_s, b.idle_s) {
                (Some(p), Some(i)) => format!("after {p:.1} s ({i:.2} s) idle"),
                (Some(p), None) => format!("after {p:.1} s idle"),
                _ => "first burst".to_string(),
            };
            if b.dropped {
                text.push(format!(
                    "  {what:<20} {:>9.1} MB at the fast rate ({:.1}–{:.1} MB){}",
                    mb(b.fast_bytes),
                    mb(b.fast_bytes_low as f64),
                    mb(b.fast_bytes_high as f64),
                    match (b.fast_bps, b.slow_bps) {
                        (Some(f), Some(s)) => format!(", {:.1} → {:.1} MB/s", f / 1e6, s / 1e6),
                        (None, Some(s)) => format!(", then {:.1} MB/s", s / 1e6),
                        _ => String::new(),
                    }
                ));
            } else {
                text.push(format!(
                    "  {what:<20} no drop within {} (limit): at least that much at {:.1} MB/s",
                    human_bytes(b.bytes),
                    b.fast_bps.unwrap_or(0.0) / 1e6
                ));
            }
        }
        let fit = fit::fit(&self.points());
        match (&fit, self.bursts.first()) {
            (_, Some(b)) if !b.dropped => text.push(
                "  no fast stage ended within the byte limit: nothing to recover (raise limit)"
                    .into(),
            ),
            (Ok(f), _) => text.push(format!(
                "  recovery: {:.1} MB × (1 − e^(−t/τ)), τ = {:.2} s ({:.2}–{:.2} s), C ± {:.1} MB",
                f.capacity_bytes / 1e6,
                f.tau_s,
                f.tau_low_s,
                f.tau_high_s,
                f.capacity_sigma / 1e6
            )),
            (Err(why), _) => {
                text.push(format!("  recovery time constant: not enough data ({why})"))
            }
        }
        report_of(
            target,
            text,
            self.failed,
            ProgramFigures::CacheRecovery(CacheRecoveryFigures {
                chunk_bytes: self.spec.chunk,
                bursts: self.bursts.clone(),
                fit: fit.as_ref().ok().copied(),
                fit_error: fit.err(),
            }),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drop_needs_two_slow_chunks_in_a_row() {
        let r = [100.0, 100.0, 100.0, 40.0, 100.0, 100.0, 30.0, 30.0, 30.0];
        assert_eq!(find_drop(&r, None, 0.3), Some(6));
        assert_eq!(find_drop(&r[..7], None, 0.3), None);
    }

    #[test]
    fn a_burst_after_a_short_pause_can_start_slow() {
        assert_eq!(find_drop(&[30.0, 30.0], Some(100.0), 0.3), Some(0));
        assert_eq!(find_drop(&[95.0, 30.0, 30.0], Some(100.0), 0.3), Some(1));
    }

    /// A chunk record from `*clock` (s) lasting `secs`; advances the clock.
    fn rec(bytes: u64, secs: f64, clock: &mut f64) -> FileRecord {
        let start = *clock;
        *clock += secs;
        FileRecord::new(
            "t",
            "x",
            0,
            (start * 1e9) as u64,
            (*clock * 1e9) as u64,
            bytes,
        )
    }

    /// A drive with a fast stage of `left` bytes at 100 MB/s, then 20 MB/s.
    fn chunk_time(left: &mut f64, chunk: f64) -> f64 {
        let fast = left.min(chunk);
        *left -= fast;
        fast / 100e6 + (chunk - fast) / 20e6
    }

    #[test]
    fn bursts_idle_and_measure_the_recovered_bytes() {
        let spec = RecoverySpec {
            chunk: 4_000_000,
            limit_chunks: 50,
            files: 8,
            pauses: vec![Duration::from_secs(1), Duration::from_secs(3)],
            drop_fraction: 0.3,
            io: StepIo {
                block_size: 1 << 20,
                queue_depth: 1,
                verify: false,
                seed: 1,
            },
        };
        let mut p = Recovery::new(spec);
        let mut left = 30e6;
        let mut last: Option<FileRecord> = None;
        let mut idles = Vec::new();
        let mut clock = 0.0;
        while let Some(a) = p.next(last.as_ref()) {
            match a {
                Action::Run(s) => {
                    last = Some(rec(s.job.bytes, chunk_time(&mut left, 4e6), &mut clock))
                }
                Action::Idle { duration, .. } => {
                    idles.push(duration);
                    clock += duration.as_secs_f64();
                    // The pause refills 10 MB per second of idle, here.
                    left = (duration.as_secs_f64() * 10e6).min(30e6);
                    last = None;
                }
                Action::Delete(_) => unreachable!(),
            }
        }
        assert_eq!(idles.len(), 2);
        let r = p.report("t");
        let ProgramFigures::CacheRecovery(f) = &r.figures else {
            panic!("{r:?}")
        };
        assert_eq!(f.bursts.len(), 3);
        for (b, truth) in f.bursts.iter().zip([30e6, 10e6, 30e6]) {
            assert!((b.fast_bytes - truth).abs() < 1e3, "{b:?} vs {truth}");
        }
        assert_eq!(f.bursts[2].idle_s, Some(3.0));
        // Two pauses cannot determine C and τ.
        assert!(
            r.text
                .iter()
                .any(|l| l.contains("not enough data") && l.contains("2 pause")),
            "{:?}",
            r.text
        );
    }
}
