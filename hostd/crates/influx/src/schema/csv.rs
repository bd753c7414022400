//! The run directory's CSV files → points (`files.csv`, `intervals.csv`, `probe.csv` or the
//! `probe/` Parquet segments that replace it, `probe_agg.csv` or the 10 ms level of
//! `probe/levels-*.parquet`; the CSV files also as `.gz`): each file is read into its typed records by the
//! `hostd-records` reader, then mapped by the same functions `hostd run` uses live.

use super::{m, RunTags};
use crate::Point;
use anyhow::Context as _;
use hostd_records as records;
use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

/// How one CSV file of the run directory maps to a measurement.
#[derive(Debug, Clone, Copy)]
pub struct CsvSpec {
    /// File name in the run directory (a `.gz` sibling is read too).
    pub file: &'static str,
    /// Measurement.
    pub measurement: &'static str,
    /// Which record the rows are.
    pub rows: Rows,
}

/// The record type of a CSV file's rows, each mapped as live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rows {
    /// [`records::FileRecord`], then [`super::file_point`].
    Files,
    /// [`records::IntervalRecord`], then [`super::interval_point`].
    Intervals,
    /// [`records::ProbeSample`], then [`super::sample_point`].
    ProbeSample,
    /// [`records::AggRow`], then [`super::agg_point`].
    ProbeAgg,
}

/// The CSV files of a run directory mapped by their own functions, and their measurements
/// (the files of one point per row are mapped by [`super::rows`]).
pub const CSV_SPECS: &[CsvSpec] = &[
    CsvSpec {
        file: "files.csv",
        measurement: m::FILE,
        rows: Rows::Files,
    },
    CsvSpec {
        file: "intervals.csv",
        measurement: m::INTERVAL,
        rows: Rows::Intervals,
    },
    CsvSpec {
        file: "probe.csv",
        measurement: m::PROBE,
        rows: Rows::ProbeSample,
    },
    CsvSpec {
        file: "probe_agg.csv",
        measurement: m::PROBE_AGG,
        rows: Rows::ProbeAgg,
    },
];

/// Opens `dir/file`, or `dir/file.gz` decompressed; `None` when neither exists.
pub fn open_maybe_gz(dir: &Path, file: &str) -> anyhow::Result<Option<Box<dyn Read>>> {
    let plain = dir.join(file);
    if plain.is_file() {
        let f = std::fs::File::open(&plain)
            .with_context(|| format!("cannot open {}", plain.display()))?;
        return Ok(Some(Box::new(std::io::BufReader::new(f))));
    }
    let gz = dir.join(format!("{file}.gz"));
    if gz.is_file() {
        let f =
            std::fs::File::open(&gz).with_context(|| format!("cannot open {}", gz.display()))?;
        return Ok(Some(Box::new(flate2::read::MultiGzDecoder::new(
            std::io::BufReader::new(f),
        ))));
    }
    Ok(None)
}

/// Streams the points of one CSV file to `sink`, in file order, through its typed reader
/// (refusing a newer format the manifest records). For `files.csv` the `cum_bytes` field is
/// the bytes of the target and phase up to and including the file, in file order, as live,
/// and the probe's figures of `files-probe.csv` join its rows, as live.
/// Returns the number of points, or `None` when the file does not exist. A bad cell is an
/// error naming the file, line and column.
pub fn csv_points(
    dir: &Path,
    spec: &CsvSpec,
    tags: &RunTags,
    mut sink: impl FnMut(Point) -> anyhow::Result<()>,
) -> anyhow::Result<Option<usize>> {
    if spec.rows == Rows::ProbeSample && records::probe_store::exists(dir) {
        return probe_store_points(dir, tags, sink).map(Some);
    }
    if spec.rows == Rows::ProbeAgg && records::probe_levels::exists(dir) {
        // The 10 ms level of `probe/levels-*.parquet`, which replaces `probe_agg.csv`.
        let rows = records::probe_levels::read_level(dir, records::probe_levels::Level::Ms10)?;
        let n = rows.len();
        for r in &rows {
            sink(super::agg_point(tags, r))?;
        }
        return Ok(Some(n));
    }
    let Some(mut reader) = open_maybe_gz(dir, spec.file)? else {
        return Ok(None);
    };
    let mut buf = Vec::new();
    reader
        .read_to_end(&mut buf)
        .with_context(|| format!("cannot read {}", dir.join(spec.file).display()))?;
    records::version::check_csv(dir, spec.file, format_version(spec.rows))?;
    let path = dir.join(spec.file);
    let mut n = 0;
    let mut send = |p: Point| -> anyhow::Result<()> {
        n += 1;
        sink(p)
    };
    match spec.rows {
        Rows::Files => {
            let mut files = records::files::parse(&path, &buf)?;
            records::files_probe::join(&mut files, &probe_figures(dir)?);
            let mut cum: HashMap<(String, String), u64> = HashMap::new();
            for r in files {
                let total = cum.entry((r.target.clone(), r.phase.clone())).or_default();
                *total += r.bytes;
                send(super::file_point(tags, &r, *total))?;
            }
        }
        Rows::Intervals => {
            for r in records::intervals::parse(&path, &buf)? {
                send(super::interval_point(tags, &r))?;
            }
        }
        Rows::ProbeSample => {
            for s in records::probe::parse(&path, &buf)? {
                send(super::sample_point(tags, &s))?;
            }
        }
        Rows::ProbeAgg => {
            for r in records::agg::parse(&path, &buf)? {
                send(super::agg_point(tags, &r))?;
            }
        }
    }
    Ok(Some(n))
}

/// The points of the samples of a run written since Parquet storage (`probe/`, which takes
/// the place of `probe.csv`), one segment in memory at a time.
fn probe_store_points(
    dir: &Path,
    tags: &RunTags,
    mut sink: impl FnMut(Point) -> anyhow::Result<()>,
) -> anyhow::Result<usize> {
    let mut n = 0;
    let mut failed = None;
    records::probe_store::for_each_segment(dir, |samples| {
        for s in samples {
            if failed.is_none() {
                match sink(super::sample_point(tags, s)) {
                    Ok(()) => n += 1,
                    Err(e) => failed = Some(e),
                }
            }
        }
        Ok(())
    })?;
    match failed {
        Some(e) => Err(e),
        None => Ok(n),
    }
}

/// The probe's per-file figures of `dir/files-probe.csv` (or its `.gz`), to join onto the
/// rows of `files.csv` as the run directory's reader does; none without the file.
fn probe_figures(dir: &Path) -> anyhow::Result<records::files_probe::Figures> {
    use records::files_probe::{FILE_NAME, FORMAT_VERSION};
    let Some(mut reader) = open_maybe_gz(dir, FILE_NAME)? else {
        return Ok(Default::default());
    };
    let mut buf = Vec::new();
    reader
        .read_to_end(&mut buf)
        .with_context(|| format!("cannot read {}", dir.join(FILE_NAME).display()))?;
    records::version::check_csv(dir, FILE_NAME, FORMAT_VERSION)?;
    Ok(records::files_probe::parse(&dir.join(FILE_NAME), &buf)?)
}

fn format_version(rows: Rows) -> u32 {
    match rows {
        Rows::Files => records::files::FORMAT_VERSION,
        Rows::Intervals => records::intervals::FORMAT_VERSION,
        Rows::ProbeSample => records::probe::FORMAT_VERSION,
        Rows::ProbeAgg => records::agg::FORMAT_VERSION,
    }
}
