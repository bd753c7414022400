//! `drive_log.csv`: the drive's own thermal record about once a second through the run, per
//! target (docs/run-directory.md "Drive"): the NVMe health log's thermal counters and
//! sensors, or a SATA drive's SCT status. Counters only grow; the analysis reads their
//! change over a phase.

use crate::columns::{column_table, Columns as _, Value};
use crate::csvio::{read_table, read_table_as_written, CsvOut, Table};
use crate::error::Result;
use crate::row_stream::RowStream;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// File name in the run directory.
pub const FILE_NAME: &str = "drive_log.csv";
/// Newest format this build reads and the one it writes.
pub const FORMAT_VERSION: u32 = 1;

/// One reading of one target's thermal record; a field the drive does not report is None.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DriveLogRecord {
    /// Host Unix ns when smartctl answered.
    pub time_ns: i64,
    /// Target label.
    pub target: String,
    /// NVMe: minutes the composite temperature was at or above the warning threshold.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub warning_temp_time_min: Option<u64>,
    /// NVMe: minutes at or above the critical composite temperature.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub critical_comp_time_min: Option<u64>,
    /// NVMe: transitions into thermal management temperature 1 (light throttling).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tmt1_transitions: Option<u64>,
    /// NVMe: transitions into thermal management temperature 2 (heavy throttling).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tmt2_transitions: Option<u64>,
    /// NVMe: seconds at thermal management temperature 1.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tmt1_time_s: Option<u64>,
    /// NVMe: seconds at thermal management temperature 2.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tmt2_time_s: Option<u64>,
    /// NVMe: temperature sensors 1–8 that answer, °C, `;`-separated in sensor order
    /// (`1=52;2=47`).
    #[serde(skip_serializing_if = "String::is_empty", default)]
    pub sensors: String,
    /// SATA: SCT status current temperature, °C.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sct_temperature_c: Option<f64>,
    /// SATA: SCT status count of times over the temperature limit.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sct_over_limit_count: Option<u64>,
    /// SATA: SCT status count of times under the temperature limit.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sct_under_limit_count: Option<u64>,
}

fn count(v: Option<u64>) -> Value<'static> {
    v.map_or(Value::Absent, Value::Count)
}

column_table! {
    /// Columns, in order.
    pub const COLUMNS for DriveLogRecord {
        "time_ns" (Time, required): |r| Value::Int(r.time_ns), |r, c| r.time_ns = c.int()?;
        "target" (Tag, required): |r| Value::Text(&r.target),
            |r, c| r.target = c.text()?.to_string();
        "warning_temp_time_min" (Field): |r| count(r.warning_temp_time_min),
            |r, c| r.warning_temp_time_min = c.opt_int()?;
        "critical_comp_time_min" (Field): |r| count(r.critical_comp_time_min),
            |r, c| r.critical_comp_time_min = c.opt_int()?;
        "tmt1_transitions" (Field): |r| count(r.tmt1_transitions),
            |r, c| r.tmt1_transitions = c.opt_int()?;
        "tmt2_transitions" (Field): |r| count(r.tmt2_transitions),
            |r, c| r.tmt2_transitions = c.opt_int()?;
        "tmt1_time_s" (Field): |r| count(r.tmt1_time_s), |r, c| r.tmt1_time_s = c.opt_int()?;
        "tmt2_time_s" (Field): |r| count(r.tmt2_time_s), |r, c| r.tmt2_time_s = c.opt_int()?;
        "sensors" (Field): |r| if r.sensors.is_empty() { Value::Absent } else { Value::Text(&r.sensors) },
            |r, c| r.sensors = c.text()?.to_string();
        "sct_temperature_c" (Field): |r| Value::float(r.sct_temperature_c),
            |r, c| r.sct_temperature_c = c.opt_float()?;
        "sct_over_limit_count" (Field): |r| count(r.sct_over_limit_count),
            |r, c| r.sct_over_limit_count = c.opt_int()?;
        "sct_under_limit_count" (Field): |r| count(r.sct_under_limit_count),
            |r, c| r.sct_under_limit_count = c.opt_int()?;
    }
}

