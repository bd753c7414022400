//! Every file of a run directory that holds records, in one list ([`RUN_FILES`]): its name,
//! its format version and where that is kept, how its records are read into a run's
//! [`RunData`] and written from it, and how `hostd import` sends them to InfluxDB.
//!
//! `manifest.json`'s `formats` ([`crate::version::current`]), [`RunData::read`] (what
//! `hostd analyze` and `hostd compare` read), the InfluxDB import and the InfluxDB part's
//! push at a run's end all go through this list, so a new run file is its records module
//! (record type, `FILE_NAME`, `FORMAT_VERSION`, reader, writer), its field in [`RunData`]
//! and one entry here (ARCHITECTURE.md "Where to add…").

use crate::columns::ColumnRow;
use crate::error::Result;
use crate::manifest::Manifest;
use crate::run::RunData;
use std::path::Path;

/// One file of a run directory (see the module documentation).
#[derive(Clone, Copy)]
pub struct RunFile {
    /// Its name in the run directory (a pattern for a file per segment, e.g.
    /// `probe/segment-*.parquet`).
    pub name: &'static str,
    /// The newest format this build reads and the one it writes, and where it is kept.
    pub version: Version,
    /// How its records reach a run's [`RunData`] ([`RunData::read`]).
    pub read: Access<ReadFn>,
    /// How it is written from a run's [`RunData`] (`hostd run` streams the files it writes
    /// as the records come, through the module's own writer; this one writes them at once).
    pub write: Access<WriteFn>,
    /// How `hostd import` (and the InfluxDB part, at a run's end) sends it to InfluxDB.
    pub import: Import,
}

/// Puts the records of a run file into a run's records: does nothing when the file is absent
/// (unless the run needs it: `files.csv`), refuses a newer format.
pub type ReadFn = fn(&Reading<'_>, &mut RunData) -> Result<()>;

/// Writes a run file from a run's records, at once (does nothing when the run has none).
pub type WriteFn = fn(&Path, &RunData) -> Result<()>;

/// What a run file's reader has besides its file: the run directory and its manifest, read
/// once before every other file.
pub struct Reading<'a> {
    /// The run directory.
    pub dir: &'a Path,
    /// The manifest, when this build reads it (an old hand-made one is left out rather than
    /// refusing the run; one of a newer format is refused before any file is read).
    pub manifest: Option<&'a Manifest>,
}

/// Hands each of a run's records of one file to the callback; false when the run has none.
pub type RowsFn = fn(&RunData, &mut dyn FnMut(&dyn ColumnRow)) -> bool;

/// Where a run file's format version is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// In `manifest.json`'s `formats` (a CSV file has no place of its own for one).
    InManifest(u32),
    /// In the file itself (a JSON document's `format_version`, a Parquet file's metadata).
    InFile(u32),
    /// Not recorded: its readers take version 1 unless `manifest.json`'s `formats` names
    /// the file. (The drive's tables were added without an entry in `formats`; adding one
    /// now would change every manifest this build writes.)
    NotRecorded(u32),
    /// None: one self-describing JSON object a line, or an HdrHistogram log.
    Unversioned,
}

/// How a run file takes part in reading or writing a run's records.
#[derive(Clone, Copy)]
pub enum Access<F> {
    /// It does not.
    No,
    /// Through this function.
    By(F),
    /// Together with the named file, by that file's function (`corrupt.csv` with
    /// `files.csv`).
    With(&'static str),
}

impl<F> Access<F> {
    /// The file this one is handled with ([`Access::With`]).
    pub fn with(&self) -> Option<&'static str> {
        match self {
            Access::With(name) => Some(name),
            _ => None,
        }
    }
}

