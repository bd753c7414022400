//! Workload records → points: `file` and `interval`, written live by `hostd run` and
//! from `files.csv` / `intervals.csv` by `hostd import` (same fields, see the test
//! `live_file_points_equal_imported_ones`).

use super::{m, RunTags};
use crate::Point;
use hostd_records::{FileRecord, IntervalRecord};
use hostd_records::{LatencyStats, LATENCY_COLUMNS};

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
    // The probe's figures, once correlated (the end-of-run push of files.csv).
    if let Some(probe) = &r.probe {
        p = p.field("probe", probe.probe.as_str());
        let names = &hostd_records::files::PROBE_COLUMNS[1..];
        for (name, v) in names.iter().zip(probe.figures()) {
            if let Some(v) = v.filter(|v| v.is_finite()) {
                p = p.field(*name, v);
            }
        }
    }
    p = with_latency(p, r.latency.as_ref());
    p.field("cum_bytes", cum_bytes as i64)
        .field("seconds", r.seconds())
}

/// The `interval` point of a record.
pub fn interval_point(tags: &RunTags, r: &IntervalRecord) -> Point {
    let p = tags
        .apply(Point::new(m::INTERVAL))
        .timestamp_ns(r.start_ns as i64)
        .tag("target", &r.target)
        .tag("phase", &r.phase)
        .field("start_ns", r.start_ns as i64)
        .field("end_ns", r.end_ns as i64)
        .field("bytes", r.bytes as i64)
        .field("mbps", r.mbps);
    with_latency(p, r.latency.as_ref())
}

/// The latency columns as integer fields, named as in the CSV (so imported and live
/// points agree); none when nothing was timed.
fn with_latency(mut p: Point, l: Option<&LatencyStats>) -> Point {
    if let Some(l) = l {
        let values = [
            l.count,
            l.min_ns,
            l.mean_ns.round() as u64,
            l.p50_ns,
            l.p90_ns,
            l.p99_ns,
            l.p99_9_ns,
            l.p99_99_ns,
            l.max_ns,
        ];
        for (name, v) in LATENCY_COLUMNS.iter().zip(values) {
            p = p.field(*name, v as i64);
        }
    }
    p
}

/// The `drive_temp` point of one reading of a target's drive (SMART) temperature.
pub fn drive_temp_point(tags: &RunTags, target: &str, time_ns: i64, temperature_c: f64) -> Point {
    tags.apply(Point::new(m::DRIVE_TEMP))
        .timestamp_ns(time_ns)
        .tag("target", target)
        .field("temperature_c", temperature_c)
}
