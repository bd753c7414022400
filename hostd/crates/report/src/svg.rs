//! A small hand-written SVG chart: linear axes with round ticks, and the marks the report
//! needs (points, polylines, horizontal segments, bands, bars, vertical event markers).

use crate::chart_files::{self, DataRow};
use std::fmt::Write;

/// Series colours (colour-blind safe, Okabe–Ito).
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000",
];

/// Escapes text for HTML/SVG.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// "Nice" tick positions inside [lo, hi], about `n` intervals apart, at a
/// step of 1, 2 or 5 × 10ᵏ.
pub fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    if hi <= lo || !lo.is_finite() || !hi.is_finite() {
        return vec![lo];
    }
    let n = n.max(1);
    let raw = (hi - lo) / n as f64;
    let mag = 10f64.powf(raw.log10().floor());
    // The 1-2-5 step whose tick count is nearest n + 1 (n intervals; the
    // larger step on a tie).
    let count = |step: f64| ((hi / step + 1e-9).floor() - (lo / step).ceil() + 1.0).max(0.0);
    let want = n as f64 + 1.0;
    let step = [0.5, 1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .min_by(|a, b| {
            let (da, db) = ((count(*a) - want).abs(), (count(*b) - want).abs());
            da.total_cmp(&db).then(b.total_cmp(a))
        })
        .unwrap_or(mag);
    let first = (lo / step).ceil();
    let last = (hi / step + 1e-9).floor();
    (first as i64..=last as i64)
        .map(|k| {
            let t = k as f64 * step;
            if t.abs() < step * 1e-9 {
                0.0
            } else {
                t
            }
        })
        .collect()
}

/// Decimals needed to print every multiple of `step` exactly (0.5 → 1,
/// 0.25 → 2, 20 → 0).
pub fn decimals_for(step: f64) -> usize {
    if !step.is_finite() || step <= 0.0 {
        return 0;
    }
    (0..6)
        .find(|&d| {
            let scaled = step * 10f64.powi(d as i32);
            (scaled - scaled.round()).abs() < 1e-6 * scaled.max(1.0)
        })
        .unwrap_or(6)
}

/// Tick labels: all with the decimals their step needs, so neighbours differ.
pub fn tick_labels(ticks: &[f64]) -> Vec<String> {
    let step = ticks.windows(2).map(|w| w[1] - w[0]).next().unwrap_or(1.0);
    let d = decimals_for(step);
    ticks
        .iter()
        .map(|t| {
            let text = format!("{t:.d$}");
            // "-0.0" reads oddly.
            if text
                .trim_start_matches('-')
                .chars()
                .all(|c| c == '0' || c == '.')
            {
                text.trim_start_matches('-').to_string()
            } else {
                text
            }
        })
        .collect()
}

/// An event marked on a chart: a dashed line at the onset, its uncertainty
/// interval as a band, and a numbered badge that refers to the event list.
#[derive(Debug, Clone)]
pub struct Marker {
    /// Onset, data x.
    pub x: f64,
    /// Uncertainty interval of the onset, data x, when known.
    pub band: Option<(f64, f64)>,
    /// Number in the event list (1-based).
    pub number: usize,
    /// Tooltip.
    pub title: String,
    /// Colour of the target's series.
    pub color: String,
}

/// Badge radius, px.
const BADGE_R: f64 = 7.5;
/// Vertical distance between badge rows, px.
const BADGE_ROW: f64 = 17.0;
/// Badge rows that fit in the strip above the plot.
const BADGE_ROWS_ABOVE: usize = 2;

/// Markers closer than this (px) share one badge.
const BADGE_JOIN: f64 = 2.0 * BADGE_R;

/// Event numbers as a short list: [1, 2, 3, 5] → "1–3,5".
pub fn number_ranges(numbers: &[usize]) -> String {
    let mut sorted = numbers.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut k = 0;
    while k < sorted.len() {
        let mut end = k;
        while end + 1 < sorted.len() && sorted[end + 1] == sorted[end] + 1 {
            end += 1;
        }
        parts.push(match end - k {
            0 => sorted[k].to_string(),
            1 => format!("{},{}", sorted[k], sorted[end]),
            _ => format!("{}–{}", sorted[k], sorted[end]),
        });
        k = end + 1;
    }
    parts.join(",")
}

