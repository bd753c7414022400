//! `summary.json`: per-phase statistics, the all-active window, warnings and the
//! parts' sections (docs/run-directory.md). The figures are the analysis' own
//! (`hostd_analysis::run_summary`); `hostd-store` renders them.

use crate::columns::{column_table, Value};
use crate::error::Result;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// File name in the run directory.
pub const FILE_NAME: &str = "summary.json";
/// Newest format this build reads and the one it writes. Format 2: `phases[]` is
/// [`PhaseStats`], the type of `events.json` `phases[]` (rates in bytes/s); format 1 had its
/// own shape in MB/s, which [`read`] still reads ([`PhaseStatsV1`]).
pub const FORMAT_VERSION: u32 = 2;

use crate::events::{Overlap, PhaseStats};

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

column_table! {
    /// The latency columns of `files.csv` and `intervals.csv` (empty where nothing was
    /// timed; the mean rounded to the ns).
    pub const LATENCY_COLUMNS for LatencyStats {
        "lat_io_count" (Field): |s| Value::Count(s.count), |s, c| s.count = c.int()?;
        "lat_min_ns" (Field): |s| Value::Count(s.min_ns), |s, c| s.min_ns = c.opt_int()?.unwrap_or(0);
        "lat_mean_ns" (Field): |s| Value::Count(s.mean_ns.round() as u64),
            |s, c| s.mean_ns = c.opt_float()?.unwrap_or(0.0);
        "lat_p50_ns" (Field): |s| Value::Count(s.p50_ns), |s, c| s.p50_ns = c.opt_int()?.unwrap_or(0);
        "lat_p90_ns" (Field): |s| Value::Count(s.p90_ns), |s, c| s.p90_ns = c.opt_int()?.unwrap_or(0);
        "lat_p99_ns" (Field): |s| Value::Count(s.p99_ns), |s, c| s.p99_ns = c.opt_int()?.unwrap_or(0);
        "lat_p99_9_ns" (Field): |s| Value::Count(s.p99_9_ns),
            |s, c| s.p99_9_ns = c.opt_int()?.unwrap_or(0);
        "lat_p99_99_ns" (Field): |s| Value::Count(s.p99_99_ns),
            |s, c| s.p99_99_ns = c.opt_int()?.unwrap_or(0);
        "lat_max_ns" (Field): |s| Value::Count(s.max_ns), |s, c| s.max_ns = c.opt_int()?.unwrap_or(0);
    }
}

