//! Attribution of a drop or recovery to thermal throttling, an exhausted SLC cache,
//! contention for a shared link or a failing link (the OS logged it) or the host port's power, and of stalls to the
//! latter, with the evidence in numbers and words.
//! Rules and weights are documented in docs/methodology.md.
//!
//! Each cause's rules live in a file of their own behind [`CauseRule`] (the way
//! tokio-console keeps one struct per warning); [`RULES`] lists them. A new cause is one
//! file here, one line in [`RULES`], and its `Cause` variant in `hostd-records`; its score
//! goes into the event's `Scores` under that variant.
//!
//! The rules read one set of facts per event ([`Facts`], gathered in `evidence.rs`: the
//! probe's figures, the OS log's window in `log_window.rs`, the host port in
//! `port_facts.rs`) and never call each other. Where one cause explains another's signs
//! (the port holding a drive explains the SLC cache's held power), its rule declares it
//! beside itself ([`CauseRule::explains_away`]) and [`weigh`] applies it, after every rule
//! has scored.

mod contention;
mod evidence;
mod facts;
mod link;
mod log_window;
mod port_facts;
mod power;
mod signal;
mod signs;
mod slc_cache;
mod stall_event;
mod thermal;

pub use signal::rate_in_window;
pub use stall_event::stall_event;

pub use facts::Facts;

use crate::detect::Change;
use crate::series::Series;
use hostd_records::cause::Cause;
use hostd_records::events::{Event, Evidence, Source};
use hostd_records::ProbeSeries;
use signs::Signs;

const NS: f64 = 1e9;
/// A cause needs at least this score; below it the event is `unknown`.
const MIN_SCORE: f64 = 0.5;

/// What the attribution may look at besides the change itself.
pub struct Context<'a> {
    /// All series of the run (for other targets' activity).
    pub all: &'a [Series],
    /// Probe samples, when the probe measured this event's target.
    pub probe: Option<&'a ProbeSeries>,
    /// First file start of the run, host ns.
    pub run_start_ns: i64,
    /// Link ceiling, bytes/s, and whether the user gave it (else: the peak aggregate over
    /// whole seconds of the run, when at least 5 were measured).
    pub link_ceiling: Option<(f64, bool)>,
    /// The drive's own (SMART) temperature readings of this target, (host ns, °C), in time
    /// order (`drive_temp.csv`), when polled.
    pub drive_temp: Option<&'a [(i64, f64)]>,
    /// The drive's own thermal record of this target (NVMe thermal counters, SATA SCT
    /// status) in time order (`drive_log.csv`), when polled.
    pub drive_log: Option<&'a [hostd_records::drive_log::DriveLogRecord]>,
    /// What the operating system logged about the storage path (`os-log.jsonl`), in time
    /// order, when its log was read.
    pub os_log: Option<&'a [hostd_records::os_log::OsLogRecord]>,
    /// The host port's power budget over the run (the probe's CC reading and its changes,
    /// or `--port-budget`), when recorded.
    pub port_budget: Option<&'a hostd_records::port_budget::BudgetTimeline>,
}

impl Context<'_> {
    /// The port's budget in force at host time `t_ns`, W, when known.
    pub fn budget_at(&self, t_ns: i64) -> Option<f64> {
        self.port_budget?.at(t_ns)
    }
}

/// One cause's rules: each checks the facts and evidence, adds its weight when met, and says
/// why in a ✓/✗ line.
pub trait CauseRule: Sync {
    /// The cause these rules argue for.
    fn cause(&self) -> Cause;
    /// Checks the rules into `checks`; may fill in evidence figures the rules measure.
    fn score(&self, facts: &Facts, ev: &mut Evidence, checks: &mut Checks);
    /// Whether these rules can explain stalls (else a stall event gets a ✗ line saying so).
    fn weighs_stalls(&self) -> bool {
        false
    }
    /// The other causes whose signs this cause explains when its facts show it, applied in
    /// [`weigh`] after every rule has scored.
    fn explains_away(&self) -> &'static [ExplainsAway] {
        &[]
    }
}

/// One cause explaining another's signs away: when [`ExplainsAway::when`] gives a reason,
/// [`ExplainsAway::weight`] comes off [`ExplainsAway::cause`]'s score (which stays ≥ 0),
/// with a ✗ line under that cause saying why.
pub struct ExplainsAway {
    /// The cause whose signs are explained.
    pub cause: Cause,
    /// What comes off its score.
    pub weight: f64,
    /// Why, when the event's facts show it; `None`: it does not apply.
    pub when: fn(&Facts) -> Option<String>,
}

