//! The headline figures reviewers publish for an external SSD (SLC-cache size, post-cache
//! rate, time and bytes to the first thermal throttle, throttled rate, whole-run average,
//! sustained rate, J/GB around each event) and a first-order thermal fit of the enclosure.
//! Every figure carries a 95 % interval, or says why the data cannot carry it
//! (docs/methodology.md, "Headline figures").

use crate::series::Series;
use crate::stats;
use hostd_records::cause::{Cause, EventKind};
use hostd_records::events::{Event, Insufficient, PhaseStats};
use hostd_records::headline::{EventEnergy, Figure, Headlines, SeriesHeadline, ThermalFit};
use hostd_records::peak_second::highest_second;
use hostd_records::published::Kind;
use hostd_records::{FileRecord, ProbeSeries};
use rand::{Rng, SeedableRng};

const NS: f64 = 1e9;
/// z of a two-sided 95 % normal interval.
const Z95: f64 = 1.959_963_984_540_054;
/// Bootstrap replicates of the thermal fit.
const BOOTSTRAP: usize = 999;
/// Fewest files a rate interval is computed from.
const MIN_FILES: usize = 3;
/// Fewest files of the last third for the median's order-statistic interval.
const MIN_SUSTAINED_FILES: usize = 6;
/// Fewest 1 s steps of probe data the thermal fit needs.
const MIN_FIT_STEPS: usize = 20;
/// Ambient shift the thermal fit predicts the time to throttle at, °C.
pub const PREDICT_AMBIENT_DELTA_C: f64 = 10.0;
/// The coldest and hottest rooms a bench can stand in, °C: a fitted ambient outside them is
/// a fit that failed, not a room (an enclosure on a desk, not in a freezer or an oven).
pub const PLAUSIBLE_AMBIENT_C: (f64, f64) = (5.0, 45.0);
/// How far the model's throttle time at the run's own ambient may lie from the observed one
/// (a share of it) before its predictions are refused: the model must reproduce the run it
/// was fitted to.
pub const PREDICTION_CHECK_SHARE: f64 = 0.25;
/// ... or this many seconds, whichever is more (the onset's own 1 s resolution and more).
pub const PREDICTION_CHECK_S: f64 = 2.0;

/// Rate Σbytes/Σtime of `files` with a 95 % interval from the ratio estimator's standard
/// error (files as the sampling units).
pub fn rate_figure<'a>(files: impl Iterator<Item = &'a FileRecord>, what: &str) -> Figure {
    let pairs: Vec<(f64, f64)> = files.map(|f| (f.bytes as f64, f.seconds())).collect();
    ratio_figure(&pairs, what)
}

/// Ratio Σy/Σx with a 95 % interval: SE² = Σ(yᵢ − R·xᵢ)² / (n (n − 1) x̄²).
fn ratio_figure(pairs: &[(f64, f64)], what: &str) -> Figure {
    match ratio_interval(pairs, what) {
        Ok((r, half)) => Figure::value(r, (r - half).max(0.0), r + half),
        Err(why) => Figure::absent(why),
    }
}

/// (Σy/Σx, half the width of its 95 % interval) of `pairs`, or why there is none.
fn ratio_interval(pairs: &[(f64, f64)], what: &str) -> Result<(f64, f64), String> {
    let n = pairs.len();
    if n < MIN_FILES {
        return Err(format!("{what}: {n} files, at least {MIN_FILES} needed"));
    }
    let sy: f64 = pairs.iter().map(|p| p.0).sum();
    let sx: f64 = pairs.iter().map(|p| p.1).sum();
    if sx <= 0.0 {
        return Err(format!("{what}: no time measured"));
    }
    let r = sy / sx;
    let xbar = sx / n as f64;
    let ss: f64 = pairs.iter().map(|&(y, x)| (y - r * x).powi(2)).sum();
    let se = (ss / (n as f64 * (n as f64 - 1.0))).sqrt() / xbar;
    Ok((r, Z95 * se))
}

/// The phase's own figure `value` (computed once, in `phases[]`) with the ratio estimator's
/// interval of the same files' `pairs` around it; the reason when either is missing.
fn phase_ratio_figure(value: Option<f64>, pairs: &[(f64, f64)], what: &str) -> Figure {
    match (value, ratio_interval(pairs, what)) {
        (Some(v), Ok((_, half))) => Figure::value(v, (v - half).max(0.0), v + half),
        (None, _) => Figure::absent(format!("{what}: no energy measured")),
        (_, Err(why)) => Figure::absent(why),
    }
}

/// Median with its distribution-free 95 % interval (order statistics of Bin(n, ½)).
fn median_figure(mut x: Vec<f64>, what: &str) -> Figure {
    let n = x.len();
    if n < MIN_SUSTAINED_FILES {
        return Figure::absent(format!(
            "{what}: {n} files, at least {MIN_SUSTAINED_FILES} needed"
        ));
    }
    x.sort_by(f64::total_cmp);
    let half = Z95 * (n as f64).sqrt() / 2.0;
    let lo = ((n as f64 / 2.0 - half).floor() as usize).clamp(1, n) - 1;
    let hi = ((n as f64 / 2.0 + half).ceil() as usize + 1).clamp(1, n) - 1;
    let m = stats::median(&x).unwrap_or(f64::NAN);
    Figure::value(m, x[lo], x[hi])
}

