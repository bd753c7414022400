//! `probe/`: every aligned probe sample in Apache Parquet segments (docs/run-directory.md,
//! "probe/"), the compact successor of `probe.csv`.
//!
//! Why Parquet: it is the columnar format pandas, polars, DuckDB, R (arrow) and Spark read
//! directly (`duckdb -c "select * from 'probe/*.parquet'"`), it is typed (no float parsing),
//! and its per-column encodings bring a sample to a few bytes: the times and sequence numbers
//! are `DELTA_BINARY_PACKED` (a steady 1 ms step costs bits, not bytes), the channels are
//! dictionary-encoded (the INA228's readings are a few hundred distinct codes over a
//! segment; the held accumulator and temperature columns repeat), and every page is
//! Brotli-compressed (level 5). Brotli, not zstd: its Rust implementation is pure Rust, so
//! hostd builds for every target without a C toolchain for it (zstd's C library could not
//! be compiled for the Apple targets CI checks from Linux), and it packs a sample smaller
//! (5.5 against zstd-3's 5.7–5.8 B on the same 30 s simulated run). The channels are stored as the exact `f64` the host computed, so a
//! segment reads back bit for bit.
//!
//! Why segments: a Parquet file cannot be read without its footer, written when the file is
//! closed. The [`Writer`] keeps the samples of the open segment in memory (at most
//! [`SEGMENT_NS`] of them, 10 s: about 0.8 MB at 1 kHz) and closes a segment file every
//! 10 s of samples, writing it under a hidden temporary name and renaming it into place, so
//! the directory only ever holds whole segments. A run killed with SIGKILL keeps every
//! closed segment: it loses at most the last 10 s of samples (the "last flush").
//!
//! The format version is in each segment's footer (`throttlescope.format_version` key);
//! the reader refuses a newer one.

use crate::error::{RecordError, Result};
use crate::probe::{ProbeSample, ProbeSeries};
use parquet::basic::{BrotliLevel, Compression, Encoding};
use parquet::column::reader::ColumnReader;
use parquet::column::writer::ColumnWriter;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{
    EnabledStatistics, WriterProperties, WriterPropertiesBuilder, WriterVersion,
};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use parquet::schema::types::ColumnPath;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Directory in the run directory holding the segments.
pub const DIR_NAME: &str = "probe";
/// The segments' names in the run directory, as a pattern.
pub const SEGMENT_FILES: &str = "probe/segment-*.parquet";
/// Newest format this build reads and the one it writes.
pub const FORMAT_VERSION: u32 = 1;
/// Key of the format version in each segment's footer.
pub const VERSION_KEY: &str = "throttlescope.format_version";
/// Host time a segment spans at most before it is closed (and what a SIGKILL may lose).
pub const SEGMENT_NS: i64 = 10_000_000_000;
/// Samples a segment holds at most, whatever the rate (bounds the writer's memory).
pub const SEGMENT_SAMPLES: usize = 100_000;

/// The Parquet schema: the `probe.csv` columns plus the probe's own clock. `time_ns` is a
/// UTC timestamp, so pandas and DuckDB show it as a time. `vbus_min_v` (the batch's VBUS
/// minimum, wire v3) came later: a segment without it reads as samples without it, and a
/// reader that does not know it skips it, so the format version did not change.
const SCHEMA: &str = "message probe_sample {
    required int64 time_ns (TIMESTAMP(NANOS,true));
    required int64 seq (INTEGER(64,false));
    required int64 probe_time_us (INTEGER(64,false));
    optional double vbus_v;
    optional double current_a;
    optional double power_w;
    optional double energy_j;
    optional double charge_c;
    optional double die_temp_c;
    optional double enclosure_temp_c;
    optional double vbus_min_v;
}";

/// The channel columns, in schema order after the three integer columns.
const CHANNELS: [&str; 8] = [
    "vbus_v",
    "current_a",
    "power_w",
    "energy_j",
    "charge_c",
    "die_temp_c",
    "enclosure_temp_c",
    "vbus_min_v",
];

