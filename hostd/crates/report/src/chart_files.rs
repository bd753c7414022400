//! Charts as files (`--charts DIR`): while a page is drawn inside [`collecting`], every
//! [`crate::svg::Chart`] also keeps the data it drew; each chart becomes `ID.svg` (the chart
//! with its legend, standalone, for an article) and `ID.csv` (every mark's numbers in the
//! axes' units, for a reader to check them).

use crate::svg::{esc, IntervalBar, Marker};
use anyhow::Context;
use std::cell::RefCell;
use std::fmt::Write;
use std::path::{Path, PathBuf};

thread_local! {
    static COLLECTED: RefCell<Option<Vec<ChartFile>>> = const { RefCell::new(None) };
}

/// Runs `draw` and returns what it returned with every chart it finished, as files.
pub fn collecting<T>(draw: impl FnOnce() -> T) -> (T, Vec<ChartFile>) {
    let before = COLLECTED.with(|c| c.borrow_mut().replace(Vec::new()));
    let out = draw();
    let files = COLLECTED.with(|c| std::mem::replace(&mut *c.borrow_mut(), before));
    (out, files.unwrap_or_default())
}

/// True inside [`collecting`].
pub(crate) fn collecting_now() -> bool {
    COLLECTED.with(|c| c.borrow().is_some())
}

/// Keeps a finished chart (inside [`collecting`]).
pub(crate) fn push(file: ChartFile) {
    COLLECTED.with(|c| {
        if let Some(v) = c.borrow_mut().as_mut() {
            v.push(file);
        }
    });
}

/// One mark's numbers. `series` is the colour until the chart resolves it to its legend.
#[derive(Debug, Clone)]
pub(crate) struct DataRow {
    series: String,
    mark: &'static str,
    x: f64,
    x_end: Option<f64>,
    y: Option<f64>,
    y_low: Option<f64>,
    y_high: Option<f64>,
    /// Decimals the y values are written with (None: every digit).
    decimals: Option<usize>,
    note: String,
}

impl DataRow {
    /// A point (or a line's vertex).
    pub(crate) fn point(color: &str, class: &str, x: f64, y: f64, note: &str) -> DataRow {
        DataRow {
            series: color.into(),
            mark: if class.contains("envelope") {
                "mean"
            } else {
                "point"
            },
            x,
            x_end: None,
            y: Some(y),
            y_low: None,
            y_high: None,
            decimals: None,
            note: note.into(),
        }
    }

    /// A band's low and high at x.
    pub(crate) fn band(color: &str, x: f64, lo: f64, hi: f64) -> DataRow {
        DataRow {
            series: color.into(),
            mark: "band",
            x,
            x_end: None,
            y: None,
            y_low: Some(lo),
            y_high: Some(hi),
            decimals: None,
            note: String::new(),
        }
    }

    /// A shaded span over [x0, x1].
    pub(crate) fn span(class: &str, x0: f64, x1: f64, note: &str) -> DataRow {
        DataRow {
            series: class.into(),
            mark: "span",
            x: x0,
            x_end: Some(x1),
            y: None,
            y_low: None,
            y_high: None,
            decimals: None,
            note: note.into(),
        }
    }

    /// A horizontal segment (a file on a time axis, a histogram bar).
    pub(crate) fn segment(
        color: &str,
        class: &str,
        x0: f64,
        x1: f64,
        y: f64,
        note: &str,
    ) -> DataRow {
        DataRow {
            series: if note.is_empty() {
                color.into()
            } else {
                format!("{color}|{class}")
            },
            mark: "segment",
            x: x0,
            x_end: Some(x1),
            y: Some(y),
            y_low: None,
            y_high: None,
            decimals: None,
            note: note.into(),
        }
    }

    /// A bar with its interval.
    pub(crate) fn interval(b: &IntervalBar) -> DataRow {
        DataRow {
            series: b.name.clone(),
            mark: "bar",
            x: (b.x0 + b.x1) / 2.0,
            x_end: None,
            y: Some(b.value),
            y_low: b.low,
            y_high: b.high,
            decimals: b.decimals,
            note: b.tip.clone(),
        }
    }

    /// An empty slot of a bar chart: "none" and why.
    pub(crate) fn none(slot: &crate::svg::EmptySlot) -> DataRow {
        DataRow {
            series: slot.name.clone(),
            mark: "none",
            x: slot.x,
            x_end: None,
            y: None,
            y_low: None,
            y_high: None,
            decimals: None,
            note: slot.reason.clone(),
        }
    }

    /// An event marker: its onset and the onset's interval.
    pub(crate) fn event(m: &Marker) -> DataRow {
        DataRow {
            series: m.color.clone(),
            mark: "event",
            x: m.x,
            x_end: None,
            y: None,
            y_low: m.band.map(|b| b.0),
            y_high: m.band.map(|b| b.1),
            decimals: None,
            note: m.title.clone(),
        }
    }
}

/// One chart as files.
#[derive(Debug, Clone)]
pub struct ChartFile {
    /// The chart's id in the page (the files' stem).
    pub id: String,
    /// The standalone SVG: the chart with its legend drawn above it.
    pub svg: String,
    /// The chart's data: a header, then one row per mark.
    pub csv: String,
}

