//! `probe/levels-NNNNNN.parquet`: the probe samples summarised at several resolutions (min,
//! mean and max of each channel per bin, as Joulescope's JLS files keep them), written as
//! the run goes, beside the samples (docs/run-directory.md, "probe/"). They supersede
//! `probe_agg.csv`, which holds the 10 ms level alone as text (about 23 bytes per sample at
//! 1 kHz, four times the samples themselves).
//!
//! Levels stored: [`Level::Ms10`] (the bins `probe_agg.csv` held, and the `probe_agg`
//! InfluxDB measurement) and [`Level::S1`]. [`Level::Min1`] is computed when read, from the
//! 1 s rows (min of the minima, max of the maxima, mean weighted by each second's samples),
//! so a 24 h run's envelope is 1 440 rows read from 86 400. A file is closed when the 10 ms
//! bins reach the next multiple of 10 s of host time (so no 10 ms or 1 s bin is split
//! across files), written whole under a hidden name and renamed into place, like the
//! sample segments: a run killed with SIGKILL keeps every closed file.
//!
//! Older run directories have `probe_agg.csv` instead: [`read_level`] reads its 10 ms bins
//! and builds the coarser levels from them the same way.

use crate::agg::{AggRow, Stat};
use crate::error::{RecordError, Result};
use parquet::column::reader::ColumnReader;
use parquet::column::writer::ColumnWriter;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The level files' names in the run directory, as a pattern.
pub const LEVEL_FILES: &str = "probe/levels-*.parquet";
/// Newest format this build reads and the one it writes (in each file's footer, under
/// [`crate::probe_store::VERSION_KEY`]).
pub const FORMAT_VERSION: u32 = 1;
/// Host time one file covers: its rows are the bins of one aligned 10 s block.
pub const FILE_NS: i64 = 10_000_000_000;

/// One resolution of the summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// 10 ms bins (stored).
    Ms10,
    /// 1 s bins (stored).
    S1,
    /// 1 min bins (built from the 1 s bins when read).
    Min1,
}

impl Level {
    /// Every level, finest first.
    pub const ALL: [Level; 3] = [Level::Ms10, Level::S1, Level::Min1];

    /// Bin width in ns (bins start at multiples of it, in host Unix time).
    pub fn width_ns(self) -> i64 {
        match self {
            Level::Ms10 => 10_000_000,
            Level::S1 => 1_000_000_000,
            Level::Min1 => 60_000_000_000,
        }
    }
}

const SCHEMA: &str = "message probe_level {
    required int64 level_ns;
    required int64 time_ns (TIMESTAMP(NANOS,true));
    required int32 samples (INTEGER(32,false));
    optional double vbus_v_min;
    optional double vbus_v_mean;
    optional double vbus_v_max;
    optional double current_a_min;
    optional double current_a_mean;
    optional double current_a_max;
    optional double power_w_min;
    optional double power_w_mean;
    optional double power_w_max;
    optional double die_temp_c_min;
    optional double die_temp_c_mean;
    optional double die_temp_c_max;
    optional double enclosure_temp_c_min;
    optional double enclosure_temp_c_mean;
    optional double enclosure_temp_c_max;
    optional double energy_j;
}";

/// The 16 double columns of a row, in schema order (NaN: no value, stored as null).
fn doubles(r: &AggRow) -> [f64; 16] {
    let s = [
        r.vbus_v,
        r.current_a,
        r.power_w,
        r.die_temp_c,
        r.enclosure_temp_c,
    ];
    let mut out = [f64::NAN; 16];
    for (k, st) in s.iter().enumerate() {
        out[3 * k] = st.min;
        out[3 * k + 1] = st.mean;
        out[3 * k + 2] = st.max;
    }
    out[15] = r.energy_j;
    out
}

fn set_double(r: &mut AggRow, k: usize, v: f64) {
    if k == 15 {
        r.energy_j = v;
        return;
    }
    let st = match k / 3 {
        0 => &mut r.vbus_v,
        1 => &mut r.current_a,
        2 => &mut r.power_w,
        3 => &mut r.die_temp_c,
        _ => &mut r.enclosure_temp_c,
    };
    match k % 3 {
        0 => st.min = v,
        1 => st.mean = v,
        _ => st.max = v,
    }
}

/// `dir/probe/levels-NNNNNN.parquet`.
pub fn file_path(dir: &Path, index: u64) -> PathBuf {
    dir.join(crate::probe_store::DIR_NAME)
        .join(format!("levels-{index:06}.parquet"))
}