/// How `hostd import` sends a run file to InfluxDB.
#[derive(Clone, Copy)]
pub enum Import {
    /// It does not (records no dashboard shows, or not records at all).
    No,
    /// One point of `measurement` per record, with the record's columns (its
    /// `column_table!`): tags as tags, fields as fields, the time column as the timestamp.
    /// `rows` hands each of a run's records to its callback and says whether the run has
    /// any (false: the file is absent).
    Rows {
        /// The InfluxDB measurement.
        measurement: &'static str,
        /// The run's records of this file.
        rows: RowsFn,
    },
    /// By its own function in `hostd_influx::schema`: its records are more than one point
    /// each (`events.json`'s four measurements, `files.csv`'s running totals).
    Mapped,
    /// Its records go out with the named file's points (the probe's figures in
    /// `files-probe.csv` on `files.csv`'s).
    With(&'static str),
}

/// Every file of a run directory that holds records, in the order `hostd import` sends them.
pub const RUN_FILES: &[RunFile] = &[
    RunFile {
        name: crate::manifest::FILE_NAME,
        version: Version::InFile(crate::manifest::FORMAT_VERSION),
        read: Access::By(reads::manifest),
        write: Access::No,
        import: Import::Mapped,
    },
    RunFile {
        name: crate::files::FILE_NAME,
        version: Version::InManifest(crate::files::FORMAT_VERSION),
        read: Access::By(reads::files),
        write: Access::By(writes::files),
        import: Import::Mapped,
    },
    RunFile {
        name: crate::files::CORRUPT_FILE_NAME,
        version: Version::InManifest(crate::files::FORMAT_VERSION),
        read: Access::With(crate::files::FILE_NAME),
        write: Access::With(crate::files::FILE_NAME),
        import: Import::No,
    },
    RunFile {
        name: crate::files_probe::FILE_NAME,
        version: Version::InManifest(crate::files_probe::FORMAT_VERSION),
        read: Access::With(crate::files::FILE_NAME),
        write: Access::By(writes::files_probe),
        import: Import::With(crate::files::FILE_NAME),
    },
    RunFile {
        name: crate::intervals::FILE_NAME,
        version: Version::InManifest(crate::intervals::FORMAT_VERSION),
        read: Access::No,
        write: Access::No,
        import: Import::Mapped,
    },
    RunFile {
        name: crate::counters::FILE_NAME,
        version: Version::InManifest(crate::counters::FORMAT_VERSION),
        read: Access::By(reads::counters),
        write: Access::By(writes::counters),
        import: Import::No,
    },
    RunFile {
        name: crate::probe::FILE_NAME,
        version: Version::InManifest(crate::probe::FORMAT_VERSION),
        read: Access::By(reads::probe_csv),
        write: Access::No,
        import: Import::Mapped,
    },
    RunFile {
        name: crate::probe_store::SEGMENT_FILES,
        version: Version::InFile(crate::probe_store::FORMAT_VERSION),
        read: Access::By(reads::probe_segments),
        write: Access::No,
        import: Import::With(crate::probe::FILE_NAME),
    },
    RunFile {
        name: crate::agg::FILE_NAME,
        version: Version::InManifest(crate::agg::FORMAT_VERSION),
        read: Access::No,
        write: Access::No,
        import: Import::Mapped,
    },
    RunFile {
        name: crate::probe_levels::LEVEL_FILES,
        version: Version::InFile(crate::probe_levels::FORMAT_VERSION),
        read: Access::With(crate::probe_store::SEGMENT_FILES),
        write: Access::No,
        import: Import::With(crate::agg::FILE_NAME),
    },
    RunFile {
        name: crate::drive_temp::FILE_NAME,
        version: Version::NotRecorded(crate::drive_temp::FORMAT_VERSION),
        read: Access::By(reads::drive_temp),
        write: Access::By(writes::drive_temp),
        import: Import::Rows {
            measurement: "drive_temp",
            rows: rows::drive_temp,
        },
    },
    RunFile {
        name: crate::drive_log::FILE_NAME,
        version: Version::NotRecorded(crate::drive_log::FORMAT_VERSION),
        read: Access::By(reads::drive_log),
        write: Access::By(writes::drive_log),
        import: Import::Rows {
            measurement: "drive_log",
            rows: rows::drive_log,
        },
    },
    RunFile {
        name: crate::latency::FILES_LOG,
        version: Version::Unversioned,
        read: Access::By(reads::latency_files),
        write: Access::No,
        import: Import::No,
    },
    RunFile {
        name: crate::latency::INTERVALS_LOG,
        version: Version::Unversioned,
        read: Access::By(reads::latency_intervals),
        write: Access::No,
        import: Import::No,
    },
    RunFile {
        name: crate::events::FILE_NAME,
        version: Version::InFile(crate::events::FORMAT_VERSION),
        read: Access::No,
        write: Access::No,
        import: Import::Mapped,
    },
    RunFile {
        name: crate::summary::FILE_NAME,
        version: Version::InFile(crate::summary::FORMAT_VERSION),
        read: Access::By(reads::gate_waits),
        write: Access::No,
        import: Import::Mapped,
    },
    RunFile {
        name: crate::probe_link::FILE_NAME,
        version: Version::Unversioned,
        read: Access::By(reads::probe_link),
        write: Access::No,
        import: Import::Mapped,
    },
    RunFile {
        name: crate::os_log::FILE_NAME,
        version: Version::Unversioned,
        read: Access::By(reads::os_log),
        write: Access::By(writes::os_log),
        import: Import::Mapped,
    },
    RunFile {
        name: crate::run_event::FILE_NAME,
        version: Version::Unversioned,
        read: Access::No,
        write: Access::No,
        import: Import::No,
    },
    RunFile {
        name: crate::certify::JOURNAL_FILE_NAME,
        version: Version::InFile(crate::certify::FORMAT_VERSION),
        read: Access::No,
        write: Access::No,
        import: Import::No,
    },
    RunFile {
        name: crate::certify::VERDICT_FILE_NAME,
        version: Version::InFile(crate::certify::FORMAT_VERSION),
        read: Access::No,
        write: Access::No,
        import: Import::No,
    },
];

/// The registered file named `name`.
pub fn find(name: &str) -> Option<&'static RunFile> {
    RUN_FILES.iter().find(|f| f.name == name)
}

