//! Grouping files into one ordered series per target and phase, and their statistics.

use crate::stats;
use hostd_records::cause::EventKind;
use hostd_records::energy::{phase_energy, PhaseEnergy};
use hostd_records::events::{Event, PhaseStats};
use hostd_records::latency::{file_tag, LatencyHistogram, LoggedLatency, RunLatency};
use hostd_records::published::Kind;
use hostd_records::LatencyStats;
use hostd_records::{FileRecord, ProbeSeries};

/// The files of one target and phase in time order, with cumulative bytes.
#[derive(Debug, Clone)]
pub struct Series {
    /// Target.
    pub target: String,
    /// Phase.
    pub phase: String,
    /// Files ordered by start time.
    pub files: Vec<FileRecord>,
    /// Bytes of this series before file i (len = files + 1; last = total).
    pub cum_bytes: Vec<u64>,
}

impl Series {
    /// The series of `files` (one target and phase), ordered by start time.
    pub fn new(target: String, phase: String, mut files: Vec<FileRecord>) -> Self {
        files.sort_by_key(|f| (f.start_ns, f.index));
        let mut cum_bytes = Vec::with_capacity(files.len() + 1);
        let mut acc = 0u64;
        cum_bytes.push(0);
        for f in &files {
            acc += f.bytes;
            cum_bytes.push(acc);
        }
        Series {
            target,
            phase,
            files,
            cum_bytes,
        }
    }

    /// Per-file rates, bytes/s.
    pub fn rates(&self) -> Vec<f64> {
        self.files.iter().map(FileRecord::rate_bps).collect()
    }

    /// Total bytes.
    pub fn total_bytes(&self) -> u64 {
        *self.cum_bytes.last().unwrap_or(&0)
    }

    /// Position of the file holding byte `bytes` of the series (the last file for the end).
    pub fn file_at(&self, bytes: u64) -> usize {
        self.cum_bytes
            .partition_point(|&c| c <= bytes)
            .saturating_sub(1)
            .min(self.files.len().saturating_sub(1))
    }

    /// First start, host ns.
    pub fn start_ns(&self) -> i64 {
        self.files.first().map_or(0, |f| f.start_ns as i64)
    }

    /// Last end, host ns.
    pub fn end_ns(&self) -> i64 {
        self.files
            .iter()
            .map(|f| f.end_ns as i64)
            .max()
            .unwrap_or(0)
    }
}

/// Phase of unmeasured preparation writes (before a read phase); not analysed.
pub const UNMEASURED_PHASE: &str = "prepare";

/// Splits the records into series, in order of first appearance of (target, phase),
/// leaving out the unmeasured `prepare` phase.
pub fn group(files: &[FileRecord]) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    for f in files.iter().filter(|f| f.phase != UNMEASURED_PHASE) {
        match out
            .iter_mut()
            .find(|s| s.target == f.target && s.phase == f.phase)
        {
            Some(s) => s.files.push(f.clone()),
            None => out.push(Series {
                target: f.target.clone(),
                phase: f.phase.clone(),
                files: vec![f.clone()],
                cum_bytes: Vec::new(),
            }),
        }
    }
    out.into_iter()
        .map(|s| Series::new(s.target, s.phase, s.files))
        .collect()
}

