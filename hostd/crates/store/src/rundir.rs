//! The run directory as the last part of a run ([`Stage::Archive`]): `manifest.json`,
//! `files.csv`, `intervals.csv`, `counters.csv`, `summary.json`, `run-events.jsonl`,
//! `corrupt.csv` (only when corruption was found), and, once an I/O was timed, the full
//! latency histograms in `latency-files.hlog` and `latency-intervals.hlog` (HdrHistogram
//! interval logs, `docs/latency.md`; the percentiles are columns of `files.csv` and
//! `intervals.csv`). Each file is written once, by this part: `manifest.json` at the start
//! and once more with the final status; rows (the 100 ms counters of `counters.csv`
//! included) are written and flushed as they come, so an interrupted, failed or killed run
//! keeps everything up to that point. What `hostd run` needs of them at its end it reads
//! back once ([`read_back`], [`read_back_counters`]). `files.csv` holds what the workload knows of each file as the file
//! completes; what a part of [`Stage::Enrich`] adds to the records at the end (the probe's
//! figures) is that part's own file (`files-probe.csv`).

use crate::pipeline::{RunPart, RunRecords, RunStart, Stage};
use anyhow::Context;
use hostd_records::counters::{self, Counters};
use hostd_records::latency::LatencyLogWriter;
use hostd_records::{
    files, intervals, latency, run_event, FileRecord, IntervalRecord, LatencyRecord, LatencyScope,
    RunEvent,
};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The 100 ms byte counters [`RunDirPart`] streamed into `dir/counters.csv`, read back once for
/// the end of `hostd run` (which keeps none of them in memory as it goes), per target label
/// in time order, as `hostd analyze` reads them. None when the run made no sample (the
/// file is then missing).
pub fn read_back_counters(dir: &Path) -> anyhow::Result<Option<Counters>> {
    if !dir.join(counters::FILE_NAME).exists() {
        return Ok(None);
    }
    Ok(Some(
        counters::read_streamed(dir).context("reading back the run's counters.csv")?,
    ))
}

/// The workload's records as [`RunDirPart`] streamed them into `dir`, read back for the end of
/// `hostd run`, which keeps none of them in memory as it goes (its memory must not grow with
/// the run's files): `files.csv` (with `corrupt.csv`), `intervals.csv` and the latency logs,
/// read as `hostd analyze` reads them. `labels` are the run's targets in order: a record's
/// target index is its target's place there. A run that ended before its first file or
/// interval has none.
pub fn read_back(
    dir: &Path,
    labels: &[String],
) -> anyhow::Result<(Vec<FileRecord>, Vec<IntervalRecord>, latency::RunLatency)> {
    let index =
        |target: &str, fallback: usize| labels.iter().position(|l| l == target).unwrap_or(fallback);
    let mut files = files::read_streamed(dir).context("reading back the run's files.csv")?;
    for f in &mut files {
        f.target_index = index(&f.target, f.target_index);
    }
    let mut intervals =
        intervals::read_streamed(dir).context("reading back the run's intervals.csv")?;
    for i in &mut intervals {
        i.target_index = index(&i.target, i.target_index);
    }
    let latency = latency::RunLatency::read(dir).context("reading back the run's latency logs")?;
    Ok((files, intervals, latency))
}

/// Marks the run directory in use while `events` (its `run-events.jsonl`) is open: a shared
/// advisory lock that [`is_in_use`] sees (Unix; elsewhere nothing).
fn lock_in_use(events: &File) {
    #[cfg(unix)]
    {
        use std::os::unix::io::AsRawFd;
        // SAFETY: flock on a valid descriptor; released when the file closes.
        unsafe { libc::flock(events.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) };
    }
    #[cfg(not(unix))]
    let _ = events;
}

/// Whether a running `hostd run` holds the run directory `dir` (Unix; elsewhere, and for a
/// run directory without `run-events.jsonl`, false).
pub fn is_in_use(dir: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::io::AsRawFd;
        let Ok(f) = File::open(dir.join(run_event::FILE_NAME)) else {
            return false;
        };
        // SAFETY: flock on a valid descriptor, closed (and so unlocked) on return.
        unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) != 0 }
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        false
    }
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
/// Filled by the [`RunDirPart`] as it writes each one ([`RunDirPart::keep_latency`]), so a
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

