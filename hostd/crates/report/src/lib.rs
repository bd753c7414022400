//! hostd-report: the run's self-contained `report.html` (inline SVG, no script, no
//! network) and the one call `hostd run` and `hostd analyze` make at the end of a run.

#![warn(missing_docs)]

pub mod component;
pub mod svg;

pub use component::AnalysisComponent;

use anyhow::Context;
use hostd_analysis::{Analysis, EventKind, Options, RunData};
use std::fmt::Write;
use std::path::Path;
use svg::{esc, Chart, PALETTE};

const NS: f64 = 1e9;
/// Width of every chart, px.
const WIDTH: f64 = 960.0;
/// Probe points per chart line (min/max kept per bucket).
const PROBE_BUCKETS: usize = 900;

/// Reads the run directory, analyses it, writes `events.json` and `report.html`, and
/// returns the terminal summary. This is what `hostd run` calls at the end.
pub fn analyze_and_report(dir: &Path) -> anyhow::Result<String> {
    let (run, analysis) = hostd_analysis::analyze_run_dir(dir, &Options::default())
        .with_context(|| format!("could not analyse the run in {}", dir.display()))?;
    hostd_analysis::write_events(dir, &analysis)?;
    write_report(dir, &run, &analysis)?;
    Ok(hostd_analysis::summary::text(&analysis))
}

/// Marker in every report hostd writes (a `<meta name="generator">`).
pub const GENERATOR_MARKER: &str = r#"<meta name="generator" content="throttlescope hostd">"#;

/// True when `path` does not exist or holds a report hostd wrote (it carries
/// [`GENERATOR_MARKER`]); `hostd analyze` replaces only such files unless forced.
pub fn report_replaceable(path: &Path) -> bool {
    match std::fs::read_to_string(path) {
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
        Ok(text) => text.contains(GENERATOR_MARKER),
    }
}

/// Writes `report.html` into the run directory.
pub fn write_report(dir: &Path, run: &RunData, analysis: &Analysis) -> anyhow::Result<()> {
    let title = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "run".into());
    let html = render(run, analysis, &title);
    let path = dir.join("report.html");
    let tmp = dir.join(".report.html.tmp");
    std::fs::write(&tmp, html).with_context(|| format!("could not write {}", tmp.display()))?;
    std::fs::rename(&tmp, &path).with_context(|| format!("could not write {}", path.display()))?;
    Ok(())
}

struct SeriesView {
    label: String,
    color: &'static str,
    target: String,
    phase: String,
}

fn series_views(run: &RunData) -> Vec<SeriesView> {
    let mut v: Vec<SeriesView> = Vec::new();
    for f in &run.files {
        if !v.iter().any(|s| s.target == f.target && s.phase == f.phase) {
            let color = PALETTE[v.len() % PALETTE.len()];
            v.push(SeriesView {
                label: format!("{} {}", f.target, f.phase),
                color,
                target: f.target.clone(),
                phase: f.phase.clone(),
            });
        }
    }
    v
}

fn gbps(bps: f64) -> String {
    format!("{:.2}", bps / 1e9)
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("–".into(), |x| format!("{x:.digits$}"))
}

