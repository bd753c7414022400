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
//!
//! Bounded, however long the server is away ([`Bounds`]): the channel holds at most
//! [`WriterConfig::queue_bytes`] of line protocol (a live caller's points that do not fit are
//! dropped, a bulk caller waits), the batch being collected at most one batch, and the
//! spool its cap on disk and its few batches in memory ([`crate::spool::Limits`]). When the
//! spool is full the writer drops new batches — counted in [`Stats::dropped`] — until the
//! spool has been sent, so what InfluxDB gets is the run's points in order with one gap,
//! which `hostd import RUN_DIR` fills from the run directory's files.

mod config;
mod queue;
mod report;
mod worker;

pub use config::{WriterConfig, DEFAULT_QUEUE_BYTES};
pub use report::{Bounds, Report, Stats};

use crate::client::WriteClient;
use crate::spool::Spool;
use crate::{LineError, Point};
use hostd_records::clock::Playback;
use queue::Budget;
use report::{add, Counters};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use worker::Worker;

/// What a [`Writer`] sends its thread.
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
    budget: Arc<Budget>,
    bounds: Bounds,
    batch_size: usize,
    /// A full queue was reported (once per writer).
    queue_warned: AtomicBool,
    last_error: Arc<Mutex<Option<String>>>,
    thread: Option<JoinHandle<()>>,
    /// Timestamps to the host's timeline ([`WriterConfig::playback`]).
    playback: Option<Playback>,
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
            Some(dir) => Spool::open(dir, config.spool_limits)?,
            None => Spool::in_memory(config.spool_limits.memory_batches),
        };
        let bounds = Bounds {
            spool_bytes: spool.dir().map(|_| config.spool_limits.disk_bytes),
            memory_batches: config.spool_limits.memory_batches,
            queue_bytes: config.queue_bytes,
        };
        let client = WriteClient::new(config.target.clone(), config.request_timeout, config.gzip)?;
        let (tx, rx) = mpsc::channel();
        let counters = Arc::new(Counters::default());
        let budget = Arc::new(Budget::new(config.queue_bytes, counters.clone()));
        let last_error = Arc::new(Mutex::new(None));
        let batch_size = config.batch_size;
        let playback = config.playback;
        let mut worker = Worker {
            backoff: config.backoff_initial,
            config,
            client,
            spool,
            counters: counters.clone(),
            budget: budget.clone(),
            bounds,
            last_error: last_error.clone(),
            rx,
            deferred: None,
            pending: String::new(),
            pending_points: 0,
            batch_started: None,
            next_attempt: Instant::now(),
            refused: false,
            dropping: false,
            dropped_because: Vec::new(),
        };
        worker.publish_spool();
        let thread = std::thread::Builder::new()
            .name("influx-writer".into())
            .spawn(move || worker.run())
            .map_err(|e| anyhow::anyhow!("cannot start the InfluxDB writer thread: {e}"))?;
        Ok(Writer {
            tx: Some(tx),
            counters,
            budget,
            bounds,
            batch_size,
            queue_warned: AtomicBool::new(false),
            last_error,
            thread: Some(thread),
            playback,
        })
    }

    /// Queues one point, waiting while the queue is full (see [`Writer::write_all`]).
    /// Fails only if the point cannot be encoded.
    pub fn write(&self, point: &Point) -> Result<(), LineError> {
        self.write_all(std::iter::once(point))
    }

    /// Queues many points as one unit; none is queued if any cannot be encoded. Waits
    /// while the queue to the writer thread is full (at most about one request timeout
    /// while a request is under way), so nothing is dropped on the way: for pushes in bulk
    /// (the run's records at its end, an import), not for a live stream that must not stall
    /// (that is [`Writer::offer_all`]).
    pub fn write_all<'a>(
        &self,
        points: impl IntoIterator<Item = &'a Point>,
    ) -> Result<(), LineError> {
        if let Some((body, points)) = encode(points, self.playback.as_ref())? {
            // In batches, so that the queue bound holds for a large push too.
            for (chunk, n) in chunks(&body, points, self.batch_size) {
                self.queue(chunk.to_owned(), n, true);
            }
        }
        Ok(())
    }

    /// Queues many points as one unit (none if any cannot be encoded) without ever
    /// waiting: when the queue to the writer thread is full they are dropped and counted
    /// ([`Stats::dropped_queue`]). For live streams (probe samples, run events). Returns
    /// whether they were queued.
    pub fn offer_all<'a>(
        &self,
        points: impl IntoIterator<Item = &'a Point>,
    ) -> Result<bool, LineError> {
        Ok(match encode(points, self.playback.as_ref())? {
            Some((body, points)) => self.queue(body, points, false),
            None => true,
        })
    }

    /// Queues already-encoded line protocol (e.g. a spool file being imported), waiting
    /// like [`Writer::write_all`]. Each non-empty line counts as one point.
    pub fn write_encoded(&self, lines: &str) {
        let mut body = String::with_capacity(lines.len() + 1);
        let mut n = 0;
        for l in lines.lines().filter(|l| !l.trim().is_empty()) {
            body.push_str(l);
            body.push('\n');
            n += 1;
        }
        if n > 0 {
            self.queue(body, n, true);
        }
    }

    /// Hands a body to the thread within the queue's budget (see [`Writer::write_all`]
    /// and [`Writer::offer_all`]); false when it was dropped.
    fn queue(&self, body: String, points: usize, wait: bool) -> bool {
        add(&self.counters.accepted, points);
        let bytes = body.len();
        let alive = || self.thread.as_ref().is_some_and(|t| !t.is_finished());
        if !self.budget.take(bytes, wait, alive) {
            add(&self.counters.dropped, points);
            add(&self.counters.dropped_queue, points);
            if !self.queue_warned.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    "InfluxDB writer busy: {} of points wait for it already; new live points \
                     are dropped while it is (they stay in the run directory's files)",
                    hostd_records::units::human_bytes(self.bounds.queue_bytes as u64)
                );
            }
            return false;
        }
        if !self.send(Msg::Lines { body, points }) {
            self.budget.give(bytes);
            return false;
        }
        true
    }

    fn send(&self, msg: Msg) -> bool {
        if let Some(tx) = &self.tx {
            // The thread only ends on Close (which consumes self) or a panic.
            if tx.send(msg).is_ok() {
                return true;
            }
            tracing::error!("InfluxDB writer thread has stopped; point not queued");
        }
        false
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

    /// The bounds this writer keeps to.
    pub fn bounds(&self) -> Bounds {
        self.bounds
    }

    fn dead_report(&self) -> Report {
        Report {
            stats: self.stats(),
            spooled_remaining: 0,
            spool_dir: None,
            bounds: self.bounds,
            dropped_because: Vec::new(),
            last_error: Some("the InfluxDB writer thread stopped unexpectedly".into()),
        }
    }
}

/// Encodes points as newline-terminated line protocol; `None` when there are none.
fn encode<'a>(
    points: impl IntoIterator<Item = &'a Point>,
    playback: Option<&Playback>,
) -> Result<Option<(String, usize)>, LineError> {
    let mut body = String::new();
    let mut n = 0;
    for p in points {
        p.write_line_timed(&mut body, playback)?;
        body.push('\n');
        n += 1;
    }
    Ok((n > 0).then_some((body, n)))
}

/// `body` (newline-terminated lines, `points` of them) in pieces of at most `size` lines,
/// each with its line count.
fn chunks(body: &str, points: usize, size: usize) -> impl Iterator<Item = (&str, usize)> {
    let mut rest = body;
    let mut left = points;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        if left <= size {
            let n = std::mem::take(&mut left);
            return Some((std::mem::take(&mut rest), n));
        }
        let end = rest
            .match_indices('\n')
            .nth(size - 1)
            .map_or(rest.len(), |(i, _)| i + 1);
        let (head, tail) = rest.split_at(end);
        rest = tail;
        left -= size;
        Some((head, size))
    })
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
