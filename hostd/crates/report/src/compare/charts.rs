//! The comparison's charts: throughput against data written per compared phase (each run's
//! 1 s throughput as a line; per-file rates for a run without byte counters), bus power and
//! temperatures against time from each run's first file, and a grid of bar charts, one per
//! headline figure and phase, each sorted by value.

use super::figures::METRICS;
use super::{CompareRun, Comparison};
use crate::svg::{esc, Chart, EmptySlot, IntervalBar, Marker};
use crate::{envelope, hbars, seconds};
use crate::{NS, WIDTH};
use hostd_analysis::throughput;
use hostd_records::binning::MinMeanMax;
use hostd_records::headline::Figure;
use std::fmt::Write;

/// Most runs drawn as point clouds on one chart: past it, as bands (clouds of more runs
/// hide one another).
const MAX_CLOUDS: usize = 6;
/// Files per bin of a run drawn as a band.
const FILES_PER_BIN: usize = 4;

/// A file on the chart: data written, GB; its rate, GB/s; its tooltip.
type Point = (f64, f64, String);

/// Points of each run's line on a time chart.
const TIME_BUCKETS: usize = 600;

/// A phase's name as part of an id.
fn slug(phase: &str) -> String {
    phase
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// The id of the throughput-against-data chart of `phase`.
pub fn by_data_id(phase: &str) -> String {
    format!("chart-compare-gb-{}", slug(phase))
}

/// The id of the bar chart of `key` in `phase`.
pub fn bars_id(phase: &str, key: &str) -> String {
    format!("chart-bars-{}-{}", slug(phase), key.replace('_', "-"))
}

/// The events of run `k`'s subject (in `phase`, if given) as markers by data or by time.
fn markers(
    r: &CompareRun,
    color: &str,
    numbers: &[usize],
    phase: Option<&str>,
    on_time: bool,
) -> Vec<Marker> {
    let subject = r.subject().unwrap_or("");
    let t0 = r.t0();
    r.analysis
        .events
        .iter()
        .zip(numbers)
        .filter(|(e, _)| e.target == subject && phase.is_none_or(|p| e.phase == p))
        .map(|(e, &number)| {
            let s = |ns: i64| (ns - t0) as f64 / NS;
            let gb = |b: u64| b as f64 / 1e9;
            Marker {
                x: if on_time {
                    s(e.onset_ns)
                } else {
                    gb(e.onset_bytes)
                },
                band: Some(if on_time {
                    (s(e.onset_ns_low), s(e.onset_ns_high))
                } else {
                    (gb(e.onset_bytes_low), gb(e.onset_bytes_high))
                }),
                number,
                title: format!("{number}. {}", hostd_analysis::event_lines::event_line(e)),
                color: color.to_string(),
            }
        })
        .collect()
}

/// Throughput against the data written, one chart per compared phase: each run's 1 s
/// throughput from its byte counter as a line; a run without counters (an older run) as its
/// per-file rates, a point cloud (or its band past [`envelope::MAX_FILE_MARKS`] files, or
/// [`MAX_CLOUDS`] runs).
pub(crate) fn by_data_section(
    runs: &[CompareRun],
    c: &Comparison,
    numbers: &[Vec<usize>],
) -> String {
    let mut h = String::from(
        r#"<section id="compare-by-data"><h2>Throughput against data written</h2><p class="note">One colour per run: the throughput of each second, from the run's byte counter; numbered markers are the events listed below, a shaded band the onset's interval.</p>"#,
    );
    for phase in &c.phases {
        let mut lines: Vec<(usize, Vec<(f64, f64)>)> = Vec::new();
        let mut clouds: Vec<(usize, Vec<Point>)> = Vec::new();
        for (k, (r, cr)) in runs.iter().zip(&c.runs).enumerate() {
            if !cr.figures.iter().any(|f| &f.phase == phase) {
                continue;
            }
            let subject = r.subject().unwrap_or("");
            let secs = throughput::of_phase(&r.run, subject, phase);
            if !secs.is_empty() {
                lines.push((k, seconds::by_data(&secs)));
                continue;
            }
            let mut files: Vec<_> = r
                .run
                .files
                .iter()
                .filter(|f| f.target == subject && &f.phase == phase)
                .collect();
            files.sort_by_key(|f| (f.start_ns, f.index));
            let mut cum = 0u64;
            let pts = files
                .iter()
                .map(|f| {
                    cum += f.bytes;
                    let (x, y) = (cum as f64 / 1e9, f.rate_bps() / 1e9);
                    (
                        x,
                        y,
                        format!("{} file {}: {y:.2} GB/s at {x:.1} GB", cr.label, f.index),
                    )
                })
                .collect();
            clouds.push((k, pts));
        }
        let total: usize = clouds.iter().map(|c| c.1.len()).sum();
        let banded = envelope::summarised(total) || clouds.len() > MAX_CLOUDS;
        let all = || {
            lines
                .iter()
                .flat_map(|l| l.1.iter().copied())
                .chain(clouds.iter().flat_map(|c| c.1.iter().map(|p| (p.0, p.1))))
        };
        let xmax = all().map(|p| p.0).fold(0.0, f64::max);
        let ymax = all().map(|p| p.1).fold(0.0, f64::max);
        let _ = write!(h, "<h3>{}</h3>", esc(phase));
        let mut chart = Chart::new(
            &by_data_id(phase),
            WIDTH,
            340.0,
            (0.0, xmax * 1.02),
            (0.0, ymax * 1.1),
        );
        let mut long = false;
        for k in 0..runs.len() {
            let cr = &c.runs[k];
            if let Some((_, line)) = lines.iter().find(|l| l.0 == k) {
                long |= seconds::draw(&mut chart, line, 0.0, xmax, &cr.color);
            } else if let Some((_, pts)) = clouds.iter().find(|c| c.0 == k) {
                if banded {
                    let xy: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.1)).collect();
                    let bins = (xy.len() / FILES_PER_BIN).clamp(1, envelope::FILE_BINS);
                    envelope::draw_bins(&mut chart, &xy, 0.0, xmax, &cr.color, bins);
                } else {
                    chart.points(pts, &cr.color, "series");
                }
            } else {
                continue;
            }
            chart.legend(&cr.label, &cr.color);
            for m in markers(&runs[k], &cr.color, &numbers[k], Some(phase), false) {
                chart.marker(m);
            }
        }
        h.push_str(&chart.finish(
            &format!("data of the phase written, GB ({phase})"),
            "throughput, GB/s",
        ));
        if long {
            h.push_str(&seconds::envelope_note());
        }
        if !clouds.is_empty() {
            let named: Vec<&str> = clouds
                .iter()
                .map(|c| c.0)
                .map(|k| c.runs[k].label.as_str())
                .collect();
            let _ = write!(
                h,
                r#"<p class="note">No byte counters (counters.csv) in {}: each file's rate instead (dots).</p>"#,
                esc(&named.join(", "))
            );
        }
        if banded && !clouds.is_empty() {
            let _ = write!(
                h,
                r#"<p class="note envelope">{total} files of {} runs on this chart: each run is drawn as the min–max band and mean of its files in bins of about {FILES_PER_BIN} files (at most {}), not file by file (files.csv has every file).</p>"#,
                clouds.len(),
                envelope::FILE_BINS
            );
        }
    }
    h.push_str("</section>");
    h
}

