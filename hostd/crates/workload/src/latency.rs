//! Per-I/O latency: the workload records the time from submission to completion of every
//! I/O into a [`LatencyHistogram`] (HdrHistogram, 3 significant digits; the type, the
//! interval logs' reader and writer live in `hostd_records::latency`), per file, per
//! interval and per phase.

use std::sync::Mutex;

use hostd_records::latency::LatencyHistogram;

/// Latencies of one target not yet assigned to an interval: the job loop adds
/// what it recorded every [`FLUSH_NS`] and at the end of each file; the
/// interval sampler takes the lot at each interval boundary.
#[derive(Debug, Default)]
pub struct IntervalLatency(Mutex<LatencyHistogram>);

/// How often the job loop hands its latencies to [`IntervalLatency`]: an I/O
/// is counted in the interval in which it completed, to within this time.
pub const FLUSH_NS: u64 = 20_000_000;

impl IntervalLatency {
    /// Adds `h`.
    pub fn add(&self, h: &LatencyHistogram) {
        if !h.is_empty() {
            self.0.lock().unwrap_or_else(|p| p.into_inner()).add(h);
        }
    }

    /// Takes everything added so far, leaving it empty.
    pub fn take(&self) -> LatencyHistogram {
        let mut g = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let out = g.clone();
        g.reset();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_accumulator_hands_over_everything_once() {
        let acc = IntervalLatency::default();
        let mut h = LatencyHistogram::new();
        h.record(5_000);
        acc.add(&h);
        acc.add(&h);
        assert_eq!(acc.take().count(), 2);
        assert_eq!(acc.take().count(), 0);
    }
}