/// The causes weighed, in the order their reasons are listed and ties are broken.
pub const RULES: &[&dyn CauseRule] = &[
    &thermal::Thermal,
    &slc_cache::SlcCache,
    &contention::Contention,
    &link::Link,
    &power::Power,
];

/// The running score of one cause and the event's signs its rules write to.
pub struct Checks<'a> {
    score: f64,
    signs: &'a mut Signs,
    cause: Cause,
}

impl Checks<'_> {
    /// One rule: adds `weight` when `met`, and a ✓/✗ line with `words`.
    pub fn check(&mut self, weight: f64, met: bool, words: String) {
        if met {
            self.score += weight;
        }
        self.signs.rule(self.cause, weight, met, &words);
    }

    /// A sign against the cause: takes `weight` off (the score stays ≥ 0), with a ✗ line
    /// with `words`.
    pub fn against(&mut self, weight: f64, words: String) {
        self.score = (self.score - weight).max(0.0);
        self.signs.against(self.cause, weight, &words);
    }

    /// A rule that could not be checked: a ✗ line with `words`, no weight.
    pub fn cannot(&mut self, words: String) {
        self.signs.rule(self.cause, 0.0, false, &words);
    }

    /// A rule that could not be checked because `source` was not read: said once for the
    /// run ([`hostd_records::events::unread_sources`]), not as a line of this event.
    pub fn unread(&mut self, source: Source) {
        self.signs.unread(source);
    }
}

/// Attributes one change and builds its event: every cause's rules are scored, and the
/// best-scoring cause wins if it scores at least `MIN_SCORE` (0.5).
pub fn attribute(
    series: &Series,
    change: &Change,
    ctx: &Context,
    next_onset_ns: Option<i64>,
    later: &[Change],
) -> Event {
    let (facts, ev, signs) = evidence::gather(series, change, ctx, next_onset_ns, later);
    with_text(weigh(facts, ev, signs))
}

/// Scores every cause's rules on `facts`, applies what each cause explains away, chooses
/// the cause and its deciding signs, and builds the event (without its text).
fn weigh(facts: Facts, mut ev: Evidence, mut signs: Signs) -> Event {
    let stall = facts.stalls.is_some();
    let mut scored: Vec<(Cause, f64)> = RULES
        .iter()
        .map(|rule| {
            let mut checks = Checks {
                score: 0.0,
                signs: &mut signs,
                cause: rule.cause(),
            };
            if stall && !rule.weighs_stalls() {
                checks.cannot("not weighed for stalls".into());
            } else {
                rule.score(&facts, &mut ev, &mut checks);
            }
            (rule.cause(), checks.score)
        })
        .collect();
    explain_away(&facts, &mut scored, &mut signs);
    ev.scores = scored.iter().copied().collect();
    // A stall's rules (link at half of its stalls or more) carry their own bar.
    let bar = if stall { f64::MIN_POSITIVE } else { MIN_SCORE };
    let (cause, confidence) = choose(&scored, bar);
    signs.into_evidence(&mut ev, cause, ranked(&scored).first().copied(), bar);
    change_event(facts.series, facts.change, cause, confidence, ev)
}

/// Takes off each cause's score what another cause explains of it ([`CauseRule::explains_away`]),
/// where the explained cause scored at all, with a ✗ line under it.
fn explain_away(facts: &Facts, scored: &mut [(Cause, f64)], signs: &mut Signs) {
    for rule in RULES {
        for e in rule.explains_away() {
            let Some(s) = scored.iter_mut().find(|s| s.0 == e.cause && s.1 > 0.0) else {
                continue;
            };
            if let Some(why) = (e.when)(facts) {
                s.1 = (s.1 - e.weight).max(0.0);
                signs.against(
                    e.cause,
                    e.weight,
                    &format!("{why} (explained by {})", rule.cause().as_str()),
                );
            }
        }
    }
}

/// The causes by score, best first (ties in the order of [`RULES`]).
fn ranked(scored: &[(Cause, f64)]) -> Vec<(Cause, f64)> {
    let mut ranked = scored.to_vec();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
    ranked
}

