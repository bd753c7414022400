//! What a writer did: [`Stats`] (counters), [`Report`] (after a sync or close), and the
//! shared atomic counters behind them.

use hostd_records::units::human_bytes;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

/// A snapshot of the writer's counters (all in points unless named otherwise).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Points handed to the writer.
    pub accepted: u64,
    /// Points acknowledged by InfluxDB (directly or by backfill).
    pub written: u64,
    /// Points sent from the spool, counted once per attempt (so a batch tried three times
    /// during an outage counts three times).
    pub retried: u64,
    /// Points that went to the spool.
    pub spooled: u64,
    /// Spooled points later acknowledged by InfluxDB.
    pub backfilled: u64,
    /// Points InfluxDB rejected as bad data (kept as `spool/rejected-….lp`).
    pub rejected: u64,
    /// Write requests made.
    pub requests: u64,
    /// Line-protocol bytes acknowledged, before compression.
    pub bytes_raw: u64,
    /// Request-body bytes acknowledged (after compression).
    pub bytes_sent: u64,
    /// Points dropped because a bound was reached (the spool's cap, the batches in memory,
    /// the queue to the writer thread): not sent, but still in the run directory's files.
    pub dropped: u64,
    /// Of those, dropped by a live writer because the queue to the writer thread was full.
    pub dropped_queue: u64,
    /// Bytes of line protocol waiting for the writer thread now.
    pub queue_bytes: u64,
    /// The most [`Stats::queue_bytes`] ever was.
    pub queue_peak: u64,
    /// Bytes the spool's files take on disk now (whole 4 KiB blocks).
    pub spool_bytes: u64,
    /// The most [`Stats::spool_bytes`] ever was.
    pub spool_peak: u64,
    /// Spooled batches held in memory now (the disk could not take them).
    pub memory_batches: u64,
    /// The most [`Stats::memory_batches`] ever was.
    pub memory_peak: u64,
}

#[derive(Default)]
pub(super) struct Counters {
    pub(super) accepted: AtomicU64,
    pub(super) written: AtomicU64,
    pub(super) retried: AtomicU64,
    pub(super) spooled: AtomicU64,
    pub(super) backfilled: AtomicU64,
    pub(super) rejected: AtomicU64,
    pub(super) requests: AtomicU64,
    pub(super) bytes_raw: AtomicU64,
    pub(super) bytes_sent: AtomicU64,
    pub(super) dropped: AtomicU64,
    pub(super) dropped_queue: AtomicU64,
    pub(super) queue_bytes: AtomicU64,
    pub(super) queue_peak: AtomicU64,
    pub(super) spool_bytes: AtomicU64,
    pub(super) spool_peak: AtomicU64,
    pub(super) memory_batches: AtomicU64,
    pub(super) memory_peak: AtomicU64,
}

impl Counters {
    pub(super) fn snapshot(&self) -> Stats {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        Stats {
            accepted: g(&self.accepted),
            written: g(&self.written),
            retried: g(&self.retried),
            spooled: g(&self.spooled),
            backfilled: g(&self.backfilled),
            rejected: g(&self.rejected),
            requests: g(&self.requests),
            bytes_raw: g(&self.bytes_raw),
            bytes_sent: g(&self.bytes_sent),
            dropped: g(&self.dropped),
            dropped_queue: g(&self.dropped_queue),
            queue_bytes: g(&self.queue_bytes),
            queue_peak: g(&self.queue_peak),
            spool_bytes: g(&self.spool_bytes),
            spool_peak: g(&self.spool_peak),
            memory_batches: g(&self.memory_batches),
            memory_peak: g(&self.memory_peak),
        }
    }
}

pub(super) fn add(a: &AtomicU64, n: usize) {
    a.fetch_add(n as u64, Ordering::Relaxed);
}

/// Sets a gauge and raises its peak.
pub(super) fn gauge(now: &AtomicU64, peak: &AtomicU64, value: u64) {
    now.store(value, Ordering::Relaxed);
    peak.fetch_max(value, Ordering::Relaxed);
}

/// The bounds a writer keeps to (from its [`super::WriterConfig`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Cap on the spool directory, bytes; `None` for a spool kept in memory only.
    pub spool_bytes: Option<u64>,
    /// Most spooled batches held in memory.
    pub memory_batches: usize,
    /// Most bytes of line protocol waiting for the writer thread.
    pub queue_bytes: usize,
}

/// What became of everything written, once the writer stopped or synced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// Final counters.
    pub stats: Stats,
    /// Points still in the spool (to be backfilled later, e.g. by `hostd import`).
    pub spooled_remaining: usize,
    /// The spool directory, if on disk.
    pub spool_dir: Option<PathBuf>,
    /// The bounds it kept to.
    pub bounds: Bounds,
    /// Why points were dropped (each bound reached, in words), when any were.
    pub dropped_because: Vec<String>,
    /// The most recent failure, if the last attempt failed.
    pub last_error: Option<String>,
}

impl Report {
    /// True when every point was acknowledged, none rejected and none dropped.
    pub fn is_complete(&self) -> bool {
        self.spooled_remaining == 0 && self.stats.rejected == 0 && self.stats.dropped == 0
    }

    /// A one-line human summary.
    pub fn summary(&self) -> String {
        let s = &self.stats;
        let mut text = format!(
            "InfluxDB: {} points written ({} backfilled, {} retried), {} rejected",
            s.written, s.backfilled, s.retried, s.rejected
        );
        if s.dropped > 0 {
            text.push_str(&format!(
                ", {} dropped ({})",
                s.dropped,
                self.dropped_because.join("; ")
            ));
        }
        if s.spool_peak > 0 {
            if let Some(cap) = self.bounds.spool_bytes {
                text.push_str(&format!(
                    ", spool peak {} of its {} cap",
                    human_bytes(s.spool_peak),
                    human_bytes(cap)
                ));
            }
        }
        if self.spooled_remaining > 0 {
            match &self.spool_dir {
                Some(d) => text.push_str(&format!(
                    ", {} waiting in {} (send later with `hostd import`)",
                    self.spooled_remaining,
                    d.display()
                )),
                None => text.push_str(&format!(
                    ", {} NOT written (no spool directory)",
                    self.spooled_remaining
                )),
            }
        }
        if s.dropped > 0 {
            match self.spool_dir.as_deref().and_then(|d| d.parent()) {
                Some(run) => text.push_str(&format!(
                    "; the dropped points are in the run directory's files: \
                     `hostd import {}` loads them (points already there are not doubled)",
                    run.display()
                )),
                None => text.push_str("; the dropped points were not written"),
            }
        }
        if let Some(e) = &self.last_error {
            text.push_str(&format!("; last error: {e}"));
        }
        text
    }
}