fn props() -> WriterProperties {
    crate::probe_store::writer_properties(FORMAT_VERSION).build()
}

/// The bytes of one levels file holding `rows` (level, bin).
pub fn encode(rows: &[(Level, AggRow)]) -> parquet::errors::Result<Vec<u8>> {
    let schema = Arc::new(parse_message_type(SCHEMA)?);
    let mut out = Vec::new();
    let mut w = SerializedFileWriter::new(&mut out, schema, Arc::new(props()))?;
    let mut rg = w.next_row_group()?;
    let mut k = 0;
    while let Some(mut col) = rg.next_column()? {
        match col.untyped() {
            ColumnWriter::Int64ColumnWriter(c) => {
                let v: Vec<i64> = rows
                    .iter()
                    .map(|(l, r)| if k == 0 { l.width_ns() } else { r.time_ns })
                    .collect();
                c.write_batch(&v, None, None)?;
            }
            ColumnWriter::Int32ColumnWriter(c) => {
                let v: Vec<i32> = rows.iter().map(|(_, r)| r.samples as i32).collect();
                c.write_batch(&v, None, None)?;
            }
            ColumnWriter::DoubleColumnWriter(c) => {
                let (mut v, mut defs) = (Vec::new(), Vec::with_capacity(rows.len()));
                for (_, r) in rows {
                    let x = doubles(r)[k - 3];
                    defs.push(i16::from(!x.is_nan()));
                    if !x.is_nan() {
                        v.push(x);
                    }
                }
                c.write_batch(&v, Some(&defs), None)?;
            }
            _ => unreachable!("the schema has only int64, int32 and double columns"),
        }
        col.close()?;
        k += 1;
    }
    rg.close()?;
    w.close()?;
    Ok(out)
}

/// Streams the stored levels into `dir/probe/` (which [`crate::probe_store::Writer::create`]
/// made), one file per aligned 10 s block; [`Writer::finish`] writes the rest.
pub struct Writer {
    dir: PathBuf,
    next: u64,
    /// End (exclusive) of the open block, host Unix ns; None before the first row.
    block_end: Option<i64>,
    open: Vec<(Level, AggRow)>,
}

impl Writer {
    /// A writer into `dir/probe/` (the directory must exist).
    pub fn new(dir: &Path) -> Writer {
        Writer {
            dir: dir.to_path_buf(),
            next: 0,
            block_end: None,
            open: Vec::new(),
        }
    }

    /// Adds the bins one batch of samples closed, at each stored level. When a 10 ms bin
    /// reaches past the open 10 s block, every bin of that block has been given (a bin is
    /// closed by the first sample after it) and the block's file is written.
    pub fn write(&mut self, ms10: &[AggRow], s1: &[AggRow]) -> Result<()> {
        self.open.extend(ms10.iter().map(|r| (Level::Ms10, *r)));
        self.open.extend(s1.iter().map(|r| (Level::S1, *r)));
        let Some(last) = ms10.iter().map(|r| r.time_ns).max() else {
            return Ok(());
        };
        let end = *self.block_end.get_or_insert_with(|| {
            let first = ms10.iter().map(|r| r.time_ns).min().unwrap_or(last);
            first.div_euclid(FILE_NS) * FILE_NS + FILE_NS
        });
        if last >= end {
            self.close_before(last.div_euclid(FILE_NS) * FILE_NS)?;
        }
        Ok(())
    }

    /// Files written so far.
    pub fn files(&self) -> u64 {
        self.next
    }

    /// Writes every bin not yet written.
    pub fn finish(mut self) -> Result<()> {
        self.close_before(i64::MAX)
    }

    /// Writes the bins that start before `end` as one file; keeps the others open.
    fn close_before(&mut self, end: i64) -> Result<()> {
        let (done, keep): (Vec<_>, Vec<_>) =
            self.open.drain(..).partition(|(_, r)| r.time_ns < end);
        self.open = keep;
        self.block_end = (end != i64::MAX).then(|| end + FILE_NS);
        if done.is_empty() {
            return Ok(());
        }
        let path = file_path(&self.dir, self.next);
        let bytes =
            encode(&done).map_err(|e| RecordError::write(&path, std::io::Error::other(e)))?;
        crate::csvio::write_atomic(&path, &bytes)?;
        self.next += 1;
        Ok(())
    }
}

