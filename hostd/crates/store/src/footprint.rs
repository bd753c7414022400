//! How much disk a run directory takes: what `hostd run --dry-run` prints before a run.
//!
//! A run directory grows by three rates: a row set per file (its `files.csv` row, its
//! histogram in `latency-files.hlog`, its start and end in `run-events.jsonl`), a row set
//! per second and target (`intervals.csv`, `latency-intervals.hlog`, ten `counters.csv`
//! rows) and the probe's samples. The figures below were measured on real runs (small files
//! of 8–32 MB at QD 8: files.csv 188 B, latency-files.hlog 174 B and run-events.jsonl 115 B
//! a file; intervals.csv 150 B, latency-intervals.hlog 680 B and counters.csv 330 B a
//! second) and rounded up. With InfluxDB the spool (`spool/`) adds at most its cap: nothing
//! while the server takes the points, up to the cap if it is away long enough.

use std::fmt::Write as _;

/// Bytes on disk per probe sample (the probe's storage at 1 kHz): the budget `probe/` is held
/// to (`probe_run`'s test asserts it on a real simulated recording). Measured with the
/// simulator: 5.7–5.8 B of samples plus about 3.3 B of summary levels, so this is an upper
/// figure that leaves room for a noisier real probe.
pub const PROBE_BYTES_PER_SAMPLE: u64 = 16;
/// Bytes per file record: `files.csv`, `latency-files.hlog` and `run-events.jsonl`.
pub const BYTES_PER_FILE: u64 = 512;
/// Bytes per second and target: `intervals.csv`, `latency-intervals.hlog`, `counters.csv`.
pub const BYTES_PER_TARGET_SECOND: u64 = 1_280;
/// The run's fixed files (manifest, summary, report, log), at most.
pub const FIXED_BYTES: u64 = 4_000_000;

/// What a run will make, as far as its plan knows it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunShape {
    /// File records (one per file and phase).
    pub files: u64,
    /// The run's length, seconds.
    pub seconds: f64,
    /// Targets run at once.
    pub targets: u64,
    /// Probe samples per second (0 without a probe).
    pub probe_rate_hz: u64,
    /// The InfluxDB spool's cap, bytes (0 without InfluxDB).
    pub influx_spool_max: u64,
}

/// The disk a run directory of `shape` takes, by part, bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footprint {
    /// Per-file rows and histograms.
    pub files: u64,
    /// Per-second rows, histograms and counters of all targets.
    pub seconds: u64,
    /// Probe samples.
    pub probe: u64,
    /// The InfluxDB spool at its worst: full to its cap.
    pub spool: u64,
    /// Manifest, summary, report and log.
    pub fixed: u64,
}

impl Footprint {
    /// The footprint of `shape`.
    pub fn of(shape: &RunShape) -> Footprint {
        let seconds = shape.seconds.max(0.0).ceil() as u64;
        Footprint {
            files: shape.files * BYTES_PER_FILE,
            seconds: seconds * shape.targets * BYTES_PER_TARGET_SECOND,
            probe: seconds * shape.probe_rate_hz * PROBE_BYTES_PER_SAMPLE,
            spool: shape.influx_spool_max,
            fixed: FIXED_BYTES,
        }
    }

    /// All of it, bytes.
    pub fn total(&self) -> u64 {
        self.files + self.seconds + self.probe + self.spool + self.fixed
    }

    /// The `--dry-run` line: the total and how it is made up.
    pub fn render(&self, shape: &RunShape) -> String {
        let mut s = format!(
            "run directory: about {} ({} file records × {BYTES_PER_FILE} B = {}; {:.0} s × {} target(s) × {BYTES_PER_TARGET_SECOND} B = {}",
            mb(self.total()),
            shape.files,
            mb(self.files),
            shape.seconds,
            shape.targets,
            mb(self.seconds),
        );
        if shape.probe_rate_hz > 0 {
            let _ = write!(
                s,
                "; probe {} Hz × {PROBE_BYTES_PER_SAMPLE} B = {}",
                shape.probe_rate_hz,
                mb(self.probe)
            );
        }
        if self.spool > 0 {
            let _ = write!(
                s,
                "; InfluxDB spool at most {} if the server is away long",
                mb(self.spool)
            );
        }
        let _ = write!(s, "; {} fixed)", mb(self.fixed));
        s
    }
}

fn mb(bytes: u64) -> String {
    if bytes >= 10_000_000_000 {
        format!("{:.1} GB", bytes as f64 / 1e9)
    } else if bytes >= 1_000_000 {
        format!("{:.1} MB", bytes as f64 / 1e6)
    } else {
        format!("{:.0} kB", bytes as f64 / 1e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each part scales with its own rate: files with file records, seconds with the
    /// length and the targets, the probe with its rate.
    #[test]
    fn each_part_grows_with_its_own_rate() {
        let shape = RunShape {
            files: 1000,
            seconds: 100.0,
            targets: 2,
            probe_rate_hz: 1000,
            influx_spool_max: 0,
        };
        let f = Footprint::of(&shape);
        assert_eq!(f.files, 1000 * BYTES_PER_FILE);
        assert_eq!(f.seconds, 200 * BYTES_PER_TARGET_SECOND);
        assert_eq!(f.probe, 100_000 * PROBE_BYTES_PER_SAMPLE);
        assert_eq!(f.total(), f.files + f.seconds + f.probe + FIXED_BYTES);
        let no_probe = RunShape {
            probe_rate_hz: 0,
            ..shape
        };
        let none = Footprint::of(&no_probe);
        assert_eq!(none.probe, 0);
        assert!(!none.render(&no_probe).contains("probe"));
        let line = f.render(&shape);
        assert!(line.contains("1000 file records"), "{line}");
        assert!(line.contains("probe 1000 Hz × 16 B = 1.6 MB"), "{line}");
        assert!(!line.contains("spool"), "no InfluxDB, no spool: {line}");
    }

    /// With InfluxDB the spool's cap is added whole: the worst case, a server away long.
    #[test]
    fn the_influx_spool_adds_its_cap() {
        let shape = RunShape {
            files: 10,
            seconds: 60.0,
            targets: 1,
            probe_rate_hz: 0,
            influx_spool_max: 1 << 30,
        };
        let f = Footprint::of(&shape);
        assert_eq!(f.spool, 1 << 30);
        assert_eq!(
            f.total(),
            10 * BYTES_PER_FILE + 60 * BYTES_PER_TARGET_SECOND + (1 << 30) + FIXED_BYTES
        );
        let line = f.render(&shape);
        assert!(line.contains("InfluxDB spool at most 1073.7 MB"), "{line}");
        assert!(line.starts_with("run directory: about 1077.8 MB"), "{line}");
    }

    /// 8 hours at 1 kHz: the probe's 460.8 MB and the seconds' part, in GB past 10 GB.
    #[test]
    fn an_eight_hour_run_is_priced_by_its_parts() {
        let shape = RunShape {
            files: 0,
            seconds: 8.0 * 3600.0,
            targets: 1,
            probe_rate_hz: 1000,
            influx_spool_max: 0,
        };
        let f = Footprint::of(&shape);
        assert_eq!(f.probe, 460_800_000);
        assert_eq!(mb(f.probe), "460.8 MB");
        assert_eq!(mb(20_000_000_000), "20.0 GB");
        assert_eq!(mb(12_288), "12 kB");
    }
}
