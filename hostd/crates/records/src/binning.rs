//! The binning that fills [`AggRow`]: 10 ms min/mean/max bins of aligned samples (the
//! probe's 10 ms level, the `probe_agg` measurement, the compact timeline correlation
//! uses), and [`MinMeanMax`], the one min/mean/max accumulator (also the report's chart
//! buckets).

use crate::agg::{AggRow, Stat};
use crate::probe::ProbeSample;

/// Default bin width: 10 ms.
pub const AGG_BIN_NS: i64 = 10_000_000;

/// Running minimum, mean and maximum of the finite values added (non-finite ones are
/// skipped): the one binning of probe channels, for the 10 ms `probe_agg` rows and the
/// report's chart buckets alike.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MinMeanMax {
    min: f64,
    max: f64,
    sum: f64,
    n: u64,
}

impl Default for MinMeanMax {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl MinMeanMax {
    /// Nothing added yet.
    pub const EMPTY: MinMeanMax = MinMeanMax {
        min: f64::INFINITY,
        max: f64::NEG_INFINITY,
        sum: 0.0,
        n: 0,
    };

    /// Adds `v` when it is finite.
    pub fn add(&mut self, v: f64) {
        if v.is_finite() {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
            self.sum += v;
            self.n += 1;
        }
    }

    /// Lowers the minimum to `v` (when finite and lower) without counting it in the mean:
    /// a lowest value known besides the values added (a probe batch's VBUS minimum).
    /// Ignored while nothing was added.
    pub fn lower_min(&mut self, v: f64) {
        if self.n > 0 && v.is_finite() {
            self.min = self.min.min(v);
        }
    }

    /// Values added.
    pub fn count(&self) -> u64 {
        self.n
    }

    /// (min, mean, max), NaN for each when nothing was added.
    pub fn get(&self) -> (f64, f64, f64) {
        if self.n == 0 {
            (f64::NAN, f64::NAN, f64::NAN)
        } else {
            (self.min, self.sum / self.n as f64, self.max)
        }
    }
}

/// One channel's accumulator: the project's one min/mean/max binning.
#[derive(Debug, Clone, Copy)]
struct Acc(MinMeanMax);

impl Acc {
    const ZERO: Acc = Acc(MinMeanMax::EMPTY);

    fn add(&mut self, v: Option<f64>) {
        if let Some(v) = v {
            self.0.add(v);
        }
    }

    fn stat(&self) -> Stat {
        let (min, mean, max) = self.0.get();
        Stat { min, mean, max }
    }
}

/// Streams samples into fixed-width time bins.
#[derive(Debug, Clone)]
pub struct Aggregator {
    width_ns: i64,
    bin: Option<i64>,
    samples: u32,
    acc: [Acc; 5],
    energy_j: f64,
}

impl Default for Aggregator {
    fn default() -> Self {
        Self::new(AGG_BIN_NS)
    }
}

impl Aggregator {
    /// An aggregator with bins of `width_ns`.
    pub fn new(width_ns: i64) -> Self {
        Self {
            width_ns: width_ns.max(1),
            bin: None,
            samples: 0,
            acc: [Acc::ZERO; 5],
            energy_j: f64::NAN,
        }
    }

    /// Adds a sample; returns the previous bin when this sample starts a new one.
    /// Samples are expected in time order; a sample older than the open bin
    /// is counted into the open bin.
    pub fn push(&mut self, s: &ProbeSample) -> Option<AggRow> {
        let bin = s.time_ns.div_euclid(self.width_ns) * self.width_ns;
        let done = match self.bin {
            Some(open) if bin > open => self.take(),
            None => {
                self.bin = Some(bin);
                None
            }
            _ => None,
        };
        if done.is_some() {
            self.bin = Some(bin);
        }
        self.samples += 1;
        self.acc[0].add(s.vbus_v);
        // A sag shorter than a sample, which only the batch's minimum saw, is the bin's too.
        if let Some(m) = s.vbus_min_v {
            self.acc[0].0.lower_min(m);
        }
        self.acc[1].add(s.current_a);
        self.acc[2].add(s.power_w);
        self.acc[3].add(s.die_temp_c);
        self.acc[4].add(s.enclosure_temp_c);
        if let Some(e) = s.energy_j {
            self.energy_j = e;
        }
        done
    }

