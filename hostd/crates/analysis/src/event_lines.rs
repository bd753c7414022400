//! Human-readable lines: one per event, and the terminal summary of a whole analysis.

use hostd_records::cause::EventKind;
use hostd_records::events::{Analysis, Event, PhaseStats};
use hostd_records::headline::SeriesHeadline;
use hostd_records::published::Kind;
use std::fmt::Write;

/// A rate as every output writes it ([`Kind::Rate`]): "2.31 GB/s", "23.8 MB/s".
fn rate(bps: f64) -> String {
    Kind::Rate.text(bps)
}

/// A position in the data written as every output writes it ([`Kind::Data`]), from GB.
fn position(gb: f64) -> String {
    Kind::Data.text(gb * 1e9)
}

/// The onset interval "[23.8–24.0 GB, 10.3–10.5 s]", in the unit of its upper end.
fn onset_interval(gb: [f64; 2], s: [f64; 2]) -> String {
    let u = Kind::Data.unit(gb[1] * 1e9);
    let t = Kind::Seconds.unit(s[1]);
    format!(
        "[{}–{} {}, {}–{} {}]",
        u.num(gb[0] * 1e9),
        u.num(gb[1] * 1e9),
        u.name,
        t.num(s[0]),
        t.num(s[1]),
        t.name
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
/// 23.9 GB (10.4 s) [23.8–24.0 GB, 10.3–10.5 s], 2.31 GB/s → 0.66 GB/s, p < 0.001,
/// enclosure 61.2 °C, bus power 6.93 → 4.12 W: thermal (confidence 0.90)".
pub fn event_line(e: &Event) -> String {
    let ev = &e.evidence;
    let interval = onset_interval(ev.onset_interval_gb, ev.onset_interval_s);
    let mut s = if let (EventKind::Stall, Some(st)) = (e.kind, &e.stall) {
        let (lo, hi) = st
            .durations_s
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(a, b), &d| (a.min(d), b.max(d)));
        format!(
            "{} {} stalled {} time{} from {} ({}) {interval}: {}–{} each{}, {} while stalled against {} typical, {}",
            e.target,
            e.phase,
            st.count,
            if st.count == 1 { "" } else { "s" },
            position(ev.onset_gb),
            Kind::Seconds.text(ev.onset_s),
            Kind::Seconds.num(lo),
            Kind::Seconds.text(hi),
            st.period_s.map_or(String::new(), |p| format!(", every {}", Kind::Seconds.text(p))),
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
            "{} {} {verb} {} ({}) {interval}{settle}, {} → {}, {}",
            e.target,
            e.phase,
            position(ev.onset_gb),
            Kind::Seconds.text(ev.onset_s),
            rate(e.rate_before_bps),
            rate(e.rate_after_bps),
            strength(e)
        )
    };
    if let Some(t) = ev.temp_at_onset_c {
        let _ = write!(s, ", enclosure {}", Kind::Temperature.text(t));
    }
    if let (Some(a), Some(b)) = (ev.power_before_w, ev.power_after_w) {
        let _ = write!(
            s,
            ", bus power {} → {}",
            Kind::Power.num(a),
            Kind::Power.text(b)
        );
    }
    if let (Some(t), Some(lag)) = (&ev.other_target, ev.lag_after_other_end_s) {
        let _ = write!(s, ", {lag:.1} s after {t} finished");
    }
    let _ = write!(s, ": {}", e.cause.with_confidence(e.confidence));
    s
}

/// The indent of an event's deciding signs under its line.
pub const SIGN_INDENT: &str = "  ";

/// An event as the terminal shows it: its line, then its deciding signs
/// (`evidence.deciding`, at most four), each broken over lines as [`wrapped`]; the full
/// list stays in `--json` and the report's fold.
pub fn event_lines(e: &Event) -> Vec<String> {
    let mut out = wrapped(&event_line(e), LINE_WIDTH);
    for sign in &e.evidence.deciding {
        out.extend(wrapped(&format!("{SIGN_INDENT}{sign}"), LINE_WIDTH));
    }
    out
}

/// One line for the run per source of evidence some event could not read (the OS log, the
/// probe, the port's budget), naming the targets when not all events are theirs.
pub fn unread_lines(a: &Analysis) -> Vec<String> {
    let mut targets: Vec<&str> = a.events.iter().map(|e| e.target.as_str()).collect();
    targets.sort_unstable();
    targets.dedup();
    hostd_records::events::unread_sources(&a.events)
        .into_iter()
        .map(|(source, of)| {
            let words = source.words();
            if of.len() < targets.len() {
                format!("{words} (events of {})", of.join(", "))
            } else {
                words.to_string()
            }
        })
        .collect()
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

/// One line per target and phase: files, data, time and the rate statistics, led by the
/// average (bytes / time, the headline's), with a bimodality warning only where no event
/// explains the two groups of rates (broken over lines as [`wrapped`]).
pub fn phase_lines(a: &Analysis) -> Vec<String> {
    a.phases
        .iter()
        .flat_map(|p| {
            let line = format!(
                "{} {}: {} files, {} in {} — average {}, mean of files {}, median {}, 20% trimmed {}, Theil–Sen {}{}",
                p.target,
                p.phase,
                p.files,
                Kind::Data.text(p.bytes as f64),
                Kind::Seconds.text(p.seconds),
                rate(p.throughput_bps),
                rate(p.mean_bps),
                rate(p.median_bps),
                rate(p.trimmed_mean_bps),
                p.theil_sen_bps.map_or("–".into(), rate),
                levels_note(p)
            );
            wrapped(&line, LINE_WIDTH)
        })
        .collect()
}

/// What a phase's line adds about two groups of per-file rates: a warning where they are
/// two modes, the event that splits them where they are two levels in time.
fn levels_note(p: &PhaseStats) -> String {
    match (p.bimodal, &p.levels_explained_by) {
        (false, _) => String::new(),
        (true, None) => " — BIMODAL: averages mislead".into(),
        (true, Some(by)) => format!(" — two levels in time, before and after {by}"),
    }
}

/// What the analysis found: the events (or why none could be looked for), the cycles, the
/// all-active window when `window` (`hostd run` prints it in its own table), the recovery
/// lags and the headline figures.
pub fn finding_lines(a: &Analysis, window: bool) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(line) = too_little_line(a) {
        // Nothing to say about drops; what the probe measured still holds.
        out.push(line);
        for s in &a.headlines.series {
            out.extend(
                probe_lines(a, s)
                    .iter()
                    .flat_map(|l| wrapped(l, LINE_WIDTH)),
            );
        }
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
    for e in &a.events {
        out.extend(event_lines(e));
    }
    out.extend(unread_lines(a));
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
    out.extend(headline_lines(a));
    out
}

/// The headline lines of the summary: per target and phase the reviewers' figures — the
/// average and sustained rate; the data and time before the first drop, the rate after it
/// and its cause (the SLC cache's size and the rate after it where the cause is the
/// cache, the first thermal throttle where it came later); the phase's energy, power and
/// enclosure figures; the J/GB around each event — and the enclosure's thermal fit
/// (docs/methodology.md). A series too short to look at gets no line that would only
/// claim that nothing happened.
pub fn headline_lines(a: &Analysis) -> Vec<String> {
    let h = &a.headlines;
    let mut out = Vec::new();
    for s in &h.series {
        let examined = !a
            .insufficient
            .iter()
            .any(|i| i.target == s.target && i.phase == s.phase);
        let mut lines = vec![format!(
            "{} {} headline: average {}, sustained (median of the last third) {}",
            s.target,
            s.phase,
            s.average_bps.text(Kind::Rate),
            s.sustained_bps.text(Kind::Rate)
        )];
        if examined || s.drop_cause.is_some() {
            lines.push(format!("{} {}: {}", s.target, s.phase, drop_text(s)));
        }
        lines.extend(probe_lines(a, s));
        for e in &s.energy {
            lines.push(format!(
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
                e.j_per_gb_before.text(Kind::JPerGb),
                e.j_per_gb_after.text(Kind::JPerGb),
            ));
        }
        out.extend(lines.iter().flat_map(|l| wrapped(l, LINE_WIDTH)));
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

/// The probed phase's energy, power and enclosure figures in one line, and its bus power
/// against the port's budget in another (where a budget is known or VBUS sagged); none for
/// a phase the probe did not measure.
fn probe_lines(a: &Analysis, s: &SeriesHeadline) -> Vec<String> {
    let mut lines = Vec::new();
    if s.j_per_gb.get().is_some() || s.peak_power_w.get().is_some() {
        lines.push(format!(
            "{} {} energy {}, bus power mean {}, peak {} (highest 1 s mean), enclosure max {} (1 s mean)",
            s.target,
            s.phase,
            s.j_per_gb.text(Kind::JPerGb),
            s.mean_power_w.text(Kind::Power),
            s.peak_power_w.text(Kind::Power),
            s.enclosure_max_c.text(Kind::Temperature),
        ));
    }
    let port = a
        .phases
        .iter()
        .find(|p| p.target == s.target && p.phase == s.phase)
        .and_then(|p| p.port.as_ref())
        .and_then(hostd_records::port_figures::text);
    lines.extend(port.map(|t| format!("{} {}: {t}", s.target, s.phase)));
    lines
}

/// What writes (reads) of a phase are called in a headline: "writes", "reads", else "the
/// rate".
pub fn what_falls(phase: &str) -> &'static str {
    if phase.contains("write") {
        "writes"
    } else if phase.contains("read") {
        "reads"
    } else {
        "the rate"
    }
}

/// The first drop as reviews print it, whatever its cause: "writes fall after 23.9 GB
/// [23.8–24.0] (10.4 s [10.3–10.5]) to 0.66 GB/s [0.65–0.67]: thermal (confidence 0.90)";
/// then the SLC cache's size and the rate after it where the cache is a cause, and the
/// first thermal throttle where it is not the first drop. "no drop in 100.0 GB" (or the
/// reason) without one.
pub fn drop_text(s: &SeriesHeadline) -> String {
    let (Some(cause), Some(_)) = (s.drop_cause, s.drop_bytes.get()) else {
        return s
            .drop_bytes
            .absent_reason()
            .unwrap_or("no drop")
            .to_string();
    };
    let mut t = format!(
        "{} fall after {} ({}) to {}: {}",
        what_falls(&s.phase),
        s.drop_bytes.text(Kind::Data),
        s.drop_s.text(Kind::Seconds),
        s.after_drop_bps.text(Kind::Rate),
        cause.with_confidence(s.drop_confidence.unwrap_or(0.0))
    );
    if s.slc_cache_bytes.get().is_some() {
        let _ = write!(
            t,
            "; SLC cache {}, then {}",
            s.slc_cache_bytes.text(Kind::Data),
            s.post_cache_bps.text(Kind::Rate)
        );
    }
    if s.throttle_bytes.get().is_some() && s.throttle_bytes != s.drop_bytes {
        let _ = write!(
            t,
            "; thermal throttle after {} at {}, then {}",
            s.throttle_s.text(Kind::Seconds),
            s.throttle_bytes.text(Kind::Data),
            s.throttled_bps.text(Kind::Rate)
        );
    }
    t
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
