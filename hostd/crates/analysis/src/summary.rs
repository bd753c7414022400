//! Human-readable lines: one per event, and the terminal summary of a whole analysis.

use hostd_records::cause::EventKind;
use hostd_records::events::{Analysis, Event};
use hostd_records::headline::{Figure, Headlines};
use std::fmt::Write;

/// A rate in the unit that keeps its digits: "2.31 GB/s" from 0.1 GB/s up, "23.8 MB/s" below
/// (a slow device's 24 → 12 MB/s would otherwise read "0.02 → 0.01 GB/s"). The terminal
/// summary and the report both write rates with it.
pub fn rate(bps: f64) -> String {
    let u = RateUnit::of(bps);
    format!("{} {}", u.num(bps), u.name)
}

/// The unit [`rate`] writes a rate in, for a table or an interval that shares one unit.
#[derive(Debug, Clone, Copy)]
pub struct RateUnit {
    /// "GB/s" or "MB/s".
    pub name: &'static str,
    per: f64,
    decimals: usize,
}

impl RateUnit {
    /// GB/s from 0.1 GB/s up, MB/s below.
    pub fn of(bps: f64) -> RateUnit {
        if bps.abs() >= 1e8 {
            RateUnit {
                name: "GB/s",
                per: 1e9,
                decimals: 2,
            }
        } else {
            RateUnit {
                name: "MB/s",
                per: 1e6,
                decimals: 1,
            }
        }
    }

    /// `bps` in this unit, without the unit's name.
    pub fn num(self, bps: f64) -> String {
        format!("{:.*}", self.decimals, bps / self.per)
    }
}

/// A position in the data written, in GB from 1 GB up and in MB below it.
fn position(gb: f64) -> String {
    if gb.abs() >= 1.0 {
        format!("{gb:.1} GB")
    } else {
        format!("{:.0} MB", gb * 1e3)
    }
}

/// The onset interval "[23.8–24.0 GB, 10.3–10.5 s]", in MB when it lies below 1 GB.
fn onset_interval(gb: [f64; 2], s: [f64; 2]) -> String {
    let (scale, digits, unit) = if gb[1].abs() >= 1.0 {
        (1.0, 1, "GB")
    } else {
        (1e3, 0, "MB")
    };
    format!(
        "[{:.digits$}–{:.digits$} {unit}, {:.1}–{:.1} s]",
        gb[0] * scale,
        gb[1] * scale,
        s[0],
        s[1]
    )
}

/// The strength of an event in words: "p < 0.001" at the permutation floor, else "p = 0.004".
pub fn strength(e: &Event) -> String {
    let floor = 1.0 / (f64::from(e.permutations) + 1.0);
    if e.p_value <= floor * 1.000_001 {
        format!("p < {:.3}", floor * 1.0001)
    } else {
        format!("p = {:.3}", e.p_value)
    }
}

/// One event in one line, with its onset interval and strength, e.g. "x5 write dropped at
/// 23.9 GB (10.4 s) [23.8–24.0 GB, 10.3–10.5 s], 2.31 → 0.66 GB/s, p < 0.001, enclosure
/// 61 °C, bus power 6.9 → 4.1 W: thermal (confidence 0.90)".
pub fn event_line(e: &Event) -> String {
    let ev = &e.evidence;
    let interval = onset_interval(ev.onset_interval_gb, ev.onset_interval_s);
    let mut s = if let (EventKind::Stall, Some(st)) = (e.kind, &e.stall) {
        let (lo, hi) = st
            .durations_s
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(a, b), &d| (a.min(d), b.max(d)));
        format!(
            "{} {} stalled {} time{} from {} ({:.1} s) {interval}: {:.1}–{:.1} s each{}, {} while stalled against {} typical, {}",
            e.target,
            e.phase,
            st.count,
            if st.count == 1 { "" } else { "s" },
            position(ev.onset_gb),
            ev.onset_s,
            lo,
            hi,
            st.period_s.map_or(String::new(), |p| format!(", every {p:.1} s")),
            rate(e.rate_after_bps),
            rate(e.rate_before_bps),
            strength(e)
        )
    } else {
        // A step "dropped at …"/"recovered at …", a ramp "declined/rose gradually from …,
        // settling at …".
        let (verb, settle) = match (e.gradual, e.kind == EventKind::Drop) {
            _ if e.kind == EventKind::WarmUp => ("warmed up (rose) at", String::new()),
            (false, true) => ("dropped at", String::new()),
            (false, false) => ("recovered at", String::new()),
            (true, drop) => (
                if drop {
                    "declined gradually from"
                } else {
                    "rose gradually from"
                },
                format!(", settling at {}", position(e.settle_bytes as f64 / 1e9)),
            ),
        };
        format!(
            "{} {} {verb} {} ({:.1} s) {interval}{settle}, {} → {}, {}",
            e.target,
            e.phase,
            position(ev.onset_gb),
            ev.onset_s,
            rate(e.rate_before_bps),
            rate(e.rate_after_bps),
            strength(e)
        )
    };
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

