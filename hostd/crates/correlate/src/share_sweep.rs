//! Energy shares as files are correlated, in bounded memory: the sweep [`crate::correlate`]'s
//! `shares_by` makes over the whole record (stretches between file boundaries, each
//! stretch's energy split equally among the files active in it, or idle), made as the run
//! goes. A file's share is final once the sweep has passed its end; then its figures leave
//! (to `files-probe.csv`), so what the sweep holds is the files still overlapping the
//! newest instants, whatever the run's length. Stretches are swept in time order with the
//! same boundary values, so every sum is the one the whole-record sweep makes, to the bit.

use crate::correlate::FileEnergy;
use std::collections::BTreeMap;

/// A boundary of the sweep: host ns, the accumulator's energy there and the power
/// samples' energy there (both J, from the first reading).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Point {
    pub(crate) time: i64,
    pub(crate) accumulator_j: f64,
    pub(crate) measured_j: f64,
}

/// A file inside the record whose share is still growing.
#[derive(Debug)]
struct Unsettled {
    figures: FileEnergy,
    start: i64,
    end: i64,
    share: f64,
}

/// The sweep's running sums, the balance's parts.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct SweepTotals {
    /// Accumulator energy of the stretches with a file active, and of the others, J.
    pub(crate) files_accumulator_j: f64,
    pub(crate) idle_accumulator_j: f64,
    /// The power samples' energy of the same stretches, J.
    pub(crate) files_measured_j: f64,
    pub(crate) idle_measured_j: f64,
    /// Files left out of the shares: outside the record, or correlated after the sweep
    /// had passed their start.
    pub(crate) outside: usize,
    /// Of those, the ones correlated too late.
    pub(crate) late: usize,
}

/// The streaming sweep; see the module documentation.
#[derive(Debug, Default)]
pub(crate) struct ShareSweep {
    /// The last boundary swept (the record's first reading before any).
    at: Option<Point>,
    /// Boundaries after `at` known so far, with their energies.
    bounds: BTreeMap<i64, (f64, f64)>,
    unsettled: Vec<Unsettled>,
    totals: SweepTotals,
}

impl ShareSweep {
    /// Starts the sweep at the record's first accumulator reading (once; later calls
    /// change nothing).
    pub(crate) fn begin(&mut self, first: Point) {
        self.at.get_or_insert(first);
    }

    /// Where the sweep is: the last boundary swept, once begun.
    pub(crate) fn at(&self) -> Option<i64> {
        self.at.map(|p| p.time)
    }

    /// Running sums.
    pub(crate) fn totals(&self) -> SweepTotals {
        self.totals
    }

    /// Elements held (files waiting for their share, boundaries not swept).
    pub(crate) fn held(&self) -> usize {
        self.unsettled.len() + self.bounds.len()
    }

    /// A file left out of the shares: it goes out at once with no share.
    pub(crate) fn outside(&mut self, mut figures: FileEnergy, out: &mut Vec<FileEnergy>) {
        figures.figures.energy_share_j = None;
        self.totals.outside += 1;
        out.push(figures);
    }

    /// A correlated file inside the record (its start at or after the first reading, its
    /// end at or after its start), with its boundaries' energies. One whose start the
    /// sweep has passed (told too late) is left out, and counted.
    pub(crate) fn add(
        &mut self,
        figures: FileEnergy,
        start: Point,
        end: Point,
        out: &mut Vec<FileEnergy>,
    ) {
        if self.at.is_none_or(|a| start.time < a.time) {
            self.totals.late += 1;
            self.outside(figures, out);
            return;
        }
        for p in [start, end] {
            self.bounds.insert(p.time, (p.accumulator_j, p.measured_j));
        }
        self.unsettled.push(Unsettled {
            figures,
            start: start.time,
            end: end.time,
            share: 0.0,
        });
    }

    /// Sweeps every stretch that ends at or before `until` (no boundary before it is still
    /// to come) and sends out the files whose share is then final.
    pub(crate) fn sweep(&mut self, until: i64, out: &mut Vec<FileEnergy>) {
        let Some(mut a) = self.at else {
            return;
        };
        while let Some((&time, &(acc, meas))) = self.bounds.first_key_value() {
            if time > until {
                break;
            }
            self.bounds.pop_first();
            if time <= a.time {
                continue;
            }
            let (e, m) = (acc - a.accumulator_j, meas - a.measured_j);
            let active = |u: &&mut Unsettled| u.start <= a.time && u.end >= time;
            let n = self.unsettled.iter_mut().filter(active).count();
            let t = &mut self.totals;
            if n == 0 {
                t.idle_accumulator_j += e;
                t.idle_measured_j += m;
            } else {
                t.files_accumulator_j += e;
                t.files_measured_j += m;
                for u in self.unsettled.iter_mut().filter(active) {
                    u.share += e / n as f64;
                }
            }
            a = Point {
                time,
                accumulator_j: acc,
                measured_j: meas,
            };
        }
        self.at = Some(a);
        let (done, held): (Vec<_>, Vec<_>) = std::mem::take(&mut self.unsettled)
            .into_iter()
            .partition(|u| u.end <= a.time);
        self.unsettled = held;
        for mut u in done {
            u.figures.figures.energy_share_j = Some(u.share);
            out.push(u.figures);
        }
    }

