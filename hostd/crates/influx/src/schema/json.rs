//! The run directory's typed JSON records → points: manifest (`run`), events.json
//! ([`Analysis`]: `event`, `overlap`, `stats`, `headline`, `thermal_fit`), summary.json
//! (`probe_health`) and probe-link.jsonl ([`LinkRecord`]: `probe_link`). Every field is
//! named here from a typed record, so renaming a record field fails to build.

use super::{m, RunTags};
use crate::Point;
use hostd_records::events::{Analysis, Event};
use hostd_records::headline::Figure;
use hostd_records::probe_link::LinkRecord;
use hostd_records::{Manifest, Summary};

/// The `run` point of a manifest, at its `start_ns`: `profile` (its name), `scenario`
/// (`scenario-gen` runs), `hostd_version`, `format_version`, `seed`, `keep`,
/// `allow_cached`, `command_line` (words joined by spaces), `hostname`, `targets` (labels
/// joined by commas) and `direct_io` (true when in force on every target; absent without
/// targets). Empty strings (unknown in old manifests) are left out, and so is a seed beyond
/// the integer range. The manifest is taken apart field by field below, so a field added to
/// or renamed in [`Manifest`] fails to build here until the `run` point says what becomes
/// of it.
pub fn run_point(manifest: &Manifest, tags: &RunTags) -> Point {
    let Manifest {
        format_version,
        formats: _, // versions of the CSV files: how to read them, not about the run
        run_id: _,  // the `run` tag
        hostd_version,
        command_line,
        start_ns,
        host,
        targets,
        profile: _, // its name, via `profile_name`
        seed,
        keep,
        allow_cached,
        probe_target: _, // the probe's target: the `probe_health` and `event` points carry it
        conditions,      // tags: every point's (`RunTags`); notes and preparation: fields
        extra: _,        // parts' sections: the scenario's name, via `scenario_name`
    } = manifest;
    let mut p = tags
        .apply(Point::new(m::RUN))
        .timestamp_ns(i64::try_from(*start_ns).unwrap_or(i64::MAX));
    let text = |p: Point, name: &str, v: &str| if v.is_empty() { p } else { p.field(name, v) };
    p = text(p, "profile", manifest.profile_name().unwrap_or_default());
    p = text(p, "scenario", &manifest.scenario_name().unwrap_or_default());
    p = text(p, "hostd_version", hostd_version);
    p = p.field("format_version", i64::from(*format_version));
    if let Ok(seed) = i64::try_from(*seed) {
        p = p.field("seed", seed);
    }
    p = p.field("keep", *keep).field("allow_cached", *allow_cached);
    // A run of simulated drives played faster: its points are on the host's timeline, its
    // figures the modelled drive's (`WriterConfig::playback`).
    if let Some(playback) = manifest.playback() {
        p = p.field("playback_factor", playback.factor);
    }
    p = text(p, "command_line", &command_line.join(" "));
    p = text(p, "hostname", &host.hostname);
    let labels: Vec<&str> = targets.iter().map(|t| t.label.as_str()).collect();
    p = text(p, "targets", &labels.join(","));
    if !targets.is_empty() {
        p = p.field("direct_io", targets.iter().all(|t| t.direct_io.is_direct()));
    }
    // One line each: a line break cannot stand in a line-protocol value.
    let one_line = |parts: Vec<String>| parts.join(" | ").replace(char::is_control, " ");
    p = text(p, "notes", &one_line(conditions.notes.clone()));
    let prepared = conditions
        .preparation
        .iter()
        .map(|pr| format!("{}: {}", pr.target, pr.describe()))
        .collect();
    p = text(p, "preparation", &one_line(prepared));
    p
}

/// The `event` points of an analysis, at each onset (tags `target`, `phase`): the event's
/// typed fields and its evidence's, with rates also in MB/s (`rate_*_mbps`) and the onset
/// in GB (`onset_gb`). Each field is named here, so a renamed record field fails to build.
pub fn event_points(analysis: &Analysis, tags: &RunTags) -> Vec<Point> {
    analysis
        .events
        .iter()
        .map(|e| event_point(e, tags))
        .collect()
}

