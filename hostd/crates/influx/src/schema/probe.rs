//! Probe records → points: the one mapping of [`ProbeSample`] (measurement `probe`) and
//! [`AggRow`] (`probe_agg`, 10 ms min/mean/max) used live by `hostd run` and `hostd
//! monitor` and by `hostd import` (which reads `probe.csv` / `probe_agg.csv` back into the
//! same records first).

use super::{m, RunTags};
use crate::Point;
use hostd_records::agg::{AggRow, Stat};
use hostd_records::probe::ProbeSample;

fn opt(p: Point, name: &str, v: Option<f64>) -> Point {
    match v {
        Some(v) if v.is_finite() => p.field(name, v),
        _ => p,
    }
}

/// The `probe` point of one aligned sample (channels not measured are left out).
pub fn sample_point(tags: &RunTags, s: &ProbeSample) -> Point {
    let mut p = tags
        .apply_probe(Point::new(m::PROBE))
        .timestamp_ns(s.time_ns)
        .field("seq", s.seq as i64);
    for (name, v) in [
        ("vbus_v", s.vbus_v),
        ("current_a", s.current_a),
        ("power_w", s.power_w),
        ("energy_j", s.energy_j),
        ("charge_c", s.charge_c),
        ("die_temp_c", s.die_temp_c),
        ("enclosure_temp_c", s.enclosure_temp_c),
    ] {
        p = opt(p, name, v);
    }
    p
}

/// The channels of an [`AggRow`] by field-name prefix, in `probe_agg.csv` order.
fn agg_channels(r: &AggRow) -> [(&'static str, Stat); 5] {
    [
        ("vbus_v", r.vbus_v),
        ("current_a", r.current_a),
        ("power_w", r.power_w),
        ("die_temp_c", r.die_temp_c),
        ("enclosure_temp_c", r.enclosure_temp_c),
    ]
}

/// The `probe_agg` point of one 10 ms bin (`CHANNEL_min/_mean/_max`, empty channels left out).
pub fn agg_point(tags: &RunTags, r: &AggRow) -> Point {
    let mut p = tags
        .apply_probe(Point::new(m::PROBE_AGG))
        .timestamp_ns(r.time_ns)
        .field("samples", i64::from(r.samples));
    for (name, st) in agg_channels(r) {
        p = opt(p, &format!("{name}_min"), Some(st.min));
        p = opt(p, &format!("{name}_mean"), Some(st.mean));
        p = opt(p, &format!("{name}_max"), Some(st.max));
    }
    opt(p, "energy_j", Some(r.energy_j))
}
