//! The run directory sink: `manifest.json`, `files.csv`, `intervals.csv`,
//! `summary.json`, `run-events.jsonl`, `corrupt.csv` (only when corruption was found),
//! and, once an I/O was timed, the full latency histograms in `latency-files.hlog`
//! and `latency-intervals.hlog` (HdrHistogram interval logs, `docs/latency.md`; the
//! percentiles are columns of `files.csv` and `intervals.csv`). Rows are written and flushed as they come,
//! so an interrupted or failed run keeps everything up to that point.

use crate::manifest::Manifest;
use crate::sink::RecordSink;
use crate::summary::Summary;
use anyhow::Context;
use hostd_records::counters::CounterRecord;
use hostd_records::{files, intervals, latency};
use hostd_workload::events::{FileRecord, IntervalRecord, LatencyRecord, LatencyScope, RunEvent};
use hostd_workload::latency::LatencyLogWriter;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Writes `counters.csv` into `dir`: per target (label), the runner's 100 ms samples of its
/// cumulative bytes (all phases), `samples[i]` belonging to `labels[i]`.
pub fn write_counters(
    dir: &Path,
    labels: &[String],
    samples: &[Vec<(u64, u64)>],
) -> anyhow::Result<()> {
    let samples: Vec<Vec<CounterRecord>> = samples
        .iter()
        .map(|s| {
            s.iter()
                .map(|&(time_ns, bytes)| CounterRecord { time_ns, bytes })
                .collect()
        })
        .collect();
    Ok(hostd_records::counters::write(dir, labels, &samples)?)
}

/// The tag of a latency record in its log (`hostd_records::latency::file_tag`,
/// `interval_tag`).
pub fn latency_tag(r: &LatencyRecord) -> String {
    match &r.scope {
        LatencyScope::File { phase, index } => latency::file_tag(r.target_index, phase, *index),
        LatencyScope::Interval { phase } => latency::interval_tag(r.target_index, phase),
    }
}

/// The run's latency histograms in memory, as the run directory's logs hold them: what
/// `hostd run` hands to the report (`RunData::latency`) without reading the logs back.
/// Filled by the [`RunDirSink`] as it writes each one ([`RunDirSink::keep_latency`]), so a
/// histogram is compressed once for both.
#[derive(Debug, Default)]
pub struct LatencyRecords(std::sync::Mutex<latency::RunLatency>);

impl LatencyRecords {
    fn keep(&self, r: &LatencyRecord, l: latency::LoggedLatency) {
        let mut kept = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match r.scope {
            LatencyScope::File { .. } => kept.files.push(l),
            LatencyScope::Interval { .. } => kept.intervals.push(l),
        }
    }

    /// Everything kept so far, in the order `RunLatency::read` gives; leaves it empty.
    pub fn take(&self) -> latency::RunLatency {
        let mut l = std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()));
        l.sort();
        l
    }
}

/// Writes a run directory.
pub struct RunDirSink {
    dir: PathBuf,
    /// Open until the run ends: closed then, so that the end of the run can
    /// replace `files.csv` (Windows cannot rename over a file still open).
    files: Option<files::Writer>,
    intervals: intervals::Writer,
    events: BufWriter<File>,
    /// The run's start (host Unix ns): the latency logs' BaseTime.
    start_ns: u64,
    latency: Option<LatencyFiles>,
    /// Where the logged histograms are also kept in memory, if asked.
    kept: Option<std::sync::Arc<LatencyRecords>>,
}

/// The two latency logs, opened at the first timed I/O.
struct LatencyFiles {
    files: LatencyLogWriter<BufWriter<File>>,
    intervals: LatencyLogWriter<BufWriter<File>>,
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
        let files = files::Writer::create(dir, false)?;
        let intervals = intervals::Writer::create(dir)?;
        let events = BufWriter::new(open("run-events.jsonl")?);
        Ok(RunDirSink {
            dir: dir.to_path_buf(),
            files: Some(files),
            intervals,
            events,
            start_ns: 0,
            latency: None,
            kept: None,
        })
    }

    /// Keeps every latency histogram the sink logs also in memory, in the returned
    /// [`LatencyRecords`] (for the report of `hostd run`).
    pub fn keep_latency(&mut self) -> std::sync::Arc<LatencyRecords> {
        self.kept.get_or_insert_with(Default::default).clone()
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
            latency::FILES_LOG,
            latency::INTERVALS_LOG,
        ] {
            let _ = std::fs::remove_file(dir.join(name));
        }
        let _ = std::fs::remove_dir(&dir);
    }

    fn latency(&mut self, r: &LatencyRecord) -> anyhow::Result<()> {
        if self.latency.is_none() {
            let open = |name: &str| {
                File::create(self.dir.join(name))
                    .with_context(|| format!("cannot create {}", self.dir.join(name).display()))
            };
            let log = |name: &str, what: &str| -> anyhow::Result<_> {
                Ok(LatencyLogWriter::new(
                    BufWriter::new(open(name)?),
                    self.start_ns,
                    &format!(
                        "throttlescope {what}: I/O latency in ns, submission to completion; \
                         tags {}",
                        if what == "files" {
                            "file/<target index>/<phase>/<file index>"
                        } else {
                            "interval/<target index>/<phase>"
                        }
                    ),
                )?)
            };
            self.latency = Some(LatencyFiles {
                files: log(latency::FILES_LOG, "files")?,
                intervals: log(latency::INTERVALS_LOG, "intervals")?,
            });
        }
        let l = self.latency.as_mut().expect("opened above");
        let log = match r.scope {
            LatencyScope::File { .. } => &mut l.files,
            LatencyScope::Interval { .. } => &mut l.intervals,
        };
        let logged = latency::LoggedLatency::new(
            &latency_tag(r),
            self.start_ns,
            r.start_ns,
            r.end_ns,
            &r.histogram,
        );
        log.write_logged(&logged, r.histogram.max_ns())?;
        if let Some(kept) = &self.kept {
            kept.keep(r, logged);
        }
        Ok(())
    }
}

impl RecordSink for RunDirSink {
    fn name(&self) -> &str {
        "run-dir"
    }

    fn begin(&mut self, manifest: &Manifest) -> anyhow::Result<()> {
        self.start_ns = manifest.start_ns;
        Ok(hostd_records::manifest::write(&self.dir, manifest)?)
    }

    fn file(&mut self, r: &FileRecord) -> anyhow::Result<()> {
        match &mut self.files {
            Some(w) => Ok(w.write(r)?),
            None => anyhow::bail!("a file record after the end of the run: files.csv is closed"),
        }
    }

    fn interval(&mut self, r: &IntervalRecord) -> anyhow::Result<()> {
        Ok(self.intervals.write(r)?)
    }

    fn event(&mut self, ev: &RunEvent) -> anyhow::Result<()> {
        if let RunEvent::Latency(r) = ev {
            // Its own files; one line per second would swamp the event log.
            return self.latency(r);
        }
        serde_json::to_writer(&mut self.events, ev)?;
        self.events.write_all(b"\n")?;
        self.events.flush()?;
        if let RunEvent::RunEnd { .. } = ev {
            // Every row is flushed as written; closing loses nothing.
            self.files = None;
        }
        Ok(())
    }

    fn finish(&mut self, manifest: &Manifest, summary: &Summary) -> anyhow::Result<()> {
        // Rewrite the manifest: engines and direct-I/O status are final now.
        hostd_records::manifest::write(&self.dir, manifest)?;
        Ok(hostd_records::summary::write(&self.dir, summary)?)
    }
}
