//! The run files of one point per record (`Import::Rows` in the run-file registry,
//! `hostd_records::run_files`): the record's columns as the point's tags and fields, its
//! time column as the timestamp. `hostd import` reads them through the file's registered
//! reader; the InfluxDB part pushes the same records from memory at a run's end.

use super::RunTags;
use crate::Point;
use hostd_records::columns::{ColumnRow, Role, Value};
use hostd_records::run_files::{Access, Import, Reading, RunFile};
use hostd_records::{Manifest, RunData};
use std::path::Path;

/// The point of `measurement` of one record: its tag columns as tags, its field columns as
/// fields of their value's type (whole numbers as integers, non-finite numbers and empty
/// cells left out), its time column as the timestamp.
pub fn row_point(measurement: &str, tags: &RunTags, row: &dyn ColumnRow) -> Point {
    let mut p = tags.apply(Point::new(measurement));
    let mut time = None;
    row.visit_row(&mut |name, role, v| match (role, v) {
        (Role::Time, Value::Int(t)) => time = Some(t),
        (Role::Time, Value::Count(t)) => time = Some(t as i64),
        _ => super::add_column(&mut p, name, role, v),
    });
    match time {
        Some(t) => p.timestamp_ns(t),
        None => p,
    }
}

/// The points of the run's records of `file` (an [`Import::Rows`] file); `None` when the
/// run has none (the file is absent) or the file is of another kind.
pub fn run_rows_points(run: &RunData, file: &RunFile, tags: &RunTags) -> Option<Vec<Point>> {
    let Import::Rows { measurement, rows } = file.import else {
        return None;
    };
    let mut pts = Vec::new();
    rows(run, &mut |r| pts.push(row_point(measurement, tags, r))).then_some(pts)
}

/// The points of the run-directory file `file` (an [`Import::Rows`] file), read through its
/// registered reader and handed to `emit`; `None` when the file is absent.
pub fn rows_points(
    dir: &Path,
    manifest: &Manifest,
    file: &RunFile,
    tags: &RunTags,
    mut emit: impl FnMut(&[Point]) -> anyhow::Result<()>,
) -> anyhow::Result<Option<usize>> {
    let mut run = RunData::default();
    if let Access::By(read) = file.read {
        let reading = Reading {
            dir,
            manifest: Some(manifest),
        };
        read(&reading, &mut run)?;
    }
    match run_rows_points(&run, file, tags) {
        Some(pts) => {
            for chunk in pts.chunks(5_000) {
                emit(chunk)?;
            }
            Ok(Some(pts.len()))
        }
        None => Ok(None),
    }
}
