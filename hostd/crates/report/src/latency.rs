//! The report's latency section: per-interval percentiles against time and
//! each phase's percentile curve, from the run's latency histograms
//! ([`RunLatency`]: in memory in `hostd run`, read from `latency-*.hlog` by
//! `hostd analyze`; docs/latency.md).

use crate::svg::{esc, Chart, PALETTE};
use hostd_records::latency::{LatencyHistogram, LoggedLatency, RunLatency};
use std::fmt::Write;

/// Percentiles drawn over time, with their line colours.
const OVER_TIME: [(f64, &str); 3] = [(0.5, "p50"), (0.99, "p99"), (0.999, "p99.9")];
/// Quantiles of the percentile plot (x: "nines", −log10(1 − q)).
const CURVE: [f64; 11] = [
    0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9995, 0.9999, 0.99995, 0.99999,
];

/// log10 of a latency in ns, as µs on the chart's log axis.
fn log_us(ns: u64) -> f64 {
    (ns.max(1) as f64 / 1e3).log10()
}

/// The section: latency over time and the percentile plot (nothing without logs).
pub fn section(lat: &RunLatency, t0_ns: i64, width: f64) -> String {
    if lat.is_empty() {
        return String::new();
    }
    let mut h = String::from(
        r#"<section id="latency"><h2>I/O latency</h2><p class="note">Submission to completion of every I/O (HdrHistogram, ±0.1 %); latency axes are logarithmic (10^y µs). Full histograms: latency-*.hlog.</p>"#,
    );
    // Over time: per target, p50 / p99 / p99.9 of each interval.
    let mut targets: Vec<String> = Vec::new();
    for l in &lat.intervals {
        let t = l.tag.split('/').nth(1).unwrap_or("0").to_string();
        if !targets.contains(&t) {
            targets.push(t);
        }
    }
    if !lat.intervals.is_empty() {
        let xs = |l: &LoggedLatency| (l.end_ns as i64 - t0_ns) as f64 / 1e9;
        let x_hi = lat.intervals.iter().map(xs).fold(0.0, f64::max);
        // Each interval's percentiles, its histogram decoded once.
        let quantiles: Vec<[u64; OVER_TIME.len()]> = lat
            .intervals
            .iter()
            .map(|l| {
                let h = l.histogram();
                OVER_TIME.map(|(q, _)| h.quantile_ns(q))
            })
            .collect();
        let vals: Vec<f64> = quantiles
            .iter()
            .flat_map(|q| [log_us(q[0]), log_us(q[OVER_TIME.len() - 1])])
            .collect();
        let (lo, hi) = bounds(&vals);
        let mut c = Chart::new("chart-latency-time", width, 220.0, (0.0, x_hi), (lo, hi))
            .without_marker_strip();
        for (ti, t) in targets.iter().enumerate() {
            for (k, (_, name)) in OVER_TIME.iter().enumerate() {
                let color = PALETTE[(ti * OVER_TIME.len() + k) % PALETTE.len()];
                let pts: Vec<(f64, f64, String)> = lat
                    .intervals
                    .iter()
                    .zip(&quantiles)
                    .filter(|(l, _)| l.tag.split('/').nth(1) == Some(t.as_str()))
                    .map(|(l, qs)| {
                        let ns = qs[k];
                        (
                            xs(l),
                            log_us(ns),
                            format!(
                                "target {t} {name}: {:.1} µs at {:.1} s",
                                ns as f64 / 1e3,
                                xs(l)
                            ),
                        )
                    })
                    .collect();
                let line: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.1)).collect();
                c.line(&line, color, "series");
                c.points(&pts, color, "series");
                c.legend(&format!("target {t} {name}"), color);
            }
        }
        h.push_str("<h3>Latency per 1 s interval</h3>");
        h.push_str(&c.finish(
            "time since the first file started, s (interval end)",
            "latency, log₁₀ µs",
        ));
    }
    // Percentile plot: each phase of each target, its files merged.
    let mut phases: Vec<(String, LatencyHistogram)> = Vec::new();
    for l in &lat.files {
        // Tag file/<target>/<phase>/<index>: the key is everything but the index.
        let key = l.tag.rsplit_once('/').map(|(k, _)| k).unwrap_or(&l.tag);
        let key = key.strip_prefix("file/").unwrap_or(key).to_string();
        let h = l.histogram();
        match phases.iter_mut().find(|(k, _)| *k == key) {
            Some((_, sum)) => sum.add(&h),
            None => phases.push((key, h)),
        }
    }
    if !phases.is_empty() {
        let nines = |q: f64| -(1.0 - q).log10();
        let vals: Vec<f64> = phases
            .iter()
            .flat_map(|(_, h)| [log_us(h.quantile_ns(0.5)), log_us(h.stats().max_ns)])
            .collect();
        let (lo, hi) = bounds(&vals);
        let mut c = Chart::new(
            "chart-latency-percentiles",
            width,
            240.0,
            (0.0, 5.0),
            (lo, hi),
        )
        .without_marker_strip();
        let mut rows = String::new();
        for (i, (key, hist)) in phases.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let label = key.replacen('/', " ", 1);
            let pts: Vec<(f64, f64, String)> = CURVE
                .iter()
                .filter(|q| (1.0 - **q) * hist.count() as f64 >= 1.0 || **q == 0.5)
                .map(|&q| {
                    let ns = hist.quantile_ns(q);
                    (
                        nines(q),
                        log_us(ns),
                        format!("target {label} p{}: {:.1} µs", q * 100.0, ns as f64 / 1e3),
                    )
                })
                .collect();
            let line: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.1)).collect();
            c.line(&line, color, "series");
            c.points(&pts, color, "series");
            c.legend(&format!("target {label}"), color);
            let s = hist.stats();
            let us = |ns: u64| format!("{:.1}", ns as f64 / 1e3);
            let _ = write!(
                rows,
                r#"<tr><td class="l">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
                esc(&format!("target {label}")),
                s.count,
                us(s.p50_ns),
                us(s.p90_ns),
                us(s.p99_ns),
                us(s.p99_9_ns),
                us(s.p99_99_ns),
                us(s.max_ns)
            );
        }
        h.push_str("<h3>Percentiles per phase</h3>");
        h.push_str(&c.finish(
            "percentile, nines: 0.3 = p50, 1 = p90, 2 = p99, 3 = p99.9, 4 = p99.99",
            "latency, log₁₀ µs",
        ));
        let _ = write!(
            h,
            r#"<div class="scroll"><table id="latency-table"><tr><th class="l">target phase</th><th>I/Os</th><th>p50 µs</th><th>p90 µs</th><th>p99 µs</th><th>p99.9 µs</th><th>p99.99 µs</th><th>max µs</th></tr>{rows}</table></div>"#
        );
    }
    h.push_str("</section>");
    h
}