/// One badge: the markers it stands for, its centre and width (px).
#[derive(Debug, Clone, PartialEq)]
pub struct Badge {
    /// Indices of the markers, in order of position.
    pub members: Vec<usize>,
    /// Centre, px.
    pub x: f64,
    /// Width, px.
    pub width: f64,
    /// Row (0 = top).
    pub row: usize,
    /// Text: the event numbers.
    pub text: String,
}

/// Badges for markers at pixel positions `xs` with event `numbers`: markers
/// closer than a badge share one (its text lists their numbers, "1–12"),
/// and badges that would touch go to separate rows (greedy, left to right).
pub fn badges(xs: &[f64], numbers: &[usize]) -> Vec<Badge> {
    let mut order: Vec<usize> = (0..xs.len()).collect();
    order.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for i in order {
        match groups.last_mut() {
            Some(g) if xs[i] - xs[g[0]] < BADGE_JOIN => g.push(i),
            _ => groups.push(vec![i]),
        }
    }
    let mut row_end: Vec<f64> = Vec::new();
    groups
        .into_iter()
        .map(|members| {
            let nums: Vec<usize> = members.iter().map(|&i| numbers[i]).collect();
            let text = number_ranges(&nums);
            let width = (6.2 * text.chars().count() as f64 + 8.0).max(2.0 * BADGE_R);
            let (lo, hi) = (xs[members[0]], xs[*members.last().expect("non-empty")]);
            let x = (lo + hi) / 2.0;
            let left = x - width / 2.0;
            let row = row_end
                .iter()
                .position(|&end| left >= end + 2.0)
                .unwrap_or_else(|| {
                    row_end.push(f64::NEG_INFINITY);
                    row_end.len() - 1
                });
            row_end[row] = x + width / 2.0;
            Badge {
                members,
                x,
                width,
                row,
                text,
            }
        })
        .collect()
}

/// One bar of [`Chart::interval_bars`].
#[derive(Debug, Clone)]
pub struct IntervalBar {
    /// Left edge, data x.
    pub x0: f64,
    /// Right edge, data x.
    pub x1: f64,
    /// Height, data y.
    pub value: f64,
    /// Lower end of the 95 % interval, data y, when known.
    pub low: Option<f64>,
    /// Upper end.
    pub high: Option<f64>,
    /// Colour.
    pub color: String,
    /// What the bar is (its category), for the data file.
    pub name: String,
    /// Decimals of its value and interval in the chart's data file (those it is written
    /// with; None: every digit).
    pub decimals: Option<usize>,
    /// Text written above the bar.
    pub text: String,
    /// Tooltip.
    pub tip: String,
}

/// A slot of a bar chart whose category has no value: "none" and why, written where its
/// bar would stand.
#[derive(Debug, Clone)]
pub struct EmptySlot {
    /// The slot's middle, data x.
    pub x: f64,
    /// Its width, data x.
    pub width: f64,
    /// What the slot is (its category), for the data file.
    pub name: String,
    /// Why it has no value.
    pub reason: String,
}

