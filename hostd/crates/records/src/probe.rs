//! `probe.csv`: every aligned probe sample (docs/run-directory.md, "probe.csv").

use crate::columns::{column_table, Cell, Columns as _, ReadCells as _, Value};
use crate::csvio::LineWriter;
use crate::csvio::{read_file, slurp, Table};
use crate::error::Result;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// File name in the run directory.
pub const FILE_NAME: &str = "probe.csv";
/// Newest format this build reads and the one it writes.
pub const FORMAT_VERSION: u32 = 1;
/// One probe sample in physical units on the host's time axis. Channels the
/// probe did not measure for this sample are `None`. `energy_j` and
/// `charge_c` are the accumulators unwrapped since the link started
/// (continuous across 40-bit wraps), held from the latest reading.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ProbeSample {
    /// Host Unix time in nanoseconds (aligned).
    pub time_ns: i64,
    /// Probe sequence number.
    pub seq: u64,
    /// Probe clock in microseconds (0 when read back from `probe.csv`).
    pub probe_time_us: u64,
    /// Bus voltage in volts.
    pub vbus_v: Option<f64>,
    /// Current in amperes.
    pub current_a: Option<f64>,
    /// Bus power in watts.
    pub power_w: Option<f64>,
    /// Energy since the first accumulator reading, in joules.
    pub energy_j: Option<f64>,
    /// Charge since the first accumulator reading, in coulombs.
    pub charge_c: Option<f64>,
    /// INA228 die temperature in °C.
    pub die_temp_c: Option<f64>,
    /// Enclosure temperature (first sensor) in °C, held from the latest reading.
    pub enclosure_temp_c: Option<f64>,
    /// Lowest bus voltage of the batch the sample came in, V (wire v3's
    /// `SampleBatch.vbus_min`): it may lie below every sample's own reading, a sag shorter
    /// than one sample period. None from older probes and in older runs.
    pub vbus_min_v: Option<f64>,
}

column_table! {
    /// Columns, in order (`probe_time_us` is not written: it is the probe's own clock);
    /// numbers in Rust's shortest round-trip form, so reading gives the same `f64`.
    pub const COLUMNS for ProbeSample {
        "time_ns" (Time, required): |s| Value::Int(s.time_ns), |s, c| s.time_ns = c.int()?;
        "seq" (Field): |s| Value::Count(s.seq), |s, c| s.seq = c.opt_int()?.unwrap_or(0);
        "vbus_v" (Field): |s| Value::float(s.vbus_v), |s, c| s.vbus_v = c.opt_float()?;
        "current_a" (Field): |s| Value::float(s.current_a), |s, c| s.current_a = c.opt_float()?;
        "power_w" (Field): |s| Value::float(s.power_w), |s, c| s.power_w = c.opt_float()?;
        "energy_j" (Field): |s| Value::float(s.energy_j), |s, c| s.energy_j = c.opt_float()?;
        "charge_c" (Field): |s| Value::float(s.charge_c), |s, c| s.charge_c = c.opt_float()?;
        "die_temp_c" (Field): |s| Value::float(s.die_temp_c), |s, c| s.die_temp_c = c.opt_float()?;
        "enclosure_temp_c" (Field): |s| Value::float(s.enclosure_temp_c),
            |s, c| s.enclosure_temp_c = c.opt_float()?;
        "vbus_min_v" (Field): |s| Value::float(s.vbus_min_v), |s, c| s.vbus_min_v = c.opt_float()?;
    }
}

impl ProbeSample {
    /// The lowest bus voltage the sample tells of: its own reading or its batch's minimum,
    /// whichever is lower (the one present when only one is).
    pub fn vbus_lowest_v(&self) -> Option<f64> {
        match (self.vbus_v, self.vbus_min_v) {
            (Some(v), Some(m)) => Some(v.min(m)),
            (v, m) => v.or(m),
        }
    }

    /// Appends this sample as one `probe.csv` line (with newline) to `out`.
    pub fn write_csv_line(&self, out: &mut String) {
        ProbeSample::write_csv_plain(Some(self), out, true);
        out.push('\n');
    }
}

