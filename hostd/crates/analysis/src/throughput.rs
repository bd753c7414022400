//! The 1 s throughput of a series from its target's byte counter (`counters.csv`): the one
//! series every chart of throughput draws, against time and against the data written
//! (report.html, the comparison page and their `--charts` files). The counter is cumulative,
//! so each second's rate is Δbytes / Δt, placed at the second's end and at the series' own
//! bytes there ([`crate::observation::phase_counter`]: the counter cut to the phase, less
//! what the target moved before it). See docs/methodology.md, "Throughput each second".

use crate::observation::phase_counter;
use crate::series::{self, Series};
use hostd_records::RunData;

/// Length of a step, s: a step takes the counter's samples until at least this long.
pub const STEP_S: f64 = 1.0;

/// One step of a series' throughput.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Second {
    /// Start, host ns.
    pub start_ns: i64,
    /// End, host ns.
    pub end_ns: i64,
    /// The series' own bytes at the end (the x of throughput against data written).
    pub bytes: u64,
    /// Bytes moved over the step / its length, bytes/s.
    pub rate_bps: f64,
}

/// The series' throughput in steps of [`STEP_S`]: from its first start, each step takes the
/// counter's samples until it is at least that long (the counter's own 100 ms samples, so
/// each step is 1 s to within one sample), the last step what is left up to the series' last
/// end (less than half a step left goes to the step before). Empty without counter samples
/// or files.
pub fn per_second(series: &Series, counter: &[(i64, u64)]) -> Vec<Second> {
    let Some(points) = phase_counter(series, counter) else {
        return Vec::new();
    };
    let base = points[0].1;
    let step_ns = (STEP_S * 1e9) as i64;
    let mut out = Vec::new();
    let mut j = 0;
    while j + 1 < points.len() {
        let mut k = j + 1;
        // 0.1 % short of a second still counts: sample times jitter by a few µs.
        while k + 1 < points.len() && points[k].0 - points[j].0 < step_ns - step_ns / 1000 {
            k += 1;
        }
        // Less than half a step left: the last step takes it (a sliver of a second at the
        // phase's end, its last file's close, would read as a drop).
        let last = points.len() - 1;
        if points[last].0 - points[k].0 < step_ns / 2 {
            k = last;
        }
        let ((t0, b0), (t1, b1)) = (points[j], points[k]);
        j = k;
        if t1 <= t0 {
            continue;
        }
        out.push(Second {
            start_ns: t0,
            end_ns: t1,
            bytes: b1.saturating_sub(base),
            rate_bps: b1.saturating_sub(b0) as f64 / ((t1 - t0) as f64 * 1e-9),
        });
    }
    out
}

/// The 1 s throughput of `target`'s `phase` in `run`, from its completed files (those the
/// analysis reads) and the target's counter; empty without either.
pub fn of_phase(run: &RunData, target: &str, phase: &str) -> Vec<Second> {
    let Some(counter) = crate::input::counter_points(run, target) else {
        return Vec::new();
    };
    let files: Vec<_> = run
        .files
        .iter()
        .filter(|f| f.target == target && f.phase == phase && f.status == "ok")
        .cloned()
        .collect();
    if files.is_empty() {
        return Vec::new();
    }
    let s = series::Series::new(target.to_string(), phase.to_string(), files);
    per_second(&s, &counter)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hostd_records::FileRecord;

    const MS: i64 = 1_000_000;

    /// A write of ten 100 MB files, five at 200 MB/s (2.5 s) then five at 50 MB/s (10 s),
    /// after a read of 1 GB on the same target (its bytes are in the counter before the
    /// write), sampled every 100 ms.
    fn write_after_read() -> (Series, Vec<(i64, u64)>) {
        let start = 10_000 * MS;
        let rate_at = |i: u32| if i < 5 { 200e6 } else { 50e6 };
        let mut files = Vec::new();
        let mut t = start;
        for i in 0..10u32 {
            let end = t + (100e6 / rate_at(i) * 1e9) as i64;
            files.push(FileRecord::new(
                "t",
                "write",
                i,
                t as u64,
                end as u64,
                100_000_000,
            ));
            t = end;
        }
        let s = Series::new("t".into(), "write".into(), files);
        let at = |ns: i64| -> u64 {
            let s = ((ns - start) as f64 * 1e-9).max(0.0);
            let moved = if s <= 2.5 {
                200e6 * s
            } else {
                500e6 + 50e6 * (s - 2.5)
            };
            1_000_000_000 + moved.min(1e9) as u64
        };
        let counter = (0..400).map(|k| (k * 100 * MS, at(k * 100 * MS))).collect();
        (s, counter)
    }

    /// Each second's rate is its bytes over its time, placed at the write's own bytes (the
    /// read before it left out); the steps follow one another without a gap, 1 s each but
    /// the last.
    #[test]
    fn each_second_is_its_bytes_over_its_time_at_the_phases_own_bytes() {
        let (s, counter) = write_after_read();
        let secs = per_second(&s, &counter);
        assert_eq!(secs[0].start_ns, s.start_ns());
        assert_eq!(secs[0].bytes, 200_000_000, "{:?}", secs[0]);
        for w in secs.windows(2) {
            assert_eq!(w[0].end_ns, w[1].start_ns);
            assert!(w[0].bytes < w[1].bytes);
        }
        for sec in &secs[..secs.len() - 1] {
            assert_eq!(sec.end_ns - sec.start_ns, 1_000 * MS, "{sec:?}");
        }
        let mb_s: Vec<f64> = secs.iter().map(|x| (x.rate_bps / 1e6).round()).collect();
        let mut want = vec![200.0, 200.0, 125.0];
        want.extend([50.0; 10]);
        assert_eq!(mb_s, want);
        let last = secs.last().unwrap();
        assert_eq!((last.end_ns, last.bytes), (s.end_ns(), s.total_bytes()));
        // Cut 0.3 s short of a whole second, the write's last step takes the sliver.
        let mut short = s.clone();
        let f = short.files.last_mut().unwrap();
        f.end_ns -= 200 * MS as u64;
        let secs = per_second(&short, &counter);
        let last = secs.last().unwrap();
        assert_eq!(last.end_ns - last.start_ns, 1_300 * MS, "{last:?}");
        assert_eq!(last.end_ns, short.end_ns());
    }

    /// No counter, or no files: no series.
    #[test]
    fn without_a_counter_there_is_no_series() {
        let (s, _) = write_after_read();
        assert!(per_second(&s, &[]).is_empty());
        assert!(of_phase(&RunData::default(), "t", "write").is_empty());
    }
}
