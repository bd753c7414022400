//! The writer thread: collects points into batches (by count and age), posts them, spools
//! on failure, retries with backoff and backfills the spool oldest first; drops new batches
//! while the spool is full (see the module docs of [`super`]).

use super::queue::Budget;
use super::report::{add, Bounds, Counters, Report};
use super::{Msg, WriterConfig};
use crate::client::{WriteClient, WriteFailure};
use crate::spool::{Full, Spool};
use hostd_records::units::human_bytes;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The state of the writer thread.
pub(super) struct Worker {
    pub(super) config: WriterConfig,
    pub(super) client: WriteClient,
    pub(super) spool: Spool,
    pub(super) counters: Arc<Counters>,
    pub(super) budget: Arc<Budget>,
    pub(super) bounds: Bounds,
    pub(super) last_error: Arc<Mutex<Option<String>>>,
    pub(super) rx: mpsc::Receiver<Msg>,
    /// A control message met while taking points during a backfill, handled next.
    pub(super) deferred: Option<Msg>,
    pub(super) pending: String,
    pub(super) pending_points: usize,
    pub(super) batch_started: Option<Instant>,
    pub(super) next_attempt: Instant,
    pub(super) backoff: Duration,
    /// The last attempt was refused (401/403/404): waiting will not help a sync.
    pub(super) refused: bool,
    /// The spool was full: new batches are dropped until it has been sent.
    pub(super) dropping: bool,
    /// Why points were dropped, each reason once.
    pub(super) dropped_because: Vec<String>,
}

enum Attempt {
    Written,
    Rejected(String),
    Failed,
}

impl Worker {
    pub(super) fn run(&mut self) {
        loop {
            let now = Instant::now();
            let mut wake = now + Duration::from_secs(3600);
            if let Some(t) = self.batch_started {
                wake = wake.min(t + self.config.flush_interval);
            }
            if !self.spool.is_empty() {
                wake = wake.min(self.next_attempt);
            }
            let msg = match self.deferred.take() {
                Some(m) => Ok(m),
                None => self.rx.recv_timeout(wake.saturating_duration_since(now)),
            };
            match msg {
                Ok(Msg::Lines { body, points }) => self.take_lines(body, points),
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
                    self.config.spool_wait = None;
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
                self.backfill(true);
            }
        }
    }

    /// Adds points that came through the channel to the batch being collected.
    fn take_lines(&mut self, body: String, points: usize) {
        self.budget.give(body.len());
        if self.pending.is_empty() {
            self.batch_started = Some(Instant::now());
        }
        self.pending.push_str(&body);
        self.pending_points += points;
        if self.pending_points >= self.config.batch_size {
            self.flush_pending();
        }
    }

    /// Takes the points that arrived during a backfill (which can last long after an
    /// outage), so that the channel does not fill meanwhile; stops at a control message.
    fn pump(&mut self) {
        while self.deferred.is_none() {
            match self.rx.try_recv() {
                Ok(Msg::Lines { body, points }) => self.take_lines(body, points),
                Ok(other) => self.deferred = Some(other),
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => return,
            }
        }
    }

    fn report(&self) -> Report {
        let mut dropped_because = self.dropped_because.clone();
        if self.counters.dropped_queue.load(Ordering::Relaxed) > 0 {
            dropped_because.push(format!(
                "the queue to the writer thread was full at {}",
                human_bytes(self.bounds.queue_bytes as u64)
            ));
        }
        Report {
            stats: self.counters.snapshot(),
            spooled_remaining: self.spool.points(),
            spool_dir: self.spool.dir().map(Into::into),
            bounds: self.bounds,
            dropped_because,
            last_error: self.last_error.lock().ok().and_then(|g| g.clone()),
        }
    }