/// Probe samples column by column, the in-memory form the analysis and the report use:
/// `time_ns`, `power_w`, `enclosure_temp_c` and `energy_j` (NaN where a sample lacks the
/// channel; `energy_j` empty when no sample has it). `hostd run` builds it as samples
/// arrive, `hostd analyze` from `probe.csv`; both through [`ProbeSeries::push`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProbeSeries {
    /// Sample time, host Unix ns, ascending.
    pub time_ns: Vec<i64>,
    /// Bus power, W.
    pub power_w: Vec<f64>,
    /// Enclosure temperature, °C (NaN where the sensor gave nothing).
    pub enclosure_temp_c: Vec<f64>,
    /// INA228 energy accumulator, J (empty when no sample has it).
    pub energy_j: Vec<f64>,
    /// Bus voltage, V (NaN where a sample lacks it; a summary level's bin mean). Empty
    /// in series built by hand without it.
    pub vbus_v: Vec<f64>,
    /// Lowest bus voltage the point covers, V: the lower of the sample's own reading and
    /// its batch's minimum ([`ProbeSample::vbus_lowest_v`]), or a summary level's bin
    /// minimum, so that a sag shorter than a sample or a bin is still seen.
    pub vbus_min_v: Vec<f64>,
    /// Samples pushed before the first with an energy reading (`energy_j` starts then).
    energy_from: usize,
}

impl ProbeSeries {
    /// The series of `samples`.
    pub fn from_samples(samples: &[ProbeSample]) -> ProbeSeries {
        let mut s = ProbeSeries::default();
        samples.iter().for_each(|x| s.push(x));
        s.finish();
        s
    }

    /// Appends one sample.
    pub fn push(&mut self, s: &ProbeSample) {
        self.time_ns.push(s.time_ns);
        self.power_w.push(s.power_w.unwrap_or(f64::NAN));
        self.enclosure_temp_c
            .push(s.enclosure_temp_c.unwrap_or(f64::NAN));
        self.push_vbus(s.vbus_v, s.vbus_lowest_v());
        match s.energy_j {
            Some(e) => {
                if self.energy_j.is_empty() {
                    self.energy_j.resize(self.energy_from, f64::NAN);
                }
                self.energy_j.push(e);
            }
            None if self.energy_j.is_empty() => self.energy_from += 1,
            None => self.energy_j.push(f64::NAN),
        }
    }

    /// Appends the bus voltage of the point just pushed: its mean and its minimum.
    pub(crate) fn push_vbus(&mut self, mean: Option<f64>, min: Option<f64>) {
        let n = self.time_ns.len();
        self.vbus_v.resize(n - 1, f64::NAN);
        self.vbus_min_v.resize(n - 1, f64::NAN);
        self.vbus_v.push(mean.unwrap_or(f64::NAN));
        self.vbus_min_v.push(min.or(mean).unwrap_or(f64::NAN));
    }

    /// Replaces the bus voltage of the last point (a summary level's bin: its mean and
    /// its minimum).
    pub(crate) fn set_last_vbus(&mut self, mean: Option<f64>, min: Option<f64>) {
        self.vbus_v.pop();
        self.vbus_min_v.pop();
        self.push_vbus(mean, min);
    }

