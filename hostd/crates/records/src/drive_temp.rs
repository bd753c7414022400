//! `drive_temp.csv`: the drive's own (SMART/NVMe) temperature about once a second through
//! the run, per target (docs/run-directory.md "Drive").

use crate::columns::{column_table, Columns as _, Value};
use crate::csvio::{read_table, read_table_as_written, CsvOut, Table};
use crate::error::Result;
use crate::row_stream::RowStream;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// File name in the run directory.
pub const FILE_NAME: &str = "drive_temp.csv";
/// Newest format this build reads and the one it writes.
pub const FORMAT_VERSION: u32 = 1;

/// One reading of one target's drive temperature.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DriveTempRecord {
    /// Host Unix ns when smartctl answered.
    pub time_ns: i64,
    /// Target label.
    pub target: String,
    /// Temperature, °C.
    pub temperature_c: f64,
}

column_table! {
    /// Columns, in order.
    pub const COLUMNS for DriveTempRecord {
        "time_ns" (Time, required): |r| Value::Int(r.time_ns), |r, c| r.time_ns = c.int()?;
        "target" (Tag, required): |r| Value::Text(&r.target),
            |r, c| r.target = c.text()?.to_string();
        "temperature_c" (Field, required): |r| Value::Float(r.temperature_c),
            |r, c| r.temperature_c = c.opt_float()?.ok_or_else(|| c.bad("expected a number"))?;
    }
}

/// Per target: (host Unix ns, °C) of the drive's own temperature, in time order.
pub type DriveTemps = BTreeMap<String, Vec<(i64, f64)>>;

/// `dir/drive_temp.csv` written as the readings come (`hostd run`'s poller): created with
/// the first reading, each append whole and at once in the file ([`RowStream`]).
pub type Stream = RowStream<DriveTempRecord>;

/// A [`Stream`] into `dir/drive_temp.csv`.
pub fn stream(dir: &Path) -> Stream {
    RowStream::new(dir.join(FILE_NAME), "readings")
}

/// Writes `dir/drive_temp.csv`, one row per reading.
pub fn write(dir: &Path, rows: &[DriveTempRecord]) -> Result<()> {
    let mut w = CsvOut::create(&dir.join(FILE_NAME), COLUMNS)?;
    for r in rows {
        w.row(DriveTempRecord::csv_cells(Some(r)))?;
    }
    w.flush()
}

/// Reads `dir/drive_temp.csv` per target, (host ns, °C) in time order; refuses a newer
/// format and names the line and column of a bad cell.
pub fn read(dir: &Path) -> Result<DriveTemps> {
    read_table::<DriveTempRecord, _>(dir, FILE_NAME, FORMAT_VERSION, parse)
}

/// Reads back `dir/drive_temp.csv` that this build's `hostd run` has just streamed ([`Stream`]):
/// as [`read`], without asking `manifest.json` for the format (it is this build's).
pub fn read_streamed(dir: &Path) -> Result<DriveTemps> {
    read_table_as_written::<DriveTempRecord, _>(dir, FILE_NAME, parse)
}

fn parse(t: &mut Table<'_>, cols: &[Option<usize>]) -> Result<DriveTemps> {
    let mut rows = Vec::new();
    t.each_record(cols, |r: DriveTempRecord, _| {
        rows.push(r);
        Ok(())
    })?;
    Ok(group(rows))
}

/// The readings per target, (host ns, °C) in time order: what [`read`] gives for the rows
/// of a file, and what `hostd run` hands its analysis from the readings in memory.
pub fn group(rows: impl IntoIterator<Item = DriveTempRecord>) -> DriveTemps {
    let mut out = DriveTemps::new();
    for r in rows {
        out.entry(r.target)
            .or_default()
            .push((r.time_ns, r.temperature_c));
    }
    for v in out.values_mut() {
        v.sort_by_key(|r| r.0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csvio::testing::{assert_newer_format_refused, assert_read_error};

    #[test]
    fn drive_temperatures_round_trip_per_target_in_time_order() {
        let d = tempfile::tempdir().unwrap();
        let r = |t: i64, target: &str, c: f64| DriveTempRecord {
            time_ns: t,
            target: target.into(),
            temperature_c: c,
        };
        write(
            d.path(),
            &[r(3, "a", 51.0), r(1, "a", 49.0), r(2, "b,1", 40.5)],
        )
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(d.path().join(FILE_NAME)).unwrap(),
            "time_ns,target,temperature_c\n3,a,51\n1,a,49\n2,\"b,1\",40.5\n"
        );
        let back = read(d.path()).unwrap();
        assert_eq!(back["a"], [(1, 49.0), (3, 51.0)]);
        assert_eq!(back["b,1"], [(2, 40.5)]);
        assert_newer_format_refused(d.path(), FILE_NAME, FORMAT_VERSION, read);
    }

    #[test]
    fn a_bad_temperature_names_its_line_and_column() {
        assert_read_error(
            FILE_NAME,
            "time_ns,target,temperature_c\n1,a,hot\n",
            read,
            &["line 2, column `temperature_c`", "hot"],
        );
    }
}
