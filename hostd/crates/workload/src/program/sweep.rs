//! `paced-sweep`: write unpaced for one step time to measure the unthrottled
//! rate R (median of its chunks' rates), then at each percentage of R, paced,
//! for a step time each. A step is held when its rate, and the rate of its
//! second half (where a throttle that sets in during the step shows), reach
//! `(1 − tolerance)` of the paced rate. Reported: the highest rate held.

use super::{median, rate_bps, report_of, step_failed, Action, Program, ProgramReport, StepIo};
use crate::steady::{Detector, SteadySpec};
use crate::step::{Rw, Step};
use hostd_records::profile::PacedSweepSpec;
use hostd_records::programs::SweepStep;
use hostd_records::programs::{PacedSweepFigures, ProgramFigures};
use hostd_records::FileRecord;
use serde::Serialize;
use std::time::Duration;

/// Plan data of a paced sweep.
#[derive(Debug, Clone, Serialize)]
pub struct SweepSpec {
    /// Chunk (file) size, bytes.
    pub chunk: u64,
    /// Files the chunks cycle through.
    pub files: u32,
    /// Time per step.
    pub step_time: Duration,
    /// Paced rates, % of the unthrottled one.
    pub percents: Vec<f64>,
    /// Held = at least (1 − tolerance) × the paced rate.
    pub tolerance: f64,
    /// Stop at the first step not held.
    pub stop_at_first_miss: bool,
    /// I/O parameters.
    pub io: StepIo,
    /// A step may end before `step_time` once its rate has settled (`[steady_state]`).
    #[serde(skip)]
    pub steady: Option<SteadySpec>,
}

/// A drop in the unpaced step: two chunks below 70 % of the ones before.
const DROP_FRACTION: f64 = 0.3;

/// Chunks a step cycles through at most (their files are rewritten).
const FILES: u64 = 16;

impl SweepSpec {
    /// From the profile section.
    pub fn new(s: &PacedSweepSpec, io: StepIo) -> SweepSpec {
        SweepSpec {
            chunk: s.chunk.0,
            files: FILES as u32,
            step_time: s.step_time.0,
            percents: s.percents.clone(),
            tolerance: s.tolerance,
            stop_at_first_miss: s.stop_at_first_miss,
            io,
            steady: None,
        }
    }

    /// The same sweep, whose steps end at steady state when `steady` is given.
    pub fn with_steady(self, steady: Option<SteadySpec>) -> SweepSpec {
        SweepSpec { steady, ..self }
    }

    /// Chunk `i` of a step, paced to one I/O per `pace_ns` if given.
    pub fn step(&self, phase: &str, i: u32, pace_ns: Option<u64>) -> Step {
        let file = i % self.files;
        Step {
            phase: phase.to_string(),
            index: i,
            file,
            job: self.io.job(Rw::Write, self.chunk, file, pace_ns),
        }
    }
}

/// The running program.
pub struct Sweep {
    spec: SweepSpec,
    /// Unthrottled rate, bytes/s (after the first step).
    unthrottled: Option<f64>,
    steps: Vec<SweepStep>,
    /// Records of the current step.
    current: Vec<FileRecord>,
    /// Index into `percents` of the current step (None: the unpaced one).
    level: Option<usize>,
    /// Chunk of the unpaced step where it throttled, if it did.
    unpaced_drop: Option<usize>,
    failed: bool,
    /// The current step's steady-state watch.
    detector: Option<Detector>,
}

impl Sweep {
    /// Starts before the unpaced step.
    pub fn new(spec: SweepSpec) -> Sweep {
        Sweep {
            spec,
            unthrottled: None,
            steps: Vec::new(),
            current: Vec::new(),
            level: None,
            unpaced_drop: None,
            failed: false,
            detector: None,
        }
    }

    fn phase(&self) -> String {
        match self.level {
            None => "unpaced".into(),
            Some(k) => format!("pace-{}%", self.spec.percents[k]),
        }
    }

    fn target_bps(&self) -> Option<f64> {
        Some(self.unthrottled? * self.spec.percents[self.level?] / 100.0)
    }

