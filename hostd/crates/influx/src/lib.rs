//! `hostd-influx`: the InfluxDB v2 sink of hostd.
//!
//! - [`line`]: line protocol — [`Point`], its builders and correct escaping;
//! - [`client`]: one gzip-compressed `POST /api/v2/write`, failures classified;
//! - [`spool`]: batches waiting for the server, in `RUN_DIR/spool/*.lp`, under a cap;
//! - [`writer`]: the batching [`Writer`] with retry, backoff, spool and in-order backfill;
//! - [`args`]: the shared `--influx-*` command-line flags ([`InfluxArgs`], [`SpoolArgs`]);
//! - [`schema`]: run records → measurements and tags (`docs/data-model.md`);
//! - [`part`]: [`InfluxPart`], InfluxDB as a part of `hostd run` (live
//!   records, then the run directory's probe, aggregate and event files);
//! - [`live`]: the run's writer shared by its parts, and the probe stream into it;
//! - [`admin`]: onboarding and DBRP mapping for a fresh local server, queries;
//! - [`import`]: a finished run directory → InfluxDB (`hostd import`);
//! - `testing` (feature `testing`): a private `influxd` for tests.

#![warn(missing_docs)]

pub mod admin;
pub mod args;
pub mod client;
pub mod import;
pub mod line;
pub mod live;
pub mod part;
pub mod schema;
pub mod spool;
pub mod token;
pub mod writer;

#[cfg(feature = "testing")]
pub mod testing;

pub use args::{InfluxArgs, SpoolArgs};
pub use client::{Target, WriteClient, WriteFailure};
pub use line::{FieldValue, LineError, Point};
pub use live::{LiveSlot, LiveWriter, ProbeStream};
pub use part::InfluxPart;
pub use token::Token;
pub use writer::{Report, Stats, Writer, WriterConfig};