/// The levels files of `dir/probe/`, in order.
pub fn files(dir: &Path) -> Result<Vec<PathBuf>> {
    let d = dir.join(crate::probe_store::DIR_NAME);
    let mut out = Vec::new();
    for e in std::fs::read_dir(&d).map_err(|e| RecordError::io(&d, e))? {
        let p = e.map_err(|e| RecordError::io(&d, e))?.path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with("levels-") && name.ends_with(".parquet") {
            out.push(p);
        }
    }
    out.sort();
    Ok(out)
}

/// Reads one levels file (every stored level), refusing a newer format.
pub fn read_file(path: &Path) -> Result<Vec<(Level, AggRow)>> {
    let err = |e| RecordError::io(path, std::io::Error::other(e));
    let file = std::fs::File::open(path).map_err(|e| RecordError::io(path, e))?;
    let reader = SerializedFileReader::new(file).map_err(err)?;
    let meta = reader.metadata();
    let version = meta
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|k| k.key == crate::probe_store::VERSION_KEY))
        .and_then(|k| k.value.as_deref()?.parse::<u64>().ok())
        .unwrap_or(1);
    crate::version::check(path, version, FORMAT_VERSION)?;
    let mut out = Vec::new();
    for g in 0..reader.num_row_groups() {
        let rg = reader.get_row_group(g).map_err(err)?;
        let n = rg.metadata().num_rows() as usize;
        let mut levels = vec![0i64; 0];
        let mut rows = vec![AggRow::default(); n];
        for i in 0..rg.num_columns() {
            match rg.get_column_reader(i).map_err(err)? {
                ColumnReader::Int64ColumnReader(mut r) => {
                    let mut v = Vec::with_capacity(n);
                    r.read_records(n, None, None, &mut v).map_err(err)?;
                    if i == 0 {
                        levels = v;
                    } else {
                        rows.iter_mut().zip(v).for_each(|(r, t)| r.time_ns = t);
                    }
                }
                ColumnReader::Int32ColumnReader(mut r) => {
                    let mut v = Vec::with_capacity(n);
                    r.read_records(n, None, None, &mut v).map_err(err)?;
                    rows.iter_mut()
                        .zip(v)
                        .for_each(|(r, s)| r.samples = s as u32);
                }
                ColumnReader::DoubleColumnReader(mut r) => {
                    let (mut v, mut defs) = (Vec::new(), Vec::with_capacity(n));
                    r.read_records(n, Some(&mut defs), None, &mut v)
                        .map_err(err)?;
                    let mut values = v.into_iter();
                    for (row, d) in rows.iter_mut().zip(defs) {
                        let x = if d > 0 { values.next() } else { None };
                        set_double(row, i - 3, x.unwrap_or(f64::NAN));
                    }
                }
                _ => {}
            }
        }
        if levels.len() != n {
            return Err(RecordError::Incomplete {
                path: path.to_path_buf(),
                message: format!("column `level_ns` holds {} values of {n}", levels.len()),
            });
        }
        for (w, r) in levels.into_iter().zip(rows) {
            match Level::ALL.iter().find(|l| l.width_ns() == w) {
                Some(l) => out.push((*l, r)),
                None => {
                    return Err(RecordError::Incomplete {
                        path: path.to_path_buf(),
                        message: format!("a row of level {w} ns, not one this hostd writes"),
                    })
                }
            }
        }
    }
    Ok(out)
}

/// True when `dir/probe/` holds levels files.
pub fn exists(dir: &Path) -> bool {
    files(dir).is_ok_and(|f| !f.is_empty())
}

/// The bins of `level` for the run in `dir`, in time order: from `probe/levels-*.parquet`,
/// or from an older run's `probe_agg.csv` (its 10 ms bins, coarsened for the other levels);
/// empty when the run has neither.
pub fn read_level(dir: &Path, level: Level) -> Result<Vec<AggRow>> {
    let stored = if exists(dir) {
        let want = if level == Level::Min1 {
            Level::S1
        } else {
            level
        };
        let mut rows = Vec::new();
        for p in files(dir)? {
            rows.extend(
                read_file(&p)?
                    .into_iter()
                    .filter(|(l, _)| *l == want)
                    .map(|(_, r)| r),
            );
        }
        rows.sort_by_key(|r| r.time_ns);
        if want == level {
            return Ok(rows);
        }
        rows
    } else if dir.join(crate::agg::FILE_NAME).exists() {
        let mut rows = crate::agg::read(dir)?;
        rows.sort_by_key(|r| r.time_ns);
        if level == Level::Ms10 {
            return Ok(rows);
        }
        rows
    } else {
        return Ok(Vec::new());
    };
    Ok(coarsen(&stored, level.width_ns()))
}

