//! [`WriterConfig`]: where a [`super::Writer`] sends, and how it batches and retries.

use crate::client::Target;
use crate::spool::Limits;
use hostd_records::clock::Playback;
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
    /// Bounds of the spool: its directory's bytes (default 1 GiB) and the batches kept in
    /// memory when the disk cannot take them (default 8).
    pub spool_limits: Limits,
    /// Most bytes of line protocol waiting for the writer thread (default 8 MiB, about
    /// 40 000 probe points): while the thread is busy with a slow request, a live writer
    /// ([`super::Writer::offer_all`]) drops what does not fit and a bulk one
    /// ([`super::Writer::write_all`]) waits.
    pub queue_bytes: usize,
    /// When the spool is full: wait this long for InfluxDB to take spooled batches before
    /// dropping new ones (a bulk import, which may wait); `None` drops at once (default: a
    /// live run, which must never stall).
    pub spool_wait: Option<Duration>,
    /// The run's records played faster (simulated drives, `hostd_records::clock`): every
    /// point's timestamp goes to InfluxDB on the host's timeline, when it happened, so no
    /// point lies in the future or in the time of another run; its fields stay the
    /// modelled drive's (`Manifest::playback`).
    pub playback: Option<Playback>,
}

/// Default [`WriterConfig::queue_bytes`].
pub const DEFAULT_QUEUE_BYTES: usize = 8 << 20;

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
            spool_limits: Limits::default(),
            queue_bytes: DEFAULT_QUEUE_BYTES,
            playback: None,
            spool_wait: None,
        }
    }
}