fn event_point(e: &Event, tags: &RunTags) -> Point {
    let ev = &e.evidence;
    let mut p = tags
        .apply(Point::new(m::EVENT))
        .timestamp_ns(e.onset_ns)
        .tag("target", &e.target)
        .tag("phase", &e.phase)
        .field("kind", e.kind.as_str())
        .field("cause", e.cause.as_str())
        .field("confidence", e.confidence)
        .field("onset_bytes", e.onset_bytes as i64)
        .field("onset_ns", e.onset_ns)
        .field("onset_bytes_low", e.onset_bytes_low as i64)
        .field("onset_bytes_high", e.onset_bytes_high as i64)
        .field("onset_ns_low", e.onset_ns_low)
        .field("onset_ns_high", e.onset_ns_high)
        .field("p_value", e.p_value)
        .field("permutations", i64::from(e.permutations))
        .field("gradual", e.gradual)
        .field("settle_bytes", e.settle_bytes as i64)
        .field("settle_ns", e.settle_ns)
        .field("rate_before_bps", e.rate_before_bps)
        .field("rate_after_bps", e.rate_after_bps)
        .field("rate_before_mbps", e.rate_before_bps / 1e6)
        .field("rate_after_mbps", e.rate_after_bps / 1e6)
        .field("relative_change", e.relative_change)
        .field("text", ev.text.as_str())
        .field("onset_gb", ev.onset_gb)
        .field("onset_s", ev.onset_s)
        .field("duration_s", ev.duration_s)
        .field("onset_file_index", ev.onset_file_index as i64);
    p = opt_fields(
        p,
        &[
            ("temp_rise_c", ev.temp_rise_c),
            ("temp_noise_c", ev.temp_noise_c),
            ("temp_at_onset_c", ev.temp_at_onset_c),
            ("temp_min_c", ev.temp_min_c),
            ("temp_max_c", ev.temp_max_c),
            ("temp_plateau_fraction", ev.temp_plateau_fraction),
            ("temp_slope_before_c_per_s", ev.temp_slope_before_c_per_s),
            ("temp_slope_after_c_per_s", ev.temp_slope_after_c_per_s),
            ("power_before_w", ev.power_before_w),
            ("power_after_w", ev.power_after_w),
            ("j_per_gb_before", ev.j_per_gb_before),
            ("j_per_gb_after", ev.j_per_gb_after),
            ("drive_temp_at_onset_c", ev.drive_temp_at_onset_c),
            ("drive_temp_rise_c", ev.drive_temp_rise_c),
            (
                "drive_temp_plateau_fraction",
                ev.drive_temp_plateau_fraction,
            ),
            (
                "drive_temp_slope_after_c_per_s",
                ev.drive_temp_slope_after_c_per_s,
            ),
            ("aggregate_bps", ev.aggregate_bps),
            ("link_ceiling_bps", ev.link_ceiling_bps),
            ("lag_after_other_end_s", ev.lag_after_other_end_s),
            ("port_budget_w", ev.port_budget_w),
            ("power_share_after", ev.power_share_after),
            ("vbus_min_at_onset_v", ev.vbus_min_at_onset_v),
        ],
    );
    if let Some(o) = &ev.other_target {
        p = p.field("other_target", o.as_str());
    }
    p
}

/// Adds each of `fields` that is a finite number.
fn opt_fields(p: Point, fields: &[(&str, Option<f64>)]) -> Point {
    fields.iter().fold(p, |p, (name, v)| opt_field(p, name, *v))
}

/// Adds `name` = `v` when `v` is a finite number.
fn opt_field(p: Point, name: &str, v: Option<f64>) -> Point {
    match v.filter(|f| f.is_finite()) {
        Some(f) => p.field(name, f),
        None => p,
    }
}

/// `overlap` points of the analysis' overlap window when it has one: one per target at the
/// window start (tags `target`; fields `end_ns`, `duration_s`, `bytes`, `mbps`) and one with
/// `target=all` (`mbps` = aggregate, `peak_mbps`).
pub fn overlap_points(analysis: &Analysis, tags: &RunTags) -> Vec<Point> {
    let o = &analysis.overlap;
    let Some(w) = o.window else {
        return Vec::new();
    };
    let base = |target: &str| {
        tags.apply(Point::new(m::OVERLAP))
            .timestamp_ns(w.start_ns)
            .tag("target", target)
            .field("end_ns", w.end_ns)
            .field("duration_s", w.duration_s)
    };
    let mut out: Vec<Point> = o
        .per_target
        .iter()
        .map(|t| {
            base(&t.target)
                .field("bytes", t.bytes.round() as i64)
                .field("mbps", t.rate_bps / 1e6)
        })
        .collect();
    if let Some(a) = o.aggregate_bps {
        let p = base("all").field("mbps", a / 1e6);
        out.push(opt_field(
            p,
            "peak_mbps",
            o.peak_aggregate_bps.map(|b| b / 1e6),
        ));
    }
    out
}

