//! hostd-report: the run's self-contained `report.html` (inline SVG, no script, no
//! network) and the one call `hostd run` and `hostd analyze` make at the end of a run.

#![warn(missing_docs)]

pub mod component;
pub mod latency;
pub mod svg;

/// Short target labels (shared with the terminal summary).
pub use hostd_store::labels;

pub use component::AnalysisComponent;

use anyhow::Context;
use hostd_analysis::{Analysis, Options, RunData};
use std::fmt::Write;
use std::path::Path;
use svg::{esc, Chart, Marker, PALETTE};

const NS: f64 = 1e9;
/// Width of every chart, px.
const WIDTH: f64 = 960.0;
/// Probe points per chart line (min/max kept per bucket).
const PROBE_BUCKETS: usize = 900;

/// Reads the run directory, analyses it, writes `events.json` and `report.html`, and
/// returns the terminal summary.
pub fn analyze_and_report(dir: &Path) -> anyhow::Result<String> {
    Ok(hostd_analysis::summary::text(&analyze_and_write(dir)?))
}

/// Reads the run directory, analyses it, writes `events.json` and `report.html`, and
/// returns the analysis.
pub fn analyze_and_write(dir: &Path) -> anyhow::Result<Analysis> {
    let (run, analysis) = hostd_analysis::analyze_run_dir(dir, &Options::default())
        .with_context(|| format!("could not analyse the run in {}", dir.display()))?;
    hostd_analysis::write_events(dir, &analysis)?;
    write_report(dir, &run, &analysis)?;
    Ok(analysis)
}