/// The cause and confidence: the best score if at least `min_score`, less half the
/// runner-up's; else `unknown`.
fn choose(scored: &[(Cause, f64)], min_score: f64) -> (Cause, f64) {
    match ranked(scored).as_slice() {
        [(cause, best), rest @ ..] if *best >= min_score => {
            let second = rest.first().map_or(0.0, |r| r.1);
            (*cause, (best - 0.5 * second).clamp(0.0, 1.0))
        }
        _ => (Cause::Unknown, 0.0),
    }
}

/// The event of an attributed change.
fn change_event(
    series: &Series,
    change: &Change,
    cause: Cause,
    confidence: f64,
    evidence: Evidence,
) -> Event {
    Event {
        target: series.target.clone(),
        phase: series.phase.clone(),
        kind: change.kind,
        onset_bytes: change.onset.bytes,
        onset_ns: change.onset.ns,
        onset_bytes_low: change.onset.bytes_range.0,
        onset_bytes_high: change.onset.bytes_range.1,
        onset_ns_low: change.onset.ns_range.0,
        onset_ns_high: change.onset.ns_range.1,
        p_value: change.p_value,
        permutations: change.permutations,
        gradual: change.gradual,
        settle_bytes: change.settle_bytes,
        settle_ns: change.settle_ns,
        rate_before_bps: change.rate_before_bps,
        rate_after_bps: change.rate_after_bps,
        relative_change: change.rate_after_bps / change.rate_before_bps.max(1.0) - 1.0,
        stall: None,
        found_by: hostd_records::events::FoundBy {
            view: change.view,
            other_view: String::new(),
        },
        cause,
        confidence: (confidence * 100.0).round() / 100.0,
        evidence,
    }
}

/// A rise at the start of a series (a drive waking from a low-power state) as the warm-up
/// it is: kind `warm_up`, no cause.
pub fn as_warm_up(mut event: Event) -> Event {
    event.kind = hostd_records::cause::EventKind::WarmUp;
    event.cause = Cause::Unknown;
    event.confidence = 0.0;
    let why = "warm-up: the series' first change, a rise in its first tenth of the bytes, with no cause: the drive came up to speed";
    event.evidence.reasons.push(why.into());
    event.evidence.deciding = vec![why.into()];
    with_text(event)
}

/// `event` with its one-line text (`evidence.text`) written from its figures.
fn with_text(mut event: Event) -> Event {
    event.evidence.text = crate::event_lines::event_line(&event);
    event
}

#[cfg(test)]
mod tests {
    use super::*;
    use hostd_records::cause::EventKind;

    /// A context from `run_start_ns` 0 with no link ceiling and no drive temperature.
    pub(super) fn ctx<'a>(all: &'a [Series], probe: Option<&'a ProbeSeries>) -> Context<'a> {
        Context {
            all,
            probe,
            run_start_ns: 0,
            link_ceiling: None,
            drive_temp: None,
            drive_log: None,
            os_log: None,
            port_budget: None,
        }
    }
    use hostd_records::FileRecord;

    const GB: u64 = 1_000_000_000;

    /// 40 files of 1 GB at 1.5 GB/s, then 40 at 1.0 GB/s, starting at `t0` ns.
    pub(super) fn drop_series(target: &str, t0: i64) -> (Series, Change) {
        let mut t = t0;
        let files: Vec<FileRecord> = (0..80)
            .map(|i| {
                let rate = if i < 40 { 1.5 } else { 1.0 };
                let d = (1e9 / rate) as i64;
                let f = FileRecord::new(target, "write", i as u32, (t) as u64, (t + d) as u64, GB);
                t += d;
                f
            })
            .collect();
        let s = crate::series::group(&files).remove(0);
        let onset = s.files[40].start_ns as i64;
        let c = Change {
            kind: EventKind::Drop,
            onset: crate::onset::Onset {
                bytes: 40 * GB,
                ns: onset,
                bytes_range: (40 * GB, 40 * GB),
                ns_range: (onset, onset),
            },
            settle_bytes: 40 * GB,
            settle_ns: onset,
            gradual: false,
            p_value: 0.001,
            permutations: 999,
            view: hostd_records::events::View::PerFile,
            rate_before_bps: 1.5e9,
            rate_after_bps: 1.0e9,
            before_ns: (s.start_ns(), onset),
            after_ns: (onset, s.end_ns()),
        };
        (s, c)
    }

