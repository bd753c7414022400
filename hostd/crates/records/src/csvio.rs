//! Shared CSV machinery: a reader that finds columns by name (extra columns to the right
//! are accepted) and knows each record's 1-based file line, typed cell access whose errors
//! name file, line and column, and a buffered writer that maps I/O errors to the file.

use crate::columns::{Cell, Columns, ReadCells};
use crate::error::{RecordError, Result};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// Reads a whole file into memory.
pub(crate) fn slurp(path: &Path) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    File::open(path)
        .and_then(|mut f| f.read_to_end(&mut buf))
        .map_err(|e| RecordError::io(path, e))?;
    Ok(buf)
}

/// Reads the whole of `dir/name`, refusing a format newer than `version` (recorded in the
/// manifest) before it, and hands its path and bytes to `parse`.
pub(crate) fn read_file<R>(
    dir: &Path,
    name: &str,
    version: u32,
    parse: impl FnOnce(&Path, &[u8]) -> Result<R>,
) -> Result<R> {
    crate::version::check_csv(dir, name, version)?;
    let path = dir.join(name);
    let buf = slurp(&path)?;
    parse(&path, &buf)
}

/// Reads `dir/name` (refusing a format newer than `version`) as rows of `R` and hands its
/// table and the positions of `R`'s columns ([`Table::columns_of`]) to `read`.
pub(crate) fn read_table<R: Columns, T>(
    dir: &Path,
    name: &str,
    version: u32,
    read: impl FnOnce(&mut Table<'_>, &[Option<usize>]) -> Result<T>,
) -> Result<T> {
    crate::version::check_csv(dir, name, version)?;
    read_table_as_written::<R, T>(dir, name, read)
}

/// As [`read_table`], without asking `manifest.json` for the format: for a file this
/// build's `hostd run` has just streamed, read back at the run's end.
pub(crate) fn read_table_as_written<R: Columns, T>(
    dir: &Path,
    name: &str,
    read: impl FnOnce(&mut Table<'_>, &[Option<usize>]) -> Result<T>,
) -> Result<T> {
    let path = dir.join(name);
    let buf = slurp(&path)?;
    let mut t = Table::new(&path, &buf)?;
    let cols = t.columns_of::<R>()?;
    read(&mut t, &cols)
}

/// A CSV file being read: header by name, records with their file lines.
pub(crate) struct Table<'a> {
    path: &'a Path,
    rdr: csv::Reader<&'a [u8]>,
    map: HashMap<String, usize>,
    header: String,
    lines: LineCounter<'a>,
    rec: csv::ByteRecord,
}

impl<'a> Table<'a> {
    /// The file being read.
    pub(crate) fn path(&self) -> &Path {
        self.path
    }

    /// Opens `buf` (the bytes of `path`) and reads its header.
    pub(crate) fn new(path: &'a Path, buf: &'a [u8]) -> Result<Self> {
        let mut rdr = reader(buf);
        let names: Vec<String> = rdr
            .byte_headers()
            .map_err(|e| csv_error(path, e))?
            .iter()
            .map(|h| String::from_utf8_lossy(h).trim().to_string())
            .collect();
        let map = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        Ok(Table {
            path,
            rdr,
            map,
            header: names.join(","),
            lines: LineCounter::new(buf),
            rec: csv::ByteRecord::new(),
        })
    }

    /// Position of a column the file must have.
    pub(crate) fn required(&self, name: &str) -> Result<usize> {
        self.map
            .get(name)
            .copied()
            .ok_or_else(|| RecordError::MissingColumn {
                path: self.path.to_path_buf(),
                column: name.to_string(),
                header: self.header.clone(),
            })
    }

    /// Positions of a record's columns ([`Columns::NAMES`], None where absent), refusing a
    /// file without its required ones.
    pub(crate) fn columns_of<R: Columns>(&self) -> Result<Vec<Option<usize>>> {
        for name in R::REQUIRED {
            self.required(name)?;
        }
        Ok(self.positions(R::NAMES))
    }

    /// Positions of `names` (None where absent).
    pub(crate) fn positions(&self, names: &[&str]) -> Vec<Option<usize>> {
        names.iter().map(|c| self.optional(c)).collect()
    }

    /// Position of a column the file may have.
    pub(crate) fn optional(&self, name: &str) -> Option<usize> {
        self.map.get(name).copied()
    }

    /// Reads every remaining row into a fresh `R` (`cols`: from [`Table::columns_of`]) and
    /// hands it and its 1-based file line to `each`.
    pub(crate) fn each_record<R: Default + ReadCells>(
        &mut self,
        cols: &[Option<usize>],
        mut each: impl FnMut(R, u64) -> Result<()>,
    ) -> Result<()> {
        while let Some(row) = self.next_row()? {
            let mut r = R::default();
            row.read(&mut r, cols)?;
            let line = row.line;
            each(r, line)?;
        }
        Ok(())
    }

    /// The next record, or None at the end.
    pub(crate) fn next_row(&mut self) -> Result<Option<Row<'_>>> {
        let more = self
            .rdr
            .read_byte_record(&mut self.rec)
            .map_err(|e| csv_error(self.path, e))?;
        if !more {
            return Ok(None);
        }
        let line = self.lines.line_of(&self.rec);
        Ok(Some(Row {
            path: self.path,
            line,
            rec: &self.rec,
        }))
    }
}

