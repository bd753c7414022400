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
    /// Bus voltage, V (not read by `read_probe_csv`: unused by the analysis).
    pub vbus_v: Vec<f64>,
    /// Bus current, A (not read by `read_probe_csv`: unused by the analysis).
    pub current_a: Vec<f64>,
    /// INA228 energy accumulator, J (optional).
    pub energy_j: Vec<f64>,
    /// INA228 die temperature, °C (not read by `read_probe_csv`: unused by the analysis).
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

    /// Energy (J) at host time `t` from the accumulator column, as
    /// [`crate::energy::energy_at`] defines it (linear between the instants the reading
    /// changed); None without readings around `t`.
    pub fn energy_at(&self, t: i64) -> Option<f64> {
        let (ts, e) = (&self.time_ns, &self.energy_j);
        if e.len() != ts.len() {
            return None;
        }
        let i = ts.partition_point(|&x| x <= t);
        // The reading in force at `t`, and the instant it appeared.
        let last = (0..i).rev().find(|&k| e[k].is_finite())?;
        let v = e[last];
        let mut start = last;
        for k in (0..last).rev() {
            if e[k].is_finite() {
                if e[k] != v {
                    break;
                }
                start = k;
            }
        }
        match (i..e.len()).find(|&k| e[k].is_finite() && e[k] != v) {
            Some(n) => crate::energy::energy_at(&[(ts[start], v), (ts[n], e[n])], t),
            None => crate::energy::energy_at(&[(ts[start], v)], t),
        }
    }

    /// Energy in joules over `[from_ns, to_ns]`: from the accumulator when present
    /// ([`Self::energy_at`]), otherwise the trapezoidal integral of power.
    pub fn energy_between(&self, from_ns: i64, to_ns: i64) -> Option<f64> {
        if self.energy_j.iter().any(|e| e.is_finite()) {
            return Some(self.energy_at(to_ns)? - self.energy_at(from_ns)?);
        }
        let r = self.range(from_ns, to_ns);
        if r.len() < 2 {
            return None;
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
    /// Each target's cumulative bytes every 100 ms, if `counters.csv` exists.
    pub counters: Option<Counters>,
}

/// Per target (label as in files.csv): (host Unix ns, cumulative bytes of all its phases),
/// in time order.
pub type Counters = HashMap<String, Vec<(i64, u64)>>;

/// A problem with the input files, worded for the person who has to fix it.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file could not be opened or read.
    #[error("could not read {path}: {error}")]
    Io {
        /// File concerned.
        path: PathBuf,
        /// Underlying error (in the message, not chained, so it is printed once).
        error: std::io::Error,
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
    let counters_path = dir.join("counters.csv");
    let counters = if counters_path.exists() {
        Some(read_counters_csv(&counters_path)?)
    } else {
        None
    };
    Ok(RunData {
        files,
        probe,
        counters,
    })
}

/// Reads `counters.csv` (`target,time_ns,bytes`): each target's cumulative bytes every
/// 100 ms. Rows of a target out of time order are sorted; a count that goes down is an error.
pub fn read_counters_csv(path: &Path) -> Result<Counters, InputError> {
    let buf = open(path)?;
    let mut rdr = reader(&buf);
    let cols = Columns::new(path, rdr.byte_headers().map_err(|e| csv_error(path, e))?);
    let c_target = cols.required("target")?;
    let c_time = cols.required("time_ns")?;
    let c_bytes = cols.required("bytes")?;
    let mut out: Counters = HashMap::new();
    let mut rec = csv::ByteRecord::new();
    let mut lines = LineCounter::new(&buf);
    let mut rows: HashMap<String, Vec<u64>> = HashMap::new();
    while rdr
        .read_byte_record(&mut rec)
        .map_err(|e| csv_error(path, e))?
    {
        let row = lines.line_of(&rec);
        let cell = Cell { path, row };
        let target = cell.text(&rec, c_target, "target")?.to_string();
        let t: i64 = cell.int(&rec, c_time, "time_ns")?;
        let b: u64 = cell.int(&rec, c_bytes, "bytes")?;
        rows.entry(target.clone()).or_default().push(row);
        out.entry(target).or_default().push((t, b));
    }
    for (target, v) in out.iter_mut() {
        let mut idx: Vec<usize> = (0..v.len()).collect();
        idx.sort_by_key(|&i| v[i].0);
        let sorted: Vec<(i64, u64)> = idx.iter().map(|&i| v[i]).collect();
        for w in 1..sorted.len() {
            if sorted[w].1 < sorted[w - 1].1 {
                let row = rows[target][idx[w]];
                return Err(Cell { path, row }.bad(
                    "bytes",
                    &sorted[w].1.to_string(),
                    "cumulative bytes went down",
                ));
            }
        }
        *v = sorted;
    }
    Ok(out)
}

fn open(path: &Path) -> Result<Vec<u8>, InputError> {
    let mut buf = Vec::new();
    File::open(path)
        .and_then(|mut f| f.read_to_end(&mut buf))
        .map_err(|error| InputError::Io {
            path: path.to_path_buf(),
            error,
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

/// Reads `files.csv`: required columns `target,phase,index,start_ns,end_ns,bytes`; rows
/// whose optional `status` is not `ok` (files cut short) are left out.
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
    let c_status = cols.optional("status");
    let mut out = Vec::new();
    let mut incomplete = 0usize;
    let mut rec = csv::ByteRecord::new();
    let mut lines = LineCounter::new(&buf);
    while rdr
        .read_byte_record(&mut rec)
        .map_err(|e| csv_error(path, e))?
    {
        let row = lines.line_of(&rec);
        let cell = Cell { path, row };
        // A file cut short (Ctrl-C, an I/O error) is listed but not measured.
        if c_status.is_some_and(|c| rec.get(c).is_some_and(|v| v != b"ok")) {
            incomplete += 1;
            continue;
        }
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
    if out.is_empty() && incomplete == 0 {
        return Err(InputError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok(out)
}

/// Reads `probe.csv`: required `time_ns,power_w,enclosure_temp_c`; optional
/// `energy_j`; `vbus_v,current_a,die_temp_c` may be present but are not read (the
/// analysis does not use them). Rows out of time order are sorted. Plain files (no quoting) take a fast
/// path parsed on two threads; anything else goes through the full CSV reader.
pub fn read_probe_csv(path: &Path) -> Result<ProbeSeries, InputError> {
    let buf = open(path)?;
    let plain = !buf.contains(&b'"') && !buf.contains(&b'\r');
    parse_probe(path, &buf, plain)
}

/// Parses probe.csv bytes; `fast` chooses the two-thread reader (plain files only).
/// Both readers give identical series and identical errors (tested).
fn parse_probe(path: &Path, buf: &[u8], fast: bool) -> Result<ProbeSeries, InputError> {
    let mut rdr = reader(buf);
    let cols = Columns::new(path, rdr.byte_headers().map_err(|e| csv_error(path, e))?);
    let spec = ProbeColumns {
        time: cols.required("time_ns")?,
        power: cols.required("power_w")?,
        temp: cols.required("enclosure_temp_c")?,
        // The analysis uses only the energy accumulator among the optional columns; the
        // others are not read (their fields stay empty), which keeps a 1 M-row file fast.
        optional: [None, None, cols.optional("energy_j"), None],
    };
    let mut s = if fast {
        read_probe_rows_fast(path, buf, &spec)?
    } else {
        read_probe_rows_csv(path, buf, &mut rdr, &spec)?
    };
    if s.time_ns.windows(2).any(|w| w[1] < w[0]) {
        sort_by_time(&mut s);
    }
    Ok(s)
}

/// Column positions of probe.csv.
struct ProbeColumns {
    time: usize,
    power: usize,
    temp: usize,
    optional: [Option<usize>; 4],
}

const OPTIONAL_PROBE: [&str; 4] = ["vbus_v", "current_a", "energy_j", "die_temp_c"];

/// Parsed columns of a run of rows (the four optional ones in OPTIONAL_PROBE order).
#[derive(Default)]
struct ProbeChunk {
    time: Vec<i64>,
    power: Vec<f64>,
    temp: Vec<f64>,
    optional: [Vec<f64>; 4],
}

impl ProbeChunk {
    fn into_series(self) -> ProbeSeries {
        let [vbus_v, current_a, energy_j, die_temp_c] = self.optional;
        ProbeSeries {
            time_ns: self.time,
            power_w: self.power,
            enclosure_temp_c: self.temp,
            vbus_v,
            current_a,
            energy_j,
            die_temp_c,
        }
    }

    fn append(&mut self, other: ProbeChunk) {
        self.time.extend(other.time);
        self.power.extend(other.power);
        self.temp.extend(other.temp);
        for (a, b) in self.optional.iter_mut().zip(other.optional) {
            a.extend(b);
        }
    }
}

fn read_probe_rows_csv(
    path: &Path,
    buf: &[u8],
    rdr: &mut csv::Reader<&[u8]>,
    spec: &ProbeColumns,
) -> Result<ProbeSeries, InputError> {
    let mut c = ProbeChunk::default();
    let mut rec = csv::ByteRecord::new();
    let mut lines = LineCounter::new(buf);
    while rdr
        .read_byte_record(&mut rec)
        .map_err(|e| csv_error(path, e))?
    {
        let row = lines.line_of(&rec);
        let cell = Cell { path, row };
        c.time.push(cell.int(&rec, spec.time, "time_ns")?);
        c.power.push(cell.float(&rec, spec.power, "power_w")?);
        c.temp
            .push(cell.float(&rec, spec.temp, "enclosure_temp_c")?);
        for (k, col) in spec.optional.iter().enumerate() {
            if let Some(col) = col {
                c.optional[k].push(cell.float(&rec, *col, OPTIONAL_PROBE[k])?);
            }
        }
    }
    Ok(c.into_series())
}

/// Parses rows of a quote-free file: `lines` starts at 1-based file line `first_row`.
fn parse_probe_lines(
    path: &Path,
    lines: &[u8],
    first_row: u64,
    spec: &ProbeColumns,
) -> Result<ProbeChunk, InputError> {
    let mut c = ProbeChunk::default();
    let hint = lines.len() / 70;
    c.time.reserve(hint);
    c.power.reserve(hint);
    c.temp.reserve(hint);
    for (k, col) in spec.optional.iter().enumerate() {
        if col.is_some() {
            c.optional[k].reserve(hint);
        }
    }
    let max_col = [spec.time, spec.power, spec.temp]
        .into_iter()
        .chain(spec.optional.iter().flatten().copied())
        .max()
        .unwrap_or(0);
    let mut fields: Vec<&[u8]> = Vec::with_capacity(max_col + 1);
    for (i, line) in lines.split(|&b| b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        let row = first_row + i as u64;
        fields.clear();
        fields.extend(line.split(|&b| b == b',').take(max_col + 1));
        let get = |col: usize| fields.get(col).copied().unwrap_or(b"");
        let bad = |column: &str, v: &[u8], message: &str| InputError::BadValue {
            path: path.to_path_buf(),
            row,
            column: column.to_string(),
            value: String::from_utf8_lossy(v).trim().to_string(),
            message: message.to_string(),
        };
        let float = |col: usize, name: &str| -> Result<f64, InputError> {
            let v = get(col);
            if let Some(x) = fast_decimal(v) {
                return Ok(x);
            }
            let t = std::str::from_utf8(v)
                .map_err(|_| bad(name, v, "not UTF-8"))?
                .trim();
            if t.is_empty() {
                return Ok(f64::NAN);
            }
            t.parse::<f64>()
                .map_err(|_| bad(name, v, "expected a number"))
        };
        let tv = get(spec.time);
        let t = fast_int(tv)
            .or_else(|| {
                std::str::from_utf8(tv)
                    .ok()
                    .and_then(|t| t.trim().parse::<i64>().ok())
            })
            .ok_or_else(|| bad("time_ns", tv, "expected a whole number"))?;
        c.time.push(t);
        c.power.push(float(spec.power, "power_w")?);
        c.temp.push(float(spec.temp, "enclosure_temp_c")?);
        for (k, col) in spec.optional.iter().enumerate() {
            if let Some(col) = col {
                c.optional[k].push(float(*col, OPTIONAL_PROBE[k])?);
            }
        }
    }
    Ok(c)
}

/// Powers of ten exactly representable as f64.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Plain decimals (`-12.345`, at most 15 significant digits, no exponent) parsed exactly:
/// the digits form an integer below 2⁵³ and one division by an exact power of ten is
/// correctly rounded (Clinger's fast path). None for anything else (the caller falls back
/// to the standard parser).
fn fast_decimal(v: &[u8]) -> Option<f64> {
    let (neg, digits) = match v.first()? {
        b'-' => (true, &v[1..]),
        _ => (false, v),
    };
    let (mut mant, mut n, mut frac, mut dot) = (0u64, 0usize, 0usize, false);
    for &b in digits {
        match b {
            b'0'..=b'9' => {
                mant = mant * 10 + u64::from(b - b'0');
                n += 1;
                frac += usize::from(dot);
            }
            b'.' if !dot => dot = true,
            _ => return None,
        }
    }
    if n == 0 || n > 15 {
        return None;
    }
    let x = mant as f64 / POW10[frac];
    Some(if neg { -x } else { x })
}

/// Plain whole numbers that fit an i64.
fn fast_int(v: &[u8]) -> Option<i64> {
    let (neg, digits) = match v.first()? {
        b'-' => (true, &v[1..]),
        _ => (false, v),
    };
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    let mut x = 0i64;
    for &b in digits {
        if !b.is_ascii_digit() {
            return None;
        }
        x = x.checked_mul(10)?.checked_add(i64::from(b - b'0'))?;
    }
    Some(if neg { -x } else { x })
}

fn read_probe_rows_fast(
    path: &Path,
    buf: &[u8],
    spec: &ProbeColumns,
) -> Result<ProbeSeries, InputError> {
    let body_start = buf
        .iter()
        .position(|&b| b == b'\n')
        .map_or(buf.len(), |p| p + 1);
    let body = &buf[body_start..];
    // Two halves split at a line boundary, parsed in parallel.
    let mid = body.len() / 2;
    let cut = body[mid..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(body.len(), |p| mid + p + 1);
    let (first, second) = body.split_at(cut);
    let second_row = 2 + first.iter().filter(|&&b| b == b'\n').count() as u64;
    let (a, b) = std::thread::scope(|scope| {
        let h = scope.spawn(|| parse_probe_lines(path, second, second_row, spec));
        let a = parse_probe_lines(path, first, 2, spec);
        (a, h.join().expect("probe parser thread"))
    });
    let mut a = a?;
    a.append(b?);
    Ok(a.into_series())
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
    fn files_cut_short_are_left_out_as_the_summary_leaves_them_out() {
        let d = tempfile::tempdir().unwrap();
        let p = write(d.path(), "files.csv", "target,phase,index,start_ns,end_ns,bytes,status\nA,write,0,0,10,100,ok\nA,write,1,10,15,7,interrupted\nA,write,2,15,16,1,error: EIO\n");
        let f = read_files_csv(&p).unwrap();
        assert_eq!(f.iter().map(|f| f.index).collect::<Vec<_>>(), [0]);
    }

    #[test]
    fn accumulator_energy_is_linear_between_its_changes_not_its_repeated_readings() {
        // Read every 1 ns, updated every 10 ns: 0 J at 0, 1 J at 10, 3 J at 20.
        let time_ns: Vec<i64> = (0..=20).collect();
        let energy_j = time_ns
            .iter()
            .map(|&t| {
                if t < 10 {
                    0.0
                } else if t < 20 {
                    1.0
                } else {
                    3.0
                }
            })
            .collect();
        let p = ProbeSeries {
            power_w: vec![0.0; 21],
            time_ns,
            energy_j,
            ..Default::default()
        };
        assert_eq!(p.energy_at(5), Some(0.5));
        assert_eq!(p.energy_between(5, 15), Some(1.5));
        assert_eq!(p.energy_at(21), None);
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
    fn probe_fast_path_reports_the_right_row_in_its_second_half_and_matches_the_csv_path() {
        let d = tempfile::tempdir().unwrap();
        let mut text = String::from("time_ns,power_w,enclosure_temp_c,energy_j\n");
        for i in 0..1000 {
            text.push_str(&format!("{i},{}.5,40.0,{i}\n", i % 7));
        }
        let plain = read_probe_csv(&write(d.path(), "a.csv", &text)).unwrap();
        let quoted = read_probe_csv(&write(
            d.path(),
            "b.csv",
            &text.replacen("time_ns", "\"time_ns\"", 1),
        ))
        .unwrap();
        assert_eq!(plain, quoted);
        assert_eq!(plain.len(), 1000);
        assert_eq!(plain.power_w[999], 5.5);
        let broken = text.replace("\n900,", "\n900x,");
        let e = read_probe_csv(&write(d.path(), "c.csv", &broken))
            .unwrap_err()
            .to_string();
        assert!(e.contains("row 902, column `time_ns`"), "{e}");
    }

    #[test]
    fn both_probe_readers_agree_on_awkward_files() {
        let header = "time_ns,power_w,enclosure_temp_c,energy_j\n";
        let bodies = [
            "1,2.5,40,0.1\n2,2.6,40.1,0.2\n",       // plain
            "1,2.5,40,0.1\n2,2.6,40.1,0.2",         // no trailing newline
            "1,2.5\n2,2.6,40.1\n",                  // short rows
            "1,2.5,40,0.1,extra,cells\n",           // long row
            "1,,,\n2,2.6,,0.2\n",                   // empty cells
            "1, 2.5 ,40 , 0.1\n 2,2.6,40.1,0.2\n",  // spaces
            "1,2.5,40,0.1\n\n\n2,2.6,40.1,0.2\n\n", // blank lines
            "1,2.5,40,0.1\n2,2.x,40.1,0.2\n",       // bad number
            "1,2.5,40,0.1\n\n2x,2.6,40.1,0.2\n",    // bad time after a blank line
            "2,2.5,40,1e-3\n1,-2.6,4E1,0.2\n",      // exponents, negative, unsorted
        ];
        let p = Path::new("probe.csv");
        for body in bodies {
            let buf = format!("{header}{body}").into_bytes();
            let fast = parse_probe(p, &buf, true).map_err(|e| e.to_string());
            let full = parse_probe(p, &buf, false).map_err(|e| e.to_string());
            let same = match (&fast, &full) {
                (Ok(a), Ok(b)) => format!("{a:?}") == format!("{b:?}"), // NaN-aware equality
                (Err(a), Err(b)) => a == b,
                _ => false,
            };
            assert!(same, "{body:?}: fast {fast:?} vs csv {full:?}");
        }
    }

    #[test]
    fn fast_number_parsing_is_exact_or_declines() {
        for t in [
            "0",
            "4.99921875",
            "-12.5",
            "123456.789",
            "0.00012",
            "8.2149658203125",
        ] {
            assert_eq!(
                fast_decimal(t.as_bytes()),
                Some(t.parse::<f64>().unwrap()),
                "{t}"
            );
        }
        for t in ["1e3", "", "-", "1.2.3", "nan", "1234567890123456.7", " 1"] {
            assert_eq!(fast_decimal(t.as_bytes()), None, "{t}");
        }
        assert_eq!(
            fast_int(b"1795281402842177466"),
            Some(1_795_281_402_842_177_466)
        );
        assert_eq!(fast_int(b"-5"), Some(-5));
        assert_eq!(fast_int(b"5x"), None);
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
        assert!(s.vbus_v.is_empty() && s.die_temp_c.is_empty());
        let e = read_probe_csv(&write(
            d.path(),
            "p2.csv",
            "time_ns,power_w,enclosure_temp_c\n1,x,3\n",
        ))
        .unwrap_err();
        assert!(e.to_string().contains("row 2, column `power_w`"), "{e}");
    }
}
