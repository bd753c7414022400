//! Correlation as the run goes, in bounded memory: [`Correlator`] takes the probe's
//! samples and the probed target's file starts and ends, works out each file's figures
//! once the probe has passed its end, and keeps of the probe record only a sliding window
//! (back to the oldest file still open, at least [`KEEP_NS`]) plus running totals. Each
//! file's energy share grows in a [`ShareSweep`] until no file still to come can touch it;
//! then its figures are final and wait in [`Correlator::take_settled`] for whoever writes
//! them (`hostd run` appends them to `files-probe.csv`). The figures are those
//! [`crate::correlate()`] computes from the whole record: the same functions over the same
//! data (see the module tests and `tests/bounded.rs`).

use crate::correlate::{
    balance_of, file_energy, phase_power, phase_spans, BinStats, Correlation, EnergyBalance,
    FileEnergy, PhasePower,
};
use crate::share_sweep::{Point, ShareSweep};
use crate::timeline::Timeline;
use hostd_records::agg::AggRow;
use hostd_records::binning::AGG_BIN_NS;
use hostd_records::{FileRecord, ProbeSample};
use std::collections::HashMap;

/// Probe record kept behind the newest sample, ns: a power bin is final this far behind
/// (a conversion's power is spread back to the previous sample's time).
pub const KEEP_NS: i64 = 2_000_000_000;
/// Extra record kept before the oldest instant still to be correlated, ns. The share
/// sweep also stays this far behind [`KEEP_NS`]: a file start told later than that
/// (`RunEvent::FileStart` held up for seconds) gets no share, and is counted.
const MARGIN_NS: i64 = 1_000_000_000;
/// A file whose end has no accumulator reading or 10 ms bin after it this long after, by
/// the samples' clock or by the ends of the files told since (the probe stopped sending),
/// is correlated with what there is, ns; if its end is past the last accumulator reading
/// then, it has no energy share. So a probe that goes silent holds back at most this much
/// of the run's files.
const GIVE_UP_NS: i64 = 60_000_000_000;

/// One power bin's part of the power integral (`correlate::PowerIntegral`), final.
#[derive(Debug, Clone, Copy)]
struct IntegralBin {
    start: i64,
    power_w: f64,
    /// Joules of the bins before it, from the first accumulator reading.
    cum_before: f64,
}

/// Running figures of every 10 ms bin (`hostd monitor`'s summary).
#[derive(Debug, Clone, Copy, Default)]
pub struct BinTotals {
    /// Lowest 10 ms mean bus power, W.
    pub min_power_w: Option<f64>,
    /// Highest 10 ms mean bus power, W.
    pub peak_power_w: Option<f64>,
    /// First 10 ms mean enclosure temperature, °C.
    pub temp_first_c: Option<f64>,
    /// Latest 10 ms mean enclosure temperature, °C.
    pub temp_last_c: Option<f64>,
}

/// Streaming correlation; see the module documentation.
#[derive(Debug, Default)]
pub struct Correlator {
    /// The window of the probe record.
    window: Timeline,
    /// Measured energy before each reading of the window (`MeasuredPower::before`).
    before: Vec<f64>,
    /// Final power bins of the window.
    integral: Vec<IntegralBin>,
    /// Joules of every final power bin.
    integral_total: f64,
    /// End of the last final power bin.
    final_until: i64,
    first_reading: Option<(i64, f64)>,
    /// The accumulator over the measured stretches, J, and the time of the others, ns.
    covered: (f64, i64),
    /// Accumulator energy and `measured_at` at the first reading, once known.
    at_first: Option<(Option<f64>, f64)>,
    latest_ns: i64,
    /// The latest end of a file told, ns: the run's clock while no samples come.
    latest_file_ns: i64,
    /// Probed files started and not ended: (phase, index, start ns).
    open: Vec<(String, u32, i64)>,
    /// Ended, waiting for the probe record past their end.
    pending: Vec<FileRecord>,
    /// Energy shares of the correlated files still overlapping what is to come.
    shares: ShareSweep,
    /// Files whose figures are final, not yet taken.
    settled: Vec<FileEnergy>,
    /// Files correlated so far.
    correlated: usize,
    /// What the `probe` column of the settled figures says.
    probe: String,
    totals: BinTotals,
    /// Whether the stream ended.
    flushed: bool,
    /// The energy balance, once the stream ended and every share was settled.
    balance: Option<EnergyBalance>,
    /// Files correlated without their whole span in the window (a file start not seen).
    pub late_files: u64,
}