/// Robust statistics of one series (see docs/methodology.md for each number); `latency`
/// holds the run's per-file histograms (empty where no I/O was timed).
pub fn phase_stats(s: &Series, probe: Option<&ProbeSeries>, latency: &RunLatency) -> PhaseStats {
    let rates = s.rates();
    let sizes: Vec<f64> = s.files.iter().map(|f| f.bytes as f64).collect();
    let times: Vec<f64> = s.files.iter().map(FileRecord::seconds).collect();
    let seconds: f64 = times.iter().sum();
    let inv = |line: Option<stats::Line>| {
        line.filter(|l| l.slope > 0.0)
            .map(|l| (1.0 / l.slope, l.intercept))
    };
    let ts = inv(stats::theil_sen(&sizes, &times));
    let ls = inv(stats::least_squares(&sizes, &times));
    let bim = stats::bimodality(&rates);
    let (start_ns, end_ns) = (s.start_ns(), s.end_ns());
    let block_size = common(s.files.iter().map(|f| f.block_size)).filter(|&b| b > 0);
    let energy = probe.map_or_else(PhaseEnergy::default, |p| {
        phase_energy(
            s.files
                .iter()
                .map(|f| (f.start_ns as i64, f.end_ns as i64, f.bytes)),
            |a, b| p.energy_between(a, b),
        )
    });
    PhaseStats {
        target: s.target.clone(),
        phase: s.phase.clone(),
        files: s.files.len(),
        bytes: s.total_bytes(),
        seconds,
        start_ns,
        end_ns,
        throughput_bps: s.total_bytes() as f64 / seconds.max(1e-9),
        mean_bps: stats::mean(&rates).unwrap_or(0.0),
        median_bps: stats::median(&rates).unwrap_or(0.0),
        min_bps: rates.iter().copied().reduce(f64::min).unwrap_or(0.0),
        max_bps: rates.iter().copied().reduce(f64::max).unwrap_or(0.0),
        trimmed_mean_bps: stats::trimmed_mean(&rates, 0.2).unwrap_or(0.0),
        theil_sen_bps: ts.map(|t| t.0),
        // A fixed cost below zero is no cost: the fit's line is not what the files did (their
        // rate changed within the phase), so it has no overhead to give.
        theil_sen_overhead_s: ts.map(|t| t.1).filter(|&o| o >= 0.0),
        least_squares_bps: ls.map(|t| t.0),
        least_squares_overhead_s: ls.map(|t| t.1).filter(|&o| o >= 0.0),
        bimodal: bim.is_some_and(|b| b.bimodal),
        bimodality: bim,
        levels_explained_by: None,
        bimodality_coefficient: stats::bimodality_coefficient(&rates),
        energy_j: energy.energy_j,
        j_per_gb: energy.j_per_gb,
        // Without the accumulator, the mean of the power samples while the phase ran.
        mean_power_w: energy
            .mean_power_w
            .or_else(|| probe.and_then(|p| p.mean_in(&p.power_w, start_ns, end_ns))),
        port: None,
        corrupt_blocks: s.files.iter().map(|f| f.corrupt_blocks).sum(),
        corrupt_bytes: s.files.iter().map(|f| f.corrupt_bytes).sum(),
        verified_files: s.files.iter().filter(|f| f.verified == Some(true)).count(),
        late_ops: s.files.iter().map(|f| f.late_ops).sum(),
        block_size,
        queue_depth: common(s.files.iter().map(|f| f.queue_depth)),
        iops: block_size
            .filter(|_| seconds > 0.0)
            .map(|_| s.files.iter().map(FileRecord::ios).sum::<u64>() as f64 / seconds),
        latency: phase_latency(s, latency),
    }
}

/// The event of `events` (any of the run's) that explains the two groups of `stats`'
/// per-file rates when they are bimodal: a drop, recovery or warm-up of its series with
/// its rate before on one side of the split and its rate after on the other. In words,
/// e.g. "the drop at 23.9 GB (thermal)"; None when the rates are not bimodal or no event
/// splits them.
pub fn levels_explained_by(stats: &PhaseStats, events: &[Event]) -> Option<String> {
    let split = stats.bimodality.filter(|b| b.bimodal)?.split_at;
    let e = events.iter().find(|e| {
        e.target == stats.target
            && e.phase == stats.phase
            && e.kind != EventKind::Stall
            && (e.rate_before_bps - split) * (e.rate_after_bps - split) < 0.0
    })?;
    let what = match e.kind {
        EventKind::Drop => "drop",
        EventKind::Recovery => "recovery",
        _ => "warm-up",
    };
    Some(format!(
        "the {what} at {} ({})",
        Kind::Data.text(e.onset_bytes as f64),
        e.cause.as_str()
    ))
}

/// The latency of a series' I/Os: its files' histograms merged (None when none of its
/// files was timed).
pub fn phase_latency(s: &Series, latency: &RunLatency) -> Option<LatencyStats> {
    if latency.files.is_empty() {
        return None;
    }
    let by_tag: std::collections::HashMap<&str, &LoggedLatency> =
        latency.files.iter().map(|l| (l.tag.as_str(), l)).collect();
    let mut merged: Option<LatencyHistogram> = None;
    for f in &s.files {
        if let Some(l) = by_tag.get(file_tag(f.target_index, &f.phase, f.index).as_str()) {
            let h = l.histogram();
            match &mut merged {
                Some(m) => m.add(&h),
                None => merged = Some(h),
            }
        }
    }
    merged.map(|h| h.stats())
}

/// The value every item shares, if they all share one.
fn common(mut it: impl Iterator<Item = usize>) -> Option<usize> {
    let first = it.next()?;
    it.all(|v| v == first).then_some(first)
}
