//! `latency-files.hlog` and `latency-intervals.hlog`: per-I/O latency as HdrHistogram
//! interval logs (`docs/latency.md`), and the histogram type the workload records into.
//!
//! Three significant digits: every recorded value is kept within 0.1 % of
//! itself (fio's clat bins hold about 1.6 %), from 1 ns up to
//! [`LatencyHistogram::MAX_NS`] (60 s); slower I/Os are counted at 60 s.
//! HdrHistogram's own tools read the logs. In memory ([`RunLatency`], part of
//! [`crate::RunData`]) each logged histogram is kept as the log holds it: times to the
//! millisecond and the compressed histogram, so `hostd run` and [`RunLatency::read`] give
//! the same value.

use crate::error::{RecordError, Result};
use crate::summary::LatencyStats;
use hdrhistogram::serialization::interval_log::{
    IntervalLogIterator, IntervalLogWriterBuilder, LogEntry, Tag,
};
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::Serialize;
use std::io::{self, Write};
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

/// The per-file log: one histogram per file, tag `file/<target index>/<phase>/<file index>`.
pub const FILES_LOG: &str = "latency-files.hlog";
/// The per-interval log: one histogram per 1 s interval and target, tag
/// `interval/<target index>/<phase>`.
pub const INTERVALS_LOG: &str = "latency-intervals.hlog";

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

    /// The slowest I/O, ns (0 when empty).
    pub fn max_ns(&self) -> u64 {
        self.0.max()
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
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.stats().serialize(s)
    }
}

/// Whole milliseconds since `base_ms` (rounded), as the log writes a time.
fn ms_since(base_ms: u64, ns: u64) -> u64 {
    (ns.saturating_sub(base_ms * 1_000_000) + 500_000) / 1_000_000
}

/// A host Unix ns rounded to the millisecond (a log's BaseTime).
fn round_ms(ns: u64) -> u64 {
    (ns + 500_000) / 1_000_000
}

/// The tag of a file's histogram: `file/<target index>/<phase>/<file index>`, the phase
/// with spaces and commas (which a tag cannot hold) replaced by `_`.
pub fn file_tag(target_index: usize, phase: &str, index: u32) -> String {
    format!("file/{target_index}/{}/{index}", tag_safe(phase))
}

/// The tag of an interval's histogram: `interval/<target index>/<phase>`.
pub fn interval_tag(target_index: usize, phase: &str) -> String {
    format!("interval/{target_index}/{}", tag_safe(phase))
}

fn tag_safe(phase: &str) -> String {
    phase
        .chars()
        .map(|c| if c == ' ' || c == ',' { '_' } else { c })
        .collect()
}

/// One histogram of a latency log, as the log holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct LoggedLatency {
    /// Its tag.
    pub tag: String,
    /// Start, host Unix ns (to the millisecond, as logged).
    pub start_ns: u64,
    /// End, host Unix ns (to the millisecond).
    pub end_ns: u64,
    /// The histogram, HdrHistogram V2 compressed (hundreds of bytes, where a decoded one
    /// holds ~220 KB of counters: a long run has thousands).
    encoded: Vec<u8>,
}

impl LoggedLatency {
    /// The histogram `h` of `[start_ns, end_ns)` under `tag`, as a log whose BaseTime is
    /// `base_ns` holds it (what [`LatencyLogWriter::write`] writes and [`read_latency_log`]
    /// reads back).
    pub fn new(
        tag: &str,
        base_ns: u64,
        start_ns: u64,
        end_ns: u64,
        h: &LatencyHistogram,
    ) -> LoggedLatency {
        let base_ms = round_ms(base_ns);
        let (start_ms, end_ms) = (ms_since(base_ms, start_ns), ms_since(base_ms, end_ns));
        let mut encoded = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&h.0, &mut encoded)
            .expect("a histogram serialises into memory");
        LoggedLatency {
            tag: tag.to_string(),
            start_ns: (base_ms + start_ms) * 1_000_000,
            end_ns: (base_ms + end_ms.max(start_ms)) * 1_000_000,
            encoded,
        }
    }

    /// The histogram.
    pub fn histogram(&self) -> LatencyHistogram {
        decode(&self.encoded).expect("checked when read or made")
    }
}

fn decode(bytes: &[u8]) -> std::result::Result<LatencyHistogram, String> {
    Deserializer::new()
        .deserialize(&mut &bytes[..])
        .map(LatencyHistogram)
        .map_err(|e| format!("{e:?}"))
}

/// The latency histograms of a run: what `hostd run` logs and keeps in memory, and what
/// [`RunLatency::read`] reads from a run directory. Empty without timed I/O.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunLatency {
    /// One per 1 s interval and target, ordered by start, then tag.
    pub intervals: Vec<LoggedLatency>,
    /// One per file, ordered by start, then tag.
    pub files: Vec<LoggedLatency>,
}

