//! `probe_agg.csv`: 10 ms min/mean/max bins of the probe samples (docs/run-directory.md).

use crate::columns::{column_table, Columns as _, Value};
use crate::csvio::LineWriter;
use crate::csvio::{read_file, Table};
use crate::error::Result;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// File name in the run directory.
pub const FILE_NAME: &str = "probe_agg.csv";
/// Newest format this build reads and the one it writes.
pub const FORMAT_VERSION: u32 = 1;
/// Columns, in order: `time_ns,samples`, `<channel>_min,_mean,_max` per channel, `energy_j`.
pub fn columns() -> Vec<String> {
    COLUMNS.iter().map(|c| c.to_string()).collect()
}

/// Min/mean/max of one channel in one bin (`NaN` when no sample had it).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stat {
    /// Minimum.
    pub min: f64,
    /// Mean.
    pub mean: f64,
    /// Maximum.
    pub max: f64,
}

impl Stat {
    /// No sample contributed.
    pub const EMPTY: Stat = Stat {
        min: f64::NAN,
        mean: f64::NAN,
        max: f64::NAN,
    };

    /// True when no sample contributed.
    pub fn is_empty(&self) -> bool {
        self.mean.is_nan()
    }
}

/// One aggregated bin.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AggRow {
    /// Bin start, host Unix ns (a multiple of the bin width).
    pub time_ns: i64,
    /// Samples in the bin.
    pub samples: u32,
    /// Bus voltage, V.
    pub vbus_v: Stat,
    /// Current, A.
    pub current_a: Stat,
    /// Bus power, W.
    pub power_w: Stat,
    /// Die temperature, °C.
    pub die_temp_c: Stat,
    /// Enclosure temperature, °C.
    pub enclosure_temp_c: Stat,
    /// Energy (unwrapped accumulator) at the bin's last sample, J (`NaN` if none yet).
    pub energy_j: f64,
}

column_table! {
    /// Columns, in order (empty cells for channels without samples; NaN when read).
    pub const COLUMNS for AggRow {
        "time_ns" (Time, required): |r| Value::Int(r.time_ns), |r, c| r.time_ns = c.int()?;
        "samples" (Field): |r| Value::Count(r.samples.into()),
            |r, c| r.samples = c.opt_int()?.unwrap_or(0);
        "vbus_v_min" (Field): |r| stat(r.vbus_v.min), |r, c| r.vbus_v.min = num(c)?;
        "vbus_v_mean" (Field): |r| stat(r.vbus_v.mean), |r, c| r.vbus_v.mean = num(c)?;
        "vbus_v_max" (Field): |r| stat(r.vbus_v.max), |r, c| r.vbus_v.max = num(c)?;
        "current_a_min" (Field): |r| stat(r.current_a.min), |r, c| r.current_a.min = num(c)?;
        "current_a_mean" (Field): |r| stat(r.current_a.mean), |r, c| r.current_a.mean = num(c)?;
        "current_a_max" (Field): |r| stat(r.current_a.max), |r, c| r.current_a.max = num(c)?;
        "power_w_min" (Field): |r| stat(r.power_w.min), |r, c| r.power_w.min = num(c)?;
        "power_w_mean" (Field): |r| stat(r.power_w.mean), |r, c| r.power_w.mean = num(c)?;
        "power_w_max" (Field): |r| stat(r.power_w.max), |r, c| r.power_w.max = num(c)?;
        "die_temp_c_min" (Field): |r| stat(r.die_temp_c.min), |r, c| r.die_temp_c.min = num(c)?;
        "die_temp_c_mean" (Field): |r| stat(r.die_temp_c.mean),
            |r, c| r.die_temp_c.mean = num(c)?;
        "die_temp_c_max" (Field): |r| stat(r.die_temp_c.max), |r, c| r.die_temp_c.max = num(c)?;
        "enclosure_temp_c_min" (Field): |r| stat(r.enclosure_temp_c.min),
            |r, c| r.enclosure_temp_c.min = num(c)?;
        "enclosure_temp_c_mean" (Field): |r| stat(r.enclosure_temp_c.mean),
            |r, c| r.enclosure_temp_c.mean = num(c)?;
        "enclosure_temp_c_max" (Field): |r| stat(r.enclosure_temp_c.max),
            |r, c| r.enclosure_temp_c.max = num(c)?;
        "energy_j" (Field): |r| stat(r.energy_j), |r, c| r.energy_j = num(c)?;
    }
}

