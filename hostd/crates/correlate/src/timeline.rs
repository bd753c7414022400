//! A compact, time-ordered record of a probe stream for correlation:
//! 10 ms bins, the bus power integrated over each sample's conversion, and
//! every accumulator update (time, unwrapped energy).

use hostd_records::agg::AggRow;
use hostd_records::binning::{Aggregator, AGG_BIN_NS};
use hostd_records::probe::ProbeSample;

/// Bus power integrated over the conversions that fall in one 10 ms bin of
/// host time. A sample's values average the conversion *before* its time
/// (docs/protocol.md), so its power is spread over that interval, split at bin
/// edges — not counted in the bin its end time falls in, which shifts a power
/// step by up to one conversion against the accumulator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PowerBin {
    /// Bin start, host Unix ns (a multiple of 10 ms).
    pub time_ns: i64,
    /// ∫ power dt over the covered part of the bin, J.
    pub joules: f64,
    /// Time of the bin covered by conversions with a power reading, ns.
    pub covered_ns: i64,
}

impl PowerBin {
    /// Mean bus power over the covered part of the bin, W.
    pub fn mean_w(&self) -> f64 {
        self.joules / (self.covered_ns as f64 / 1e9)
    }
}

/// What correlation needs from the probe stream.
#[derive(Debug, Default, Clone)]
pub struct Timeline {
    /// 10 ms bins in time order.
    pub bins: Vec<AggRow>,
    /// Power over the samples' conversions, 10 ms bins in time order (bins
    /// no conversion with a power reading touched are absent).
    pub power: Vec<PowerBin>,
    /// (host Unix ns, energy J) at every change of the unwrapped accumulator.
    pub energy: Vec<(i64, f64)>,
    /// For each entry of `energy`: the power integrated over every conversion up
    /// to that reading, and how many conversions so far went without a power
    /// reading (lost samples, an unknown conversion length); between two readings
    /// with the same count the integral is the exact energy by the power samples.
    pub power_at_energy: Vec<(f64, u64)>,
    /// Joules of every conversion added so far.
    power_total_j: f64,
    /// Conversions without a power reading so far.
    unmeasured: u64,
    aggregator: Aggregator,
    last_energy: Option<f64>,
    /// The previous sample's sequence number and time.
    last_sample: Option<(u64, i64)>,
    /// Spacings of the latest consecutive samples, whose median is one conversion.
    spacings: Spacings,
}

/// The latest spacings (ns) of samples with consecutive sequence numbers; their
/// median is the conversion length, robust to a clock refit that moves one
/// sample's time.
#[derive(Debug, Default, Clone)]
struct Spacings {
    latest: [i64; 9],
    count: usize,
}

impl Spacings {
    fn push(&mut self, ns: i64) {
        self.latest[self.count % self.latest.len()] = ns;
        self.count += 1;
    }

    fn median(&self) -> Option<i64> {
        let n = self.count.min(self.latest.len());
        let mut v = self.latest;
        let v = &mut v[..n];
        v.sort_unstable();
        (n > 0).then(|| v[n / 2])
    }
}

impl Timeline {
    /// Empty timeline.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a sample (in time order); returns a completed 10 ms bin, if any.
    pub fn push(&mut self, s: &ProbeSample) -> Option<AggRow> {
        let previous = self.last_sample.map(|(_, t)| t);
        let start = self.conversion_start(s);
        match (start, s.power_w.filter(|w| w.is_finite())) {
            (Some(start), Some(watts)) => {
                self.add_power(start, s.time_ns, watts);
                if previous != Some(start) {
                    self.unmeasured += 1; // the conversions before this one are missing
                }
            }
            _ => self.unmeasured += 1,
        }
        // The reading includes this sample's conversion.
        if let Some(e) = s.energy_j {
            if self.last_energy != Some(e) {
                self.energy.push((s.time_ns, e));
                self.power_at_energy
                    .push((self.power_total_j, self.unmeasured));
                self.last_energy = Some(e);
            }
        }
        let row = self.aggregator.push(s);
        if let Some(r) = row {
            self.bins.push(r);
        }
        row
    }

