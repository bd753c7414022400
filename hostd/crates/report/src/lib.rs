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
use hostd_analysis::stats::MinMeanMax;
use hostd_analysis::summary::{rate, RateUnit};
use hostd_analysis::Options;
use hostd_records::events::Analysis;
use hostd_records::RunData;
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

/// Analyses records already in memory (`hostd run`), writes `events.json` and `report.html`
/// into `dir`, and returns the analysis — what [`analyze_and_write`] does from the files.
pub fn analyze_and_write_records(dir: &Path, run: &RunData) -> anyhow::Result<Analysis> {
    let analysis = hostd_analysis::analyze(run, &Options::default());
    hostd_analysis::write_events(dir, &analysis)?;
    write_report(dir, run, &analysis)?;
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
    let html = render_with(run, analysis, &title, run.probe_target.as_deref());
    Ok(hostd_records::write_atomic(
        &dir.join("report.html"),
        html.as_bytes(),
    )?)
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
/// on each axis with its onset interval, and the analysis' own line for it.
struct EventView {
    number: usize,
    onset_gb: f64,
    onset_s: f64,
    gb_interval: Option<(f64, f64)>,
    s_interval: Option<(f64, f64)>,
    color: &'static str,
    /// The event's line in the list (also the markers' tooltip).
    line: String,
}

fn event_views(a: &Analysis, views: &[SeriesView], targets: &Targets, t0: i64) -> Vec<EventView> {
    a.events
        .iter()
        .enumerate()
        .map(|(k, e)| event_view(k + 1, e, views, targets, t0))
        .collect()
}

/// The view of one event; its line is `hostd_analysis::summary::event_line` with the
/// target's short name.
fn event_view(
    number: usize,
    e: &hostd_records::events::Event,
    views: &[SeriesView],
    targets: &Targets,
    t0: i64,
) -> EventView {
    let since_t0 = |ns: i64| (ns - t0) as f64 / NS;
    let gb = |b: u64| b as f64 / 1e9;
    let color = views
        .iter()
        .find(|s| s.target == e.target && s.phase == e.phase)
        .map_or("#000", |s| s.color);
    let short = hostd_records::events::Event {
        target: targets.short(&e.target).to_string(),
        ..e.clone()
    };
    EventView {
        number,
        onset_gb: gb(e.onset_bytes),
        onset_s: since_t0(e.onset_ns),
        gb_interval: Some((gb(e.onset_bytes_low), gb(e.onset_bytes_high))),
        s_interval: Some((since_t0(e.onset_ns_low), since_t0(e.onset_ns_high))),
        color,
        line: hostd_analysis::summary::event_line(&short),
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

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("–".into(), |x| format!("{x:.digits$}"))
}

/// The whole report as one HTML document (no probed target known).
pub fn render(run: &RunData, a: &Analysis, title: &str) -> String {
    render_with(run, a, title, None)
}

/// The whole report as one HTML document; `probed` is the target the probe
/// was on (the others show "no probe"). The latency section draws `run.latency`.
pub fn render_with(run: &RunData, a: &Analysis, title: &str, probed: Option<&str>) -> String {
    let targets = Targets::of(run);
    let views = series_views(run, &targets);
    let t0 = run
        .files
        .iter()
        .map(|f| f.start_ns as i64)
        .min()
        .unwrap_or(0);
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
                r#"<li data-event="{n}"><span class="badge" style="color:{c};border-color:{c}">{n}</span>{line}</li>"#,
                n = e.number,
                c = e.color,
                line = esc(&e.line),
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
    h.push_str(&headlines(a, &targets));
    h.push_str(&latency::section(&run.latency, t0, WIDTH));
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
    let mut files: Vec<&hostd_records::FileRecord> = run.files.iter().collect();
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

/// Mean, min and max of `values` in `n` equal time buckets over [a, b)
/// (`hostd_analysis::stats::MinMeanMax`, as the probe's 10 ms rows).
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

fn chart_time(
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
    let all = temps.values().flatten().map(|r| r.1);
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

/// Headline figures per target and phase, each with its interval or the reason it is
/// missing, and the enclosure's thermal fit.
fn headlines(a: &Analysis, targets: &Targets) -> String {
    use hostd_records::headline::Figure;
    let h = &a.headlines;
    if h.series.is_empty() {
        return String::new();
    }
    // The value, and its interval below it in the same unit (keeps the table narrow).
    let rate = |f: &Figure| match f.interval() {
        Some((v, lo, hi)) => {
            let u = RateUnit::of(v);
            format!(
                "{} {}<br><span class=\"note\">[{}–{}]</span>",
                u.num(v),
                u.name,
                u.num(lo),
                u.num(hi)
            )
        }
        None => "–".into(),
    };
    let num = |f: &Figure, unit: f64, d: usize| match f.interval() {
        Some((v, lo, hi)) => format!(
            "{:.d$}<br><span class=\"note\">[{:.d$}–{:.d$}]</span>",
            v / unit,
            lo / unit,
            hi / unit
        ),
        None => "–".into(),
    };
    let mut out = String::from(
        r#"<section id="headlines"><h2>Headline figures</h2><div class="scroll"><table id="headline-table"><tr><th class="l">target</th><th class="l">phase</th><th>average</th><th>sustained (last third)</th><th>SLC cache, GB</th><th>after the cache</th><th>to throttle, s</th><th>to throttle, GB</th><th>throttled</th></tr>"#,
    );
    let mut reasons: Vec<String> = Vec::new();
    for s in &h.series {
        let _ = write!(
            out,
            r#"<tr><td class="l">{}</td><td class="l">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
            esc(targets.short(&s.target)),
            esc(&s.phase),
            rate(&s.average_bps),
            rate(&s.sustained_bps),
            num(&s.slc_cache_bytes, 1e9, 1),
            rate(&s.post_cache_bps),
            num(&s.throttle_s, 1.0, 1),
            num(&s.throttle_bytes, 1e9, 1),
            rate(&s.throttled_bps),
        );
        for (what, f) in [
            ("SLC cache", &s.slc_cache_bytes),
            ("throttle", &s.throttle_s),
            ("sustained", &s.sustained_bps),
        ] {
            if let Figure::Absent { absent } = f {
                let r = format!("{} {} {what}: {absent}", targets.short(&s.target), s.phase);
                if !reasons.contains(&r) {
                    reasons.push(r);
                }
            }
        }
    }
    out.push_str("</table></div>");
    if !reasons.is_empty() {
        let _ = write!(
            out,
            r#"<p class="note">– : {}.</p>"#,
            esc(&reasons.join("; "))
        );
    }
    match &h.thermal_fit {
        None => {}
        Some(Err(why)) => {
            let _ = write!(
                out,
                r#"<p id="thermal-fit">Enclosure thermal fit: none ({}).</p>"#,
                esc(why)
            );
        }
        Some(Ok(f)) => {
            let _ = write!(out, r#"<p id="thermal-fit">{}.</p>"#, esc(&f.text()));
            if let Some(p) = f.prediction_text() {
                let _ = write!(out, r#"<p id="thermal-prediction">{}.</p>"#, esc(&p));
            }
        }
    }
    out.push_str(r#"<p class="note">Brackets: 95 % intervals (onsets: the onset's 99.9 % interval); docs/methodology.md, "Headline figures".</p></section>"#);
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
    // One rate unit for the whole table (MB/s when every phase is slow), named once in the
    // header row: a unit in every cell made the table wider than a narrow window.
    let u = RateUnit::of(
        a.phases
            .iter()
            .map(|p| p.throughput_bps)
            .fold(0.0, f64::max),
    );
    let rate = |bps: f64| u.num(bps);
    let mut h = format!(
        r#"<section id="statistics"><h2>Statistics per target and phase</h2><div class="scroll"><table id="stats-table"><tr><th class="l">target</th><th class="l">phase</th><th>files</th><th>GB</th><th>s</th><th>overall, {u}</th><th>mean</th><th>median</th><th>20 % trimmed</th><th>Theil–Sen</th><th>least squares</th><th>overhead per file, ms</th><th>J/GB</th><th>bimodal</th></tr>"#,
        u = u.name
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
            rate(p.throughput_bps),
            rate(p.mean_bps),
            rate(p.median_bps),
            rate(p.trimmed_mean_bps),
            p.theil_sen_bps.map_or("–".into(), rate),
            p.least_squares_bps.map_or("–".into(), rate),
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
                r#"<span class="bimodal">{} {}</span>: two groups of per-file rates, split at {}, {:.1} spreads apart."#,
                esc(short),
                esc(&p.phase),
                hostd_analysis::summary::rate(b.split_at),
                b.separation
            ));
        }
    }
    h.push_str("</table></div>");
    for n in bimodal_notes {
        let _ = write!(h, r#"<p class="note">{n}</p>"#);
    }
    let _ = write!(
        h,
        r#"<p class="note">Rates in {} (10⁹ or 10⁶ bytes/s); overall = bytes / file time. Theil–Sen and least squares fit file time against file size; their slope is the drive's rate without the fixed per-file cost (overhead, from Theil–Sen). When the rates are bimodal, averages mislead: read the events.</p></section>"#,
        u.name
    );
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
                "<p>All {} targets were active from {:.1} s to {:.1} s ({:.1} s). Aggregate {}{}.</p><table><tr><th class=\"l\">target</th><th>GB in window</th><th>rate</th></tr>",
                o.targets.len(),
                (w.start_ns - t0) as f64 / NS,
                (w.end_ns - t0) as f64 / NS,
                w.duration_s,
                rate(agg),
                o.peak_aggregate_bps.map_or(String::new(), |p| format!(" (peak 1 s aggregate of the run {})", rate(p)))
            );
            for t in &o.per_target {
                let _ = write!(
                    h,
                    r#"<tr><td class="l">{}</td><td>{:.2}</td><td>{}</td></tr>"#,
                    esc(targets.short(&t.target)),
                    t.bytes / 1e9,
                    rate(t.rate_bps)
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

    /// `hostd run` hands the report its latency histograms in memory: a run directory
    /// without latency logs still gets the section; `hostd analyze` reads the logs into
    /// the same records ([`RunData::read`]) and draws the same report.
    #[test]
    fn the_latency_section_is_drawn_from_the_records_in_memory_as_from_the_logs() {
        let fixture =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../records/tests/fixtures/run-format1");
        let from_files = RunData::read(&fixture).unwrap();
        assert_eq!(from_files.latency.files.len(), 6);
        let analysis = hostd_analysis::analyze(&from_files, &Options::default());
        let memory = tempfile::tempdir().unwrap();
        let run_dir = memory.path().join("run-format1");
        std::fs::create_dir(&run_dir).unwrap();
        write_report(&run_dir, &from_files, &analysis).unwrap();
        assert!(!run_dir.join(hostd_records::latency::FILES_LOG).exists());
        let html = std::fs::read_to_string(run_dir.join("report.html")).unwrap();
        assert!(
            html.contains(r#"id="chart-latency-time""#),
            "no latency over time"
        );
        // The write phase: its 3 files' 7 I/Os merged.
        assert!(
            html.contains(r#"<td class="l">target 0 write</td><td>7</td>"#),
            "no write percentiles"
        );
        // Without the histograms, no section.
        let mut without = from_files.clone();
        without.latency = Default::default();
        assert!(!render(&without, &analysis, "r").contains(r#"id="latency""#));
    }

    /// An event is the analysis' line for it, with the target's short name, and its
    /// markers stand at its onset with its interval on both axes.
    #[test]
    fn events_read_as_the_analysis_says_them_and_mark_their_onset_interval() {
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
        let event: hostd_records::events::Event = serde_json::from_value(serde_json::json!({
            "target": "/var/tmp/demo.X/target", "phase": "write", "kind": "drop",
            "onset_bytes": 23_900_000_000u64, "onset_ns": t0 + 312_000_000_000i64,
            "onset_bytes_low": 23_500_000_000u64, "onset_bytes_high": 24_300_000_000u64,
            "onset_ns_low": t0 + 308_200_000_000i64, "onset_ns_high": t0 + 316_100_000_000i64,
            "p_value": 0.004, "permutations": 999, "gradual": false,
            "settle_bytes": 23_900_000_000u64, "settle_ns": t0 + 312_000_000_000i64,
            "rate_before_bps": 2.31e9, "rate_after_bps": 0.66e9, "relative_change": -0.71,
            "cause": "slc_cache", "confidence": 0.9,
            "evidence": {"onset_gb": 23.9, "onset_s": 312.0,
                "onset_interval_gb": [23.5, 24.3], "onset_interval_s": [308.2, 316.1],
                "reasons": [], "text": "", "duration_s": 10.0, "onset_file_index": 40,
                "scores": {"thermal": 0.1, "slc_cache": 0.9, "contention": 0.0}}
        }))
        .unwrap();
        let e = event_view(3, &event, &views, &targets, t0);
        assert_eq!(
            e.line,
            hostd_analysis::summary::event_line(&hostd_records::events::Event {
                target: "target".into(),
                ..event.clone()
            })
        );
        assert!(
            e.line.starts_with("target write dropped at 23.9 GB"),
            "{}",
            e.line
        );
        let by_gb = &markers_by(std::slice::from_ref(&e), false)[0];
        assert_eq!(
            (by_gb.x, by_gb.band, by_gb.number),
            (23.9, Some((23.5, 24.3)), 3)
        );
        let by_time = &markers_by(std::slice::from_ref(&e), true)[0];
        assert_eq!(by_time.band, Some((308.2, 316.1)));
    }

    #[test]
    fn headline_figures_thermal_fit_and_drive_temperature_are_in_the_report() {
        let sc = hostd_scenario::load("x5-thermal").unwrap();
        let trace = hostd_scenario::simulate(&sc);
        let d = tempfile::tempdir().unwrap();
        hostd_scenario::write::write_run(
            d.path(),
            &sc,
            &trace,
            Some(hostd_scenario::write::ProbeOptions::default()),
        )
        .unwrap();
        let start = hostd_scenario::write::BASE_UNIX_NS;
        let mut csv = String::from("time_ns,target,temperature_c\n");
        for k in 0..120 {
            csv.push_str(&format!(
                "{},x5,{}\n",
                start + k * 1_000_000_000,
                45 + (k / 4).min(25)
            ));
        }
        std::fs::write(d.path().join("drive_temp.csv"), csv).unwrap();
        let (run, a) =
            hostd_analysis::analyze_run_dir(d.path(), &hostd_analysis::Options::default()).unwrap();
        let html = render(&run, &a, "x5");
        for want in [
            r#"id="headline-table""#,
            r#"id="thermal-fit""#,
            "thermal resistance",
            "first throttle predicted after",
            r#"id="chart-drive-temperature""#,
            "x5 drive (SMART)",
        ] {
            assert!(html.contains(want), "{want} missing");
        }
        assert!(!html.contains(r#"id="no-drive-temp""#));
        // Without the drive's readings the report says so instead of drawing nothing.
        std::fs::remove_file(d.path().join("drive_temp.csv")).unwrap();
        let (run, a) =
            hostd_analysis::analyze_run_dir(d.path(), &hostd_analysis::Options::default()).unwrap();
        assert!(render(&run, &a, "x5").contains(r#"id="no-drive-temp""#));
    }
}