impl Correlator {
    /// Empty.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a sample (in time order); returns a completed 10 ms bin, if any. Call
    /// [`Correlator::advance`] after a batch.
    pub fn push(&mut self, s: &ProbeSample) -> Option<AggRow> {
        self.latest_ns = self.latest_ns.max(s.time_ns);
        let row = self.window.push(s);
        if let Some(r) = &row {
            self.add_totals(r);
        }
        row
    }

    fn add_totals(&mut self, r: &AggRow) {
        let t = &mut self.totals;
        let p = r.power_w.mean;
        if !p.is_nan() {
            t.min_power_w = Some(t.min_power_w.map_or(p, |m| m.min(p)));
            t.peak_power_w = Some(t.peak_power_w.map_or(p, |m| m.max(p)));
        }
        let c = r.enclosure_temp_c.mean;
        if !c.is_nan() {
            t.temp_first_c.get_or_insert(c);
            t.temp_last_c = Some(c);
        }
    }

    /// A probed file started at `time_ns`: the window keeps the record from then on.
    pub fn file_started(&mut self, phase: &str, index: u32, time_ns: i64) {
        self.open.push((phase.to_string(), index, time_ns));
    }

    /// A probed file ended: it is correlated once the probe record has passed its end.
    pub fn file_ended(&mut self, f: &FileRecord) {
        self.open
            .retain(|(phase, index, _)| !(*phase == f.phase && *index == f.index));
        // What correlation reads of it (not its latency or corruption details).
        let slim = FileRecord::new(&f.target, &f.phase, f.index, f.start_ns, f.end_ns, f.bytes);
        self.latest_file_ns = self.latest_file_ns.max(f.end_ns as i64);
        self.pending.push(slim);
        self.advance();
    }

    /// Closes the stream: the open 10 ms bin, every power bin final; correlates the
    /// files still waiting and settles every share (the balance is then known). A second
    /// call does nothing.
    pub fn flush(&mut self) -> Option<AggRow> {
        if self.flushed {
            return None;
        }
        let row = self.window.flush();
        if let Some(r) = &row {
            self.add_totals(r);
        }
        self.flushed = true;
        self.advance();
        self.close_shares();
        row
    }

    /// Names the probe in the `probe` column of the figures settled from now on.
    pub fn set_probe(&mut self, probe: &str) {
        self.probe = probe.to_string();
    }

    /// The files whose figures (energy share included) are final since the last call, in
    /// the order they settled.
    pub fn take_settled(&mut self) -> Vec<FileEnergy> {
        std::mem::take(&mut self.settled)
    }

    /// The energy balance of the whole record (after [`Correlator::flush`]; `None` before,
    /// or when the probe recorded no energy).
    pub fn balance(&self) -> Option<&EnergyBalance> {
        self.balance.as_ref()
    }

    /// Running figures of every bin so far.
    pub fn totals(&self) -> BinTotals {
        self.totals
    }

    /// First and last accumulator readings (host ns, J).
    pub fn energy_span(&self) -> Option<((i64, f64), (i64, f64))> {
        Some((self.first_reading?, *self.window.energy.last()?))
    }

    /// Elements the window holds now (bins, power bins, readings), the figure that stays
    /// bounded whatever the run's length.
    pub fn retained(&self) -> usize {
        self.window.bins.len()
            + self.window.power.len()
            + self.window.energy.len()
            + self.integral.len()
            + self.pending.len()
            + self.shares.held()
            + self.settled.len()
    }

    /// Files correlated so far.
    pub fn files_done(&self) -> usize {
        self.correlated
    }