fn channel(s: &ProbeSample, k: usize) -> Option<f64> {
    match k {
        0 => s.vbus_v,
        1 => s.current_a,
        2 => s.power_w,
        3 => s.energy_j,
        4 => s.charge_c,
        5 => s.die_temp_c,
        6 => s.enclosure_temp_c,
        _ => s.vbus_min_v,
    }
}

fn channel_mut(s: &mut ProbeSample, k: usize) -> &mut Option<f64> {
    match k {
        0 => &mut s.vbus_v,
        1 => &mut s.current_a,
        2 => &mut s.power_w,
        3 => &mut s.energy_j,
        4 => &mut s.charge_c,
        5 => &mut s.die_temp_c,
        6 => &mut s.enclosure_temp_c,
        _ => &mut s.vbus_min_v,
    }
}

/// `dir/probe/segment-NNNNNN.parquet`.
pub fn segment_path(dir: &Path, index: u64) -> PathBuf {
    dir.join(DIR_NAME)
        .join(format!("segment-{index:06}.parquet"))
}

/// True when `dir` holds a `probe/` directory (a run written since Parquet storage).
pub fn exists(dir: &Path) -> bool {
    dir.join(DIR_NAME).is_dir()
}

/// What every Parquet file of `probe/` is written with (segments and levels alike): format
/// 2.0, Brotli level 5 pages, chunk statistics, and `version` under [`VERSION_KEY`] in the
/// footer.
pub(crate) fn writer_properties(version: u32) -> WriterPropertiesBuilder {
    WriterProperties::builder()
        .set_writer_version(WriterVersion::PARQUET_2_0)
        .set_compression(Compression::BROTLI(
            BrotliLevel::try_new(5).expect("brotli level 5"),
        ))
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_key_value_metadata(Some(vec![KeyValue::new(
            VERSION_KEY.to_string(),
            version.to_string(),
        )]))
}

fn props() -> WriterProperties {
    let delta = |b: WriterPropertiesBuilder, col: &str| {
        b.set_column_dictionary_enabled(ColumnPath::from(col), false)
            .set_column_encoding(ColumnPath::from(col), Encoding::DELTA_BINARY_PACKED)
    };
    let mut b = writer_properties(FORMAT_VERSION)
        .set_dictionary_enabled(true)
        .set_max_row_group_size(SEGMENT_SAMPLES);
    for col in ["time_ns", "seq", "probe_time_us"] {
        b = delta(b, col);
    }
    b.build()
}

/// The bytes of one segment file holding `samples` (one row group).
pub fn encode(samples: &[ProbeSample]) -> parquet::errors::Result<Vec<u8>> {
    let schema = Arc::new(parse_message_type(SCHEMA)?);
    let mut out = Vec::new();
    let mut w = SerializedFileWriter::new(&mut out, schema, Arc::new(props()))?;
    let mut rg = w.next_row_group()?;
    let mut k = 0;
    let mut ints = Vec::with_capacity(samples.len());
    let mut floats = Vec::with_capacity(samples.len());
    let mut defs = Vec::with_capacity(samples.len());
    while let Some(mut col) = rg.next_column()? {
        match col.untyped() {
            ColumnWriter::Int64ColumnWriter(c) => {
                ints.clear();
                ints.extend(samples.iter().map(|s| match k {
                    0 => s.time_ns,
                    1 => s.seq as i64,
                    _ => s.probe_time_us as i64,
                }));
                c.write_batch(&ints, None, None)?;
            }
            ColumnWriter::DoubleColumnWriter(c) => {
                floats.clear();
                defs.clear();
                for s in samples {
                    let v = channel(s, k - 3);
                    defs.push(i16::from(v.is_some()));
                    floats.extend(v);
                }
                c.write_batch(&floats, Some(&defs), None)?;
            }
            _ => unreachable!("the schema has only int64 and double columns"),
        }
        col.close()?;
        k += 1;
    }
    rg.close()?;
    w.close()?;
    Ok(out)
}

