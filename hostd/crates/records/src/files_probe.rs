//! `files-probe.csv`: the probe's figures for each file of a probed run ([`FileProbe`]),
//! one row per file keyed by target, phase and index. `files.csv` is streamed as files
//! complete and holds the workload's columns only; these figures are final only once the
//! probe record has passed the file (its energy share waits for every file overlapping
//! it), so the probe part appends them as they become final ([`Stream`]), a few seconds
//! behind `files.csv`, and the rows of the files it has no figures for at the run's end.
//! Rows are in the order their figures settled, not the files' order. A run killed at any
//! moment keeps every row written. [`crate::files::read`] joins the two. Run directories
//! written before this file have the same columns at the end of `files.csv` instead, and
//! still read. Columns: docs/run-directory.md.

use crate::columns::{Columns, Role, Value};
use crate::csvio::{slurp, Table};
use crate::error::{RecordError, Result};
use crate::files::{FileProbe, FileRecord, PROBE_COLUMNS};
use crate::row_stream::RowStream;
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

/// The rows of a `files-probe.csv` by key, in file order: a key a run gave to more than one
/// file (two steps of a program with the same name) has a row per file, in the files'
/// time order.
pub type Figures = HashMap<FileKey, Vec<FileProbe>>;

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

/// One row of `files-probe.csv` as a run streams it: a file's key and the probe's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct FigureRow {
    /// Target label.
    pub target: String,
    /// Phase.
    pub phase: String,
    /// Index in the phase.
    pub index: u32,
    /// The figures.
    pub figures: FileProbe,
}

const ALL: usize = KEY_COLUMNS.len() + PROBE_COLUMNS.len();
/// [`KEY_COLUMNS`] then [`PROBE_COLUMNS`]: the header of `files-probe.csv`.
const ROW_COLUMNS: [&str; ALL] = {
    let mut names = [""; ALL];
    let mut i = 0;
    while i < ALL {
        names[i] = if i < KEY_COLUMNS.len() {
            KEY_COLUMNS[i]
        } else {
            PROBE_COLUMNS[i - KEY_COLUMNS.len()]
        };
        i += 1;
    }
    names
};

impl Columns for FigureRow {
    const NAMES: &'static [&'static str] = &ROW_COLUMNS;
    const REQUIRED: &'static [&'static str] = &["target", "phase", "index", "probe"];

    fn visit<'a>(this: Option<&'a Self>, f: &mut impl FnMut(&'static str, Role, Value<'a>)) {
        let key = |v: fn(&'a Self) -> Value<'a>| this.map_or(Value::Absent, v);
        f("target", Role::Tag, key(|r| Value::Text(&r.target)));
        f("phase", Role::Tag, key(|r| Value::Text(&r.phase)));
        f(
            "index",
            Role::Field,
            key(|r| Value::Count(u64::from(r.index))),
        );
        FileProbe::visit(this.map(|r| &r.figures), f);
    }
}

/// Appends [`FigureRow`]s to `files-probe.csv` as they come ([`RowStream`]: the file and its
/// header come with the first rows, whole lines per write, a failed write cut back and
/// what it lost counted).
pub type Stream = RowStream<FigureRow>;

/// The [`Stream`] of `dir/files-probe.csv`.
pub fn stream(dir: &Path) -> Stream {
    RowStream::new(dir.join(FILE_NAME), "files' figures")
}

/// Parses the bytes of a `files-probe.csv` (`path` names it in errors). Required columns:
/// [`KEY_COLUMNS`] and `probe`; a missing figure column leaves that figure empty, and a row
/// with an empty `probe` has no figures.
pub fn parse(path: &Path, buf: &[u8]) -> Result<Figures> {
    let mut t = Table::new(path, buf)?;
    let key: Vec<usize> = KEY_COLUMNS
        .iter()
        .map(|c| t.required(c))
        .collect::<Result<_>>()?;
    t.required(PROBE_COLUMNS[0])?;
    let probe = t.positions(PROBE_COLUMNS);
    let mut out = Figures::new();
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
        out.entry(k).or_default().push(p);
    }
    Ok(out)
}