/// Writes every registered file a run's records hold (each file's [`RunFile::write`]).
pub fn write_all(dir: &Path, run: &RunData) -> Result<()> {
    for f in RUN_FILES {
        if let Access::By(write) = f.write {
            write(dir, run)?;
        }
    }
    Ok(())
}

/// The registered files' readers ([`RunFile::read`]).
mod reads {
    use super::Reading;
    use crate::error::Result;
    use crate::run::{probe_series, RunData};

    /// `path` exists.
    fn present(r: &Reading<'_>, name: &str) -> bool {
        r.dir.join(name).exists()
    }

    /// The manifest's facts the analysis reads: notes, tags and starting state, the probed
    /// target, the port's budget and the playback.
    pub(super) fn manifest(r: &Reading<'_>, run: &mut RunData) -> Result<()> {
        if let Some(m) = r.manifest {
            run.probe_target = m.probe_target();
            run.port_budget = m.port_budget();
            run.playback = m.playback();
            run.conditions = m.conditions.clone();
        }
        Ok(())
    }

    /// `files.csv` with `corrupt.csv` and `files-probe.csv` joined; each file's target index
    /// is its target's place in the manifest, as in `hostd run` (`files.csv` has no index:
    /// without a manifest, targets are numbered as they first appear).
    pub(super) fn files(r: &Reading<'_>, run: &mut RunData) -> Result<()> {
        run.files = crate::files::read(r.dir)?;
        if let Some(m) = r.manifest {
            for f in &mut run.files {
                if let Some(i) = m.targets.iter().position(|t| t.label == f.target) {
                    f.target_index = i;
                }
            }
        }
        Ok(())
    }

    pub(super) fn counters(r: &Reading<'_>, run: &mut RunData) -> Result<()> {
        if present(r, crate::counters::FILE_NAME) {
            run.counters = Some(crate::counters::read(r.dir)?);
        }
        Ok(())
    }

    /// The samples of a run written before Parquet storage (only without `probe/`).
    pub(super) fn probe_csv(r: &Reading<'_>, run: &mut RunData) -> Result<()> {
        if !crate::probe_store::exists(r.dir) && present(r, crate::probe::FILE_NAME) {
            let p = crate::probe::read_series(r.dir)?;
            run.probe = (!p.is_empty()).then_some(p);
        }
        Ok(())
    }

    /// The probe series of `probe/` ([`probe_series`]: every sample, or for a long run the
    /// finest summary level that fits).
    pub(super) fn probe_segments(r: &Reading<'_>, run: &mut RunData) -> Result<()> {
        if crate::probe_store::exists(r.dir) {
            let p = probe_series(r.dir)?;
            run.probe = (!p.is_empty()).then_some(p);
        }
        Ok(())
    }

    pub(super) fn drive_temp(r: &Reading<'_>, run: &mut RunData) -> Result<()> {
        if present(r, crate::drive_temp::FILE_NAME) {
            run.drive_temp = Some(crate::drive_temp::read(r.dir)?);
        }
        Ok(())
    }