/// Files lying wholly inside `[a, b)`.
fn files_in(s: &Series, a: i64, b: i64) -> impl Iterator<Item = &FileRecord> {
    s.files
        .iter()
        .filter(move |f| f.start_ns as i64 >= a && f.end_ns as i64 <= b)
}

/// The stretch after `events[k]` up to the next event (outside both onset intervals, and
/// from where a ramp settles: the rate it fell to, as the event's own "→" gives it).
fn after(s: &Series, events: &[&Event], k: usize) -> (i64, i64) {
    let end = events
        .get(k + 1)
        .map_or(s.end_ns() + 1, |n| n.onset_ns_low.min(n.onset_ns));
    let e = events[k];
    let from = e.onset_ns_high.max(e.onset_ns);
    // A ramp settling at or past the stretch's end leaves its whole ramp as the stretch.
    (
        if e.settle_ns < end {
            from.max(e.settle_ns)
        } else {
            from
        },
        end,
    )
}

/// The stretch before `events[k]` from the previous event.
fn before(s: &Series, events: &[&Event], k: usize) -> (i64, i64) {
    let start = if k == 0 {
        s.start_ns()
    } else {
        events[k - 1].onset_ns_high.max(events[k - 1].onset_ns)
    };
    (start, events[k].onset_ns_low.min(events[k].onset_ns))
}

/// Host ns bounds of an event's onset time: each end of its byte interval mapped into the
/// file holding it at the fastest and slowest per-file rate of the stretch before (widened by
/// a tenth of their range), joined with the event's own time interval. The event's times use
/// the stretch's mean rate; a single file's rate differs from it by its jitter.
fn onset_time_bounds(s: &Series, events: &[&Event], k: usize) -> (i64, i64) {
    let e = events[k];
    let (a, b) = before(s, events, k);
    // The per-file view's robust rates (no file mostly per-file cost, bursts clipped).
    let obs = crate::observation::Observations::per_file(s, None, 0);
    let rates: Vec<f64> = obs
        .spans
        .iter()
        .zip(&obs.rates)
        .filter(|(f, _)| f.start_ns >= a && f.end_ns <= b)
        .map(|(_, &r)| r)
        .collect();
    let (Some(min), Some(max)) = (
        rates.iter().copied().reduce(f64::min),
        rates.iter().copied().reduce(f64::max),
    ) else {
        return (e.onset_ns_low, e.onset_ns_high);
    };
    let pad = 0.1 * (max - min);
    let (slow, fast) = ((min - pad).max(min * 0.5), max + pad);
    let at = |bytes: u64, rate: f64| -> Option<i64> {
        let i = s.file_at(bytes);
        let f = s.files.get(i)?;
        let t = f.start_ns as i64 + ((bytes - s.cum_bytes[i]) as f64 / rate * NS) as i64;
        Some(t.clamp(f.start_ns as i64, f.end_ns as i64))
    };
    let lo = at(e.onset_bytes_low, fast).map_or(e.onset_ns_low, |t| t.min(e.onset_ns_low));
    let hi = at(e.onset_bytes_high, slow).map_or(e.onset_ns_high, |t| t.max(e.onset_ns_high));
    (lo, hi)
}

fn j_per_gb(s: &Series, probe: &ProbeSeries, a: i64, b: i64) -> Figure {
    // Per-file energy through the same function the phase totals use.
    let pairs: Vec<(f64, f64)> = files_in(s, a, b)
        .filter_map(|f| {
            let e = probe.energy_between(f.start_ns as i64, f.end_ns as i64)?;
            Some((e, f.bytes as f64 / 1e9))
        })
        .collect();
    ratio_figure(&pairs, "J/GB")
}

/// What the headline of a series reads besides its files and the events: the probe (and
/// the target it is on), the phases' statistics and the series too short to search.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The probe's series of the run.
    pub probe: Option<&'a ProbeSeries>,
    /// The target it is on.
    pub probe_target: Option<&'a str>,
    /// The per-phase statistics (`phases[]`), whose energy figures the headline gives
    /// with their intervals.
    pub phases: &'a [PhaseStats],
    /// The series with too little data to look for events in.
    pub insufficient: &'a [Insufficient],
}

/// The onset of `e` as figures: (bytes, seconds since `s` started), each with its interval.
fn onset_figures(s: &Series, events: &[&Event], k: usize) -> (Figure, Figure) {
    let e = events[k];
    let sec = |ns: i64| (ns - s.start_ns()) as f64 / NS;
    let (lo, hi) = onset_time_bounds(s, events, k);
    (
        Figure::value(
            e.onset_bytes as f64,
            e.onset_bytes_low as f64,
            e.onset_bytes_high as f64,
        ),
        Figure::value(sec(e.onset_ns), sec(lo), sec(hi)),
    )
}