    /// Closes the open bin (end of stream).
    pub fn flush(&mut self) -> Option<AggRow> {
        let row = self.take();
        self.bin = None;
        row
    }

    fn take(&mut self) -> Option<AggRow> {
        let time_ns = self.bin?;
        if self.samples == 0 {
            return None;
        }
        let row = AggRow {
            time_ns,
            samples: self.samples,
            vbus_v: self.acc[0].stat(),
            current_a: self.acc[1].stat(),
            power_w: self.acc[2].stat(),
            die_temp_c: self.acc[3].stat(),
            enclosure_temp_c: self.acc[4].stat(),
            energy_j: self.energy_j,
        };
        self.samples = 0;
        self.acc = [Acc::ZERO; 5];
        Some(row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_mean_max_skips_non_finite_values_and_is_nan_when_empty() {
        let mut m = MinMeanMax::default();
        assert!(m.get().1.is_nan());
        for v in [2.0, f64::NAN, 4.0, f64::INFINITY, 9.0] {
            m.add(v);
        }
        assert_eq!((m.count(), m.get()), (3, (2.0, 5.0, 9.0)));
    }

    fn sample(time_ns: i64, power: f64) -> ProbeSample {
        ProbeSample {
            time_ns,
            seq: 0,
            probe_time_us: 0,
            vbus_v: Some(5.0),
            current_a: Some(power / 5.0),
            power_w: Some(power),
            energy_j: Some(time_ns as f64 * 1e-9),
            charge_c: None,
            die_temp_c: None,
            enclosure_temp_c: Some(30.0),
            vbus_min_v: None,
        }
    }

    #[test]
    fn bins_are_aligned_and_hold_min_mean_max() {
        let mut agg = Aggregator::default();
        let mut rows = Vec::new();
        for (i, p) in [1.0, 3.0, 2.0, 10.0, 4.0].iter().enumerate() {
            // 4 ms apart: 0, 4, 8 | 12, 16 ms
            rows.extend(agg.push(&sample(1_000_000_000 + i as i64 * 4_000_000, *p)));
        }
        rows.extend(agg.flush());
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].time_ns, 1_000_000_000);
        assert_eq!(rows[0].samples, 3);
        assert_eq!(
            (
                rows[0].power_w.min,
                rows[0].power_w.mean,
                rows[0].power_w.max
            ),
            (1.0, 2.0, 3.0)
        );
        assert_eq!(rows[1].time_ns, 1_010_000_000);
        assert_eq!(rows[1].power_w.max, 10.0);
        assert!(rows[0].die_temp_c.is_empty());
        let mut line = String::new();
        rows[0].write_csv_line(&mut line);
        assert_eq!(line.split(',').count(), crate::agg::columns().len());
        assert!(line.contains(",,,"), "empty die temperature cells: {line}");
    }

    #[test]
    fn a_batch_minimum_below_every_reading_is_the_bins_minimum_not_its_mean() {
        let mut agg = Aggregator::default();
        let mut a = sample(0, 1.0);
        a.vbus_min_v = Some(4.5);
        let mut b = sample(4_000_000, 1.0);
        b.vbus_min_v = Some(5.1); // above the reading: the reading stays the minimum
        agg.push(&a);
        agg.push(&b);
        let r = agg.flush().unwrap();
        assert_eq!((r.vbus_v.min, r.vbus_v.mean, r.vbus_v.max), (4.5, 5.0, 5.0));
        let mut m = MinMeanMax::default();
        m.lower_min(1.0);
        assert_eq!(m.count(), 0, "nothing added: nothing lowered");
    }
}