/// Reads the latency log `dir/name` ([`FILES_LOG`] or [`INTERVALS_LOG`]), in its order (by
/// start, then tag); a missing log is empty, a damaged one an error naming the file.
pub fn read_log(dir: &Path, name: &str) -> Result<Vec<LoggedLatency>> {
    let path = dir.join(name);
    let mut logged = match std::fs::read(&path) {
        Ok(bytes) => read_latency_log(&bytes).map_err(|message| RecordError::Log {
            path: path.clone(),
            message,
        })?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(RecordError::io(&path, e)),
    };
    sort_logged(&mut logged);
    Ok(logged)
}

/// Puts histograms in a log's order: by start, then tag.
fn sort_logged(l: &mut [LoggedLatency]) {
    l.sort_by(|a, b| (a.start_ns, &a.tag).cmp(&(b.start_ns, &b.tag)));
}

impl RunLatency {
    /// Reads [`INTERVALS_LOG`] and [`FILES_LOG`] from `dir` ([`read_log`]).
    pub fn read(dir: &Path) -> Result<RunLatency> {
        Ok(RunLatency {
            intervals: read_log(dir, INTERVALS_LOG)?,
            files: read_log(dir, FILES_LOG)?,
        })
    }

    /// Puts both lists in their order (by start, then tag): the order in which histograms
    /// reach a log from several targets' threads is not fixed.
    pub fn sort(&mut self) {
        for l in [&mut self.intervals, &mut self.files] {
            sort_logged(l);
        }
    }

    /// True when no I/O was timed.
    pub fn is_empty(&self) -> bool {
        self.intervals.is_empty() && self.files.is_empty()
    }
}

/// Writes latency histograms as an HdrHistogram interval log (the format of
/// HdrHistogram's `HistogramLogWriter`; `HistogramLogProcessor` and the
/// other HdrHistogram tools read it): values in ns, one line per histogram,
/// `Tag=<tag>,<start s since BaseTime>,<length s>,<max ms>,<base64 of the
/// compressed V2 histogram>`. See `docs/latency.md`.
pub struct LatencyLogWriter<W: Write> {
    out: W,
    /// BaseTime, whole ms since the Unix epoch (the log holds times to the ms).
    base_ms: u64,
}

impl<W: Write> LatencyLogWriter<W> {
    /// Starts a log whose times count from `base_ns` (host Unix ns, the run's
    /// start), with `comment` in its header.
    pub fn new(mut out: W, base_ns: u64, comment: &str) -> io::Result<LatencyLogWriter<W>> {
        let base_ms = round_ms(base_ns);
        let base = UNIX_EPOCH + Duration::from_millis(base_ms);
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
        Ok(LatencyLogWriter { out, base_ms })
    }

    /// Appends the histogram of `[start_ns, end_ns)` under `tag` (no spaces or
    /// commas), its times to the ms as [`LoggedLatency::new`] keeps them.
    pub fn write(
        &mut self,
        tag: &str,
        start_ns: u64,
        end_ns: u64,
        h: &LatencyHistogram,
    ) -> io::Result<()> {
        let l = LoggedLatency::new(tag, self.base_ms * 1_000_000, start_ns, end_ns, h);
        self.write_logged(&l, h.max_ns())
    }

    /// Appends a histogram already in its logged form (made by [`LoggedLatency::new`] with
    /// this log's base, so it is compressed once for the log and for memory); `max_ns` is
    /// its largest value (the line's `Interval_Max`). The line is the one HdrHistogram's
    /// `IntervalLogWriter` writes (a test holds them equal).
    pub fn write_logged(&mut self, l: &LoggedLatency, max_ns: u64) -> io::Result<()> {
        if Tag::new(&l.tag).is_none() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("bad log tag `{}`", l.tag),
            ));
        }
        let start_ms = (l.start_ns / 1_000_000).saturating_sub(self.base_ms);
        let length_ms = (l.end_ns - l.start_ns) / 1_000_000;
        writeln!(
            self.out,
            "Tag={},{}.{:03},{}.{:03},{:.3},{}",
            l.tag,
            start_ms / 1000,
            start_ms % 1000,
            length_ms / 1000,
            length_ms % 1000,
            max_ns as f64 / 1e6,
            base64_encode(&l.encoded)
        )?;
        self.out.flush()
    }
}

