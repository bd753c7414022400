//! Workload records → points: `file` and `interval`, written live by `hostd run` and
//! from `files.csv` / `intervals.csv` by `hostd import` (same fields, see the test
//! `live_file_points_equal_imported_ones`).

use super::{m, with_columns, RunTags};
use crate::Point;
use hostd_records::{FileProbe, FileRecord, IntervalRecord, LatencyStats};

/// The `file` point of a record: its `files.csv` columns (`target`, `phase` as tags), the
/// probe's figures once correlated (the end-of-run push of files.csv) and the latency
/// columns, then `cum_bytes`, the running total of its target and phase (see
/// `docs/data-model.md`), and `seconds`.
pub fn file_point(tags: &RunTags, r: &FileRecord, cum_bytes: u64) -> Point {
    let mut p = tags
        .apply(Point::new(m::FILE))
        .timestamp_ns(r.end_ns as i64);
    p = with_columns(p, Some(r));
    p = with_columns::<FileProbe>(p, r.probe.as_deref());
    p = with_columns::<LatencyStats>(p, r.latency.as_ref());
    p.field("cum_bytes", cum_bytes as i64)
        .field("seconds", r.seconds())
}

/// The `interval` point of a record: its `intervals.csv` columns (`target`, `phase` as
/// tags) and the latency columns.
pub fn interval_point(tags: &RunTags, r: &IntervalRecord) -> Point {
    let p = tags
        .apply(Point::new(m::INTERVAL))
        .timestamp_ns(r.start_ns as i64);
    let p = with_columns(p, Some(r));
    with_columns::<LatencyStats>(p, r.latency.as_ref())
}