/// The run directory part (see the module documentation).
pub struct RunDirPart {
    dir: PathBuf,
    open: Mutex<Open>,
    /// Where the logged histograms are also kept in memory, if asked.
    kept: Option<Arc<LatencyRecords>>,
}

/// The files written as the run goes.
struct Open {
    /// `None` until the start.
    files: Option<files::Writer>,
    intervals: intervals::Writer,
    events: BufWriter<File>,
    /// `counters.csv`, a row per target at each 100 ms sample.
    counters: counters::Stream,
    /// The targets' labels, by index (from the manifest at the start).
    labels: Vec<String>,
    /// The run's start (host Unix ns): the latency logs' BaseTime.
    start_ns: u64,
    latency: Option<LatencyFiles>,
}

/// The two latency logs, opened at the first timed I/O.
struct LatencyFiles {
    files: LatencyLogWriter<BufWriter<File>>,
    intervals: LatencyLogWriter<BufWriter<File>>,
}

/// The files [`RunDirPart::create`] and the run's start make: what [`discard`] takes back.
const CREATED: [&str; 7] = [
    files::FILE_NAME,
    intervals::FILE_NAME,
    counters::FILE_NAME,
    run_event::FILE_NAME,
    hostd_records::manifest::FILE_NAME,
    latency::FILES_LOG,
    latency::INTERVALS_LOG,
];

/// Removes what [`RunDirPart::create`] and the start made in `dir` (for a run that failed
/// before any I/O; drop the [`RunDirPart`] first): its files, then the directory if it is
/// empty.
pub fn discard(dir: &Path) {
    for name in CREATED {
        let _ = std::fs::remove_file(dir.join(name));
    }
    let _ = std::fs::remove_dir(dir);
}

impl RunDirPart {
    /// Creates `dir` (must not exist, or be empty) and the files the run streams into.
    pub fn create(dir: &Path) -> anyhow::Result<RunDirPart> {
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
        let events_path = dir.join(run_event::FILE_NAME);
        let events = File::create(&events_path)
            .with_context(|| format!("cannot create {}", events_path.display()))?;
        // Held as long as the run goes: `hostd clean` refuses a run directory in use.
        lock_in_use(&events);
        Ok(RunDirPart {
            dir: dir.to_path_buf(),
            open: Mutex::new(Open {
                files: None,
                intervals: intervals::Writer::create(dir)?,
                events: BufWriter::new(events),
                counters: counters::Stream::new(dir),
                labels: Vec::new(),
                start_ns: 0,
                latency: None,
            }),
            kept: None,
        })
    }