/// Reads every histogram of a latency log written by [`LatencyLogWriter`]
/// (or any interval log with a BaseTime whose values are in ns); each histogram is
/// decoded once to check it.
pub fn read_latency_log(text: &[u8]) -> std::result::Result<Vec<LoggedLatency>, String> {
    let mut base_ns = 0u64;
    let mut out = Vec::new();
    for entry in IntervalLogIterator::new(text) {
        match entry.map_err(|e| format!("latency log: {e:?}"))? {
            LogEntry::BaseTime(t) => base_ns = ms_to_ns(t.as_secs_f64()),
            LogEntry::Interval(i) => {
                let encoded = base64_decode(i.encoded_histogram())
                    .ok_or("latency log: a histogram is not base64")?;
                decode(&encoded).map_err(|e| format!("latency log: {e}"))?;
                let start_ns = base_ns + ms_to_ns(i.start_timestamp().as_secs_f64());
                out.push(LoggedLatency {
                    tag: i.tag().map(|t| t.as_str().to_string()).unwrap_or_default(),
                    start_ns,
                    end_ns: start_ns + ms_to_ns(i.duration().as_secs_f64()),
                    encoded,
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

/// Standard base64 with padding (the encoding of interval-log histograms).
fn base64_encode(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let acc = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(ABC[(acc >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
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
        assert_eq!(back[0].histogram().stats(), a.stats());
        assert_eq!(back[1].histogram().stats(), b.stats());
    }

    #[test]
    fn a_histogram_kept_in_memory_equals_the_one_its_log_reads_back() {
        // Times off the millisecond grid, and a base that is too.
        let base = 1_795_472_176_865_151_510u64;
        let mut h = LatencyHistogram::new();
        for v in [1_208_320u64, 1_780_735, 6_983_679, 999, 45_000_000] {
            h.record(v);
        }
        let spans = [
            ("file/0/write/0", base + 5_564_130, base + 15_038_064),
            (
                "file/1/RND4K-QD1_read/7",
                base + 2_499_999,
                base + 2_500_001,
            ),
            (
                "interval/0/write+read",
                base + 1_000_499_999,
                base + 2_000_500_000,
            ),
        ];
        let mut buf = Vec::new();
        let mut w = LatencyLogWriter::new(&mut buf, base, "test").unwrap();
        for (tag, start, end) in spans {
            w.write(tag, start, end, &h).unwrap();
        }
        let back = read_latency_log(&buf).unwrap();
        let kept: Vec<LoggedLatency> = spans
            .iter()
            .map(|&(tag, start, end)| LoggedLatency::new(tag, base, start, end, &h))
            .collect();
        assert_eq!(back, kept);
        // To the millisecond of the log's BaseTime.
        assert_eq!(kept[0].start_ns, 1_795_472_176_871_000_000);
        assert_eq!(kept[1].end_ns - kept[1].start_ns, 0);
        assert_eq!(kept[0].histogram().stats(), h.stats());
    }

    #[test]
    fn a_logged_line_is_the_one_hdrhistogram_s_writer_writes() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for (n, start_ms, length_ms) in [(1u64, 0u64, 0u64), (7, 5, 9), (50_000, 3_600_123, 1_000)]
        {
            let mut h = LatencyHistogram::new();
            for _ in 0..n {
                h.record(rng.gen_range(1_000..50_000_000u64));
            }
            let base = 1_795_472_176_865_000_000u64;
            let (start, end) = (
                base + start_ms * 1_000_000,
                base + (start_ms + length_ms) * 1_000_000,
            );
            let mut ours = Vec::new();
            LatencyLogWriter::new(&mut ours, base, "c")
                .unwrap()
                .write("file/0/write/0", start, end, &h)
                .unwrap();
            let mut theirs = Vec::new();
            IntervalLogWriterBuilder::new()
                .with_max_value_divisor(1e6)
                .begin_log_with(&mut theirs, &mut V2DeflateSerializer::new())
                .unwrap()
                .write_histogram(
                    &h.0,
                    Duration::from_millis(start_ms),
                    Duration::from_millis(length_ms),
                    Tag::new("file/0/write/0"),
                )
                .unwrap();
            let last = |b: &[u8]| {
                String::from_utf8(b.to_vec())
                    .unwrap()
                    .lines()
                    .last()
                    .unwrap()
                    .to_string()
            };
            assert_eq!(last(&ours), last(&theirs), "{n} values");
        }
        assert_eq!(base64_encode(b"ab"), "YWI=");
        assert_eq!(base64_decode("YWI=").unwrap(), b"ab");
    }

    #[test]
    fn tags_name_target_phase_and_file_without_spaces_or_commas() {
        assert_eq!(file_tag(1, "mixed 70,30", 4), "file/1/mixed_70_30/4");
        assert_eq!(interval_tag(0, "write+read"), "interval/0/write+read");
    }

    #[test]
    fn a_run_directory_s_logs_read_into_run_latency_and_a_damaged_one_is_refused() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run-format1");
        let lat = RunLatency::read(&dir).unwrap();
        // 3 files written and 3 read back, each with its own histogram of 2-3 I/Os.
        assert_eq!(lat.files.len(), 6);
        assert_eq!(
            lat.files.iter().map(|l| l.histogram().count()).sum::<u64>(),
            14
        );
        assert!(lat.files.windows(2).all(|w| w[0].start_ns <= w[1].start_ns));
        assert_eq!(
            lat.intervals
                .iter()
                .map(|l| l.histogram().count())
                .sum::<u64>(),
            14
        );
        assert_eq!(lat.files[0].tag, "file/0/write/0");
        let empty = tempfile::tempdir().unwrap();
        assert!(RunLatency::read(empty.path()).unwrap().is_empty());
        let text = std::fs::read_to_string(dir.join(FILES_LOG)).unwrap();
        std::fs::write(empty.path().join(FILES_LOG), text.replace(",H", ",!")).unwrap();
        let e = RunLatency::read(empty.path()).unwrap_err().to_string();
        assert!(e.contains(FILES_LOG) && e.contains("latency log"), "{e}");
    }

    #[test]
    fn an_empty_histogram_has_zero_figures() {
        assert_eq!(LatencyHistogram::new().stats(), LatencyStats::default());
    }
}
