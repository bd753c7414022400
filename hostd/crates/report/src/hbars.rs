//! A figure's bar chart as reviews print it: one row per run, sorted by value (highest
//! first), each bar with its 95 % interval as a whisker and its value written beside it; the
//! runs under review (`hostd compare --highlight`) drawn strong and named in bold, the others
//! faint; a run without the figure last, its row saying "none" and why. Small, so that a
//! page's figures stand side by side in a grid. Inside [`crate::chart_files::collecting`] it
//! also becomes `ID.svg` and `ID.csv` (x: the bar's row from the top; y: its value).

use crate::chart_files::{self, ChartFile, DataRow};
use crate::svg::{esc, tick_labels, ticks, wrap_words, EmptySlot, IntervalBar};
use std::fmt::Write;

/// Width of the chart, px (it scales to its grid cell).
pub(crate) const WIDTH: f64 = 420.0;
/// Height of a row, px.
const ROW: f64 = 20.0;
/// Each further line of a reason, px.
const WRAP: f64 = 13.0;
/// Above the first row, px.
const TOP: f64 = 6.0;
/// Below the last row: the ticks and the unit, px.
const BOTTOM: f64 = 32.0;
/// Width of a character of a label (11 px) and of a value (10 px), px.
const LABEL_CHAR: f64 = 6.3;
const VALUE_CHAR: f64 = 5.8;

/// `text` cut to `n` characters, ending in "…" when cut.
fn elide(text: &str, n: usize) -> String {
    if text.chars().count() <= n {
        return text.to_string();
    }
    let head: String = text.chars().take(n.saturating_sub(1)).collect();
    format!("{head}…")
}

/// The rows in the order drawn: the bars by value, highest first (ties in the order given),
/// then the runs without the figure.
pub(crate) fn order(bars: &mut [IntervalBar]) {
    bars.sort_by(|a, b| b.value.total_cmp(&a.value));
}

