//! What a writer did: [`Stats`] (counters), [`Report`] (after a sync or close), and the
//! shared atomic counters behind them.

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
        }
    }
}

pub(super) fn add(a: &AtomicU64, n: usize) {
    a.fetch_add(n as u64, Ordering::Relaxed);
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
    /// The most recent failure, if the last attempt failed.
    pub last_error: Option<String>,
}

impl Report {
    /// True when every point was acknowledged and none was rejected.
    pub fn is_complete(&self) -> bool {
        self.spooled_remaining == 0 && self.stats.rejected == 0
    }

    /// A one-line human summary.
    pub fn summary(&self) -> String {
        let s = &self.stats;
        let mut text = format!(
            "InfluxDB: {} points written ({} backfilled, {} retried), {} rejected",
            s.written, s.backfilled, s.retried, s.rejected
        );
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
        if let Some(e) = &self.last_error {
            text.push_str(&format!("; last error: {e}"));
        }
        text
    }
}
