//! Per-I/O latency: a log-linear histogram (HdrHistogram) of the time from
//! submission to completion of every I/O, in nanoseconds.
//!
//! Three significant digits: every recorded value is kept within 0.1 % of
//! itself (fio's clat bins hold about 1.6 %), from 1 ns up to
//! [`LatencyHistogram::MAX_NS`] (60 s); slower I/Os are counted at 60 s.
//! The same histograms go into the run directory as an HdrHistogram interval
//! log (see `docs/latency.md`), which HdrHistogram's own tools read.

use hdrhistogram::serialization::interval_log::{
    IntervalLogIterator, IntervalLogWriterBuilder, LogEntry, Tag,
};
use hdrhistogram::serialization::{Deserializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::Serialize;
use std::io::{self, Write};
use std::sync::Mutex;
use std::time::{Duration, UNIX_EPOCH};

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

pub use hostd_records::LatencyStats;

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

/// Writes latency histograms as an HdrHistogram interval log (the format of
/// HdrHistogram's `HistogramLogWriter`; `HistogramLogProcessor` and the
/// other HdrHistogram tools read it): values in ns, one line per histogram,
/// `Tag=<tag>,<start s since BaseTime>,<length s>,<max ms>,<base64 of the
/// compressed V2 histogram>`. See `docs/latency.md`.
pub struct LatencyLogWriter<W: Write> {
    out: W,
    base_ns: u64,
    serializer: V2DeflateSerializer,
}

impl<W: Write> LatencyLogWriter<W> {
    /// Starts a log whose times count from `base_ns` (host Unix ns, the run's
    /// start), with `comment` in its header.
    pub fn new(mut out: W, base_ns: u64, comment: &str) -> io::Result<LatencyLogWriter<W>> {
        let base = UNIX_EPOCH + Duration::from_nanos(base_ns);
        IntervalLogWriterBuilder::new()
            .add_comment(comment)
            .with_start_time(base)
            .with_base_time(base)
            .with_max_value_divisor(1e6)
            .begin_log_with(&mut out, &mut V2DeflateSerializer::new())?;
        writeln!(
            out,
            "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\""
        )?;
        Ok(LatencyLogWriter {
            out,
            base_ns,
            serializer: V2DeflateSerializer::new(),
        })
    }

    /// Appends the histogram of `[start_ns, end_ns)` under `tag` (no spaces or
    /// commas).
    pub fn write(
        &mut self,
        tag: &str,
        start_ns: u64,
        end_ns: u64,
        h: &LatencyHistogram,
    ) -> io::Result<()> {
        let tag = Tag::new(tag).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, format!("bad log tag `{tag}`"))
        })?;
        // A builder with the divisor writes its header line first: keep
        // only the histogram line (the header went out once, in `new`).
        let mut line = Vec::new();
        IntervalLogWriterBuilder::new()
            .with_max_value_divisor(1e6)
            .begin_log_with(&mut line, &mut self.serializer)?
            .write_histogram(
                &h.0,
                Duration::from_nanos(start_ns.saturating_sub(self.base_ns)),
                Duration::from_nanos(end_ns.saturating_sub(start_ns)),
                Some(tag),
            )
            .map_err(|e| io::Error::other(e.to_string()))?;
        let body = match line.iter().position(|&b| b == b'\n') {
            Some(i) if line.starts_with(b"#[MaxValueDivisor") => &line[i + 1..],
            _ => &line[..],
        };
        self.out.write_all(body)?;
        self.out.flush()
    }
}

/// One histogram read back from a latency log.
#[derive(Debug, Clone)]
pub struct LoggedLatency {
    /// Its tag.
    pub tag: String,
    /// Start, host Unix ns.
    pub start_ns: u64,
    /// End, host Unix ns (times in the log are to the millisecond).
    pub end_ns: u64,
    /// The histogram.
    pub histogram: LatencyHistogram,
}

/// Reads every histogram of a latency log written by [`LatencyLogWriter`]
/// (or any interval log with a BaseTime whose values are in ns).
pub fn read_latency_log(text: &[u8]) -> Result<Vec<LoggedLatency>, String> {
    let mut base_ns = 0u64;
    let mut out = Vec::new();
    let mut de = Deserializer::new();
    for entry in IntervalLogIterator::new(text) {
        match entry.map_err(|e| format!("latency log: {e:?}"))? {
            LogEntry::BaseTime(t) => base_ns = ms_to_ns(t.as_secs_f64()),
            LogEntry::Interval(i) => {
                let bytes = base64_decode(i.encoded_histogram())
                    .ok_or("latency log: a histogram is not base64")?;
                let h: Histogram<u64> = de
                    .deserialize(&mut &bytes[..])
                    .map_err(|e| format!("latency log: {e:?}"))?;
                let start_ns = base_ns + ms_to_ns(i.start_timestamp().as_secs_f64());
                out.push(LoggedLatency {
                    tag: i.tag().map(|t| t.as_str().to_string()).unwrap_or_default(),
                    start_ns,
                    end_ns: start_ns + ms_to_ns(i.duration().as_secs_f64()),
                    histogram: LatencyHistogram(h),
                });
            }
            LogEntry::StartTime(_) => {}
        }
    }
    Ok(out)
}

/// Seconds as written in the log (3 decimals) to ns, rounded to the ms.
fn ms_to_ns(secs: f64) -> u64 {
    (secs * 1e3).round() as u64 * 1_000_000
}

/// Standard base64 (the encoding of interval-log histograms).
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    fn val(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    }
    let s = s.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    for chunk in s.chunks(4) {
        let mut acc = 0u32;
        for (k, &c) in chunk.iter().enumerate() {
            acc |= val(c)? << (18 - 6 * k);
        }
        let n = chunk.len() * 6 / 8;
        out.extend_from_slice(&acc.to_be_bytes()[1..1 + n]);
    }
    Some(out)
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
    fn a_latency_log_reads_back_every_histogram_with_its_tag_and_times() {
        let base = 1_700_000_000_123_000_000u64;
        let mut buf = Vec::new();
        let mut w = LatencyLogWriter::new(&mut buf, base, "test log").unwrap();
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        for v in 1..=1000u64 {
            a.record(v * 1000);
            b.record(v * 7919);
        }
        w.write("interval/0/write", base, base + 1_000_000_000, &a)
            .unwrap();
        w.write(
            "file/0/write/3",
            base + 500_000_000,
            base + 2_250_000_000,
            &b,
        )
        .unwrap();
        assert!(w.write("bad tag", base, base, &a).is_err());
        let text = String::from_utf8(buf.clone()).unwrap();
        assert!(
            text.starts_with("#test log\n#[StartTime: 1700000000.123"),
            "{text}"
        );
        let back = read_latency_log(&buf).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back[0].tag, "interval/0/write");
        assert_eq!(
            (back[0].start_ns, back[0].end_ns),
            (base, base + 1_000_000_000)
        );
        assert_eq!(back[1].tag, "file/0/write/3");
        assert_eq!(back[1].start_ns, base + 500_000_000);
        assert_eq!(back[0].histogram.stats(), a.stats());
        assert_eq!(back[1].histogram.stats(), b.stats());
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
