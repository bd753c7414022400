//! Probe records → points: the one mapping of [`ProbeSample`] (measurement `probe`) and
//! [`AggRow`] (`probe_agg`, 10 ms min/mean/max) used live by `hostd run` and `hostd
//! monitor` and by `hostd import` (which reads `probe.csv` / `probe_agg.csv` back into the
//! same records first).

use super::{m, with_columns, RunTags};
use crate::Point;
use hostd_records::{AggRow, ProbeSample};

/// The `probe` point of one aligned sample: the `probe.csv` columns (channels not measured
/// are left out).
pub fn sample_point(tags: &RunTags, s: &ProbeSample) -> Point {
    let p = tags
        .apply_probe(Point::new(m::PROBE))
        .timestamp_ns(s.time_ns);
    with_columns(p, Some(s))
}

/// The `probe_agg` point of one 10 ms bin: the `probe_agg.csv` columns
/// (`CHANNEL_min/_mean/_max`, empty channels left out).
pub fn agg_point(tags: &RunTags, r: &AggRow) -> Point {
    let p = tags
        .apply_probe(Point::new(m::PROBE_AGG))
        .timestamp_ns(r.time_ns);
    with_columns(p, Some(r))
}
