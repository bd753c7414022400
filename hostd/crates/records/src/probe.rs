//! `probe.csv`: every aligned probe sample (docs/run-directory.md, "probe.csv").

use crate::csvio::{bad_value, slurp, Table};
use crate::error::{RecordError, Result};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// File name in the run directory.
pub const FILE_NAME: &str = "probe.csv";
/// Newest format this build reads and the one it writes.
pub const FORMAT_VERSION: u32 = 1;
/// Columns, in order (`probe_time_us` is not written: it is the probe's own clock).
pub const COLUMNS: [&str; 9] = [
    "time_ns",
    "seq",
    "vbus_v",
    "current_a",
    "power_w",
    "energy_j",
    "charge_c",
    "die_temp_c",
    "enclosure_temp_c",
];

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
}

impl ProbeSample {
    /// The channels in [`COLUMNS`] order after `time_ns,seq`.
    pub fn channels(&self) -> [Option<f64>; 7] {
        [
            self.vbus_v,
            self.current_a,
            self.power_w,
            self.energy_j,
            self.charge_c,
            self.die_temp_c,
            self.enclosure_temp_c,
        ]
    }

    fn channels_mut(&mut self) -> [&mut Option<f64>; 7] {
        [
            &mut self.vbus_v,
            &mut self.current_a,
            &mut self.power_w,
            &mut self.energy_j,
            &mut self.charge_c,
            &mut self.die_temp_c,
            &mut self.enclosure_temp_c,
        ]
    }

    /// Appends this sample as one `probe.csv` line (with newline) to `out`; numbers in
    /// Rust's shortest round-trip form, so reading gives the same `f64`.
    pub fn write_csv_line(&self, out: &mut String) {
        use std::fmt::Write;
        let _ = write!(out, "{},{}", self.time_ns, self.seq);
        for value in self.channels() {
            match value {
                Some(v) => {
                    let _ = write!(out, ",{v}");
                }
                None => out.push(','),
            }
        }
        out.push('\n');
    }
}

/// Streams `probe.csv` (buffered; [`Writer::flush`] at the end or a checkpoint).
pub struct Writer {
    path: PathBuf,
    out: BufWriter<File>,
    line: String,
    written: u64,
}

impl Writer {
    /// Creates `dir/probe.csv` with its header.
    pub fn create(dir: &Path) -> Result<Writer> {
        let path = dir.join(FILE_NAME);
        let file = File::create(&path).map_err(|e| RecordError::write(&path, e))?;
        let mut out = BufWriter::with_capacity(256 * 1024, file);
        writeln!(out, "{}", COLUMNS.join(",")).map_err(|e| RecordError::write(&path, e))?;
        Ok(Writer {
            path,
            out,
            line: String::with_capacity(64 * 1024),
            written: 0,
        })
    }

    /// Appends samples.
    pub fn write(&mut self, samples: &[ProbeSample]) -> Result<()> {
        self.line.clear();
        samples
            .iter()
            .for_each(|s| s.write_csv_line(&mut self.line));
        self.out
            .write_all(self.line.as_bytes())
            .map_err(|e| RecordError::write(&self.path, e))?;
        self.written += samples.len() as u64;
        Ok(())
    }

    /// Samples written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Pushes buffered samples to the file.
    pub fn flush(&mut self) -> Result<()> {
        self.out
            .flush()
            .map_err(|e| RecordError::write(&self.path, e))
    }
}

/// Reads `dir/probe.csv`, refusing a newer format.
pub fn read(dir: &Path) -> Result<Vec<ProbeSample>> {
    crate::version::check_csv(dir, FILE_NAME, FORMAT_VERSION)?;
    read_path(&dir.join(FILE_NAME))
}

/// Reads one `probe.csv`: `time_ns` required, every other column optional (an absent column
/// or an empty cell is a channel not measured; `seq` absent is 0). Rows out of time order are
/// sorted. A plain file (no quoting) takes a fast path parsed on two threads; anything else
/// goes through the full CSV reader; both give the same samples and the same errors.
pub fn read_path(path: &Path) -> Result<Vec<ProbeSample>> {
    let buf = slurp(path)?;
    let plain = !buf.contains(&b'"') && !buf.contains(&b'\r');
    parse(path, &buf, plain)
}