/// Streams samples into `dir/probe/`, one segment file per [`SEGMENT_NS`] of host time (or
/// [`SEGMENT_SAMPLES`] samples); [`Writer::finish`] closes the last one.
pub struct Writer {
    dir: PathBuf,
    next: u64,
    open: Vec<ProbeSample>,
    written: u64,
}

impl Writer {
    /// Creates `dir/probe/` (empty: segments of an earlier attempt are removed).
    pub fn create(dir: &Path) -> Result<Writer> {
        let seg = dir.join(DIR_NAME);
        if seg.exists() {
            std::fs::remove_dir_all(&seg).map_err(|e| RecordError::write(&seg, e))?;
        }
        std::fs::create_dir_all(&seg).map_err(|e| RecordError::write(&seg, e))?;
        Ok(Writer {
            dir: dir.to_path_buf(),
            next: 0,
            open: Vec::new(),
            written: 0,
        })
    }

    /// Appends samples, closing the open segment whenever it is full.
    pub fn write(&mut self, samples: &[ProbeSample]) -> Result<()> {
        for s in samples {
            let full = self.open.first().is_some_and(|f| {
                s.time_ns.saturating_sub(f.time_ns) >= SEGMENT_NS
                    || self.open.len() >= SEGMENT_SAMPLES
            });
            if full {
                self.close_segment()?;
            }
            self.open.push(*s);
        }
        Ok(())
    }

    /// Segment files closed so far.
    pub fn segments(&self) -> u64 {
        self.next
    }

    /// Samples in closed segment files so far.
    pub fn samples_written(&self) -> u64 {
        self.written
    }

    /// Closes the open segment (if it holds samples) and returns the samples written.
    pub fn finish(mut self) -> Result<u64> {
        self.close_segment()?;
        Ok(self.written)
    }

    fn close_segment(&mut self) -> Result<()> {
        if self.open.is_empty() {
            return Ok(());
        }
        let path = segment_path(&self.dir, self.next);
        let bytes = encode(&self.open).map_err(|e| parquet_error(&path, e, true))?;
        crate::csvio::write_atomic(&path, &bytes)?;
        self.written += self.open.len() as u64;
        self.next += 1;
        self.open.clear();
        Ok(())
    }
}

fn parquet_error(path: &Path, e: parquet::errors::ParquetError, writing: bool) -> RecordError {
    let e = std::io::Error::other(e);
    if writing {
        RecordError::write(path, e)
    } else {
        RecordError::io(path, e)
    }
}

/// The segment files of `dir/probe/`, in order (temporary files of an unfinished segment
/// are not listed).
pub fn segments(dir: &Path) -> Result<Vec<PathBuf>> {
    let seg = dir.join(DIR_NAME);
    let mut out = Vec::new();
    for e in std::fs::read_dir(&seg).map_err(|e| RecordError::io(&seg, e))? {
        let p = e.map_err(|e| RecordError::io(&seg, e))?.path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with("segment-") && name.ends_with(".parquet") {
            out.push(p);
        }
    }
    out.sort();
    Ok(out)
}

