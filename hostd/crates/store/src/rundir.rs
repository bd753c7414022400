//! The run directory sink: `manifest.json`, `files.csv`, `intervals.csv`,
//! `summary.json`, `run-events.jsonl`, `corrupt.csv` (only when corruption was found). Rows are written and flushed as they come,
//! so an interrupted or failed run keeps everything up to that point.

use crate::manifest::Manifest;
use crate::sink::RecordSink;
use crate::summary::Summary;
use anyhow::Context;
use hostd_workload::events::{FileRecord, IntervalRecord, RunEvent};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Header of `files.csv`.
pub const FILES_HEADER: &str =
    "target,phase,index,start_ns,end_ns,bytes,mbps,verified,corrupt_blocks,corrupt_bytes,late_ops,direct_io,status,first_corrupt_offset,block_size,queue_depth";
/// Header of `corrupt.csv` (one row per corrupt 4 KiB block, first 64 per file).
pub const CORRUPT_HEADER: &str = "target,phase,index,block_offset,bad_bytes,first_bad_byte";
/// Header of `intervals.csv`.
pub const INTERVALS_HEADER: &str = "target,start_ns,end_ns,bytes,mbps,phase";
/// Header of `counters.csv` (each target's cumulative bytes every 100 ms).
pub const COUNTERS_HEADER: &str = "target,time_ns,bytes";

/// Writes `counters.csv` into `dir`: per target (label), the runner's 100 ms samples of its
/// cumulative bytes (all phases), `samples[i]` belonging to `labels[i]`.
pub fn write_counters(
    dir: &Path,
    labels: &[String],
    samples: &[Vec<(u64, u64)>],
) -> anyhow::Result<()> {
    let path = dir.join("counters.csv");
    let file = File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
    // The same CSV writer as files.csv, so a label with a comma or quote is quoted alike.
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(file);
    w.write_record(COUNTERS_HEADER.split(','))?;
    for (label, s) in labels.iter().zip(samples) {
        for &(t, b) in s {
            w.write_record([label.as_str(), &t.to_string(), &b.to_string()])?;
        }
    }
    w.flush()
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Writes a run directory.
pub struct RunDirSink {
    dir: PathBuf,
    files: csv::Writer<File>,
    intervals: csv::Writer<File>,
    events: BufWriter<File>,
    corrupt: Option<csv::Writer<File>>,
}

impl RunDirSink {
    /// Creates `dir` (must not exist, or be empty) and its CSV files.
    pub fn create(dir: &Path) -> anyhow::Result<RunDirSink> {
        if dir.exists()
            && std::fs::read_dir(dir)
                .map(|mut d| d.next().is_some())
                .unwrap_or(true)
        {
            anyhow::bail!(
                "run directory {} already exists and is not empty; choose another --out",
                dir.display()
            );
        }
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create run directory {}", dir.display()))?;
        let open = |name: &str| {
            File::create(dir.join(name))
                .with_context(|| format!("cannot create {}", dir.join(name).display()))
        };
        let mut files = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(open("files.csv")?);
        files.write_record(FILES_HEADER.split(','))?;
        files.flush()?;
        let mut intervals = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(open("intervals.csv")?);
        intervals.write_record(INTERVALS_HEADER.split(','))?;
        intervals.flush()?;
        let events = BufWriter::new(open("run-events.jsonl")?);
        Ok(RunDirSink {
            dir: dir.to_path_buf(),
            files,
            intervals,
            events,
            corrupt: None,
        })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Removes what `create` made (for a run that failed before any I/O):
    /// its files, then the directory if it is empty.
    pub fn discard(self) {
        let dir = self.dir.clone();
        drop(self);
        for name in [
            "files.csv",
            "intervals.csv",
            "run-events.jsonl",
            "manifest.json",
        ] {
            let _ = std::fs::remove_file(dir.join(name));
        }
        let _ = std::fs::remove_dir(&dir);
    }

    fn write_json(&self, name: &str, value: &impl serde::Serialize) -> anyhow::Result<()> {
        hostd_analysis::atomic::write_atomic(
            &self.dir.join(name),
            &serde_json::to_vec_pretty(value)?,
        )
    }
}

impl RecordSink for RunDirSink {
    fn name(&self) -> &str {
        "run-dir"
    }

    fn begin(&mut self, manifest: &Manifest) -> anyhow::Result<()> {
        self.write_json("manifest.json", manifest)
    }

    fn file(&mut self, r: &FileRecord) -> anyhow::Result<()> {
        self.files.write_record([
            r.target.clone(),
            r.phase.clone(),
            r.index.to_string(),
            r.start_ns.to_string(),
            r.end_ns.to_string(),
            r.bytes.to_string(),
            format!("{:.3}", r.mbps),
            match r.verified {
                Some(true) => "true".into(),
                Some(false) => "false".into(),
                None => String::new(),
            },
            r.corrupt_blocks.to_string(),
            r.corrupt_bytes.to_string(),
            r.late_ops.to_string(),
            r.direct_io.to_string(),
            r.status.clone(),
            r.corrupt
                .first()
                .map(|c| c.offset.to_string())
                .unwrap_or_default(),
            r.block_size.to_string(),
            r.queue_depth.to_string(),
        ])?;
        self.files.flush()?;
        if !r.corrupt.is_empty() {
            if self.corrupt.is_none() {
                let f = File::create(self.dir.join("corrupt.csv"))
                    .context("cannot create corrupt.csv")?;
                let mut w = csv::WriterBuilder::new().has_headers(false).from_writer(f);
                w.write_record(CORRUPT_HEADER.split(','))?;
                self.corrupt = Some(w);
            }
            let w = self.corrupt.as_mut().expect("created");
            for c in &r.corrupt {
                w.write_record([
                    r.target.clone(),
                    r.phase.clone(),
                    r.index.to_string(),
                    c.offset.to_string(),
                    c.bad_bytes.to_string(),
                    c.first_bad_byte.to_string(),
                ])?;
            }
            w.flush()?;
        }
        Ok(())
    }

    fn interval(&mut self, r: &IntervalRecord) -> anyhow::Result<()> {
        self.intervals.write_record([
            r.target.clone(),
            r.start_ns.to_string(),
            r.end_ns.to_string(),
            r.bytes.to_string(),
            format!("{:.3}", r.mbps),
            r.phase.clone(),
        ])?;
        self.intervals.flush()?;
        Ok(())
    }

    fn event(&mut self, ev: &RunEvent) -> anyhow::Result<()> {
        serde_json::to_writer(&mut self.events, ev)?;
        self.events.write_all(b"\n")?;
        self.events.flush()?;
        Ok(())
    }

    fn finish(&mut self, manifest: &Manifest, summary: &Summary) -> anyhow::Result<()> {
        // Rewrite the manifest: engines and direct-I/O status are final now.
        self.write_json("manifest.json", manifest)?;
        self.write_json("summary.json", summary)
    }
}