    fn close_step(&mut self) {
        let recs = std::mem::take(&mut self.current);
        let rate = |r: &[FileRecord]| {
            let b: u64 = r.iter().map(|f| f.bytes).sum();
            let s: f64 = r.iter().map(|f| f.seconds()).sum();
            if s > 0.0 {
                b as f64 / s
            } else {
                0.0
            }
        };
        let achieved = rate(&recs);
        let second = rate(&recs[recs.len() / 2..]);
        let target = self.target_bps();
        if self.level.is_none() {
            // The unthrottled rate: the chunks before a drop, if the unpaced
            // step itself throttled.
            let rates: Vec<f64> = recs.iter().map(rate_bps).collect();
            let drop = super::recovery::find_drop(&rates, None, DROP_FRACTION);
            self.unpaced_drop = drop;
            self.unthrottled = Some(median(&rates[..drop.unwrap_or(rates.len())]));
        }
        let floor = target.map(|t| t * (1.0 - self.spec.tolerance));
        self.steps.push(SweepStep {
            phase: self.phase(),
            percent: self.level.map(|k| self.spec.percents[k]),
            target_bps: target,
            achieved_bps: achieved,
            second_half_bps: second,
            chunks: recs.len(),
            bytes: recs.iter().map(|f| f.bytes).sum(),
            start_ns: recs.first().map_or(0, |f| f.start_ns),
            end_ns: recs.last().map_or(0, |f| f.end_ns),
            held: floor.map(|f| achieved >= f && second >= f),
            mean_power_w: None,
            temp_max_c: None,
            steady: self.detector.take().map(|d| d.figures()),
        });
    }

    /// The highest paced step held, if any.
    pub fn highest_held(&self) -> Option<&SweepStep> {
        self.steps
            .iter()
            .filter(|s| s.held == Some(true))
            .max_by(|a, b| {
                a.target_bps
                    .unwrap_or(0.0)
                    .total_cmp(&b.target_bps.unwrap_or(0.0))
            })
    }
}

impl Program for Sweep {
    fn next(&mut self, last: Option<&FileRecord>) -> Option<Action> {
        if step_failed(last, &mut self.failed) {
            return None;
        }
        if let Some(rec) = last {
            self.current.push(rec.clone());
            if self.detector.is_none() {
                let phase = self.phase();
                self.detector = self.spec.steady.clone().map(|s| Detector::new(s, &phase));
            }
            let settled = self.detector.as_mut().is_some_and(|d| d.add(rec));
            // The step's time on the records' clock: from its first chunk's
            // start (a simulator may settle before it) to this chunk's end.
            let first = self.current.first().map_or(rec.start_ns, |f| f.start_ns);
            let elapsed = Duration::from_nanos(rec.end_ns.saturating_sub(first));
            // A step needs two chunks (its two halves) and its time.
            if (settled || elapsed >= self.spec.step_time) && self.current.len() >= 2 {
                self.close_step();
                let missed = self.steps.last().and_then(|s| s.held) == Some(false);
                let next = self.level.map_or(0, |k| k + 1);
                if next >= self.spec.percents.len() || (missed && self.spec.stop_at_first_miss) {
                    return None;
                }
                if self.unthrottled.is_none_or(|r| r <= 0.0) {
                    return None;
                }
                self.level = Some(next);
            }
        }
        let pace = self
            .target_bps()
            .map(|bps| (self.spec.io.block_size as f64 / bps * 1e9).max(1.0) as u64);
        Some(Action::Run(self.spec.step(
            &self.phase(),
            self.current.len() as u32,
            pace,
        )))
    }

