//! Mixed I/O results (diskmark tests with `read_percent`): per test, each
//! direction's rate and IOPS over the jobs' time (as fio reports `rwmixread`
//! jobs), with the spread over the repetitions.

use super::ProgramReport;
use serde::Serialize;
use serde_json::json;

/// What one mixed job moved in each direction.
#[derive(Debug, Clone, Serialize)]
pub struct MixedSplit {
    /// Phase (`RND4K-QD32-70R-mix`).
    pub phase: String,
    /// Repetition.
    pub index: u32,
    /// Seconds of the job (its file record's time).
    pub seconds: f64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Read I/Os issued.
    pub read_ops: u64,
    /// Write I/Os issued.
    pub write_ops: u64,
}

/// The per-direction lines of one target's mixed jobs.
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
    let mut results = Vec::new();
    for phase in phases {
        let reps: Vec<&MixedSplit> = splits.iter().filter(|s| s.phase == phase).collect();
        let secs: f64 = reps.iter().map(|s| s.seconds).sum();
        let per = |f: &dyn Fn(&MixedSplit) -> u64| -> (f64, f64, f64) {
            let rates: Vec<f64> = reps
                .iter()
                .filter(|s| s.seconds > 0.0)
                .map(|s| f(s) as f64 / s.seconds)
                .collect();
            let total = reps.iter().map(|s| f(s)).sum::<u64>() as f64 / secs.max(1e-9);
            let lo = rates.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = rates.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (total, lo, hi)
        };
        let (rb, rb_lo, rb_hi) = per(&|s| s.read_bytes);
        let (wb, wb_lo, wb_hi) = per(&|s| s.write_bytes);
        let (ri, _, _) = per(&|s| s.read_ops);
        let (wi, _, _) = per(&|s| s.write_ops);
        let ops: u64 = reps.iter().map(|s| s.read_ops + s.write_ops).sum();
        let read_share = reps.iter().map(|s| s.read_ops).sum::<u64>() as f64 / ops.max(1) as f64;
        text.push(format!(
            "  {phase:<20} read {:>8.1} MB/s ({:.1}–{:.1}), {:>9.0} IOPS; write {:>8.1} MB/s ({:.1}–{:.1}), {:>9.0} IOPS; {:.1} % of {} I/Os read, {} repetition(s)",
            rb / 1e6,
            rb_lo / 1e6,
            rb_hi / 1e6,
            ri,
            wb / 1e6,
            wb_lo / 1e6,
            wb_hi / 1e6,
            wi,
            read_share * 100.0,
            ops,
            reps.len()
        ));
        results.push(json!({
            "phase": phase,
            "repetitions": reps.len(),
            "read_bps": rb, "read_bps_min": rb_lo, "read_bps_max": rb_hi, "read_iops": ri,
            "write_bps": wb, "write_bps_min": wb_lo, "write_bps_max": wb_hi, "write_iops": wi,
            "read_share": read_share,
            "jobs": reps,
        }));
    }
    ProgramReport {
        target: target.to_string(),
        kind: "mixed".into(),
        text,
        result: json!({ "tests": results }),
    }
}
