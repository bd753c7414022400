//! The fill-state section (`kind = "fill-states"`): per target, the table of the levels
//! (SLC-cache size and post-cache rate, each with its interval, or why there is none) and
//! two charts against the fill level. Absent for other runs.

use crate::svg::{esc, Chart, PALETTE};
use crate::view::Targets;
use hostd_analysis::fill_states::figures;
use hostd_records::events::Analysis;
use hostd_records::programs::FillLevel;
use hostd_records::RunData;
use std::fmt::Write;

/// The section, or nothing when no target ran a fill-state sweep.
pub(crate) fn section(run: &RunData, a: &Analysis, targets: &Targets, width: f64) -> String {
    let sweeps: Vec<(&String, Vec<FillLevel>)> = targets
        .full
        .iter()
        .zip(&targets.short)
        .filter_map(|(full, short)| Some((short, figures(&run.files, a, full)?.levels)))
        .collect();
    if sweeps.is_empty() {
        return String::new();
    }
    let mut h = String::from(r#"<section id="fill-states"><h2>Fill states</h2>"#);
    h.push_str(r#"<div class="scroll"><table id="fill-states-table"><tr><th class="l">target</th><th>level %</th><th>written GB</th><th>SLC cache GB</th><th>95 % interval GB</th><th>cached MB/s</th><th>post-cache MB/s</th><th>95 % interval MB/s</th><th class="l">note</th></tr>"#);
    let gb = |b: Option<u64>| b.map_or("–".into(), |b| format!("{:.3}", b as f64 / 1e9));
    let mbps = |r: Option<f64>| r.map_or("–".into(), |r| format!("{:.1}", r / 1e6));
    for (short, levels) in &sweeps {
        for l in levels {
            let _ = write!(
                h,
                r#"<tr><td class="l">{}</td><td>{}</td><td>{:.2}</td><td>{}</td><td>{}–{}</td><td>{}</td><td>{}</td><td>{}–{}</td><td class="l">{}</td></tr>"#,
                esc(short),
                l.level_pct,
                l.bytes as f64 / 1e9,
                gb(l.cache_bytes),
                gb(l.cache_bytes_low),
                gb(l.cache_bytes_high),
                mbps(l.cached_bps),
                mbps(l.post_cache_bps),
                mbps(l.post_cache_bps_low),
                mbps(l.post_cache_bps_high),
                esc(l.note.as_deref().unwrap_or(""))
            );
        }
    }
    h.push_str("</table></div>");
    h.push_str(&chart(
        "chart-fill-states-cache",
        &sweeps,
        width,
        |l| l.cache_bytes.map(|c| c as f64 / 1e9),
        |l| {
            Some((
                l.cache_bytes_low? as f64 / 1e9,
                l.cache_bytes_high? as f64 / 1e9,
            ))
        },
        "SLC cache GB",
    ));
    h.push_str(&chart(
        "chart-fill-states-rate",
        &sweeps,
        width,
        |l| l.post_cache_bps.map(|r| r / 1e6),
        |l| Some((l.post_cache_bps_low? / 1e6, l.post_cache_bps_high? / 1e6)),
        "post-cache MB/s",
    ));
    h.push_str(r#"<p class="note">Cache size: bytes of the level's measured write before the analysis' first drop (onset interval shaded); post-cache rate: median per-file rate after it, 95 % interval shaded. A level without a point had no drop or too few files after it (table).</p></section>"#);
    h
}

/// One figure against the fill level: estimate as a line with points, interval as a band.
fn chart(
    id: &str,
    sweeps: &[(&String, Vec<FillLevel>)],
    width: f64,
    value: impl Fn(&FillLevel) -> Option<f64>,
    interval: impl Fn(&FillLevel) -> Option<(f64, f64)>,
    y_label: &str,
) -> String {
    let mut hi: f64 = 0.0;
    for (_, levels) in sweeps {
        for l in levels {
            hi = hi.max(value(l).unwrap_or(0.0));
            hi = hi.max(interval(l).map_or(0.0, |i| i.1));
        }
    }
    let mut c = Chart::new(id, width, 220.0, (0.0, 100.0), (0.0, hi.max(1e-3) * 1.1))
        .without_marker_strip();
    for (i, (short, levels)) in sweeps.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let with: Vec<&FillLevel> = levels.iter().filter(|l| value(l).is_some()).collect();
        let bands: Vec<(f64, (f64, f64))> = with
            .iter()
            .filter_map(|l| Some((l.level_pct, interval(l)?)))
            .collect();
        if bands.len() >= 2 {
            let xs: Vec<f64> = bands.iter().map(|b| b.0).collect();
            let lo: Vec<f64> = bands.iter().map(|b| b.1 .0).collect();
            let up: Vec<f64> = bands.iter().map(|b| b.1 .1).collect();
            c.band(&xs, &lo, &up, color);
        }
        let pts: Vec<(f64, f64, String)> = with
            .iter()
            .map(|l| {
                let v = value(l).unwrap_or_default();
                (
                    l.level_pct,
                    v,
                    format!("{short} at {} % full: {v:.2} {y_label}", l.level_pct),
                )
            })
            .collect();
        let line: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.1)).collect();
        c.line(&line, color, "series");
        c.points(&pts, color, "series");
        c.legend(short, color);
    }
    c.finish("fill level, % of capacity", y_label)
}
