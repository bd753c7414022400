//! Mixed I/O results (diskmark tests with `read_percent`): per test, each
//! direction's rate and IOPS over the jobs' time (as fio reports `rwmixread`
//! jobs), with the spread over the repetitions.

use super::ProgramReport;
use hostd_records::programs::MixedSplit;
use hostd_records::programs::{MixedFigures, MixedTest, ProgramFigures};

/// Rate of `f` over the jobs' time, and the slowest and fastest job's.
fn rates(reps: &[&MixedSplit], f: impl Fn(&MixedSplit) -> u64) -> (f64, f64, f64) {
    let secs: f64 = reps.iter().map(|s| s.seconds).sum();
    let each: Vec<f64> = reps
        .iter()
        .filter(|s| s.seconds > 0.0)
        .map(|s| f(s) as f64 / s.seconds)
        .collect();
    let total = reps.iter().map(|s| f(s)).sum::<u64>() as f64 / secs.max(1e-9);
    let lo = each.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = each.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (total, lo, hi)
}

/// The per-direction figures and lines of one target's mixed jobs.
pub fn report(target: &str, splits: &[MixedSplit]) -> ProgramReport {
    let mut phases: Vec<&str> = Vec::new();
    for s in splits {
        if !phases.contains(&s.phase.as_str()) {
            phases.push(&s.phase);
        }
    }
    let mut text = vec![format!(
        "mixed I/O on {target} (per direction, over each job's time):"
    )];
    let mut tests = Vec::new();
    for phase in phases {
        let reps: Vec<&MixedSplit> = splits.iter().filter(|s| s.phase == phase).collect();
        let (read_bps, read_bps_min, read_bps_max) = rates(&reps, |s| s.read_bytes);
        let (write_bps, write_bps_min, write_bps_max) = rates(&reps, |s| s.write_bytes);
        let (read_iops, _, _) = rates(&reps, |s| s.read_ops);
        let (write_iops, _, _) = rates(&reps, |s| s.write_ops);
        let ops: u64 = reps.iter().map(|s| s.read_ops + s.write_ops).sum();
        let read_share = reps.iter().map(|s| s.read_ops).sum::<u64>() as f64 / ops.max(1) as f64;
        text.push(format!(
            "  {phase:<20} read {:>8.1} MB/s ({:.1}–{:.1}), {:>9.0} IOPS; write {:>8.1} MB/s ({:.1}–{:.1}), {:>9.0} IOPS; {:.1} % of {} I/Os read, {} repetition(s)",
            read_bps / 1e6,
            read_bps_min / 1e6,
            read_bps_max / 1e6,
            read_iops,
            write_bps / 1e6,
            write_bps_min / 1e6,
            write_bps_max / 1e6,
            write_iops,
            read_share * 100.0,
            ops,
            reps.len()
        ));
        tests.push(MixedTest {
            phase: phase.to_string(),
            repetitions: reps.len(),
            read_bps,
            read_bps_min,
            read_bps_max,
            read_iops,
            write_bps,
            write_bps_min,
            write_bps_max,
            write_iops,
            read_share,
            jobs: reps.into_iter().cloned().collect(),
        });
    }
    ProgramReport {
        target: target.to_string(),
        text,
        figures: ProgramFigures::Mixed(MixedFigures { tests }),
    }
}