impl LatencyStats {
    /// Reads the latency columns of a row (`cols` in [`LATENCY_COLUMNS`] order); None
    /// when the row has no count.
    pub(crate) fn from_row(
        row: &crate::csvio::Row<'_>,
        cols: &[Option<usize>],
    ) -> crate::error::Result<Option<LatencyStats>> {
        let count = row.cell(cols[0], LATENCY_COLUMNS[0]);
        if count.map_or(Ok(""), |c| c.text())?.is_empty() {
            return Ok(None);
        }
        let mut s = LatencyStats::default();
        row.read(&mut s, cols)?;
        Ok(Some(s))
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

impl ActiveWindow {
    /// The window of the analysis' overlap, in MB/s; None without a window (fewer than two
    /// targets, or no common time).
    pub fn of(overlap: &Overlap) -> Option<ActiveWindow> {
        let w = overlap.window.as_ref()?;
        let targets: Vec<WindowTarget> = overlap
            .per_target
            .iter()
            .map(|t| WindowTarget {
                target: t.target.clone(),
                bytes: t.bytes.round() as u64,
                mbps: t.rate_bps / 1e6,
            })
            .collect();
        Some(ActiveWindow {
            start_ns: w.start_ns as u64,
            end_ns: w.end_ns as u64,
            seconds: w.duration_s,
            aggregate_bytes: targets.iter().map(|t| t.bytes).sum(),
            aggregate_mbps: overlap.aggregate_bps? / 1e6,
            targets,
        })
    }
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
    /// The user's notes and tags, and the starting state hostd set (as in the manifest).
    #[serde(
        default,
        skip_serializing_if = "crate::conditions::Conditions::is_empty"
    )]
    pub conditions: crate::conditions::Conditions,
    /// Sections added by the run's parts (`analysis`, `probe`, …), keyed by name.
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

/// Reads `dir/summary.json`, refusing a newer format; a format-1 file's phases are
/// converted to [`PhaseStats`] ([`PhaseStatsV1::upgrade`]).
pub fn read(dir: &Path) -> Result<Summary> {
    let path = dir.join(FILE_NAME);
    let mut doc: serde_json::Value = crate::version::read_json(&path, FORMAT_VERSION)?;
    let version = doc.get("format_version").and_then(|v| v.as_u64());
    if version.unwrap_or(1) < 2 {
        if let Some(phases) = doc.get_mut("phases") {
            let old: Vec<PhaseStatsV1> = serde_json::from_value(phases.take())
                .map_err(|e| crate::RecordError::json(&path, e))?;
            *phases = serde_json::to_value(
                old.into_iter()
                    .map(PhaseStatsV1::upgrade)
                    .collect::<Vec<_>>(),
            )
            .map_err(|e| crate::RecordError::json(&path, e))?;
        }
    }
    serde_json::from_value(doc).map_err(|e| crate::RecordError::json(&path, e))
}

/// A `summary.json` phase as format 1 wrote it (rates in MB/s, other names); read only.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PhaseStatsV1 {
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
    /// Theil–Sen rate, MB/s.
    pub theil_sen_mbps: Option<f64>,
    /// Theil–Sen per-file overhead, s.
    pub theil_sen_overhead_s: Option<f64>,
    /// Least-squares rate, MB/s.
    pub least_squares_mbps: Option<f64>,
    /// Sarle's bimodality coefficient.
    pub bimodality_coefficient: Option<f64>,
    /// Rates look bimodal.
    pub bimodal: bool,
    /// Corrupt blocks.
    pub corrupt_blocks: u64,
    /// Corrupt bytes.
    pub corrupt_bytes: u64,
    /// Files verified clean.
    pub verified_files: usize,
    /// Late paced I/Os.
    pub late_ops: u64,
    /// Common I/O size, bytes.
    pub block_size: Option<usize>,
    /// Common queue depth.
    pub queue_depth: Option<usize>,
    /// I/Os per second.
    pub iops: Option<f64>,
    /// Latency, ns.
    #[serde(default)]
    pub latency: Option<LatencyStats>,
}

