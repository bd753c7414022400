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

mod config;
mod report;
mod worker;

pub use config::WriterConfig;
pub use report::{Report, Stats};

use crate::client::WriteClient;
use crate::spool::Spool;
use crate::{LineError, Point};
use report::{add, Counters};
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
