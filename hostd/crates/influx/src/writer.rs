//! The batching writer: one background thread that owns the HTTP client and the spool.
//!
//! Points are encoded on the caller's thread (so bad points fail at once, with the reason)
//! and handed to the writer thread through a channel. The thread collects them into
//! batches (by count and by age) and posts each batch. While the spool is non-empty every
//! new batch is appended to it, and the spool is sent oldest first, so InfluxDB receives
//! the points in the order they were written — before, during and after an outage.
//!
//! Failure handling: a transient failure (server away, 429, 5xx) spools the batch and
//! schedules a retry with exponential backoff, never sooner than the server's
//! `Retry-After`; a refusal (401/403/404) spools too and keeps retrying at the slowest
//! pace, reporting the error; a rejection of the data (400, 413, …) keeps the batch as
//! `rejected-….lp` and counts its points as rejected.

use crate::client::{Target, WriteClient, WriteFailure};
use crate::spool::Spool;
use crate::{LineError, Point};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Configuration of a [`Writer`].
#[derive(Debug, Clone)]
pub struct WriterConfig {
    /// Server, organisation, bucket and token.
    pub target: Target,
    /// Spool directory (the run directory's `spool/`); `None` keeps the spool in memory.
    pub spool_dir: Option<PathBuf>,
    /// Points per request (default 5 000).
    pub batch_size: usize,
    /// Longest a point waits before its batch is sent (default 1 s).
    pub flush_interval: Duration,
    /// Timeout of one request (default 10 s).
    pub request_timeout: Duration,
    /// Compress request bodies with gzip (default true).
    pub gzip: bool,
    /// First retry delay after a failure (default 250 ms), doubled on each failure.
    pub backoff_initial: Duration,
    /// Longest retry delay (default 5 s); also the pace of retries after a refusal.
    pub backoff_max: Duration,
    /// Cap on an honoured `Retry-After` (default 60 s).
    pub retry_after_max: Duration,
}

impl WriterConfig {
    /// Defaults for `target`, spooling to `spool_dir`.
    pub fn new(target: Target, spool_dir: Option<PathBuf>) -> Self {
        WriterConfig {
            target,
            spool_dir,
            batch_size: 5_000,
            flush_interval: Duration::from_secs(1),
            request_timeout: Duration::from_secs(10),
            gzip: true,
            backoff_initial: Duration::from_millis(250),
            backoff_max: Duration::from_secs(5),
            retry_after_max: Duration::from_secs(60),
        }
    }
}

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
struct Counters {
    accepted: AtomicU64,
    written: AtomicU64,
    retried: AtomicU64,
    spooled: AtomicU64,
    backfilled: AtomicU64,
    rejected: AtomicU64,
    requests: AtomicU64,
    bytes_raw: AtomicU64,
    bytes_sent: AtomicU64,
}

