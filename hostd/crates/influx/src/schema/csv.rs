//! The run directory's CSV files → points (`files.csv`, `intervals.csv`, `probe.csv`,
//! `probe_agg.csv`, each also as `.gz`).

use super::probe::{agg_from_row, sample_from_row};
use super::{m, typed_field, RunTags};
use crate::Point;
use anyhow::Context as _;
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
    /// Candidate time columns (host Unix ns), first present wins.
    pub time: &'static [&'static str],
    /// Columns that become tags.
    pub tags: &'static [&'static str],
    /// Whether points carry the `probe` tag.
    pub probe_tag: bool,
    /// How a row becomes a point.
    pub rows: Rows,
}

/// How the rows of a CSV file become points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rows {
    /// Every column a field (or tag), typed by name ([`super::typed_field`]).
    ByColumn,
    /// A [`hostd_probe::ProbeSample`], then [`super::sample_point`] (as live).
    ProbeSample,
    /// A [`hostd_probe::agg::AggRow`], then [`super::agg_point`] (as live).
    ProbeAgg,
}

/// The CSV files of a run directory and their measurements.
pub const CSV_SPECS: &[CsvSpec] = &[
    CsvSpec {
        file: "files.csv",
        measurement: m::FILE,
        time: &["end_ns", "start_ns"],
        // `probe` (the probe's id, or "no probe") stays a field: files.csv is pushed
        // again at the end, and a new tag would make that a second series.
        tags: &["target", "phase"],
        probe_tag: false,
        rows: Rows::ByColumn,
    },
    CsvSpec {
        file: "intervals.csv",
        measurement: m::INTERVAL,
        time: &["start_ns", "time_ns", "end_ns"],
        tags: &["target", "phase"],
        probe_tag: false,
        rows: Rows::ByColumn,
    },
    CsvSpec {
        file: "probe.csv",
        measurement: m::PROBE,
        time: &["time_ns"],
        tags: &[],
        probe_tag: true,
        rows: Rows::ProbeSample,
    },
    CsvSpec {
        file: "probe_agg.csv",
        measurement: m::PROBE_AGG,
        time: &["time_ns", "start_ns"],
        tags: &[],
        probe_tag: true,
        rows: Rows::ProbeAgg,
    },
    CsvSpec {
        file: "drive_temp.csv",
        measurement: m::DRIVE_TEMP,
        time: &["time_ns"],
        tags: &["target"],
        probe_tag: false,
        rows: Rows::ByColumn,
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

/// Streams the points of one CSV file to `sink`, in file order. For `files.csv` a
/// `cum_bytes` field (bytes of this target and phase up to and including the file, in
/// file order) and `seconds` are added when absent. Returns the number of points, or
/// `None` when the file does not exist. A row without a usable time is an error naming
/// the file and line.
pub fn csv_points(
    dir: &Path,
    spec: &CsvSpec,
    tags: &RunTags,
    mut sink: impl FnMut(Point) -> anyhow::Result<()>,
) -> anyhow::Result<Option<usize>> {
    let Some(reader) = open_maybe_gz(dir, spec.file)? else {
        return Ok(None);
    };
    let mut rdr = csv::ReaderBuilder::new().flexible(true).from_reader(reader);
    let headers: Vec<String> = rdr
        .headers()
        .with_context(|| format!("{}: cannot read the header", spec.file))?
        .iter()
        .map(|h| h.trim().to_owned())
        .collect();
    let time_col = spec
        .time
        .iter()
        .find_map(|t| headers.iter().position(|h| h == t))
        .with_context(|| format!("{}: no time column (one of {:?})", spec.file, spec.time))?;
    let col = |name: &str| headers.iter().position(|h| h == name);
    let is_files = spec.measurement == m::FILE;
    let (start_col, end_col, bytes_col) = (col("start_ns"), col("end_ns"), col("bytes"));
    let add_cum = is_files && col("cum_bytes").is_none() && bytes_col.is_some();
    let add_secs = is_files && col("seconds").is_none() && start_col.is_some() && end_col.is_some();
    let mut cum: HashMap<(String, String), i64> = HashMap::new();
    let mut n = 0;
    for (i, row) in rdr.records().enumerate() {
        let line = i + 2;
        let row = row.with_context(|| format!("{}: line {line}", spec.file))?;
        let t_text = row.get(time_col).unwrap_or("").trim();
        let ts: i64 = t_text.parse().with_context(|| {
            format!(
                "{}: line {line}: time {:?} is not an integer (ns)",
                spec.file, t_text
            )
        })?;
        if spec.rows != Rows::ByColumn {
            let get = |name: &str| {
                col(name)
                    .and_then(|c| row.get(c))
                    .and_then(|v| v.trim().parse::<f64>().ok())
                    .filter(|v| v.is_finite())
            };
            sink(match spec.rows {
                Rows::ProbeSample => super::sample_point(tags, &sample_from_row(ts, &get)),
                _ => super::agg_point(tags, &agg_from_row(ts, &get)),
            })?;
            n += 1;
            continue;
        }
        let mut p = Point::new(spec.measurement).timestamp_ns(ts);
        p = if spec.probe_tag {
            tags.apply_probe(p)
        } else {
            tags.apply(p)
        };
        for (h, v) in headers.iter().zip(row.iter()) {
            if spec.tags.contains(&h.as_str()) {
                p = p.tag(h, v.trim());
            } else if h == "time_ns" {
                // the point's own time
            } else if let Some(fv) = typed_field(h, v) {
                p = p.field(h, fv);
            }
        }
        let get = |c: Option<usize>| {
            c.and_then(|c| row.get(c))
                .and_then(|v| v.trim().parse::<i64>().ok())
        };
        if add_cum {
            let key = (
                col("target")
                    .and_then(|c| row.get(c))
                    .unwrap_or("")
                    .to_owned(),
                col("phase")
                    .and_then(|c| row.get(c))
                    .unwrap_or("")
                    .to_owned(),
            );
            let total = cum.entry(key).or_default();
            *total += get(bytes_col).unwrap_or(0);
            p = p.field("cum_bytes", *total);
        }
        if add_secs {
            if let (Some(s), Some(e)) = (get(start_col), get(end_col)) {
                p = p.field("seconds", (e - s) as f64 / 1e9);
            }
        }
        sink(p)?;
        n += 1;
    }
    Ok(Some(n))
}
