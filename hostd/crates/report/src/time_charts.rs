//! The charts against time: throughput (each second's from the byte counter, over each
//! file's), the probe's bus power and enclosure temperature, and the drive's own (SMART)
//! temperature, on one time axis from the run's first file.

use crate::svg::{Chart, PALETTE};
use crate::view::{mark_events, EventView, SeriesView};
use crate::{envelope, seconds};
use crate::{NS, WIDTH};
use hostd_analysis::throughput;
use hostd_records::binning::MinMeanMax;
use hostd_records::RunData;
use std::fmt::Write;

/// Probe points per chart line (min/max kept per bucket).
const PROBE_BUCKETS: usize = 900;

/// Mean, min and max of `values` in `n` equal time buckets over [a, b)
/// (`hostd_records::binning::MinMeanMax`, as the probe's 10 ms rows).
fn bucketed(
    time_ns: &[i64],
    values: &[f64],
    a: i64,
    b: i64,
    n: usize,
) -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut buckets = vec![MinMeanMax::default(); n];
    let span = (b - a).max(1) as f64;
    for (t, v) in time_ns.iter().zip(values) {
        if *t >= a && *t < b {
            let k = (((*t - a) as f64 / span) * n as f64) as usize;
            buckets[k.min(n - 1)].add(*v);
        }
    }
    let xs = (0..n)
        .map(|k| (a as f64 + (k as f64 + 0.5) * span / n as f64) / NS)
        .collect();
    let stats: Vec<(f64, f64, f64)> = buckets.iter().map(MinMeanMax::get).collect();
    (
        xs,
        stats.iter().map(|s| s.1).collect(),
        stats.iter().map(|s| s.0).collect(),
        stats.iter().map(|s| s.2).collect(),
    )
}

/// The temperature gate's waits as shaded spans, s from `t0`, with their tooltips.
fn gate_spans(run: &RunData, t0: i64) -> Vec<(f64, f64, String)> {
    run.gate_waits
        .iter()
        .filter(|w| w.waited_s > 0.0)
        .map(|w| {
            let s = (w.start_ns as i64 - t0) as f64 / NS;
            (
                s,
                s + w.waited_s,
                format!(
                    "{} waited {:.1} s before {} #{} (temperature gate: {})",
                    w.target,
                    w.waited_s,
                    w.phase,
                    w.index,
                    w.outcome.text()
                ),
            )
        })
        .collect()
}

