//! Workload records → points: `file` and `interval`, written live by `hostd run` and
//! from `files.csv` / `intervals.csv` by `hostd import` (same fields, see the test
//! `live_file_points_equal_imported_ones`).

use super::{m, RunTags};
use crate::Point;
use hostd_workload::events::{FileRecord, IntervalRecord, LatencyRecord, LatencyScope};

/// The `file` point of a record; `cum_bytes` is the running total of its target and
/// phase (see `docs/data-model.md`).
pub fn file_point(tags: &RunTags, r: &FileRecord, cum_bytes: u64) -> Point {
    let mut p = tags
        .apply(Point::new(m::FILE))
        .timestamp_ns(r.end_ns as i64)
        .tag("target", &r.target)
        .tag("phase", &r.phase)
        .field("index", i64::from(r.index))
        .field("start_ns", r.start_ns as i64)
        .field("end_ns", r.end_ns as i64)
        .field("bytes", r.bytes as i64)
        .field("mbps", r.mbps);
    if let Some(v) = r.verified {
        p = p.field("verified", v);
    }
    p = p
        .field("corrupt_blocks", r.corrupt_blocks as i64)
        .field("corrupt_bytes", r.corrupt_bytes as i64)
        .field("late_ops", r.late_ops as i64)
        .field("block_size", r.block_size as i64)
        .field("queue_depth", r.queue_depth as i64)
        .field("direct_io", r.direct_io)
        .field("status", r.status.as_str());
    if let Some(c) = r.corrupt.first() {
        p = p.field("first_corrupt_offset", c.offset as i64);
    }
    p.field("cum_bytes", cum_bytes as i64)
        .field("seconds", r.seconds())
}

/// The `interval` point of a record.
pub fn interval_point(tags: &RunTags, r: &IntervalRecord) -> Point {
    tags.apply(Point::new(m::INTERVAL))
        .timestamp_ns(r.start_ns as i64)
        .tag("target", &r.target)
        .tag("phase", &r.phase)
        .field("start_ns", r.start_ns as i64)
        .field("end_ns", r.end_ns as i64)
        .field("bytes", r.bytes as i64)
        .field("mbps", r.mbps)
}

/// The latency fields of a file or an interval (`latency_p50_ns` …
/// `latency_max_ns`, `latency_io_count`), as a point with the measurement,
/// tags and timestamp of that record's `file` or `interval` point, so that
/// InfluxDB stores them as more fields of the same row.
pub fn latency_point(tags: &RunTags, r: &LatencyRecord) -> Point {
    let s = r.histogram.stats();
    let (p, phase) = match &r.scope {
        LatencyScope::File { phase, .. } => {
            (Point::new(m::FILE).timestamp_ns(r.end_ns as i64), phase)
        }
        LatencyScope::Interval { phase } => (
            Point::new(m::INTERVAL).timestamp_ns(r.start_ns as i64),
            phase,
        ),
    };
    tags.apply(p)
        .tag("target", &r.target)
        .tag("phase", phase)
        .field("latency_io_count", s.count as i64)
        .field("latency_p50_ns", s.p50_ns as i64)
        .field("latency_p90_ns", s.p90_ns as i64)
        .field("latency_p99_ns", s.p99_ns as i64)
        .field("latency_p99_9_ns", s.p99_9_ns as i64)
        .field("latency_p99_99_ns", s.p99_99_ns as i64)
        .field("latency_max_ns", s.max_ns as i64)
}
