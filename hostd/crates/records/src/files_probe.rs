//! `files-probe.csv`: the probe's figures for each file of a probed run ([`FileProbe`]),
//! one row per file keyed by target, phase and index. `files.csv` is streamed as files
//! complete and holds the workload's columns only, so a run killed at any moment keeps its
//! finished files; these figures need the whole probe record, so the probe part writes
//! them once, at the end. [`crate::files::read`] joins the two. Run directories written
//! before this file have the same columns at the end of `files.csv` instead, and still
//! read. Columns: docs/run-directory.md.

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