/// The analysis' lines for the end of `hostd run`: its summary without the
/// per-phase statistics and the all-active window, which the run's own table
/// above them already gives (the events and what could not be told remain).
pub fn run_summary_lines(a: &Analysis) -> Vec<String> {
    hostd_analysis::summary::text(a)
        .lines()
        .skip(a.phases.len())
        .filter(|l| !(l.starts_with("all ") && l.contains(" targets active for ")))
        .map(str::to_string)
        .collect()
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
    let probed = hostd_analysis::manifest_probe_target(dir);
    let lat = latency::RunLatency::read(dir)?;
    let html = render_with_latency(run, analysis, &title, probed.as_deref(), &lat);
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

/// Targets in order of first appearance, with their short labels.
struct Targets {
    full: Vec<String>,
    short: Vec<String>,
}

impl Targets {
    fn of(run: &RunData) -> Targets {
        let mut full: Vec<String> = Vec::new();
        for f in &run.files {
            if !full.contains(&f.target) {
                full.push(f.target.clone());
            }
        }
        let short = labels::short_labels(&full);
        Targets { full, short }
    }

    /// The short label of `target` (the target itself if unknown).
    fn short<'a>(&'a self, target: &'a str) -> &'a str {
        self.full
            .iter()
            .position(|t| t == target)
            .map_or(target, |i| self.short[i].as_str())
    }
}

fn series_views(run: &RunData, targets: &Targets) -> Vec<SeriesView> {
    let mut v: Vec<SeriesView> = Vec::new();
    for f in &run.files {
        if !v.iter().any(|s| s.target == f.target && s.phase == f.phase) {
            let color = PALETTE[v.len() % PALETTE.len()];
            v.push(SeriesView {
                label: format!("{} {}", targets.short(&f.target), f.phase),
                color,
                target: f.target.clone(),
                phase: f.phase.clone(),
            });
        }
    }
    v
}

/// One event as the report lays it out: its number in the list, where it is
/// on each axis (with its uncertainty interval, when the analysis gives one)
/// and how strong it is. Read through the event's serialised form, so fields
/// the analysis adds (`onset_bytes_low`, `p_value`, kinds such as `stall`)
/// show as soon as they exist.
struct EventView {
    number: usize,
    target: String,
    phase: String,
    kind: String,
    onset_gb: f64,
    onset_s: f64,
    gb_interval: Option<(f64, f64)>,
    s_interval: Option<(f64, f64)>,
    p_value: Option<f64>,
    rate_before_bps: f64,
    rate_after_bps: f64,
    cause: String,
    confidence: f64,
    color: &'static str,
    /// The event's line in the list (also the markers' tooltip).
    line: String,
}

fn event_views(a: &Analysis, views: &[SeriesView], targets: &Targets, t0: i64) -> Vec<EventView> {
    a.events
        .iter()
        .enumerate()
        .map(|(k, e)| {
            let v = serde_json::to_value(e).unwrap_or_default();
            event_view(k + 1, &v, views, targets, t0)
        })
        .collect()
}

/// The view of one event from its serialised form (see [`EventView`]).
fn event_view(
    number: usize,
    v: &serde_json::Value,
    views: &[SeriesView],
    targets: &Targets,
    t0: i64,
) -> EventView {
    let f = |key: &str| v.get(key).and_then(|x| x.as_f64());
    let text = |key: &str| v.get(key).and_then(|x| x.as_str()).unwrap_or("");
    let int = |lo: &str, hi: &str, map: &dyn Fn(f64) -> f64| Some((map(f(lo)?), map(f(hi)?)));
    let since_t0 = |ns: f64| (ns - t0 as f64) / NS;
    let (target, phase) = (text("target"), text("phase"));
    let color = views
        .iter()
        .find(|s| s.target == target && s.phase == phase)
        .map_or("#000", |s| s.color);
    let mut ev = EventView {
        number,
        target: targets.short(target).to_string(),
        phase: phase.to_string(),
        kind: Some(text("kind"))
            .filter(|k| !k.is_empty())
            .unwrap_or("change")
            .to_string(),
        onset_gb: f("onset_bytes").unwrap_or(0.0) / 1e9,
        onset_s: since_t0(f("onset_ns").unwrap_or(t0 as f64)),
        gb_interval: int("onset_bytes_low", "onset_bytes_high", &|b| b / 1e9),
        s_interval: int("onset_ns_low", "onset_ns_high", &since_t0),
        p_value: f("p_value"),
        rate_before_bps: f("rate_before_bps").unwrap_or(f64::NAN),
        rate_after_bps: f("rate_after_bps").unwrap_or(f64::NAN),
        cause: cause_words(text("cause")),
        confidence: f("confidence").unwrap_or(0.0),
        color,
        line: String::new(),
    };
    ev.line = event_line(&ev);
    ev
}

/// "target write drop at 23.9 GB (23.5–24.3), 312.0 s (308.2–316.1): 2.31 → 0.66 GB/s".
fn event_line(e: &EventView) -> String {
    let range = |r: Option<(f64, f64)>, d: usize| {
        r.map_or(String::new(), |(lo, hi)| format!(" ({lo:.d$}–{hi:.d$})"))
    };
    format!(
        "{} {} {} at {:.2} GB{}, {:.1} s{}: {}",
        e.target,
        e.phase,
        e.kind,
        e.onset_gb,
        range(e.gb_interval, 2),
        e.onset_s,
        range(e.s_interval, 1),
        rate_change(e.rate_before_bps, e.rate_after_bps)
    )
}

/// "2.31 → 0.66 GB/s", or in MB/s when either rate is below 0.1 GB/s (a slow device's
/// 24 → 12 MB/s would otherwise read "0.02 → 0.01 GB/s").
fn rate_change(before_bps: f64, after_bps: f64) -> String {
    if before_bps.abs().min(after_bps.abs()) >= 1e8 {
        format!("{} → {} GB/s", gbps(before_bps), gbps(after_bps))
    } else {
        format!("{:.1} → {:.1} MB/s", before_bps / 1e6, after_bps / 1e6)
    }
}

/// A cause as a reader says it: "SLC cache", not "slc_cache".
fn cause_words(cause: &str) -> String {
    match cause {
        "slc_cache" => "SLC cache".into(),
        other => other.replace('_', " "),
    }
}

fn strength(e: &EventView) -> String {
    let mut s = format!("confidence {:.2}", e.confidence);
    if let Some(p) = e.p_value {
        let _ = write!(s, ", p = {}", fmt_p(p));
    }
    s
}

/// A p-value with the digits it needs: 0.03, 0.004, < 0.001.
fn fmt_p(p: f64) -> String {
    if p < 0.001 {
        "< 0.001".into()
    } else if p < 0.01 {
        format!("{p:.3}")
    } else {
        format!("{p:.2}")
    }
}

fn markers_by(events: &[EventView], on_time: bool) -> Vec<Marker> {
    events
        .iter()
        .map(|e| Marker {
            x: if on_time { e.onset_s } else { e.onset_gb },
            band: if on_time { e.s_interval } else { e.gb_interval },
            number: e.number,
            title: format!("{}. {}", e.number, e.line),
            color: e.color.to_string(),
        })
        .collect()
}

fn gbps(bps: f64) -> String {
    format!("{:.2}", bps / 1e9)
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("–".into(), |x| format!("{x:.digits$}"))
}

/// The whole report as one HTML document (no probed target known).
pub fn render(run: &RunData, a: &Analysis, title: &str) -> String {
    render_with(run, a, title, None)
}

/// The whole report as one HTML document; `probed` is the target the probe
/// was on (the others show "no probe").
pub fn render_with(run: &RunData, a: &Analysis, title: &str, probed: Option<&str>) -> String {
    render_with_latency(run, a, title, probed, &latency::RunLatency::none())
}

/// [`render_with`] plus the I/O latency section from the run's latency logs.
pub fn render_with_latency(
    run: &RunData,
    a: &Analysis,
    title: &str,
    probed: Option<&str>,
    lat: &latency::RunLatency,
) -> String {
    let targets = Targets::of(run);
    let views = series_views(run, &targets);
    let t0 = run.files.iter().map(|f| f.start_ns).min().unwrap_or(0);
    let events = event_views(a, &views, &targets, t0);
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
body{{font-family:system-ui,sans-serif;margin:24px auto;padding:0 16px;color:#222;max-width:1000px}}
h1{{font-size:22px;overflow-wrap:anywhere}} h2{{font-size:17px;margin-top:28px;border-bottom:1px solid #ccc}}
svg.chart{{display:block;width:100%;height:auto;max-width:960px}}
.legend{{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:12px;margin:6px 0 2px 62px}}
.legend .key{{white-space:nowrap}} .swatch{{display:inline-block;width:10px;height:10px;margin-right:5px;vertical-align:-1px}}
.scroll{{overflow-x:auto;max-width:100%}}
table{{border-collapse:collapse;font-size:12px}} td,th{{border:1px solid #ccc;padding:3px 6px;text-align:right}} td{{white-space:nowrap}}
@media (max-width:900px){{table{{font-size:11px}} td,th{{padding:2px 4px}}}}
th{{background:#f4f4f4}} td.l,th.l{{text-align:left}} td.path{{white-space:normal;overflow-wrap:anywhere;font-family:ui-monospace,monospace}}
.event{{margin:10px 0;padding:8px 12px;border-left:4px solid #888;background:#fafafa}}
.event ul{{margin:4px 0;font-size:12px}} .cause{{font-weight:bold}} .bimodal{{color:#b00;font-weight:bold}}
ol.events{{list-style:none;padding:0}} ol.events li{{margin:6px 0;padding-left:28px;text-indent:-28px}}
span.badge{{display:inline-block;box-sizing:border-box;min-width:20px;height:20px;padding:0 3px;border:1.5px solid;border-radius:10px;text-align:center;font-size:11px;font-weight:bold;line-height:17px;margin-right:8px;text-indent:0}}
.note{{font-size:12px;color:#555}}
</style></head><body>
<h1>throttlescope run report — {t}</h1>
"#,
        t = esc(title),
        marker = GENERATOR_MARKER
    );
    // Summary: the events, numbered as the charts mark them.
    h.push_str(r#"<section id="summary"><h2>Summary</h2>"#);
    if let Some(line) = hostd_analysis::summary::too_little_line(a) {
        let _ = write!(h, "<p>{}</p>", esc(&line));
    } else if events.is_empty() {
        h.push_str("<p>No change in throughput beyond noise.</p>");
    } else {
        h.push_str(r#"<ol class="events" id="event-list">"#);
        for e in &events {
            let _ = write!(
                h,
                r#"<li data-event="{n}"><span class="badge" style="color:{c};border-color:{c}">{n}</span>{line} — <span class="cause">{cause}</span> ({strength})</li>"#,
                n = e.number,
                c = e.color,
                line = esc(&e.line),
                cause = esc(&e.cause),
                strength = strength(e)
            );
        }
        h.push_str("</ol>");
    }
    h.push_str("</section>");
    h.push_str(&targets_table(run, &targets, probed));
    // Charts.
    h.push_str(r#"<section id="charts"><h2>Throughput against data written</h2>"#);
    if !events.is_empty() {
        h.push_str(r#"<p class="note">Numbered markers are the events of the summary; a shaded band is the onset's uncertainty interval.</p>"#);
    }
    h.push_str(&chart_by_bytes(run, &events, &views));
    h.push_str(r#"<h2>Throughput, bus power and temperature against time</h2>"#);
    h.push_str(if events.is_empty() {
        r#"<p class="note">Same time axis in all three.</p>"#
    } else {
        r#"<p class="note">Same time axis in all three; dashed lines are events.</p>"#
    });
    h.push_str(&chart_time(
        run,
        &events,
        &views,
        t0,
        probed.map(|p| targets.short(p)),
    ));
    h.push_str("<h2>Distribution of per-file rates</h2>");
    h.push_str(&chart_histogram(run, &views));
    h.push_str("</section>");
    h.push_str(&latency::section(lat, t0, WIDTH));
    h.push_str(&stats_table(a, &targets, probed));
    h.push_str(&attribution(a, &events));
    h.push_str(&overlap(a, t0, &targets));
    h.push_str(r#"<p class="note">How every number is computed: docs/methodology.md in the throttlescope repository.</p></body></html>"#);
    h.push('\n');
    h
}

/// Each target once: its short label (used everywhere else), full path, and
/// whether the probe was on it.
fn targets_table(run: &RunData, targets: &Targets, probed: Option<&str>) -> String {
    let mut h = String::from(
        r#"<section id="targets"><h2>Targets</h2><div class="scroll"><table id="targets-table"><tr><th class="l">label</th><th class="l">target</th><th class="l">phases</th><th>files</th><th class="l">probe</th></tr>"#,
    );
    for (full, short) in targets.full.iter().zip(&targets.short) {
        let mut phases: Vec<&str> = Vec::new();
        for f in run.files.iter().filter(|f| &f.target == full) {
            if !phases.contains(&f.phase.as_str()) {
                phases.push(&f.phase);
            }
        }
        let files = run.files.iter().filter(|f| &f.target == full).count();
        let probe = match (probed, &run.probe) {
            (_, None) => "none in this run",
            (Some(p), Some(_)) if p == full => "on this target",
            (Some(_), Some(_)) => "no probe",
            (None, Some(_)) => "–",
        };
        let _ = write!(
            h,
            r#"<tr><td class="l">{}</td><td class="l path">{}</td><td class="l">{}</td><td>{files}</td><td class="l">{probe}</td></tr>"#,
            esc(short),
            esc(full),
            esc(&phases.join(", "))
        );
    }
    h.push_str("</table></div></section>");
    h
}

fn chart_by_bytes(run: &RunData, events: &[EventView], views: &[SeriesView]) -> String {
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
    if events.is_empty() {
        c = c.without_marker_strip();
    }
    for (k, v) in views.iter().enumerate() {
        c.points(&pts_by[k], v.color, "series");
        c.legend(&v.label, v.color);
    }
    for m in markers_by(events, false) {
        c.marker(m);
    }
    c.finish(
        "cumulative data of the target and phase, GB",
        "per-file throughput, GB/s",
    )
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

fn chart_time(
    run: &RunData,
    events: &[EventView],
    views: &[SeriesView],
    t0: i64,
    probed: Option<&str>,
) -> String {
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
    if events.is_empty() {
        c = c.without_marker_strip();
    }
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
    mark_events(&mut c, events);
    out.push_str(&c.finish("time since the first file started, s", "throughput, GB/s"));
    match &run.probe {
        None => out.push_str(r#"<p class="note" id="no-probe">No probe samples in this run: power and temperature charts omitted.</p>"#),
        Some(p) => {
            for (id, values, label, color) in [
                ("chart-power", &p.power_w, "bus power, W", "#D55E00"),
                ("chart-temperature", &p.enclosure_temp_c, "enclosure temperature, °C", "#CC79A7"),
            ] {
                // No more buckets than about two samples each: empty buckets would
                // break the line into dashes on a short run.
                let in_range = p.time_ns.iter().filter(|t| (lo_ns..=hi_ns).contains(*t)).count();
                let buckets = (in_range / 2).clamp(1, PROBE_BUCKETS);
                let (xs, mean, lo, hi) = bucketed(&p.time_ns, values, lo_ns, hi_ns + 1, buckets);
                let xs: Vec<f64> = xs.iter().map(|x| x - t0 as f64 / NS).collect();
                let fin = |v: &Vec<f64>, f: fn(f64, f64) -> f64, init: f64| v.iter().copied().filter(|x| x.is_finite()).fold(init, f);
                let (ymin, ymax) = (fin(&lo, f64::min, f64::INFINITY), fin(&hi, f64::max, f64::NEG_INFINITY));
                let pad = ((ymax - ymin) * 0.08).max(0.5);
                let mut c = Chart::new(id, WIDTH, 200.0, xr, (ymin - pad, ymax + pad));
                if events.is_empty() {
                    c = c.without_marker_strip();
                }
                c.band(&xs, &lo, &hi, color);
                let pts: Vec<(f64, f64)> = xs.iter().copied().zip(mean.iter().copied()).collect();
                c.line(&pts, color, "series");
                mark_events(&mut c, events);
                if let Some(p) = probed {
                    c.legend(&format!("probe on {p}"), color);
                }
                out.push_str(&c.finish("time since the first file started, s", label));
            }
        }
    }
    out
}

fn mark_events(c: &mut Chart, events: &[EventView]) {
    for m in markers_by(events, true) {
        c.marker(m);
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

fn stats_table(a: &Analysis, targets: &Targets, probed: Option<&str>) -> String {
    let mut h = String::from(
        r#"<section id="statistics"><h2>Statistics per target and phase</h2><div class="scroll"><table id="stats-table"><tr><th class="l">target</th><th class="l">phase</th><th>files</th><th>GB</th><th>s</th><th>overall</th><th>mean</th><th>median</th><th>20 % trimmed</th><th>Theil–Sen</th><th>least squares</th><th>overhead per file, ms</th><th>J/GB</th><th>bimodal</th></tr>"#,
    );
    let mut bimodal_notes = Vec::new();
    for p in &a.phases {
        let short = targets.short(&p.target);
        let _ = write!(
            h,
            r#"<tr><td class="l">{}</td><td class="l">{}</td><td>{}</td><td>{:.2}</td><td>{:.1}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
            esc(short),
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
            match (p.j_per_gb, probed) {
                (None, Some(t)) if t != p.target => "no probe".into(),
                (j, _) => opt(j, 2),
            },
            if p.bimodal {
                r#"<span class="bimodal">yes</span>"#
            } else {
                "no"
            }
        );
        if let (true, Some(b)) = (p.bimodal, p.bimodality) {
            bimodal_notes.push(format!(
                r#"<span class="bimodal">{} {}</span>: two groups of per-file rates, split at {} GB/s, {:.1} spreads apart."#,
                esc(short),
                esc(&p.phase),
                gbps(b.split_at),
                b.separation
            ));
        }
    }
    h.push_str("</table></div>");
    for n in bimodal_notes {
        let _ = write!(h, r#"<p class="note">{n}</p>"#);
    }
    h.push_str(r#"<p class="note">Rates in GB/s (10⁹ bytes/s); overall = bytes / file time. Theil–Sen and least squares fit file time against file size; their slope is the drive's rate without the fixed per-file cost (overhead, from Theil–Sen). When the rates are bimodal, averages mislead: read the events.</p></section>"#);
    h
}

fn attribution(a: &Analysis, events: &[EventView]) -> String {
    let mut h = String::from(r#"<section id="attribution"><h2>Events and their causes</h2>"#);
    if let Some(line) = hostd_analysis::summary::too_little_line(a) {
        let _ = write!(h, "<p>{}</p>", esc(&line));
    } else if a.events.is_empty() {
        h.push_str("<p>No events.</p>");
    }
    for c in &a.cycles {
        let _ = write!(h, "<p>{}</p>", esc(&hostd_analysis::summary::cycle_line(c)));
    }
    for (e, v) in a.events.iter().zip(events) {
        let _ = write!(
            h,
            r#"<div class="event" style="border-left-color:{c}"><div><span class="badge" style="color:{c};border-color:{c}">{n}</span>{text}</div><ul>"#,
            c = v.color,
            n = v.number,
            // The analysis' line already carries the p-value and the onset interval.
            text = esc(&e.evidence.text),
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

fn overlap(a: &Analysis, t0: i64, targets: &Targets) -> String {
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
                    esc(targets.short(&t.target)),
                    t.bytes / 1e9,
                    gbps(t.rate_bps)
                );
            }
            h.push_str("</table>");
            for l in &o.lags {
                let _ = write!(
                    h,
                    "<p>{} recovered {:.1} s after {} finished.</p>",
                    esc(targets.short(&l.recovered_target)),
                    l.lag_s,
                    esc(targets.short(&l.ended_target))
                );
            }
        }
        _ => h.push_str("<p>One target (or no common time): no overlap window.</p>"),
    }
    h.push_str("</section>");
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An event as the analysis will serialise it with its onset interval,
    /// p-value and a kind this crate does not know.
    #[test]
    fn events_show_their_onset_interval_and_p_value_when_the_analysis_gives_them() {
        let targets = Targets {
            full: vec!["/var/tmp/demo.X/target".into()],
            short: vec!["target".into()],
        };
        let views = vec![SeriesView {
            label: "target write".into(),
            color: PALETTE[0],
            target: "/var/tmp/demo.X/target".into(),
            phase: "write".into(),
        }];
        let t0 = 1_000_000_000_000;
        let v = serde_json::json!({
            "target": "/var/tmp/demo.X/target", "phase": "write", "kind": "stall",
            "onset_bytes": 23_900_000_000u64, "onset_ns": t0 + 312_000_000_000i64,
            "onset_bytes_low": 23_500_000_000u64, "onset_bytes_high": 24_300_000_000u64,
            "onset_ns_low": t0 + 308_200_000_000i64, "onset_ns_high": t0 + 316_100_000_000i64,
            "p_value": 0.004, "rate_before_bps": 2.31e9, "rate_after_bps": 0.66e9,
            "cause": "slc_cache", "confidence": 0.9
        });
        let e = event_view(3, &v, &views, &targets, t0);
        assert_eq!(
            e.line,
            "target write stall at 23.90 GB (23.50–24.30), 312.0 s (308.2–316.1): 2.31 → 0.66 GB/s"
        );
        assert_eq!(strength(&e), "confidence 0.90, p = 0.004");
        assert_eq!(rate_change(24.0e6, 12.04e6), "24.0 → 12.0 MB/s");
        assert_eq!(e.cause, "SLC cache");
        let by_gb = &markers_by(std::slice::from_ref(&e), false)[0];
        assert_eq!(
            (by_gb.x, by_gb.band, by_gb.number),
            (23.9, Some((23.5, 24.3)), 3)
        );
        let by_time = &markers_by(std::slice::from_ref(&e), true)[0];
        assert_eq!(by_time.band, Some((308.2, 316.1)));
        assert_eq!(fmt_p(0.0001), "< 0.001");
    }
}