/// The widest terminal line the summary writes; an event's line longer than this goes on
/// over continuation lines ([`wrapped`]).
pub const LINE_WIDTH: usize = 160;

/// The indent that marks a continuation line of [`wrapped`].
pub const CONTINUATION: &str = "    ";

/// `line` broken after its ", " separators into lines of at most `width` characters, each
/// after the first indented by [`CONTINUATION`]; a part longer than `width` by itself stays
/// whole rather than being cut inside a figure.
pub fn wrapped(line: &str, width: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    for part in line.split_inclusive(", ") {
        let fits = current.chars().count() + part.trim_end().chars().count() <= width;
        if current.trim().is_empty() || fits {
            current.push_str(part);
        } else {
            out.push(current.trim_end().to_string());
            current = format!("{CONTINUATION}{part}");
        }
    }
    out.push(current.trim_end().to_string());
    out
}

/// The one line said instead of events when no series had enough data to tell, e.g.
/// "too little data to detect throttling: 12 files, 0.24 s"; None otherwise.
pub fn too_little_line(a: &Analysis) -> Option<String> {
    if a.insufficient.is_empty() || a.insufficient.len() < a.phases.len() {
        return None;
    }
    let one_target = a
        .insufficient
        .iter()
        .all(|i| i.target == a.insufficient[0].target);
    let parts: Vec<String> = a
        .insufficient
        .iter()
        .map(|i| {
            let what = format!("{} files, {:.2} s", i.files, i.seconds);
            if a.insufficient.len() == 1 {
                what
            } else if one_target {
                format!("{} {what}", i.phase)
            } else {
                format!("{} {} {what}", i.target, i.phase)
            }
        })
        .collect();
    Some(format!(
        "too little data to detect throttling: {}",
        parts.join("; ")
    ))
}

/// The cycle summary line of repeated throttling.
pub fn cycle_line(c: &hostd_records::events::CycleSummary) -> String {
    format!(
        "{} {} throttled {} times, every {:.1} s, slow {:.0} % of the time ({:.1} s)",
        c.target,
        c.phase,
        c.count,
        c.period_s,
        c.duty * 100.0,
        c.throttled_s
    )
}

/// The terminal summary printed by `hostd analyze`: the per-phase figures
/// ([`phase_lines`]), then what the analysis found ([`finding_lines`], with the all-active
/// window).
pub fn text(a: &Analysis) -> String {
    let mut s = String::new();
    for line in phase_lines(a).into_iter().chain(finding_lines(a, true)) {
        let _ = writeln!(s, "{line}");
    }
    s
}

/// One line per target and phase: files, bytes, time and the rate statistics; for the
/// probed phase with the port's budget known (or VBUS under vSafe5V) a second line, its bus
/// power as shares of the budget and its lowest VBUS.
pub fn phase_lines(a: &Analysis) -> Vec<String> {
    a.phases
        .iter()
        .flat_map(|p| {
            let port = p
                .port
                .as_ref()
                .and_then(hostd_records::port_figures::text)
                .map(|t| format!("{} {}: {t}", p.target, p.phase));
            let rates = format!(
                "{} {}: {} files, {:.1} GB in {:.1} s — overall {}, median {}, 20% trimmed {}, Theil–Sen {}{}",
                p.target,
                p.phase,
                p.files,
                p.bytes as f64 / 1e9,
                p.seconds,
                rate(p.throughput_bps),
                rate(p.median_bps),
                rate(p.trimmed_mean_bps),
                p.theil_sen_bps.map_or("–".into(), rate),
                if p.bimodal { " — BIMODAL: averages mislead" } else { "" }
            );
            std::iter::once(rates).chain(port)
        })
        .collect()
}