    /// Where the conversion that `s` carries began. Consecutive sequence numbers
    /// mean no conversion was missed, so it began at the previous sample's time
    /// (the intervals tile time even when a clock refit moves one sample) unless
    /// that is more than 4 conversions (the median of the latest spacings) back;
    /// after a hole in the sequence (lost samples, or conversions the probe
    /// counted as missed) it began one conversion before `s`. A sequence that goes back (a reconnected probe) may run at
    /// another rate: its conversion length is learnt again. `None` while that
    /// length is unknown.
    fn conversion_start(&mut self, s: &ProbeSample) -> Option<i64> {
        let start = match self.last_sample {
            Some((seq, _)) if s.seq <= seq => {
                self.spacings = Spacings::default();
                None
            }
            Some((seq, prev)) if s.seq == seq.wrapping_add(1) && s.time_ns > prev => {
                let spacing = s.time_ns - prev;
                let period = self.spacings.median();
                // Pushed either way, so that a rate that really changed is learnt.
                self.spacings.push(spacing);
                match period {
                    Some(p) if spacing > 4 * p => Some(s.time_ns - p),
                    _ => Some(prev),
                }
            }
            _ => self.spacings.median().map(|p| s.time_ns - p),
        };
        self.last_sample = Some((s.seq, s.time_ns));
        start
    }

    /// Spreads `watts` over `[from, to)` into the 10 ms power bins and the total.
    fn add_power(&mut self, from: i64, to: i64, watts: f64) {
        let mut a = from;
        while a < to {
            let bin = a.div_euclid(AGG_BIN_NS) * AGG_BIN_NS;
            let z = to.min(bin + AGG_BIN_NS);
            let (joules, covered_ns) = (watts * (z - a) as f64 / 1e9, z - a);
            self.power_total_j += joules;
            match self.power.iter().rposition(|b| b.time_ns <= bin) {
                Some(k) if self.power[k].time_ns == bin => {
                    self.power[k].joules += joules;
                    self.power[k].covered_ns += covered_ns;
                }
                k => self.power.insert(
                    k.map_or(0, |k| k + 1),
                    PowerBin {
                        time_ns: bin,
                        joules,
                        covered_ns,
                    },
                ),
            }
            a = z;
        }
    }

    /// Closes the open bin; returns it.
    pub fn flush(&mut self) -> Option<AggRow> {
        let row = self.aggregator.flush();
        if let Some(r) = row {
            self.bins.push(r);
        }
        row
    }

    /// First and last times with an energy reading.
    pub fn energy_span(&self) -> Option<(i64, i64)> {
        Some((self.energy.first()?.0, self.energy.last()?.0))
    }

    /// Energy (J) at host time `t`, linear between accumulator readings;
    /// `None` outside the readings.
    pub fn energy_at(&self, t: i64) -> Option<f64> {
        hostd_records::energy::energy_at(&self.energy, t)
    }

    /// Bins that overlap `[start, end]`.
    pub fn bins_between(&self, start: i64, end: i64, width_ns: i64) -> &[AggRow] {
        let a = self.bins.partition_point(|b| b.time_ns + width_ns <= start);
        let b = self.bins.partition_point(|b| b.time_ns <= end);
        &self.bins[a..b.max(a)]
    }

    /// The bin containing `t` or, failing that, the nearest one.
    pub fn bin_at(&self, t: i64) -> Option<&AggRow> {
        let i = self.bins.partition_point(|b| b.time_ns <= t);
        match (
            i.checked_sub(1).and_then(|j| self.bins.get(j)),
            self.bins.get(i),
        ) {
            (Some(a), Some(b)) => Some(if t - a.time_ns <= b.time_ns - t { a } else { b }),
            (a, b) => a.or(b),
        }
    }
}
