//! [`InfluxPart`]: InfluxDB as a part of `hostd run` ([`Stage::Export`]).
//!
//! While the run goes, every file and 1 s interval record is written as it happens, and —
//! through its probe feed ([`RunPart::probe_feed`], a [`ProbeStream`]) — every probe sample
//! and 10 ms aggregate, so a dashboard follows the run live. When the run ends, after the
//! probe and the analysis have finished, it pushes the run's records in memory
//! ([`RunRecords`]) with the same mapping as `hostd import` uses for the files that hold
//! them: the file records again (now with the probe's energy and temperature columns; same
//! series and time, so fields merge), the intervals, the drive temperature and thermal record, the analysis
//! (events, overlap, phase statistics, headlines), the probe health (from the summary
//! being finished) and the probe link's records. Everything goes through one [`Writer`]
//! spooling to `RUN_DIR/spool/`, so an outage at any time keeps the order and loses
//! nothing up to the spool's cap ([`InfluxPart::spool_cap`]); past it points are
//! dropped from the stream (counted, and still in the run directory for `hostd import`).

use crate::live::{LiveSlot, LiveWriter, ProbeStream};
use crate::schema::{self, RunTags};
use crate::spool::Limits;
use crate::{Point, Target, Writer, WriterConfig};
use hostd_records::RunEvent;
use hostd_store::{ProbeFeed, RunPart, RunRecords, RunStart, Stage};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// How long the end of the run keeps backfilling before leaving the rest in the spool.
pub const FINISH_TIMEOUT: Duration = Duration::from_secs(30);

/// The InfluxDB part of a run (see the module docs).
pub struct InfluxPart {
    target: Target,
    rig: Option<String>,
    live: LiveSlot,
    spool: Limits,
    probe_live: bool,
    cum_bytes: Mutex<HashMap<(String, String), u64>>,
}

impl std::fmt::Debug for InfluxPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InfluxPart")
            .field("target", &self.target)
            .finish()
    }
}

impl InfluxPart {
    /// A part writing to `target`; `rig` overrides the host name as the `rig` tag.
    pub fn new(target: Target, rig: Option<String>) -> Self {
        InfluxPart {
            target,
            rig,
            live: LiveSlot::default(),
            spool: Limits::default(),
            probe_live: false,
            cum_bytes: Mutex::new(HashMap::new()),
        }
    }

    /// Caps the spool directory at `bytes` (default [`crate::spool::DEFAULT_DISK_BYTES`]).
    pub fn spool_cap(mut self, bytes: u64) -> Self {
        self.spool.disk_bytes = bytes;
        self
    }

    /// Sets both bounds of the spool (the cap and the batches kept in memory when the disk
    /// cannot take them).
    pub fn spool_limits(mut self, limits: Limits) -> Self {
        self.spool = limits;
        self
    }

    fn with_live(&self, f: impl FnOnce(&mut LiveWriter) -> anyhow::Result<()>) {
        if let Some(Err(e)) = self.live.with(f) {
            tracing::error!("InfluxDB: {e:#}");
        }
    }
}

impl RunPart for InfluxPart {
    fn name(&self) -> &str {
        "influx"
    }

    fn stage(&self) -> Stage {
        Stage::Export
    }

    /// The probe's samples and bins into this run's writer, live.
    fn probe_feed(&mut self) -> Option<ProbeFeed> {
        self.probe_live = true;
        let mut stream = ProbeStream::new(self.live.clone());
        Some(Box::new(move |data| stream.feed(data)))
    }

    fn start(&mut self, run: &mut RunStart<'_>) -> anyhow::Result<Option<serde_json::Value>> {
        let mut tags = RunTags::from_manifest(run.manifest);
        if let Some(r) = &self.rig {
            tags.rig = r.clone();
        }
        let mut config = WriterConfig::new(self.target.clone(), Some(run.dir.join("spool")));
        config.playback = run.manifest.playback();
        config.spool_limits = self.spool;
        let writer = Writer::start(config)?;
        writer.write(&schema::run_point(run.manifest, &tags))?;
        let section = serde_json::json!({
            "url": self.target.url,
            "org": self.target.org,
            "bucket": self.target.bucket,
            "rig": tags.rig,
            "run": tags.run,
            "spool_max_bytes": self.spool.disk_bytes,
        });
        self.live.fill(LiveWriter { writer, tags });
        Ok(Some(section))
    }

    fn on_event(&self, ev: &RunEvent) -> anyhow::Result<()> {
        match ev {
            RunEvent::FileEnd(rec) => self.with_live(|l| {
                let total = {
                    let mut cum = self.cum_bytes.lock().unwrap_or_else(|e| e.into_inner());
                    let t = cum
                        .entry((rec.target.clone(), rec.phase.clone()))
                        .or_default();
                    *t += rec.bytes;
                    *t
                };
                // Live: never stall the run; a full queue drops (and counts) instead.
                l.writer
                    .offer_all([&schema::file_point(&l.tags, rec, total)])?;
                Ok(())
            }),
            RunEvent::Interval(rec) => self.with_live(|l| {
                l.writer
                    .offer_all([&schema::interval_point(&l.tags, rec)])?;
                Ok(())
            }),
            _ => {}
        }
        Ok(())
    }

