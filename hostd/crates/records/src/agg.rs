//! `probe_agg.csv`: 10 ms min/mean/max bins of the probe samples (docs/run-directory.md).

use crate::csvio::LineWriter;
use crate::csvio::{read_file, Table};
use crate::error::Result;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// File name in the run directory.
pub const FILE_NAME: &str = "probe_agg.csv";
/// Newest format this build reads and the one it writes.
pub const FORMAT_VERSION: u32 = 1;
/// The channels binned, in column order.
pub const CHANNELS: [&str; 5] = [
    "vbus_v",
    "current_a",
    "power_w",
    "die_temp_c",
    "enclosure_temp_c",
];

/// Columns, in order: `time_ns,samples`, `<channel>_min,_mean,_max` per channel, `energy_j`.
pub fn columns() -> Vec<String> {
    let mut c = vec!["time_ns".to_string(), "samples".to_string()];
    for ch in CHANNELS {
        for s in ["min", "mean", "max"] {
            c.push(format!("{ch}_{s}"));
        }
    }
    c.push("energy_j".into());
    c
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

impl AggRow {
    /// The channel statistics in [`CHANNELS`] order.
    pub fn stats(&self) -> [Stat; 5] {
        [
            self.vbus_v,
            self.current_a,
            self.power_w,
            self.die_temp_c,
            self.enclosure_temp_c,
        ]
    }

    fn stats_mut(&mut self) -> [&mut Stat; 5] {
        [
            &mut self.vbus_v,
            &mut self.current_a,
            &mut self.power_w,
            &mut self.die_temp_c,
            &mut self.enclosure_temp_c,
        ]
    }

    /// Appends this row as one `probe_agg.csv` line (with newline); empty
    /// cells for channels without samples.
    pub fn write_csv_line(&self, out: &mut String) {
        use std::fmt::Write;
        let _ = write!(out, "{},{}", self.time_ns, self.samples);
        for s in self.stats() {
            for v in [s.min, s.mean, s.max] {
                push_cell(out, v);
            }
        }
        push_cell(out, self.energy_j);
        out.push('\n');
    }
}

fn push_cell(out: &mut String, v: f64) {
    use std::fmt::Write;
    if v.is_nan() {
        out.push(',');
    } else {
        let _ = write!(out, ",{v}");
    }
}

/// Streams `probe_agg.csv` (buffered; `flush` at the end).
pub type Writer = LineWriter<AggRow>;

impl Writer {
    /// Creates `dir/probe_agg.csv` with its header.
    pub fn create(dir: &Path) -> Result<Writer> {
        LineWriter::open(
            dir.join(FILE_NAME),
            &columns().join(","),
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
    let names = columns();
    let time = t.required("time_ns")?;
    let cols: Vec<Option<usize>> = names.iter().map(|c| t.optional(c)).collect();
    let mut out = Vec::new();
    while let Some(row) = t.next_row()? {
        let f = |k: usize| -> Result<f64> {
            Ok(row.opt_float(cols[k], &names[k])?.unwrap_or(f64::NAN))
        };
        let mut r = AggRow {
            time_ns: row.int(time, "time_ns")?,
            samples: row.opt_int(cols[1], "samples")?.unwrap_or(0),
            vbus_v: Stat::EMPTY,
            current_a: Stat::EMPTY,
            power_w: Stat::EMPTY,
            die_temp_c: Stat::EMPTY,
            enclosure_temp_c: Stat::EMPTY,
            energy_j: f(names.len() - 1)?,
        };
        for (k, s) in r.stats_mut().into_iter().enumerate() {
            *s = Stat {
                min: f(2 + 3 * k)?,
                mean: f(3 + 3 * k)?,
                max: f(4 + 3 * k)?,
            };
        }
        out.push(r);
    }
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