fn parse(path: &Path, buf: &[u8], fast: bool) -> Result<Vec<ProbeSample>> {
    let mut t = Table::new(path, buf)?;
    let spec = Spec {
        time: t.required("time_ns")?,
        seq: t.optional("seq"),
        channels: std::array::from_fn(|k| t.optional(COLUMNS[k + 2])),
    };
    let mut samples = if fast {
        parse_fast(path, buf, &spec)?
    } else {
        let mut out = Vec::new();
        while let Some(row) = t.next_row()? {
            let mut s = ProbeSample {
                time_ns: row.int(spec.time, "time_ns")?,
                seq: row.opt_int(spec.seq, "seq")?.unwrap_or(0),
                ..ProbeSample::default()
            };
            for (k, slot) in s.channels_mut().into_iter().enumerate() {
                *slot = row.opt_float(spec.channels[k], COLUMNS[k + 2])?;
            }
            out.push(s);
        }
        out
    };
    if samples.windows(2).any(|w| w[1].time_ns < w[0].time_ns) {
        samples.sort_by_key(|s| s.time_ns);
    }
    Ok(samples)
}

/// Column positions of the fields.
struct Spec {
    time: usize,
    seq: Option<usize>,
    channels: [Option<usize>; 7],
}

fn parse_fast(path: &Path, buf: &[u8], spec: &Spec) -> Result<Vec<ProbeSample>> {
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
        let h = scope.spawn(|| parse_lines(path, second, second_line, spec));
        let a = parse_lines(path, first, 2, spec);
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
    spec: &Spec,
) -> Result<Vec<ProbeSample>> {
    let mut out = Vec::with_capacity(lines.len() / 70);
    let max_col = std::iter::once(spec.time)
        .chain(spec.seq)
        .chain(spec.channels.iter().flatten().copied())
        .max()
        .unwrap_or(0);
    let mut fields: Vec<&[u8]> = Vec::with_capacity(max_col + 1);
    for (i, line) in lines.split(|&b| b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        let line_no = first_line + i as u64;
        fields.clear();
        fields.extend(line.split(|&b| b == b',').take(max_col + 1));
        let get = |col: usize| fields.get(col).copied().unwrap_or(b"");
        let bad =
            |column: &str, v: &[u8], message: &str| bad_value(path, line_no, column, v, message);
        let text = |v: &[u8], name: &str| -> Result<String> {
            Ok(std::str::from_utf8(v)
                .map_err(|_| bad(name, v, "not UTF-8"))?
                .trim()
                .to_string())
        };
        let int = |col: usize, name: &str| -> Result<Option<i64>> {
            let v = get(col);
            if let Some(x) = fast_int(v) {
                return Ok(Some(x));
            }
            let t = text(v, name)?;
            if t.is_empty() {
                return Ok(None);
            }
            t.parse::<i64>()
                .map(Some)
                .map_err(|_| bad(name, v, "expected a whole number"))
        };
        let mut s = ProbeSample {
            time_ns: int(spec.time, "time_ns")?
                .ok_or_else(|| bad("time_ns", b"", "expected a whole number"))?,
            ..ProbeSample::default()
        };
        if let Some(c) = spec.seq {
            let v = get(c);
            s.seq = match fast_int(v) {
                Some(x) if x >= 0 => x as u64,
                _ => {
                    let t = text(v, "seq")?;
                    if t.is_empty() {
                        0
                    } else {
                        t.parse::<u64>()
                            .map_err(|_| bad("seq", v, "expected a whole number"))?
                    }
                }
            };
        }
        for (k, slot) in s.channels_mut().into_iter().enumerate() {
            let Some(col) = spec.channels[k] else {
                continue;
            };
            let v = get(col);
            *slot = match fast_decimal(v) {
                Some(x) => Some(x),
                None => {
                    let t = text(v, COLUMNS[k + 2])?;
                    if t.is_empty() {
                        None
                    } else {
                        Some(
                            t.parse::<f64>()
                                .map_err(|_| bad(COLUMNS[k + 2], v, "expected a number"))?,
                        )
                    }
                }
            };
        }
        out.push(s);
    }
    Ok(out)
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

#[cfg(test)]
mod tests {
    use super::*;

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
    }

    #[test]
    fn the_fast_path_names_the_line_in_its_second_half_and_matches_the_csv_path() {
        let mut text = String::from("time_ns,power_w,enclosure_temp_c,energy_j\n");
        for i in 0..1000 {
            text.push_str(&format!("{i},{}.5,40.0,{i}\n", i % 7));
        }
        let p = Path::new("probe.csv");
        let fast = parse(p, text.as_bytes(), true).unwrap();
        assert_eq!(fast, parse(p, text.as_bytes(), false).unwrap());
        assert_eq!(fast.len(), 1000);
        assert_eq!(fast[999].power_w, Some(5.5));
        let broken = text.replace("\n900,", "\n900x,");
        let e = parse(p, broken.as_bytes(), true).unwrap_err().to_string();
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
            let fast = parse(p, &buf, true).map_err(|e| e.to_string());
            let full = parse(p, &buf, false).map_err(|e| e.to_string());
            assert_eq!(fast, full, "{body:?}");
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
}