/// `stats` points of the analysis' per-phase statistics: per target and phase at the phase
/// start, counts and rates in MB/s (`mean_mbps`, `median_mbps`, `trimmed_mean_mbps`,
/// `theil_sen_mbps`, …), and on the probed target its bus power against the port's budget
/// (`peak_power_w`, `mean_power_w`, `port_budget_w`, `peak_power_share`, `mean_power_share`)
/// and VBUS (`vbus_min_v`, `vbus_p1_v`).
pub fn stats_points(analysis: &Analysis, tags: &RunTags) -> Vec<Point> {
    analysis
        .phases
        .iter()
        .map(|s| {
            let mut p = tags
                .apply(Point::new(m::STATS))
                .timestamp_ns(s.start_ns)
                .tag("target", &s.target)
                .tag("phase", &s.phase)
                .field("files", s.files as i64)
                .field("bytes", s.bytes as i64)
                .field("seconds", s.seconds)
                .field("start_ns", s.start_ns)
                .field("end_ns", s.end_ns)
                .field("throughput_mbps", s.throughput_bps / 1e6)
                .field("mean_mbps", s.mean_bps / 1e6)
                .field("median_mbps", s.median_bps / 1e6)
                .field("min_mbps", s.min_bps / 1e6)
                .field("max_mbps", s.max_bps / 1e6)
                .field("trimmed_mean_mbps", s.trimmed_mean_bps / 1e6)
                .field("bimodal", s.bimodal);
            p = opt_fields(
                p,
                &[
                    ("theil_sen_mbps", s.theil_sen_bps.map(|b| b / 1e6)),
                    ("theil_sen_overhead_s", s.theil_sen_overhead_s),
                    ("least_squares_mbps", s.least_squares_bps.map(|b| b / 1e6)),
                    ("least_squares_overhead_s", s.least_squares_overhead_s),
                ],
            );
            if let Some(port) = &s.port {
                // The phase's bus power against the host port's budget, and its VBUS.
                p = p
                    .field("peak_power_w", port.peak_w)
                    .field("mean_power_w", port.mean_w);
                p = opt_fields(
                    p,
                    &[
                        ("port_budget_w", port.budget_w),
                        ("peak_power_share", port.peak_share),
                        ("mean_power_share", port.mean_share),
                        ("vbus_min_v", port.vbus_min_v),
                        ("vbus_p1_v", port.vbus_p1_v),
                    ],
                );
            }
            p
        })
        .collect()
}

/// The `probe_health` point of a run, at its end, from the typed totals in its summary
/// (`summary.json` `probe_health`). `None` without a probe.
pub fn probe_health_point(summary: &Summary, tags: &RunTags) -> Option<Point> {
    let h = summary.probe_health.as_ref()?;
    let mut p = tags
        .apply_probe(Point::new(m::PROBE_HEALTH))
        .timestamp_ns(summary.end_ns as i64);
    for (field, v) in [
        ("samples", h.samples),
        ("dropped", h.dropped),
        ("i2c_errors", h.i2c_errors),
        ("crc_errors", Some(h.crc_errors)),
        ("seq_gaps", Some(h.seq_gaps)),
        ("overflows", h.overflows),
        ("reconnects", Some(h.reconnects)),
    ] {
        if let Some(n) = v {
            p = p.field(field, n as i64);
        }
    }
    if let Some(u) = h.alignment_uncertainty_ns {
        p = p.field("alignment_uncertainty_us", u / 1e3);
    }
    if let Some(r) = h.sample_rate_hz {
        p = p.field("sample_rate_hz", r);
    }
    Some(p)
}

