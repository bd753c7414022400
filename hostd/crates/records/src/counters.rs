//! `counters.csv`: each target's cumulative bytes every 100 ms (docs/run-directory.md).
//! `hostd run` streams it as the samples come ([`Stream`]: one row per target at each
//! sample, so the targets' rows interleave); [`write`] writes it whole (target after
//! target). [`read`] takes either: it groups the rows by target and orders each target's by
//! time.

use crate::columns::{column_table, Columns as _, Value};
use crate::csvio::{read_table, read_table_as_written, CsvOut, Table};
use crate::error::Result;
use crate::row_stream::RowStream;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// File name in the run directory.
pub const FILE_NAME: &str = "counters.csv";
/// Newest format this build reads and the one it writes.
pub const FORMAT_VERSION: u32 = 1;

/// One sample of one target's byte counter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterRecord {
    /// Host Unix ns of the sample.
    pub time_ns: u64,
    /// Cumulative bytes of all the target's phases (prepare included).
    pub bytes: u64,
}

/// One row of `counters.csv`: a sample and the target it counts.
#[derive(Debug, Clone, Default)]
struct CounterRow {
    target: String,
    counter: CounterRecord,
}

column_table! {
    /// Columns, in order.
    pub const COLUMNS for CounterRow {
        "target" (Tag, required): |r| Value::Text(&r.target),
            |r, c| r.target = c.text()?.to_string();
        "time_ns" (Time, required): |r| Value::Count(r.counter.time_ns),
            |r, c| r.counter.time_ns = c.int()?;
        "bytes" (Field, required): |r| Value::Count(r.counter.bytes),
            |r, c| r.counter.bytes = c.int()?;
    }
}

/// Per target label: its counter samples in time order.
pub type Counters = BTreeMap<String, Vec<CounterRecord>>;

/// Writes `dir/counters.csv`: `labels[i]`'s samples are `samples[i]`.
pub fn write(dir: &Path, labels: &[String], samples: &[Vec<CounterRecord>]) -> Result<()> {
    let mut w = CsvOut::create(&dir.join(FILE_NAME), COLUMNS)?;
    for (label, s) in labels.iter().zip(samples) {
        for &counter in s {
            let row = CounterRow {
                target: label.clone(),
                counter,
            };
            w.row(CounterRow::csv_cells(Some(&row)))?;
        }
    }
    w.flush()
}

/// `dir/counters.csv` written as the run goes: each sample of every target appended at once
/// ([`RowStream`]), the file created with the first.
pub struct Stream {
    rows: RowStream<CounterRow>,
    /// One sample's rows, reused.
    batch: Vec<CounterRow>,
}

impl Stream {
    /// A stream into `dir/counters.csv`.
    pub fn new(dir: &Path) -> Stream {
        Stream {
            rows: RowStream::new(dir.join(FILE_NAME), "counter rows"),
            batch: Vec::new(),
        }
    }

    /// Appends one sample of every target: `bytes[i]` is `labels[i]`'s count at `time_ns`.
    pub fn append(&mut self, time_ns: u64, labels: &[String], bytes: &[u64]) {
        self.batch
            .resize_with(labels.len().min(bytes.len()), Default::default);
        for ((row, label), &bytes) in self.batch.iter_mut().zip(labels).zip(bytes) {
            if row.target != *label {
                row.target.clone_from(label);
            }
            row.counter = CounterRecord { time_ns, bytes };
        }
        self.rows.append(&self.batch);
    }

    /// Rows in the file.
    pub fn rows(&self) -> u64 {
        self.rows.rows()
    }

    /// What a failed write lost, in words ([`RowStream::failure`]).
    pub fn failure(&self) -> Option<String> {
        self.rows.failure()
    }
}

/// Reads `dir/counters.csv`, refusing a newer format. Rows of a target out of time order are
/// sorted; a count that goes down is an error naming its line.
pub fn read(dir: &Path) -> Result<Counters> {
    read_table::<CounterRow, _>(dir, FILE_NAME, FORMAT_VERSION, parse)
}