/// Reads one segment file, refusing a newer format.
pub fn read_segment(path: &Path) -> Result<Vec<ProbeSample>> {
    let file = std::fs::File::open(path).map_err(|e| RecordError::io(path, e))?;
    let err = |e| parquet_error(path, e, false);
    let reader = SerializedFileReader::new(file).map_err(err)?;
    let meta = reader.metadata();
    let version = meta
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|k| k.key == VERSION_KEY))
        .and_then(|k| k.value.as_deref()?.parse::<u64>().ok())
        .unwrap_or(1);
    crate::version::check(path, version, FORMAT_VERSION)?;
    let columns = meta.file_metadata().schema_descr().columns().to_vec();
    let mut out: Vec<ProbeSample> = Vec::with_capacity(meta.file_metadata().num_rows() as usize);
    for g in 0..reader.num_row_groups() {
        let rg = reader.get_row_group(g).map_err(err)?;
        let rows = rg.metadata().num_rows() as usize;
        let base = out.len();
        out.resize(base + rows, ProbeSample::default());
        let dest = &mut out[base..];
        for (i, c) in columns.iter().enumerate() {
            let name = c.name();
            match rg.get_column_reader(i).map_err(err)? {
                ColumnReader::Int64ColumnReader(mut r) => {
                    let mut v = Vec::with_capacity(rows);
                    let (n, _, _) = r.read_records(rows, None, None, &mut v).map_err(err)?;
                    check_rows(path, name, n, rows)?;
                    for (s, x) in dest.iter_mut().zip(v) {
                        match name {
                            "time_ns" => s.time_ns = x,
                            "seq" => s.seq = x as u64,
                            "probe_time_us" => s.probe_time_us = x as u64,
                            _ => {}
                        }
                    }
                }
                ColumnReader::DoubleColumnReader(mut r) => {
                    let Some(k) = CHANNELS.iter().position(|&c| c == name) else {
                        continue;
                    };
                    let (mut v, mut defs) = (Vec::with_capacity(rows), Vec::with_capacity(rows));
                    let (n, _, _) = r
                        .read_records(rows, Some(&mut defs), None, &mut v)
                        .map_err(err)?;
                    check_rows(path, name, n, rows)?;
                    let mut values = v.into_iter();
                    for (s, d) in dest.iter_mut().zip(defs) {
                        *channel_mut(s, k) = if d > 0 { values.next() } else { None };
                    }
                }
                _ => {}
            }
        }
    }
    Ok(out)
}

fn check_rows(path: &Path, column: &str, read: usize, rows: usize) -> Result<()> {
    if read == rows {
        return Ok(());
    }
    Err(RecordError::Incomplete {
        path: path.to_path_buf(),
        message: format!("column `{column}` holds {read} values of the row group's {rows}"),
    })
}

/// Calls `each` with the samples of every segment of `dir/probe/`, in order: a pass over
/// the run in the memory of one segment.
pub fn for_each_segment(
    dir: &Path,
    mut each: impl FnMut(&[ProbeSample]) -> Result<()>,
) -> Result<()> {
    for p in segments(dir)? {
        each(&read_segment(&p)?)?;
    }
    Ok(())
}

/// Every sample of `dir/probe/`, in time order (rows out of order are sorted, as
/// [`crate::probe::read`] does).
pub fn read(dir: &Path) -> Result<Vec<ProbeSample>> {
    let mut out = Vec::new();
    for_each_segment(dir, |s| {
        out.extend_from_slice(s);
        Ok(())
    })?;
    if out.windows(2).any(|w| w[1].time_ns < w[0].time_ns) {
        out.sort_by_key(|s| s.time_ns);
    }
    Ok(out)
}

/// The analysis' columns of `dir/probe/`, built segment by segment.
pub fn read_series(dir: &Path) -> Result<ProbeSeries> {
    let mut series = ProbeSeries::default();
    for_each_segment(dir, |s| {
        s.iter().for_each(|x| series.push(x));
        Ok(())
    })?;
    series.finish();
    Ok(series)
}

/// Samples in the segment files of `dir/probe/`, from their footers alone (no column is
/// read).
pub fn sample_count(dir: &Path) -> Result<u64> {
    let mut total = 0;
    for p in segments(dir)? {
        let file = std::fs::File::open(&p).map_err(|e| RecordError::io(&p, e))?;
        let reader = SerializedFileReader::new(file).map_err(|e| parquet_error(&p, e, false))?;
        total += reader.metadata().file_metadata().num_rows().max(0) as u64;
    }
    Ok(total)
}