    /// A line while points wait in the spool or were dropped; nothing while InfluxDB
    /// takes them as they come.
    fn live_status(&self) -> Option<String> {
        let s = self.live.with(|l| l.writer.stats())?;
        if s.spool_bytes == 0 && s.memory_batches == 0 && s.dropped == 0 {
            return None;
        }
        let mut line = format!(
            "influx: spool {} of {}",
            hostd_records::units::human_bytes(s.spool_bytes),
            hostd_records::units::human_bytes(self.spool.disk_bytes)
        );
        if s.memory_batches > 0 {
            line.push_str(&format!(", {} batches in memory", s.memory_batches));
        }
        if s.dropped > 0 {
            line.push_str(&format!(", {} points dropped", s.dropped));
        }
        Some(line)
    }

    fn finish(&mut self, run: &mut RunRecords<'_>) -> anyhow::Result<()> {
        let Some(mut live) = self.live.take() else {
            return Ok(());
        };
        // The probe's id is known once it answered: the probe part put it in the manifest.
        live.tags.probe = RunTags::from_manifest(&run.manifest).probe;
        let mut pushed = serde_json::Map::new();
        if self.probe_live {
            pushed.insert("probe (live)".into(), self.live.probe_points().into());
        }
        let mut problems = Vec::new();
        if let Err(e) = run_points(run, &live.tags, |source, pts| {
            live.writer.write_all(pts)?;
            pushed.insert(source.into(), pts.len().into());
            Ok(())
        }) {
            problems.push(format!("{e:#}"));
        }

        let report = live.writer.close(FINISH_TIMEOUT);
        let s = report.stats;
        run.summary.extra.insert(
            "influx".into(),
            serde_json::json!({
                "url": self.target.url,
                "bucket": self.target.bucket,
                "points_written": s.written,
                "points_backfilled": s.backfilled,
                "points_retried": s.retried,
                "points_spooled": s.spooled,
                "points_rejected": s.rejected,
                "points_waiting_in_spool": report.spooled_remaining,
                "points_dropped": s.dropped,
                "points_dropped_queue": s.dropped_queue,
                "dropped_because": report.dropped_because,
                "spool_bytes": s.spool_bytes,
                "spool_peak_bytes": s.spool_peak,
                "spool_max_bytes": report.bounds.spool_bytes,
                "memory_batches_peak": s.memory_peak,
                "memory_batches_max": report.bounds.memory_batches,
                "queue_peak_bytes": s.queue_peak,
                "queue_max_bytes": report.bounds.queue_bytes,
                "pushed_at_end": pushed,
                "complete": report.is_complete(),
            }),
        );
        if !report.is_complete() {
            problems.push(report.summary());
        }
        if problems.is_empty() {
            Ok(())
        } else {
            anyhow::bail!("{}", problems.join("; "))
        }
    }
}

/// The points of a finished run's records in memory, by the run-directory file that holds
/// the same records (`hostd import` maps those files to the very same points): `emit` gets
/// each source's points, named like the file (`files.csv`, `events.json overlap`, …); a
/// source the run has nothing for is left out.
fn run_points(
    run: &RunRecords<'_>,
    tags: &RunTags,
    mut emit: impl FnMut(&str, &[Point]) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut cum: HashMap<(&str, &str), u64> = HashMap::new();
    let files: Vec<Point> = run
        .data
        .files
        .iter()
        .map(|r| {
            let total = cum.entry((&r.target, &r.phase)).or_default();
            *total += r.bytes;
            schema::file_point(tags, r, *total)
        })
        .collect();
    emit("files.csv", &files)?;
    let intervals: Vec<Point> = run
        .outcome
        .intervals
        .iter()
        .map(|r| schema::interval_point(tags, r))
        .collect();
    emit("intervals.csv", &intervals)?;
    // The files of one point per record, from the registry.
    for file in hostd_records::run_files::RUN_FILES {
        if let Some(pts) = schema::run_rows_points(&run.data, file, tags) {
            emit(file.name, &pts)?;
        }
    }
    if let Some(a) = &run.analysis {
        emit("events.json", &schema::event_points(a, tags))?;
        emit("events.json overlap", &schema::overlap_points(a, tags))?;
        emit("events.json phases", &schema::stats_points(a, tags))?;
        emit("events.json headlines", &schema::headline_points(a, tags))?;
    }
    let health: Vec<Point> = schema::probe_health_point(&run.summary, tags)
        .into_iter()
        .collect();
    if !health.is_empty() {
        emit("summary.json", &health)?;
    }
    if !run.probe_link.is_empty() {
        emit(
            "probe-link.jsonl",
            &schema::probe_link_points(&run.probe_link, tags),
        )?;
    }
    if let Some(log) = run.data.os_log.as_deref().filter(|l| !l.is_empty()) {
        emit("os-log.jsonl", &schema::os_log_points(log, tags))?;
    }
    Ok(())
}