    /// After the last push: puts samples received out of time order in order (stable).
    pub fn finish(&mut self) {
        if !self.time_ns.windows(2).any(|w| w[1] < w[0]) {
            return;
        }
        let mut order: Vec<usize> = (0..self.len()).collect();
        order.sort_by_key(|&i| self.time_ns[i]);
        let permute = |v: &Vec<f64>| -> Vec<f64> {
            if v.is_empty() {
                Vec::new()
            } else {
                order.iter().map(|&i| v[i]).collect()
            }
        };
        self.power_w = permute(&self.power_w);
        self.enclosure_temp_c = permute(&self.enclosure_temp_c);
        self.energy_j = permute(&self.energy_j);
        self.vbus_v = permute(&self.vbus_v);
        self.vbus_min_v = permute(&self.vbus_min_v);
        self.time_ns = order.iter().map(|&i| self.time_ns[i]).collect();
    }

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

/// Streams `probe.csv` (buffered; `flush` at the end or a checkpoint).
pub type Writer = LineWriter<ProbeSample>;

impl Writer {
    /// Creates `dir/probe.csv` with its header.
    pub fn create(dir: &Path) -> Result<Writer> {
        LineWriter::open(
            dir.join(FILE_NAME),
            &COLUMNS.join(","),
            256 * 1024,
            ProbeSample::write_csv_line,
        )
    }
}

/// Reads `dir/probe.csv`, refusing a newer format.
pub fn read(dir: &Path) -> Result<Vec<ProbeSample>> {
    read_requiring(dir, &[])
}

/// Reads `dir/probe.csv` as [`read`], refusing a file without the `required` columns (what
/// the analysis cannot do without: `power_w`, `enclosure_temp_c`).
pub fn read_requiring(dir: &Path, required: &[&str]) -> Result<Vec<ProbeSample>> {
    read_columns(dir, required, None)
}

/// The columns [`ProbeSeries`] keeps.
const SERIES_COLUMNS: [&str; 6] = [
    "time_ns",
    "power_w",
    "energy_j",
    "enclosure_temp_c",
    "vbus_v",
    "vbus_min_v",
];

/// Reads `dir/probe.csv` straight into the analysis' columns (`power_w` and
/// `enclosure_temp_c` required); the other columns are not parsed, which keeps a 1 M-sample
/// file fast. The same series as `ProbeSeries::from_samples(&read(dir)?)`.
pub fn read_series(dir: &Path) -> Result<ProbeSeries> {
    let samples = read_columns(dir, &["power_w", "enclosure_temp_c"], Some(&SERIES_COLUMNS))?;
    Ok(ProbeSeries::from_samples(&samples))
}

fn read_columns(dir: &Path, required: &[&str], only: Option<&[&str]>) -> Result<Vec<ProbeSample>> {
    read_file(dir, FILE_NAME, FORMAT_VERSION, |path, buf| {
        let plain = !buf.contains(&b'"') && !buf.contains(&b'\r');
        parse_only(path, buf, plain, required, only)
    })
}

/// Reads one `probe.csv`: `time_ns` required, every other column optional (an absent column
/// or an empty cell is a channel not measured; `seq` absent is 0). Rows out of time order are
/// sorted. A plain file (no quoting) takes a fast path parsed on two threads; anything else
/// goes through the full CSV reader; both give the same samples and the same errors.
pub fn read_path(path: &Path) -> Result<Vec<ProbeSample>> {
    let buf = slurp(path)?;
    parse(path, &buf)
}

/// Parses the bytes of a `probe.csv` (`path` names it in errors), as [`read_path`].
pub fn parse(path: &Path, buf: &[u8]) -> Result<Vec<ProbeSample>> {
    let plain = !buf.contains(&b'"') && !buf.contains(&b'\r');
    parse_with(path, buf, plain, &[])
}

fn parse_with(path: &Path, buf: &[u8], fast: bool, required: &[&str]) -> Result<Vec<ProbeSample>> {
    parse_only(path, buf, fast, required, None)
}

/// Parses with `only` the listed columns read (all when None; `time_ns` always).
fn parse_only(
    path: &Path,
    buf: &[u8],
    fast: bool,
    required: &[&str],
    only: Option<&[&str]>,
) -> Result<Vec<ProbeSample>> {
    let mut t = Table::new(path, buf)?;
    for name in required.iter().chain(ProbeSample::REQUIRED) {
        t.required(name)?;
    }
    let wanted = |name: &str| {
        ProbeSample::REQUIRED.contains(&name) || only.map_or(true, |o| o.contains(&name))
    };
    let cols: Cols = std::array::from_fn(|k| t.optional(COLUMNS[k]).filter(|_| wanted(COLUMNS[k])));
    let mut samples = if fast {
        parse_fast(path, buf, &cols)?
    } else {
        let mut out = Vec::new();
        while let Some(row) = t.next_row()? {
            let mut s = ProbeSample::default();
            row.read(&mut s, &cols)?;
            out.push(s);
        }
        out
    };
    if samples.windows(2).any(|w| w[1].time_ns < w[0].time_ns) {
        samples.sort_by_key(|s| s.time_ns);
    }
    Ok(samples)
}

/// Position of each of [`COLUMNS`] in the file (None: absent or not read).
type Cols = [Option<usize>; 10];

fn parse_fast(path: &Path, buf: &[u8], cols: &Cols) -> Result<Vec<ProbeSample>> {
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
    let second_line = 2 + first.iter().filter(|&&b| b == b'\n').count() as u64;
    let (a, b) = std::thread::scope(|scope| {
        let h = scope.spawn(|| parse_lines(path, second, second_line, cols));
        let a = parse_lines(path, first, 2, cols);
        (a, h.join().expect("probe parser thread"))
    });
    let mut a = a?;
    a.extend(b?);
    Ok(a)
}

/// Parses rows of a quote-free file: `lines` starts at 1-based file line `first_line`.
fn parse_lines(
    path: &Path,
    lines: &[u8],
    first_line: u64,
    cols: &Cols,
) -> Result<Vec<ProbeSample>> {
    let mut out = Vec::with_capacity(lines.len() / 70);
    let max_col = cols.iter().flatten().copied().max().unwrap_or(0);
    let mut fields: Vec<&[u8]> = Vec::with_capacity(max_col + 1);
    for (i, line) in lines.split(|&b| b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        let line_no = first_line + i as u64;
        fields.clear();
        fields.extend(line.split(|&b| b == b',').take(max_col + 1));
        let mut s = ProbeSample::default();
        s.read_cells(|k, name| {
            cols[k].map(|col| Cell {
                path,
                line: line_no,
                name,
                raw: fields.get(col).copied().unwrap_or(b""),
            })
        })?;
        out.push(s);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::csvio::testing::assert_newer_format_refused;

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

    fn sample(i: i64) -> ProbeSample {
        ProbeSample {
            time_ns: 1_795_280_425_231_439_833 + i * 1_000_000,
            seq: i as u64,
            probe_time_us: 0,
            vbus_v: Some(5.0 - i as f64 * 1e-4),
            current_a: Some(0.159912109375),
            power_w: Some(0.79949951171875 + i as f64 / 3.0),
            energy_j: (i > 0).then_some(i as f64 * 0.1),
            charge_c: Some(0.0),
            die_temp_c: Some(28.0),
            enclosure_temp_c: None,
            vbus_min_v: (i % 3 == 0).then_some(4.5 - i as f64 * 1e-4),
        }
    }

    #[test]
    fn samples_round_trip_exactly() {
        let d = tempfile::tempdir().unwrap();
        let samples: Vec<ProbeSample> = (0..500).map(sample).collect();
        let mut w = Writer::create(d.path()).unwrap();
        w.write(&samples[..200]).unwrap();
        w.write(&samples[200..]).unwrap();
        w.flush().unwrap();
        assert_eq!(w.written(), 500);
        assert_eq!(read(d.path()).unwrap(), samples);
        assert_newer_format_refused(d.path(), FILE_NAME, FORMAT_VERSION, read);
    }

    #[test]
    fn the_fast_path_names_the_line_in_its_second_half_and_matches_the_csv_path() {
        let mut text = String::from("time_ns,power_w,enclosure_temp_c,energy_j\n");
        for i in 0..1000 {
            text.push_str(&format!("{i},{}.5,40.0,{i}\n", i % 7));
        }
        let p = Path::new("probe.csv");
        let fast = parse_with(p, text.as_bytes(), true, &[]).unwrap();
        assert_eq!(fast, parse_with(p, text.as_bytes(), false, &[]).unwrap());
        assert_eq!(fast.len(), 1000);
        assert_eq!(fast[999].power_w, Some(5.5));
        let broken = text.replace("\n900,", "\n900x,");
        let e = parse_with(p, broken.as_bytes(), true, &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("probe.csv: line 902, column `time_ns`"), "{e}");
    }

    #[test]
    fn both_readers_agree_on_awkward_files() {
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
            let fast = parse_with(p, &buf, true, &[]).map_err(|e| e.to_string());
            let full = parse_with(p, &buf, false, &[]).map_err(|e| e.to_string());
            assert_eq!(fast, full, "{body:?}");
        }
    }

    #[test]
    fn the_series_reader_gives_the_series_of_all_samples() {
        let d = tempfile::tempdir().unwrap();
        let samples: Vec<ProbeSample> = (0..300).rev().map(sample).collect();
        let mut w = Writer::create(d.path()).unwrap();
        w.write(&samples).unwrap();
        w.flush().unwrap();
        let want = ProbeSeries::from_samples(&read(d.path()).unwrap());
        assert_eq!(
            format!("{:?}", read_series(d.path()).unwrap()),
            format!("{want:?}")
        );
        assert_eq!(want.len(), 300);
    }

    #[test]
    fn the_batch_minimum_lowers_the_series_minimum_and_older_files_read_without_it() {
        // An older run's probe.csv (no `vbus_min_v`): each point's lowest VBUS is its own.
        let old = b"time_ns,power_w,enclosure_temp_c,vbus_v\n1,2.0,40,5.01\n2,2.0,40,4.98\n";
        let samples = parse(Path::new("probe.csv"), old).unwrap();
        assert!(samples.iter().all(|s| s.vbus_min_v.is_none()));
        assert_eq!(ProbeSeries::from_samples(&samples).vbus_min_v, [5.01, 4.98]);
        // A v3 probe's batch minimum below every sample's reading: a sag shorter than a
        // sample period, kept in the file and in the series' minimum (not in its mean).
        let d = tempfile::tempdir().unwrap();
        let mut w = Writer::create(d.path()).unwrap();
        let mut s: Vec<ProbeSample> = samples
            .iter()
            .map(|x| ProbeSample {
                vbus_min_v: Some(4.52),
                ..*x
            })
            .collect();
        s[1].vbus_min_v = Some(5.2); // above the reading: the reading is the lowest
        w.write(&s).unwrap();
        w.flush().unwrap();
        let back = read_series(d.path()).unwrap();
        assert_eq!(back.vbus_min_v, [4.52, 4.98]);
        assert_eq!(back.vbus_v, [5.01, 4.98]);
        assert_eq!(read(d.path()).unwrap(), s);
    }

    #[test]
    fn a_required_column_missing_is_named() {
        let e = parse_with(
            Path::new("probe.csv"),
            b"time_ns,enclosure_temp_c\n1,2\n",
            true,
            &["power_w"],
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("missing required column `power_w`"), "{e}");
    }
}