    /// Brings the running state up to the samples pushed: new readings' measured energy,
    /// final power bins, files whose end the record has passed; then drops what no
    /// instant still to be correlated needs.
    pub fn advance(&mut self) {
        self.extend_readings();
        self.finalize_power();
        if self.at_first.is_none() {
            if let Some((first, e_first)) = self.first_reading {
                if self.ready(first) {
                    let at_first = (self.window.energy_at(first), self.measured_at(first));
                    self.at_first = Some(at_first);
                    self.shares.begin(Point {
                        time: first,
                        accumulator_j: at_first.0.unwrap_or(e_first),
                        measured_j: at_first.1,
                    });
                }
            }
        }
        let pending = std::mem::take(&mut self.pending);
        for f in pending {
            if self.ready(f.end_ns as i64) {
                self.correlate_file(f);
            } else {
                self.pending.push(f);
            }
        }
        if !self.flushed {
            let horizon = self.share_horizon();
            self.shares.sweep(horizon, &mut self.settled);
        }
        self.trim();
    }

    /// The instant before which every file boundary is known: the oldest start of a file
    /// not yet correlated, held back from the newest sample as far as a file start may be
    /// told late, and no later than the last accumulator reading.
    fn share_horizon(&self) -> i64 {
        let mut h = self.latest_ns - KEEP_NS - MARGIN_NS;
        if let Some(&(last, _)) = self.window.energy.last() {
            h = h.min(last);
        }
        for &(_, _, t) in &self.open {
            h = h.min(t);
        }
        for f in &self.pending {
            h = h.min(f.start_ns as i64);
        }
        h
    }

    /// At the stream's end: every share settled to the last reading, and the balance.
    fn close_shares(&mut self) {
        let Some(((first, e_first), (last, e_last))) = self.energy_span() else {
            return;
        };
        let (at_first, m_first) = self.at_first.unwrap_or((Some(e_first), 0.0));
        let (at_first, at_last) = (
            at_first.unwrap_or(e_first),
            self.window.energy_at(last).unwrap_or(e_last),
        );
        self.shares.begin(Point {
            time: first,
            accumulator_j: at_first,
            measured_j: m_first,
        });
        let end = Point {
            time: last,
            accumulator_j: at_last,
            measured_j: self.measured_at(last),
        };
        self.shares.close(end, &mut self.settled);
        let t = self.shares.totals();
        if t.late > 0 {
            tracing::warn!(
                "{} file(s) have no energy share: their start was told after the shares had passed it",
                t.late
            );
        }
        self.balance = Some(balance_of(
            at_last - at_first,
            (t.files_measured_j, t.idle_measured_j),
            self.covered,
            (t.files_accumulator_j, t.outside),
        ));
    }

    fn extend_readings(&mut self) {
        let (r, pae) = (&self.window.energy, &self.window.power_at_energy);
        if self.first_reading.is_none() {
            self.first_reading = r.first().copied();
        }
        while self.before.len() < r.len() {
            let k = self.before.len();
            if k == 0 {
                self.before.push(0.0);
                continue;
            }
            let stretch = (pae[k - 1].1 == pae[k].1).then_some(pae[k].0 - pae[k - 1].0);
            self.before
                .push(self.before[k - 1] + stretch.unwrap_or(0.0));
            match stretch {
                Some(_) => self.covered.0 += r[k].1 - r[k - 1].1,
                None => self.covered.1 += r[k].0 - r[k - 1].0,
            }
        }
    }

    fn finalize_power(&mut self) {
        let until = if self.flushed {
            i64::MAX
        } else {
            (self.latest_ns - KEEP_NS).div_euclid(AGG_BIN_NS) * AGG_BIN_NS
        };
        let n = self
            .window
            .power
            .partition_point(|b| b.time_ns.saturating_add(AGG_BIN_NS) <= until);
        let first = self.first_reading.map(|r| r.0);
        for b in self.window.power.drain(..n) {
            let joules = match first {
                // Clipped to the record as `PowerIntegral` clips it (nothing before the
                // first reading; no reading yet means the bin is before it).
                Some(first) => {
                    let a = b.time_ns.max(first);
                    b.mean_w() * (b.time_ns + AGG_BIN_NS - a).max(0) as f64 / 1e9
                }
                None => 0.0,
            };
            if b.time_ns < self.final_until {
                // A conversion that came more than KEEP_NS late: counted, not placed.
                self.integral_total += joules;
                continue;
            }
            self.integral.push(IntegralBin {
                start: b.time_ns,
                power_w: b.mean_w(),
                cum_before: self.integral_total,
            });
            self.integral_total += joules;
            self.final_until = b.time_ns + AGG_BIN_NS;
        }
        if until > self.final_until {
            self.final_until = until;
        }
    }

