//! `files-probe.csv`: the probe's figures for each file of a probed run ([`FileProbe`]),
//! one row per file keyed by target, phase and index. `files.csv` is streamed as files
//! complete and holds the workload's columns only; these figures are final only once the
//! probe record has passed the file (its energy share waits for every file overlapping
//! it), so the probe part appends them as they become final ([`Writer`]), a few seconds
//! behind `files.csv`, and the rows of the files it has no figures for at the run's end.
//! Rows are in the order their figures settled, not the files' order. A run killed at any
//! moment keeps every row written. [`crate::files::read`] joins the two. Run directories
//! written before this file have the same columns at the end of `files.csv` instead, and
//! still read. Columns: docs/run-directory.md.

use crate::columns::Columns as _;
use crate::csvio::{slurp, Table};
use crate::error::{RecordError, Result};
use crate::files::{FileProbe, FileRecord, PROBE_COLUMNS};
use std::collections::HashMap;
use std::path::Path;

/// File name in the run directory.
pub const FILE_NAME: &str = "files-probe.csv";
/// Newest format of `files-probe.csv` this build reads and the one it writes.
pub const FORMAT_VERSION: u32 = 1;
/// The columns naming a row's file in `files.csv`; [`PROBE_COLUMNS`] follow.
pub const KEY_COLUMNS: [&str; 3] = ["target", "phase", "index"];

/// Which file a row belongs to: (target, phase, index), as in `files.csv`.
pub type FileKey = (String, String, u32);

/// Writes `dir/files-probe.csv` at once, atomically: one row for every record with probe
/// figures, in the records' order.
pub fn write(dir: &Path, files: &[FileRecord]) -> Result<()> {
    let path = dir.join(FILE_NAME);
    let err = |e: csv::Error| RecordError::write(&path, std::io::Error::other(e));
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    w.write_record(KEY_COLUMNS.iter().chain(PROBE_COLUMNS.iter()))
        .map_err(err)?;
    for r in files {
        let Some(p) = r.probe.as_deref() else {
            continue;
        };
        let mut row = vec![r.target.clone(), r.phase.clone(), r.index.to_string()];
        row.extend(FileProbe::csv_cells(Some(p)));
        w.write_record(&row).map_err(err)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| RecordError::write(&path, std::io::Error::other(e.to_string())))?;
    crate::csvio::write_atomic(&path, &bytes)
}

/// Appends rows to `dir/files-probe.csv` as they come: the file (and its header) is created
/// by the first call, and each call's rows go to the file in one write of whole lines, so a
/// run killed at any moment leaves a file that reads.
#[derive(Debug)]
pub struct Writer {
    path: std::path::PathBuf,
    file: Option<std::fs::File>,
    written: u64,
    /// A write failed part way (e.g. disk full): later rows would follow half a line.
    broken: bool,
}

impl Writer {
    /// A writer of `dir/files-probe.csv`; nothing is created before the first
    /// [`Writer::write`].
    pub fn new(dir: &Path) -> Writer {
        Writer {
            path: dir.join(FILE_NAME),
            file: None,
            written: 0,
            broken: false,
        }
    }

    /// Appends one row per (target, phase, index, figures), creating the file with its
    /// header on the first call (even with no rows). After a failed write every later one
    /// fails too, so the file never holds a row after a broken line.
    pub fn write<'a>(
        &mut self,
        rows: impl IntoIterator<Item = (&'a str, &'a str, u32, &'a FileProbe)>,
    ) -> Result<()> {
        use std::io::Write as _;
        let path = &self.path;
        if self.broken {
            return Err(RecordError::write(
                path,
                std::io::Error::other("an earlier write to this file failed"),
            ));
        }
        let err = |e: csv::Error| RecordError::write(path, std::io::Error::other(e));
        let mut w = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(Vec::new());
        if self.file.is_none() {
            w.write_record(KEY_COLUMNS.iter().chain(PROBE_COLUMNS.iter()))
                .map_err(err)?;
        }
        let mut n = 0;
        for (target, phase, index, p) in rows {
            let mut row = vec![target.to_string(), phase.to_string(), index.to_string()];
            row.extend(FileProbe::csv_cells(Some(p)));
            w.write_record(&row).map_err(err)?;
            n += 1;
        }
        let bytes = w
            .into_inner()
            .map_err(|e| RecordError::write(path, std::io::Error::other(e.to_string())))?;
        if self.file.is_none() {
            let f = std::fs::File::create(path).map_err(|e| RecordError::write(path, e))?;
            self.file = Some(f);
        }
        let file = self.file.as_mut().expect("opened above");
        if let Err(e) = file.write_all(&bytes) {
            self.broken = true;
            return Err(RecordError::write(&self.path, e));
        }
        self.written += n;
        Ok(())
    }

