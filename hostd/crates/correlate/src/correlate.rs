//! Per-file and per-phase figures from the probe timeline, and the energy
//! balance: per-file energy shares plus idle energy against the accumulator.
//!
//! Energy is the difference of the unwrapped ENERGY accumulator at the
//! file's start and end (linear between readings), so nothing is integrated
//! on the host. Power and temperature figures come from the 10 ms bins:
//! mean power = energy / duration; min and peak power are the lowest and
//! highest 10 ms means; temperatures at start and end are the 10 ms means
//! nearest those instants. When files of several targets overlap, the
//! bus energy of an overlapping stretch is shared equally among the files
//! active in it (`energy_share_j`); `energy_j` is always the whole bus
//! energy during the file.

use crate::timeline::Timeline;
use hostd_probe::agg::AGG_BIN_NS;
use hostd_records::energy::phase_energy;
use hostd_records::{FileProbe, FileRecord};
use serde::Serialize;

/// Probe figures for one file (`None` where the probe has no data): the `files.csv` probe
/// columns ([`FileProbe`], its `probe` left empty) keyed by the file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileEnergy {
    /// Target label.
    pub target: String,
    /// Phase.
    pub phase: String,
    /// Index in the phase.
    pub index: u32,
    /// The figures.
    #[serde(flatten)]
    pub figures: FileProbe,
}

impl From<FileEnergy> for hostd_records::files_probe::FigureRow {
    /// The file's row of `files-probe.csv`.
    fn from(f: FileEnergy) -> Self {
        Self {
            target: f.target,
            phase: f.phase,
            index: f.index,
            figures: f.figures,
        }
    }
}

/// Power profile of one phase of one target.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhasePower {
    /// Target label.
    pub target: String,
    /// Phase.
    pub phase: String,
    /// First file start, host Unix ns.
    pub start_ns: i64,
    /// Last file end, host Unix ns.
    pub end_ns: i64,
    /// Bytes of the phase's files.
    pub bytes: u64,
    /// Σ of the files' bus energies (see `hostd_records::energy`), J.
    pub energy_j: Option<f64>,
    /// Energy per GB, J/GB.
    pub j_per_gb: Option<f64>,
    /// Mean bus power over the files' time (energy / Σ durations), W.
    pub mean_power_w: Option<f64>,
    /// Lowest 10 ms mean bus power, W.
    pub min_power_w: Option<f64>,
    /// Highest 10 ms mean bus power, W.
    pub peak_power_w: Option<f64>,
    /// Highest enclosure temperature, °C.
    pub temp_max_c: Option<f64>,
}

/// The energy balance of the run: two independent measurements of the
/// same energy. The per-file and idle energy come from the POWER register
/// samples integrated over time (10 ms means × duration); the reference is
/// the chip's own ENERGY accumulator over the same stretches.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnergyBalance {
    /// Accumulator difference over the whole probe record, J.
    pub accumulator_j: f64,
    /// Σ over files of the integrated bus power during the file (split
    /// equally where files overlap), J.
    pub files_j: f64,
    /// Integrated bus power while no file was in progress, J.
    pub idle_j: f64,
    /// Accumulator difference over the stretches that have power samples
    /// (= `accumulator_j` without gaps in the stream), J.
    pub covered_accumulator_j: f64,
    /// `|files + idle − covered accumulator| / covered accumulator`; the
    /// figure that must stay ≤ 0.1 %.
    pub relative_error: f64,
    /// Time in the probe record without power samples (gaps), s.
    pub uncovered_s: f64,
    /// Σ of the files' accumulator-based `energy_share_j`, J.
    pub files_accumulator_j: f64,
    /// Files (partly) outside the probe record, not in the balance.
    pub files_outside_probe: usize,
}

/// Everything correlation produces.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Correlation {
    /// One entry per file, in input order.
    pub files: Vec<FileEnergy>,
    /// One entry per (target, phase), in order of first appearance.
    pub phases: Vec<PhasePower>,
    /// The balance, when the probe recorded energy.
    pub balance: Option<EnergyBalance>,
}

/// Correlates `files` with the probe `timeline`.
pub fn correlate(timeline: &Timeline, files: &[FileRecord]) -> Correlation {
    let spans = spans(files);
    let shares = energy_shares(timeline, &spans);
    let per_file = files
        .iter()
        .zip(&shares.shares)
        .map(|(f, share)| file_energy(timeline, f, *share))
        .collect();
    let phases = phase_power(
        files,
        |a, b| energy_between(timeline, a, b),
        |start, end| {
            let mut stats = BinStats::default();
            timeline
                .bins_between(start, end, AGG_BIN_NS)
                .iter()
                .for_each(|b| stats.add(b));
            stats
        },
    );
    Correlation {
        files: per_file,
        phases,
        balance: balance(timeline, &spans, &shares),
    }
}