/// Calls `each` with the bins of a stored `level` ([`Level::Ms10`] or [`Level::S1`]) of
/// `dir/probe/`, file by file (one file's rows in memory at a time), in file order.
pub fn for_each_stored(dir: &Path, level: Level, mut each: impl FnMut(&AggRow)) -> Result<()> {
    for p in files(dir)? {
        for (l, r) in read_file(&p)? {
            if l == level {
                each(&r);
            }
        }
    }
    Ok(())
}

/// Bins of `width_ns` made from finer bins in time order: min of the minima, max of the
/// maxima, means weighted by the finer bins' samples, the last energy reading.
pub fn coarsen(rows: &[AggRow], width_ns: i64) -> Vec<AggRow> {
    let mut out: Vec<AggRow> = Vec::new();
    // Per channel: (sum of mean × samples, samples) of the open coarse bin.
    let mut sums = [(0.0, 0u64); 5];
    let finish = |row: &mut AggRow, sums: &[(f64, u64); 5]| {
        for (k, st) in stats_mut(row).into_iter().enumerate() {
            if sums[k].1 > 0 {
                st.mean = sums[k].0 / sums[k].1 as f64;
            }
        }
    };
    for r in rows {
        let bin = r.time_ns.div_euclid(width_ns) * width_ns;
        if out.last().map_or(true, |o| o.time_ns != bin) {
            if let Some(last) = out.last_mut() {
                finish(last, &sums);
            }
            sums = [(0.0, 0); 5];
            out.push(AggRow {
                time_ns: bin,
                ..AggRow::default()
            });
        }
        let o = out.last_mut().expect("a bin was pushed");
        o.samples += r.samples;
        let fine = [
            r.vbus_v,
            r.current_a,
            r.power_w,
            r.die_temp_c,
            r.enclosure_temp_c,
        ];
        for (k, st) in stats_mut(o).into_iter().enumerate() {
            let f = fine[k];
            if f.is_empty() {
                continue;
            }
            st.min = if st.min.is_nan() {
                f.min
            } else {
                st.min.min(f.min)
            };
            st.max = if st.max.is_nan() {
                f.max
            } else {
                st.max.max(f.max)
            };
            // (A bin of an old file without `samples` counts as one sample.)
            let n = r.samples.max(1);
            sums[k].0 += f.mean * f64::from(n);
            sums[k].1 += u64::from(n);
        }
        if !r.energy_j.is_nan() {
            o.energy_j = r.energy_j;
        }
    }
    if let Some(last) = out.last_mut() {
        finish(last, &sums);
    }
    out
}

