//! The two views of a series' throughput — over time (the byte counters) and per file —
//! searched by the same detection, and their changes joined: a change both found once (the
//! per-file onset), a change one found with the reason the other did not.
//! See docs/methodology.md, "Two views".

use crate::changepoint::Settings;
use crate::detect::{self, Change, Found, TooLittle};
use crate::observation::Observations;
use crate::series::Series;
use crate::stall::SeriesStalls;
use hostd_records::events::{FoundBy, View};

/// Two changes of the views are one when their onset intervals, each widened by this share
/// of the series' bytes, overlap.
const SAME_CHANGE_FRACTION: f64 = 0.02;

/// A change and the view(s) that found it.
#[derive(Debug, Clone, PartialEq)]
pub struct Detected {
    /// The change (when both found a step, the view's whose onset interval is narrower; the
    /// throughput over time's when the per-file rates see a ramp where it sees a step; the
    /// per-file view's when both see a ramp).
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

/// The changes of `series` in both views (`counter`: the target's byte counter, when the
/// run recorded one). `Err` when neither view has enough data (the per-file view's reason).
pub fn changes(
    series: &Series,
    counter: Option<&[(i64, u64)]>,
    stalls: Option<&SeriesStalls>,
    settings: &Settings,
) -> Result<Vec<Detected>, TooLittle> {
    let per_file = Observations::per_file(series, stalls, settings.min_side_files);
    let files = Outcome {
        name: "per-file rates",
        found: detect::changes(&per_file, settings),
        obs: Some(per_file),
    };
    let over = counter.and_then(|c| Observations::over_time(series, c, stalls));
    let time = Outcome {
        name: "throughput over time",
        found: over.as_ref().map_or_else(
            || {
                Err(TooLittle {
                    reason: "no byte counters for this target (counters.csv)".into(),
                })
            },
            |o| detect::changes(o, settings),
        ),
        obs: over,
    };
    if let (Err(e), Err(_)) = (&files.found, &time.found) {
        return Err(e.clone());
    }
    let total = series.total_bytes() as f64;
    let tol = (SAME_CHANGE_FRACTION * total) as u64;
    let same = |a: &Change, b: &Change| {
        a.kind == b.kind
            && a.onset.bytes_range.0.saturating_sub(tol) <= b.onset.bytes_range.1 + tol
            && b.onset.bytes_range.0.saturating_sub(tol) <= a.onset.bytes_range.1 + tol
    };
    let none = Vec::new();
    let in_time = time.found.as_ref().map_or(&none, |f| &f.changes);
    let in_files = files.found.as_ref().map_or(&none, |f| &f.changes);
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
                // 100 ms intervals make a ramp's start interval too narrow: x5-gradual's
                // truth fell outside it).
                let width = |c: &Change| c.onset.bytes_range.1 - c.onset.bytes_range.0;
                let over_time = !t.gradual && (f.gradual || width(t) < width(f));
                Detected {
                    change: if over_time { t } else { f }.clone(),
                    found_by: FoundBy {
                        view: View::Both,
                        other_view: String::new(),
                    },
                }
            }
            None => Detected {
                change: t.clone(),
                found_by: FoundBy {
                    view: View::OverTime,
                    other_view: why_not(&files, t.onset.bytes, tol),
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
                    other_view: why_not(&time, f.onset.bytes, tol),
                },
            });
        }
    }
    out.sort_by_key(|d| d.change.onset.bytes);
    Ok(out)
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
