//! Per-I/O latency: a log-linear histogram (HdrHistogram) of the time from
//! submission to completion of every I/O, in nanoseconds.
//!
//! Three significant digits: every recorded value is kept within 0.1 % of
//! itself (fio's clat bins hold about 1.6 %), from 1 ns up to
//! [`LatencyHistogram::MAX_NS`] (60 s); slower I/Os are counted at 60 s.
//! The same histograms go into the run directory as an HdrHistogram interval
//! log (see `docs/latency.md`), which HdrHistogram's own tools read.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::sync::Mutex;

/// Latency of I/Os, in nanoseconds, with 3 significant digits.
#[derive(Clone)]
pub struct LatencyHistogram(Histogram<u64>);

impl LatencyHistogram {
    /// Largest latency kept exactly; slower I/Os count at this value.
    pub const MAX_NS: u64 = 60_000_000_000;
    /// Significant decimal digits (relative error ≤ 10^-3).
    pub const SIGNIFICANT_DIGITS: u8 = 3;

    /// An empty histogram.
    pub fn new() -> LatencyHistogram {
        LatencyHistogram(
            Histogram::new_with_bounds(1, Self::MAX_NS, Self::SIGNIFICANT_DIGITS)
                .expect("valid histogram bounds"),
        )
    }

    /// Counts one I/O that took `ns` nanoseconds.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.0.saturating_record(ns.clamp(1, Self::MAX_NS));
    }

    /// Adds every count of `other`.
    pub fn add(&mut self, other: &LatencyHistogram) {
        if !other.0.is_empty() {
            self.0.add(&other.0).expect("same bounds");
        }
    }

    /// Empties the histogram (keeps its memory).
    pub fn reset(&mut self) {
        self.0.reset();
    }

    /// I/Os counted.
    pub fn count(&self) -> u64 {
        self.0.len()
    }

    /// Whether nothing has been counted.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Latency at quantile `q` (0..=1) in ns: the smallest recorded value
    /// (to the histogram's precision) that at least `q` of the I/Os do not exceed.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        self.0.value_at_quantile(q)
    }

    /// Percentiles and extremes (all zero when empty).
    pub fn stats(&self) -> LatencyStats {
        if self.0.is_empty() {
            return LatencyStats::default();
        }
        let h = &self.0;
        LatencyStats {
            count: h.len(),
            min_ns: h.min(),
            mean_ns: h.mean(),
            p50_ns: h.value_at_quantile(0.5),
            p90_ns: h.value_at_quantile(0.9),
            p99_ns: h.value_at_quantile(0.99),
            p99_9_ns: h.value_at_quantile(0.999),
            p99_99_ns: h.value_at_quantile(0.9999),
            max_ns: h.max(),
        }
    }

    /// The HdrHistogram underneath (for serialisation).
    pub fn inner(&self) -> &Histogram<u64> {
        &self.0
    }

    /// Wraps a decoded histogram (e.g. read back from an interval log).
    pub fn from_inner(h: Histogram<u64>) -> LatencyHistogram {
        LatencyHistogram(h)
    }
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram::new()
    }
}

impl std::fmt::Debug for LatencyHistogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LatencyHistogram({:?})", self.stats())
    }
}

/// Serialised as its [`LatencyStats`] (the full histogram goes to the
/// interval log).
impl Serialize for LatencyHistogram {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.stats().serialize(s)
    }
}

/// The latency figures of a file, an interval or a phase: percentiles from
/// submission to completion, in nanoseconds (0 where no I/O completed).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyStats {
    /// I/Os counted.
    pub count: u64,
    /// Fastest I/O.
    pub min_ns: u64,
    /// Mean.
    pub mean_ns: f64,
    /// Median.
    pub p50_ns: u64,
    /// 90th percentile.
    pub p90_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// 99.9th percentile.
    pub p99_9_ns: u64,
    /// 99.99th percentile.
    pub p99_99_ns: u64,
    /// Slowest I/O.
    pub max_ns: u64,
}

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
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Nearest-rank percentile of sorted raw values (what the histogram
    /// approximates).
    fn reference(sorted: &[u64], q: f64) -> u64 {
        let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
        sorted[rank - 1]
    }

    #[test]
    fn percentiles_match_the_raw_latencies_within_the_precision() {
        // A log-normal spread from ~2 µs to seconds, plus a few stalls.
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut raw: Vec<u64> = (0..200_000)
            .map(|_| {
                let z: f64 = (0..12).map(|_| rng.gen::<f64>()).sum::<f64>() - 6.0;
                (20_000.0 * (1.2 * z).exp()) as u64 + 1
            })
            .collect();
        raw.extend([3_000_000_000, 17_000_000_000, 59_000_000_000]);
        let mut h = LatencyHistogram::new();
        for &v in &raw {
            h.record(v);
        }
        raw.sort_unstable();
        let s = h.stats();
        assert_eq!(s.count, raw.len() as u64);
        for (q, got) in [
            (0.5, s.p50_ns),
            (0.9, s.p90_ns),
            (0.99, s.p99_ns),
            (0.999, s.p99_9_ns),
            (0.9999, s.p99_99_ns),
            (1.0, s.max_ns),
        ] {
            let want = reference(&raw, q);
            let err = (got as f64 - want as f64).abs() / want as f64;
            assert!(err <= 1e-3, "p{q}: {got} ns against {want} ns ({err:.2e})");
        }
        let mean = raw.iter().map(|&v| v as f64).sum::<f64>() / raw.len() as f64;
        assert!((s.mean_ns - mean).abs() / mean < 1e-3);
    }

    #[test]
    fn percentiles_never_decrease() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut h = LatencyHistogram::new();
        for _ in 0..10_000 {
            h.record(rng.gen_range(1..1_000_000_000u64));
        }
        let s = h.stats();
        let seq = [
            s.min_ns,
            s.p50_ns,
            s.p90_ns,
            s.p99_ns,
            s.p99_9_ns,
            s.p99_99_ns,
            s.max_ns,
        ];
        assert!(seq.windows(2).all(|w| w[0] <= w[1]), "{seq:?}");
    }

    #[test]
    fn latencies_beyond_the_range_count_at_its_top() {
        let mut h = LatencyHistogram::new();
        h.record(0);
        h.record(u64::MAX);
        assert_eq!(h.count(), 2);
        assert!(h.stats().max_ns >= LatencyHistogram::MAX_NS);
        assert!(h.stats().max_ns <= LatencyHistogram::MAX_NS + LatencyHistogram::MAX_NS / 1000);
    }

    #[test]
    fn an_empty_histogram_has_zero_figures() {
        assert_eq!(LatencyHistogram::new().stats(), LatencyStats::default());
    }

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