/// A statistic's cell: empty when no sample contributed (NaN).
fn stat(v: f64) -> Value<'static> {
    Value::unless_nan(v)
}

/// A statistic read back: NaN for an empty cell.
fn num(c: crate::columns::Cell<'_>) -> Result<f64> {
    Ok(c.opt_float()?.unwrap_or(f64::NAN))
}

impl Default for AggRow {
    /// A bin at 0 without samples.
    fn default() -> Self {
        AggRow {
            time_ns: 0,
            samples: 0,
            vbus_v: Stat::EMPTY,
            current_a: Stat::EMPTY,
            power_w: Stat::EMPTY,
            die_temp_c: Stat::EMPTY,
            enclosure_temp_c: Stat::EMPTY,
            energy_j: f64::NAN,
        }
    }
}

impl AggRow {
    /// Appends this row as one `probe_agg.csv` line (with newline).
    pub fn write_csv_line(&self, out: &mut String) {
        AggRow::write_csv_plain(Some(self), out, true);
        out.push('\n');
    }
}

/// Streams `probe_agg.csv` (buffered; `flush` at the end).
pub type Writer = LineWriter<AggRow>;

impl Writer {
    /// Creates `dir/probe_agg.csv` with its header.
    pub fn create(dir: &Path) -> Result<Writer> {
        LineWriter::open(
            dir.join(FILE_NAME),
            &COLUMNS.join(","),
            64 * 1024,
            AggRow::write_csv_line,
        )
    }
}

/// Reads `dir/probe_agg.csv`, refusing a newer format. `time_ns` is required, the other
/// columns optional; an absent column or an empty cell is NaN (no sample of that channel in
/// the bin; `samples` 0).
pub fn read(dir: &Path) -> Result<Vec<AggRow>> {
    read_file(dir, FILE_NAME, FORMAT_VERSION, parse)
}

/// Parses the bytes of a `probe_agg.csv` (`path` names it in errors).
pub fn parse(path: &Path, buf: &[u8]) -> Result<Vec<AggRow>> {
    let mut t = Table::new(path, buf)?;
    let cols = t.columns_of::<AggRow>()?;
    let mut out = Vec::new();
    t.each_record(&cols, |r: AggRow, _| {
        out.push(r);
        Ok(())
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csvio::testing::{assert_newer_format_refused, assert_read_error};

    #[test]
    fn agg_rows_round_trip() {
        let d = tempfile::tempdir().unwrap();
        let s = |a: f64| Stat {
            min: a,
            mean: a + 0.25,
            max: a + 0.5,
        };
        let rows = vec![
            AggRow {
                time_ns: 10_000_000,
                samples: 10,
                vbus_v: s(5.0),
                current_a: s(0.1),
                power_w: s(0.5),
                die_temp_c: s(28.0),
                enclosure_temp_c: Stat::EMPTY,
                energy_j: f64::NAN,
            },
            AggRow {
                time_ns: 20_000_000,
                samples: 9,
                vbus_v: s(4.9),
                current_a: s(0.2),
                power_w: s(1.0 / 3.0),
                die_temp_c: s(28.5),
                enclosure_temp_c: s(25.0),
                energy_j: 1.5,
            },
        ];
        let mut w = Writer::create(d.path()).unwrap();
        w.write(&rows).unwrap();
        w.flush().unwrap();
        let back = read(d.path()).unwrap();
        // NaN-aware equality.
        assert_eq!(format!("{back:?}"), format!("{rows:?}"));
        assert_newer_format_refused(d.path(), FILE_NAME, FORMAT_VERSION, read);
    }

    #[test]
    fn absent_columns_are_empty_and_a_bad_cell_names_line_and_column() {
        assert_read_error(
            FILE_NAME,
            "time_ns,power_w_mean\n1,2.5\n2,x\n",
            read,
            &["probe_agg.csv: line 3, column `power_w_mean`"],
        );
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join(FILE_NAME), "time_ns,power_w_mean\n1,2.5\n").unwrap();
        let r = read(d.path()).unwrap();
        assert_eq!((r[0].samples, r[0].power_w.mean), (0, 2.5));
        assert!(r[0].vbus_v.is_empty());
    }
}
