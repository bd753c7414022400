//! `hostd import RUN_DIR`: push a finished run directory to InfluxDB.
//!
//! Reads `manifest.json` (required; in any shape the project wrote, through
//! `hostd_records::manifest::read`), every imported file of the run-file registry
//! (`hostd_records::run_files::RUN_FILES`: `files.csv`, `intervals.csv`, `probe.csv` or
//! `probe/`, `probe_agg.csv` or its level (the CSV files also as `.gz`), the drive's tables,
//! `events.json`, `summary.json`, `probe-link.jsonl`, `os-log.jsonl`; through
//! `schema::run_dir_points`), and the batches left in `spool/`.
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
    anyhow::ensure!(
        dir.join(hostd_records::manifest::FILE_NAME).is_file(),
        "{} is not a run directory: it has no manifest.json",
        dir.display()
    );
    // Every shape the project wrote, old ones upgraded (hostd_records::manifest::read).
    let manifest = hostd_records::manifest::read(dir)?;
    let mut tags = RunTags::from_manifest(&manifest);
    if let Some(r) = rig {
        tags.rig = r.to_owned();
    }

    let mut cfg = WriterConfig::new(target, None);
    cfg.playback = manifest.playback();
    cfg.backoff_max = Duration::from_secs(2);
    // Its spool is in memory (the run directory is only read) and bounded: when it is full
    // the import waits for InfluxDB, as long as a source may take, rather than drop.
    cfg.spool_wait = Some(SYNC_TIMEOUT);
    let writer = Writer::start(cfg)?;
    let mut sources = Vec::new();
    let check = |w: &Writer, source: &str, sources: &[SourceCount]| -> anyhow::Result<()> {
        let r = w.sync(SYNC_TIMEOUT);
        if r.spooled_remaining > 0 || r.stats.rejected > 0 || r.stats.dropped > 0 {
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

    {
        let sources_cell = std::cell::RefCell::new(&mut sources);
        schema::run_dir_points(
            dir,
            &manifest,
            &tags,
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
