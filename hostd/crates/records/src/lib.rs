//! hostd-records: the data model of a throttlescope run directory (the role
//! `probe-rs-target` plays in probe-rs). One type per record, one reader and one writer per
//! file, each file versioned; every crate and `scenario-gen` use these, so the compiler keeps
//! producers and consumers in step. Depends on no other hostd crate.
//!
//! | file | record | module |
//! |---|---|---|
//! | `files.csv`, `corrupt.csv` | [`FileRecord`], [`CorruptBlock`] | [`files`] |
//! | `files-probe.csv` | [`FileProbe`] per file | [`files_probe`] |
//! | `intervals.csv` | [`IntervalRecord`] | [`intervals`] |
//! | `counters.csv` | [`CounterRecord`] | [`counters`] |
//! | `drive_temp.csv` | [`drive_temp::DriveTempRecord`] | [`drive_temp`] |
//! | `drive_log.csv` | [`drive_log::DriveLogRecord`] | [`drive_log`] |
//! | `probe.csv` | [`ProbeSample`] | [`probe`] |
//! | `probe/segment-*.parquet` | [`ProbeSample`] | [`probe_store`] |
//! | `probe/levels-*.parquet` | [`AggRow`] per [`probe_levels::Level`] | [`probe_levels`] |
//! | `probe_agg.csv` | [`AggRow`] | [`agg`] |
//! | `latency-files.hlog`, `latency-intervals.hlog` | [`latency::LoggedLatency`] (a [`latency::LatencyHistogram`]) | [`latency`] |
//! | `run-events.jsonl` | [`RunEvent`] (with [`LatencyRecord`]); the run's end: [`RunOutcome`] | [`run_event`], [`outcome`] |
//! | `probe-link.jsonl` | [`probe_link::LinkRecord`] | [`probe_link`] |
//! | `os-log.jsonl` | [`os_log::OsLogRecord`] | [`os_log`] |
//! | `events.json` | [`Analysis`] (with [`Event`]s, [`headline::Headlines`]) | [`events`], [`headline`], [`cause`] |
//! | `manifest.json` | [`Manifest`] (with its [`Profile`] and [`conditions::Conditions`]) | [`manifest`], [`profile`], [`units`] |
//! | `summary.json` | [`Summary`] (with [`ProgramReport`]s) | [`summary`], [`programs`] |
//! | `certify.jsonl`, `certify.json`, `verify-*.json` | [`certify::JournalEntry`], [`certify::Verdict`], [`certify::VerifyResult`] | [`certify`] |
//!
//! Every file of the table is registered once in [`run_files::RUN_FILES`] (name, version,
//! reader, writer, InfluxDB import): a new file is its module, its field in [`RunData`] and
//! one entry there.
//!
//! To add a field: add it to the record type (with `#[serde(default)]` on JSON records so
//! older files still read); for a CSV record also add one row to its column table (see
//! [`columns`]): name, InfluxDB role, value out, cell in. The header, the writer, the reader
//! and the InfluxDB fields all come from that row; leave it optional (not `required`) so
//! older files still read. Bump the module's
//! `FORMAT_VERSION` only when an existing column or field changes meaning or goes away.
//! The [`Profile`] is the exception: its sections refuse unknown keys (a typo in a profile
//! file is an error), so an older build keeps a manifest's profile with a key added later
//! as written ([`manifest::RecordedProfile::Unread`]): it analyses and imports the run, but
//! does not resume or verify it.

#![warn(missing_docs)]

pub mod agg;
pub mod binning;
pub mod cause;
pub mod certify;
pub mod clock;
pub mod columns;
pub mod conditions;
pub mod counters;
mod csvio;
pub mod drive_log;
pub mod drive_temp;
pub mod energy;
pub mod error;
pub mod events;
pub mod files;
pub mod files_probe;
pub mod gate_wait;
pub mod headline;
pub mod intervals;
mod jsonl;
pub mod latency;
pub mod link;
pub mod manifest;
pub mod os_log;
pub mod outcome;
pub mod peak_second;
pub mod port_budget;
pub mod port_figures;
pub mod probe;
pub mod probe_levels;
pub mod probe_link;
pub mod probe_store;
pub mod profile;
pub mod programs;
pub mod published;
pub mod row_stream;
pub mod run;
pub mod run_event;
pub mod run_files;
mod simulated;
pub mod summary;
pub mod units;
pub mod version;

pub use agg::{AggRow, Stat};
pub use counters::CounterRecord;
pub use csvio::{write_atomic, LineWriter};
pub use error::{RecordError, Result};
pub use events::{Analysis, Event};
pub use files::{CorruptBlock, FileProbe, FileRecord};
pub use intervals::IntervalRecord;
pub use manifest::{DirectIo, HostInfo, Manifest, RecordedProfile, TargetInfo};
pub use outcome::{RunOutcome, RunStatus};
pub use probe::{ProbeSample, ProbeSeries};
pub use profile::Profile;
pub use programs::{ProgramFigures, ProgramReport};
pub use row_stream::RowStream;
pub use run::RunData;
pub use run_event::{LatencyRecord, LatencyScope, RunEvent};
pub use summary::{LatencyStats, Summary, LATENCY_COLUMNS};