/// The phase's energy per GB and mean bus power (the values of `phases[]`, with the ratio
/// estimator's interval over its files), its peak bus power and the enclosure's maximum
/// (each the highest 1 s mean, [`hostd_records::peak_second`]); the reason for each where
/// the probe is not on this target.
fn probe_figures(
    s: &Series,
    stats: Option<&PhaseStats>,
    probe: Result<&ProbeSeries, &str>,
) -> [Figure; 4] {
    let p = match probe {
        Ok(p) => p,
        Err(why) => return std::array::from_fn(|_| Figure::absent(why)),
    };
    // Each file's energy through the function the phase totals use.
    let energies: Vec<(f64, &FileRecord)> = s
        .files
        .iter()
        .filter_map(|f| Some((p.energy_between(f.start_ns as i64, f.end_ns as i64)?, f)))
        .collect();
    let per_gb: Vec<(f64, f64)> = energies
        .iter()
        .map(|(e, f)| (*e, f.bytes as f64 / 1e9))
        .collect();
    let per_s: Vec<(f64, f64)> = energies.iter().map(|(e, f)| (*e, f.seconds())).collect();
    let span = (s.start_ns(), s.end_ns());
    let peak = |values: &[f64], what: &str| {
        highest_second(&p.time_ns, values, span).map_or_else(
            || {
                Figure::absent(format!(
                    "{what}: no second of the phase with two or more probe samples"
                ))
            },
            |x| Figure::value(x.mean, x.mean - x.half_width, x.mean + x.half_width),
        )
    };
    [
        phase_ratio_figure(stats.and_then(|p| p.j_per_gb), &per_gb, "J/GB"),
        phase_ratio_figure(stats.and_then(|p| p.mean_power_w), &per_s, "mean power"),
        peak(&p.power_w, "peak power"),
        peak(&p.enclosure_temp_c, "enclosure maximum"),
    ]
}