/// Per target: its readings in time order.
pub type DriveLogs = BTreeMap<String, Vec<DriveLogRecord>>;

/// What a counter did between two readings: None when either lacks it.
fn delta(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    Some(b?.saturating_sub(a?))
}

/// The change of the thermal counters from one reading to a later one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DriveLogDelta {
    /// Seconds between the readings.
    pub seconds: f64,
    /// Minutes added above the warning composite temperature.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub warning_temp_time_min: Option<u64>,
    /// Minutes added above the critical composite temperature.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub critical_comp_time_min: Option<u64>,
    /// Transitions into TMT1 added.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tmt1_transitions: Option<u64>,
    /// Transitions into TMT2 added.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tmt2_transitions: Option<u64>,
    /// Seconds at TMT1 added.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tmt1_time_s: Option<u64>,
    /// Seconds at TMT2 added.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tmt2_time_s: Option<u64>,
    /// SCT over-limit events added (SATA).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sct_over_limit_count: Option<u64>,
}

impl DriveLogDelta {
    /// The change from `a` to the later `b`.
    pub fn between(a: &DriveLogRecord, b: &DriveLogRecord) -> DriveLogDelta {
        DriveLogDelta {
            seconds: (b.time_ns - a.time_ns) as f64 / 1e9,
            warning_temp_time_min: delta(a.warning_temp_time_min, b.warning_temp_time_min),
            critical_comp_time_min: delta(a.critical_comp_time_min, b.critical_comp_time_min),
            tmt1_transitions: delta(a.tmt1_transitions, b.tmt1_transitions),
            tmt2_transitions: delta(a.tmt2_transitions, b.tmt2_transitions),
            tmt1_time_s: delta(a.tmt1_time_s, b.tmt1_time_s),
            tmt2_time_s: delta(a.tmt2_time_s, b.tmt2_time_s),
            sct_over_limit_count: delta(a.sct_over_limit_count, b.sct_over_limit_count),
        }
    }

    /// True when the drive reports at least one counter of thermal throttling (NVMe thermal
    /// management or warning/critical time, SATA SCT over-limit count).
    pub fn has_counters(&self) -> bool {
        self.any(|_| true)
    }

    /// True when any counter the drive reports grew: it logged throttling or heat.
    pub fn logged_heat(&self) -> bool {
        self.any(|v| v > 0)
    }

    fn any(&self, f: impl Fn(u64) -> bool) -> bool {
        [
            self.warning_temp_time_min,
            self.critical_comp_time_min,
            self.tmt1_transitions,
            self.tmt2_transitions,
            self.tmt1_time_s,
            self.tmt2_time_s,
            self.sct_over_limit_count,
        ]
        .into_iter()
        .flatten()
        .any(f)
    }

    /// In words: "3 TMT1 transitions, 41 s at TMT1, 0 min above the warning temperature".
    pub fn words(&self) -> String {
        let mut w = Vec::new();
        let mut add = |v: Option<u64>, what: &str| {
            if let Some(v) = v {
                w.push(format!("{v} {what}"));
            }
        };
        add(self.tmt1_transitions, "TMT1 transition(s)");
        add(self.tmt1_time_s, "s at TMT1");
        add(self.tmt2_transitions, "TMT2 transition(s)");
        add(self.tmt2_time_s, "s at TMT2");
        add(
            self.warning_temp_time_min,
            "min above the warning temperature",
        );
        add(
            self.critical_comp_time_min,
            "min above the critical temperature",
        );
        add(self.sct_over_limit_count, "SCT over-limit event(s)");
        w.join(", ")
    }
}

/// `dir/drive_log.csv` written as the readings come (`hostd run`'s poller): created with
/// the first reading, each append whole and at once in the file ([`RowStream`]).
pub type Stream = RowStream<DriveLogRecord>;

/// A [`Stream`] into `dir/drive_log.csv`.
pub fn stream(dir: &Path) -> Stream {
    RowStream::new(dir.join(FILE_NAME), "readings")
}

