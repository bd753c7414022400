//! Rows of a small CSV table appended as they come, for a run that must neither keep them in
//! memory nor lose them to a kill: `counters.csv` ([`crate::counters::Stream`]),
//! `drive_temp.csv` and `drive_log.csv` ([`crate::drive_temp::Stream`],
//! [`crate::drive_log::Stream`]).
//!
//! The file is created with its header when the first rows come (a run that has none has no
//! file). Each [`RowStream::append`] goes to the file in one write of whole lines, so the
//! file ends at a line end whenever the process is killed. A write that fails (a full disk)
//! does not stop the caller: the file is cut back to its last whole line, later rows are
//! counted as lost, not written, and [`RowStream::failure`] says what was lost.

use crate::columns::Columns;
use crate::error::RecordError;
use std::fs::File;
use std::io::Write as _;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

/// Appends records of type `R` to one CSV file (see the module documentation).
#[derive(Debug)]
pub struct RowStream<R> {
    path: PathBuf,
    /// What a row is, in the words of [`RowStream::failure`] ("readings", "samples").
    what: &'static str,
    file: Option<File>,
    /// Bytes of whole lines in the file.
    len: u64,
    rows: u64,
    lost: u64,
    error: Option<RecordError>,
    kind: PhantomData<fn(&R)>,
}

impl<R: Columns> RowStream<R> {
    /// A stream into `path`, created at the first rows; `what` names a row in
    /// [`RowStream::failure`].
    pub(crate) fn new(path: PathBuf, what: &'static str) -> Self {
        RowStream {
            path,
            what,
            file: None,
            len: 0,
            rows: 0,
            lost: 0,
            error: None,
            kind: PhantomData,
        }
    }

    /// Appends `rows` to the file in one write, the header first when it creates the file.
    /// After a failure the rows are counted as lost ([`RowStream::failure`]).
    pub fn append<'r>(&mut self, rows: impl IntoIterator<Item = &'r R>)
    where
        R: 'r,
    {
        let mut n = 0u64;
        // The lines of this append, quoted as CSV needs (writing to memory cannot fail).
        let mut csv = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(Vec::new());
        if self.file.is_none() && self.error.is_none() {
            let _ = csv.write_record(R::NAMES);
        }
        for r in rows {
            n += 1;
            if self.error.is_none() {
                let _ = csv.write_record(R::csv_cells(Some(r)));
            }
        }
        let lines = csv.into_inner().unwrap_or_default();
        if self.error.is_some() || n == 0 {
            self.lost += n;
            return;
        }
        match self.write(&lines) {
            Ok(()) => {
                self.rows += n;
                self.len += lines.len() as u64;
            }
            Err(e) => {
                // Cut a partly written line off, so the file still reads to its end.
                if let Some(f) = &self.file {
                    let _ = f.set_len(self.len);
                }
                self.error = Some(e);
                self.lost += n;
            }
        }
    }

    fn write(&mut self, lines: &[u8]) -> Result<(), RecordError> {
        let file = match &mut self.file {
            Some(f) => f,
            None => {
                let f = File::create(&self.path).map_err(|e| RecordError::write(&self.path, e))?;
                self.file.insert(f)
            }
        };
        file.write_all(lines)
            .map_err(|e| RecordError::write(&self.path, e))
    }

    /// The file (which exists once [`RowStream::rows`] is above zero).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Rows in the file.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Rows not written because a write had failed.
    pub fn lost(&self) -> u64 {
        self.lost
    }

    /// What went wrong and what was lost, in words; None while every row was written.
    pub fn failure(&self) -> Option<String> {
        let e = self.error.as_ref()?;
        Some(format!(
            "{e}; {} {} from then on were not written (the file keeps the {} before)",
            self.lost, self.what, self.rows
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drive_temp::DriveTempRecord;

    fn reading(time_ns: i64, target: &str) -> DriveTempRecord {
        DriveTempRecord {
            time_ns,
            target: target.into(),
            temperature_c: 40.5,
        }
    }

    #[test]
    fn the_file_comes_with_the_first_rows_and_holds_whole_lines_after_each_append() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("t.csv");
        let mut s = RowStream::<DriveTempRecord>::new(path.clone(), "readings");
        s.append(&[]);
        assert!(!path.exists(), "no rows, no file");
        s.append(&[reading(1, "a,b")]);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "time_ns,target,temperature_c\n1,\"a,b\",40.5\n"
        );
        s.append(&[reading(2, "a"), reading(3, "c")]);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "time_ns,target,temperature_c\n1,\"a,b\",40.5\n2,a,40.5\n3,c,40.5\n"
        );
        assert_eq!((s.rows(), s.lost(), s.failure()), (3, 0, None));
    }

    #[test]
    #[cfg(target_os = "linux")] // /dev/full
    fn a_full_disk_loses_the_later_rows_and_says_how_many() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("t.csv");
        // Every write to /dev/full fails with ENOSPC, as on a full disk.
        std::os::unix::fs::symlink("/dev/full", &path).unwrap();
        let mut s = RowStream::<DriveTempRecord>::new(path.clone(), "readings");
        s.append(&[reading(1, "a")]);
        s.append(&[reading(2, "a"), reading(3, "a")]);
        assert_eq!((s.rows(), s.lost()), (0, 3));
        let said = s.failure().unwrap();
        assert!(
            said.contains("t.csv")
                && said.contains("No space left on device")
                && said.contains("3 readings from then on were not written")
                && said.contains("keeps the 0 before"),
            "{said}"
        );
        // A file that cannot be created at all: the same.
        let mut s = RowStream::<DriveTempRecord>::new(d.path().join("no/such/dir.csv"), "rows");
        s.append(&[reading(1, "a")]);
        assert!(
            s.failure().unwrap().contains("1 rows from then on"),
            "{:?}",
            s.failure()
        );
    }
}
