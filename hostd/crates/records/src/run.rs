//! A run's records in memory: what `hostd run` hands on from the workload and the probe to
//! the analysis, the report and every sink, and what [`RunData::read`] rebuilds from a run
//! directory for `hostd analyze` (through the readers of [`RUN_FILES`]) — the same value
//! either way.

use crate::counters::Counters;
use crate::error::Result;
use crate::files::FileRecord;
use crate::probe::ProbeSeries;
use crate::run_files::{Access, Reading, RUN_FILES};
use std::path::Path;

/// The records the analysis and the report work on.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunData {
    /// Per-file records, in completion order ([`RunData::sort`]).
    pub files: Vec<FileRecord>,
    /// Probe samples, if the run had a probe (and it delivered any).
    pub probe: Option<ProbeSeries>,
    /// Each target's 100 ms byte counter, if recorded.
    pub counters: Option<Counters>,
    /// The target the probe was inline with, if known.
    pub probe_target: Option<String>,
    /// Each target's drive (SMART) temperature, (host Unix ns, °C) in time order, if polled.
    pub drive_temp: Option<crate::drive_temp::DriveTemps>,
    /// Each target's drive thermal record (NVMe thermal counters, SATA SCT status) in time
    /// order, if polled (`drive_log.csv`).
    pub drive_log: Option<crate::drive_log::DriveLogs>,
    /// The I/O latency histograms per file and per interval (empty where nothing was timed).
    pub latency: crate::latency::RunLatency,
    /// What the operating system logged about the storage path (`os-log.jsonl`), in time
    /// order, if its log was read.
    pub os_log: Option<Vec<crate::os_log::OsLogRecord>>,
    /// The manifest's notes, tags and starting state (empty when it has none).
    pub conditions: crate::conditions::Conditions,
    /// The temperature gate's waits (from the summary; empty without a gate).
    pub gate_waits: Vec<crate::gate_wait::GateWait>,
    /// The host port's power budget at the start (the manifest's probe section), when
    /// recorded.
    pub port_budget: Option<crate::port_budget::PortBudget>,
    /// The budget in force at each time: `port_budget`, then the changes the probe reported
    /// on the run's timeline (`probe-link.jsonl`).
    pub budget_timeline: crate::port_budget::BudgetTimeline,
    /// The run's simulated targets played faster, its records on the modelled drive's clock
    /// (the manifest's `playback`).
    pub playback: Option<crate::clock::Playback>,
}

impl RunData {
    /// Reads a run directory: its manifest first (an old hand-made one this build cannot
    /// read leaves its facts unknown rather than refusing the run; one of a newer format is
    /// refused with the reason; a profile of another schema is kept as written), then every
    /// file of [`RUN_FILES`] with a reader, in that list's order, each refusing a newer
    /// format. `files.csv` must be there; every other file may be absent.
    pub fn read(dir: &Path) -> Result<RunData> {
        let manifest = match crate::manifest::read(dir) {
            Ok(m) => Some(m),
            Err(e @ crate::RecordError::NewerFormat { .. }) => return Err(e),
            Err(_) => None,
        };
        let reading = Reading {
            dir,
            manifest: manifest.as_ref(),
        };
        let mut run = RunData::default();
        for file in RUN_FILES {
            if let Access::By(read) = file.read {
                read(&reading, &mut run)?;
            }
        }
        run.sort();
        Ok(run)
    }

    /// Puts the files in completion order (by end, then target, phase and index) and the
    /// latency histograms in theirs: several targets' threads finish files at once, so
    /// the order in which `hostd run` collects them and the order of `files.csv` can
    /// differ, and the analysis and the report must not depend on that.
    pub fn sort(&mut self) {
        self.files.sort_by(|a, b| {
            (a.end_ns, a.target_index, &a.phase, a.index).cmp(&(
                b.end_ns,
                b.target_index,
                &b.phase,
                b.index,
            ))
        });
        self.latency.sort();
    }
}

/// Most points the probe series [`RunData::read`] builds from `probe/` holds: a run with
/// more samples (over about 66 min at 1 kHz) is read at the finest summary level with at
/// most this many bins, so `hostd analyze` and the report stay in bounded memory
/// (about 32 bytes a point) whatever the run's length.
pub const SERIES_POINTS_MAX: u64 = 4_000_000;