/// Each file's (start, end), host Unix ns.
pub(crate) fn spans(files: &[FileRecord]) -> Vec<(i64, i64)> {
    files
        .iter()
        .map(|f| (f.start_ns as i64, f.end_ns as i64))
        .collect()
}

pub(crate) fn energy_between(t: &Timeline, start: i64, end: i64) -> Option<f64> {
    Some(t.energy_at(end)? - t.energy_at(start)?)
}

pub(crate) fn file_energy(t: &Timeline, f: &FileRecord, share: Option<f64>) -> FileEnergy {
    let energy = energy_between(t, f.start_ns as i64, f.end_ns as i64);
    let secs = ((f.end_ns as i64) - (f.start_ns as i64)) as f64 / 1e9;
    let bins = t.bins_between(f.start_ns as i64, f.end_ns as i64, AGG_BIN_NS);
    let max_of = |pick: fn(&hostd_records::agg::AggRow) -> f64| {
        bins.iter()
            .map(pick)
            .filter(|v| !v.is_nan())
            .reduce(f64::max)
    };
    let at = |time: i64, pick: fn(&hostd_records::agg::AggRow) -> f64| {
        t.bin_at(time).map(pick).filter(|v| !v.is_nan())
    };
    let (vsum, vn) = bins
        .iter()
        .filter(|b| !b.vbus_v.is_empty())
        .fold((0.0, 0u64), |(s, n), b| {
            (s + b.vbus_v.mean * b.samples as f64, n + b.samples as u64)
        });
    FileEnergy {
        target: f.target.clone(),
        phase: f.phase.clone(),
        index: f.index,
        figures: FileProbe {
            probe: String::new(),
            energy_j: energy,
            energy_share_j: share,
            j_per_gb: energy
                .filter(|_| f.bytes > 0)
                .map(|e| e / (f.bytes as f64 / 1e9)),
            mean_power_w: energy.filter(|_| secs > 0.0).map(|e| e / secs),
            peak_power_w: max_of(|b| b.power_w.mean),
            vbus_v: (vn > 0).then(|| vsum / vn as f64),
            temp_start_c: at(f.start_ns as i64, |b| b.enclosure_temp_c.mean),
            temp_end_c: at(f.end_ns as i64, |b| b.enclosure_temp_c.mean),
            temp_max_c: max_of(|b| b.enclosure_temp_c.max),
            die_temp_start_c: at(f.start_ns as i64, |b| b.die_temp_c.mean),
            die_temp_end_c: at(f.end_ns as i64, |b| b.die_temp_c.mean),
            die_temp_max_c: max_of(|b| b.die_temp_c.max),
        },
    }
}

/// The 10 ms bins' figures over a phase: lowest and highest mean power, highest
/// enclosure temperature (NaN means left out), folded in time order.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct BinStats {
    min_power_w: Option<f64>,
    peak_power_w: Option<f64>,
    temp_max_c: Option<f64>,
}

impl BinStats {
    /// Adds the next bin (in time order).
    pub(crate) fn add(&mut self, b: &hostd_records::agg::AggRow) {
        let fold = |acc: Option<f64>, v: f64, f: fn(f64, f64) -> f64| match acc {
            _ if v.is_nan() => acc,
            Some(a) => Some(f(a, v)),
            None => Some(v),
        };
        self.min_power_w = fold(self.min_power_w, b.power_w.mean, f64::min);
        self.peak_power_w = fold(self.peak_power_w, b.power_w.mean, f64::max);
        self.temp_max_c = fold(self.temp_max_c, b.enclosure_temp_c.max, f64::max);
    }
}

/// The phases of `files` in order of first appearance: the energy of each file from
/// `energy_between(start, end)`, the bin figures over the phase's span from
/// `bins(start, end)`.
pub(crate) fn phase_power(
    files: &[FileRecord],
    energy_between: impl Fn(i64, i64) -> Option<f64>,
    mut bins: impl FnMut(i64, i64) -> BinStats,
) -> Vec<PhasePower> {
    phase_spans(files)
        .into_iter()
        .map(|(target, phase, start, end)| {
            let mine = || {
                files
                    .iter()
                    .filter(|f| f.target == target && f.phase == phase)
            };
            let energy = phase_energy(
                mine().map(|f| (f.start_ns as i64, f.end_ns as i64, f.bytes)),
                &energy_between,
            );
            let stats = bins(start, end);
            PhasePower {
                bytes: mine().map(|f| f.bytes).sum(),
                target,
                phase,
                start_ns: start,
                end_ns: end,
                energy_j: energy.energy_j,
                j_per_gb: energy.j_per_gb,
                mean_power_w: energy.mean_power_w,
                min_power_w: stats.min_power_w,
                peak_power_w: stats.peak_power_w,
                temp_max_c: stats.temp_max_c,
            }
        })
        .collect()
}