/// Mean of `values` in [`TIME_BUCKETS`] equal buckets over the span of the samples from `t0`
/// on, as (s since t0, mean); empty buckets break the line.
fn bucket_means(time_ns: &[i64], values: &[f64], t0: i64) -> Vec<(f64, f64)> {
    // From the run's first file on: an idle lead-in would squeeze the other runs.
    let from = time_ns.partition_point(|&t| t < t0);
    let (time_ns, values) = (&time_ns[from..], &values[from.min(values.len())..]);
    let (Some(&first), Some(&last)) = (time_ns.first(), time_ns.last()) else {
        return Vec::new();
    };
    let n = TIME_BUCKETS.min(time_ns.len() / 2).max(1);
    let span = (last - first).max(1) as f64;
    let mut b = vec![MinMeanMax::default(); n];
    for (t, v) in time_ns.iter().zip(values) {
        let k = (((t - first) as f64 / span) * n as f64) as usize;
        b[k.min(n - 1)].add(*v);
    }
    b.iter()
        .enumerate()
        .map(|(k, m)| {
            let x = (first as f64 + (k as f64 + 0.5) * span / n as f64 - t0 as f64) / NS;
            (x, m.get().1)
        })
        .collect()
}

/// Bus power, enclosure and drive temperature against time since each run's first file.
pub(crate) fn time_section(runs: &[CompareRun], c: &Comparison, numbers: &[Vec<usize>]) -> String {
    let mut h = String::from(
        r#"<section id="compare-time"><h2>Bus power and temperature against time</h2><p class="note">Time from each run's first file (an idle lead-in before it is left out); one line per run (the mean of its samples in each of up to 600 steps); dashed lines are its events.</p>"#,
    );
    type Lines = Vec<(usize, Vec<(f64, f64)>)>;
    let probe_lines = |pick: fn(&hostd_records::ProbeSeries) -> &Vec<f64>| -> Lines {
        runs.iter()
            .enumerate()
            .filter(|(_, r)| {
                r.run
                    .probe_target
                    .as_deref()
                    .is_none_or(|t| Some(t) == r.subject())
            })
            .filter_map(|(k, r)| {
                let p = r.run.probe.as_ref()?;
                Some((k, bucket_means(&p.time_ns, pick(p), r.t0())))
            })
            .collect()
    };
    let drive: Lines = runs
        .iter()
        .enumerate()
        .filter_map(|(k, r)| {
            let temps = r.run.drive_temp.as_ref()?.get(r.subject()?)?;
            (!temps.is_empty()).then(|| {
                (
                    k,
                    temps
                        .iter()
                        .map(|&(t, v)| ((t - r.t0()) as f64 / NS, v))
                        .filter(|p| p.0 >= 0.0)
                        .collect(),
                )
            })
        })
        .collect();
    for (id, lines, label, missing) in [
        (
            "chart-compare-power",
            probe_lines(|p| &p.power_w),
            "bus power, W",
            "no run has probe samples of its subject",
        ),
        (
            "chart-compare-enclosure",
            probe_lines(|p| &p.enclosure_temp_c),
            "enclosure temperature, °C",
            "no run has probe samples of its subject",
        ),
        (
            "chart-compare-drive-temp",
            drive,
            "drive temperature (SMART), °C",
            "no run has the drive's own temperature (drive_temp.csv)",
        ),
    ] {
        let pts = || lines.iter().flat_map(|l| &l.1).filter(|p| p.1.is_finite());
        if pts().next().is_none() {
            let _ = write!(
                h,
                r#"<p class="note" id="{id}-none">{label}: {missing}.</p>"#
            );
            continue;
        }
        let xmax = pts().map(|p| p.0).fold(0.0, f64::max);
        let xmin = 0.0;
        let (ymin, ymax) = pts().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.1), b.max(p.1))
        });
        let pad = ((ymax - ymin) * 0.08).max(0.5);
        let mut chart = Chart::new(id, WIDTH, 220.0, (xmin, xmax), (ymin - pad, ymax + pad));
        for (k, line) in &lines {
            let cr = &c.runs[*k];
            chart.line(line, &cr.color, "series");
            chart.legend(&cr.label, &cr.color);
            for m in markers(&runs[*k], &cr.color, &numbers[*k], None, true) {
                chart.marker(m);
            }
        }
        let without: Vec<&str> = (0..runs.len())
            .filter(|k| !lines.iter().any(|l| l.0 == *k))
            .map(|k| c.runs[k].label.as_str())
            .collect();
        h.push_str(&chart.finish("time since the run's first file started, s", label));
        if !without.is_empty() {
            let _ = write!(
                h,
                r#"<p class="note">Not drawn (no such samples of the run's subject): {}.</p>"#,
                esc(&without.join(", "))
            );
        }
    }
    h.push_str("</section>");
    h
}

