//! `intervals.csv`: 1 s throughput per target (docs/run-directory.md).

use crate::columns::{column_table, Columns as _, Value};
use crate::csvio::{read_file, CsvOut, Table};
use crate::error::Result;
use crate::summary::{LatencyStats, LATENCY_COLUMNS};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// File name in the run directory.
pub const FILE_NAME: &str = "intervals.csv";
/// Newest format this build reads and the one it writes.
pub const FORMAT_VERSION: u32 = 1;

/// One row of `intervals.csv`: throughput of one target in one interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalRecord {
    /// Target label.
    pub target: String,
    /// Target index (not a column: a reader numbers targets in order of appearance).
    pub target_index: usize,
    /// Interval start, host Unix ns.
    pub start_ns: u64,
    /// Interval end, host Unix ns.
    pub end_ns: u64,
    /// Bytes completed in the interval.
    pub bytes: u64,
    /// MB/s in the interval.
    pub mbps: f64,
    /// Phase(s) the target was in during the interval: `write`, or
    /// `write+read` for one that spans the change.
    pub phase: String,
    /// Latency of the I/Os that completed in the interval (None: none timed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<LatencyStats>,
}

column_table! {
    /// Columns, in order (then [`LATENCY_COLUMNS`], optional when read). `target_index` is
    /// not a column.
    pub const COLUMNS for IntervalRecord {
        "target" (Tag, required): |r| Value::Text(&r.target),
            |r, c| r.target = c.text()?.to_string();
        "start_ns" (Field, required): |r| Value::Count(r.start_ns), |r, c| r.start_ns = c.int()?;
        "end_ns" (Field, required): |r| Value::Count(r.end_ns), |r, c| r.end_ns = c.int()?;
        "bytes" (Field, required): |r| Value::Count(r.bytes), |r, c| r.bytes = c.int()?;
        "mbps" (Field, required): |r| Value::Fixed(r.mbps, 3),
            |r, c| r.mbps = c.opt_float()?.unwrap_or(f64::NAN);
        "phase" (Tag, required): |r| Value::Text(&r.phase), |r, c| r.phase = c.text()?.to_string();
    }
}

/// Streams `intervals.csv`, flushed after each row.
pub struct Writer(CsvOut);

impl Writer {
    /// Creates `dir/intervals.csv` with its header.
    pub fn create(dir: &Path) -> Result<Writer> {
        let header: Vec<&str> = COLUMNS
            .iter()
            .chain(LATENCY_COLUMNS.iter())
            .copied()
            .collect();
        let mut w = CsvOut::create(&dir.join(FILE_NAME), &header)?;
        w.flush()?;
        Ok(Writer(w))
    }

    /// Appends one record and flushes.
    pub fn write(&mut self, r: &IntervalRecord) -> Result<()> {
        let mut cells = IntervalRecord::csv_cells(Some(r));
        cells.extend(LatencyStats::csv_cells(r.latency.as_ref()));
        self.0.row(cells)?;
        self.0.flush()
    }
}

/// Reads `dir/intervals.csv`, refusing a newer format.
pub fn read(dir: &Path) -> Result<Vec<IntervalRecord>> {
    read_file(dir, FILE_NAME, FORMAT_VERSION, parse)
}

/// Reads back `dir/intervals.csv` that this build's `hostd run` has just streamed: as
/// [`read`], without asking `manifest.json` for the format (it is this build's).
pub fn read_streamed(dir: &Path) -> Result<Vec<IntervalRecord>> {
    let path = dir.join(FILE_NAME);
    parse(&path, &crate::csvio::slurp(&path)?)
}

/// Parses the bytes of an `intervals.csv` (`path` names it in errors).
pub fn parse(path: &Path, buf: &[u8]) -> Result<Vec<IntervalRecord>> {
    let mut t = Table::new(path, buf)?;
    let (cols, lat) = (
        t.columns_of::<IntervalRecord>()?,
        t.positions(LATENCY_COLUMNS),
    );
    let mut targets: Vec<String> = Vec::new();
    let mut out = Vec::new();
    while let Some(row) = t.next_row()? {
        let mut r = IntervalRecord::default();
        row.read(&mut r, &cols)?;
        r.target_index = targets
            .iter()
            .position(|t| *t == r.target)
            .unwrap_or_else(|| {
                targets.push(r.target.clone());
                targets.len() - 1
            });
        r.latency = LatencyStats::from_row(&row, &lat)?;
        out.push(r);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csvio::testing::{assert_newer_format_refused, assert_read_error};

    #[test]
    fn intervals_round_trip() {
        let d = tempfile::tempdir().unwrap();
        let recs = vec![
            IntervalRecord {
                target: "/mnt/x".into(),
                target_index: 0,
                start_ns: 1,
                end_ns: 1_000_000_001,
                bytes: 417_210_000,
                mbps: 417.21,
                phase: "write".into(),
                latency: Some(LatencyStats {
                    count: 3,
                    min_ns: 10_000,
                    mean_ns: 20_000.0,
                    p50_ns: 20_000,
                    p90_ns: 30_000,
                    p99_ns: 30_000,
                    p99_9_ns: 30_000,
                    p99_99_ns: 30_000,
                    max_ns: 30_000,
                }),
            },
            IntervalRecord {
                target: "b,\"q\"".into(),
                target_index: 1,
                start_ns: 2,
                end_ns: 3,
                bytes: 0,
                mbps: 0.0,
                phase: "write+read".into(),
                latency: None,
            },
        ];
        let mut w = Writer::create(d.path()).unwrap();
        recs.iter().for_each(|r| w.write(r).unwrap());
        assert_eq!(read(d.path()).unwrap(), recs);
        assert_newer_format_refused(d.path(), FILE_NAME, FORMAT_VERSION, read);
    }

    #[test]
    fn a_bad_cell_names_line_and_column() {
        assert_read_error(
            FILE_NAME,
            "target,start_ns,end_ns,bytes,mbps,phase\na,1,2,3,4.0,write\na,1,x,3,4.0,write\n",
            read,
            &["intervals.csv: line 3, column `end_ns`"],
        );
    }
}
