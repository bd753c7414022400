//! A compact, time-ordered record of a probe stream for correlation:
//! 10 ms bins, the bus power integrated over each sample's conversion, and
//! every accumulator update (time, unwrapped energy).

use hostd_probe::agg::{AggRow, Aggregator, AGG_BIN_NS};
use hostd_probe::ProbeSample;

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
    aggregator: Aggregator,
    last_energy: Option<f64>,
    /// The previous sample's sequence number and time.
    last_sample: Option<(u64, i64)>,
    /// The latest spacing of two consecutive samples: one conversion, ns.
    period_ns: Option<i64>,
}

impl Timeline {
    /// Empty timeline.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a sample (in time order); returns a completed 10 ms bin, if any.
    pub fn push(&mut self, s: &ProbeSample) -> Option<AggRow> {
        if let Some(e) = s.energy_j {
            if self.last_energy != Some(e) {
                self.energy.push((s.time_ns, e));
                self.last_energy = Some(e);
            }
        }
        let start = self.conversion_start(s);
        if let (Some(start), Some(watts)) = (start, s.power_w.filter(|w| w.is_finite())) {
            self.add_power(start, s.time_ns, watts);
        }
        let row = self.aggregator.push(s);
        if let Some(r) = row {
            self.bins.push(r);
        }
        row
    }

    /// Where the conversion that `s` carries began: the previous sample's time when
    /// it is the previous sequence number and no more than 1.5 conversions back,
    /// else one conversion before `s` (after a gap, or a stall the probe counted
    /// as missed conversions); `None` before the first conversion length is known.
    fn conversion_start(&mut self, s: &ProbeSample) -> Option<i64> {
        let follows = |(seq, time): (u64, i64)| s.seq == seq.wrapping_add(1) && s.time_ns > time;
        let start = match (self.last_sample.filter(|&l| follows(l)), self.period_ns) {
            (Some((_, prev)), period) if period.is_none_or(|p| 2 * (s.time_ns - prev) <= 3 * p) => {
                self.period_ns = Some(s.time_ns - prev);
                Some(prev)
            }
            (_, period) => period.map(|p| s.time_ns - p),
        };
        self.last_sample = Some((s.seq, s.time_ns));
        start
    }

    /// Spreads `watts` over `[from, to)` into the 10 ms power bins.
    fn add_power(&mut self, from: i64, to: i64, watts: f64) {
        let mut a = from;
        while a < to {
            let bin = a.div_euclid(AGG_BIN_NS) * AGG_BIN_NS;
            let z = to.min(bin + AGG_BIN_NS);
            let (joules, covered_ns) = (watts * (z - a) as f64 / 1e9, z - a);
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
        hostd_analysis::energy::energy_at(&self.energy, t)
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