/// `text` broken at spaces into lines of at most `width` characters, at most `max` lines
/// (the last ending in "…" when cut).
pub(crate) fn wrap_words(text: &str, width: usize, max: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(l) if l.chars().count() + 1 + word.chars().count() <= width => {
                l.push(' ');
                l.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    if lines.len() > max {
        lines.truncate(max);
        if let Some(l) = lines.last_mut() {
            l.push('…');
        }
    }
    lines
}

/// One chart being drawn.
pub struct Chart {
    id: String,
    w: f64,
    h: f64,
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
    x: (f64, f64),
    y: (f64, f64),
    body: String,
    legend: Vec<(String, String)>,
    markers: Vec<Marker>,
    /// The data drawn, kept only while charts are collected as files ([`chart_files`]).
    data: Option<Vec<DataRow>>,
    /// Category names of the x axis (bar charts): drawn instead of numeric ticks.
    categories: Option<Vec<String>>,
}

impl Chart {
    /// A chart of `w`×`h` px showing x in `x` and y in `y`.
    pub fn new(id: &str, w: f64, h: f64, x: (f64, f64), y: (f64, f64)) -> Chart {
        let fix = |r: (f64, f64)| if r.1 > r.0 { r } else { (r.0 - 0.5, r.0 + 0.5) };
        Chart {
            id: id.into(),
            w,
            h,
            left: 62.0,
            right: 18.0,
            top: 12.0 + BADGE_ROW * BADGE_ROWS_ABOVE as f64,
            bottom: 40.0,
            x: fix(x),
            y: fix(y),
            body: String::new(),
            legend: Vec::new(),
            markers: Vec::new(),
            data: chart_files::collecting_now().then(Vec::new),
            categories: None,
        }
    }

    /// Records one row of the chart's data (kept only while charts are collected).
    fn record(&mut self, row: impl FnOnce() -> DataRow) {
        if let Some(d) = &mut self.data {
            d.push(row());
        }
    }

    /// Names the x axis' categories: category k sits at x = k and is labelled instead of
    /// numeric ticks (bar charts).
    pub fn with_categories(mut self, names: Vec<String>) -> Chart {
        self.categories = Some(names);
        self
    }

    /// Drops the strip above the plot that holds event badges (for a chart
    /// that will mark no events). Call before drawing anything.
    pub fn without_marker_strip(mut self) -> Chart {
        self.top = 12.0;
        self
    }

    /// Pixel x of data x.
    pub fn px(&self, x: f64) -> f64 {
        self.left + (x - self.x.0) / (self.x.1 - self.x.0) * (self.w - self.left - self.right)
    }

    /// Pixel y of data y.
    pub fn py(&self, y: f64) -> f64 {
        self.h
            - self.bottom
            - (y - self.y.0) / (self.y.1 - self.y.0) * (self.h - self.top - self.bottom)
    }

    /// Adds a legend entry.
    pub fn legend(&mut self, label: &str, color: &str) {
        self.legend.push((label.into(), color.into()));
    }

    /// Points with a tooltip each.
    pub fn points(&mut self, pts: &[(f64, f64, String)], color: &str, class: &str) {
        self.dots(pts, color, class, color, (2.6, 0.75));
    }

    /// Per-file points under a series' 1 s line: small and faint, named `name` in the data
    /// file.
    pub fn file_points(&mut self, pts: &[(f64, f64, String)], color: &str, name: &str) {
        self.dots(pts, color, "files", name, (1.8, 0.35));
    }

    /// Points of radius and opacity `look`, recorded as series `series`.
    fn dots(
        &mut self,
        pts: &[(f64, f64, String)],
        color: &str,
        class: &str,
        series: &str,
        look: (f64, f64),
    ) {
        let (r, opacity) = look;
        let _ = write!(
            self.body,
            r#"<g class="{class}" fill="{color}" fill-opacity="{opacity}">"#
        );
        for (x, y, tip) in pts {
            self.record(|| DataRow::point(series, class, *x, *y, tip));
            let _ = write!(
                self.body,
                r#"<circle cx="{:.1}" cy="{:.1}" r="{r}"><title>{}</title></circle>"#,
                self.px(*x),
                self.py(*y),
                esc(tip)
            );
        }
        self.body.push_str("</g>");
    }

    /// A polyline through the points (NaN breaks it).
    pub fn line(&mut self, pts: &[(f64, f64)], color: &str, class: &str) {
        let mut d = String::new();
        let mut pen_up = true;
        for &(x, y) in pts {
            if x.is_finite() && y.is_finite() {
                self.record(|| DataRow::point(color, class, x, y, ""));
            }
            if !x.is_finite() || !y.is_finite() {
                pen_up = true;
                continue;
            }
            let _ = write!(
                d,
                "{}{:.1},{:.1}",
                if pen_up { "M" } else { "L" },
                self.px(x),
                self.py(y)
            );
            pen_up = false;
        }
        let _ = write!(
            self.body,
            r#"<path class="{class}" d="{d}" fill="none" stroke="{color}" stroke-width="1.4"/>"#
        );
    }

    /// A min–max band.
    pub fn band(&mut self, xs: &[f64], lo: &[f64], hi: &[f64], color: &str) {
        let mut d = String::new();
        let ok: Vec<usize> = (0..xs.len())
            .filter(|&i| lo[i].is_finite() && hi[i].is_finite())
            .collect();
        for (k, &i) in ok.iter().enumerate() {
            self.record(|| DataRow::band(color, xs[i], lo[i], hi[i]));
            let _ = write!(
                d,
                "{}{:.1},{:.1}",
                if k == 0 { "M" } else { "L" },
                self.px(xs[i]),
                self.py(hi[i])
            );
        }
        for &i in ok.iter().rev() {
            let _ = write!(d, "L{:.1},{:.1}", self.px(xs[i]), self.py(lo[i]));
        }
        if !ok.is_empty() {
            let _ = write!(
                self.body,
                r#"<path d="{d}Z" fill="{color}" fill-opacity="0.18" stroke="none"/>"#
            );
        }
    }

    /// Shaded spans (x0, x1) over the plot's height, with tooltips (a wait on a time axis).
    pub fn spans(&mut self, spans: &[(f64, f64, String)], class: &str) {
        if spans.is_empty() {
            return;
        }
        let (top, bottom) = (self.py(self.y.1), self.py(self.y.0));
        let _ = write!(
            self.body,
            r##"<g class="{class}" fill="#56B4E9" fill-opacity="0.15" stroke="none">"##
        );
        for (x0, x1, tip) in spans {
            self.record(|| DataRow::span(class, *x0, *x1, tip));
            let (a, b) = (self.px(*x0), self.px(*x1).max(self.px(*x0) + 1.0));
            let _ = write!(
                self.body,
                r#"<rect x="{a:.1}" y="{top:.1}" width="{:.1}" height="{:.1}"><title>{}</title></rect>"#,
                b - a,
                bottom - top,
                esc(tip)
            );
        }
        self.body.push_str("</g>");
    }

    /// Horizontal segments (x0, x1, y) with tooltips: one per file on a time axis.
    pub fn segments(&mut self, segs: &[(f64, f64, f64, String)], color: &str, class: &str) {
        self.strokes(segs, color, class, color, 1.0);
    }

    /// Per-file segments under a series' 1 s line: faint, named `name` in the data file.
    pub fn file_segments(&mut self, segs: &[(f64, f64, f64, String)], color: &str, name: &str) {
        self.strokes(segs, color, "files", name, 0.35);
    }

    /// Segments of stroke opacity `opacity`, recorded as series `series`.
    fn strokes(
        &mut self,
        segs: &[(f64, f64, f64, String)],
        color: &str,
        class: &str,
        series: &str,
        opacity: f64,
    ) {
        let _ = write!(
            self.body,
            r#"<g class="{class}" stroke="{color}" stroke-width="2.2" stroke-opacity="{opacity}">"#
        );
        for (x0, x1, y, tip) in segs {
            self.record(|| DataRow::segment(series, class, *x0, *x1, *y, tip));
            let (a, b) = (self.px(*x0), self.px(*x1).max(self.px(*x0) + 1.0));
            let _ = write!(
                self.body,
                r#"<line x1="{a:.1}" x2="{b:.1}" y1="{y:.1}" y2="{y:.1}"><title>{}</title></line>"#,
                esc(tip),
                y = self.py(*y)
            );
        }
        self.body.push_str("</g>");
    }

    /// Bars from y = 0 over [x0, x1).
    pub fn bars(&mut self, bars: &[(f64, f64, f64)], color: &str, class: &str) {
        let _ = write!(
            self.body,
            r#"<g class="{class}" fill="{color}" fill-opacity="0.55">"#
        );
        for &(x0, x1, y) in bars {
            if y <= 0.0 {
                continue;
            }
            self.record(|| DataRow::segment(color, class, x0, x1, y, ""));
            let (a, b) = (self.px(x0), self.px(x1));
            let (top, base) = (self.py(y), self.py(0.0));
            let _ = write!(
                self.body,
                r#"<rect x="{a:.1}" y="{top:.1}" width="{:.1}" height="{:.1}"><title>{y:.0} files</title></rect>"#,
                (b - a - 0.5).max(0.5),
                base - top
            );
        }
        self.body.push_str("</g>");
    }

    /// Bars from y = 0 with their 95 % interval as a whisker and their value written above
    /// it (bar charts of figures, one bar per category).
    pub fn interval_bars(&mut self, bars: &[IntervalBar], class: &str) {
        let _ = write!(self.body, r#"<g class="{class}">"#);
        for b in bars {
            self.record(|| DataRow::interval(b));
            let (a, z) = (self.px(b.x0), self.px(b.x1));
            let (top, base) = (self.py(b.value.max(self.y.0)), self.py(self.y.0.max(0.0)));
            let _ = write!(
                self.body,
                r#"<rect x="{a:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{}" fill-opacity="0.6"><title>{}</title></rect>"#,
                top.min(base),
                (z - a).max(0.5),
                (base - top).abs(),
                b.color,
                esc(&b.tip)
            );
            let mid = (a + z) / 2.0;
            let mut label_y = top;
            if let (Some(lo), Some(hi)) = (b.low, b.high) {
                let (yl, yh) = (self.py(lo), self.py(hi));
                label_y = label_y.min(yh);
                let _ = write!(
                    self.body,
                    r##"<path class="interval" d="M{mid:.1},{yl:.1}V{yh:.1}M{:.1},{yl:.1}H{:.1}M{:.1},{yh:.1}H{:.1}" stroke="#222" stroke-width="1.2" fill="none"/>"##,
                    mid - 5.0,
                    mid + 5.0,
                    mid - 5.0,
                    mid + 5.0
                );
            }
            let _ = write!(
                self.body,
                r#"<text class="label bar-value" x="{mid:.1}" y="{:.1}" text-anchor="middle" font-size="10">{}</text>"#,
                label_y - 4.0,
                esc(&b.text)
            );
        }
        self.body.push_str("</g>");
    }

    /// Writes "none" and the reason, wrapped to the slot's width (at most three lines, the
    /// whole reason in its tooltip), in each empty slot of a bar chart.
    pub fn empty_slots(&mut self, slots: &[EmptySlot]) {
        self.body.push_str(r#"<g class="none">"#);
        for slot in slots {
            self.record(|| DataRow::none(slot));
            let mid = self.px(slot.x);
            let px =
                (self.px(slot.x + slot.width / 2.0) - self.px(slot.x - slot.width / 2.0)).abs();
            let lines = wrap_words(
                &format!("({})", slot.reason),
                ((px / 5.4) as usize).max(8),
                3,
            );
            let base = self.py(self.y.0.max(0.0));
            let top = base - 6.0 - 12.0 * lines.len() as f64;
            let _ = write!(
                self.body,
                r##"<text class="label none" x="{mid:.1}" y="{:.1}" text-anchor="middle" font-size="11" fill="#555"><title>{}</title>none</text>"##,
                top - 2.0,
                esc(&slot.reason)
            );
            for (k, line) in lines.iter().enumerate() {
                let _ = write!(
                    self.body,
                    r##"<text class="label none-why" x="{mid:.1}" y="{:.1}" text-anchor="middle" font-size="10" fill="#555">{}</text>"##,
                    top + 12.0 * (k + 1) as f64,
                    esc(line)
                );
            }
        }
        self.body.push_str("</g>");
    }

    /// Marks an event (drawn by [`Chart::finish`], which places the badges).
    pub fn marker(&mut self, m: Marker) {
        if m.x < self.x.0 || m.x > self.x.1 {
            return;
        }
        self.markers.push(m);
    }

    fn draw_markers(&self, s: &mut String) {
        let xs: Vec<f64> = self.markers.iter().map(|m| self.px(m.x)).collect();
        let numbers: Vec<usize> = self.markers.iter().map(|m| m.number).collect();
        let (y0, y1) = (self.top, self.h - self.bottom);
        // Bands, then lines, then badges on top of everything.
        for m in &self.markers {
            if let Some((lo, hi)) = m.band {
                let (a, b) = (self.px(lo.max(self.x.0)), self.px(hi.min(self.x.1)));
                if b > a {
                    let _ = write!(
                        s,
                        r#"<rect class="onset-interval" x="{a:.1}" y="{y0:.1}" width="{:.1}" height="{:.1}" fill="{}" fill-opacity="0.12"/>"#,
                        b - a,
                        y1 - y0,
                        m.color
                    );
                }
            }
        }
        for (m, px) in self.markers.iter().zip(&xs) {
            let _ = write!(
                s,
                r#"<line class="event-line" data-event="{}" x1="{px:.1}" x2="{px:.1}" y1="{y0:.1}" y2="{y1:.1}" stroke="{}" stroke-dasharray="5 3" stroke-width="1.3"/>"#,
                m.number, m.color
            );
        }
        for b in badges(&xs, &numbers) {
            let first = &self.markers[b.members[0]];
            let color = if b
                .members
                .iter()
                .all(|&i| self.markers[i].color == first.color)
            {
                first.color.as_str()
            } else {
                "#444"
            };
            let titles: Vec<&str> = b
                .members
                .iter()
                .map(|&i| self.markers[i].title.as_str())
                .collect();
            // Rows beyond the strip above the plot continue inside it.
            let cy = BADGE_R + 2.0 + BADGE_ROW * b.row as f64;
            let _ = write!(
                s,
                r##"<g class="event-marker" data-event="{}"><title>{}</title><rect class="badge-box" x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" rx="{BADGE_R}" fill="#fff" stroke="{color}" stroke-width="1.5"/><text class="label badge-number" x="{:.1}" y="{:.1}" text-anchor="middle" font-size="10" font-weight="bold" fill="{color}">{}</text></g>"##,
                esc(&b.text),
                esc(&titles.join("\n")),
                b.x - b.width / 2.0,
                cy - BADGE_R,
                b.width,
                2.0 * BADGE_R,
                b.x,
                cy + 3.5,
                esc(&b.text)
            );
        }
    }

    /// Finishes the chart: the legend (HTML, so it wraps on narrow pages and
    /// never covers data), then the SVG with grid, ticks, axis labels and
    /// event markers.
    pub fn finish(self, x_label: &str, y_label: &str) -> String {
        let mut legend = String::new();
        if !self.legend.is_empty() {
            legend.push_str(r#"<div class="legend">"#);
            for (label, color) in &self.legend {
                let _ = write!(
                    legend,
                    r#"<span class="key"><span class="swatch" style="background:{color}"></span>{}</span>"#,
                    esc(label)
                );
            }
            legend.push_str("</div>");
        }
        let mut s = String::new();
        let _ = write!(
            s,
            r#"<svg id="{}" class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" font-family="sans-serif" font-size="11">"#,
            esc(&self.id),
            w = self.w,
            h = self.h
        );
        let (x0, x1) = (self.left, self.w - self.right);
        let (y0, y1) = (self.top, self.h - self.bottom);
        // About one y tick per 35 px of plot, 3 to 5 intervals.
        let yt = ticks(
            self.y.0,
            self.y.1,
            (((y1 - y0) / 35.0) as usize).clamp(3, 5),
        );
        for (t, label) in yt.iter().zip(tick_labels(&yt)) {
            let y = self.py(*t);
            let _ = write!(
                s,
                r##"<line x1="{x0}" x2="{x1}" y1="{y:.1}" y2="{y:.1}" stroke="#ddd"/><text class="label tick" x="{:.1}" y="{:.1}" text-anchor="end">{label}</text>"##,
                x0 - 4.0,
                y + 4.0,
            );
        }
        // About one x tick per 110 px, so labels never touch; a category axis names its
        // categories instead.
        let (xt, xl) = match &self.categories {
            Some(names) => (
                (0..names.len()).map(|k| k as f64).collect::<Vec<f64>>(),
                names.clone(),
            ),
            None => {
                let xt = ticks(self.x.0, self.x.1, (((x1 - x0) / 110.0) as usize).max(2));
                let xl = tick_labels(&xt);
                (xt, xl)
            }
        };
        for (t, label) in xt.iter().zip(xl) {
            let label = esc(&label);
            let x = self.px(*t);
            let _ = write!(
                s,
                r##"<line x1="{x:.1}" x2="{x:.1}" y1="{y0}" y2="{y1}" stroke="#eee"/><text class="label tick" x="{x:.1}" y="{:.1}" text-anchor="middle">{label}</text>"##,
                y1 + 17.0,
            );
        }
        let _ = write!(
            s,
            r##"<rect x="{x0}" y="{y0}" width="{}" height="{}" fill="none" stroke="#888"/>"##,
            x1 - x0,
            y1 - y0
        );
        s.push_str(&self.body);
        self.draw_markers(&mut s);
        let _ = write!(
            s,
            r#"<text class="label axis" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            (x0 + x1) / 2.0,
            self.h - 6.0,
            esc(x_label)
        );
        let _ = write!(
            s,
            r#"<text class="label axis" transform="translate(14 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
            (y0 + y1) / 2.0,
            esc(y_label)
        );
        s.push_str("</svg>");
        if let Some(rows) = self.data {
            let mut rows = rows;
            rows.extend(self.markers.iter().map(DataRow::event));
            chart_files::push(chart_files::ChartFile::new(
                &self.id,
                &s,
                (self.w, self.h),
                &self.legend,
                (x_label, y_label),
                rows,
            ));
        }
        legend + &s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(ticks(0.0, 10.0, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        let t = ticks(0.37, 2.41, 5);
        assert!(
            t.first().unwrap() >= &0.37 && t.last().unwrap() <= &2.41 && t.len() >= 4,
            "{t:?}"
        );
    }

    #[test]
    fn tick_labels_carry_the_decimals_their_step_needs() {
        let t = ticks(24.6, 26.4, 5);
        assert_eq!(tick_labels(&t), ["25.0", "25.5", "26.0"]);
        assert_eq!(tick_labels(&[0.0, 0.25, 0.5]), ["0.00", "0.25", "0.50"]);
        let t = ticks(2.5, 7.7, 5);
        assert_eq!(tick_labels(&t), ["3", "4", "5", "6", "7"]);
        let t = ticks(0.0, 400.0, 4);
        assert_eq!(tick_labels(&t), ["0", "100", "200", "300", "400"]);
        assert_eq!(
            tick_labels(&ticks(-0.4, 0.4, 4)),
            ["-0.4", "-0.2", "0.0", "0.2", "0.4"]
        );
    }

    #[test]
    fn markers_closer_than_a_badge_share_one_and_touching_badges_take_rows() {
        let b = badges(
            &[100.0, 105.0, 300.0, 110.0, 122.0, 308.0],
            &[1, 2, 5, 3, 4, 6],
        );
        let view: Vec<(&str, usize)> = b.iter().map(|b| (b.text.as_str(), b.row)).collect();
        // 100, 105, 110 share a badge "1–3"; 122 is its own badge but would touch
        // it, so it goes one row down; 300 and 308 share "5,6".
        assert_eq!(view, [("1–3", 0), ("4", 1), ("5,6", 0)]);
        assert_eq!(number_ranges(&[7, 1, 2, 3, 5]), "1–3,5,7");
    }

    #[test]
    fn text_is_escaped() {
        assert_eq!(esc("<a&\"b\">"), "&lt;a&amp;&quot;b&quot;&gt;");
    }
}