    /// Whether the figures at `x` no longer change: a 10 ms bin and an accumulator
    /// reading after it, the power bins up to that reading final (or the stream ended,
    /// or nothing came for [`GIVE_UP_NS`]).
    fn ready(&self, x: i64) -> bool {
        if self.flushed || self.latest_ns.max(self.latest_file_ns) > x.saturating_add(GIVE_UP_NS) {
            return true;
        }
        let bin_after = self.window.bins.last().is_some_and(|b| b.time_ns > x);
        let r = &self.window.energy;
        let reading_after = r.get(r.partition_point(|&(t, _)| t <= x));
        bin_after
            && reading_after.is_some_and(|&(b, _)| {
                b.div_euclid(AGG_BIN_NS) * AGG_BIN_NS + AGG_BIN_NS <= self.final_until
            })
    }

    /// `PowerIntegral::at` over the final power bins.
    fn integral_at(&self, t: i64) -> f64 {
        let (Some((first, _)), Some(&(last, _))) = (self.first_reading, self.window.energy.last())
        else {
            return 0.0;
        };
        let t = t.clamp(first, last);
        let k = self.integral.partition_point(|b| b.start + AGG_BIN_NS <= t);
        match self.integral.get(k) {
            Some(b) if b.start <= t => {
                b.cum_before + b.power_w * (t - b.start.max(first)).max(0) as f64 / 1e9
            }
            Some(b) => b.cum_before,
            None => self.integral_total,
        }
    }

    /// `MeasuredPower::at` over the window.
    fn measured_at(&self, x: i64) -> f64 {
        let (r, pae) = (&self.window.energy, &self.window.power_at_energy);
        if self.before.is_empty() {
            return 0.0;
        }
        let k = r.partition_point(|&(t, _)| t <= x).saturating_sub(1);
        let stretch = (k + 1 < r.len())
            .then(|| (pae[k].1 == pae[k + 1].1).then_some(pae[k + 1].0 - pae[k].0))
            .flatten();
        let Some(joules) = stretch else {
            return self.before[k.min(self.before.len() - 1)];
        };
        let (a, b) = (r[k].0, r[k + 1].0);
        let (ia, ib) = (self.integral_at(a), self.integral_at(b));
        let part = if ib > ia {
            (self.integral_at(x) - ia) / (ib - ia)
        } else {
            (x - a) as f64 / (b - a) as f64
        };
        self.before[k] + joules * part.clamp(0.0, 1.0)
    }

    fn correlate_file(&mut self, f: FileRecord) {
        let (start, end) = (f.start_ns as i64, f.end_ns as i64);
        let window_from = self.window.energy.first().map(|r| r.0);
        if self.first_reading.map(|r| r.0) != window_from && window_from.is_some_and(|w| w > start)
        {
            self.late_files += 1;
            tracing::warn!(
                "probe figures of {} {} #{} from part of its span (its start came too late)",
                f.target,
                f.phase,
                f.index
            );
        }
        let mut figures = file_energy(&self.window, &f, None);
        figures.figures.probe.clone_from(&self.probe);
        self.correlated += 1;
        let last = self.window.energy.last().map(|r| r.0);
        let inside = self.shares.at().is_some()
            && self.first_reading.is_some_and(|(first, _)| start >= first)
            && end >= start
            && last.is_some_and(|last| end <= last);
        if !inside {
            // Before the first reading, past the last one (the stream ended, or the probe
            // gave no reading for GIVE_UP_NS), or before the shares began.
            self.shares.outside(figures, &mut self.settled);
            return;
        }
        let point = |this: &Self, t: i64| Point {
            time: t,
            accumulator_j: this.window.energy_at(t).unwrap_or(0.0),
            measured_j: this.measured_at(t),
        };
        let (a, b) = (point(self, start), point(self, end));
        self.shares.add(figures, a, b, &mut self.settled);
    }