impl Counters {
    fn snapshot(&self) -> Stats {
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

fn add(a: &AtomicU64, n: usize) {
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

enum Msg {
    Lines {
        body: String,
        points: usize,
    },
    Flush(mpsc::Sender<()>),
    Sync(Instant, mpsc::Sender<Report>),
    Close(Instant, mpsc::Sender<Report>),
    /// The writer was dropped without close: spool what is pending and stop.
    Shutdown,
}

/// An InfluxDB writer. Cheap to call from any thread; see the module docs for behaviour.
/// Dropping it without [`Writer::close`] spools whatever is pending and stops the thread.
pub struct Writer {
    tx: Option<mpsc::Sender<Msg>>,
    counters: Arc<Counters>,
    last_error: Arc<Mutex<Option<String>>>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field("stats", &self.stats())
            .finish()
    }
}

impl Writer {
    /// Opens the spool and starts the writer thread.
    pub fn start(config: WriterConfig) -> anyhow::Result<Writer> {
        anyhow::ensure!(config.batch_size > 0, "batch size must be at least 1");
        let spool = match &config.spool_dir {
            Some(dir) => Spool::open(dir)?,
            None => Spool::in_memory(),
        };
        let client = WriteClient::new(config.target.clone(), config.request_timeout, config.gzip)?;
        let (tx, rx) = mpsc::channel();
        let counters = Arc::new(Counters::default());
        let last_error = Arc::new(Mutex::new(None));
        let mut worker = Worker {
            backoff: config.backoff_initial,
            config,
            client,
            spool,
            counters: counters.clone(),
            last_error: last_error.clone(),
            pending: String::new(),
            pending_points: 0,
            batch_started: None,
            next_attempt: Instant::now(),
            refused: false,
        };
        let thread = std::thread::Builder::new()
            .name("influx-writer".into())
            .spawn(move || worker.run(rx))
            .map_err(|e| anyhow::anyhow!("cannot start the InfluxDB writer thread: {e}"))?;
        Ok(Writer {
            tx: Some(tx),
            counters,
            last_error,
            thread: Some(thread),
        })
    }

    /// Queues one point. Fails only if the point cannot be encoded.
    pub fn write(&self, point: &Point) -> Result<(), LineError> {
        self.write_all(std::iter::once(point))
    }

    /// Queues many points as one unit; none is queued if any cannot be encoded.
    pub fn write_all<'a>(
        &self,
        points: impl IntoIterator<Item = &'a Point>,
    ) -> Result<(), LineError> {
        if let Some((body, points)) = encode(points)? {
            self.send(Msg::Lines { body, points });
        }
        Ok(())
    }

    /// Queues already-encoded line protocol (e.g. a spool file being imported). Each
    /// non-empty line counts as one point.
    pub fn write_encoded(&self, lines: &str) {
        let mut body = String::with_capacity(lines.len() + 1);
        let mut n = 0;
        for l in lines.lines().filter(|l| !l.trim().is_empty()) {
            body.push_str(l);
            body.push('\n');
            n += 1;
        }
        if n > 0 {
            self.send(Msg::Lines { body, points: n });
        }
    }

    fn send(&self, msg: Msg) {
        if let Msg::Lines { points, .. } = &msg {
            add(&self.counters.accepted, *points);
        }
        if let Some(tx) = &self.tx {
            // The thread only ends on Close (which consumes self) or a panic.
            if tx.send(msg).is_err() {
                tracing::error!("InfluxDB writer thread has stopped; point not queued");
            }
        }
    }

    /// Sends the pending batch now (to InfluxDB or the spool) and waits until it is done.
    pub fn flush(&self) {
        let (ack, done) = mpsc::channel();
        self.send(Msg::Flush(ack));
        let _ = done.recv();
    }

    /// Flushes, then keeps backfilling until the spool is empty or `timeout` passed.
    pub fn sync(&self, timeout: Duration) -> Report {
        let (ack, done) = mpsc::channel();
        self.send(Msg::Sync(Instant::now() + timeout, ack));
        done.recv().unwrap_or_else(|_| self.dead_report())
    }

    /// Flushes, backfills for at most `timeout`, stops the thread and reports. What could
    /// not be sent stays in the spool directory.
    pub fn close(mut self, timeout: Duration) -> Report {
        let (ack, done) = mpsc::channel();
        self.send(Msg::Close(Instant::now() + timeout, ack));
        let report = done.recv().unwrap_or_else(|_| self.dead_report());
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        report
    }

    /// Current counters.
    pub fn stats(&self) -> Stats {
        self.counters.snapshot()
    }

    /// The most recent failure, cleared by the next success.
    pub fn last_error(&self) -> Option<String> {
        self.last_error.lock().map(|g| g.clone()).unwrap_or(None)
    }

    fn dead_report(&self) -> Report {
        Report {
            stats: self.stats(),
            spooled_remaining: 0,
            spool_dir: None,
            last_error: Some("the InfluxDB writer thread stopped unexpectedly".into()),
        }
    }
}

/// Encodes points as newline-terminated line protocol; `None` when there are none.
fn encode<'a>(
    points: impl IntoIterator<Item = &'a Point>,
) -> Result<Option<(String, usize)>, LineError> {
    let mut body = String::new();
    let mut n = 0;
    for p in points {
        p.write_line(&mut body)?;
        body.push('\n');
        n += 1;
    }
    Ok((n > 0).then_some((body, n)))
}

impl Drop for Writer {
    fn drop(&mut self) {
        // The thread spools what is pending and stops.
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(Msg::Shutdown);
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

struct Worker {
    config: WriterConfig,
    client: WriteClient,
    spool: Spool,
    counters: Arc<Counters>,
    last_error: Arc<Mutex<Option<String>>>,
    pending: String,
    pending_points: usize,
    batch_started: Option<Instant>,
    next_attempt: Instant,
    backoff: Duration,
    /// The last attempt was refused (401/403/404): waiting will not help a sync.
    refused: bool,
}

enum Attempt {
    Written,
    Rejected(String),
    Failed,
}

impl Worker {
    fn run(&mut self, rx: mpsc::Receiver<Msg>) {
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