/// The whole report as one HTML document.
pub fn render(run: &RunData, a: &Analysis, title: &str) -> String {
    let views = series_views(run);
    let t0 = run.files.iter().map(|f| f.start_ns).min().unwrap_or(0);
    let mut h = String::new();
    let _ = write!(
        h,
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
{marker}
<title>throttlescope — {t}</title>
<style>
body{{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1000px}}
h1{{font-size:22px}} h2{{font-size:17px;margin-top:28px;border-bottom:1px solid #ccc}}
table{{border-collapse:collapse;font-size:12px}} td,th{{border:1px solid #ccc;padding:3px 6px;text-align:right}}
th{{background:#f4f4f4}} td.l,th.l{{text-align:left}} .event{{margin:10px 0;padding:8px 12px;border-left:4px solid #888;background:#fafafa}}
.event ul{{margin:4px 0;font-size:12px}} .cause{{font-weight:bold}} .bimodal{{color:#b00;font-weight:bold}}
.note{{font-size:12px;color:#555}}
</style></head><body>
<h1>throttlescope run report — {t}</h1>
"#,
        t = esc(title),
        marker = GENERATOR_MARKER
    );
    // Summary sentences.
    h.push_str(r#"<section id="summary"><h2>Summary</h2>"#);
    if let Some(line) = hostd_analysis::summary::too_little_line(a) {
        let _ = write!(h, "<p>{}</p>", esc(&line));
    } else if a.events.is_empty() {
        h.push_str("<p>No change in throughput beyond noise.</p>");
    }
    for e in &a.events {
        let _ = write!(h, "<p>{}</p>", esc(&e.evidence.text));
    }
    h.push_str("</section>");
    // Charts.
    h.push_str(r#"<section id="charts"><h2>Throughput against data written</h2>"#);
    h.push_str(&chart_by_bytes(run, a, &views));
    h.push_str(r#"<h2>Throughput, bus power and temperature against time</h2><p class="note">Same time axis in all three; dashed lines are events.</p>"#);
    h.push_str(&chart_time(run, a, &views, t0));
    h.push_str("<h2>Distribution of per-file rates</h2>");
    h.push_str(&chart_histogram(run, &views));
    h.push_str("</section>");
    h.push_str(&stats_table(a));
    h.push_str(&attribution(a));
    h.push_str(&overlap(a, t0));
    h.push_str(r#"<p class="note">How every number is computed: docs/methodology.md in the throttlescope repository.</p></body></html>"#);
    h.push('\n');
    h
}

fn chart_by_bytes(run: &RunData, a: &Analysis, views: &[SeriesView]) -> String {
    let mut pts_by: Vec<Vec<(f64, f64, String)>> = vec![Vec::new(); views.len()];
    let mut cum = vec![0u64; views.len()];
    let mut files: Vec<&hostd_analysis::FileRecord> = run.files.iter().collect();
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
    let mut c = Chart::new(
        "chart-throughput-gb",
        WIDTH,
        340.0,
        (0.0, xmax * 1.02),
        (0.0, ymax * 1.1),
    );
    for (k, v) in views.iter().enumerate() {
        c.points(&pts_by[k], v.color, "series");
        c.legend(&v.label, v.color);
    }
    for e in &a.events {
        let color = views
            .iter()
            .find(|v| v.target == e.target && v.phase == e.phase)
            .map_or("#000", |v| v.color);
        c.marker(
            e.evidence.onset_gb,
            &format!("{} {} {}", e.target, kind_word(e.kind), e.cause.as_str()),
            color,
        );
    }
    c.finish(
        "cumulative data of the target and phase, GB",
        "per-file throughput, GB/s",
    )
}

fn kind_word(k: EventKind) -> &'static str {
    match k {
        EventKind::Drop => "drop",
        EventKind::Recovery => "recovery",
        EventKind::Stall => "stall",
    }
}

/// Mean, min and max of `values` in `n` equal time buckets over [a, b).
fn bucketed(
    time_ns: &[i64],
    values: &[f64],
    a: i64,
    b: i64,
    n: usize,
) -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut sum = vec![0.0; n];
    let mut cnt = vec![0usize; n];
    let mut lo = vec![f64::INFINITY; n];
    let mut hi = vec![f64::NEG_INFINITY; n];
    let span = (b - a).max(1) as f64;
    for (t, v) in time_ns.iter().zip(values) {
        if *t < a || *t >= b || !v.is_finite() {
            continue;
        }
        let k = (((*t - a) as f64 / span) * n as f64) as usize;
        let k = k.min(n - 1);
        sum[k] += v;
        cnt[k] += 1;
        lo[k] = lo[k].min(*v);
        hi[k] = hi[k].max(*v);
    }
    let xs = (0..n)
        .map(|k| (a as f64 + (k as f64 + 0.5) * span / n as f64) / NS)
        .collect();
    let mean = (0..n)
        .map(|k| {
            if cnt[k] > 0 {
                sum[k] / cnt[k] as f64
            } else {
                f64::NAN
            }
        })
        .collect();
    let lo = lo
        .into_iter()
        .map(|v| if v.is_finite() { v } else { f64::NAN })
        .collect();
    let hi = hi
        .into_iter()
        .map(|v| if v.is_finite() { v } else { f64::NAN })
        .collect();
    (xs, mean, lo, hi)
}

fn chart_time(run: &RunData, a: &Analysis, views: &[SeriesView], t0: i64) -> String {
    let end = run.files.iter().map(|f| f.end_ns).max().unwrap_or(t0);
    let (mut lo_ns, mut hi_ns) = (t0, end);
    if let Some(p) = &run.probe {
        lo_ns = lo_ns.min(*p.time_ns.first().unwrap_or(&t0));
        hi_ns = hi_ns.max(*p.time_ns.last().unwrap_or(&end));
    }
    let xr = ((lo_ns - t0) as f64 / NS, (hi_ns - t0) as f64 / NS);
    let ymax = run.files.iter().map(|f| f.rate_bps()).fold(0.0, f64::max) / 1e9;
    let mut out = String::new();
    let mut c = Chart::new("chart-throughput-time", WIDTH, 240.0, xr, (0.0, ymax * 1.1));
    for v in views {
        let segs: Vec<(f64, f64, f64, String)> = run
            .files
            .iter()
            .filter(|f| f.target == v.target && f.phase == v.phase)
            .map(|f| {
                let (s, e) = ((f.start_ns - t0) as f64 / NS, (f.end_ns - t0) as f64 / NS);
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
        c.segments(&segs, v.color, "series");
        c.legend(&v.label, v.color);
    }
    mark_events(&mut c, a, views, t0);
    out.push_str(&c.finish("time since the first file started, s", "throughput, GB/s"));
    match &run.probe {
        None => out.push_str(r#"<p class="note" id="no-probe">No probe samples in this run: power and temperature charts omitted.</p>"#),
        Some(p) => {
            for (id, values, label, color) in [
                ("chart-power", &p.power_w, "bus power, W", "#D55E00"),
                ("chart-temperature", &p.enclosure_temp_c, "enclosure temperature, °C", "#CC79A7"),
            ] {
                let (xs, mean, lo, hi) = bucketed(&p.time_ns, values, lo_ns, hi_ns + 1, PROBE_BUCKETS);
                let xs: Vec<f64> = xs.iter().map(|x| x - t0 as f64 / NS).collect();
                let fin = |v: &Vec<f64>, f: fn(f64, f64) -> f64, init: f64| v.iter().copied().filter(|x| x.is_finite()).fold(init, f);
                let (ymin, ymax) = (fin(&lo, f64::min, f64::INFINITY), fin(&hi, f64::max, f64::NEG_INFINITY));
                let pad = ((ymax - ymin) * 0.08).max(0.5);
                let mut c = Chart::new(id, WIDTH, 200.0, xr, (ymin - pad, ymax + pad));
                c.band(&xs, &lo, &hi, color);
                let pts: Vec<(f64, f64)> = xs.iter().copied().zip(mean.iter().copied()).collect();
                c.line(&pts, color, "series");
                mark_events(&mut c, a, views, t0);
                out.push_str(&c.finish("time since the first file started, s", label));
            }
        }
    }
    out
}

fn mark_events(c: &mut Chart, a: &Analysis, views: &[SeriesView], t0: i64) {
    for e in &a.events {
        let color = views
            .iter()
            .find(|v| v.target == e.target && v.phase == e.phase)
            .map_or("#000", |v| v.color);
        c.marker(
            (e.onset_ns - t0) as f64 / NS,
            &format!("{} {}", e.target, kind_word(e.kind)),
            color,
        );
    }
}

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
    );
    for (k, v) in views.iter().enumerate() {
        let bars: Vec<(f64, f64, f64)> = (0..bins)
            .map(|b| (b as f64 * width, (b + 1) as f64 * width, counts[k][b]))
            .collect();
        c.bars(&bars, v.color, "series");
        c.legend(&v.label, v.color);
    }
    c.finish("per-file throughput, GB/s", "files")
}

fn stats_table(a: &Analysis) -> String {
    let mut h = String::from(
        r#"<section id="statistics"><h2>Statistics per target and phase</h2><table id="stats-table"><tr><th class="l">target</th><th class="l">phase</th><th>files</th><th>GB</th><th>s</th><th>overall GB/s</th><th>mean</th><th>median</th><th>20 % trimmed</th><th>Theil–Sen</th><th>least squares</th><th>overhead/file (TS), ms</th><th>J/GB</th><th>bimodal</th></tr>"#,
    );
    for p in &a.phases {
        let _ = write!(
            h,
            r#"<tr><td class="l">{}</td><td class="l">{}</td><td>{}</td><td>{:.2}</td><td>{:.1}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
            esc(&p.target),
            esc(&p.phase),
            p.files,
            p.bytes as f64 / 1e9,
            p.seconds,
            gbps(p.throughput_bps),
            gbps(p.mean_bps),
            gbps(p.median_bps),
            gbps(p.trimmed_mean_bps),
            p.theil_sen_bps.map_or("–".into(), gbps),
            p.least_squares_bps.map_or("–".into(), gbps),
            opt(p.theil_sen_overhead_s.map(|s| s * 1e3), 1),
            opt(p.j_per_gb, 2),
            if p.bimodal {
                format!(
                    r#"<span class="bimodal">yes</span> (split at {} GB/s, gap {:.1} spreads)"#,
                    p.bimodality.map_or("–".into(), |b| gbps(b.split_at)),
                    p.bimodality.map_or(0.0, |b| b.separation)
                )
            } else {
                "no".into()
            }
        );
    }
    h.push_str(r#"</table><p class="note">Rates in GB/s (10⁹ bytes/s). Theil–Sen and least squares fit file time against file size; their slope is the drive's rate without the fixed per-file cost. When the rates are bimodal, averages mislead: read the events.</p></section>"#);
    h
}

fn attribution(a: &Analysis) -> String {
    let mut h = String::from(r#"<section id="attribution"><h2>Events and their causes</h2>"#);
    if let Some(line) = hostd_analysis::summary::too_little_line(a) {
        let _ = write!(h, "<p>{}</p>", esc(&line));
    } else if a.events.is_empty() {
        h.push_str("<p>No events.</p>");
    }
    for c in &a.cycles {
        let _ = write!(h, "<p>{}</p>", esc(&hostd_analysis::summary::cycle_line(c)));
    }
    for e in &a.events {
        let _ = write!(
            h,
            r#"<div class="event"><div><span class="cause">{}</span> (confidence {:.2}) — {}</div><ul>"#,
            e.cause.as_str(),
            e.confidence,
            esc(&e.evidence.text)
        );
        let _ = write!(
            h,
            "<li>onset {:.2} GB, 99.9 % interval {:.2}–{:.2} GB ({:.2}–{:.2} s); {} ({} block permutations){}</li>",
            e.evidence.onset_gb,
            e.evidence.onset_interval_gb[0],
            e.evidence.onset_interval_gb[1],
            e.evidence.onset_interval_s[0],
            e.evidence.onset_interval_s[1],
            esc(&hostd_analysis::summary::strength(e)),
            e.permutations,
            if e.gradual {
                format!("; gradual, settled at {:.2} GB", e.settle_bytes as f64 / 1e9)
            } else {
                String::new()
            }
        );
        for r in &e.evidence.reasons {
            let _ = write!(h, "<li>{}</li>", esc(r));
        }
        let s = &e.evidence.scores;
        let _ = write!(
            h,
            "<li>scores: thermal {:.2}, SLC cache {:.2}, contention {:.2}</li></ul></div>",
            s.thermal, s.slc_cache, s.contention
        );
    }
    h.push_str("</section>");
    h
}

fn overlap(a: &Analysis, t0: i64) -> String {
    let o = &a.overlap;
    let mut h = String::from(r#"<section id="overlap"><h2>Targets active together</h2>"#);
    match (&o.window, o.aggregate_bps) {
        (Some(w), Some(agg)) => {
            let _ = write!(
                h,
                "<p>All {} targets were active from {:.1} s to {:.1} s ({:.1} s). Aggregate {} GB/s{}.</p><table><tr><th class=\"l\">target</th><th>GB in window</th><th>GB/s</th></tr>",
                o.targets.len(),
                (w.start_ns - t0) as f64 / NS,
                (w.end_ns - t0) as f64 / NS,
                w.duration_s,
                gbps(agg),
                o.peak_aggregate_bps.map_or(String::new(), |p| format!(" (peak 1 s aggregate of the run {} GB/s)", gbps(p)))
            );
            for t in &o.per_target {
                let _ = write!(
                    h,
                    r#"<tr><td class="l">{}</td><td>{:.2}</td><td>{}</td></tr>"#,
                    esc(&t.target),
                    t.bytes / 1e9,
                    gbps(t.rate_bps)
                );
            }
            h.push_str("</table>");
            for l in &o.lags {
                let _ = write!(
                    h,
                    "<p>{} recovered {:.1} s after {} finished.</p>",
                    esc(&l.recovered_target),
                    l.lag_s,
                    esc(&l.ended_target)
                );
            }
        }
        _ => h.push_str("<p>One target (or no common time): no overlap window.</p>"),
    }
    h.push_str("</section>");
    h
}