/// One CSV record and where it is.
pub(crate) struct Row<'a> {
    path: &'a Path,
    /// 1-based file line.
    pub(crate) line: u64,
    rec: &'a csv::ByteRecord,
}

impl<'a> Row<'a> {
    /// The cell of column `col` (None when the file has no such column), empty when the row
    /// is short.
    pub(crate) fn cell(&self, col: Option<usize>, name: &'static str) -> Option<Cell<'a>> {
        let raw: &'a [u8] = col.map(|c| self.rec.get(c).unwrap_or(b""))?;
        Some(Cell {
            path: self.path,
            line: self.line,
            name,
            raw,
        })
    }

    /// Sets `r` from the cells of this row (`cols`: positions of its columns, from
    /// [`Table::columns_of`]).
    pub(crate) fn read<R: ReadCells>(&self, r: &mut R, cols: &[Option<usize>]) -> Result<()> {
        r.read_cells(|k, name| self.cell(cols[k], name))
    }

    /// The error for a bad cell of this row.
    pub(crate) fn bad(&self, column: &str, value: &str, message: &str) -> RecordError {
        bad_value(self.path, self.line, column, value.as_bytes(), message)
    }
}

pub(crate) fn bad_value(
    path: &Path,
    line: u64,
    column: &str,
    value: &[u8],
    message: &str,
) -> RecordError {
    RecordError::BadValue {
        path: path.to_path_buf(),
        line,
        column: column.to_string(),
        value: String::from_utf8_lossy(value).trim().to_string(),
        message: message.to_string(),
    }
}

/// 1-based file line of each record, counted from the record's byte offset (the CSV
/// reader's own line count skips blank lines).
struct LineCounter<'a> {
    buf: &'a [u8],
    offset: usize,
    line: u64,
}

impl<'a> LineCounter<'a> {
    fn new(buf: &'a [u8]) -> Self {
        LineCounter {
            buf,
            offset: 0,
            line: 1,
        }
    }

    fn line_of(&mut self, rec: &csv::ByteRecord) -> u64 {
        let mut to = rec
            .position()
            .map_or(self.offset, |p| p.byte() as usize)
            .min(self.buf.len());
        // The position may point at blank lines the reader skipped before the record.
        while to < self.buf.len() && (self.buf[to] == b'\n' || self.buf[to] == b'\r') {
            to += 1;
        }
        if to > self.offset {
            self.line += self.buf[self.offset..to]
                .iter()
                .filter(|&&b| b == b'\n')
                .count() as u64;
            self.offset = to;
        }
        self.line
    }
}

pub(crate) fn reader(buf: &[u8]) -> csv::Reader<&[u8]> {
    csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_reader(buf)
}

pub(crate) fn csv_error(path: &Path, e: csv::Error) -> RecordError {
    RecordError::Csv {
        path: path.to_path_buf(),
        line: e.position().map_or(0, |p| p.line()),
        message: e.to_string(),
    }
}

/// A CSV file being written: quoted as needed (a label with a comma stays one cell),
/// flushed on request so an interrupted run keeps its rows.
pub(crate) struct CsvOut {
    path: PathBuf,
    w: csv::Writer<BufWriter<File>>,
}

impl CsvOut {
    /// Creates `path` (replacing it) and writes the header.
    pub(crate) fn create(path: &Path, header: &[&str]) -> Result<Self> {
        let file = File::create(path).map_err(|e| RecordError::write(path, e))?;
        let mut out = CsvOut {
            path: path.to_path_buf(),
            w: csv::WriterBuilder::new()
                .has_headers(false)
                .from_writer(BufWriter::new(file)),
        };
        out.row(header)?;
        Ok(out)
    }

    /// Writes one record.
    pub(crate) fn row<I, T>(&mut self, cells: I) -> Result<()>
    where
        I: IntoIterator<Item = T>,
        T: AsRef<[u8]>,
    {
        self.w
            .write_record(cells)
            .map_err(|e| RecordError::write(&self.path, std::io::Error::other(e)))
    }

    /// Pushes buffered rows to the file.
    pub(crate) fn flush(&mut self) -> Result<()> {
        self.w
            .flush()
            .map_err(|e| RecordError::write(&self.path, e))
    }
}

/// Writes `bytes` to `path` atomically: a hidden temporary file in the same directory,
/// synced, then a rename, so a reader never sees half a file and a crash leaves the old
/// file or the new one. A replaced file keeps its mode. The one atomic writer of the
/// project (run-directory files, `report.html`, InfluxDB spool batches).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    let write = || -> std::io::Result<()> {
        let mut f = File::create(&tmp)?;
        if let Ok(old) = std::fs::metadata(path) {
            f.set_permissions(old.permissions())?;
        }
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        RecordError::write(path, e)
    })
}