/// What the analysis found: the events (or why none could be looked for), the cycles, the
/// all-active window when `window` (`hostd run` prints it in its own table), the recovery
/// lags and the headline figures.
pub fn finding_lines(a: &Analysis, window: bool) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(line) = too_little_line(a) {
        out.push(line);
        return out;
    }
    for i in &a.insufficient {
        out.push(format!(
            "{} {}: too little data to detect throttling: {} files, {:.2} s",
            i.target, i.phase, i.files, i.seconds
        ));
    }
    match out.last_mut() {
        // After the series too short to look at: one line says both.
        Some(last) if a.events.is_empty() => {
            last.push_str("; elsewhere no throughput changes beyond noise")
        }
        None if a.events.is_empty() => out.push("no throughput changes beyond noise".into()),
        _ => {}
    }
    out.extend(
        a.events
            .iter()
            .flat_map(|e| wrapped(&event_line(e), LINE_WIDTH)),
    );
    out.extend(a.cycles.iter().map(cycle_line));
    if let (true, Some(w), Some(agg)) = (window, &a.overlap.window, a.overlap.aggregate_bps) {
        let per: Vec<String> = a
            .overlap
            .per_target
            .iter()
            .map(|t| format!("{} {}", t.target, rate(t.rate_bps)))
            .collect();
        out.push(format!(
            "all {} targets active for {:.1} s: {} = {} aggregate",
            a.overlap.targets.len(),
            w.duration_s,
            per.join(" + "),
            rate(agg)
        ));
    }
    for l in &a.overlap.lags {
        out.push(format!(
            "{} recovered {:.1} s after {} finished",
            l.recovered_target, l.lag_s, l.ended_target
        ));
    }
    // A series too short to look at claims no drop and no throttle: its "what happened"
    // line is left out.
    let examined = |t: &str, p: &str| !a.insufficient.iter().any(|i| i.target == t && i.phase == p);
    out.extend(headline_lines(&a.headlines, examined));
    out
}

/// A rate figure with its interval in the unit [`gbps`] picks: "0.65 GB/s [0.64–0.66]".
fn rate_figure(f: &Figure) -> String {
    match f.interval() {
        Some((v, lo, hi)) if v.abs() >= 1e8 => {
            format!("{:.2} GB/s [{:.2}–{:.2}]", v / 1e9, lo / 1e9, hi / 1e9)
        }
        Some((v, lo, hi)) => format!("{:.1} MB/s [{:.1}–{:.1}]", v / 1e6, lo / 1e6, hi / 1e6),
        None => f.text(1.0, 0, ""),
    }
}

/// A byte position with its interval, in GB from 1 GB up, in MB below.
fn bytes_figure(f: &Figure) -> String {
    match f.interval() {
        Some((v, ..)) if v.abs() >= 1e9 => f.text(1e-9, 1, "GB"),
        Some(_) => f.text(1e-6, 0, "MB"),
        None => f.text(1.0, 0, ""),
    }
}

