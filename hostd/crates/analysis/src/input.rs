//! Reading a run directory's `files.csv` and `probe.csv` into memory, with errors that
//! name the file, row and column of anything malformed.

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// One file written or read by the workload (one row of `files.csv`).
#[derive(Debug, Clone, PartialEq)]
pub struct FileRecord {
    /// Target name as written by the workload (path or `sim:…`).
    pub target: String,
    /// Phase name, e.g. `write` or `read`.
    pub phase: String,
    /// File index within its target and phase.
    pub index: u64,
    /// Start, host Unix ns.
    pub start_ns: i64,
    /// End, host Unix ns.
    pub end_ns: i64,
    /// Bytes transferred.
    pub bytes: u64,
}

impl FileRecord {
    /// Duration in seconds (never below 1 ns, so rates stay finite).
    pub fn seconds(&self) -> f64 {
        ((self.end_ns - self.start_ns).max(1)) as f64 * 1e-9
    }

    /// Throughput in bytes per second.
    pub fn rate_bps(&self) -> f64 {
        self.bytes as f64 / self.seconds()
    }
}

/// Aligned probe samples, column by column; optional columns are empty vectors when absent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProbeSeries {
    /// Sample time, host Unix ns, ascending.
    pub time_ns: Vec<i64>,
    /// Bus power, W.
    pub power_w: Vec<f64>,
    /// Enclosure temperature, °C (NaN where the sensor gave nothing).
    pub enclosure_temp_c: Vec<f64>,
    /// Bus voltage, V (optional).
    pub vbus_v: Vec<f64>,
    /// Bus current, A (optional).
    pub current_a: Vec<f64>,
    /// INA228 energy accumulator, J (optional).
    pub energy_j: Vec<f64>,
    /// INA228 die temperature, °C (optional).
    pub die_temp_c: Vec<f64>,
}

impl ProbeSeries {
    /// Number of samples.
    pub fn len(&self) -> usize {
        self.time_ns.len()
    }

    /// True when there are no samples.
    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }

    /// Index range of the samples with `from_ns <= t < to_ns`.
    pub fn range(&self, from_ns: i64, to_ns: i64) -> std::ops::Range<usize> {
        let a = self.time_ns.partition_point(|&t| t < from_ns);
        let b = self.time_ns.partition_point(|&t| t < to_ns);
        a..b.max(a)
    }

    /// Mean of `values` over the samples in `[from_ns, to_ns)`, ignoring NaN; None if empty.
    pub fn mean_in(&self, values: &[f64], from_ns: i64, to_ns: i64) -> Option<f64> {
        if values.is_empty() {
            return None;
        }
        let r = self.range(from_ns, to_ns);
        let (mut sum, mut n) = (0.0, 0usize);
        for v in &values[r] {
            if v.is_finite() {
                sum += v;
                n += 1;
            }
        }
        (n > 0).then(|| sum / n as f64)
    }

    /// Energy in joules over `[from_ns, to_ns)`: from the accumulator when present,
    /// otherwise the trapezoidal integral of power.
    pub fn energy_between(&self, from_ns: i64, to_ns: i64) -> Option<f64> {
        let r = self.range(from_ns, to_ns);
        if r.len() < 2 {
            return None;
        }
        if !self.energy_j.is_empty() {
            let (a, b) = (self.energy_j[r.start], self.energy_j[r.end - 1]);
            if a.is_finite() && b.is_finite() {
                return Some(b - a);
            }
        }
        let mut e = 0.0;
        for i in r.start + 1..r.end {
            let (p0, p1) = (self.power_w[i - 1], self.power_w[i]);
            if p0.is_finite() && p1.is_finite() {
                e += 0.5 * (p0 + p1) * (self.time_ns[i] - self.time_ns[i - 1]) as f64 * 1e-9;
            }
        }
        Some(e)
    }
}

/// Everything the analysis reads from a run directory.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunData {
    /// The per-file records, in file order.
    pub files: Vec<FileRecord>,
    /// Probe samples, if `probe.csv` exists.
    pub probe: Option<ProbeSeries>,
}

