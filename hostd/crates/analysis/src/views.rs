//! The two views of a series' throughput — over time (the byte counters) and per file —
//! searched by the same detection, and their changes joined: a change both found once (the
//! per-file onset), a change one found with the reason the other did not.
//! See docs/methodology.md, "Two views".

use crate::detect::{self, Change, Found, TooLittle};
use crate::observation::Observations;
use crate::series::Series;
use crate::settings::{Settings, SAME_CHANGE_FRACTION, SAME_LEVEL_FRACTION};
use crate::stall::SeriesStalls;
use hostd_records::events::{FoundBy, View};

/// A change and the view(s) that found it.
#[derive(Debug, Clone, PartialEq)]
pub struct Detected {
    /// The change (when both found a step, the view's whose onset interval is narrower; the
    /// ramp when one view sees a ramp and the other a step, except a per-file ramp against
    /// a step over time (a file straddling the step); the per-file view's when both see a
    /// ramp).
    pub change: Change,
    /// Which view found it and why the other did not.
    pub found_by: FoundBy,
}

/// One view's outcome.
struct Outcome {
    name: &'static str,
    obs: Option<Observations>,
    found: Result<Found, TooLittle>,
}

/// The target's byte counter, for the view over time.
pub struct Counter<'a> {
    /// (host ns, cumulative bytes) samples.
    pub points: &'a [(i64, u64)],
    /// Stretches in which another target's files were in flight (empty when none shared the
    /// link for long): the view searches the rest.
    pub busy: &'a [(i64, i64)],
    /// How much of the phase others shared the link, in words.
    pub shared: String,
}

/// The changes of `series` in both views (`counter`: the target's byte counter, or why the
/// view over time is not searched). `Err` when neither view has enough data (the per-file
/// view's reason).
pub fn changes(
    series: &Series,
    counter: Result<Counter<'_>, String>,
    stalls: Option<&SeriesStalls>,
    settings: &Settings,
) -> Result<Vec<Detected>, TooLittle> {
    let per_file = Observations::per_file(series, stalls, settings.min_side_files);
    let files = Outcome {
        name: view_name(View::PerFile),
        found: detect::changes(&per_file, settings),
        obs: Some(per_file),
    };
    let over = counter
        .as_ref()
        .map(|c| Observations::over_time(series, c.points, stalls, c.busy));
    let time = Outcome {
        name: view_name(View::OverTime),
        found: match (&over, &counter) {
            (Ok(Some(o)), _) => detect::changes(o, settings),
            (Ok(None), Ok(c)) if !c.busy.is_empty() => Err(TooLittle {
                reason: format!(
                    "not searched: {}, and it had the link alone too briefly (each start and end of another's file moves its rate over time)",
                    c.shared
                ),
            }),
            (Ok(None), _) => Err(TooLittle {
                reason: "too few byte-counter samples inside this phase (counters.csv)".into(),
            }),
            (Err(reason), _) => Err(TooLittle {
                reason: reason.to_string(),
            }),
        },
        obs: over.ok().flatten(),
    };
    if let (Err(e), Err(_)) = (&files.found, &time.found) {
        return Err(e.clone());
    }
    let tol = (SAME_CHANGE_FRACTION * series.total_bytes() as f64) as u64;
    let none = Vec::new();
    let in_time = time.found.as_ref().map_or(&none, |f| &f.changes);
    let in_files = files.found.as_ref().map_or(&none, |f| &f.changes);
    Ok(join(in_time, in_files, tol, |c: &Change, view| {
        let other = match view {
            View::OverTime => &files,
            _ => &time,
        };
        why_not(other, c.onset.bytes, tol)
    }))
}