    /// The record ended at `last`: files ending after it are left out, the rest swept to
    /// it and sent out.
    pub(crate) fn close(&mut self, last: Point, out: &mut Vec<FileEnergy>) {
        let (past, inside): (Vec<_>, Vec<_>) = std::mem::take(&mut self.unsettled)
            .into_iter()
            .partition(|u| u.end > last.time);
        self.unsettled = inside;
        for u in past {
            self.outside(u.figures, out);
        }
        // Only the boundaries of the files inside (the whole-record sweep has no others).
        let keep: std::collections::HashSet<i64> = self
            .unsettled
            .iter()
            .flat_map(|u| [u.start, u.end])
            .collect();
        self.bounds.retain(|t, _| keep.contains(t));
        self.bounds
            .insert(last.time, (last.accumulator_j, last.measured_j));
        self.sweep(i64::MAX, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::correlate::shares_by;

    fn figures(index: u32) -> FileEnergy {
        FileEnergy {
            target: "t0".into(),
            phase: "write".into(),
            index,
            figures: Default::default(),
        }
    }

    /// Energy as a function of time: 3 W with a kink, so that stretches differ.
    fn energy(t: i64) -> f64 {
        let s = t as f64 / 1e9;
        3.0 * s + 0.1 * (s * 1.7).sin()
    }

    fn point(t: i64) -> Point {
        Point {
            time: t,
            accumulator_j: energy(t),
            measured_j: 0.99 * energy(t),
        }
    }

    #[test]
    fn the_streamed_sweep_gives_the_whole_record_shares_to_the_bit() {
        const S: i64 = 1_000_000_000;
        // Overlapping, back to back, zero-length, one before the first reading and one
        // past the last.
        let spans = [
            (2 * S, 5 * S),
            (4 * S, 9 * S),
            (9 * S, 9 * S),
            (9 * S, 12 * S),
            (S / 2, 3 * S),
            (13 * S, 20 * S),
            (14 * S, 15 * S),
        ];
        let (first, last) = (S, 16 * S);
        let reference = shares_by(&spans, first, last, energy);
        let by_power = shares_by(&spans, first, last, |t| 0.99 * energy(t));

        let mut sweep = ShareSweep::default();
        let mut out = Vec::new();
        sweep.begin(point(first));
        // Told in the order they end, the sweep held back to the oldest start not yet
        // told; as the correlator does, a file past the record's end is left out.
        let mut order: Vec<usize> = (0..spans.len()).collect();
        order.sort_by_key(|&i| spans[i].1);
        for &i in &order {
            let (a, b) = spans[i];
            if a < first || b > last {
                sweep.outside(figures(i as u32), &mut out);
            } else {
                sweep.add(figures(i as u32), point(a), point(b), &mut out);
            }
            let open_start = order
                .iter()
                .map(|&j| spans[j])
                .filter(|&(_, e)| e > b)
                .map(|(s, _)| s)
                .min()
                .unwrap_or(i64::MAX);
            sweep.sweep(open_start.min(b), &mut out);
        }
        // Shares go out once final: the file ending at 5 s before the last ones.
        assert!(out.iter().any(|f| f.index == 0), "{out:?}");
        sweep.close(point(last), &mut out);
        assert_eq!(out.len(), spans.len());
        for f in &out {
            assert_eq!(
                f.figures.energy_share_j, reference.shares[f.index as usize],
                "file {}",
                f.index
            );
        }
        let t = sweep.totals();
        assert_eq!(t.files_accumulator_j, reference.files_j);
        assert_eq!(t.idle_accumulator_j, reference.idle_j);
        assert_eq!(t.files_measured_j, by_power.files_j);
        assert_eq!(t.idle_measured_j, by_power.idle_j);
        assert_eq!(t.outside, reference.outside);
        assert_eq!(reference.outside, 2);
        assert_eq!(sweep.held(), 0);
    }

    #[test]
    fn a_file_told_after_the_sweep_passed_its_start_is_left_out_and_counted() {
        let mut sweep = ShareSweep::default();
        let mut out = Vec::new();
        sweep.begin(point(0));
        sweep.add(figures(0), point(10), point(20), &mut out);
        sweep.sweep(20, &mut out);
        assert_eq!(out.len(), 1);
        sweep.add(figures(1), point(15), point(30), &mut out);
        assert_eq!(out[1].figures.energy_share_j, None);
        assert_eq!((sweep.totals().late, sweep.totals().outside), (1, 1));
    }
}
