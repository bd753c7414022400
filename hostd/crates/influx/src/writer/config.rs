//! [`WriterConfig`]: where a [`super::Writer`] sends, and how it batches and retries.

use crate::client::Target;
use std::path::PathBuf;
use std::time::Duration;

/// Configuration of a [`super::Writer`].
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
