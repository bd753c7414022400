//! Duration runs: a `files` profile with `duration = "8h"` writes its files,
//! reads them back (and verifies) where the phases say so, deletes them and
//! starts again, until the time is up. Each cycle's files get new numbers
//! (new names, new block contents); when the time runs out during a write
//! phase, what the cycle wrote is still read back and verified.
//!
//! With `[steady_state]` (a soak that ends when settled) each cycle's writes are watched as
//! a fill's are: once they meet the criteria the cycle stops writing, reads back and
//! deletes what it wrote, and the soak ends before its duration.

use super::{report_of, step_failed, Action, Program, ProgramReport, StepIo};
use crate::sizes::SizeGenerator;
use crate::step::{Capacity, Rw, Step};
use crate::target::{TargetMode, TargetSpec};
use hostd_records::profile::{FilesSpec, PhaseKind, Profile};
use hostd_records::programs::{DurationFigures, ProgramFigures};
use hostd_records::units::DurationText;
use hostd_records::FileRecord;
use serde::Serialize;
use std::time::Duration;

/// Share of the free space one cycle fills when the profile gives no size.
pub const FREE_SHARE: f64 = 0.9;

/// Plan data of a duration run.
#[derive(Debug, Clone, Serialize)]
pub struct CyclesSpec {
    /// How long.
    pub duration: Duration,
    /// File sizes of every cycle.
    pub sizes: Vec<u64>,
    /// Read back after writing.
    pub read: bool,
    /// I/O parameters.
    pub io: StepIo,
    /// Ends the soak once a cycle's writes have settled (`[steady_state]`).
    #[serde(skip)]
    pub steady: Option<crate::steady::SteadySpec>,
}

impl CyclesSpec {
    /// From the profile: the cycle is `count` files or `total` bytes, or
    /// [`FREE_SHARE`] of the free space.
    pub fn new(
        f: &FilesSpec,
        d: DurationText,
        profile: &Profile,
        spec: &TargetSpec,
        io: StepIo,
        cap: Option<Capacity>,
    ) -> CyclesSpec {
        let mut g = SizeGenerator::new(io.seed, 0, f.min_size.0, f.max_size.0);
        let sizes = match (f.count, f.total) {
            (Some(n), _) => g.take(n),
            (None, Some(t)) => g.until_total(t.0),
            (None, None) => {
                let free = cap.map_or(0, |c| c.available) as f64 * FREE_SHARE;
                let mut s = g.until_total(free as u64);
                // until_total may overshoot by one file: stay within the share.
                while s.iter().sum::<u64>() as f64 > free && !s.is_empty() {
                    s.pop();
                }
                s
            }
        };
        CyclesSpec {
            duration: d.0,
            sizes,
            read: spec.mode != TargetMode::Write && profile.io.phases.contains(&PhaseKind::Read),
            io,
            steady: profile.steady_state.as_ref().map(|s| {
                crate::steady::SteadySpec::new(s, None).expect("the profile check passed it")
            }),
        }
    }

    fn file(&self, cycle: u32, i: usize) -> u32 {
        cycle * self.sizes.len() as u32 + i as u32
    }

    /// The write (or read-back) step of file `i` of cycle `cycle`.
    fn step(&self, rw: Rw, cycle: u32, i: usize) -> Step {
        let file = self.file(cycle, i);
        Step {
            phase: if rw.is_write() { "write" } else { "read" }.into(),
            index: file,
            file,
            job: self.io.job(rw, self.sizes[i], file, None),
        }
    }

    /// The steps of one whole cycle (the plan lists cycle 0).
    pub fn cycle_steps(&self, cycle: u32) -> Vec<Step> {
        let mut v: Vec<Step> = (0..self.sizes.len())
            .map(|i| self.step(Rw::Write, cycle, i))
            .collect();
        if self.read {
            v.extend((0..self.sizes.len()).map(|i| self.step(Rw::Read, cycle, i)));
        }
        v
    }
}

/// The running program.
pub struct Cycles {
    spec: CyclesSpec,
    /// Record ns of the first write (the record clock: a drive played faster runs for
    /// its own time).
    started: Option<u64>,
    cycle: u32,
    /// Files written in this cycle.
    written: usize,
    /// Files read in this cycle.
    read: usize,
    reading: bool,
    cycles_done: u32,
    bytes_written: u64,
    bytes_read: u64,
    corrupt_bytes: u64,
    files_verified: u64,
    failed: bool,
    /// The current cycle's steady-state watch.
    detector: Option<crate::steady::Detector>,
    /// A cycle's writes settled: the soak ends after that cycle.
    settled: bool,
}

impl Cycles {
    /// Starts before the first cycle.
    pub fn new(spec: CyclesSpec) -> Cycles {
        Cycles {
            spec,
            started: None,
            cycle: 0,
            written: 0,
            read: 0,
            reading: false,
            cycles_done: 0,
            bytes_written: 0,
            bytes_read: 0,
            corrupt_bytes: 0,
            files_verified: 0,
            failed: false,
            detector: None,
            settled: false,
        }
    }

    fn time_up(&self) -> bool {
        self.settled
            || self.started.is_some_and(|s| {
                crate::unix_ns().saturating_sub(s) >= self.spec.duration.as_nanos() as u64
            })
    }