    /// Keeps every latency histogram the run directory logs also in memory, in the
    /// returned [`LatencyRecords`] (for the summary and the report of `hostd run`).
    pub fn keep_latency(&mut self) -> Arc<LatencyRecords> {
        self.kept.get_or_insert_with(Default::default).clone()
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Open> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Open {
    fn latency(
        &mut self,
        dir: &Path,
        kept: Option<&LatencyRecords>,
        r: &LatencyRecord,
    ) -> anyhow::Result<()> {
        if self.latency.is_none() {
            let open = |name: &str| {
                File::create(dir.join(name))
                    .with_context(|| format!("cannot create {}", dir.join(name).display()))
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
        if let Some(kept) = kept {
            kept.keep(r, logged);
        }
        Ok(())
    }
}

impl RunPart for RunDirPart {
    fn name(&self) -> &str {
        "run-dir"
    }

    fn stage(&self) -> Stage {
        Stage::Archive
    }

    fn start(&mut self, run: &mut RunStart<'_>) -> anyhow::Result<Option<serde_json::Value>> {
        let mut open = self.lock();
        open.start_ns = run.manifest.start_ns;
        open.labels = run
            .manifest
            .targets
            .iter()
            .map(|t| t.label.clone())
            .collect();
        open.files = Some(files::Writer::create(&self.dir)?);
        hostd_records::manifest::write(&self.dir, run.manifest)?;
        Ok(None)
    }

    fn on_event(&self, ev: &RunEvent) -> anyhow::Result<()> {
        let mut open = self.lock();
        match ev {
            RunEvent::FileEnd(r) => {
                if let Some(w) = &mut open.files {
                    w.write(r)?;
                }
            }
            RunEvent::Interval(r) => open.intervals.write(r)?,
            // A write that fails loses the counters, not the run's other files: said at
            // the end ([`counters::Stream::failure`]).
            RunEvent::Counters { time_ns, bytes } => {
                let open = &mut *open;
                open.counters.append(*time_ns, &open.labels, bytes);
            }
            // Its own files; one line per second would swamp the event log.
            RunEvent::Latency(r) => open.latency(&self.dir, self.kept.as_deref(), r)?,
            other => {
                serde_json::to_writer(&mut open.events, other)?;
                open.events.write_all(b"\n")?;
                open.events.flush()?;
            }
        }
        Ok(())
    }

    fn finish(&mut self, run: &mut RunRecords<'_>) -> anyhow::Result<()> {
        // The 100 ms byte counters went to their file as they came.
        if let Some(f) = self.lock().counters.failure() {
            run.summary.warnings.push(format!("counters.csv: {f}"));
        }
        // Final figures a part keeps under `manifest` in its summary section (the probe's
        // alignment uncertainty and link counters) go into the manifest too.
        for (name, section) in &run.summary.extra {
            if let (Some(last), Some(serde_json::Value::Object(m))) =
                (section.get("manifest"), run.manifest.extra.get_mut(name))
            {
                m.insert("final".into(), last.clone());
            }
        }
        // The manifest once more: engines and direct-I/O status are final now. Each of the
        // two is written whatever became of the other.
        let manifest = hostd_records::manifest::write(&self.dir, &run.manifest);
        let summary = hostd_records::summary::write(&self.dir, &run.summary);
        manifest?;
        Ok(summary?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hostd_records::counters::CounterRecord;
    use hostd_records::manifest::{Manifest, TargetInfo};

    #[test]
    fn counters_go_to_their_file_as_they_come_and_read_back_once_per_target() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("run");
        let mut sink = RunDirPart::create(&dir).unwrap();
        let targets = ["a", "b,c"]
            .map(|l| TargetInfo::simulated(l, "write", l))
            .to_vec();
        sink.start(&mut RunStart {
            manifest: &mut Manifest::new("r", 1_000, targets),
            dir: &dir,
            probe_feeds: &mut Vec::new(),
            drive_feeds: &mut Vec::new(),
        })
        .unwrap();
        assert!(read_back_counters(&dir).unwrap().is_none(), "no sample yet");
        let mut want = [Vec::new(), Vec::new()];
        for k in 0..4u64 {
            let (time_ns, bytes) = (1_000 + k * 100_000_000, vec![k << 20, k * k]);
            sink.on_event(&RunEvent::Counters {
                time_ns,
                bytes: bytes.clone(),
            })
            .unwrap();
            for (w, b) in want.iter_mut().zip(bytes) {
                w.push(CounterRecord { time_ns, bytes: b });
            }
            // In the file at once, both targets' rows, whole lines: a kill keeps them.
            let text = std::fs::read_to_string(dir.join(counters::FILE_NAME)).unwrap();
            assert_eq!(text.lines().count() as u64, 1 + 2 * (k + 1), "{text}");
            assert!(text.ends_with('\n'));
        }
        let back = read_back_counters(&dir).unwrap().unwrap();
        assert_eq!(back["a"], want[0]);
        assert_eq!(back["b,c"], want[1]);
        // The event log keeps them out: they have their own file.
        drop(sink);
        let events = std::fs::read_to_string(dir.join("run-events.jsonl")).unwrap();
        assert!(!events.contains("counters"), "{events}");
    }
}
