//! Human-readable lines: one per event, and the terminal summary of a whole analysis.

use crate::model::{Analysis, Event, EventKind};
use std::fmt::Write;

fn gbps(bps: f64) -> String {
    format!("{:.2} GB/s", bps / 1e9)
}

/// "write throttled at 23.9 GB written, 2.31 → 0.66 GB/s, enclosure 61 °C, bus power
/// 6.9 → 4.1 W: thermal (confidence 0.9)".
pub fn event_line(e: &Event) -> String {
    let what = match e.kind {
        EventKind::Drop => "dropped",
        EventKind::Recovery => "recovered",
    };
    let ev = &e.evidence;
    let mut s = format!(
        "{} {} {} at {:.1} GB ({:.1} s), {} → {}",
        e.target,
        e.phase,
        what,
        ev.onset_gb,
        ev.onset_s,
        gbps(e.rate_before_bps),
        gbps(e.rate_after_bps)
    );
    if let Some(t) = ev.temp_at_onset_c {
        let _ = write!(s, ", enclosure {t:.0} °C");
    }
    if let (Some(a), Some(b)) = (ev.power_before_w, ev.power_after_w) {
        let _ = write!(s, ", bus power {a:.1} → {b:.1} W");
    }
    if let (Some(t), Some(lag)) = (&ev.other_target, ev.lag_after_other_end_s) {
        let _ = write!(s, ", {lag:.1} s after {t} finished");
    }
    let _ = write!(s, ": {} (confidence {:.2})", e.cause.as_str(), e.confidence);
    s
}

/// The terminal summary printed by `hostd analyze` and at the end of `hostd run`.
pub fn text(a: &Analysis) -> String {
    let mut s = String::new();
    for p in &a.phases {
        let _ = writeln!(
            s,
            "{} {}: {} files, {:.1} GB in {:.1} s — overall {}, median {}, 20% trimmed {}, Theil–Sen {}{}",
            p.target,
            p.phase,
            p.files,
            p.bytes as f64 / 1e9,
            p.seconds,
            gbps(p.throughput_bps),
            gbps(p.median_bps),
            gbps(p.trimmed_mean_bps),
            p.theil_sen_bps.map_or("–".into(), gbps),
            if p.bimodal { " — BIMODAL: averages mislead" } else { "" }
        );
    }
    if a.events.is_empty() {
        let _ = writeln!(s, "no throughput changes beyond noise");
    }
    for e in &a.events {
        let _ = writeln!(s, "{}", event_line(e));
    }
    if let (Some(w), Some(agg)) = (&a.overlap.window, a.overlap.aggregate_bps) {
        let per: Vec<String> = a
            .overlap
            .per_target
            .iter()
            .map(|t| format!("{} {}", t.target, gbps(t.rate_bps)))
            .collect();
        let _ = writeln!(
            s,
            "all {} targets active for {:.1} s: {} = {} aggregate",
            a.overlap.targets.len(),
            w.duration_s,
            per.join(" + "),
            gbps(agg)
        );
    }
    for l in &a.overlap.lags {
        let _ = writeln!(
            s,
            "{} recovered {:.1} s after {} finished",
            l.recovered_target, l.lag_s, l.ended_target
        );
    }
    s
}

fn gbps_opt(v: Option<f64>) -> String {
    v.map_or("–".into(), |b| format!("{:.2}", b / 1e9))
}

/// `hostd compare`: one column per run, one block of rows per target/phase, then each
/// run's events.
pub fn compare_table(names: &[String], analyses: &[Analysis]) -> String {
    let mut keys: Vec<(String, String)> = Vec::new();
    for a in analyses {
        for p in &a.phases {
            if !keys.contains(&(p.target.clone(), p.phase.clone())) {
                keys.push((p.target.clone(), p.phase.clone()));
            }
        }
    }
    let width = names
        .iter()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(8)
        .clamp(12, 40);
    let mut s = String::new();
    let _ = write!(s, "{:<28}", "");
    for n in names {
        let _ = write!(s, " {n:>width$}");
    }
    s.push('\n');
    type Row = (&'static str, fn(&crate::model::PhaseStats) -> String);
    let rows: [Row; 11] = [
        ("files", |p| p.files.to_string()),
        ("GB", |p| format!("{:.2}", p.bytes as f64 / 1e9)),
        ("overall GB/s", |p| gbps_opt(Some(p.throughput_bps))),
        ("mean GB/s", |p| gbps_opt(Some(p.mean_bps))),
        ("median GB/s", |p| gbps_opt(Some(p.median_bps))),
        ("20% trimmed GB/s", |p| gbps_opt(Some(p.trimmed_mean_bps))),
        ("Theil–Sen GB/s", |p| gbps_opt(p.theil_sen_bps)),
        ("least squares GB/s", |p| gbps_opt(p.least_squares_bps)),
        ("bimodal", |p| {
            if p.bimodal {
                "yes".into()
            } else {
                "no".into()
            }
        }),
        ("J/GB", |p| {
            p.j_per_gb.map_or("–".into(), |j| format!("{j:.2}"))
        }),
        ("mean power W", |p| {
            p.mean_power_w.map_or("–".into(), |w| format!("{w:.2}"))
        }),
    ];
    for (target, phase) in &keys {
        let _ = writeln!(s, "{target} {phase}");
        for (label, f) in rows {
            let _ = write!(s, "  {label:<26}");
            for a in analyses {
                let cell = a
                    .phases
                    .iter()
                    .find(|p| &p.target == target && &p.phase == phase)
                    .map_or("–".into(), f);
                let _ = write!(s, " {cell:>width$}");
            }
            s.push('\n');
        }
        let _ = write!(s, "  {:<26}", "events");
        for a in analyses {
            let n = a
                .events
                .iter()
                .filter(|e| &e.target == target && &e.phase == phase)
                .count();
            let _ = write!(s, " {n:>width$}");
        }
        s.push('\n');
    }
    for (name, a) in names.iter().zip(analyses) {
        let _ = writeln!(s, "\n{name}:");
        if a.events.is_empty() {
            let _ = writeln!(s, "  no throughput changes beyond noise");
        }
        for e in &a.events {
            let _ = writeln!(s, "  {}", e.evidence.text);
        }
        if let (Some(w), Some(agg)) = (&a.overlap.window, a.overlap.aggregate_bps) {
            let _ = writeln!(
                s,
                "  all targets active {:.1} s, aggregate {:.2} GB/s",
                w.duration_s,
                agg / 1e9
            );
        }
    }
    s
}