impl PhaseStatsV1 {
    /// The same figures as [`PhaseStats`]: MB/s × 10⁶ to bytes/s. What format 1 did not
    /// record stays absent: the phase's first start and last end (0), the least-squares
    /// overhead, the gap test's details and the energy.
    pub fn upgrade(self) -> PhaseStats {
        let bps = |mbps: f64| mbps * 1e6;
        PhaseStats {
            target: self.target,
            phase: self.phase,
            files: self.files,
            bytes: self.bytes,
            seconds: self.seconds,
            start_ns: 0,
            end_ns: 0,
            throughput_bps: bps(self.overall_mbps),
            mean_bps: bps(self.mean_mbps),
            median_bps: bps(self.median_mbps),
            min_bps: bps(self.min_mbps),
            max_bps: bps(self.max_mbps),
            trimmed_mean_bps: bps(self.trimmed20_mbps),
            theil_sen_bps: self.theil_sen_mbps.map(bps),
            theil_sen_overhead_s: self.theil_sen_overhead_s,
            least_squares_bps: self.least_squares_mbps.map(bps),
            least_squares_overhead_s: None,
            bimodal: self.bimodal,
            bimodality: None,
            levels_explained_by: None,
            bimodality_coefficient: self.bimodality_coefficient,
            energy_j: None,
            j_per_gb: None,
            mean_power_w: None,
            port: None,
            corrupt_blocks: self.corrupt_blocks,
            corrupt_bytes: self.corrupt_bytes,
            verified_files: self.verified_files,
            late_ops: self.late_ops,
            block_size: self.block_size,
            queue_depth: self.queue_depth,
            iops: self.iops,
            latency: self.latency,
        }
    }
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
            conditions: crate::conditions::Conditions::from_args(&["n".into()], &["k=v".into()])
                .unwrap(),
            extra: serde_json::Map::new(),
            certify: None,
        };
        write(d.path(), &s).unwrap();
        assert_eq!(read(d.path()).unwrap(), s);
    }

    #[test]
    fn a_newer_summary_is_refused() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join(FILE_NAME), r#"{"format_version": 3}"#).unwrap();
        assert!(matches!(
            read(d.path()).unwrap_err(),
            RecordError::NewerFormat {
                found: 3,
                supported: 2,
                ..
            }
        ));
    }

    /// The format-1 summary.json of a real run (`hostd run` before format 2: a directory
    /// target, 3 files written and read back).
    fn format1_dir() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run-format1")
    }

    #[test]
    fn a_format_1_summary_reads_with_its_rates_in_bytes_per_second() {
        let s = read(&format1_dir()).unwrap();
        assert_eq!(s.format_version, 1);
        assert_eq!(s.status, "completed");
        assert_eq!(s.phases.len(), 2);
        let w = &s.phases[0];
        assert_eq!(
            (w.phase.as_str(), w.files, w.bytes),
            ("write", 3, 5_099_520)
        );
        // 177.3167448452126 MB/s in the file.
        assert!(
            (w.throughput_bps - 177_316_744.845_212_6).abs() < 1e-3,
            "{w:?}"
        );
        assert!((w.max_bps - 253_810_171.046_192_07).abs() < 1e-3, "{w:?}");
        assert!((w.theil_sen_bps.unwrap() - 6_424_024_867.368_357).abs() < 1e-2);
        assert_eq!((w.block_size, w.queue_depth), (Some(1 << 20), Some(4)));
        assert_eq!(w.latency.unwrap().p99_9_ns, 6_983_679);
        assert_eq!(s.phases[1].verified_files, 3);
        // The same figures as that run's events.json, which was in bytes/s already.
        let events = crate::events::read(&format1_dir()).unwrap();
        for (old, new) in s.phases.iter().zip(&events.phases) {
            for (a, b) in [
                (old.throughput_bps, new.throughput_bps),
                (old.mean_bps, new.mean_bps),
                (old.median_bps, new.median_bps),
                (old.trimmed_mean_bps, new.trimmed_mean_bps),
                (old.min_bps, new.min_bps),
                (old.max_bps, new.max_bps),
            ] {
                assert!((a - b).abs() <= 1e-9 * b, "{a} against {b}");
            }
        }
    }

    #[test]
    fn a_summary_is_written_in_format_2_with_the_phases_of_events_json() {
        let d = tempfile::tempdir().unwrap();
        let mut s = read(&format1_dir()).unwrap();
        s.format_version = FORMAT_VERSION;
        write(d.path(), &s).unwrap();
        let doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(d.path().join(FILE_NAME)).unwrap()).unwrap();
        assert_eq!(doc["format_version"], 2);
        let p = &doc["phases"][0];
        assert!(p.get("overall_mbps").is_none(), "{p}");
        assert_eq!(
            p["throughput_bps"].as_f64(),
            Some(s.phases[0].throughput_bps)
        );
        assert_eq!(p["latency"]["p99_9_ns"], 6_983_679);
        // Read back as format 2 (no conversion: × 10⁶ once only).
        let back = read(d.path()).unwrap();
        assert_eq!(back.format_version, 2);
        assert_eq!(back.phases[1].latency, s.phases[1].latency);
        let rel = (back.phases[0].max_bps - s.phases[0].max_bps).abs() / s.phases[0].max_bps;
        assert!(rel < 1e-12, "{rel}");
    }
}