/// The headline figures of one series; `events` are all events of the run, `probe` is the
/// probe's series when it is on this series' target, else why there is none; `stats` the
/// series' statistics; `not_searched` why events were not looked for, when they were not.
pub fn series_headline(
    s: &Series,
    events: &[Event],
    probe: Result<&ProbeSeries, &str>,
    stats: Option<&PhaseStats>,
    not_searched: Option<&str>,
) -> SeriesHeadline {
    let mine: Vec<&Event> = events
        .iter()
        .filter(|e| e.target == s.target && e.phase == s.phase && e.kind != EventKind::Stall)
        .collect();
    let average_bps = rate_figure(s.files.iter(), "average");
    let total = s.total_bytes();
    let last_third: Vec<f64> = s
        .files
        .iter()
        .zip(&s.cum_bytes)
        .filter(|(_, &c)| c as f64 >= total as f64 * 2.0 / 3.0)
        .map(|(f, _)| f.rate_bps())
        .collect();
    let sustained_bps = median_figure(last_third, "last third");

    let first = |cause: Option<Cause>| {
        mine.iter()
            .position(|e| e.kind == EventKind::Drop && cause.is_none_or(|c| e.cause == c))
    };
    let first_drop = first(None);
    // Why a figure of a drop (of any cause, or of `cause`) is missing.
    let no_drop = |cause: &str| match (not_searched, first_drop) {
        (Some(_), _) => "too little data to look for a drop".to_string(),
        (None, None) => format!("no drop in {}", Kind::Data.text(total as f64)),
        (None, Some(k)) => format!(
            "no drop attributed to {cause}; the drop at {} is attributed to {}",
            Kind::Data.text(mine[k].onset_bytes as f64),
            mine[k].cause.as_str()
        ),
    };
    let (drop_bytes, drop_s, after_drop_bps) = match first_drop {
        None => {
            let why = no_drop("");
            (
                Figure::absent(&why),
                Figure::absent(&why),
                Figure::absent(why),
            )
        }
        Some(k) => {
            let (bytes, secs) = onset_figures(s, &mine, k);
            let (a, b) = after(s, &mine, k);
            (
                bytes,
                secs,
                rate_figure(files_in(s, a, b), "after the drop"),
            )
        }
    };
    let is_write = s.phase.contains("write");
    let (slc_cache_bytes, post_cache_bps) = match (is_write, first(Some(Cause::SlcCache))) {
        (false, _) => {
            let why = "not a write phase";
            (Figure::absent(why), Figure::absent(why))
        }
        (true, None) => {
            let why = no_drop("the SLC cache");
            (Figure::absent(&why), Figure::absent(why))
        }
        (true, Some(k)) => {
            let (a, b) = after(s, &mine, k);
            (
                onset_figures(s, &mine, k).0,
                rate_figure(files_in(s, a, b), "after the SLC drop"),
            )
        }
    };
    let (throttle_s, throttle_bytes, throttled_bps) = match first(Some(Cause::Thermal)) {
        None => {
            let why = no_drop("heat");
            (
                Figure::absent(&why),
                Figure::absent(&why),
                Figure::absent(why),
            )
        }
        Some(k) => {
            let (a, b) = after(s, &mine, k);
            let (bytes, secs) = onset_figures(s, &mine, k);
            (
                secs,
                bytes,
                rate_figure(files_in(s, a, b), "after the throttle"),
            )
        }
    };
    let energy = probe
        .ok()
        .map(|p| {
            (0..mine.len())
                .map(|k| {
                    let (a0, b0) = before(s, &mine, k);
                    let (a1, b1) = after(s, &mine, k);
                    EventEnergy {
                        kind: mine[k].kind,
                        cause: mine[k].cause,
                        onset_bytes: mine[k].onset_bytes,
                        j_per_gb_before: j_per_gb(s, p, a0, b0),
                        j_per_gb_after: j_per_gb(s, p, a1, b1),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let [j_per_gb, mean_power_w, peak_power_w, enclosure_max_c] = probe_figures(s, stats, probe);
    SeriesHeadline {
        target: s.target.clone(),
        phase: s.phase.clone(),
        average_bps,
        sustained_bps,
        drop_bytes,
        drop_s,
        after_drop_bps,
        drop_cause: first_drop.map(|k| mine[k].cause),
        drop_confidence: first_drop.map(|k| mine[k].confidence),
        slc_cache_bytes,
        post_cache_bps,
        throttle_s,
        throttle_bytes,
        throttled_bps,
        j_per_gb,
        mean_power_w,
        peak_power_w,
        enclosure_max_c,
        energy,
    }
}

/// One 1 s step of the thermal fit: temperature at both edges, mean power and temperature.
#[derive(Debug, Clone, Copy)]
struct Step {
    t_ns: i64,
    t_start: f64,
    t_end: f64,
    p_mean: f64,
    t_mean: f64,
}

/// Mean of the finite `values` of samples in `[a, b)`.
fn mean_of(p: &ProbeSeries, values: &[f64], a: i64, b: i64) -> Option<f64> {
    p.mean_in(values, a, b)
}

/// The 1 s steps of the probe record: edge temperatures are means over ±0.1 s around the
/// edge (the instantaneous temperature, its noise averaged), so the integrated model
/// τ·(T(t+1) − T(t)) = Rth·∫P − ∫T + T_amb holds exactly for any power profile.
fn steps(p: &ProbeSeries) -> Vec<Step> {
    let (Some(&first), Some(&last)) = (p.time_ns.first(), p.time_ns.last()) else {
        return Vec::new();
    };
    let h = NS as i64;
    let w = h / 10;
    let mut out = Vec::new();
    let mut t = first + w;
    while t + h + w <= last {
        let edge = |x: i64| mean_of(p, &p.enclosure_temp_c, x - w, x + w);
        if let (Some(a), Some(b), Some(pm), Some(tm)) = (
            edge(t),
            edge(t + h),
            mean_of(p, &p.power_w, t, t + h),
            mean_of(p, &p.enclosure_temp_c, t, t + h),
        ) {
            out.push(Step {
                t_ns: t,
                t_start: a,
                t_end: b,
                p_mean: pm,
                t_mean: tm,
            });
        }
        t += h;
    }
    out
}

/// (a, b, c) of dT/dt = a + b·P + c·T by least squares on the given rows.
fn ols(rows: &[Step], idx: impl Iterator<Item = usize>) -> Option<[f64; 3]> {
    let mut xtx = [[0.0f64; 3]; 3];
    let mut xty = [0.0f64; 3];
    for i in idx {
        let r = rows[i];
        let x = [1.0, r.p_mean, r.t_mean];
        let y = r.t_end - r.t_start;
        for j in 0..3 {
            xty[j] += x[j] * y;
            for k in 0..3 {
                xtx[j][k] += x[j] * x[k];
            }
        }
    }
    solve3(xtx, xty)
}

/// Gaussian elimination with partial pivoting; None when singular.
fn solve3(mut a: [[f64; 3]; 3], mut b: [f64; 3]) -> Option<[f64; 3]> {
    for col in 0..3 {
        let piv = (col..3).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[piv][col].abs() < 1e-12 * (1.0 + a[col][col].abs()) {
            return None;
        }
        a.swap(col, piv);
        b.swap(col, piv);
        for r in col + 1..3 {
            let f = a[r][col] / a[col][col];
            let pivot_row = a[col];
            for (dst, src) in a[r].iter_mut().zip(pivot_row).skip(col) {
                *dst -= f * src;
            }
            b[r] -= f * b[col];
        }
    }
    let mut x = [0.0; 3];
    for r in (0..3).rev() {
        let s: f64 = (r + 1..3).map(|k| a[r][k] * x[k]).sum();
        x[r] = (b[r] - s) / a[r][r];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

/// (Rth, τ, T_amb) from the regression coefficients; None when not a stable RC (c ≥ 0).
fn params(c: [f64; 3]) -> Option<(f64, f64, f64)> {
    let [a, b, c] = c;
    (c < 0.0).then(|| (-b / c, -1.0 / c, -a / c))
}

/// Seconds from `from_ns` until the model temperature (started at the measured one, driven
/// by the measured power) reaches `limit_c`; after the steps, power held at the mean of the
/// last 10 steps. None when it never gets there.
fn time_to_reach(
    rows: &[Step],
    (rth, tau, amb): (f64, f64, f64),
    from_ns: i64,
    limit_c: f64,
) -> Option<f64> {
    let start = rows.iter().position(|r| r.t_ns >= from_ns)?;
    let mut t = rows[start].t_start;
    if t >= limit_c {
        return Some(0.0);
    }
    let mut elapsed = (rows[start].t_ns - from_ns) as f64 / NS;
    for r in &rows[start..] {
        let eq = amb + rth * r.p_mean;
        let next = eq + (t - eq) * (-1.0 / tau).exp();
        if next >= limit_c {
            // Exact crossing inside the step.
            let frac = -tau * ((limit_c - eq) / (t - eq)).ln();
            return Some(elapsed + frac.clamp(0.0, 1.0));
        }
        t = next;
        elapsed += 1.0;
    }
    let tail = &rows[rows.len().saturating_sub(10)..];
    let p = tail.iter().map(|r| r.p_mean).sum::<f64>() / tail.len() as f64;
    let eq = amb + rth * p;
    (eq > limit_c).then(|| elapsed - tau * ((limit_c - eq) / (t - eq)).ln())
}

/// Fits the enclosure's RC model to the probe record and predicts the time to the first
/// thermal drop of `throttle` (the series and its event) at an ambient
/// [`PREDICT_AMBIENT_DELTA_C`] warmer. Err says why the data cannot carry a fit.
pub fn thermal_fit(
    target: &str,
    p: &ProbeSeries,
    throttle: Option<(&Series, &Event)>,
) -> Result<ThermalFit, String> {
    // The probe record may reach before and after the files; only use the stretch the
    // power was measured over, which is the whole record.
    let rows = steps(p);
    if rows.len() < MIN_FIT_STEPS {
        return Err(format!(
            "{} s of probe temperature and power, at least {MIN_FIT_STEPS} s needed",
            rows.len()
        ));
    }
    let temps: Vec<f64> = rows.iter().map(|r| r.t_mean).collect();
    let range = temps.iter().copied().fold(f64::NEG_INFINITY, f64::max)
        - temps.iter().copied().fold(f64::INFINITY, f64::min);
    let diffs: Vec<f64> = rows.iter().map(|r| r.t_end - r.t_start).collect();
    let noise = stats::mad_sigma(&diffs).unwrap_or(0.0);
    let need = 0.5f64.max(6.0 * noise.min(range));
    if range < 0.5 {
        return Err(format!(
            "the enclosure moved {range:.2} °C over the run, at least {need:.2} °C needed to fit its time constant"
        ));
    }
    let n = rows.len();
    let coef = ols(&rows, 0..n).ok_or("power and temperature do not vary independently")?;
    let Some((rth, tau, amb)) = params(coef) else {
        return Err(
            "the temperature does not settle towards an equilibrium (no time constant)".into(),
        );
    };
    let residual = {
        let ss: f64 = rows
            .iter()
            .map(|r| {
                let y = r.t_end - r.t_start;
                (y - coef[0] - coef[1] * r.p_mean - coef[2] * r.t_mean).powi(2)
            })
            .sum();
        (ss / (n as f64 - 3.0).max(1.0)).sqrt()
    };
    // Onset temperature and its spread over the onset interval, with the series start.
    let throttle_at = throttle.and_then(|(s, e)| {
        let w = (NS / 2.0) as i64;
        let at = |ns: i64| p.mean_in(&p.enclosure_temp_c, ns - w, ns + w);
        Some((
            s.start_ns(),
            [at(e.onset_ns)?, at(e.onset_ns_low)?, at(e.onset_ns_high)?],
        ))
    });
    let predict = |prm: (f64, f64, f64), delta: f64| -> Vec<Option<f64>> {
        throttle_at.map_or(Vec::new(), |(from, limits)| {
            limits
                .iter()
                .map(|l| time_to_reach(&rows, prm, from, l - delta))
                .collect()
        })
    };
    // Moving-block bootstrap over the steps (the residuals of neighbouring steps share an
    // edge and are correlated): percentile intervals of every derived figure.
    let block = ((n as f64).cbrt().ceil() as usize).max(2);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x07ea_1f17);
    let (mut rths, mut taus, mut ambs) = (Vec::new(), Vec::new(), Vec::new());
    let (mut pred_d, mut pred_0) = (Vec::new(), Vec::new());
    let mut unstable = 0usize;
    let mut idx = Vec::with_capacity(n);
    for _ in 0..BOOTSTRAP {
        idx.clear();
        while idx.len() < n {
            let s = rng.gen_range(0..=n - block);
            idx.extend(s..s + block);
        }
        idx.truncate(n);
        match ols(&rows, idx.iter().copied()).and_then(params) {
            None => unstable += 1,
            Some(prm) => {
                rths.push(prm.0);
                taus.push(prm.1);
                ambs.push(prm.2);
                pred_d.push(predict(prm, PREDICT_AMBIENT_DELTA_C));
                pred_0.push(predict(prm, 0.0));
            }
        }
    }
    if unstable * 40 > BOOTSTRAP {
        return Err(format!(
            "the time constant is not bounded: {unstable} of {BOOTSTRAP} bootstrap fits have no equilibrium"
        ));
    }
    let pct = |v: &mut Vec<f64>, point: f64| {
        v.sort_by(f64::total_cmp);
        let q = |f: f64| v[((f * (v.len() - 1) as f64).round() as usize).min(v.len() - 1)];
        Figure::value(point, q(0.025), q(0.975))
    };
    let prediction = |reps: &[Vec<Option<f64>>], delta: f64| -> Figure {
        let Some(point) = predict((rth, tau, amb), delta).first().copied() else {
            return Figure::absent("no drop attributed to heat");
        };
        let Some(point) = point else {
            return Figure::absent(format!(
                "the model never reaches the onset temperature at {delta:+.0} °C ambient"
            ));
        };
        // Every replicate at the onset and at both ends of its interval: the union; a
        // replicate that never gets there counts as infinitely late.
        let all: Vec<Option<f64>> = reps.iter().flatten().copied().collect();
        let never = all.iter().filter(|v| v.is_none()).count();
        if never * 40 > all.len() {
            return Figure::absent(format!(
                "{never} of {} bootstrap fits never get there",
                all.len()
            ));
        }
        let mut v: Vec<f64> = all.iter().map(|v| v.unwrap_or(f64::INFINITY)).collect();
        pct(&mut v, point)
    };
    let rth_c_per_w = pct(&mut rths, rth);
    // With the enclosure never near equilibrium at two power levels only T_amb + Rth·P is
    // identified, not its parts: the bootstrap interval of Rth then reaches zero or beyond.
    let (rth_c_per_w, ambient_c) = match rth_c_per_w.interval() {
        Some((v, l, h)) if l > 0.0 && h - l < v => (rth_c_per_w, pct(&mut ambs, amb)),
        other => {
            let (_, l, h) = other.unwrap_or_default();
            let why = format!(
                "this run does not separate Rth from the ambient (Rth's 95 % interval {l:.1}–{h:.1} °C/W): that needs the enclosure near equilibrium at two power levels, e.g. idle for a few τ before the load"
            );
            (Figure::absent(why.clone()), Figure::absent(why))
        }
    };
    // Only a fit that separates the two is judged by them (otherwise neither is printed).
    let coolest = temps.iter().copied().fold(f64::INFINITY, f64::min);
    if let Some(why) = ambient_c
        .interval()
        .and_then(|_| implausible_fit(rth, amb, coolest))
    {
        return Err(why);
    }
    let observed = throttle.map(|(s, e)| (e.onset_ns - s.start_ns()) as f64 / NS);
    let at_run_ambient = prediction(&pred_0, 0.0);
    let throttle_s_at_delta = match prediction_fails(&at_run_ambient, observed) {
        Some(why) => Figure::absent(why),
        None => prediction(&pred_d, PREDICT_AMBIENT_DELTA_C),
    };
    Ok(ThermalFit {
        target: target.to_string(),
        rth_c_per_w,
        tau_s: pct(&mut taus, tau),
        ambient_c,
        steps: n,
        residual_c_per_s: residual,
        throttle_s_at_delta,
        ambient_delta_c: PREDICT_AMBIENT_DELTA_C,
        throttle_s_at_run_ambient: at_run_ambient,
    })
}

/// Why a fit of thermal resistance `rth` (°C/W) and ambient `amb` (°C) cannot describe an
/// enclosure whose coolest 1 s mean was `coolest` °C, or None when it can. An ambient
/// outside [`PLAUSIBLE_AMBIENT_C`] is no room; one above every reading of an enclosure that
/// dissipates power would have it heated by the room, not by the drive; a thermal
/// resistance at or below zero makes heat flow from cold to warm. Each says the enclosure
/// did not behave as one RC at the measured power, so none of the fit is printed.
pub fn implausible_fit(rth: f64, amb: f64, coolest: f64) -> Option<String> {
    let (lo, hi) = PLAUSIBLE_AMBIENT_C;
    if rth.is_nan() || rth <= 0.0 {
        return Some(format!(
            "no thermal fit: it gives a thermal resistance of {rth:.2} °C/W, which would move heat from the cooler body to the warmer"
        ));
    }
    if !(lo..=hi).contains(&amb) {
        return Some(format!(
            "no thermal fit: it puts the ambient at {amb:.1} °C, outside any room ({lo:.0}–{hi:.0} °C); the enclosure did not follow one RC at the power measured (it kept heating at constant power, or was heated by more than the power at the probe)"
        ));
    }
    if amb > coolest + 1.0 {
        return Some(format!(
            "no thermal fit: it puts the ambient at {amb:.1} °C, above the enclosure's coolest reading ({coolest:.1} °C) while the drive dissipated power"
        ));
    }
    None
}

/// Why the model's throttle time at the run's own ambient (`at_run`) does not reproduce the
/// `observed` one (s from the series start), or None when it does: the point within
/// [`PREDICTION_CHECK_SHARE`] of it (or [`PREDICTION_CHECK_S`], whichever is more). A model
/// that fails its own run predicts nothing at another ambient.
pub fn prediction_fails(at_run: &Figure, observed: Option<f64>) -> Option<String> {
    let obs = observed?;
    let Some((v, l, h)) = at_run.interval() else {
        let why = match at_run {
            Figure::Absent { absent } => absent.as_str(),
            Figure::Value { .. } => "",
        };
        return Some(format!(
            "not predicted: the model does not reproduce this run's throttle at {obs:.1} s ({why})"
        ));
    };
    let slack = (PREDICTION_CHECK_SHARE * obs).max(PREDICTION_CHECK_S);
    if (v - obs).abs() <= slack {
        return None;
    }
    Some(format!(
        "not predicted: the model puts this run's throttle at {v:.1} s [{l:.1}–{h:.1}], not at the observed {obs:.1} s"
    ))
}

/// Headlines of every series plus the thermal fit of the probed target.
pub fn headlines(all: &[Series], events: &[Event], cx: Context<'_>) -> Headlines {
    let Context {
        probe,
        probe_target,
        phases,
        insufficient,
    } = cx;
    let series = all
        .iter()
        .map(|s| {
            let p = match (probe, probe_target) {
                (None, _) => Err("no probe in this run"),
                (Some(_), None) => Err("the probe's target is not known"),
                (Some(p), Some(t)) if t == s.target => Ok(p),
                (Some(_), Some(_)) => Err("the probe is on another target"),
            };
            let stats = phases
                .iter()
                .find(|p| p.target == s.target && p.phase == s.phase);
            let not_searched = insufficient
                .iter()
                .find(|i| i.target == s.target && i.phase == s.phase)
                .map(|i| i.reason.as_str());
            series_headline(s, events, p, stats, not_searched)
        })
        .collect();
    let thermal_fit = match (probe, probe_target) {
        (None, _) => None,
        (Some(_), None) => Some(Err(
            "several targets and none named as the probed one".to_string()
        )),
        (Some(p), Some(t)) => {
            let throttle = all.iter().filter(|s| s.target == t).find_map(|s| {
                events
                    .iter()
                    .find(|e| {
                        e.target == t
                            && e.phase == s.phase
                            && e.kind == EventKind::Drop
                            && e.cause == Cause::Thermal
                    })
                    .map(|e| (s, e))
            });
            Some(thermal_fit(t, p, throttle))
        }
    };
    Headlines {
        series,
        thermal_fit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(i: u64, start_s: f64, secs: f64, bytes: u64) -> FileRecord {
        FileRecord::new(
            "t",
            "write",
            i as u32,
            (start_s * NS) as u64,
            ((start_s + secs) * NS) as u64,
            bytes,
        )
    }

    #[test]
    fn ratio_interval_covers_the_true_rate_and_narrows_with_more_files() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let make = |n: usize, rng: &mut rand_chacha::ChaCha8Rng| -> Vec<FileRecord> {
            (0..n)
                .map(|i| {
                    let b = rng.gen_range(1e8..1e9) as u64;
                    let r = 1e9 * (1.0 + rng.gen_range(-0.1..0.1));
                    file(i as u64, i as f64, b as f64 / r, b)
                })
                .collect()
        };
        let small = make(10, &mut rng);
        let big = make(400, &mut rng);
        let (v1, l1, h1) = rate_figure(small.iter(), "x").interval().unwrap();
        let (v2, l2, h2) = rate_figure(big.iter(), "x").interval().unwrap();
        assert!(l2 <= 1e9 && 1e9 <= h2, "{l2} {v2} {h2}");
        assert!(l1 <= v1 && v1 <= h1);
        assert!(h2 - l2 < (h1 - l1) / 3.0);
    }

    #[test]
    fn too_few_files_give_a_reason_not_a_number() {
        let f = [file(0, 0.0, 1.0, 1000), file(1, 1.0, 1.0, 1000)];
        match rate_figure(f.iter(), "average") {
            Figure::Absent { absent } => assert!(absent.contains("2 files"), "{absent}"),
            v => panic!("{v:?}"),
        }
    }

    #[test]
    fn median_interval_is_ordered_and_contains_the_median() {
        let x: Vec<f64> = (0..50).map(f64::from).collect();
        let (m, l, h) = median_figure(x, "x").interval().unwrap();
        assert_eq!(m, 24.5);
        assert!(l < m && m < h && l >= 15.0 && h <= 34.0, "{l} {h}");
    }

    /// A probe record of the exact RC model with a power profile of steps.
    fn rc_record(rth: f64, tau: f64, amb: f64, noise_c: f64) -> ProbeSeries {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let mut p = ProbeSeries::default();
        let dt = 0.01;
        let mut temp = amb + rth * 3.0;
        for i in 0..30_000 {
            let t = i as f64 * dt;
            let power = if t < 20.0 {
                3.0
            } else if t < 150.0 {
                8.0
            } else {
                4.5
            };
            temp += (amb + rth * power - temp) * (1.0 - (-dt / tau).exp());
            p.time_ns.push((t * NS) as i64);
            p.power_w.push(power * (1.0 + rng.gen_range(-0.015..0.015)));
            p.enclosure_temp_c
                .push(temp + rng.gen_range(-noise_c..=noise_c));
        }
        p
    }

    #[test]
    fn an_enclosure_heated_by_more_than_the_probe_measured_has_no_fit() {
        // A drive held at a 4.5 W budget that heats as if it drew the 8.2 W it asks for
        // (the probe simulator's old model): one RC cannot fit it at a room's ambient.
        let mut p = ProbeSeries::default();
        let (dt, tau, rth, amb) = (0.01, 20.0, 6.0, 25.0);
        let mut temp = amb + rth * 3.0;
        for i in 0..20_000 {
            let t = i as f64 * dt;
            let (asked, measured) = if t < 40.0 { (3.0, 3.0) } else { (8.2, 4.5) };
            temp += (amb + rth * asked - temp) * (1.0 - (-dt / tau).exp());
            p.time_ns.push((t * NS) as i64);
            p.power_w.push(measured);
            p.enclosure_temp_c.push(temp);
        }
        let why = thermal_fit("t", &p, None).unwrap_err();
        assert!(
            why.starts_with("no thermal fit: it puts the ambient at"),
            "{why}"
        );
    }

    #[test]
    fn fits_outside_physics_are_refused_with_their_reason() {
        // tb-ssd-4w5-port before the simulator's fix: 78.75 °C/W, ambient −279.5 °C.
        let why = implausible_fit(78.75, -279.5, 40.0).unwrap();
        assert!(why.contains("-279.5 °C, outside any room"), "{why}");
        assert!(implausible_fit(-0.5, 25.0, 30.0)
            .unwrap()
            .contains("from the cooler body to the warmer"));
        assert!(implausible_fit(6.0, 38.0, 30.0)
            .unwrap()
            .contains("above the enclosure's coolest reading"));
        assert!(implausible_fit(6.0, 55.0, 60.0).is_some());
        assert_eq!(implausible_fit(6.0, 25.1, 31.0), None);
        assert_eq!(
            implausible_fit(6.0, 25.8, 25.0),
            None,
            "within a reading's 1 °C"
        );
    }

    #[test]
    fn a_model_that_misses_its_own_run_predicts_nothing() {
        // x5-thermal: the model put the run's own throttle at 20.3 s; it came at 10.4 s.
        let at_run = Figure::value(20.3, 10.0, 51.0);
        let why = prediction_fails(&at_run, Some(10.4)).unwrap();
        assert!(
            why.contains("20.3 s [10.0–51.0], not at the observed 10.4 s"),
            "{why}"
        );
        // Within a quarter (or 2 s) it reproduces the run.
        assert_eq!(
            prediction_fails(&Figure::value(8.0, 7.9, 8.0), Some(7.8)),
            None
        );
        assert_eq!(
            prediction_fails(&Figure::value(24.0, 20.0, 30.0), Some(20.0)),
            None
        );
        assert!(prediction_fails(&Figure::value(26.0, 20.0, 30.0), Some(20.0)).is_some());
        // Nothing observed: nothing to check. A model with no throttle time of its own at
        // this run's ambient reproduces nothing.
        assert_eq!(prediction_fails(&at_run, None), None);
        let why = prediction_fails(
            &Figure::absent("970 of 2997 bootstrap fits never get there"),
            Some(13.5),
        )
        .unwrap();
        assert!(
            why.contains("does not reproduce this run's throttle at 13.5 s (970 of 2997"),
            "{why}"
        );
    }

    #[test]
    fn thermal_fit_recovers_the_rc_model_inside_its_intervals() {
        let p = rc_record(6.0, 40.0, 25.0, 0.05);
        let fit = thermal_fit("t", &p, None).unwrap();
        for (fig, truth) in [
            (&fit.rth_c_per_w, 6.0),
            (&fit.tau_s, 40.0),
            (&fit.ambient_c, 25.0),
        ] {
            let (v, l, h) = fig.interval().unwrap();
            assert!(
                l <= truth && truth <= h,
                "{truth} outside {l}–{h} (fit {v})"
            );
            assert!((v - truth).abs() < 0.05 * truth, "{v} vs {truth}");
        }
        assert!(matches!(fit.throttle_s_at_delta, Figure::Absent { .. }));
    }

    #[test]
    fn a_flat_enclosure_gives_no_thermal_fit() {
        let mut p = rc_record(6.0, 40.0, 25.0, 0.05);
        p.enclosure_temp_c.iter_mut().for_each(|t| *t = 30.0);
        let err = thermal_fit("t", &p, None).unwrap_err();
        assert!(err.contains("moved 0.00 °C"), "{err}");
    }

    #[test]
    fn a_short_record_gives_no_thermal_fit() {
        let mut p = rc_record(6.0, 40.0, 25.0, 0.05);
        p.time_ns.truncate(1000);
        p.power_w.truncate(1000);
        p.enclosure_temp_c.truncate(1000);
        let err = thermal_fit("t", &p, None).unwrap_err();
        assert!(err.contains("at least 20 s"), "{err}");
    }

    #[test]
    fn warmer_ambient_throttles_sooner_as_the_model_says() {
        // Throttle at the temperature reached 60 s into the 8 W stretch; at +10 °C the model
        // reaches it when the rise is 10 °C smaller.
        let (rth, tau, amb) = (6.0, 40.0, 25.0);
        let p = rc_record(rth, tau, amb, 0.05);
        let files: Vec<FileRecord> = (0..100)
            .map(|i| file(i, 20.0 + i as f64, 1.0, 1_000_000_000))
            .collect();
        let s = &crate::series::group(&files)[0];
        let onset_s = 80.0;
        let onset_ns = (onset_s * NS) as i64;
        let ev = Event {
            target: "t".into(),
            phase: "write".into(),
            kind: EventKind::Drop,
            onset_bytes: 60_000_000_000,
            onset_ns,
            onset_bytes_low: 59_900_000_000,
            onset_bytes_high: 60_100_000_000,
            onset_ns_low: onset_ns - NS as i64 / 10,
            onset_ns_high: onset_ns + NS as i64 / 10,
            p_value: 0.002,
            permutations: 999,
            gradual: false,
            settle_bytes: 0,
            settle_ns: 0,
            rate_before_bps: 1e9,
            rate_after_bps: 5e8,
            relative_change: -0.5,
            stall: None,
            found_by: Default::default(),
            cause: Cause::Thermal,
            confidence: 0.9,
            evidence: Default::default(),
        };
        let fit = thermal_fit("t", &p, Some((s, &ev))).unwrap();
        // Truth: T(t) = 43 + 30(1 − e^(−(t−20)/40)); T_th = T(80); at +10 °C the rise needed
        // is 10 °C less.
        let t_th_rise = 30.0 * (1.0 - (-60.0f64 / tau).exp());
        let truth = -tau * (1.0 - (t_th_rise - 10.0) / 30.0).ln();
        let (v, l, h) = fit.throttle_s_at_delta.interval().unwrap();
        assert!(l <= truth && truth <= h, "{truth} outside {l}–{h} ({v})");
        let (v0, l0, h0) = fit.throttle_s_at_run_ambient.interval().unwrap();
        assert!(l0 <= 60.0 && 60.0 <= h0, "{l0} {v0} {h0}");
    }
}