/// The changes of the two views joined (`tol`: bytes a change's extent is widened by):
/// each change both found once, the rest with `why_not(change, view that found it)`.
fn join(
    in_time: &[Change],
    in_files: &[Change],
    tol: u64,
    why_not: impl Fn(&Change, View) -> String,
) -> Vec<Detected> {
    // Where a change lies: its onset interval, and for a ramp on to where it settles (a
    // step one view finds inside the ramp the other finds is the same change, not a
    // second one).
    let widened = |c: &Change| {
        let (lo, hi) = extent(c);
        (lo.saturating_sub(tol), hi + tol)
    };
    let same = |a: &Change, b: &Change| {
        let ((a0, a1), (b0, b1)) = (widened(a), widened(b));
        a.kind == b.kind && a0 <= b1 && b0 <= a1
    };
    let mut out: Vec<Detected> = Vec::new();
    let mut matched = vec![false; in_files.len()];
    for t in in_time {
        let partner = (0..in_files.len()).find(|&k| !matched[k] && same(t, &in_files[k]));
        let detected = match partner {
            Some(k) => {
                matched[k] = true;
                let f = &in_files[k];
                // A file straddling a step looks like a ramp among per-file rates; over time
                // the step is plain. A step both see: the onset the data pins down more
                // narrowly (files of very different sizes and bimodal rates can leave the
                // per-file onset loose where the throughput over time holds it to a few
                // intervals). A ramp both see: the per-file one (over time, the lumps of
                // 100 ms intervals make a ramp's start interval narrower than the truth
                // allows). A ramp over time with a step among the per-file rates inside it:
                // the ramp (the counters have no straddling file to make one, so a ramp
                // there is the device's).
                let over_time = if t.gradual {
                    !f.gradual
                } else {
                    f.gradual || onset_width(t) < onset_width(f)
                };
                let (mut kept, other) = if over_time {
                    (t.clone(), f)
                } else {
                    (f.clone(), t)
                };
                let other_view = cover_both(&mut kept, other).unwrap_or_default();
                Detected {
                    change: kept,
                    found_by: FoundBy {
                        view: View::Both,
                        other_view,
                    },
                }
            }
            None => Detected {
                change: t.clone(),
                found_by: FoundBy {
                    view: View::OverTime,
                    other_view: why_not(t, View::OverTime),
                },
            },
        };
        out.push(detected);
    }
    for (k, f) in in_files.iter().enumerate() {
        if !matched[k] {
            out.push(Detected {
                change: f.clone(),
                found_by: FoundBy {
                    view: View::PerFile,
                    other_view: why_not(f, View::PerFile),
                },
            });
        }
    }
    out.sort_by_key(|d| d.change.onset.bytes);
    join_placed_apart(out)
}

/// Joins neighbours that are one change the two views placed apart: of the same kind, one
/// found only over time and one only per file, nothing found between them, their new levels
/// within [`SAME_LEVEL_FRACTION`]. A few burst files right after a drop (a buffer taking
/// them at the old rate) keep the per-file rates at the old level until they are past: the
/// per-file view then finds the drop after them, while the counters' 100 ms intervals show
/// it where it happened (`fixtures/realdev/burst-after-drop` is such a run). The event
/// keeps the change whose onset interval is narrower and says where the other view put it.
fn join_placed_apart(sorted: Vec<Detected>) -> Vec<Detected> {
    let single = |d: &Detected| matches!(d.found_by.view, View::OverTime | View::PerFile);
    let mut out: Vec<Detected> = Vec::with_capacity(sorted.len());
    for d in sorted {
        if let Some(prev) = out.last_mut() {
            let (a, b) = (&prev.change, &d.change);
            let levels = (a.rate_after_bps - b.rate_after_bps).abs()
                / a.rate_after_bps.max(b.rate_after_bps).max(1.0);
            if single(prev)
                && single(&d)
                && prev.found_by.view != d.found_by.view
                && a.kind == b.kind
                && levels < SAME_LEVEL_FRACTION
            {
                let (kept, other) = if onset_width(b) < onset_width(a) {
                    (b, a)
                } else {
                    (a, b)
                };
                let mut kept = kept.clone();
                let other_view = cover_both(&mut kept, other).unwrap_or_else(|| {
                    format!(
                        "{} placed it at {:.2} GB [{:.2}–{:.2}], to {:.1} MB/s",
                        view_name(other.view),
                        other.onset.bytes as f64 / 1e9,
                        other.onset.bytes_range.0 as f64 / 1e9,
                        other.onset.bytes_range.1 as f64 / 1e9,
                        other.rate_after_bps / 1e6
                    )
                });
                *prev = Detected {
                    change: kept,
                    found_by: FoundBy {
                        view: View::Both,
                        other_view,
                    },
                };
                continue;
            }
        }
        out.push(d);
    }
    out
}

/// Where the two views placed one change apart (their extents disjoint: the onset interval,
/// and for a ramp on to where it settles): `kept`'s interval widened to cover `other`'s
/// onset, in bytes and in time, and the words that say the views disagreed and where the
/// other put it. None when they meet: an event never claims an interval that excludes the
/// other view's placement.
fn cover_both(kept: &mut Change, other: &Change) -> Option<String> {
    let ((k0, k1), (o0, o1)) = (extent(kept), extent(other));
    if k0 <= o1 && o0 <= k1 {
        return None;
    }
    let (k, o) = (kept.onset, other.onset);
    let said = format!(
        "the views disagreed: {} placed it at {:.2} GB [{:.2}–{:.2}], to {:.1} MB/s; the interval covers both",
        view_name(other.view),
        o.bytes as f64 / 1e9,
        o.bytes_range.0 as f64 / 1e9,
        o.bytes_range.1 as f64 / 1e9,
        other.rate_after_bps / 1e6
    );
    kept.onset.bytes_range = (k.bytes_range.0.min(o.bytes), k.bytes_range.1.max(o.bytes));
    kept.onset.ns_range = (k.ns_range.0.min(o.ns), k.ns_range.1.max(o.ns));
    Some(said)
}

