//! `counters.csv`: each target's cumulative bytes every 100 ms (docs/run-directory.md).

use crate::columns::{column_table, Columns as _, Value};
use crate::csvio::{read_table, CsvOut};
use crate::error::Result;
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

/// Reads `dir/counters.csv`, refusing a newer format. Rows of a target out of time order are
/// sorted; a count that goes down is an error naming its line.
pub fn read(dir: &Path) -> Result<Counters> {
    read_table::<CounterRow, _>(dir, FILE_NAME, FORMAT_VERSION, |t, cols| {
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
    })
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
    fn a_count_going_down_names_its_line() {
        assert_read_error(
            FILE_NAME,
            "target,time_ns,bytes\na,0,10\na,100,5\n",
            read,
            &["counters.csv: line 3, column `bytes`", "went down"],
        );
    }
}