/// The headline lines of the summary: per target and phase the reviewers' figures, the
/// J/GB around each event, and the enclosure's thermal fit (docs/methodology.md).
/// `examined(target, phase)` is false for a series too short to look at: its "what
/// happened" line is left out when that line would only claim that nothing happened.
pub fn headline_lines(h: &Headlines, examined: impl Fn(&str, &str) -> bool) -> Vec<String> {
    let mut out = Vec::new();
    for s in &h.series {
        out.push(format!(
            "{} {} headline: average {}, sustained (median of the last third) {}",
            s.target,
            s.phase,
            rate_figure(&s.average_bps),
            rate_figure(&s.sustained_bps)
        ));
        // Second line: what happened, each with its interval; "none" where no such event
        // was found (other reasons, e.g. too few files, are given in full).
        let none = |f: &Figure, what: &str| match f {
            Figure::Absent { absent } if absent.starts_with("no drop") => format!("no {what}"),
            Figure::Absent { absent } => format!("{what}: — ({absent})"),
            _ => String::new(),
        };
        let mut parts = Vec::new();
        if s.phase.contains("write") {
            parts.push(match s.slc_cache_bytes.get() {
                None => none(&s.slc_cache_bytes, "SLC-cache drop"),
                Some(_) => format!(
                    "SLC cache {}, then {}",
                    bytes_figure(&s.slc_cache_bytes),
                    rate_figure(&s.post_cache_bps)
                ),
            });
        }
        parts.push(match s.throttle_s.get() {
            None => none(&s.throttle_s, "thermal throttle"),
            Some(_) => format!(
                "thermal throttle after {} at {}, then {}",
                s.throttle_s.text(1.0, 1, "s"),
                bytes_figure(&s.throttle_bytes),
                rate_figure(&s.throttled_bps)
            ),
        });
        let claims_nothing = parts.first().is_some_and(|p| p.starts_with("no "));
        if !claims_nothing || examined(&s.target, &s.phase) {
            out.push(format!("{} {}: {}", s.target, s.phase, parts.join("; ")));
        }
        for e in &s.energy {
            out.push(format!(
                "{} {} energy around the {} at {} ({}): {} → {}",
                s.target,
                s.phase,
                if e.kind == EventKind::Drop {
                    "drop"
                } else {
                    "recovery"
                },
                position(e.onset_bytes as f64 / 1e9),
                e.cause.as_str(),
                e.j_per_gb_before.text(1.0, 2, "J/GB"),
                e.j_per_gb_after.text(1.0, 2, "J/GB"),
            ));
        }
    }
    match &h.thermal_fit {
        None => {}
        Some(Err(why)) => out.push(format!("enclosure thermal fit: none ({why})")),
        Some(Ok(f)) => {
            out.push(f.text());
            out.extend(f.prediction_text());
        }
    }
    out
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
    type Row = (
        &'static str,
        fn(&hostd_records::events::PhaseStats) -> String,
    );
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
        if let Some(line) = too_little_line(a) {
            let _ = writeln!(s, "  {line}");
        } else if a.events.is_empty() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use hostd_records::{FileRecord, RunData};

    /// The `quick` profile's shape: 12 files of 2–64 MB written in 0.24 s, then read.
    fn quick() -> RunData {
        let mut files = Vec::new();
        let mut t = 0i64;
        for phase in ["write", "read"] {
            for i in 0..12u64 {
                let bytes = (2 + i * 5) * 1_000_000;
                let d = 20_000_000;
                files.push(FileRecord::new(
                    "/var/tmp/x",
                    phase,
                    i as u32,
                    (t) as u64,
                    (t + d) as u64,
                    bytes,
                ));
                t += d;
            }
        }
        RunData {
            files,
            ..Default::default()
        }
    }

    #[test]
    fn a_long_event_line_goes_on_over_indented_lines_at_its_separators() {
        // The line a quick run on a fresh machine printed: 163 characters.
        let line = "target read recovered at 121 MB (2.7 s) [98–181 MB, 2.4–3.1 s], 64.8 MB/s → 0.14 GB/s, p = 0.002, enclosure 25 °C, bus power 6.9 → 6.9 W: unknown (confidence 0.00)";
        let lines = wrapped(line, LINE_WIDTH);
        assert_eq!(lines.len(), 2, "{lines:#?}");
        assert!(lines.iter().all(|l| l.chars().count() <= LINE_WIDTH));
        assert!(lines[1].starts_with(CONTINUATION) && !lines[0].starts_with(' '));
        assert!(lines[0].ends_with(','), "{lines:#?}");
        // Nothing lost or reordered: joined back it is the line.
        let joined = lines.join(" ").replace(&format!(", {CONTINUATION}"), ", ");
        assert_eq!(joined, line);
        // A short line stays one line; a part wider than the width stays whole.
        assert_eq!(wrapped("a, b", LINE_WIDTH), vec!["a, b"]);
        assert_eq!(wrapped("abcdef, gh", 4), vec!["abcdef,", "    gh"]);
    }

    #[test]
    fn a_run_too_short_to_tell_says_so_in_one_line_and_claims_no_event() {
        let a = crate::analyze(&quick(), &crate::Options::default());
        assert!(a.events.is_empty());
        let text = text(&a);
        assert_eq!(phase_lines(&a).len(), 2);
        let lines = finding_lines(&a, true);
        assert_eq!(
            lines,
            ["too little data to detect throttling: write 12 files, 0.24 s; read 12 files, 0.24 s"],
            "{text}"
        );
    }

    #[test]
    fn slow_rates_and_positions_keep_their_digits() {
        assert_eq!(rate(2.31e9), "2.31 GB/s");
        assert_eq!(rate(0.66e9), "0.66 GB/s");
        assert_eq!(rate(23.8e6), "23.8 MB/s");
        assert_eq!(rate(12.04e6), "12.0 MB/s");
        assert_eq!(position(23.94), "23.9 GB");
        assert_eq!(position(0.6004), "600 MB");
        assert_eq!(
            onset_interval([23.8, 24.0], [10.3, 10.5]),
            "[23.8–24.0 GB, 10.3–10.5 s]"
        );
        assert_eq!(
            onset_interval([0.5962, 0.6121], [24.6, 25.3]),
            "[596–612 MB, 24.6–25.3 s]"
        );
    }
}