    /// A probe at 100 Hz with constant power and a temperature `temp(t_s)` (±0.05 °C noise).
    pub(super) fn probe(t0: i64, secs: f64, power: f64, temp: impl Fn(f64) -> f64) -> ProbeSeries {
        let mut p = ProbeSeries::default();
        let n = (secs * 100.0) as i64;
        for k in 0..n {
            let ts = k as f64 / 100.0;
            p.time_ns.push(t0 + k * 10_000_000);
            p.power_w.push(power);
            p.enclosure_temp_c
                .push(temp(ts) + 0.05 * ((k * 7919 % 13) as f64 / 6.0 - 1.0));
        }
        p
    }

    /// 80 s of probe samples from −1 s at 8 W that fall to 5 W after `onset_ns`, the
    /// enclosure following `temp`.
    pub(super) fn power_falls_after(onset_ns: i64, temp: impl Fn(f64) -> f64) -> ProbeSeries {
        let mut p = probe(-1_000_000_000, 80.0, 8.0, temp);
        for (k, t) in p.time_ns.clone().iter().enumerate() {
            if *t > onset_ns {
                p.power_w[k] = 5.0;
            }
        }
        p
    }

    #[test]
    fn a_flat_enclosure_is_no_thermal_evidence_and_no_plateau() {
        let (s, c) = drop_series("x", 0);
        // Bus power follows throughput (8 → 5 W with ×0.67): no SLC signature either.
        let p = power_falls_after(c.onset.ns, |_| 25.0);
        let all = vec![s.clone()];
        let ctx = ctx(&all, Some(&p));
        let e = attribute(&s, &c, &ctx, None, &[]);
        assert_eq!(e.cause, Cause::Unknown, "{:#?}", e.evidence.reasons);
        assert_eq!(e.confidence, 0.0);
        assert_eq!(e.evidence.scores.get(Cause::Thermal), 0.0);
        assert_eq!(e.evidence.temp_plateau_fraction, None);
        assert!(
            e.evidence
                .reasons
                .iter()
                .any(|r| r.contains("no thermal evidence")),
            "{:#?}",
            e.evidence.reasons
        );
        assert!(!e.evidence.text.contains("thermal"), "{}", e.evidence.text);
    }

    #[test]
    fn a_cache_running_out_on_a_cool_drive_is_slc_cache_never_thermal() {
        // Flat enclosure (no heat), bus power held at 6 W while the rate falls ×0.67:
        // energy per byte ×1.5, a sudden drop at 40 GB, no recovery.
        let (s, c) = drop_series("x", 0);
        let p = probe(-1_000_000_000, 80.0, 6.0, |_| 25.0);
        let all = vec![s.clone()];
        let ctx = ctx(&all, Some(&p));
        let e = attribute(&s, &c, &ctx, None, &[]);
        assert_eq!(e.cause, Cause::SlcCache, "{:#?}", e.evidence.reasons);
        assert!(e.confidence >= 0.8, "{}", e.confidence);
        assert_eq!(e.evidence.scores.get(Cause::Thermal), 0.0);
        let (jb, ja) = (
            e.evidence.j_per_gb_before.unwrap(),
            e.evidence.j_per_gb_after.unwrap(),
        );
        assert!((ja / jb - 1.5).abs() < 0.05, "{jb} → {ja}");
        assert!(
            e.evidence
                .reasons
                .iter()
                .any(|r| r.starts_with("✓ slc_cache: energy per byte")),
            "{:#?}",
            e.evidence.reasons
        );
        assert!(!e.evidence.text.contains("thermal"), "{}", e.evidence.text);
        // The same drop recovering fully later while writing goes on: weak SLC evidence,
        // a lower score (here below the bar: unknown).
        let mut back = c.clone();
        back.kind = EventKind::Recovery;
        back.onset.bytes = 60 * GB;
        back.rate_before_bps = 1.0e9;
        back.rate_after_bps = 1.5e9;
        let r = attribute(&s, &c, &ctx, None, &[back]);
        assert!(
            r.evidence.scores.get(Cause::SlcCache)
                <= e.evidence.scores.get(Cause::SlcCache) - 0.4 + 1e-9,
            "{} vs {}",
            r.evidence.scores.get(Cause::SlcCache),
            e.evidence.scores.get(Cause::SlcCache)
        );
        assert_ne!(r.cause, Cause::Thermal);
        assert!(
            r.evidence
                .reasons
                .iter()
                .any(|l| l.contains("full recovery") && l.contains("weak SLC evidence")),
            "{:#?}",
            r.evidence.reasons
        );
    }

