//! The writer thread: collects points into batches (by count and age), posts them, spools
//! on failure, retries with backoff and backfills the spool oldest first.

use super::report::{add, Counters, Report};
use super::{Msg, WriterConfig};
use crate::client::{WriteClient, WriteFailure};
use crate::spool::Spool;
use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The state of the writer thread.
pub(super) struct Worker {
    pub(super) config: WriterConfig,
    pub(super) client: WriteClient,
    pub(super) spool: Spool,
    pub(super) counters: Arc<Counters>,
    pub(super) last_error: Arc<Mutex<Option<String>>>,
    pub(super) pending: String,
    pub(super) pending_points: usize,
    pub(super) batch_started: Option<Instant>,
    pub(super) next_attempt: Instant,
    pub(super) backoff: Duration,
    /// The last attempt was refused (401/403/404): waiting will not help a sync.
    pub(super) refused: bool,
}

enum Attempt {
    Written,
    Rejected(String),
    Failed,
}

impl Worker {
    pub(super) fn run(&mut self, rx: mpsc::Receiver<Msg>) {
        loop {
            let now = Instant::now();
            let mut wake = now + Duration::from_secs(3600);
            if let Some(t) = self.batch_started {
                wake = wake.min(t + self.config.flush_interval);
            }
            if !self.spool.is_empty() {
                wake = wake.min(self.next_attempt);
            }
            match rx.recv_timeout(wake.saturating_duration_since(now)) {
                Ok(Msg::Lines { body, points }) => {
                    if self.pending.is_empty() {
                        self.batch_started = Some(Instant::now());
                    }
                    self.pending.push_str(&body);
                    self.pending_points += points;
                    if self.pending_points >= self.config.batch_size {
                        self.flush_pending();
                    }
                }
                Ok(Msg::Flush(ack)) => {
                    self.flush_pending();
                    let _ = ack.send(());
                }
                Ok(Msg::Sync(deadline, ack)) => {
                    self.flush_pending();
                    self.drain_spool(deadline);
                    let _ = ack.send(self.report());
                }
                Ok(Msg::Close(deadline, ack)) => {
                    self.flush_pending();
                    self.drain_spool(deadline);
                    let _ = ack.send(self.report());
                    return;
                }
                Err(RecvTimeoutError::Timeout) => {}
                Ok(Msg::Shutdown) | Err(RecvTimeoutError::Disconnected) => {
                    // Dropped without close: keep everything, wait for nobody.
                    if !self.pending.is_empty() {
                        let body = std::mem::take(&mut self.pending);
                        self.spool_batch(body, self.pending_points);
                        self.pending_points = 0;
                    }
                    return;
                }
            }
            let now = Instant::now();
            if self
                .batch_started
                .is_some_and(|t| now >= t + self.config.flush_interval)
            {
                self.flush_pending();
            }
            if !self.spool.is_empty() && now >= self.next_attempt {
                self.backfill();
            }
        }
    }

    fn report(&self) -> Report {
        Report {
            stats: self.counters.snapshot(),
            spooled_remaining: self.spool.points(),
            spool_dir: self.spool.dir().map(Into::into),
            last_error: self.last_error.lock().ok().and_then(|g| g.clone()),
        }
    }

    fn set_error(&self, e: Option<String>) {
        if let Some(msg) = &e {
            tracing::warn!("{msg}");
        }
        if let Ok(mut g) = self.last_error.lock() {
            *g = e;
        }
    }

    fn flush_pending(&mut self) {
        self.batch_started = None;
        if self.pending.is_empty() {
            return;
        }
        let body = std::mem::take(&mut self.pending);
        let points = std::mem::take(&mut self.pending_points);
        if !self.spool.is_empty() {
            // Keep order: older points are still waiting.
            self.spool_batch(body, points);
            return;
        }
        match self.attempt(&body, points, false) {
            Attempt::Written => {}
            Attempt::Rejected(reason) => {
                let kept = self.spool.keep_rejected(&body);
                self.report_rejected(&reason, points, kept);
            }
            Attempt::Failed => self.spool_batch(body, points),
        }
    }

    fn spool_batch(&mut self, body: String, points: usize) {
        add(&self.counters.spooled, points);
        self.spool.push(body, points);
    }

    fn report_rejected(&self, reason: &str, points: usize, kept: Option<PathBuf>) {
        let where_ = kept.map_or_else(
            || "not kept (no spool directory)".to_owned(),
            |p| format!("kept in {}", p.display()),
        );
        self.set_error(Some(format!("{reason}; {points} points {where_}")));
    }

    /// One write. On a transient failure or refusal updates the error and the retry
    /// schedule; rejected data counts as rejected (the caller keeps it aside).
    fn attempt(&mut self, body: &str, points: usize, from_spool: bool) -> Attempt {
        add(&self.counters.requests, 1);
        match self.client.write(body.as_bytes()) {
            Ok(sent) => {
                add(&self.counters.written, points);
                if from_spool {
                    add(&self.counters.backfilled, points);
                }
                add(&self.counters.bytes_raw, sent.raw_bytes);
                add(&self.counters.bytes_sent, sent.body_bytes);
                self.backoff = self.config.backoff_initial;
                self.refused = false;
                self.set_error(None);
                Attempt::Written
            }
            Err(WriteFailure::Rejected { reason, .. }) => {
                add(&self.counters.rejected, points);
                Attempt::Rejected(reason)
            }
            Err(failure) => {
                let delay = match &failure {
                    WriteFailure::Transient { retry_after, .. } => {
                        let ra = retry_after
                            .unwrap_or_default()
                            .min(self.config.retry_after_max);
                        let d = self.backoff.max(ra);
                        self.backoff = (self.backoff * 2).min(self.config.backoff_max);
                        self.refused = false;
                        d
                    }
                    _ => {
                        self.refused = true;
                        self.config.backoff_max
                    }
                };
                self.next_attempt = Instant::now() + delay;
                self.set_error(Some(failure.to_string()));
                Attempt::Failed
            }
        }
    }

    /// Sends spooled batches, oldest first, until one fails or the spool is empty.
    fn backfill(&mut self) {
        loop {
            let (body, points) = match self.spool.front() {
                Ok(Some(b)) => b,
                Ok(None) => return,
                Err(e) => {
                    // An unreadable spool file: report it and retry later; never skip it.
                    self.set_error(Some(format!("{e:#}")));
                    self.next_attempt = Instant::now() + self.config.backoff_max;
                    return;
                }
            };
            add(&self.counters.retried, points);
            match self.attempt(&body, points, true) {
                Attempt::Written => {
                    if let Err(e) = self.spool.pop_front() {
                        self.set_error(Some(format!("{e:#}")));
                        self.next_attempt = Instant::now() + self.config.backoff_max;
                        return;
                    }
                }
                Attempt::Rejected(reason) => {
                    let kept = self.spool.reject_front();
                    self.report_rejected(&reason, points, kept);
                }
                Attempt::Failed => return,
            }
        }
    }

    /// Backfills until the spool is empty or `deadline`, waiting out the retry delays.
    /// Gives up early when the server refuses the token or the target.
    fn drain_spool(&mut self, deadline: Instant) {
        while !self.spool.is_empty() {
            if self.refused {
                // One fresh try (the cause may have been fixed), else stop waiting.
                self.backfill();
                if self.refused {
                    return;
                }
                continue;
            }
            let now = Instant::now();
            if self.next_attempt > now {
                if self.next_attempt >= deadline {
                    return;
                }
                std::thread::sleep(self.next_attempt - now);
            }
            self.backfill();
            if Instant::now() >= deadline {
                return;
            }
        }
    }
}