    pub(super) fn drive_log(r: &Reading<'_>, run: &mut RunData) -> Result<()> {
        if present(r, crate::drive_log::FILE_NAME) {
            run.drive_log = Some(crate::drive_log::read(r.dir)?);
        }
        Ok(())
    }

    pub(super) fn latency_files(r: &Reading<'_>, run: &mut RunData) -> Result<()> {
        run.latency.files = crate::latency::read_log(r.dir, crate::latency::FILES_LOG)?;
        Ok(())
    }

    pub(super) fn latency_intervals(r: &Reading<'_>, run: &mut RunData) -> Result<()> {
        run.latency.intervals = crate::latency::read_log(r.dir, crate::latency::INTERVALS_LOG)?;
        Ok(())
    }

    /// The temperature gate's waits, from the summary's gate section (none without one).
    pub(super) fn gate_waits(r: &Reading<'_>, run: &mut RunData) -> Result<()> {
        run.gate_waits = crate::gate_wait::read(r.dir);
        Ok(())
    }

    /// The port's budget in force at each time: the manifest's, then the changes the probe
    /// reported (none without `probe-link.jsonl`). Read after the manifest.
    pub(super) fn probe_link(r: &Reading<'_>, run: &mut RunData) -> Result<()> {
        let link = if present(r, crate::probe_link::FILE_NAME) {
            crate::probe_link::read(r.dir)?
        } else {
            Vec::new()
        };
        run.budget_timeline =
            crate::port_budget::BudgetTimeline::of_run(run.port_budget.as_ref(), &link);
        Ok(())
    }

    pub(super) fn os_log(r: &Reading<'_>, run: &mut RunData) -> Result<()> {
        if present(r, crate::os_log::FILE_NAME) {
            run.os_log = Some(crate::os_log::read(r.dir)?);
        }
        Ok(())
    }
}

/// The registered files' writers ([`RunFile::write`]).
mod writes {
    use crate::error::Result;
    use crate::run::RunData;
    use std::path::Path;

    /// `files.csv` (and `corrupt.csv`) as `hostd run` streams it: the workload's columns.
    pub(super) fn files(dir: &Path, run: &RunData) -> Result<()> {
        let mut w = crate::files::Writer::create(dir)?;
        run.files.iter().try_for_each(|f| w.write(f))
    }

    /// `files-probe.csv`, when any file has the probe's figures.
    pub(super) fn files_probe(dir: &Path, run: &RunData) -> Result<()> {
        if run.files.iter().any(|f| f.probe.is_some()) {
            crate::files_probe::write(dir, &run.files)?;
        }
        Ok(())
    }

    pub(super) fn counters(dir: &Path, run: &RunData) -> Result<()> {
        let Some(c) = &run.counters else {
            return Ok(());
        };
        let (labels, samples): (Vec<String>, Vec<_>) =
            c.iter().map(|(l, s)| (l.clone(), s.clone())).unzip();
        crate::counters::write(dir, &labels, &samples)
    }

    pub(super) fn drive_temp(dir: &Path, run: &RunData) -> Result<()> {
        let Some(temps) = &run.drive_temp else {
            return Ok(());
        };
        let rows: Vec<_> = super::rows::drive_temp_records(temps).collect();
        crate::drive_temp::write(dir, &rows)
    }

    pub(super) fn drive_log(dir: &Path, run: &RunData) -> Result<()> {
        let Some(logs) = &run.drive_log else {
            return Ok(());
        };
        let rows: Vec<_> = logs.values().flatten().cloned().collect();
        crate::drive_log::write(dir, &rows)
    }

    pub(super) fn os_log(dir: &Path, run: &RunData) -> Result<()> {
        match &run.os_log {
            Some(log) => crate::os_log::write(dir, log),
            None => Ok(()),
        }
    }
}

/// The records of the files imported one point per record ([`Import::Rows`]).
mod rows {
    use crate::columns::ColumnRow;
    use crate::drive_temp::{DriveTempRecord, DriveTemps};
    use crate::run::RunData;