/// The chart `id` of `bars` (sorted here) and the runs without the figure (`empty`), its
/// values in `unit`; a bar or row named in `highlight` is the drive under review. `x_label`
/// names the figure in the data file's header.
pub(crate) fn chart(
    id: &str,
    mut bars: Vec<IntervalBar>,
    empty: &[EmptySlot],
    highlight: &[String],
    unit: &str,
    x_label: &str,
) -> String {
    order(&mut bars);
    let names = bars
        .iter()
        .map(|b| &b.name)
        .chain(empty.iter().map(|e| &e.name));
    let longest = names.map(|n| n.chars().count()).max().unwrap_or(4);
    let left = (8.0 + LABEL_CHAR * longest as f64).clamp(48.0, 150.0);
    let label_chars = ((left - 8.0) / LABEL_CHAR) as usize;
    let widest = bars
        .iter()
        .map(|b| b.text.chars().count())
        .max()
        .unwrap_or(0);
    let right = (10.0 + VALUE_CHAR * widest as f64).clamp(24.0, 150.0);
    let (x0, x1) = (left + 6.0, WIDTH - right);
    // A run without the figure: "none" and its reason on at most two lines, its row taller
    // for the second.
    let room = ((WIDTH - 4.0 - x0 - 30.0) / 5.4) as usize;
    let why: Vec<Vec<String>> = empty
        .iter()
        .map(|e| wrap_words(&format!("({})", e.reason), room.max(8), 2))
        .collect();
    let mut mids = Vec::new();
    let mut y = TOP;
    for lines in std::iter::repeat_n(1, bars.len()).chain(why.iter().map(Vec::len)) {
        let height = ROW + WRAP * (lines as f64 - 1.0);
        mids.push(y + ROW / 2.0);
        y += height;
    }
    let (plot_top, plot_bottom) = (TOP, y);
    let h = plot_bottom + BOTTOM;
    let top = bars
        .iter()
        .map(|b| b.high.unwrap_or(b.value).max(b.value))
        .fold(0.0, f64::max);
    let top = if top > 0.0 { top } else { 1.0 };
    let px = |v: f64| x0 + (v.max(0.0) / top).min(1.0) * (x1 - x0);
    let strong = |name: &str| highlight.iter().any(|n| n == name);
    let any_strong = bars.iter().any(|b| strong(&b.name)) || empty.iter().any(|e| strong(&e.name));
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg id="{}" class="chart hbars" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {h}" width="{WIDTH}" height="{h}" font-family="sans-serif" font-size="11">"#,
        esc(id)
    );
    let xt = ticks(0.0, top, 3);
    for (t, label) in xt.iter().zip(tick_labels(&xt)) {
        let x = px(*t);
        let _ = write!(
            s,
            r##"<line x1="{x:.1}" x2="{x:.1}" y1="{plot_top}" y2="{plot_bottom}" stroke="#e4e4e4"/><text class="label tick" x="{x:.1}" y="{:.1}" text-anchor="middle">{label}</text>"##,
            plot_bottom + 13.0
        );
    }
    let _ = write!(
        s,
        r##"<line x1="{x0}" x2="{x0}" y1="{plot_top}" y2="{plot_bottom}" stroke="#888"/><text class="label axis" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
        (x0 + x1) / 2.0,
        h - 4.0,
        esc(unit)
    );
    let mut data = Vec::new();
    let name_text = |s: &mut String, name: &str, y: f64| {
        let weight = if strong(name) {
            r#" font-weight="bold""#
        } else {
            ""
        };
        let _ = write!(
            s,
            r#"<text class="label run" x="{:.1}" y="{:.1}" text-anchor="end"{weight}><title>{}</title>{}</text>"#,
            left,
            y + 4.0,
            esc(name),
            esc(&elide(name, label_chars))
        );
    };
    s.push_str(r#"<g class="series bars">"#);
    for (k, b) in bars.iter().enumerate() {
        let mid = mids[k];
        let mut row = b.clone();
        (row.x0, row.x1) = (k as f64 - 0.35, k as f64 + 0.35);
        data.push(DataRow::interval(&row));
        name_text(&mut s, &b.name, mid);
        let (opacity, outline) = match (any_strong, strong(&b.name)) {
            (false, _) => ("0.6", String::new()),
            (true, true) => ("0.9", r##" stroke="#111" stroke-width="1.2""##.to_string()),
            (true, false) => ("0.3", String::new()),
        };
        let _ = write!(
            s,
            r#"<rect x="{x0:.1}" y="{:.1}" width="{:.1}" height="12" fill="{}" fill-opacity="{opacity}"{outline}><title>{}</title></rect>"#,
            mid - 6.0,
            (px(b.value) - x0).max(0.5),
            b.color,
            esc(&b.tip)
        );
        let mut end = px(b.value);
        if let (Some(lo), Some(hi)) = (b.low, b.high) {
            let (a, z) = (px(lo), px(hi));
            end = end.max(z);
            let _ = write!(
                s,
                r##"<path class="interval" d="M{a:.1},{mid:.1}H{z:.1}M{a:.1},{:.1}V{:.1}M{z:.1},{:.1}V{:.1}" stroke="#222" stroke-width="1.1" fill="none"/>"##,
                mid - 4.0,
                mid + 4.0,
                mid - 4.0,
                mid + 4.0
            );
        }
        let _ = write!(
            s,
            r#"<text class="label bar-value" x="{:.1}" y="{:.1}" font-size="10"{}>{}</text>"#,
            end + 4.0,
            mid + 3.5,
            if strong(&b.name) {
                r#" font-weight="bold""#
            } else {
                ""
            },
            esc(&b.text)
        );
    }
    s.push_str("</g><g class=\"none\">");
    for (k, (e, lines)) in empty.iter().zip(&why).enumerate() {
        let mid = mids[bars.len() + k];
        let mut slot = e.clone();
        slot.x = (bars.len() + k) as f64;
        data.push(DataRow::none(&slot));
        name_text(&mut s, &e.name, mid);
        let _ = write!(
            s,
            r##"<text class="label none" x="{x0:.1}" y="{:.1}" font-size="11" fill="#555"><title>{}</title>none</text>"##,
            mid + 4.0,
            esc(&e.reason),
        );
        for (j, line) in lines.iter().enumerate() {
            let _ = write!(
                s,
                r##"<text class="label none-why" x="{:.1}" y="{:.1}" font-size="10" fill="#555">{}</text>"##,
                x0 + 30.0,
                mid + 4.0 + WRAP * j as f64,
                esc(line)
            );
        }
    }
    s.push_str("</g></svg>");
    if chart_files::collecting_now() {
        chart_files::push(ChartFile::new(
            id,
            &s,
            (WIDTH, h),
            &[],
            (x_label, unit),
            data,
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar(name: &str, value: f64) -> IntervalBar {
        IntervalBar {
            x0: 0.0,
            x1: 0.0,
            value,
            low: Some(value * 0.9),
            high: Some(value * 1.1),
            color: "#0072B2".into(),
            name: name.into(),
            decimals: Some(2),
            text: format!("{value:.2}"),
            tip: format!("{name}: {value:.2}"),
        }
    }

    /// Bars stand highest first whatever the order given, the runs without the figure last
    /// with their reason, and the run under review in bold; the data file lists them in the
    /// same order.
    #[test]
    fn bars_are_sorted_by_value_and_the_run_under_review_stands_out() {
        let bars = vec![bar("p50", 1.44), bar("x5", 0.77), bar("steady", 1.59)];
        let empty = [EmptySlot {
            x: 0.0,
            width: 0.9,
            name: "tb".into(),
            reason: "no drop in 100.0 GB".into(),
        }];
        let draw = || {
            chart(
                "c",
                bars.clone(),
                &empty,
                &["x5".into()],
                "GB/s",
                "average rate",
            )
        };
        let (svg, files) = chart_files::collecting(draw);
        let names: Vec<&str> = svg
            .split(r#"class="label run""#)
            .skip(1)
            .map(|t| &t[t.find("</title>").unwrap() + 8..t.find("</text>").unwrap()])
            .collect();
        assert_eq!(names, ["steady", "p50", "x5", "tb"]);
        let x5 = svg.split(r#"class="label run""#).nth(3).unwrap();
        assert!(
            x5.starts_with(r#" x="#) && x5.contains(r#"font-weight="bold""#),
            "{x5}"
        );
        assert_eq!(
            svg.matches(r#"font-weight="bold""#).count(),
            2,
            "its name and value"
        );
        assert!(svg.contains("(no drop in 100.0 GB)"));
        let rows: Vec<&str> = files[0].csv.lines().skip(1).collect();
        assert!(rows[0].starts_with("steady,bar,0,,1.59,"), "{rows:?}");
        assert!(rows[2].starts_with("x5,bar,2,,0.77,"), "{rows:?}");
        assert!(rows[3].starts_with("tb,none,3,"), "{rows:?}");
    }

    #[test]
    fn long_names_are_elided_with_their_whole_name_in_the_tooltip() {
        assert_eq!(elide("drive=sandisk-extreme-pro", 10), "drive=san…");
        assert_eq!(elide("x5", 10), "x5");
    }
}