/// Bytes the segment files of `dir/probe/` take on disk.
pub fn bytes_on_disk(dir: &Path) -> Result<u64> {
    let mut total = 0;
    for p in segments(dir)? {
        total += std::fs::metadata(&p)
            .map_err(|e| RecordError::io(&p, e))?
            .len();
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples with every column set, channels missing in places, and values that test the
    /// encodings' edges (the largest `u64`, a negative reading, -0.0, subnormal).
    fn samples(n: usize, t0: i64) -> Vec<ProbeSample> {
        (0..n)
            .map(|i| {
                let x = i as f64;
                let some = |v: f64, every: usize| (i % every != 0).then_some(v);
                ProbeSample {
                    time_ns: t0 + i as i64 * 1_000_000 + (i % 7) as i64,
                    seq: if i == 3 { u64::MAX } else { i as u64 },
                    probe_time_us: u64::MAX - i as u64,
                    vbus_v: some(5.0 + (x * 0.37).sin() * 195.3125e-6, 11),
                    current_a: some(-0.1 + x * 1.9073486328125e-5, 13),
                    power_w: some(if i == 5 { -0.0 } else { x.sqrt() / 3.0 }, 17),
                    energy_j: some(x * 1e-3, 5),
                    charge_c: if i == 8 {
                        Some(f64::MIN_POSITIVE / 2.0)
                    } else {
                        None
                    },
                    die_temp_c: Some(28.0 + (i / 100) as f64 * 7.8125e-3),
                    enclosure_temp_c: some(f64::MAX, 2),
                    vbus_min_v: (i % 32 == 0).then_some(4.5 + x * 1e-6),
                }
            })
            .collect()
    }

    fn bits(s: &[ProbeSample]) -> Vec<[u64; 11]> {
        let b = |v: Option<f64>| v.map_or(u64::MAX - 1, f64::to_bits);
        s.iter()
            .map(|s| {
                [
                    s.time_ns as u64,
                    s.seq,
                    s.probe_time_us,
                    b(s.vbus_v),
                    b(s.current_a),
                    b(s.power_w),
                    b(s.energy_j),
                    b(s.charge_c),
                    b(s.die_temp_c),
                    b(s.enclosure_temp_c),
                    b(s.vbus_min_v),
                ]
            })
            .collect()
    }

    #[test]
    fn samples_read_back_bit_for_bit_across_segments() {
        let d = tempfile::tempdir().unwrap();
        // 25 s at 1 kHz: two full 10 s segments and a last one closed by `finish`.
        let all = samples(25_000, 1_795_280_425_231_439_833);
        let mut w = Writer::create(d.path()).unwrap();
        for chunk in all.chunks(333) {
            w.write(chunk).unwrap();
        }
        assert_eq!(w.segments(), 2);
        assert_eq!(w.finish().unwrap(), 25_000);
        let files = segments(d.path()).unwrap();
        assert_eq!(files.len(), 3);
        assert_eq!(read_segment(&files[0]).unwrap().len(), 10_000);
        let back = read(d.path()).unwrap();
        assert_eq!(bits(&back), bits(&all));
        // NaN-aware equality (a channel without a value is NaN in the series).
        let series = read_series(d.path()).unwrap();
        assert_eq!(series.len(), all.len());
        assert_eq!(
            format!("{series:?}"),
            format!("{:?}", ProbeSeries::from_samples(&all))
        );
    }

    #[test]
    fn a_segment_written_before_the_batch_minimum_reads_without_it() {
        // The schema of the segments written before `vbus_min_v`, with one sample.
        let old = "message probe_sample {
            required int64 time_ns (TIMESTAMP(NANOS,true));
            required int64 seq (INTEGER(64,false));
            required int64 probe_time_us (INTEGER(64,false));
            optional double vbus_v;
        }";
        let mut bytes = Vec::new();
        let schema = Arc::new(parse_message_type(old).unwrap());
        let mut w = SerializedFileWriter::new(&mut bytes, schema, Arc::new(props())).unwrap();
        let mut rg = w.next_row_group().unwrap();
        let mut k = 0;
        while let Some(mut col) = rg.next_column().unwrap() {
            match col.untyped() {
                ColumnWriter::Int64ColumnWriter(c) => {
                    c.write_batch(&[[7, 1, 9][k]], None, None).unwrap();
                }
                ColumnWriter::DoubleColumnWriter(c) => {
                    c.write_batch(&[4.98], Some(&[1]), None).unwrap();
                }
                _ => unreachable!(),
            }
            col.close().unwrap();
            k += 1;
        }
        rg.close().unwrap();
        w.close().unwrap();
        let d = tempfile::tempdir().unwrap();
        let path = segment_path(d.path(), 0);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        let s = read(d.path()).unwrap();
        assert_eq!((s.len(), s[0].time_ns, s[0].vbus_v), (1, 7, Some(4.98)));
        assert_eq!(s[0].vbus_min_v, None);
        assert_eq!(read_series(d.path()).unwrap().vbus_min_v, [4.98]);
    }

    #[test]
    fn a_segment_holds_at_most_its_sample_limit_whatever_the_rate() {
        let d = tempfile::tempdir().unwrap();
        let mut all = samples(SEGMENT_SAMPLES + 10, 0);
        all.iter_mut()
            .enumerate()
            .for_each(|(i, s)| s.time_ns = i as i64 * 1_000);
        let mut w = Writer::create(d.path()).unwrap();
        w.write(&all).unwrap();
        w.finish().unwrap();
        let files = segments(d.path()).unwrap();
        assert_eq!(files.len(), 2);
        assert_eq!(read_segment(&files[0]).unwrap().len(), SEGMENT_SAMPLES);
    }

    #[test]
    fn an_unfinished_segment_is_not_read_and_a_damaged_one_is_named() {
        let d = tempfile::tempdir().unwrap();
        let mut w = Writer::create(d.path()).unwrap();
        w.write(&samples(100, 0)).unwrap();
        w.finish().unwrap();
        // What a kill in the middle of `write_atomic` leaves: a hidden temporary file.
        let seg = d.path().join(DIR_NAME);
        std::fs::write(seg.join(".segment-000001.parquet.tmp"), b"PAR1 half").unwrap();
        assert_eq!(read(d.path()).unwrap().len(), 100);
        // A segment cut short (not something the writer leaves) is an error naming it.
        let first = segment_path(d.path(), 0);
        let bytes = std::fs::read(&first).unwrap();
        std::fs::write(segment_path(d.path(), 1), &bytes[..bytes.len() / 2]).unwrap();
        let e = read(d.path()).unwrap_err().to_string();
        assert!(e.contains("segment-000001.parquet"), "{e}");
    }

    #[test]
    fn a_segment_of_a_newer_format_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let path = segment_path(d.path(), 0);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let bytes = encode(&samples(10, 0)).unwrap();
        // The same file with the footer's version one higher (same length, so the footer
        // still parses).
        let (old, new) = (
            format!("{FORMAT_VERSION}"),
            format!("{}", FORMAT_VERSION + 1),
        );
        assert_eq!(old.len(), new.len());
        let at = bytes
            .windows(VERSION_KEY.len())
            .position(|w| w == VERSION_KEY.as_bytes())
            .unwrap();
        let mut changed = bytes.clone();
        let v = at
            + VERSION_KEY.len()
            + changed[at + VERSION_KEY.len()..]
                .windows(old.len())
                .position(|w| w == old.as_bytes())
                .unwrap();
        changed[v..v + new.len()].copy_from_slice(new.as_bytes());
        std::fs::write(&path, &changed).unwrap();
        match read(d.path()) {
            Err(RecordError::NewerFormat { found, .. }) => assert_eq!(found, FORMAT_VERSION + 1),
            other => panic!("{other:?}"),
        }
    }
}