/// The time charts: throughput, then the probe's power and temperature (or a note that there
/// is no probe), then the drive's temperature; `probed` is the probed target's short label.
/// The temperature gate's waits are shaded on the throughput and enclosure charts.
pub(crate) fn charts(
    run: &RunData,
    events: &[EventView],
    views: &[SeriesView],
    t0: i64,
    probed: Option<&str>,
) -> String {
    let end = run
        .files
        .iter()
        .map(|f| f.end_ns as i64)
        .max()
        .unwrap_or(t0);
    // The axis starts at the first file (the run's first byte), or at a temperature gate's
    // wait before it (the profile's own pause): the probe's idle lead-in before that is left
    // out, so that it squeezes nothing.
    let lo_ns = run
        .gate_waits
        .iter()
        .filter(|w| w.waited_s > 0.0)
        .map(|w| w.start_ns as i64)
        .fold(t0, i64::min);
    let mut hi_ns = end;
    if let Some(p) = &run.probe {
        hi_ns = hi_ns.max(*p.time_ns.last().unwrap_or(&end));
    }
    let xr = ((lo_ns - t0) as f64 / NS, (hi_ns - t0) as f64 / NS);
    let lines: Vec<Vec<(f64, f64)>> = views
        .iter()
        .map(|v| seconds::by_time(&throughput::of_phase(run, &v.target, &v.phase), t0))
        .collect();
    let ymax = run
        .files
        .iter()
        .map(|f| f.rate_bps() / 1e9)
        .chain(lines.iter().flatten().map(|p| p.1))
        .fold(0.0, f64::max);
    let mut out = String::new();
    if let Some(lead) = run
        .probe
        .as_ref()
        .and_then(|p| p.time_ns.first())
        .map(|first| (lo_ns - first) as f64 / NS)
        .filter(|s| *s >= 1.0)
    {
        let _ = write!(
            out,
            r#"<p class="note" id="lead-in">The probe's {lead:.0} s before the run's first step (the drive idle) are left out of these charts; the thermal fit reads them.</p>"#
        );
    }
    let mut c = Chart::new("chart-throughput-time", WIDTH, 240.0, xr, (0.0, ymax * 1.1));
    if events.is_empty() {
        c = c.without_marker_strip();
    }
    let mut long = false;
    for (v, line) in views.iter().zip(&lines) {
        let of_view = || {
            run.files
                .iter()
                .filter(|f| f.target == v.target && f.phase == v.phase)
        };
        if envelope::summarised(of_view().count()) {
            if line.is_empty() {
                // Each file at its middle: the envelope of the files' rates over time.
                let pts: Vec<(f64, f64)> = of_view()
                    .map(|f| {
                        let mid = (f.start_ns / 2 + f.end_ns / 2) as i64;
                        ((mid - t0) as f64 / NS, f.rate_bps() / 1e9)
                    })
                    .collect();
                envelope::draw(&mut c, &pts, xr.0, xr.1, v.color);
            }
        } else {
            let segs: Vec<(f64, f64, f64, String)> = of_view()
                .map(|f| {
                    let (s, e) = (
                        (f.start_ns as i64 - t0) as f64 / NS,
                        (f.end_ns as i64 - t0) as f64 / NS,
                    );
                    (
                        s,
                        e,
                        f.rate_bps() / 1e9,
                        format!(
                            "{} file {}: {:.2} GB/s, {:.1}–{:.1} s",
                            v.label,
                            f.index,
                            f.rate_bps() / 1e9,
                            s,
                            e
                        ),
                    )
                })
                .collect();
            if line.is_empty() {
                c.segments(&segs, v.color, "series");
            } else {
                c.file_segments(&segs, v.color, &format!("{} per file", v.label));
            }
        }
        if !line.is_empty() {
            long |= seconds::draw(&mut c, line, xr.0, xr.1, v.color);
        }
        c.legend(&v.label, v.color);
    }
    c.spans(&gate_spans(run, t0), "gate-wait");
    mark_events(&mut c, events);
    out.push_str(&c.finish("time since the first file started, s", "throughput, GB/s"));
    if long {
        out.push_str(&seconds::envelope_note());
    }
    match &run.probe {
        None => out.push_str(r#"<p class="note" id="no-probe">No probe samples in this run: power and temperature charts omitted.</p>"#),
        Some(p) => {
            // The port's budget on the power chart (in steps where it changed), vSafe5V's
            // minimum on the VBUS chart.
            let stretches: Vec<(f64, f64, f64)> = run
                .budget_timeline
                .stretches(lo_ns, hi_ns)
                .into_iter()
                .filter_map(|(a, b, w)| Some(((a - t0) as f64 / NS, (b - t0) as f64 / NS, w?)))
                .collect();
            let budget = stretches.first().map(|s| {
                let words: Vec<String> = stretches.iter().map(|s| format!("{:.1}", s.2)).collect();
                (s.2, format!("port budget {} W", words.join("→")))
            });
            let vsafe = hostd_records::port_budget::VSAFE5V_MIN_V;
            let has_vbus = p.vbus_v.iter().any(|v| v.is_finite());
            for (id, values, label, color, limit) in [
                ("chart-power", &p.power_w, "bus power, W", "#D55E00", budget),
                ("chart-vbus", &p.vbus_v, "VBUS, V", "#0072B2", Some((vsafe, format!("vSafe5V minimum {vsafe} V")))),
                ("chart-temperature", &p.enclosure_temp_c, "enclosure temperature, °C", "#CC79A7", None),
            ] {
                if id == "chart-vbus" && !has_vbus {
                    continue;
                }
                // No more buckets than about two samples each: empty buckets would
                // break the line into dashes on a short run.
                let in_range = p.time_ns.iter().filter(|t| (lo_ns..=hi_ns).contains(*t)).count();
                let buckets = (in_range / 2).clamp(1, PROBE_BUCKETS);
                let (xs, mean, mut lo, hi) = bucketed(&p.time_ns, values, lo_ns, hi_ns + 1, buckets);
                if id == "chart-vbus" && p.vbus_min_v.len() == p.time_ns.len() {
                    // The band's lower edge: each bucket's lowest VBUS, batch minima included.
                    lo = bucketed(&p.time_ns, &p.vbus_min_v, lo_ns, hi_ns + 1, buckets).2;
                }
                let xs: Vec<f64> = xs.iter().map(|x| x - t0 as f64 / NS).collect();
                let fin = |v: &Vec<f64>, f: fn(f64, f64) -> f64, init: f64| v.iter().copied().filter(|x| x.is_finite()).fold(init, f);
                let (mut ymin, mut ymax) = (fin(&lo, f64::min, f64::INFINITY), fin(&hi, f64::max, f64::NEG_INFINITY));
                if let Some((level, _)) = &limit {
                    (ymin, ymax) = (ymin.min(*level), ymax.max(*level));
                }
                if id == "chart-power" {
                    for (_, _, w) in &stretches {
                        (ymin, ymax) = (ymin.min(*w), ymax.max(*w));
                    }
                }
                let pad = ((ymax - ymin) * 0.08).max(0.5);
                let mut c = Chart::new(id, WIDTH, 200.0, xr, (ymin - pad, ymax + pad));
                if events.is_empty() {
                    c = c.without_marker_strip();
                }
                c.band(&xs, &lo, &hi, color);
                let pts: Vec<(f64, f64)> = xs.iter().copied().zip(mean.iter().copied()).collect();
                c.line(&pts, color, "series");
                if let Some((level, words)) = &limit {
                    if id == "chart-power" {
                        for (a, b, w) in &stretches {
                            c.line(&[(*a, *w), (*b, *w)], "#000000", "limit");
                        }
                    } else {
                        c.line(&[(xr.0, *level), (xr.1, *level)], "#000000", "limit");
                    }
                    c.legend(words, "#000000");
                }
                if id == "chart-temperature" {
                    c.spans(&gate_spans(run, t0), "gate-wait");
                }
                mark_events(&mut c, events);
                if let Some(p) = probed {
                    c.legend(&format!("probe on {p}"), color);
                }
                out.push_str(&c.finish("time since the first file started, s", label));
            }
        }
    }
    out.push_str(&chart_drive_temp(run, events, views, t0, xr));
    out
}

/// The drive's own (SMART) temperature of each target that reported one, on the same time
/// axis; a note when the run has none.
fn chart_drive_temp(
    run: &RunData,
    events: &[EventView],
    views: &[SeriesView],
    t0: i64,
    xr: (f64, f64),
) -> String {
    let Some(temps) = run
        .drive_temp
        .as_ref()
        .filter(|d| d.values().any(|v| !v.is_empty()))
    else {
        return r#"<p class="note" id="no-drive-temp">No drive (SMART) temperature in this run (drive_temp.csv absent: the drive answered none, or an older run).</p>"#.into();
    };
    let all = temps
        .values()
        .flatten()
        .filter(|r| (r.0 - t0) as f64 / NS >= xr.0)
        .map(|r| r.1);
    let (ymin, ymax) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
        (l.min(v), h.max(v))
    });
    let pad = ((ymax - ymin) * 0.08).max(1.0);
    let mut c = Chart::new(
        "chart-drive-temperature",
        WIDTH,
        200.0,
        xr,
        (ymin - pad, ymax + pad),
    );
    if events.is_empty() {
        c = c.without_marker_strip();
    }
    let mut names: Vec<&String> = temps.keys().collect();
    names.sort();
    for (k, target) in names.into_iter().enumerate() {
        let color = views
            .iter()
            .find(|v| &v.target == target)
            .map_or(PALETTE[k % PALETTE.len()], |v| v.color);
        let pts: Vec<(f64, f64)> = temps[target]
            .iter()
            .map(|&(t, v)| ((t - t0) as f64 / NS, v))
            .filter(|p| p.0 >= xr.0)
            .collect();
        c.line(&pts, color, "series");
        let short = views
            .iter()
            .find(|v| &v.target == target)
            .map_or(target.as_str(), |v| {
                v.label.split(' ').next().unwrap_or(target)
            });
        c.legend(&format!("{short} drive (SMART)"), color);
    }
    mark_events(&mut c, events);
    c.finish(
        "time since the first file started, s",
        "drive temperature, °C",
    )
}
