//! `hostd import RUN_DIR`: push a finished run directory to InfluxDB.
//!
//! Reads `manifest.json` (required; without `start_ns`, as `scenario-gen` writes it, the
//! run starts at its earliest record), `files.csv`, `intervals.csv`, `probe.csv`,
//! `probe_agg.csv` (each also as `.gz`), `events.json` (events, overlap, phase
//! statistics), `summary.json` (probe health), `probe-link.jsonl`, and the batches left
//! in `spool/`.
//! The run directory is only read, never changed. Importing twice is harmless: InfluxDB
//! keeps one point per series and timestamp.

use crate::schema::{self, RunTags};
use crate::spool::batch_seq;
use crate::{Report, Target, Writer, WriterConfig};
use anyhow::{bail, Context as _};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Points taken from one source of the run directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceCount {
    /// File name (e.g. `files.csv`, `spool/`).
    pub source: String,
    /// Points queued from it; `None` when the file is absent.
    pub points: Option<usize>,
}

/// The outcome of an import.
#[derive(Debug, Clone)]
pub struct ImportSummary {
    /// Run tags used.
    pub tags: RunTags,
    /// Per source.
    pub sources: Vec<SourceCount>,
    /// The writer's final report.
    pub report: Report,
}

/// How long to wait for InfluxDB to take each source's points.
const SYNC_TIMEOUT: Duration = Duration::from_secs(60);

/// Imports `dir` into `target`. `rig` overrides the manifest's host name as the `rig` tag.
/// Fails — saying what was and was not written — when InfluxDB does not take every point.
pub fn import_run(dir: &Path, target: Target, rig: Option<&str>) -> anyhow::Result<ImportSummary> {
    let manifest_path = dir.join("manifest.json");
    let text = std::fs::read_to_string(&manifest_path).with_context(|| {
        format!(
            "{} is not a run directory: cannot read manifest.json",
            dir.display()
        )
    })?;
    let mut manifest: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("{}: not valid JSON", manifest_path.display()))?;
    anyhow::ensure!(
        manifest.is_object(),
        "{}: not a manifest (a JSON object)",
        manifest_path.display()
    );
    // Runs `scenario-gen` writes have no start time: the run starts with its first record.
    if manifest["start_ns"].as_i64().is_none() {
        let start = earliest_time_ns(dir)?.with_context(|| {
            format!(
                "{}: no integer start_ns, and no record in files.csv or probe.csv to take it from",
                manifest_path.display()
            )
        })?;
        manifest["start_ns"] = start.into();
    }
    let fallback = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "run".into());
    let mut tags = RunTags::from_manifest(&manifest, &fallback);
    if let Some(r) = rig {
        tags.rig = r.to_owned();
    }

    let mut cfg = WriterConfig::new(target, None);
    cfg.backoff_max = Duration::from_secs(2);
    let writer = Writer::start(cfg)?;
    let mut sources = Vec::new();
    let check = |w: &Writer, source: &str, sources: &[SourceCount]| -> anyhow::Result<()> {
        let r = w.sync(SYNC_TIMEOUT);
        if r.spooled_remaining > 0 || r.stats.rejected > 0 {
            let done: Vec<String> = sources
                .iter()
                .filter_map(|s| s.points.map(|n| format!("{} ({n})", s.source)))
                .collect();
            bail!(
                "InfluxDB did not take all points of {source}: {}. Written before: {}. \
                 Nothing in {} was changed; fix the cause and import again.",
                r.summary(),
                if done.is_empty() {
                    "nothing".into()
                } else {
                    done.join(", ")
                },
                dir.display()
            );
        }
        Ok(())
    };

    writer.write(&schema::run_point(&manifest, &tags)?)?;
    sources.push(SourceCount {
        source: "manifest.json".into(),
        points: Some(1),
    });
    check(&writer, "manifest.json", &sources)?;

    {
        let sources_cell = std::cell::RefCell::new(&mut sources);
        schema::run_dir_points(
            dir,
            &tags,
            &[],
            |pts| Ok(writer.write_all(pts)?),
            |source, points| {
                let mut list = sources_cell.borrow_mut();
                list.push(SourceCount {
                    source: source.into(),
                    points,
                });
                if points.is_some() {
                    check(&writer, source, list.as_slice())?;
                }
                Ok(())
            },
        )?;
    }

    let spool = spool_batches(&dir.join("spool"))?;
    let spooled = if spool.is_empty() {
        None
    } else {
        let mut n = 0;
        for path in &spool {
            let body = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            n += crate::spool::count_lines(body.as_bytes());
            writer.write_encoded(&body);
        }
        Some(n)
    };
    sources.push(SourceCount {
        source: "spool/".into(),
        points: spooled,
    });
    check(&writer, "spool/", &sources)?;

    let report = writer.close(SYNC_TIMEOUT);
    Ok(ImportSummary {
        tags,
        sources,
        report,
    })
}

/// The earliest time of the run directory's records: the smallest `start_ns` of
/// `files.csv` and the first `time_ns` of `probe.csv` (either may be gzipped); `None` when
/// neither has a row.
pub fn earliest_time_ns(dir: &Path) -> anyhow::Result<Option<i64>> {
    let mut earliest: Option<i64> = None;
    for (file, column, all_rows) in [
        ("files.csv", "start_ns", true),
        ("probe.csv", "time_ns", false),
    ] {
        let Some(reader) = schema::open_maybe_gz(dir, file)? else {
            continue;
        };
        let mut rdr = csv::ReaderBuilder::new().flexible(true).from_reader(reader);
        let Some(col) = rdr
            .headers()
            .with_context(|| format!("{file}: cannot read the header"))?
            .iter()
            .position(|h| h.trim() == column)
        else {
            continue;
        };
        for (i, row) in rdr.records().enumerate() {
            let row = row.with_context(|| format!("{file}: line {}", i + 2))?;
            if let Some(t) = row.get(col).and_then(|v| v.trim().parse::<i64>().ok()) {
                earliest = Some(earliest.map_or(t, |e| e.min(t)));
                if !all_rows {
                    break;
                }
            }
        }
    }
    Ok(earliest)
}

/// The batch files of a spool directory in write order (none when it does not exist).
pub fn spool_batches(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let p = e?.path();
        if let Some(seq) = batch_seq(&p) {
            found.push((seq, p));
        }
    }
    found.sort();
    Ok(found.into_iter().map(|(_, p)| p).collect())
}