    fn delete_cycle(&mut self) -> Action {
        let files = (0..self.written)
            .map(|i| self.spec.file(self.cycle, i))
            .collect();
        self.cycles_done += u32::from(self.written == self.spec.sizes.len());
        self.cycle += 1;
        self.written = 0;
        self.read = 0;
        self.reading = false;
        Action::Delete(files)
    }
}

impl Program for Cycles {
    fn next(&mut self, last: Option<&FileRecord>) -> Option<Action> {
        if self.spec.sizes.is_empty() {
            return None;
        }
        // The clock starts with the first write.
        self.started.get_or_insert_with(crate::unix_ns);
        if step_failed(last, &mut self.failed) {
            return None;
        }
        if let Some(rec) = last {
            if rec.phase == "write" {
                self.written += 1;
                self.bytes_written += rec.bytes;
                if let Some(spec) = &self.spec.steady {
                    if self.written == 1 {
                        self.detector = Some(crate::steady::Detector::new(
                            spec.clone(),
                            &format!("write (cycle {})", self.cycle + 1),
                        ));
                    }
                    if let Some(d) = self.detector.as_mut() {
                        self.settled |= d.add(rec);
                    }
                }
            } else if rec.phase == "read" {
                self.read += 1;
                self.bytes_read += rec.bytes;
                self.corrupt_bytes += rec.corrupt_bytes;
                self.files_verified += u64::from(rec.verified.is_some());
            }
        }
        // A cycle in its write phase with time left writes on.
        if !self.reading && self.written < self.spec.sizes.len() && !self.time_up() {
            return Some(Action::Run(self.spec.step(
                Rw::Write,
                self.cycle,
                self.written,
            )));
        }
        // Then it reads back what it wrote (also when the time is up).
        if self.spec.read && self.read < self.written {
            self.reading = true;
            return Some(Action::Run(self.spec.step(Rw::Read, self.cycle, self.read)));
        }
        if self.written == 0 {
            return None;
        }
        let delete = self.delete_cycle();
        if self.time_up() {
            // The last delete still runs; then nothing.
            self.spec.sizes.clear();
        }
        Some(delete)
    }

    fn report(&self, target: &str) -> ProgramReport {
        let elapsed = self
            .started
            .map_or(0.0, |s| crate::unix_ns().saturating_sub(s) as f64 / 1e9);
        let mut text = vec![format!(
            "duration run on {target}: {:.0} s of {} — {} full cycle(s), {:.1} MB written, {:.1} MB read back, {} corrupt bytes in {} verified files",
            elapsed,
            humantime::format_duration(self.spec.duration),
            self.cycles_done,
            self.bytes_written as f64 / 1e6,
            self.bytes_read as f64 / 1e6,
            self.corrupt_bytes,
            self.files_verified
        )];
        if let Some(d) = &self.detector {
            text.push(format!("  {}", d.text(target)));
        }
        report_of(
            target,
            text,
            self.failed,
            ProgramFigures::Duration(DurationFigures {
                duration_s: self.spec.duration.as_secs_f64(),
                elapsed_s: elapsed,
                cycle_files: self.spec.sizes.len(),
                cycle_bytes: self.spec.sizes.iter().sum::<u64>(),
                full_cycles: self.cycles_done,
                bytes_written: self.bytes_written,
                bytes_read: self.bytes_read,
                corrupt_bytes: self.corrupt_bytes,
                files_verified: self.files_verified,
                steady: self.detector.as_ref().map(|d| d.figures()),
            }),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(step: &Step) -> FileRecord {
        let mut r = FileRecord::new("t", &step.phase, step.index, 0, 1, step.job.bytes);
        r.verified = (step.phase == "read").then_some(true);
        r
    }

    #[test]
    fn when_time_runs_out_mid_write_the_cycle_reads_back_what_it_wrote_then_deletes_it() {
        let mut p = Cycles::new(CyclesSpec {
            duration: Duration::from_millis(30),
            sizes: vec![4096, 8192, 4096],
            read: true,
            io: StepIo {
                block_size: 4096,
                queue_depth: 1,
                verify: true,
                seed: 1,
            },
            steady: None,
        });
        let mut actions = Vec::new();
        let mut last: Option<FileRecord> = None;
        while let Some(a) = p.next(last.take().as_ref()) {
            match &a {
                Action::Run(step) => {
                    if step.phase == "write" && step.file == 4 {
                        // Second cycle, second file: the time is up after it.
                        std::thread::sleep(Duration::from_millis(40));
                    }
                    last = Some(record(step));
                }
                Action::Delete(_) => {}
                Action::Idle { .. } => unreachable!(),
            }
            actions.push(a);
        }
        let names: Vec<String> = actions
            .iter()
            .map(|a| match a {
                Action::Run(s) => format!("{}{}", &s.phase[..1], s.file),
                Action::Delete(f) => format!("d{f:?}"),
                Action::Idle { .. } => unreachable!(),
            })
            .collect();
        assert_eq!(
            names,
            [
                "w0",
                "w1",
                "w2",
                "r0",
                "r1",
                "r2",
                "d[0, 1, 2]",
                "w3",
                "w4",
                "r3",
                "r4",
                "d[3, 4]"
            ]
        );
        let ProgramFigures::Duration(f) = p.report("t").figures else {
            panic!()
        };
        assert_eq!((f.full_cycles, f.files_verified), (1, 5));
        assert_eq!(f.bytes_read, f.bytes_written);
    }
}