/// (target, phase, first start, last end) of each phase of `files`, in order of first
/// appearance.
pub(crate) fn phase_spans(files: &[FileRecord]) -> Vec<(String, String, i64, i64)> {
    let mut out: Vec<(String, String, i64, i64)> = Vec::new();
    for f in files {
        let (start, end) = (f.start_ns as i64, f.end_ns as i64);
        match out.iter_mut().find(|p| p.0 == f.target && p.1 == f.phase) {
            Some(p) => {
                p.2 = p.2.min(start);
                p.3 = p.3.max(end);
            }
            None => out.push((f.target.clone(), f.phase.clone(), start, end)),
        }
    }
    out
}

/// Each file's share of the energy, the idle energy, and the files outside the record.
pub(crate) struct Shares {
    pub(crate) shares: Vec<Option<f64>>,
    /// Σ of the stretches with a file active, J (the shares' sum, added stretch by
    /// stretch in time order, as [`crate::share_sweep`] adds it).
    pub(crate) files_j: f64,
    pub(crate) idle_j: f64,
    pub(crate) outside: usize,
}

/// Splits the probe record `[first, last]` into stretches between file
/// boundaries; each stretch's energy — `energy(b) − energy(a)` of the given
/// cumulative energy function — goes equally to the files active in it, or
/// to idle. Files not wholly inside the record are left out.
pub(crate) fn shares_by(
    files: &[(i64, i64)],
    first: i64,
    last: i64,
    energy: impl Fn(i64) -> f64,
) -> Shares {
    let mut shares = vec![None; files.len()];
    let inside: Vec<usize> = (0..files.len())
        .filter(|&i| files[i].0 >= first && files[i].1 <= last && files[i].1 >= files[i].0)
        .collect();
    let mut bounds: Vec<i64> = vec![first, last];
    for &i in &inside {
        bounds.push(files[i].0);
        bounds.push(files[i].1);
        shares[i] = Some(0.0);
    }
    bounds.sort_unstable();
    bounds.dedup();
    let (mut idle_j, mut files_j) = (0.0, 0.0);
    for w in bounds.windows(2) {
        let (a, b) = (w[0], w[1]);
        let e = energy(b) - energy(a);
        let active: Vec<usize> = inside
            .iter()
            .copied()
            .filter(|&i| files[i].0 <= a && files[i].1 >= b)
            .collect();
        if active.is_empty() {
            idle_j += e;
        } else {
            files_j += e;
            for i in &active {
                if let Some(s) = shares[*i].as_mut() {
                    *s += e / active.len() as f64;
                }
            }
        }
    }
    Shares {
        shares,
        files_j,
        idle_j,
        outside: files.len() - inside.len(),
    }
}

/// Accumulator energy shares of each file (`energy_share_j`).
fn energy_shares(t: &Timeline, files: &[(i64, i64)]) -> Shares {
    match t.energy_span() {
        Some((first, last)) => shares_by(files, first, last, |x| t.energy_at(x).unwrap_or(0.0)),
        None => Shares {
            shares: vec![None; files.len()],
            files_j: 0.0,
            idle_j: 0.0,
            outside: files.len(),
        },
    }
}

/// ∫ power dt from the 10 ms power bins (the bin's mean power over its
/// conversions × the part of the bin inside `[first, last]`), as a cumulative
/// function of time: where power went inside a stretch between two
/// accumulator readings, to a bin's resolution.
struct PowerIntegral {
    starts: Vec<i64>,
    cum: Vec<f64>,
    power: Vec<f64>,
    first: i64,
    last: i64,
}

impl PowerIntegral {
    fn new(t: &Timeline, first: i64, last: i64) -> Self {
        let (mut starts, mut cum, mut power) = (Vec::new(), vec![0.0], Vec::new());
        for b in t.power.iter().filter(|b| b.covered_ns > 0) {
            starts.push(b.time_ns);
            power.push(b.mean_w());
            let (a, z) = (b.time_ns.max(first), (b.time_ns + AGG_BIN_NS).min(last));
            let prev = *cum.last().unwrap_or(&0.0);
            cum.push(prev + b.mean_w() * (z - a).max(0) as f64 / 1e9);
        }
        Self {
            starts,
            cum,
            power,
            first,
            last,
        }
    }