/// Axis bounds around `vals` with a little room.
fn bounds(vals: &[f64]) -> (f64, f64) {
    let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() || !hi.is_finite() {
        return (0.0, 1.0);
    }
    ((lo - 0.1).floor(), (hi + 0.1).ceil())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logged(tag: &str, start_s: u64, values: &[u64]) -> LoggedLatency {
        let mut h = LatencyHistogram::new();
        for &v in values {
            h.record(v);
        }
        LoggedLatency::new(
            tag,
            0,
            start_s * 1_000_000_000,
            (start_s + 1) * 1_000_000_000,
            &h,
        )
    }

    #[test]
    fn the_section_draws_both_charts_and_tabulates_each_phase() {
        let lat = RunLatency {
            intervals: vec![
                logged("interval/0/write", 0, &[10_000, 20_000, 900_000]),
                logged("interval/0/write", 1, &[12_000, 25_000]),
            ],
            files: vec![
                logged("file/0/write/0", 0, &[10_000, 20_000, 900_000]),
                logged("file/0/write/1", 1, &[12_000, 25_000]),
                logged("file/0/read/0", 2, &[5_000]),
            ],
        };
        let h = section(&lat, 0, 960.0);
        assert!(h.contains(r#"id="chart-latency-time""#));
        assert!(h.contains(r#"id="chart-latency-percentiles""#));
        // Two phases, the write phase's two files merged into 5 I/Os.
        assert_eq!(h.matches("<tr><td").count(), 2, "{h}");
        assert!(
            h.contains(r#"<td class="l">target 0 write</td><td>5</td>"#),
            "{h}"
        );
    }

    #[test]
    fn no_logs_no_section() {
        assert!(section(&RunLatency::default(), 0, 960.0).is_empty());
    }
}
