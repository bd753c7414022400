//! `summary.json`: per-phase statistics, the all-active window, warnings and the
//! components' sections (docs/run-directory.md). The computation lives in `hostd-store`.

use crate::error::Result;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// File name in the run directory.
pub const FILE_NAME: &str = "summary.json";
/// Newest format this build reads and the one it writes.
pub const FORMAT_VERSION: u32 = 1;

/// Statistics of one phase of one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseStats {
    /// Target label.
    pub target: String,
    /// Phase.
    pub phase: String,
    /// Files.
    pub files: usize,
    /// Bytes.
    pub bytes: u64,
    /// Sum of file times, s.
    pub seconds: f64,
    /// Bytes / seconds, MB/s.
    pub overall_mbps: f64,
    /// Mean of per-file MB/s.
    pub mean_mbps: f64,
    /// Median of per-file MB/s.
    pub median_mbps: f64,
    /// 20 % trimmed mean of per-file MB/s.
    pub trimmed20_mbps: f64,
    /// Slowest file, MB/s.
    pub min_mbps: f64,
    /// Fastest file, MB/s.
    pub max_mbps: f64,
    /// Theil–Sen fit time = a + size/rate: the rate, MB/s.
    pub theil_sen_mbps: Option<f64>,
    /// … and the per-file overhead a, s.
    pub theil_sen_overhead_s: Option<f64>,
    /// Least-squares rate, MB/s (for comparison).
    pub least_squares_mbps: Option<f64>,
    /// Sarle's bimodality coefficient of per-file rates.
    pub bimodality_coefficient: Option<f64>,
    /// Rates look bimodal: a mean misleads.
    pub bimodal: bool,
    /// Corrupt blocks found.
    pub corrupt_blocks: u64,
    /// Corrupt bytes found.
    pub corrupt_bytes: u64,
    /// Files verified clean.
    pub verified_files: usize,
    /// Late paced I/Os (video frames).
    pub late_ops: u64,
    /// I/O size, bytes, when every file of the phase used the same.
    pub block_size: Option<usize>,
    /// Queue depth, when every file of the phase used the same.
    pub queue_depth: Option<usize>,
    /// I/Os per second over the phase's file time (with `block_size`).
    pub iops: Option<f64>,
    /// Latency of the phase's I/Os, submission to completion, in ns
    /// (`latency.p99_9_ns` …; absent where no I/O was timed: simulated targets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<LatencyStats>,
}

/// The latency figures of a file, an interval or a phase: percentiles from
/// submission to completion, in nanoseconds (0 where no I/O completed). Made
/// from an HdrHistogram of 3 significant digits (`docs/latency.md`).
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

/// The latency columns of `files.csv` and `intervals.csv` (empty where nothing was timed).
pub const LATENCY_COLUMNS: [&str; 9] = [
    "lat_io_count",
    "lat_min_ns",
    "lat_mean_ns",
    "lat_p50_ns",
    "lat_p90_ns",
    "lat_p99_ns",
    "lat_p99_9_ns",
    "lat_p99_99_ns",
    "lat_max_ns",
];

impl LatencyStats {
    /// The cells of [`LATENCY_COLUMNS`] (the mean rounded to the ns).
    pub fn cells(s: Option<&LatencyStats>) -> Vec<String> {
        match s {
            None => vec![String::new(); LATENCY_COLUMNS.len()],
            Some(s) => vec![
                s.count.to_string(),
                s.min_ns.to_string(),
                format!("{:.0}", s.mean_ns),
                s.p50_ns.to_string(),
                s.p90_ns.to_string(),
                s.p99_ns.to_string(),
                s.p99_9_ns.to_string(),
                s.p99_99_ns.to_string(),
                s.max_ns.to_string(),
            ],
        }
    }

    /// Reads the latency columns of a row (`cols` in [`LATENCY_COLUMNS`] order); None
    /// when the row has no count.
    pub(crate) fn from_row(
        row: &crate::csvio::Row<'_>,
        cols: &[Option<usize>],
    ) -> crate::error::Result<Option<LatencyStats>> {
        let int = |k: usize| -> crate::error::Result<u64> {
            Ok(row.opt_int(cols[k], LATENCY_COLUMNS[k])?.unwrap_or(0))
        };
        let Some(count) = row.opt_int::<u64>(cols[0], LATENCY_COLUMNS[0])? else {
            return Ok(None);
        };
        Ok(Some(LatencyStats {
            count,
            min_ns: int(1)?,
            mean_ns: row.opt_float(cols[2], LATENCY_COLUMNS[2])?.unwrap_or(0.0),
            p50_ns: int(3)?,
            p90_ns: int(4)?,
            p99_ns: int(5)?,
            p99_9_ns: int(6)?,
            p99_99_ns: int(7)?,
            max_ns: int(8)?,
        }))
    }
}