    fn report(&self, target: &str) -> ProgramReport {
        let mut text = vec![format!("paced sweep on {target}:")];
        for s in &self.steps {
            text.push(match (s.percent, s.target_bps, s.held) {
                (Some(p), Some(t), Some(h)) => format!(
                    "  {:>5.0} % = {:>8.1} MB/s: achieved {:>8.1} MB/s (second half {:.1}) — {}",
                    p,
                    t / 1e6,
                    s.achieved_bps / 1e6,
                    s.second_half_bps / 1e6,
                    if h { "held" } else { "NOT held" }
                ),
                _ => format!(
                    "  unpaced: {:.1} MB/s (median of {} chunks; the 100 % rate){}",
                    self.unthrottled.unwrap_or(0.0) / 1e6,
                    self.unpaced_drop.unwrap_or(s.chunks),
                    match self.unpaced_drop {
                        Some(i) => format!(
                            "; it throttled after {:.1} MB, at {:.1} MB/s overall",
                            (i as u64 * self.spec.chunk) as f64 / 1e6,
                            s.achieved_bps / 1e6
                        ),
                        None => String::new(),
                    }
                ),
            });
        }
        if self.spec.steady.is_some() {
            for s in &self.steps {
                if let Some(f) = &s.steady {
                    text.push(format!(
                        "  {}: {}",
                        s.phase,
                        match &f.ended_by {
                            Some(c) => format!("steady after {:.1} s by {c}", f.elapsed_s),
                            None => format!("no steady state: ran its full time ({:.1} s)", f.elapsed_s),
                        }
                    ));
                }
            }
        }
        let first_miss = self.steps.iter().find(|s| s.held == Some(false));
        match (self.highest_held(), first_miss) {
            (Some(h), miss) => text.push(format!(
                "  highest rate held without a throttle: {:.1} MB/s ({} %){}",
                h.target_bps.unwrap_or(0.0) / 1e6,
                h.percent.unwrap_or(0.0),
                miss.map_or(String::new(), |m| format!(
                    "; not held at {:.1} MB/s ({} %)",
                    m.target_bps.unwrap_or(0.0) / 1e6,
                    m.percent.unwrap_or(0.0)
                ))
            )),
            (None, Some(m)) => text.push(format!(
                "  no paced step held; the lowest, {:.1} MB/s, was not",
                m.target_bps.unwrap_or(0.0) / 1e6
            )),
            (None, None) => text.push("  no paced step ran: not enough data".into()),
        }
        report_of(
            target,
            text,
            self.failed,
            ProgramFigures::PacedSweep(PacedSweepFigures {
                unthrottled_bps: self.unthrottled,
                unpaced_throttled_after_chunks: self.unpaced_drop,
                steps: self.steps.clone(),
                highest_held_bps: self.highest_held().and_then(|s| s.target_bps),
                highest_held_percent: self.highest_held().and_then(|s| s.percent),
            }),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A device that writes at `rate(bytes so far, paced rate)` bytes/s.
    fn run(ceiling_after: f64, ceiling: f64) -> ProgramReport {
        let spec = SweepSpec {
            chunk: 10_000_000,
            files: 4,
            step_time: Duration::from_secs(10),
            percents: vec![25.0, 50.0, 75.0, 100.0],
            tolerance: 0.1,
            stop_at_first_miss: true,
            io: StepIo {
                block_size: 1 << 20,
                queue_depth: 1,
                verify: false,
                seed: 1,
            },
            steady: None,
        };
        let mut p = Sweep::new(spec.clone());
        let (mut clock, mut written) = (0.0f64, 0.0f64);
        let mut last: Option<FileRecord> = None;
        while let Some(a) = p.next(last.as_ref()) {
            let Action::Run(step) = a else { panic!() };
            let paced = step
                .job
                .pace_ns
                .map(|ns| spec.io.block_size as f64 * 1e9 / ns as f64);
            let cap = if written >= ceiling_after {
                ceiling
            } else {
                100e6
            };
            let rate = paced.map_or(cap, |p| p.min(cap));
            let secs = step.job.bytes as f64 / rate;
            let start = clock;
            clock += secs;
            written += step.job.bytes as f64;
            last = Some(FileRecord {
                latency: None,
                target: "t".into(),
                target_index: 0,
                phase: step.phase,
                index: step.index,
                start_ns: (start * 1e9) as u64,
                end_ns: (clock * 1e9) as u64,
                bytes: step.job.bytes,
                mbps: 0.0,
                verified: None,
                corrupt_blocks: 0,
                corrupt_bytes: 0,
                late_ops: 0,
                block_size: 1 << 20,
                queue_depth: 1,
                corrupt: Vec::new(),
                direct_io: true,
                status: "ok".into(),
                probe: None,
            });
        }
        p.report("t")
    }

    fn figures(r: &ProgramReport) -> &PacedSweepFigures {
        match &r.figures {
            ProgramFigures::PacedSweep(f) => f,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_ceiling_below_a_step_is_its_miss_and_the_step_below_is_the_highest_held() {
        // 100 MB/s unpaced (1 GB), then a ceiling of 60 MB/s: 50 % held, 75 % not.
        let r = run(1.0e9, 60e6);
        let f = figures(&r);
        assert_eq!(f.unthrottled_bps, Some(100e6));
        assert_eq!(f.highest_held_percent, Some(50.0));
        let held: Vec<Option<bool>> = f.steps.iter().map(|s| s.held).collect();
        assert_eq!(held, [None, Some(true), Some(true), Some(false)]);
    }

    #[test]
    fn a_throttle_in_the_second_half_of_a_step_is_a_miss() {
        // The ceiling arrives 650 MB into the 75 % step (after 1 GB + 250 + 500 MB): the
        // step's whole rate still reaches 90 % of 75 MB/s, its second half does not.
        let r = run(2.40e9, 40e6);
        let f = figures(&r);
        let s75 = &f.steps[3];
        let floor = 0.9 * 75e6;
        assert!(s75.achieved_bps >= floor, "{s75:?}");
        assert!(s75.second_half_bps < floor, "{s75:?}");
        assert_eq!(s75.held, Some(false), "{s75:?}");
        assert_eq!(f.highest_held_percent, Some(50.0));
    }
}