    /// Rows written so far.
    pub fn written(&self) -> u64 {
        self.written
    }
}

/// Parses the bytes of a `files-probe.csv` (`path` names it in errors). Required columns:
/// [`KEY_COLUMNS`] and `probe`; a missing figure column leaves that figure empty, and a row
/// with an empty `probe` has no figures.
pub fn parse(path: &Path, buf: &[u8]) -> Result<HashMap<FileKey, FileProbe>> {
    let mut t = Table::new(path, buf)?;
    let key: Vec<usize> = KEY_COLUMNS
        .iter()
        .map(|c| t.required(c))
        .collect::<Result<_>>()?;
    t.required(PROBE_COLUMNS[0])?;
    let probe = t.positions(PROBE_COLUMNS);
    let mut out = HashMap::new();
    while let Some(row) = t.next_row()? {
        if row
            .cell(probe[0], PROBE_COLUMNS[0])
            .map_or(Ok(""), |c| c.text())?
            .is_empty()
        {
            continue;
        }
        let mut p = FileProbe::default();
        row.read(&mut p, &probe)?;
        let cell = |k: usize| {
            row.cell(Some(key[k]), KEY_COLUMNS[k])
                .expect("a column given")
        };
        let k = (
            cell(0).text()?.to_string(),
            cell(1).text()?.to_string(),
            cell(2).int()?,
        );
        out.insert(k, p);
    }
    Ok(out)
}

/// Gives every record the figures of its key (replacing any it had); records without a
/// row keep theirs.
pub fn join(files: &mut [FileRecord], figures: &HashMap<FileKey, FileProbe>) {
    for r in files {
        if let Some(p) = figures.get(&(r.target.clone(), r.phase.clone(), r.index)) {
            r.probe = Some(Box::new(p.clone()));
        }
    }
}

/// Joins `dir/files-probe.csv`, when present, onto `files` (read from `dir/files.csv`),
/// refusing a newer format. Without it (an unprobed run, one written before this file, or
/// one stopped before its end) the records stay as they are.
pub fn read_into(dir: &Path, files: &mut [FileRecord]) -> Result<()> {
    let path = dir.join(FILE_NAME);
    if !path.exists() {
        return Ok(());
    }
    crate::version::check_csv(dir, FILE_NAME, FORMAT_VERSION)?;
    join(files, &parse(&path, &slurp(&path)?)?);
    Ok(())
}

