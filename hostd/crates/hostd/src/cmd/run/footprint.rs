//! `hostd run --dry-run`'s estimate of the run directory's size, from the plan: how many
//! file records it makes and how long it lasts (`hostd_store::footprint` prices them).

use hostd_store::footprint::{Footprint, RunShape};
use hostd_workload::step::Goal;
use hostd_workload::Plan;

/// The pace assumed where the plan leaves it open (bytes/s): 1 GB/s, about the best of a
/// 10 Gbit/s USB link. A plan of bytes takes its bytes at this pace; a plan of time makes its
/// file records at this pace.
pub const ASSUMED_BPS: f64 = 1e9;

/// The file records and the length of `plan` on its targets, with a probe of
/// `probe_rate_hz` samples a second (0: none) and an InfluxDB spool capped at
/// `influx_spool_max` bytes (0: no InfluxDB).
pub fn shape(plan: &Plan, probe_rate_hz: u64, influx_spool_max: u64) -> RunShape {
    let mut files = 0u64;
    let mut seconds = 0f64;
    for t in &plan.targets {
        let steps = t.measured.len() as u64;
        let (f, s) = match t.goal() {
            Goal::Time { run, .. } => {
                let sizes: Vec<u64> = if t.file_sizes.is_empty() {
                    t.measured.iter().map(|s| s.job.bytes).collect()
                } else {
                    t.file_sizes.clone()
                };
                let mean = sizes.iter().sum::<u64>() as f64 / sizes.len().max(1) as f64;
                let secs = run.as_secs_f64();
                let records = if mean > 0.0 {
                    (secs * ASSUMED_BPS / mean).ceil() as u64
                } else {
                    steps
                };
                (records.max(steps), secs)
            }
            Goal::Bytes(b) => (steps, b as f64 / ASSUMED_BPS),
            // Its end depends on the drive: at least its first steps.
            Goal::Open => (steps, t.measured_bytes() as f64 / ASSUMED_BPS),
        };
        files += f;
        seconds = seconds.max(s);
    }
    RunShape {
        files,
        seconds,
        targets: plan.targets.len() as u64,
        probe_rate_hz,
        influx_spool_max,
    }
}

/// The `--dry-run` lines: the run directory's size and what the figure assumes.
pub fn render(plan: &Plan, probe_rate_hz: u64, influx_spool_max: u64) -> String {
    let shape = shape(plan, probe_rate_hz, influx_spool_max);
    format!(
        "{}\n  (at {:.0} GB/s where the plan leaves the pace open; a slower drive makes fewer \
         file records a second and a longer run of bytes)",
        Footprint::of(&shape).render(&shape),
        ASSUMED_BPS / 1e9
    )
}