/// Legend rows of a standalone SVG, px.
const LEGEND_ROW: f64 = 16.0;

impl ChartFile {
    /// The files of a chart `id` drawn as `svg` (the page's element, `size` px), with its
    /// legend (label, colour), axis labels and data.
    pub(crate) fn new(
        id: &str,
        svg: &str,
        size: (f64, f64),
        legend: &[(String, String)],
        labels: (&str, &str),
        rows: Vec<DataRow>,
    ) -> ChartFile {
        let (w, h) = size;
        // The legend flows left to right in rows (about 6.5 px a character).
        let mut keys = String::new();
        let (mut x, mut row) = (62.0, 0usize);
        for (label, color) in legend {
            let width = 18.0 + 6.5 * label.chars().count() as f64;
            if x + width > w && x > 62.0 {
                x = 62.0;
                row += 1;
            }
            let y = 4.0 + LEGEND_ROW * row as f64;
            let _ = write!(
                keys,
                r#"<rect x="{x:.1}" y="{y:.1}" width="10" height="10" fill="{color}"/><text x="{:.1}" y="{:.1}">{}</text>"#,
                x + 14.0,
                y + 9.0,
                esc(label)
            );
            x += width + 12.0;
        }
        let top = if legend.is_empty() {
            0.0
        } else {
            LEGEND_ROW * (row + 1) as f64 + 4.0
        };
        let inner = svg.replacen("<svg ", &format!(r#"<svg y="{top}" "#), 1);
        let standalone = format!(
            r##"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {th}" width="{w}" height="{th}" font-family="sans-serif" font-size="11"><rect width="100%" height="100%" fill="#fff"/><g class="legend">{keys}</g>{inner}</svg>
"##,
            th = h + top
        );
        // A colour is named by its legend; a series drawn under a name keeps it.
        let name_of = |series: &str| -> String {
            let key = series.split('|').next().unwrap_or(series);
            legend
                .iter()
                .find(|(_, c)| c == key)
                .map_or(key.to_string(), |(l, _)| l.clone())
        };
        let mut w = csv::Writer::from_writer(Vec::new());
        let num = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v}"));
        let (xh, yh) = (format!("x ({})", labels.0), format!("y ({})", labels.1));
        let _ = w.write_record([
            "series",
            "mark",
            xh.as_str(),
            "x_end",
            yh.as_str(),
            "y_low",
            "y_high",
            "note",
        ]);
        for r in rows {
            let y = |v: Option<f64>| match (v, r.decimals) {
                (Some(v), Some(d)) => format!("{v:.d$}"),
                (v, _) => num(v),
            };
            let _ = w.write_record([
                name_of(&r.series),
                r.mark.to_string(),
                format!("{}", r.x),
                num(r.x_end),
                y(r.y),
                y(r.y_low),
                y(r.y_high),
                r.note,
            ]);
        }
        let csv = String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default();
        ChartFile {
            id: id.to_string(),
            svg: standalone,
            csv,
        }
    }
}

/// Writes every chart as `DIR/ID.svg` and `DIR/ID.csv` (creating DIR); returns the paths.
pub fn write_all(dir: &Path, files: &[ChartFile]) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("could not create {}", dir.display()))?;
    let mut written = Vec::new();
    for f in files {
        for (ext, text) in [("svg", &f.svg), ("csv", &f.csv)] {
            let path = dir.join(format!("{}.{ext}", f.id));
            hostd_records::write_atomic(&path, text.as_bytes())
                .with_context(|| format!("could not write {}", path.display()))?;
            written.push(path);
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::svg::Chart;

    /// Outside [`collecting`] a chart keeps no data; inside, it becomes a standalone SVG
    /// with its legend and a CSV whose rows are the marks drawn, named by their legend.
    #[test]
    fn a_chart_drawn_while_collecting_becomes_an_svg_and_its_data() {
        let draw = || {
            let mut c = Chart::new("chart-x", 400.0, 200.0, (0.0, 10.0), (0.0, 5.0));
            c.points(
                &[(1.0, 2.0, "a, 1".into()), (3.0, 4.5, "b".into())],
                "#0072B2",
                "series",
            );
            c.legend("run \"one\"", "#0072B2");
            c.finish("data written, GB", "GB/s")
        };
        assert!(!collecting_now());
        let (html, files) = collecting(draw);
        assert_eq!(html, draw(), "collecting does not change the page");
        assert_eq!(files.len(), 1);
        let f = &files[0];
        assert_eq!(f.id, "chart-x");
        assert!(f.svg.starts_with("<?xml") && f.svg.contains("run &quot;one&quot;</text>"));
        assert!(f.svg.contains(r#"<svg y="20" id="chart-x""#), "{}", f.svg);
        let lines: Vec<&str> = f.csv.lines().collect();
        assert_eq!(
            lines,
            [
                "series,mark,\"x (data written, GB)\",x_end,y (GB/s),y_low,y_high,note",
                "\"run \"\"one\"\"\",point,1,,2,,,\"a, 1\"",
                "\"run \"\"one\"\"\",point,3,,4.5,,,b",
            ]
        );
        assert!(!collecting_now());
    }
}