/// Writes `dir/drive_log.csv`, one row per reading.
pub fn write(dir: &Path, rows: &[DriveLogRecord]) -> Result<()> {
    let mut w = CsvOut::create(&dir.join(FILE_NAME), COLUMNS)?;
    for r in rows {
        w.row(DriveLogRecord::csv_cells(Some(r)))?;
    }
    w.flush()
}

/// Reads `dir/drive_log.csv` per target in time order; refuses a newer format and names
/// the line and column of a bad cell.
pub fn read(dir: &Path) -> Result<DriveLogs> {
    read_table::<DriveLogRecord, _>(dir, FILE_NAME, FORMAT_VERSION, parse)
}

/// Reads back `dir/drive_log.csv` that this build's `hostd run` has just streamed ([`Stream`]):
/// as [`read`], without asking `manifest.json` for the format (it is this build's).
pub fn read_streamed(dir: &Path) -> Result<DriveLogs> {
    read_table_as_written::<DriveLogRecord, _>(dir, FILE_NAME, parse)
}

fn parse(t: &mut Table<'_>, cols: &[Option<usize>]) -> Result<DriveLogs> {
    let mut rows = Vec::new();
    t.each_record(cols, |r: DriveLogRecord, _| {
        rows.push(r);
        Ok(())
    })?;
    Ok(group(rows))
}

/// The readings per target in time order (what [`read`] gives for a file's rows).
pub fn group(rows: impl IntoIterator<Item = DriveLogRecord>) -> DriveLogs {
    let mut out = DriveLogs::new();
    for r in rows {
        out.entry(r.target.clone()).or_default().push(r);
    }
    for v in out.values_mut() {
        v.sort_by_key(|r| r.time_ns);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csvio::testing::{assert_newer_format_refused, assert_read_error};

    #[test]
    fn thermal_records_round_trip_and_their_change_is_counted() {
        let d = tempfile::tempdir().unwrap();
        let a = DriveLogRecord {
            time_ns: 1_000_000_000,
            target: "t".into(),
            warning_temp_time_min: Some(0),
            tmt1_transitions: Some(9),
            tmt1_time_s: Some(100),
            sensors: "1=52;2=47".into(),
            ..Default::default()
        };
        let b = DriveLogRecord {
            time_ns: 61_000_000_000,
            tmt1_transitions: Some(12),
            tmt1_time_s: Some(141),
            ..a.clone()
        };
        let sata = DriveLogRecord {
            time_ns: 5,
            target: "s".into(),
            sct_temperature_c: Some(27.0),
            sct_over_limit_count: Some(0),
            sct_under_limit_count: Some(0),
            ..Default::default()
        };
        write(d.path(), &[b.clone(), a.clone(), sata.clone()]).unwrap();
        let text = std::fs::read_to_string(d.path().join(FILE_NAME)).unwrap();
        assert!(
            text.starts_with("time_ns,target,warning_temp_time_min,"),
            "{text}"
        );
        let back = read(d.path()).unwrap();
        assert_eq!(back["t"], [a.clone(), b.clone()]);
        assert_eq!(back["s"], [sata]);
        let dl = DriveLogDelta::between(&a, &b);
        assert_eq!((dl.tmt1_transitions, dl.tmt1_time_s), (Some(3), Some(41)));
        assert_eq!(dl.warning_temp_time_min, Some(0));
        assert_eq!(dl.tmt2_transitions, None);
        assert!(dl.has_counters() && dl.logged_heat());
        assert_eq!(dl.seconds, 60.0);
        assert!(
            dl.words().contains("3 TMT1 transition(s), 41 s at TMT1"),
            "{}",
            dl.words()
        );
        let still = DriveLogDelta::between(&a, &a);
        assert!(still.has_counters() && !still.logged_heat());
        assert_newer_format_refused(d.path(), FILE_NAME, FORMAT_VERSION, read);
    }

    #[test]
    fn a_bad_counter_names_its_line_and_column() {
        assert_read_error(
            FILE_NAME,
            "time_ns,target,tmt1_transitions\n1,a,many\n",
            read,
            &["line 2, column `tmt1_transitions`", "many"],
        );
    }
}