/// The finest level with at most `max_points` bins over `span_ns`.
fn level_for(span_ns: i64, max_points: u64) -> crate::probe_levels::Level {
    use crate::probe_levels::Level;
    [Level::Ms10, Level::S1]
        .into_iter()
        .find(|l| (span_ns / l.width_ns()) as u64 <= max_points)
        .unwrap_or(Level::Min1)
}

/// The probe series of the 10 ms bins `ms10` (in time order) of a run with more than
/// [`SERIES_POINTS_MAX`] samples, as [`probe_series`] reads it from the run directory
/// (the coarser levels built from the 10 ms bins: the stored ones up to rounding). `hostd
/// run` builds it from the bins it holds rather than keep every sample.
pub fn series_of_bins(ms10: &[crate::AggRow]) -> ProbeSeries {
    series_of_bins_within(ms10, SERIES_POINTS_MAX)
}

/// [`series_of_bins`] with at most `max_points` points (for tests of long runs).
pub fn series_of_bins_within(ms10: &[crate::AggRow], max_points: u64) -> ProbeSeries {
    use crate::probe_levels::{coarsen, Level};
    let seconds = coarsen(ms10, Level::S1.width_ns());
    let span_ns = match (seconds.first(), seconds.last()) {
        (Some(a), Some(b)) => b.time_ns - a.time_ns + Level::S1.width_ns(),
        _ => 0,
    };
    let level = level_for(span_ns, max_points);
    let mut series = ProbeSeries::default();
    let mut push = |r: &crate::AggRow| push_bin(&mut series, r, level);
    match level {
        Level::Ms10 => ms10.iter().for_each(&mut push),
        Level::S1 => seconds.iter().for_each(&mut push),
        Level::Min1 => coarsen(&seconds, level.width_ns())
            .iter()
            .for_each(&mut push),
    }
    series.finish();
    series
}

/// Appends one bin of `level` to a series: a point at the bin's middle with its mean power
/// and enclosure temperature and its last energy reading.
fn push_bin(series: &mut ProbeSeries, r: &crate::AggRow, level: crate::probe_levels::Level) {
    let value = |v: f64| (!v.is_nan()).then_some(v);
    series.push(&crate::ProbeSample {
        time_ns: r.time_ns + level.width_ns() / 2,
        power_w: value(r.power_w.mean),
        enclosure_temp_c: value(r.enclosure_temp_c.mean),
        energy_j: value(r.energy_j),
        ..Default::default()
    });
    series.set_last_vbus(value(r.vbus_v.mean), value(r.vbus_v.min));
}

/// The probe series of a run directory with `probe/`: every sample when there are at most
/// [`SERIES_POINTS_MAX`]; otherwise one point per bin of the finest level of
/// `probe/levels-*.parquet` with at most that many bins, at the bin's middle, with the
/// bin's mean power and enclosure temperature and its last energy reading. The per-file
/// figures do not come from this series: `hostd run` computed them from every sample and
/// the accumulator (`files-probe.csv`).
pub fn probe_series(dir: &Path) -> Result<ProbeSeries> {
    probe_series_within(dir, SERIES_POINTS_MAX)
}

