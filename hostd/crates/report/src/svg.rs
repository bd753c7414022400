//! A small hand-written SVG chart: linear axes with round ticks, and the marks the report
//! needs (points, polylines, horizontal segments, bands, bars, vertical event markers).

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

/// "Nice" tick positions covering [lo, hi], about `n` of them.
pub fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    if hi <= lo || !lo.is_finite() || !hi.is_finite() {
        return vec![lo];
    }
    let raw = (hi - lo) / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() * step;
    let mut v = Vec::new();
    let mut t = first;
    while t <= hi + step * 1e-9 {
        v.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    v
}

fn fmt_tick(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 10.0 {
        format!("{v:.0}")
    } else if (v * 10.0).fract().abs() < 1e-9 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
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
    markers: usize,
}

impl Chart {
    /// A chart of `w`×`h` px showing x in `x` and y in `y`.
    pub fn new(id: &str, w: f64, h: f64, x: (f64, f64), y: (f64, f64)) -> Chart {
        let fix = |r: (f64, f64)| if r.1 > r.0 { r } else { (r.0 - 0.5, r.0 + 0.5) };
        Chart {
            id: id.into(),
            w,
            h,
            left: 58.0,
            right: 14.0,
            top: 14.0,
            bottom: 40.0,
            x: fix(x),
            y: fix(y),
            body: String::new(),
            legend: Vec::new(),
            markers: 0,
        }
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
        let _ = write!(
            self.body,
            r#"<g class="{class}" fill="{color}" fill-opacity="0.75">"#
        );
        for (x, y, tip) in pts {
            let _ = write!(
                self.body,
                r#"<circle cx="{:.1}" cy="{:.1}" r="2.6"><title>{}</title></circle>"#,
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

    /// Horizontal segments (x0, x1, y) with tooltips: one per file on a time axis.
    pub fn segments(&mut self, segs: &[(f64, f64, f64, String)], color: &str, class: &str) {
        let _ = write!(
            self.body,
            r#"<g class="{class}" stroke="{color}" stroke-width="2.2">"#
        );
        for (x0, x1, y, tip) in segs {
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

    /// A labelled vertical marker (an event).
    pub fn marker(&mut self, x: f64, label: &str, color: &str) {
        if x < self.x.0 || x > self.x.1 {
            return;
        }
        let px = self.px(x);
        // Stagger labels so markers close together stay readable.
        let label_y = self.top + 10.0 + 11.0 * (self.markers % 4) as f64;
        self.markers += 1;
        let _ = write!(
            self.body,
            r#"<g class="event-marker"><line x1="{px:.1}" x2="{px:.1}" y1="{}" y2="{:.1}" stroke="{color}" stroke-dasharray="5 3" stroke-width="1.3"/><text x="{:.1}" y="{}" font-size="10" fill="{color}">{}</text></g>"#,
            self.top,
            self.h - self.bottom,
            px + 3.0,
            label_y,
            esc(label)
        );
    }

    /// Finishes the SVG with axes, grid, labels and legend.
    pub fn finish(self, x_label: &str, y_label: &str) -> String {
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
        for t in ticks(self.y.0, self.y.1, 5) {
            let y = self.py(t);
            let _ = write!(
                s,
                r##"<line x1="{x0}" x2="{x1}" y1="{y:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                x0 - 4.0,
                y + 4.0,
                fmt_tick(t)
            );
        }
        for t in ticks(self.x.0, self.x.1, 8) {
            let x = self.px(t);
            let _ = write!(
                s,
                r##"<line x1="{x:.1}" x2="{x:.1}" y1="{y0}" y2="{y1}" stroke="#eee"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                y1 + 14.0,
                fmt_tick(t)
            );
        }
        let _ = write!(
            s,
            r##"<rect x="{x0}" y="{y0}" width="{}" height="{}" fill="none" stroke="#888"/>"##,
            x1 - x0,
            y1 - y0
        );
        s.push_str(&self.body);
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            (x0 + x1) / 2.0,
            self.h - 6.0,
            esc(x_label)
        );
        let _ = write!(
            s,
            r#"<text transform="translate(14 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
            (y0 + y1) / 2.0,
            esc(y_label)
        );
        let mut lx = x0 + 8.0;
        for (label, color) in &self.legend {
            let _ = write!(
                s,
                r#"<rect x="{lx:.1}" y="{:.1}" width="10" height="10" fill="{color}"/><text x="{:.1}" y="{:.1}">{}</text>"#,
                y0 + 6.0,
                lx + 14.0,
                y0 + 15.0,
                esc(label)
            );
            lx += 24.0 + 6.5 * label.chars().count() as f64;
        }
        s.push_str("</svg>");
        s
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
    fn text_is_escaped() {
        assert_eq!(esc("<a&\"b\">"), "&lt;a&amp;&quot;b&quot;&gt;");
    }
}