    /// The spool's gauges into the counters.
    pub(super) fn publish_spool(&self) {
        let c = &self.counters;
        let set = |a: &std::sync::atomic::AtomicU64, v: u64| a.store(v, Ordering::Relaxed);
        set(&c.spool_bytes, self.spool.disk_bytes());
        set(&c.spool_peak, self.spool.disk_peak());
        set(&c.memory_batches, self.spool.memory_batches() as u64);
        set(&c.memory_peak, self.spool.memory_peak() as u64);
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
                self.publish_spool();
                self.report_rejected(&reason, points, kept);
            }
            Attempt::Failed => self.spool_batch(body, points),
        }
    }

    /// Spools a batch; when the spool is full waits for room (with
    /// [`WriterConfig::spool_wait`]) or drops it, and then every new batch until the spool
    /// has been sent.
    fn spool_batch(&mut self, body: String, points: usize) {
        if self.dropping {
            add(&self.counters.dropped, points);
            return;
        }
        let deadline = self.config.spool_wait.map(|d| Instant::now() + d);
        let (mut body, mut points) = (body, points);
        loop {
            match self.spool.push(body, points) {
                Ok(()) => {
                    add(&self.counters.spooled, points);
                    self.publish_spool();
                    return;
                }
                Err(refused) => {
                    // At the cap the lines that fit were spooled.
                    add(&self.counters.spooled, points - refused.points);
                    self.publish_spool();
                    (body, points) = (refused.body, refused.points);
                    match deadline {
                        Some(d) if Instant::now() < d && !self.spool.is_empty() => {
                            self.wait_for_room(d);
                        }
                        _ => {
                            self.start_dropping(refused.full);
                            add(&self.counters.dropped, points);
                            return;
                        }
                    }
                }
            }
        }
    }

    /// Waits for the next retry (at most until `deadline`) and backfills.
    fn wait_for_room(&mut self, deadline: Instant) {
        let now = Instant::now();
        let until = self.next_attempt.min(deadline);
        if until > now {
            std::thread::sleep(until - now);
        }
        if Instant::now() >= self.next_attempt {
            self.backfill(false);
        }
    }

    fn start_dropping(&mut self, full: Full) {
        let limits = self.spool.limits();
        let why = match (full, self.spool.dir()) {
            (Full::Disk, _) => format!(
                "the spool reached its cap of {}",
                human_bytes(limits.disk_bytes)
            ),
            (Full::Memory, Some(_)) => format!(
                "the disk could not take the spool and {} batches were in memory already",
                limits.memory_batches
            ),
            (Full::Memory, None) => format!(
                "{} batches were waiting in memory already",
                limits.memory_batches
            ),
        };
        let disk = self
            .spool
            .disk_error
            .as_deref()
            .filter(|_| full == Full::Memory)
            .map(|e| format!(" ({e})"))
            .unwrap_or_default();
        tracing::warn!(
            "InfluxDB: {why}{disk}: new points are dropped until InfluxDB has taken the \
             spooled ones, so that it gets the run in order with one gap; the run \
             directory's files keep them all (`hostd import RUN_DIR` loads them)"
        );
        if !self.dropped_because.contains(&why) {
            self.dropped_because.push(why);
        }
        self.dropping = true;
    }

    /// After a batch left the spool: gauges, and the end of a drop once it is empty.
    fn spool_shrank(&mut self) {
        self.publish_spool();
        if self.dropping && self.spool.is_empty() {
            self.dropping = false;
            tracing::info!(
                "InfluxDB has taken the spool: new points are sent again ({} dropped)",
                self.counters.dropped.load(Ordering::Relaxed)
            );
        }
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

    /// Sends spooled batches, oldest first, until one fails or the spool is empty; with
    /// `pump`, takes the points arriving meanwhile between batches.
    fn backfill(&mut self, pump: bool) {
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
                    let popped = self.spool.pop_front();
                    self.spool_shrank();
                    if let Err(e) = popped {
                        self.set_error(Some(format!("{e:#}")));
                        self.next_attempt = Instant::now() + self.config.backoff_max;
                        return;
                    }
                    if pump && !self.spool.is_empty() {
                        self.pump();
                    }
                }
                Attempt::Rejected(reason) => {
                    let kept = self.spool.reject_front();
                    self.spool_shrank();
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
                self.backfill(false);
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
            self.backfill(false);
            if Instant::now() >= deadline {
                return;
            }
        }
    }
}
