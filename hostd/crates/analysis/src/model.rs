//! The analysis result: the shape of `events.json` and of `hostd analyze --json`, defined in
//! `hostd-records` (its `events` module) so producers and readers share one type.

pub use hostd_records::events::*;