/// `probe_link` points of probe-link.jsonl records, at each record's time: `event` and the
/// typed scalars it has (`port`, `reason`, `next_seq`, `missing`, …); the nested details
/// (reconnect, alignment, device info) are left out.
pub fn probe_link_points(records: &[LinkRecord], tags: &RunTags) -> Vec<Point> {
    records
        .iter()
        .map(|r| {
            let mut p = tags
                .apply_probe(Point::new(m::PROBE_LINK))
                .timestamp_ns(r.time_ns)
                .field("event", r.event.as_str());
            for (name, v) in [
                ("port", &r.port),
                ("reason", &r.reason),
                ("detail", &r.detail),
            ] {
                if let Some(v) = v {
                    p = p.field(name, v.as_str());
                }
            }
            for (name, v) in [
                ("next_seq", r.next_seq),
                ("missing", r.missing),
                ("probe_reported", r.probe_reported),
                ("first_seq", r.first_seq),
            ] {
                if let Some(n) = v {
                    p = p.field(name, n as i64);
                }
            }
            if let Some(c) = r.code {
                p = p.field("code", c);
            }
            p
        })
        .collect()
}

/// Adds a headline figure as `name`, `name_low`, `name_high` divided by `unit`, or
/// `name_absent` (the reason) when not measured.
fn figure_fields(p: Point, name: &str, fig: &Figure, unit: f64) -> Point {
    match fig {
        Figure::Value { value, low, high } => p
            .field(name, value / unit)
            .field(format!("{name}_low"), low / unit)
            .field(format!("{name}_high"), high / unit),
        Figure::Absent { absent } => p.field(format!("{name}_absent"), absent.as_str()),
    }
}

/// `headline` points (one per target and phase, at the phase's start; rates in MB/s, byte
/// positions in GB, each with `_low`/`_high` or `_absent`) and the `thermal_fit` point of
/// the analysis' headlines (docs/methodology.md "Headline figures").
pub fn headline_points(analysis: &Analysis, tags: &RunTags) -> Vec<Point> {
    let h = &analysis.headlines;
    let start_of = |target: &str, phase: &str| {
        analysis
            .phases
            .iter()
            .find(|p| p.target == target && p.phase == phase)
            .map(|p| p.start_ns)
    };
    let mut out = Vec::new();
    for s in &h.series {
        let Some(start) = start_of(&s.target, &s.phase) else {
            continue;
        };
        let mut p = tags
            .apply(Point::new(m::HEADLINE))
            .timestamp_ns(start)
            .tag("target", &s.target)
            .tag("phase", &s.phase);
        for (name, fig, unit) in [
            ("average_mbps", &s.average_bps, 1e6),
            ("sustained_mbps", &s.sustained_bps, 1e6),
            ("drop_gb", &s.drop_bytes, 1e9),
            ("drop_s", &s.drop_s, 1.0),
            ("after_drop_mbps", &s.after_drop_bps, 1e6),
            ("slc_cache_gb", &s.slc_cache_bytes, 1e9),
            ("post_cache_mbps", &s.post_cache_bps, 1e6),
            ("throttle_s", &s.throttle_s, 1.0),
            ("throttle_gb", &s.throttle_bytes, 1e9),
            ("throttled_mbps", &s.throttled_bps, 1e6),
            ("j_per_gb", &s.j_per_gb, 1.0),
            ("mean_power_w", &s.mean_power_w, 1.0),
            ("peak_power_w", &s.peak_power_w, 1.0),
            ("enclosure_max_c", &s.enclosure_max_c, 1.0),
        ] {
            p = figure_fields(p, name, fig, unit);
        }
        if let (Some(cause), Some(conf)) = (s.drop_cause, s.drop_confidence) {
            p = p
                .field("drop_cause", cause.as_str())
                .field("drop_confidence", conf);
        }
        out.push(p);
    }
    let first_start = analysis.phases.iter().map(|p| p.start_ns).min();
    if let (Some(Ok(fit)), Some(start)) = (&h.thermal_fit, first_start) {
        let mut p = tags
            .apply(Point::new(m::THERMAL_FIT))
            .timestamp_ns(start)
            .tag("target", &fit.target);
        for (name, fig) in [
            ("rth_c_per_w", &fit.rth_c_per_w),
            ("tau_s", &fit.tau_s),
            ("ambient_c", &fit.ambient_c),
            ("throttle_s_at_run_ambient", &fit.throttle_s_at_run_ambient),
            ("throttle_s_at_delta", &fit.throttle_s_at_delta),
        ] {
            p = figure_fields(p, name, fig, 1.0);
        }
        out.push(p.field("ambient_delta_c", fit.ambient_delta_c));
    }
    out
}