/// Streams records of one type to a CSV file, one line each (buffered; `flush` at the end
/// or a checkpoint): `probe.csv` ([`crate::probe::Writer`]) and `probe_agg.csv`
/// ([`crate::agg::Writer`]). The header is written at once and the buffer only ever goes
/// to the file whole, so the file always ends at the end of a line: a run killed at any
/// moment leaves a file that reads, with every line written before the last flush.
pub struct LineWriter<T> {
    path: PathBuf,
    file: File,
    /// Whole lines not yet in the file.
    pending: String,
    /// How many bytes `pending` holds before it goes to the file.
    capacity: usize,
    written: u64,
    format: fn(&T, &mut String),
}

impl<T> LineWriter<T> {
    /// Creates `path` with `header` (`capacity`: write buffer, bytes); `format` appends a
    /// record's line.
    pub(crate) fn open(
        path: PathBuf,
        header: &str,
        capacity: usize,
        format: fn(&T, &mut String),
    ) -> Result<Self> {
        let mut file = File::create(&path).map_err(|e| RecordError::write(&path, e))?;
        writeln!(file, "{header}").map_err(|e| RecordError::write(&path, e))?;
        Ok(LineWriter {
            path,
            file,
            pending: String::with_capacity(capacity + capacity / 4),
            capacity,
            written: 0,
            format,
        })
    }

    /// Appends records (to the file once the buffer is full).
    pub fn write(&mut self, rows: &[T]) -> Result<()> {
        for r in rows {
            (self.format)(r, &mut self.pending);
        }
        self.written += rows.len() as u64;
        if self.pending.len() >= self.capacity {
            self.flush()?;
        }
        Ok(())
    }

    /// Records written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Pushes buffered records to the file, in one write of whole lines.
    pub fn flush(&mut self) -> Result<()> {
        if !self.pending.is_empty() {
            self.file
                .write_all(self.pending.as_bytes())
                .map_err(|e| RecordError::write(&self.path, e))?;
            self.pending.clear();
        }
        Ok(())
    }
}

impl<T> Drop for LineWriter<T> {
    /// Writes what is left, as the buffered writer it replaces did (an error here has no
    /// one to go to: call [`LineWriter::flush`] to see it).
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// What every CSV record file's tests check the same way, one body each: the error a reader
/// gives on a given file, and the refusal of a newer format recorded in the manifest.
#[cfg(test)]
pub(crate) mod testing {
    use crate::error::{RecordError, Result};
    use std::path::Path;

    /// Asserts that `read` fails on a run directory holding only `name` with `text`, with an
    /// error (as the user reads it) that contains every one of `pieces`.
    pub(crate) fn assert_read_error<T: std::fmt::Debug>(
        name: &str,
        text: &str,
        read: impl FnOnce(&Path) -> Result<T>,
        pieces: &[&str],
    ) {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join(name), text).unwrap();
        let e = read(d.path()).unwrap_err().to_string();
        for p in pieces {
            assert!(e.contains(p), "{p:?} not in: {e}");
        }
    }

    /// Records in `dir`'s manifest that `name` is in format 99 and asserts that `read`
    /// refuses it, naming the file and both versions.
    pub(crate) fn assert_newer_format_refused<T: std::fmt::Debug>(
        dir: &Path,
        name: &str,
        supported: u32,
        read: impl FnOnce(&Path) -> Result<T>,
    ) {
        std::fs::write(
            dir.join("manifest.json"),
            format!(r#"{{"format_version": 1, "formats": {{"{name}": 99}}}}"#),
        )
        .unwrap();
        let e = read(dir).unwrap_err();
        assert!(
            matches!(
                e,
                RecordError::NewerFormat { found: 99, supported: s, .. } if s == supported
            ),
            "{e}"
        );
        assert!(
            e.to_string()
                .contains(&format!("{name} is in format version 99")),
            "{e}"
        );
    }
}

#[cfg(test)]
#[cfg(unix)] // mode bits
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn write_atomic_replaces_the_file_keeps_its_mode_and_leaves_nothing_else() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("summary.json");
        write_atomic(&p, b"one").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_line_writers_file_ends_at_a_line_end_whenever_it_is_read() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("n.csv");
        let line = |n: &u32, out: &mut String| out.push_str(&format!("{n},{}\n", n * 1000));
        let mut w = LineWriter::open(path.clone(), "n,k", 50, line).unwrap();
        let on_disk = || std::fs::read_to_string(&path).unwrap();
        assert_eq!(on_disk(), "n,k\n", "the header at once");
        let mut all = "n,k\n".to_string();
        for n in 0..40u32 {
            w.write(&[n, n + 100]).unwrap();
            line(&n, &mut all);
            line(&(n + 100), &mut all);
            let now = on_disk();
            assert!(now.ends_with('\n') && all.starts_with(&now), "{now:?}");
        }
        assert!(
            on_disk().len() > all.len() - 60,
            "written as the buffer fills"
        );
        w.flush().unwrap();
        assert_eq!(on_disk(), all);
        assert_eq!(w.written(), 80);
        w.write(&[7]).unwrap();
        drop(w);
        assert!(
            on_disk().ends_with("\n7,7000\n"),
            "dropping writes the rest"
        );
    }
}