    #[test]
    fn a_warming_enclosure_at_its_plateau_is_thermal() {
        let (s, c) = drop_series("x", 0);
        // Warms 40 → 60 °C until the onset (~26.7 s), then held; power falls after it.
        let onset_s = c.onset.ns as f64 * 1e-9;
        let p = power_falls_after(c.onset.ns, |t| 40.0 + 20.0 * (t / onset_s).clamp(0.0, 1.0));
        let all = vec![s.clone()];
        let ctx = ctx(&all, Some(&p));
        let e = attribute(&s, &c, &ctx, None, &[]);
        assert_eq!(e.cause, Cause::Thermal, "{:#?}", e.evidence.reasons);
        assert!(e.evidence.temp_rise_c.unwrap() > 15.0);
    }

    #[test]
    fn a_drive_at_its_own_plateau_makes_a_still_warming_enclosure_thermal() {
        let (s, c) = drop_series("x", 0);
        // The enclosure warms 40 → 60 °C over the whole run (still rising at the onset);
        // power falls after the onset.
        let end_s = s.end_ns() as f64 * 1e-9;
        let onset_s = c.onset.ns as f64 * 1e-9;
        let p = power_falls_after(c.onset.ns, |t| 40.0 + 20.0 * (t / end_s).clamp(0.0, 1.0));
        let all = vec![s.clone()];
        let mut ctx = Context {
            all: &all,
            probe: Some(&p),
            run_start_ns: 0,
            link_ceiling: None,
            drive_temp: None,
            drive_log: None,
            os_log: None,
            port_budget: None,
        };
        let without = attribute(&s, &c, &ctx, None, &[]);
        assert_ne!(
            without.cause,
            Cause::Thermal,
            "{:#?}",
            without.evidence.reasons
        );
        // The controller, read once a second in whole degrees, reached 75 °C at the onset
        // and held there.
        let drive: Vec<(i64, f64)> = (0..80)
            .map(|k| {
                let t = k as f64;
                let v = 45.0 + 30.0 * (t / onset_s).min(1.0);
                ((t * 1e9) as i64, v.round())
            })
            .collect();
        ctx.drive_temp = Some(&drive);
        let with = attribute(&s, &c, &ctx, None, &[]);
        assert_eq!(with.cause, Cause::Thermal, "{:#?}", with.evidence.reasons);
        let ev = &with.evidence;
        // Readings within ±2 s of the onset: the last of the climb and the held 75 °C.
        assert!((73.0..=75.0).contains(&ev.drive_temp_at_onset_c.unwrap()));
        assert!(ev.drive_temp_rise_c.unwrap() >= 29.0);
        assert!(ev.drive_temp_plateau_fraction.unwrap() >= 0.95);
        assert!(ev.drive_temp_slope_after_c_per_s.unwrap().abs() < 0.005);
        assert!(
            ev.reasons
                .iter()
                .any(|r| r.contains("✓") && r.contains("drive (SMART)")),
            "{:#?}",
            ev.reasons
        );
    }

    /// A record of the OS's log at `t` ns: a USB reset of `target`'s bridge, or of
    /// another device when `target` is `None`.
    pub(super) fn usb_reset(t: i64, target: Option<&str>) -> hostd_records::os_log::OsLogRecord {
        hostd_records::os_log::OsLogRecord {
            time_ns: t,
            kind: hostd_records::os_log::OsLogKind::LinkReset,
            target: target.map(str::to_string),
            device: Some("2-1".into()),
            source: "kernel".into(),
            line: "usb 2-1: reset SuperSpeed USB device number 3 using xhci_hcd".into(),
        }
    }

    #[test]
    fn a_drop_that_begins_with_a_logged_reset_of_its_link_is_link_with_the_line() {
        let (s, c) = drop_series("x", 0);
        let all = vec![s.clone()];
        // 1.2 s before the onset: inside the 5 s before it.
        let log = [usb_reset(c.onset.ns - 1_200_000_000, Some("x"))];
        let e = attribute(
            &s,
            &c,
            &Context {
                os_log: Some(&log),
                ..ctx(&all, None)
            },
            None,
            &[],
        );
        assert_eq!(e.cause, Cause::Link, "{:#?}", e.evidence.reasons);
        assert!(e.confidence >= 0.85, "{}", e.confidence);
        assert_eq!(e.evidence.scores.get(Cause::Link), link::WEIGHT);
        assert_eq!(
            e.evidence.os_log,
            ["-1.200 s link_reset: usb 2-1: reset SuperSpeed USB device number 3 using xhci_hcd"]
        );
        assert!(e.evidence.text.contains("link"), "{}", e.evidence.text);
    }