/// Joins `dir/files-probe.csv` onto `files` as [`read_into`] does, for the run that is
/// writing it: the format is this build's, so the manifest is not read for it.
pub fn read_streamed(dir: &Path, files: &mut [FileRecord]) -> Result<()> {
    let path = dir.join(FILE_NAME);
    if path.exists() {
        join(files, &parse(&path, &slurp(&path)?)?);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csvio::testing::{assert_newer_format_refused, assert_read_error};
    use crate::files::NO_PROBE;

    fn probed(target: &str, index: u32, energy: Option<f64>) -> FileRecord {
        let mut r = FileRecord::new(target, "write", index, 10, 20, 100);
        r.probe = Some(Box::new(FileProbe {
            probe: if target == "t0" { "sim-0001" } else { NO_PROBE }.into(),
            energy_j: energy,
            temp_max_c: energy.map(|e| 30.0 + e),
            ..FileProbe::default()
        }));
        r
    }

    #[test]
    fn the_writer_appends_rows_as_they_come_under_one_header() {
        let d = tempfile::tempdir().unwrap();
        let files = [
            probed("t0", 0, Some(1.25)),
            probed("t0", 1, Some(2.5)),
            probed("t1", 0, None),
        ];
        fn row(r: &FileRecord) -> (&str, &str, u32, &FileProbe) {
            let p = r.probe.as_deref().unwrap();
            (&r.target, &r.phase, r.index, p)
        }
        let mut w = Writer::new(d.path());
        assert!(!d.path().join(FILE_NAME).exists(), "created before any row");
        w.write([row(&files[1])]).unwrap();
        // Readable between calls: what a killed run leaves.
        let mut read = vec![FileRecord::new("t0", "write", 1, 10, 20, 100)];
        read_into(d.path(), &mut read).unwrap();
        assert_eq!(read[0].probe.as_ref().unwrap().energy_j, Some(2.5));
        w.write([row(&files[0]), row(&files[2])]).unwrap();
        w.write([]).unwrap();
        assert_eq!(w.written(), 3);
        let text = std::fs::read_to_string(d.path().join(FILE_NAME)).unwrap();
        assert_eq!(text.matches("target,phase,index").count(), 1, "{text}");
        let mut all: Vec<FileRecord> = files
            .iter()
            .map(|r| FileRecord::new(&r.target, &r.phase, r.index, 10, 20, 100))
            .collect();
        read_into(d.path(), &mut all).unwrap();
        for (got, want) in all.iter().zip(&files) {
            assert_eq!(got.probe, want.probe);
        }
    }

    #[test]
    fn figures_round_trip_and_join_by_key_whatever_the_order() {
        let d = tempfile::tempdir().unwrap();
        let files = vec![
            probed("t0", 0, Some(1.25)),
            probed("t0", 1, None),
            probed("t1", 0, None),
            FileRecord::new("t1", "write", 1, 20, 30, 100),
        ];
        write(d.path(), &files).unwrap();
        let text = std::fs::read_to_string(d.path().join(FILE_NAME)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "target,phase,index,".to_string() + &PROBE_COLUMNS.join(",")
        );
        assert!(
            lines[1].starts_with("t0,write,0,sim-0001,1.250000,,"),
            "{text}"
        );
        assert_eq!(
            lines.len(),
            4,
            "no row for a record without figures: {text}"
        );

        let mut back: Vec<FileRecord> = files.iter().rev().cloned().collect();
        back.iter_mut().for_each(|r| r.probe = None);
        read_into(d.path(), &mut back).unwrap();
        back.reverse();
        assert_eq!(back, files);
    }

    #[test]
    fn without_the_file_the_records_keep_what_files_csv_said() {
        let d = tempfile::tempdir().unwrap();
        let mut files = vec![probed("t0", 0, Some(2.0))];
        let want = files.clone();
        read_into(d.path(), &mut files).unwrap();
        assert_eq!(files, want);
    }

    #[test]
    fn a_bad_cell_names_file_line_and_column() {
        assert_read_error(
            FILE_NAME,
            "target,phase,index,probe,energy_j\nA,write,0,P,1.5\nA,write,1,P,lots\n",
            |dir| read_into(dir, &mut []),
            &["files-probe.csv: line 3, column `energy_j`", "\"lots\""],
        );
        assert_read_error(
            FILE_NAME,
            "target,phase,probe\nA,write,P\n",
            |dir| read_into(dir, &mut []),
            &["missing required column `index`"],
        );
    }

    #[test]
    fn a_newer_format_recorded_in_the_manifest_is_refused() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), &[probed("t0", 0, Some(1.0))]).unwrap();
        assert_newer_format_refused(d.path(), FILE_NAME, FORMAT_VERSION, |dir| {
            read_into(dir, &mut [])
        });
    }
}