/// A bar chart per headline figure and compared phase, side by side in a grid: one bar per
/// run with its 95 % interval, sorted by value ([`hbars`]), each written as every output
/// writes it (its [`Kind`], in the chart's unit or its own), a figure of the first drop with
/// the drop's cause; a run without the figure gets "none" and why in its row; the runs under
/// review (`--highlight`) stand out. A figure no run has is named with each run's reason
/// instead of drawn.
pub(crate) fn bars_section(c: &Comparison) -> String {
    let mut h = String::from(
        r#"<section id="compare-bars"><h2>Headline figures</h2><p class="note">Each chart: one bar per run, highest first; whiskers are 95 % intervals (onsets: the onset's 99.9 % interval); the first drop is the first of any cause, its cause beside its value."#,
    );
    let highlight: Vec<String> = c
        .runs
        .iter()
        .filter(|r| r.under_review)
        .map(|r| r.label.clone())
        .collect();
    if !highlight.is_empty() {
        let _ = write!(
            h,
            " In bold, strong: the drive under review ({}).",
            esc(&highlight.join(", "))
        );
    }
    h.push_str("</p>");
    for phase in &c.phases {
        let _ = write!(h, r#"<h3>{}</h3><div class="bar-grid">"#, esc(phase));
        let mut none = Vec::new();
        for m in &METRICS {
            let of_run = |r| of_run(r, phase, m.key);
            let unit = m.kind.common_unit(
                c.runs
                    .iter()
                    .filter_map(|r| of_run(r).and_then(|(_, f)| f.interval()))
                    .map(|(_, _, hi)| hi),
            );
            let mut bars = Vec::new();
            let mut empty = Vec::new();
            for (k, r) in c.runs.iter().enumerate() {
                let Some((pf, f)) = of_run(r) else {
                    continue;
                };
                match f {
                    Figure::Value { value, low, high } => {
                        let own = m.kind.unit(*value);
                        let cause = match (&pf.drop_cause, m.of_drop) {
                            (Some(d), true) => format!(" ({})", d.cause.as_str()),
                            _ => String::new(),
                        };
                        bars.push(IntervalBar {
                            x0: k as f64 - 0.35,
                            x1: k as f64 + 0.35,
                            value: own.rounded_in(*value, unit),
                            low: Some(own.rounded_in(*low, unit)),
                            high: Some(own.rounded_in(*high, unit)),
                            color: r.color.clone(),
                            name: r.label.clone(),
                            decimals: Some(own.decimals_in(unit)),
                            text: format!("{}{cause}", m.kind.cell(*value, unit)),
                            tip: format!("{}: {} {}{cause}", r.label, m.title, f.text(m.kind)),
                        });
                    }
                    Figure::Absent { absent } => empty.push(EmptySlot {
                        x: k as f64,
                        width: 0.9,
                        name: r.label.clone(),
                        reason: absent.clone(),
                    }),
                }
            }
            if bars.is_empty() {
                let why: Vec<String> = empty
                    .iter()
                    .map(|e| format!("{}: {}", e.name, e.reason))
                    .collect();
                none.push(format!("{} ({})", m.title, why.join("; ")));
                continue;
            }
            let _ = write!(
                h,
                r#"<div class="bars"><h4>{} ({})</h4>"#,
                esc(m.title),
                esc(unit.name)
            );
            h.push_str(&hbars::chart(
                &bars_id(phase, m.key),
                bars,
                &empty,
                &highlight,
                unit.name,
                &format!("{} of each run ({phase}), row from the top", m.title),
            ));
            h.push_str("</div>");
        }
        h.push_str("</div>");
        if !none.is_empty() {
            let _ = write!(
                h,
                r#"<p class="note">{phase}: no run has {}.</p>"#,
                esc(&none.join(", ")),
                phase = esc(phase)
            );
        }
    }
    h.push_str("</section>");
    h
}

/// Run `r`'s figure `key` in `phase`, with the phase's figures it is one of.
fn of_run<'a>(
    r: &'a super::ComparedRun,
    phase: &str,
    key: &str,
) -> Option<(&'a super::figures::PhaseFigures, &'a Figure)> {
    r.figures
        .iter()
        .find(|f| f.phase == phase)
        .and_then(|f| f.figures.get(key).map(|g| (f, g)))
}