    /// Joules from `first` to `t`.
    fn at(&self, t: i64) -> f64 {
        let t = t.clamp(self.first, self.last);
        let k = self.starts.partition_point(|&s| s + AGG_BIN_NS <= t);
        match self.starts.get(k) {
            Some(&s) if s <= t => {
                let a = s.max(self.first);
                self.cum[k] + self.power[k] * (t - a).max(0) as f64 / 1e9
            }
            _ => self.cum[k],
        }
    }
}

/// The power samples' energy as a cumulative function of time over the
/// accumulator record. Between two accumulator readings with every conversion
/// measured it adds exactly the power samples' energy over that stretch (each
/// conversion × its length), spread inside the stretch as the 10 ms bins spread
/// it; a stretch with an unmeasured conversion (lost samples) adds nothing on
/// either side of the balance.
struct MeasuredPower<'t> {
    /// The accumulator readings (host Unix ns, J).
    readings: &'t [(i64, f64)],
    /// Measured energy before each reading, J.
    before: Vec<f64>,
    /// Each stretch's measured energy, `None` where a conversion is unmeasured.
    stretches: Vec<Option<f64>>,
    bins: PowerIntegral,
}

impl<'t> MeasuredPower<'t> {
    fn new(t: &'t Timeline, bins: PowerIntegral) -> Self {
        let stretches: Vec<Option<f64>> = t
            .power_at_energy
            .windows(2)
            .map(|w| (w[0].1 == w[1].1).then_some(w[1].0 - w[0].0))
            .collect();
        let mut before = vec![0.0];
        for s in &stretches {
            before.push(before.last().unwrap_or(&0.0) + s.unwrap_or(0.0));
        }
        Self {
            readings: &t.energy,
            before,
            stretches,
            bins,
        }
    }

    /// Measured joules from the first reading to `x`.
    fn at(&self, x: i64) -> f64 {
        let k = self
            .readings
            .partition_point(|&(t, _)| t <= x)
            .saturating_sub(1);
        let (Some(Some(joules)), Some(&(a, _)), Some(&(b, _))) = (
            self.stretches.get(k),
            self.readings.get(k),
            self.readings.get(k + 1),
        ) else {
            return self.before[k.min(self.before.len() - 1)];
        };
        let (ia, ib) = (self.bins.at(a), self.bins.at(b));
        let part = if ib > ia {
            (self.bins.at(x) - ia) / (ib - ia)
        } else {
            (x - a) as f64 / (b - a) as f64
        };
        self.before[k] + joules * part.clamp(0.0, 1.0)
    }

    /// The accumulator over the measured stretches, J, and the time of the others, ns.
    fn covered(&self) -> (f64, i64) {
        let (mut joules, mut uncovered_ns) = (0.0, 0);
        for (w, s) in self.readings.windows(2).zip(&self.stretches) {
            match s {
                Some(_) => joules += w[1].1 - w[0].1,
                None => uncovered_ns += w[1].0 - w[0].0,
            }
        }
        (joules, uncovered_ns)
    }
}

/// The balance: files + idle energy from the POWER samples integrated over
/// time, against the ENERGY accumulator over the same measured stretches.
fn balance(
    t: &Timeline,
    files: &[(i64, i64)],
    accumulator_shares: &Shares,
) -> Option<EnergyBalance> {
    let (first, last) = t.energy_span()?;
    let accumulator = t.energy_at(last)? - t.energy_at(first)?;
    let measured = MeasuredPower::new(t, PowerIntegral::new(t, first, last));
    let by_power = shares_by(files, first, last, |x| measured.at(x));
    Some(balance_of(
        accumulator,
        (by_power.files_j, by_power.idle_j),
        measured.covered(),
        (accumulator_shares.files_j, accumulator_shares.outside),
    ))
}

/// The balance from its parts: the accumulator over the record; the power samples' energy
/// in files and idle; the accumulator over the measured stretches and the time of the
/// others (ns); the accumulator's energy in files and the files outside the record.
pub(crate) fn balance_of(
    accumulator: f64,
    (files_j, idle_j): (f64, f64),
    (covered_accumulator, uncovered_ns): (f64, i64),
    (files_accumulator_j, outside): (f64, usize),
) -> EnergyBalance {
    let rel = |x: f64, reference: f64| {
        if reference.abs() > 0.0 {
            (x - reference).abs() / reference.abs()
        } else {
            0.0
        }
    };
    EnergyBalance {
        accumulator_j: accumulator,
        files_j,
        idle_j,
        covered_accumulator_j: covered_accumulator,
        relative_error: rel(files_j + idle_j, covered_accumulator),
        uncovered_s: uncovered_ns as f64 / 1e9,
        files_accumulator_j,
        files_outside_probe: outside,
    }
}