fn stats_mut(r: &mut AggRow) -> [&mut Stat; 5] {
    [
        &mut r.vbus_v,
        &mut r.current_a,
        &mut r.power_w,
        &mut r.die_temp_c,
        &mut r.enclosure_temp_c,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(min: f64, mean: f64, max: f64) -> Stat {
        Stat { min, mean, max }
    }

    /// A bin of `level` at `t` with distinct values in every column.
    fn row(t: i64, samples: u32) -> AggRow {
        let x = t as f64 * 1e-9;
        AggRow {
            time_ns: t,
            samples,
            vbus_v: stat(5.0 - x, 5.0, 5.0 + x),
            current_a: stat(0.1, 0.2 + x, 0.3 + x),
            power_w: stat(x, 2.0 * x, 3.0 * x + 1.0 / 3.0),
            die_temp_c: if samples % 2 == 0 {
                Stat::EMPTY
            } else {
                stat(28.0, 28.5, 29.0)
            },
            enclosure_temp_c: stat(25.0, 25.0 + x / 7.0, 26.0),
            energy_j: if t == 0 { f64::NAN } else { x * 0.8 },
        }
    }

    /// `hostd run`'s two stored levels for `seconds` of samples from `t0`, batch by batch
    /// as the recorder hands them on (10 ms bins of 10 samples, 1 s bins of 1 000).
    fn feed(w: &mut Writer, t0: i64, seconds: i64) -> (Vec<AggRow>, Vec<AggRow>) {
        let (mut all10, mut all1) = (Vec::new(), Vec::new());
        for batch in 0..seconds * 10 {
            let start = t0 + batch * 100_000_000;
            let ms10: Vec<AggRow> = (0..10).map(|i| row(start + i * 10_000_000, 10)).collect();
            let s1: Vec<AggRow> = (start % 1_000_000_000 == 0 && batch > 0)
                .then(|| row(start - 1_000_000_000, 1000))
                .into_iter()
                .collect();
            w.write(&ms10, &s1).unwrap();
            all10.extend(ms10);
            all1.extend(s1);
        }
        (all10, all1)
    }

    #[test]
    fn stored_levels_read_back_exactly_one_file_per_10_s_block() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join(crate::probe_store::DIR_NAME)).unwrap();
        let mut w = Writer::new(d.path());
        let t0 = 1_795_280_420_000_000_000;
        let (ms10, s1) = feed(&mut w, t0, 25);
        // Two whole blocks written as they ended; the rest at the end.
        assert_eq!(w.files(), 2);
        w.finish().unwrap();
        assert_eq!(files(d.path()).unwrap().len(), 3);
        let first = read_file(&file_path(d.path(), 0)).unwrap();
        assert!(first.iter().all(|(_, r)| r.time_ns < t0 + FILE_NS));
        assert_eq!(
            first.iter().filter(|(l, _)| *l == Level::Ms10).count(),
            1000
        );
        assert_eq!(first.iter().filter(|(l, _)| *l == Level::S1).count(), 10);
        // NaN-aware equality: every column, bit for bit.
        let back10 = read_level(d.path(), Level::Ms10).unwrap();
        assert_eq!(format!("{back10:?}"), format!("{ms10:?}"));
        let back1 = read_level(d.path(), Level::S1).unwrap();
        assert_eq!(format!("{back1:?}"), format!("{s1:?}"));
    }

    #[test]
    fn the_minute_level_is_the_extremes_and_the_sample_weighted_mean_of_its_seconds() {
        let a = AggRow {
            time_ns: 60_000_000_000,
            samples: 1,
            power_w: stat(1.0, 2.0, 3.0),
            energy_j: 5.0,
            ..AggRow::default()
        };
        let b = AggRow {
            time_ns: 61_000_000_000,
            samples: 3,
            power_w: stat(0.5, 4.0, 4.5),
            ..AggRow::default()
        };
        let c = AggRow {
            time_ns: 120_000_000_000,
            samples: 2,
            power_w: stat(7.0, 7.0, 7.0),
            ..AggRow::default()
        };
        let m = coarsen(&[a, b, c], Level::Min1.width_ns());
        assert_eq!(m.len(), 2);
        assert_eq!((m[0].time_ns, m[0].samples), (60_000_000_000, 4));
        assert_eq!(m[0].power_w, stat(0.5, (2.0 + 3.0 * 4.0) / 4.0, 4.5));
        assert_eq!(m[0].energy_j, 5.0);
        assert!(m[0].vbus_v.is_empty() && m[1].energy_j.is_nan());
        assert_eq!(m[1].power_w, stat(7.0, 7.0, 7.0));
    }

    #[test]
    fn an_older_run_reads_its_levels_from_probe_agg_csv() {
        let d = tempfile::tempdir().unwrap();
        let rows: Vec<AggRow> = (0..300).map(|i| row(i * 10_000_000, 9)).collect();
        let mut w = crate::agg::Writer::create(d.path()).unwrap();
        w.write(&rows).unwrap();
        w.flush().unwrap();
        let ms10 = read_level(d.path(), Level::Ms10).unwrap();
        assert_eq!(format!("{ms10:?}"), format!("{rows:?}"));
        let s1 = read_level(d.path(), Level::S1).unwrap();
        assert_eq!(s1, coarsen(&rows, 1_000_000_000));
        assert_eq!(s1.len(), 3);
        assert_eq!(s1[0].samples, 900);
        // No probe at all: no levels.
        let empty = tempfile::tempdir().unwrap();
        assert!(read_level(empty.path(), Level::Min1).unwrap().is_empty());
    }

    #[test]
    fn a_levels_file_of_a_newer_format_is_refused() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join(crate::probe_store::DIR_NAME)).unwrap();
        let bytes = encode(&[(Level::S1, row(0, 1))]).unwrap();
        let key = crate::probe_store::VERSION_KEY.as_bytes();
        let at = bytes.windows(key.len()).position(|w| w == key).unwrap() + key.len();
        let v = at + bytes[at..].iter().position(|&b| b == b'1').unwrap();
        let mut changed = bytes.clone();
        changed[v] = b'2';
        std::fs::write(file_path(d.path(), 0), &changed).unwrap();
        match read_level(d.path(), Level::S1) {
            Err(RecordError::NewerFormat { found: 2, .. }) => {}
            other => panic!("{other:?}"),
        }
    }
}