/// A problem with the input files, worded for the person who has to fix it.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file could not be opened or read.
    #[error("could not read {path}: {source}")]
    Io {
        /// File concerned.
        path: PathBuf,
        /// Underlying error.
        source: std::io::Error,
    },
    /// The CSV structure itself is broken.
    #[error("{path}: malformed CSV: {message}")]
    Csv {
        /// File concerned.
        path: PathBuf,
        /// What the CSV reader said.
        message: String,
    },
    /// A required column is missing from the header.
    #[error("{path}: missing required column `{column}` (header has: {header})")]
    MissingColumn {
        /// File concerned.
        path: PathBuf,
        /// The missing column.
        column: String,
        /// The header as found.
        header: String,
    },
    /// A cell could not be parsed.
    #[error("{path}: row {row}, column `{column}`: {message} (found {value:?})")]
    BadValue {
        /// File concerned.
        path: PathBuf,
        /// 1-based line number in the file (header is line 1).
        row: u64,
        /// Column name.
        column: String,
        /// The offending text.
        value: String,
        /// What was expected.
        message: String,
    },
    /// The file has a header but no rows.
    #[error("{path}: no rows after the header")]
    Empty {
        /// File concerned.
        path: PathBuf,
    },
}

/// Reads `files.csv` and, when present, `probe.csv` from a run directory.
pub fn read_run_dir(dir: &Path) -> Result<RunData, InputError> {
    let files = read_files_csv(&dir.join("files.csv"))?;
    let probe_path = dir.join("probe.csv");
    let probe = if probe_path.exists() {
        let p = read_probe_csv(&probe_path)?;
        (!p.is_empty()).then_some(p)
    } else {
        None
    };
    Ok(RunData { files, probe })
}

fn open(path: &Path) -> Result<Vec<u8>, InputError> {
    let mut buf = Vec::new();
    File::open(path)
        .and_then(|mut f| f.read_to_end(&mut buf))
        .map_err(|source| InputError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    Ok(buf)
}

struct Columns {
    path: PathBuf,
    map: HashMap<String, usize>,
    header: String,
}

impl Columns {
    fn new(path: &Path, header: &csv::ByteRecord) -> Self {
        let names: Vec<String> = header
            .iter()
            .map(|h| String::from_utf8_lossy(h).trim().to_string())
            .collect();
        let map = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        Columns {
            path: path.to_path_buf(),
            map,
            header: names.join(","),
        }
    }

    fn required(&self, name: &str) -> Result<usize, InputError> {
        self.map
            .get(name)
            .copied()
            .ok_or_else(|| InputError::MissingColumn {
                path: self.path.clone(),
                column: name.to_string(),
                header: self.header.clone(),
            })
    }

    fn optional(&self, name: &str) -> Option<usize> {
        self.map.get(name).copied()
    }
}

struct Cell<'a> {
    path: &'a Path,
    row: u64,
}

impl Cell<'_> {
    fn text<'r>(
        &self,
        rec: &'r csv::ByteRecord,
        col: usize,
        name: &str,
    ) -> Result<&'r str, InputError> {
        let raw = rec.get(col).unwrap_or(b"");
        std::str::from_utf8(raw)
            .map(str::trim)
            .map_err(|_| self.bad(name, &String::from_utf8_lossy(raw), "not UTF-8"))
    }

    fn bad(&self, column: &str, value: &str, message: &str) -> InputError {
        InputError::BadValue {
            path: self.path.to_path_buf(),
            row: self.row,
            column: column.to_string(),
            value: value.to_string(),
            message: message.to_string(),
        }
    }

    fn int<T: std::str::FromStr>(
        &self,
        rec: &csv::ByteRecord,
        col: usize,
        name: &str,
    ) -> Result<T, InputError> {
        let s = self.text(rec, col, name)?;
        s.parse::<T>()
            .map_err(|_| self.bad(name, s, "expected a whole number"))
    }

    /// A float; an empty cell is NaN (a gap), anything else unparsable is an error.
    fn float(&self, rec: &csv::ByteRecord, col: usize, name: &str) -> Result<f64, InputError> {
        let s = self.text(rec, col, name)?;
        if s.is_empty() {
            return Ok(f64::NAN);
        }
        s.parse::<f64>()
            .map_err(|_| self.bad(name, s, "expected a number"))
    }
}