    /// Drops the record before the oldest instant still to be correlated (less a
    /// margin), keeping at least [`KEEP_NS`] behind the newest sample; in chunks, so that
    /// the cost per sample stays constant.
    fn trim(&mut self) {
        if self.flushed {
            return;
        }
        let mut hold = self.latest_ns - KEEP_NS;
        for &(_, _, t) in &self.open {
            hold = hold.min(t);
        }
        for f in &self.pending {
            hold = hold.min(f.start_ns as i64);
        }
        if let (None, Some((first, _))) = (self.at_first, self.first_reading) {
            hold = hold.min(first);
        }
        let hold = hold - MARGIN_NS;
        let w = &mut self.window;
        // The last bin and reading at or before `hold` stay: `bin_at` and `energy_at`
        // look one back.
        let bins = w
            .bins
            .partition_point(|b| b.time_ns <= hold)
            .saturating_sub(1);
        if bins >= 1024 && bins * 2 >= w.bins.len() {
            w.bins.drain(..bins);
        }
        let readings = w
            .energy
            .partition_point(|&(t, _)| t <= hold)
            .saturating_sub(1);
        if readings >= 1024 && readings * 2 >= w.energy.len() {
            w.energy.drain(..readings);
            w.power_at_energy.drain(..readings);
            self.before.drain(..readings);
        }
        // `integral_at` is asked about instants from the first reading kept on.
        let from = w.energy.first().map_or(hold, |r| r.0);
        let bins = self
            .integral
            .partition_point(|b| b.start + AGG_BIN_NS <= from);
        if bins >= 1024 && bins * 2 >= self.integral.len() {
            self.integral.drain(..bins);
        }
    }

    /// The correlation of `files` (after [`Correlator::flush`]) as [`crate::correlate()`]
    /// gives it from the whole record, for a caller that kept the settled figures in the
    /// correlator (took none): each file told of, with its figures; the phases; the balance.
    /// The phases' bin figures come from `bins`, which calls its argument with every 10 ms
    /// bin of the record in time order (e.g. from `probe/levels-*.parquet`).
    pub fn finish(
        &mut self,
        files: &[FileRecord],
        bins: impl FnOnce(&mut dyn FnMut(&AggRow)) -> anyhow::Result<()>,
    ) -> anyhow::Result<Correlation> {
        self.flush();
        // A key given to more than one file has its figures in the files' order.
        let mut by_key: HashMap<(String, String, u32), std::collections::VecDeque<FileEnergy>> =
            HashMap::new();
        for f in self.take_settled() {
            let key = (f.target.clone(), f.phase.clone(), f.index);
            by_key.entry(key).or_default().push_back(f);
        }
        let mut energy: HashMap<(i64, i64), Option<f64>> = HashMap::new();
        let mut per_file = Vec::new();
        for f in files {
            let key = (f.target.clone(), f.phase.clone(), f.index);
            if let Some(e) = by_key.get_mut(&key).and_then(|q| q.pop_front()) {
                energy.insert((f.start_ns as i64, f.end_ns as i64), e.figures.energy_j);
                per_file.push(e);
            }
        }
        let phases = phase_figures(files, |a, b| energy.get(&(a, b)).copied().flatten(), bins)?;
        Ok(Correlation {
            files: per_file,
            phases,
            balance: self.balance.clone(),
        })
    }
}

/// The power profile of each phase of `files`: the energy of each file from
/// `energy_between(start, end)` (its `energy_j`), the bin figures from one pass of `bins`
/// over the record's 10 ms bins in time order.
pub fn phase_figures(
    files: &[FileRecord],
    energy_between: impl Fn(i64, i64) -> Option<f64>,
    bins: impl FnOnce(&mut dyn FnMut(&AggRow)) -> anyhow::Result<()>,
) -> anyhow::Result<Vec<PhasePower>> {
    let phases = phase_spans(files);
    let mut stats = vec![BinStats::default(); phases.len()];
    bins(&mut |b: &AggRow| {
        for (p, s) in phases.iter().zip(stats.iter_mut()) {
            if b.time_ns + AGG_BIN_NS > p.2 && b.time_ns <= p.3 {
                s.add(b);
            }
        }
    })?;
    let mut stats = stats.into_iter();
    Ok(phase_power(files, energy_between, |_, _| {
        stats.next().unwrap_or_default()
    }))
}