    /// The readings of `temps` as the rows of `drive_temp.csv`, target by target.
    pub(super) fn drive_temp_records(
        temps: &DriveTemps,
    ) -> impl Iterator<Item = DriveTempRecord> + '_ {
        temps.iter().flat_map(|(target, readings)| {
            readings
                .iter()
                .map(|&(time_ns, temperature_c)| DriveTempRecord {
                    time_ns,
                    target: target.clone(),
                    temperature_c,
                })
        })
    }

    pub(super) fn drive_temp(run: &RunData, each: &mut dyn FnMut(&dyn ColumnRow)) -> bool {
        let Some(temps) = &run.drive_temp else {
            return false;
        };
        drive_temp_records(temps).for_each(|r| each(&r));
        true
    }

    pub(super) fn drive_log(run: &RunData, each: &mut dyn FnMut(&dyn ColumnRow)) -> bool {
        let Some(logs) = &run.drive_log else {
            return false;
        };
        logs.values().flatten().for_each(|r| each(r));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_registered_once() {
        let mut names: Vec<&str> = RUN_FILES.iter().map(|f| f.name).collect();
        names.sort();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "a file registered twice");
    }

    /// Every file with a writer reads back, through its reader, as the records it was
    /// written from.
    #[test]
    fn every_file_with_a_writer_reads_back_as_written() {
        use crate::counters::CounterRecord;
        use crate::drive_log::DriveLogRecord;
        use crate::os_log::{OsLogKind, OsLogRecord};
        let d = tempfile::tempdir().unwrap();
        let mut probed =
            crate::FileRecord::new("a", "write", 0, 1_000_000_000, 2_000_000_000, 1_000_000);
        probed.probe = Some(Box::new(crate::FileProbe {
            probe: "p-1".into(),
            energy_j: Some(1.5),
            ..Default::default()
        }));
        let mut run = RunData {
            files: vec![
                probed,
                crate::FileRecord::new("b", "write", 0, 1_500_000_000, 3_500_000_000, 4_000_000),
            ],
            counters: Some(
                [("a", 7), ("b", 9)]
                    .into_iter()
                    .map(|(l, b)| {
                        let s = (1..4).map(|k| CounterRecord {
                            time_ns: k * 100,
                            bytes: k * b,
                        });
                        (l.to_string(), s.collect())
                    })
                    .collect(),
            ),
            drive_temp: Some([("a".to_string(), vec![(5, 41.0), (9, 42.5)])].into()),
            drive_log: Some(
                [(
                    "b".to_string(),
                    vec![DriveLogRecord {
                        time_ns: 4,
                        target: "b".into(),
                        tmt1_transitions: Some(2),
                        sensors: "1=52;2=47".into(),
                        ..Default::default()
                    }],
                )]
                .into(),
            ),
            os_log: Some(vec![OsLogRecord {
                time_ns: 3,
                kind: OsLogKind::LinkReset,
                target: Some("a".into()),
                device: Some("sdb".into()),
                source: "kernel".into(),
                line: "usb 2-1: reset SuperSpeed USB device".into(),
            }]),
            ..Default::default()
        };
        run.files[1].target_index = 1;
        // What the readers give for the files a run without them has.
        run.budget_timeline = crate::port_budget::BudgetTimeline::of_run(None, &[]);
        write_all(d.path(), &run).unwrap();
        let back = RunData::read(d.path()).unwrap();
        assert_eq!(back, run);
    }

    /// A file read or written "with" another names a registered file that is read or
    /// written by its own function.
    #[test]
    fn a_file_handled_with_another_names_one_that_is_handled_by_its_own_function() {
        for f in RUN_FILES {
            let by_own_read = |g: &RunFile| matches!(g.read, Access::By(_));
            let by_own_write = |g: &RunFile| matches!(g.write, Access::By(_));
            for (what, with, by_own) in [
                (
                    "read",
                    f.read.with(),
                    &by_own_read as &dyn Fn(&RunFile) -> bool,
                ),
                ("write", f.write.with(), &by_own_write),
            ] {
                if let Some(other) = with {
                    let g = find(other).unwrap_or_else(|| panic!("{} {what} with {other}", f.name));
                    assert!(by_own(g), "{} is {what} with {other}, which is not", f.name);
                }
            }
            if let Import::With(other) = f.import {
                let g = find(other).unwrap_or_else(|| panic!("{} imported with {other}", f.name));
                assert!(matches!(g.import, Import::Mapped | Import::Rows { .. }));
            }
        }
    }
}
