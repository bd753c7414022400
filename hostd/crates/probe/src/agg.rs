//! 10 ms min/mean/max aggregation of aligned samples (`probe_agg.csv`, the
//! `probe_agg` measurement), also the compact timeline correlation uses.

use hostd_analysis::stats::MinMeanMax;
use hostd_records::probe::ProbeSample;

/// Default bin width: 10 ms.
pub const AGG_BIN_NS: i64 = 10_000_000;

use hostd_records::agg::{AggRow, Stat};

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
        assert_eq!(line.split(',').count(), hostd_records::agg::columns().len());
        assert!(line.contains(",,,"), "empty die temperature cells: {line}");
    }
}