/// Where a change lies, bytes: its onset interval, and for a ramp on to where it settles.
fn extent(c: &Change) -> (u64, u64) {
    let r = c.onset.bytes_range;
    let hi = if c.gradual {
        r.1.max(c.settle_bytes)
    } else {
        r.1
    };
    (r.0, hi)
}

/// Bytes between the ends of a change's onset interval.
fn onset_width(c: &Change) -> u64 {
    c.onset.bytes_range.1 - c.onset.bytes_range.0
}

/// A view's name in words (`other_view` reasons).
fn view_name(view: View) -> &'static str {
    match view {
        View::OverTime => "throughput over time",
        _ => "per-file rates",
    }
}

/// Why `view` found no change near `bytes`, in words.
fn why_not(view: &Outcome, bytes: u64, tol: u64) -> String {
    let found = match &view.found {
        Err(e) => return format!("{}: too little data ({})", view.name, e.reason),
        Ok(f) => f,
    };
    let mut notes = Vec::new();
    if let Some(o) = &view.obs {
        if o.clipped > 0 {
            notes.push(format!(
                "{} {} clipped as outliers (bursts into a buffer or hiccups)",
                o.clipped,
                match o.view {
                    View::OverTime => "intervals",
                    _ => "files",
                }
            ));
        }
        notes.extend(o.left_out.iter().cloned());
    }
    let near = found
        .removed
        .iter()
        .filter(|r| r.bytes.abs_diff(bytes) <= 2 * tol)
        .min_by_key(|r| r.bytes.abs_diff(bytes));
    let head = match near {
        Some(r) => format!(
            "{}: a candidate at {:.2} GB was removed: {}",
            view.name,
            r.bytes as f64 / 1e9,
            r.rule
        ),
        None => format!("{}: no change point near it", view.name),
    };
    if notes.is_empty() {
        head
    } else {
        format!("{head} ({})", notes.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::onset::Onset;
    use hostd_records::cause::EventKind;

    /// A drop found by `view` with its onset interval `[lo, hi]` GB, a ramp settling at
    /// `settle` GB when given.
    fn drop_at(view: View, lo: f64, at: f64, hi: f64, settle: Option<f64>) -> Change {
        let gb = |x: f64| (x * 1e9) as u64;
        Change {
            kind: EventKind::Drop,
            onset: Onset {
                bytes: gb(at),
                ns: (at * 4e9) as i64,
                bytes_range: (gb(lo), gb(hi)),
                ns_range: ((lo * 4e9) as i64, (hi * 4e9) as i64),
            },
            settle_bytes: gb(settle.unwrap_or(at)),
            settle_ns: (settle.unwrap_or(at) * 4e9) as i64,
            gradual: settle.is_some(),
            p_value: 0.002,
            permutations: 999,
            view,
            rate_before_bps: 250e6,
            rate_after_bps: 125e6,
            before_ns: (0, 0),
            after_ns: (0, 0),
        }
    }

    #[test]
    fn views_that_place_one_change_apart_say_so_and_cover_both_placements() {
        // One drop placed apart: per file at 0.11 GB [0.10–0.12], over time at 136 MB
        // [134–137]; the narrower interval is kept, widened to the other placement.
        let over = drop_at(View::OverTime, 0.134, 0.136, 0.137, None);
        let files = drop_at(View::PerFile, 0.10, 0.11, 0.12, None);
        let tol = 20_000_000;
        let joined = join(&[over], &[files], tol, |_, _| "?".into());
        assert_eq!(joined.len(), 1, "{joined:#?}");
        let d = &joined[0];
        assert_eq!(d.found_by.view, View::Both);
        assert_eq!(d.change.onset.bytes, 136_000_000, "the narrower placement");
        assert_eq!(d.change.onset.bytes_range, (110_000_000, 137_000_000));
        let (t0, t1) = d.change.onset.ns_range;
        assert!(t0 <= (0.11 * 4e9) as i64 && t1 >= (0.137 * 4e9) as i64);
        assert!(
            d.found_by.other_view.starts_with(
                "the views disagreed: per-file rates placed it at 0.11 GB [0.10–0.12]"
            ),
            "{}",
            d.found_by.other_view
        );
        // Views whose intervals meet agree: nothing widened, nothing said.
        let a = drop_at(View::OverTime, 0.105, 0.108, 0.111, None);
        let joined = join(
            std::slice::from_ref(&a),
            &[drop_at(View::PerFile, 0.10, 0.11, 0.12, None)],
            tol,
            |_, _| "?".into(),
        );
        assert_eq!(joined[0].change, a);
        assert_eq!(joined[0].found_by.other_view, "");
    }

    #[test]
    fn a_step_inside_the_other_views_ramp_is_that_ramp_found_by_both() {
        // The real ramp cell (3 GB of 2–64 MB files): over time a ramp from 1.04 GB settling
        // at 1.93 GB; among the per-file rates a step at 1.59 GB, 0.55 GB past the ramp's
        // onset interval but inside the ramp.
        let ramp = drop_at(View::OverTime, 0.9, 1.04, 1.0, Some(1.93));
        let step = drop_at(View::PerFile, 1.55, 1.59, 1.62, None);
        let tol = 60_000_000;
        let joined = join(std::slice::from_ref(&ramp), &[step], tol, |_, _| "?".into());
        assert_eq!(joined.len(), 1, "{joined:#?}");
        assert_eq!(joined[0].found_by.view, View::Both);
        assert_eq!(joined[0].change, ramp, "the ramp, which the counters saw");
        // The other way round (a file straddling a step makes a per-file ramp): the step.
        let joined = join(
            &[drop_at(View::OverTime, 1.58, 1.59, 1.6, None)],
            &[drop_at(View::PerFile, 0.9, 1.04, 1.0, Some(1.93))],
            tol,
            |_, _| "?".into(),
        );
        assert_eq!(joined.len(), 1);
        assert!(!joined[0].change.gradual);
        // A step past the ramp's end, further down, is another change.
        let later = drop_to(View::PerFile, 2.3, 2.4, 2.5, 60.0);
        let joined = join(&[ramp], &[later], tol, |_, v| format!("{v:?}"));
        assert_eq!(joined.len(), 2);
        assert_eq!(joined[0].found_by.other_view, "OverTime");
    }

    /// `drop_at` falling to `after` MB/s.
    fn drop_to(view: View, lo: f64, at: f64, hi: f64, after: f64) -> Change {
        Change {
            rate_after_bps: after * 1e6,
            ..drop_at(view, lo, at, hi, None)
        }
    }

    #[test]
    fn a_drop_the_views_place_apart_at_one_level_is_one_drop() {
        // The real matrix cell: over time at 0.988 GB to 93.3 MB/s; per file, past a
        // burst file, at 1.167 GB to 91.7 MB/s. Apart by more than the 2 % tolerance.
        let tol = 40_000_000;
        let time = drop_to(View::OverTime, 0.980, 0.988, 0.995, 93.3);
        let file = drop_to(View::PerFile, 1.10, 1.167, 1.30, 91.7);
        let joined = join(
            std::slice::from_ref(&time),
            std::slice::from_ref(&file),
            tol,
            |_, _| "?".into(),
        );
        assert_eq!(joined.len(), 1, "{joined:#?}");
        assert_eq!(joined[0].found_by.view, View::Both);
        let kept = &joined[0].change;
        assert_eq!(kept.onset.bytes, time.onset.bytes, "the narrower onset");
        assert_eq!(
            kept.onset.bytes_range,
            (time.onset.bytes_range.0, file.onset.bytes),
            "an interval that covers both placements"
        );
        assert!(
            joined[0]
                .found_by
                .other_view
                .starts_with("the views disagreed: per-file rates placed it at 1.17 GB"),
            "{}",
            joined[0].found_by.other_view
        );
        // Two real drops, one seen by each view: the second falls further.
        let further = drop_to(View::PerFile, 1.10, 1.167, 1.30, 45.0);
        let joined = join(std::slice::from_ref(&time), &[further], tol, |_, _| {
            "?".into()
        });
        assert_eq!(joined.len(), 2, "{joined:#?}");
        // Found by the same view twice: the search kept both, and so does the join.
        let again = drop_to(View::OverTime, 1.10, 1.167, 1.30, 91.7);
        let joined = join(&[time.clone(), again], &[], tol, |_, _| "?".into());
        assert_eq!(joined.len(), 2, "{joined:#?}");
        // A recovery between them keeps them apart.
        let mut up = drop_to(View::PerFile, 1.05, 1.06, 1.07, 250.0);
        up.kind = EventKind::Recovery;
        let joined = join(&[time, file.clone()], &[up], tol, |_, _| "?".into());
        assert_eq!(joined.len(), 3, "{joined:#?}");
    }
}