fn reader(buf: &[u8]) -> csv::Reader<&[u8]> {
    csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_reader(buf)
}

fn csv_error(path: &Path, e: csv::Error) -> InputError {
    InputError::Csv {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// Reads `files.csv`: required columns `target,phase,index,start_ns,end_ns,bytes`.
pub fn read_files_csv(path: &Path) -> Result<Vec<FileRecord>, InputError> {
    let buf = open(path)?;
    let mut rdr = reader(&buf);
    let cols = Columns::new(path, rdr.byte_headers().map_err(|e| csv_error(path, e))?);
    let c_target = cols.required("target")?;
    let c_phase = cols.required("phase")?;
    let c_index = cols.required("index")?;
    let c_start = cols.required("start_ns")?;
    let c_end = cols.required("end_ns")?;
    let c_bytes = cols.required("bytes")?;
    let mut out = Vec::new();
    let mut rec = csv::ByteRecord::new();
    let mut row = 1u64;
    while rdr
        .read_byte_record(&mut rec)
        .map_err(|e| csv_error(path, e))?
    {
        row += 1;
        let cell = Cell { path, row };
        let f = FileRecord {
            target: cell.text(&rec, c_target, "target")?.to_string(),
            phase: cell.text(&rec, c_phase, "phase")?.to_string(),
            index: cell.int(&rec, c_index, "index")?,
            start_ns: cell.int(&rec, c_start, "start_ns")?,
            end_ns: cell.int(&rec, c_end, "end_ns")?,
            bytes: cell.int(&rec, c_bytes, "bytes")?,
        };
        if f.end_ns < f.start_ns {
            return Err(cell.bad("end_ns", &f.end_ns.to_string(), "end_ns is before start_ns"));
        }
        out.push(f);
    }
    if out.is_empty() {
        return Err(InputError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok(out)
}

/// Reads `probe.csv`: required `time_ns,power_w,enclosure_temp_c`; optional
/// `vbus_v,current_a,energy_j,die_temp_c`. Rows are sorted by time if they are not.
pub fn read_probe_csv(path: &Path) -> Result<ProbeSeries, InputError> {
    let buf = open(path)?;
    let mut rdr = reader(&buf);
    let cols = Columns::new(path, rdr.byte_headers().map_err(|e| csv_error(path, e))?);
    let c_time = cols.required("time_ns")?;
    let c_power = cols.required("power_w")?;
    let c_temp = cols.required("enclosure_temp_c")?;
    let optional: Vec<(&str, Option<usize>)> = ["vbus_v", "current_a", "energy_j", "die_temp_c"]
        .into_iter()
        .map(|n| (n, cols.optional(n)))
        .collect();
    let rows_hint = buf.len() / 64;
    let mut s = ProbeSeries {
        time_ns: Vec::with_capacity(rows_hint),
        power_w: Vec::with_capacity(rows_hint),
        enclosure_temp_c: Vec::with_capacity(rows_hint),
        ..Default::default()
    };
    let mut opt_cols: Vec<Vec<f64>> = vec![Vec::new(); optional.len()];
    let mut rec = csv::ByteRecord::new();
    let mut row = 1u64;
    let mut sorted = true;
    while rdr
        .read_byte_record(&mut rec)
        .map_err(|e| csv_error(path, e))?
    {
        row += 1;
        let cell = Cell { path, row };
        let t: i64 = cell.int(&rec, c_time, "time_ns")?;
        if let Some(&last) = s.time_ns.last() {
            sorted &= t >= last;
        }
        s.time_ns.push(t);
        s.power_w.push(cell.float(&rec, c_power, "power_w")?);
        s.enclosure_temp_c
            .push(cell.float(&rec, c_temp, "enclosure_temp_c")?);
        for (k, (name, col)) in optional.iter().enumerate() {
            if let Some(c) = col {
                opt_cols[k].push(cell.float(&rec, *c, name)?);
            }
        }
    }
    let mut it = opt_cols.into_iter();
    s.vbus_v = it.next().unwrap_or_default();
    s.current_a = it.next().unwrap_or_default();
    s.energy_j = it.next().unwrap_or_default();
    s.die_temp_c = it.next().unwrap_or_default();
    if !sorted {
        sort_by_time(&mut s);
    }
    Ok(s)
}

fn sort_by_time(s: &mut ProbeSeries) {
    let mut order: Vec<usize> = (0..s.len()).collect();
    order.sort_by_key(|&i| s.time_ns[i]);
    let permute_i = |v: &Vec<i64>| order.iter().map(|&i| v[i]).collect::<Vec<_>>();
    let permute = |v: &Vec<f64>| {
        if v.is_empty() {
            Vec::new()
        } else {
            order.iter().map(|&i| v[i]).collect()
        }
    };
    s.time_ns = permute_i(&s.time_ns);
    s.power_w = permute(&s.power_w);
    s.enclosure_temp_c = permute(&s.enclosure_temp_c);
    s.vbus_v = permute(&s.vbus_v);
    s.current_a = permute(&s.current_a);
    s.energy_j = permute(&s.energy_j);
    s.die_temp_c = permute(&s.die_temp_c);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn files_csv_with_extra_columns_is_read() {
        let d = tempfile::tempdir().unwrap();
        let p = write(d.path(), "files.csv", "target,phase,index,start_ns,end_ns,bytes,mbps,verified\nA,write,0,100,1100,1000,1000,true\n");
        let f = read_files_csv(&p).unwrap();
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].bytes, 1000);
        assert!((f[0].rate_bps() - 1e9).abs() < 1.0);
    }

    #[test]
    fn missing_column_is_named() {
        let d = tempfile::tempdir().unwrap();
        let p = write(
            d.path(),
            "files.csv",
            "target,phase,index,start_ns,bytes\nA,write,0,1,5\n",
        );
        let e = read_files_csv(&p).unwrap_err().to_string();
        assert!(e.contains("missing required column `end_ns`"), "{e}");
    }

    #[test]
    fn bad_number_names_row_and_column() {
        let d = tempfile::tempdir().unwrap();
        let p = write(
            d.path(),
            "files.csv",
            "target,phase,index,start_ns,end_ns,bytes\nA,write,0,1,5,10\nA,write,1,5,9,ten\n",
        );
        let e = read_files_csv(&p).unwrap_err().to_string();
        assert!(
            e.contains("row 3, column `bytes`") && e.contains("\"ten\""),
            "{e}"
        );
    }

    #[test]
    fn probe_optional_columns_and_gaps() {
        let d = tempfile::tempdir().unwrap();
        let p = write(
            d.path(),
            "probe.csv",
            "time_ns,seq,power_w,enclosure_temp_c,energy_j\n2,1,5.0,,1.5\n1,0,4.0,40.0,1.0\n",
        );
        let s = read_probe_csv(&p).unwrap();
        assert_eq!(s.time_ns, vec![1, 2]);
        assert_eq!(s.power_w, vec![4.0, 5.0]);
        assert!(s.enclosure_temp_c[1].is_nan());
        assert_eq!(s.energy_j, vec![1.0, 1.5]);
        assert!(s.vbus_v.is_empty());
        let e = read_probe_csv(&write(
            d.path(),
            "p2.csv",
            "time_ns,power_w,enclosure_temp_c\n1,x,3\n",
        ))
        .unwrap_err();
        assert!(e.to_string().contains("row 2, column `power_w`"), "{e}");
    }
}