    #[test]
    fn a_reset_of_another_device_or_outside_the_window_is_context_not_a_cause() {
        let (s, c) = drop_series("x", 0);
        let all = vec![s.clone()];
        let other = [usb_reset(c.onset.ns, None)];
        let e = attribute(
            &s,
            &c,
            &Context {
                os_log: Some(&other),
                ..ctx(&all, None)
            },
            None,
            &[],
        );
        assert_eq!(e.cause, Cause::Unknown, "{:#?}", e.evidence.reasons);
        assert!(e.evidence.os_log.is_empty());
        assert!(
            e.evidence
                .reasons
                .iter()
                .any(|r| r.contains("another or an unknown device (context, no weight)")),
            "{:#?}",
            e.evidence.reasons
        );
        // The target's own reset, but 6 s before the onset or 3 s after it.
        for dt in [-6_000_000_000, 3_000_000_000] {
            let late = [usb_reset(c.onset.ns + dt, Some("x"))];
            let e = attribute(
                &s,
                &c,
                &Context {
                    os_log: Some(&late),
                    ..ctx(&all, None)
                },
                None,
                &[],
            );
            assert_eq!(e.cause, Cause::Unknown, "{dt}: {:#?}", e.evidence.reasons);
        }
        // No log read: said once for the run (the event names the source), not as a line
        // of its own.
        let e = attribute(&s, &c, &ctx(&all, None), None, &[]);
        assert_eq!(e.evidence.unread, [Source::OsLog, Source::Probe]);
        assert!(
            !e.evidence.reasons.iter().any(|r| r.contains("not read")),
            "{:#?}",
            e.evidence.reasons
        );
    }

    #[test]
    fn without_a_probe_or_other_targets_the_cause_is_unknown() {
        let (s, c) = drop_series("x", 0);
        let all = vec![s.clone()];
        let ctx = Context {
            link_ceiling: crate::overlap::peak_aggregate_bps(&all).map(|c| (c, false)),
            ..ctx(&all, None)
        };
        let e = attribute(&s, &c, &ctx, None, &[]);
        assert_eq!((e.cause, e.confidence), (Cause::Unknown, 0.0));
    }

    #[test]
    fn a_short_run_has_no_link_ceiling_and_no_figure_exceeds_one() {
        // Under 5 whole seconds: the ceiling is unknown.
        let short: Vec<FileRecord> = (0..12)
            .map(|i| {
                FileRecord::new(
                    "q",
                    "write",
                    i as u32,
                    (i as i64 * 20_000_000) as u64,
                    ((i as i64 + 1) * 20_000_000) as u64,
                    28_000_000,
                )
            })
            .collect();
        assert_eq!(
            crate::overlap::peak_aggregate_bps(&crate::series::group(&short)),
            None
        );
        // Two targets: A drops while B runs; whatever the bins, the aggregate is ≤ 100 %.
        let (a, c) = drop_series("A", 0);
        let (b, _) = drop_series("B", 0);
        let all = vec![a.clone(), b];
        let ceiling = crate::overlap::peak_aggregate_bps(&all).unwrap();
        let ctx = Context {
            link_ceiling: Some((ceiling * 0.5, false)),
            ..ctx(&all, None)
        };
        let e = attribute(&a, &c, &ctx, None, &[]);
        let agg = e.evidence.aggregate_bps.unwrap();
        let used = e.evidence.link_ceiling_bps.unwrap();
        assert!(agg <= used * (1.0 + 1e-9), "{agg} > {used}");
        assert!(
            !e.evidence.reasons.iter().any(|r| {
                r.split(" = ")
                    .nth(1)
                    .and_then(|x| x.split(" %").next())
                    .and_then(|x| x.trim().parse::<f64>().ok())
                    .is_some_and(|pct| pct > 100.0)
            }),
            "{:#?}",
            e.evidence.reasons
        );
        assert_eq!(e.cause, Cause::Contention, "{:#?}", e.evidence.reasons);
    }
}