/// [`probe_series`] with at most `max_points` points (for tests of long runs).
pub fn probe_series_within(dir: &Path, max_points: u64) -> Result<ProbeSeries> {
    use crate::probe_levels::{self as levels, Level};
    let samples = crate::probe_store::sample_count(dir)?;
    if samples <= max_points || !levels::exists(dir) {
        return crate::probe_store::read_series(dir);
    }
    // The run's span from its first and last 1 s bins (few rows).
    let seconds = levels::read_level(dir, Level::S1)?;
    let span_ns = match (seconds.first(), seconds.last()) {
        (Some(a), Some(b)) => b.time_ns - a.time_ns + Level::S1.width_ns(),
        _ => 0,
    };
    let level = level_for(span_ns, max_points);
    let mut series = ProbeSeries::default();
    let push = |r: &crate::AggRow| push_bin(&mut series, r, level);
    match level {
        Level::Min1 => levels::coarsen(&seconds, level.width_ns())
            .iter()
            .for_each(push),
        Level::S1 => seconds.iter().for_each(push),
        Level::Ms10 => levels::for_each_stored(dir, level, push)?,
    }
    series.finish();
    Ok(series)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real run directory of the previous hostd (3 files written, 3 read back).
    fn fixture() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run-format1")
    }

    /// A copy of [`fixture`] to change.
    fn copy_of_fixture() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for e in std::fs::read_dir(fixture()).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), d.path().join(e.file_name())).unwrap();
        }
        d
    }

    /// 30 s of samples at 1 kHz at a steady 2 W (the accumulator read with every sample),
    /// with their 10 ms and 1 s levels, in `probe/`.
    fn long_probe_dir() -> tempfile::TempDir {
        use crate::agg::{AggRow, Stat};
        let d = tempfile::tempdir().unwrap();
        let t0 = 1_795_280_420_000_000_000i64;
        let samples: Vec<crate::ProbeSample> = (0..30_000)
            .map(|i| crate::ProbeSample {
                time_ns: t0 + i * 1_000_000,
                seq: i as u64,
                power_w: Some(2.0),
                enclosure_temp_c: Some(25.0),
                energy_j: Some(i as f64 * 2e-3),
                ..Default::default()
            })
            .collect();
        let mut w = crate::probe_store::Writer::create(d.path()).unwrap();
        w.write(&samples).unwrap();
        w.finish().unwrap();
        let bin = |chunk: &[crate::ProbeSample], width: i64| AggRow {
            time_ns: chunk[0].time_ns.div_euclid(width) * width,
            samples: chunk.len() as u32,
            power_w: Stat {
                min: 2.0,
                mean: 2.0,
                max: 2.0,
            },
            enclosure_temp_c: Stat {
                min: 25.0,
                mean: 25.0,
                max: 25.0,
            },
            energy_j: chunk.last().unwrap().energy_j.unwrap(),
            ..AggRow::default()
        };
        let ms10: Vec<AggRow> = samples.chunks(10).map(|c| bin(c, 10_000_000)).collect();
        let s1: Vec<AggRow> = samples
            .chunks(1000)
            .map(|c| bin(c, 1_000_000_000))
            .collect();
        let mut l = crate::probe_levels::Writer::new(d.path());
        l.write(&ms10, &s1).unwrap();
        l.finish().unwrap();
        d
    }

    #[test]
    fn a_long_runs_probe_series_is_read_at_the_finest_level_that_fits() {
        let d = long_probe_dir();
        let (from, to) = (1_795_280_425_000_000_000, 1_795_280_435_000_000_000);
        for (max_points, points) in [(100_000, 30_000), (5_000, 3_000), (100, 30), (10, 1)] {
            let p = probe_series_within(d.path(), max_points).unwrap();
            assert_eq!(p.len(), points, "at most {max_points} points");
            if points > 1 {
                // The same power and, within a bin, the same energy whatever the level.
                assert_eq!(p.mean_in(&p.power_w, from, to), Some(2.0));
                let e = p.energy_between(from, to).unwrap();
                assert!((e - 20.0).abs() < 1.0, "{e} J over 10 s at 2 W");
            }
        }
        // Every sample when the run is short enough: what `RunData::read` gives.
        assert_eq!(probe_series(d.path()).unwrap().len(), 30_000);
    }

    #[test]
    fn files_are_in_completion_order_whatever_order_files_csv_has() {
        let run = RunData::read(&fixture()).unwrap();
        assert_eq!(run.files.len(), 6);
        assert!(run.files.windows(2).all(|w| w[0].end_ns <= w[1].end_ns));
        assert_eq!(run.latency.files.len(), 6);
        // The same rows in another order (as two targets' threads may log them).
        let d = copy_of_fixture();
        let text = std::fs::read_to_string(fixture().join(crate::files::FILE_NAME)).unwrap();
        let mut lines: Vec<&str> = text.lines().collect();
        lines[1..].reverse();
        std::fs::write(
            d.path().join(crate::files::FILE_NAME),
            lines.join("\n") + "\n",
        )
        .unwrap();
        let reordered = RunData::read(d.path()).unwrap();
        assert_ne!(reordered.files.first(), None);
        assert_eq!(reordered, run);
    }

    /// A real run directory of the hostd before `files-probe.csv` (a probed disk target
    /// and an unprobed simulated one, 3 files written and 3 read on each): the probe's
    /// columns are at the end of its `files.csv`.
    fn probed_fixture() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run-probed-format1")
    }

    #[test]
    fn a_probed_run_reads_the_same_from_the_old_files_csv_and_from_files_probe_csv() {
        let old = RunData::read(&probed_fixture()).unwrap();
        let figures = |target: &str, phase: &str, index: u32| {
            let f = old
                .files
                .iter()
                .find(|f| (f.target.as_str(), f.phase.as_str(), f.index) == (target, phase, index))
                .unwrap();
            f.probe.as_deref().cloned().unwrap()
        };
        let p = figures("target", "write", 1);
        assert_eq!(p.probe, "sim-0001");
        assert_eq!((p.energy_j, p.j_per_gb), (Some(0.127010), Some(3.814060)));
        assert_eq!(figures("target", "write", 0).energy_j, None);
        let unprobed = figures("sim:steady*20", "write", 2);
        assert_eq!(unprobed.probe, crate::files::NO_PROBE);
        assert_eq!(
            unprobed,
            crate::files::FileProbe {
                probe: crate::files::NO_PROBE.into(),
                ..Default::default()
            }
        );
        assert_eq!(old.files.len(), 9);
        assert!(old.files.iter().all(|f| f.probe.is_some()));

        // The same records as `hostd run` writes them now: files.csv streamed without the
        // probe's columns, the figures in files-probe.csv.
        let d = tempfile::tempdir().unwrap();
        for name in [crate::manifest::FILE_NAME, crate::probe::FILE_NAME] {
            std::fs::copy(probed_fixture().join(name), d.path().join(name)).unwrap();
        }
        let mut w = crate::files::Writer::create(d.path()).unwrap();
        old.files.iter().for_each(|f| w.write(f).unwrap());
        drop(w);
        let header = std::fs::read_to_string(d.path().join(crate::files::FILE_NAME)).unwrap();
        assert!(!header.lines().next().unwrap().contains("energy_j"));
        let streamed_only = RunData::read(d.path()).unwrap();
        assert!(streamed_only.files.iter().all(|f| f.probe.is_none()));
        crate::files_probe::write(d.path(), &old.files).unwrap();
        let new = RunData::read(d.path()).unwrap();
        // (The probe series has NaN where a channel has no value yet: not `==` itself.)
        assert_eq!(new.files, old.files);
        assert_eq!(new.probe_target.as_deref(), Some("target"));
        assert_eq!(new.probe_target, old.probe_target);
    }

    #[test]
    fn what_the_os_logged_is_read_with_the_run_in_time_order_and_absent_when_not_read() {
        use crate::os_log::{OsLogKind, OsLogRecord};
        let d = copy_of_fixture();
        assert_eq!(RunData::read(d.path()).unwrap().os_log, None);
        let r = |t: i64| OsLogRecord {
            time_ns: t,
            kind: OsLogKind::UasError,
            target: Some("target".into()),
            device: Some("sdb".into()),
            source: "kernel".into(),
            line: format!("sd 1:0:0:0: [sdb] tag#{t} uas_eh_abort_handler 0 uas-tag 29 inflight: "),
        };
        crate::os_log::write(d.path(), &[r(9), r(3)]).unwrap();
        assert_eq!(
            RunData::read(d.path()).unwrap().os_log,
            Some(vec![r(3), r(9)])
        );
    }

    #[test]
    fn a_run_whose_manifest_has_a_profile_of_another_schema_is_read_with_its_probed_target() {
        let d = copy_of_fixture();
        let run = RunData::read(d.path()).unwrap();
        let path = d.path().join(crate::manifest::FILE_NAME);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("\"verify\": true", "\"direct\": true")).unwrap();
        let m = crate::manifest::read(d.path()).unwrap();
        assert!(matches!(m.profile, Some(crate::RecordedProfile::Unread(_))));
        assert!(m.profile_name().is_some());
        // The manifest still orders and numbers the targets, as before the edit.
        assert_eq!(RunData::read(d.path()).unwrap(), run);
    }
}