/// Throughput of one target in the all-active window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowTarget {
    /// Target label.
    pub target: String,
    /// Bytes in the window.
    pub bytes: u64,
    /// MB/s in the window.
    pub mbps: f64,
}

/// The window in which every target was doing measured I/O.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActiveWindow {
    /// Start, host Unix ns.
    pub start_ns: u64,
    /// End, host Unix ns.
    pub end_ns: u64,
    /// Seconds.
    pub seconds: f64,
    /// Per target.
    pub targets: Vec<WindowTarget>,
    /// Sum of targets, bytes.
    pub aggregate_bytes: u64,
    /// Sum of targets, MB/s.
    pub aggregate_mbps: f64,
}

/// `summary.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Format version of this file.
    #[serde(default = "crate::version::one")]
    pub format_version: u32,
    /// Run id.
    pub run_id: String,
    /// `completed`, `interrupted`, `failed: …`.
    pub status: String,
    /// Start and end, host Unix ns.
    pub start_ns: u64,
    /// End.
    pub end_ns: u64,
    /// Per target and phase.
    pub phases: Vec<PhaseStats>,
    /// All-targets-active window (None if it never happened).
    pub window: Option<ActiveWindow>,
    /// Warnings (direct I/O, engine fallback, implausible speed, corruption, bimodal).
    pub warnings: Vec<String>,
    /// Facts the reader needs that are not faults (a simulated target's time scale).
    #[serde(default)]
    pub notes: Vec<String>,
    /// What cleanup did.
    pub cleanup: Vec<String>,
    /// What the adaptive workloads found (cache recovery, paced sweep, mixed I/O,
    /// duration runs), one per target and kind.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub programs: Vec<crate::ProgramReport>,
    /// The probe's health totals at the end of the run (with a probe).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_health: Option<ProbeHealth>,
    /// Sections added by run components (`analysis`, `probe`, …), keyed by name.
    #[serde(default)]
    pub extra: serde_json::Map<String, serde_json::Value>,
    /// The verdict of a certify run (as in `certify.json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certify: Option<crate::certify::Verdict>,
}

/// The probe's health at the end of a run: what InfluxDB's `probe_health` measurement and a
/// dashboard's health panel show. `None` where the probe did not report it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProbeHealth {
    /// Samples the probe took (its own counter).
    pub samples: Option<u64>,
    /// Samples the probe dropped (its own counter).
    pub dropped: Option<u64>,
    /// I²C errors the probe counted.
    pub i2c_errors: Option<u64>,
    /// Ring and transmit buffer overflows the probe counted.
    pub overflows: Option<u64>,
    /// Frames the host rejected for a bad CRC.
    pub crc_errors: u64,
    /// Discontinuities in the sample sequence numbers.
    pub seq_gaps: u64,
    /// Times the link re-opened the port.
    pub reconnects: u64,
    /// Largest clock-alignment uncertainty of the run, ns.
    pub alignment_uncertainty_ns: Option<f64>,
    /// Requested sample rate, Hz.
    pub sample_rate_hz: Option<f64>,
}

/// Writes `dir/summary.json` atomically.
pub fn write(dir: &Path, summary: &Summary) -> Result<()> {
    crate::version::write_json(&dir.join(FILE_NAME), summary)
}

/// Reads `dir/summary.json`, refusing a newer format.
pub fn read(dir: &Path) -> Result<Summary> {
    crate::version::read_json(&dir.join(FILE_NAME), FORMAT_VERSION)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RecordError;

    #[test]
    fn summary_round_trips() {
        let d = tempfile::tempdir().unwrap();
        let s = Summary {
            format_version: FORMAT_VERSION,
            run_id: "r".into(),
            status: "completed".into(),
            start_ns: 1,
            end_ns: 2,
            phases: Vec::new(),
            window: Some(ActiveWindow {
                start_ns: 1,
                end_ns: 2,
                seconds: 1e-9,
                targets: vec![WindowTarget {
                    target: "a".into(),
                    bytes: 5,
                    mbps: 0.5,
                }],
                aggregate_bytes: 5,
                aggregate_mbps: 0.5,
            }),
            warnings: vec!["w".into()],
            notes: Vec::new(),
            cleanup: Vec::new(),
            programs: Vec::new(),
            probe_health: Some(ProbeHealth {
                samples: Some(10),
                crc_errors: 1,
                alignment_uncertainty_ns: Some(4e4),
                ..ProbeHealth::default()
            }),
            extra: serde_json::Map::new(),
            certify: None,
        };
        write(d.path(), &s).unwrap();
        assert_eq!(read(d.path()).unwrap(), s);
    }

    #[test]
    fn a_newer_summary_is_refused() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join(FILE_NAME), r#"{"format_version": 2}"#).unwrap();
        assert!(matches!(
            read(d.path()).unwrap_err(),
            RecordError::NewerFormat {
                found: 2,
                supported: 1,
                ..
            }
        ));
    }
}