/// Reads back `dir/counters.csv` that this build's `hostd run` has just streamed
/// ([`Stream`]): as [`read`], without asking `manifest.json` for the format (it is this
/// build's).
pub fn read_streamed(dir: &Path) -> Result<Counters> {
    read_table_as_written::<CounterRow, _>(dir, FILE_NAME, parse)
}

fn parse(t: &mut Table<'_>, cols: &[Option<usize>]) -> Result<Counters> {
    let mut rows: BTreeMap<String, Vec<(CounterRecord, u64)>> = BTreeMap::new();
    t.each_record(cols, |r: CounterRow, line| {
        rows.entry(r.target).or_default().push((r.counter, line));
        Ok(())
    })?;
    let mut out = Counters::new();
    for (target, mut v) in rows {
        v.sort_by_key(|(c, _)| c.time_ns);
        if let Some(w) = v.windows(2).find(|w| w[1].0.bytes < w[0].0.bytes) {
            return Err(crate::csvio::bad_value(
                t.path(),
                w[1].1,
                "bytes",
                w[1].0.bytes.to_string().as_bytes(),
                "cumulative bytes went down",
            ));
        }
        out.insert(target, v.into_iter().map(|(c, _)| c).collect());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csvio::testing::{assert_newer_format_refused, assert_read_error};

    #[test]
    fn counters_round_trip() {
        let d = tempfile::tempdir().unwrap();
        let labels = vec!["/mnt/a".to_string(), "b,c".to_string()];
        let c = |t, b| CounterRecord {
            time_ns: t,
            bytes: b,
        };
        let samples = vec![vec![c(0, 0), c(100, 5)], vec![c(0, 0)]];
        write(d.path(), &labels, &samples).unwrap();
        let back = read(d.path()).unwrap();
        assert_eq!(back["/mnt/a"], samples[0]);
        assert_eq!(back["b,c"], samples[1]);
        assert_newer_format_refused(d.path(), FILE_NAME, FORMAT_VERSION, read);
    }

    #[test]
    fn streamed_counters_interleave_targets_and_read_as_written_whole() {
        let (streamed, whole) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let labels = vec!["/mnt/a".to_string(), "b,c".to_string()];
        let mut s = Stream::new(streamed.path());
        assert!(!streamed.path().join(FILE_NAME).exists());
        let mut samples = vec![Vec::new(), Vec::new()];
        for k in 0..5u64 {
            let bytes = [k * 10, k * k];
            s.append(k * 100, &labels, &bytes);
            for (i, &b) in bytes.iter().enumerate() {
                samples[i].push(CounterRecord {
                    time_ns: k * 100,
                    bytes: b,
                });
            }
            // Every sample is in the file at once, in whole lines.
            let text = std::fs::read_to_string(streamed.path().join(FILE_NAME)).unwrap();
            assert_eq!(text.lines().count() as u64, 1 + 2 * (k + 1), "{text}");
            assert!(text.ends_with('\n'));
        }
        let text = std::fs::read_to_string(streamed.path().join(FILE_NAME)).unwrap();
        assert!(
            text.starts_with("target,time_ns,bytes\n/mnt/a,0,0\n\"b,c\",0,0\n/mnt/a,100,10\n"),
            "{text}"
        );
        assert_eq!((s.rows(), s.failure()), (10, None));
        write(whole.path(), &labels, &samples).unwrap();
        let back = read_streamed(streamed.path()).unwrap();
        assert_eq!(back, read(whole.path()).unwrap());
        assert_eq!(back["/mnt/a"], samples[0]);
        assert_eq!(back["b,c"], samples[1]);
    }

    #[test]
    fn a_count_going_down_names_its_line() {
        assert_read_error(
            FILE_NAME,
            "target,time_ns,bytes\na,0,10\na,100,5\n",
            read,
            &["counters.csv: line 3, column `bytes`", "went down"],
        );
    }
}
