//! The charts section: throughput against data written, the time charts (throughput, bus
//! power, temperatures), and the distribution of per-file rates.

use crate::envelope;
use crate::svg::Chart;
use crate::view::{markers_by, EventView, SeriesView};
use crate::{seconds, time_charts, WIDTH};
use hostd_analysis::throughput;
use hostd_records::{FileRecord, RunData};

/// The whole charts section; `probed` is the probed target's short label.
pub(crate) fn section(
    run: &RunData,
    events: &[EventView],
    views: &[SeriesView],
    t0: i64,
    probed: Option<&str>,
) -> String {
    let mut h = String::new();
    h.push_str(r#"<section id="charts"><h2>Throughput against data written</h2>"#);
    if !events.is_empty() {
        h.push_str(r#"<p class="note">Numbered markers are the events of the summary; a shaded band is the onset's uncertainty interval.</p>"#);
    }
    h.push_str(&chart_by_bytes(run, events, views));
    h.push_str(r#"<h2>Throughput, bus power and temperature against time</h2>"#);
    h.push_str(if events.is_empty() {
        r#"<p class="note">Same time axis in all three.</p>"#
    } else {
        r#"<p class="note">Same time axis in all three; dashed lines are events.</p>"#
    });
    h.push_str(&time_charts::charts(run, events, views, t0, probed));
    h.push_str("<h2>Distribution of per-file rates</h2>");
    h.push_str(&chart_histogram(run, views));
    h.push_str("</section>");
    h
}

/// Throughput against the cumulative data of its target and phase: each view's 1 s
/// throughput from its byte counter as a line over its per-file rates (faint dots), with the
/// events' markers. A view without counters (an older run) has its per-file rates alone.
fn chart_by_bytes(run: &RunData, events: &[EventView], views: &[SeriesView]) -> String {
    let mut pts_by: Vec<Vec<(f64, f64, String)>> = vec![Vec::new(); views.len()];
    let mut cum = vec![0u64; views.len()];
    let mut files: Vec<&FileRecord> = run.files.iter().collect();
    files.sort_by_key(|f| (f.start_ns, f.index));
    let (mut xmax, mut ymax) = (0.0f64, 0.0f64);
    for f in files {
        let k = views
            .iter()
            .position(|v| v.target == f.target && v.phase == f.phase)
            .unwrap_or(0);
        cum[k] += f.bytes;
        let (x, y) = (cum[k] as f64 / 1e9, f.rate_bps() / 1e9);
        xmax = xmax.max(x);
        ymax = ymax.max(y);
        pts_by[k].push((
            x,
            y,
            format!(
                "{} file {}: {:.3} GB at {:.2} GB/s, {:.1} GB written",
                views[k].label,
                f.index,
                f.bytes as f64 / 1e9,
                y,
                x
            ),
        ));
    }
    let lines: Vec<Vec<(f64, f64)>> = views
        .iter()
        .map(|v| seconds::by_data(&throughput::of_phase(run, &v.target, &v.phase)))
        .collect();
    for &(x, y) in lines.iter().flatten() {
        (xmax, ymax) = (xmax.max(x), ymax.max(y));
    }
    let mut c = Chart::new(
        "chart-throughput-gb",
        WIDTH,
        340.0,
        (0.0, xmax * 1.02),
        (0.0, ymax * 1.1),
    );
    if events.is_empty() {
        c = c.without_marker_strip();
    }
    let (mut summarised, mut long, mut per_file_only) = (false, false, false);
    for (k, v) in views.iter().enumerate() {
        let files = format!("{} per file", v.label);
        if envelope::summarised(pts_by[k].len()) {
            if lines[k].is_empty() {
                let xy: Vec<(f64, f64)> = pts_by[k].iter().map(|p| (p.0, p.1)).collect();
                envelope::draw(&mut c, &xy, 0.0, xmax, v.color);
                summarised = true;
            }
        } else if lines[k].is_empty() {
            c.points(&pts_by[k], v.color, "series");
        } else {
            c.file_points(&pts_by[k], v.color, &files);
        }
        if lines[k].is_empty() {
            per_file_only = true;
        } else {
            long |= seconds::draw(&mut c, &lines[k], 0.0, xmax, v.color);
        }
        c.legend(&v.label, v.color);
    }
    for m in markers_by(events, false) {
        c.marker(m);
    }
    let mut chart = c.finish(
        "cumulative data of the target and phase, GB",
        "throughput, GB/s",
    );
    chart.push_str(if per_file_only {
        r#"<p class="note">Lines: the throughput of each second, from the target's byte counter; dots: each file's rate. A series without byte counters (counters.csv) has its files' rates alone.</p>"#
    } else {
        r#"<p class="note">Lines: the throughput of each second, from the target's byte counter; faint dots: each file's rate.</p>"#
    });
    if summarised {
        chart.push_str(&envelope::note(run.files.len()));
    }
    if long {
        chart.push_str(&seconds::envelope_note());
    }
    chart
}

/// How many files ran at each rate, per target and phase (40 bins).
fn chart_histogram(run: &RunData, views: &[SeriesView]) -> String {
    let rates: Vec<f64> = run.files.iter().map(|f| f.rate_bps() / 1e9).collect();
    let max = rates.iter().copied().fold(0.0, f64::max) * 1.02;
    let bins = 40usize;
    let width = (max / bins as f64).max(1e-9);
    let mut counts = vec![vec![0.0; bins]; views.len()];
    for f in &run.files {
        let k = views
            .iter()
            .position(|v| v.target == f.target && v.phase == f.phase)
            .unwrap_or(0);
        let b = ((f.rate_bps() / 1e9 / width) as usize).min(bins - 1);
        counts[k][b] += 1.0;
    }
    let ymax = counts.iter().flatten().copied().fold(0.0, f64::max);
    let mut c = Chart::new(
        "chart-histogram",
        WIDTH,
        240.0,
        (0.0, max),
        (0.0, ymax * 1.1 + 1.0),
    )
    .without_marker_strip();
    for (k, v) in views.iter().enumerate() {
        let bars: Vec<(f64, f64, f64)> = (0..bins)
            .map(|b| (b as f64 * width, (b + 1) as f64 * width, counts[k][b]))
            .collect();
        c.bars(&bars, v.color, "series");
        c.legend(&v.label, v.color);
    }
    c.finish("per-file throughput, GB/s", "files")
}
