//! A compact, time-ordered record of a probe stream for correlation:
//! 10 ms bins plus every accumulator update (time, unwrapped energy).

use hostd_probe::agg::{AggRow, Aggregator};
use hostd_probe::ProbeSample;

/// What correlation needs from the probe stream.
#[derive(Debug, Default, Clone)]
pub struct Timeline {
    /// 10 ms bins in time order.
    pub bins: Vec<AggRow>,
    /// (host Unix ns, energy J) at every change of the unwrapped accumulator.
    pub energy: Vec<(i64, f64)>,
    aggregator: Aggregator,
    last_energy: Option<f64>,
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
        let row = self.aggregator.push(s);
        if let Some(r) = row {
            self.bins.push(r);
        }
        row
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