/// Gives every record the figures of its key (replacing any it had): the records of a key
/// take its rows in order, the first record the first row. Records without a row keep
/// theirs.
pub fn join(files: &mut [FileRecord], figures: &Figures) {
    let mut taken: HashMap<&FileKey, usize> = HashMap::new();
    let mut key = (String::new(), String::new(), 0);
    for r in files {
        key.0.clone_from(&r.target);
        key.1.clone_from(&r.phase);
        key.2 = r.index;
        let Some((k, rows)) = figures.get_key_value(&key) else {
            continue;
        };
        let n = taken.entry(k).or_default();
        if let Some(p) = rows.get(*n) {
            r.probe = Some(Box::new(p.clone()));
            *n += 1;
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

    /// The streamed row of a record with figures.
    fn row(r: &FileRecord) -> FigureRow {
        FigureRow {
            target: r.target.clone(),
            phase: r.phase.clone(),
            index: r.index,
            figures: (**r.probe.as_ref().unwrap()).clone(),
        }
    }

    #[test]
    fn the_stream_appends_rows_as_they_come_under_one_header() {
        let d = tempfile::tempdir().unwrap();
        let files = [
            probed("t0", 0, Some(1.25)),
            probed("t0", 1, Some(2.5)),
            probed("t1", 0, None),
        ];
        let mut w = stream(d.path());
        w.append([]);
        assert!(!d.path().join(FILE_NAME).exists(), "created before any row");
        w.append([&row(&files[1])]);
        // Readable between calls: what a killed run leaves.
        let mut read = vec![FileRecord::new("t0", "write", 1, 10, 20, 100)];
        read_into(d.path(), &mut read).unwrap();
        assert_eq!(read[0].probe.as_ref().unwrap().energy_j, Some(2.5));
        w.append([&row(&files[0]), &row(&files[2])]);
        w.append([]);
        assert_eq!((w.rows(), w.lost(), w.failure()), (3, 0, None));
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
    fn a_key_given_to_two_files_gives_each_its_own_row_in_order() {
        let d = tempfile::tempdir().unwrap();
        // Two steps of a program with the same name: the same key, one after the other.
        let (first, second) = (probed("t0", 0, Some(1.0)), probed("t0", 0, Some(2.0)));
        let mut w = stream(d.path());
        for r in [&first, &second] {
            w.append([&row(r)]);
        }
        let mut files = vec![
            FileRecord::new("t0", "write", 0, 10, 20, 100),
            FileRecord::new("t0", "write", 0, 30, 40, 100),
            FileRecord::new("t0", "write", 0, 50, 60, 100),
        ];
        read_streamed(d.path(), &mut files).unwrap();
        let energy: Vec<_> = files
            .iter()
            .map(|f| f.probe.as_ref().and_then(|p| p.energy_j))
            .collect();
        // The third (killed before its row) has none rather than another file's.
        assert_eq!(energy, [Some(1.0), Some(2.0), None]);
    }

    #[cfg(unix)]
    #[test]
    fn a_full_disk_loses_the_rows_counted_and_keeps_the_caller_going() {
        let d = tempfile::tempdir().unwrap();
        // Every write to the file fails with ENOSPC, as on a full disk.
        std::os::unix::fs::symlink("/dev/full", d.path().join(FILE_NAME)).unwrap();
        let row = row(&probed("t0", 0, Some(1.0)));
        let mut w = stream(d.path());
        w.append([&row, &row]);
        w.append([&row]);
        assert_eq!((w.rows(), w.lost()), (0, 3));
        let failure = w.failure().unwrap();
        assert!(
            failure.contains("files-probe.csv")
                && failure.contains("3 files' figures from then on were not written"),
            "{failure}"
        );
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
