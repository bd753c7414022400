//! [`InfluxComponent`]: InfluxDB as a `hostd run` component.
//!
//! While the run goes, every file and 1 s interval record is written as it happens, and —
//! through the [`ProbeStream`] the probe component gets from [`InfluxComponent::probe_stream`]
//! — every probe sample and 10 ms aggregate, so a dashboard follows the run live. When the
//! run ends — after the probe and analysis components have finished the run directory — it
//! pushes what they wrote there with the same mapping as `hostd import`: `files.csv` again
//! (now with the probe's energy and temperature columns; same series and time, so fields
//! merge), `events.json` (events, overlap, phase statistics), `summary.json` (probe
//! health, from the summary being finished) and `probe-link.jsonl` (and `probe.csv` /
//! `probe_agg.csv` only when the probe was not streamed live). Everything goes through one
//! [`Writer`] spooling to `RUN_DIR/spool/`, so an outage at any time loses nothing and
//! keeps the order. List it after the analysis component in `hostd run`.

use crate::live::{LiveSlot, LiveWriter, ProbeStream};
use crate::schema::{self, RunTags};
use crate::{Target, Writer, WriterConfig};
use hostd_store::{Manifest, RunComponent, Summary};
use hostd_workload::events::{RunEvent, RunObserver};
use hostd_workload::runner::RunOutcome;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

/// How long the end of the run keeps backfilling before leaving the rest in the spool.
pub const FINISH_TIMEOUT: Duration = Duration::from_secs(30);

/// The InfluxDB component of a run (see the module docs).
pub struct InfluxComponent {
    target: Target,
    rig: Option<String>,
    live: LiveSlot,
    probe_live: bool,
    cum_bytes: Mutex<HashMap<(String, String), u64>>,
}

impl std::fmt::Debug for InfluxComponent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InfluxComponent")
            .field("target", &self.target)
            .finish()
    }
}

impl InfluxComponent {
    /// A component writing to `target`; `rig` overrides the host name as the `rig` tag.
    pub fn new(target: Target, rig: Option<String>) -> Self {
        InfluxComponent {
            target,
            rig,
            live: LiveSlot::default(),
            probe_live: false,
            cum_bytes: Mutex::new(HashMap::new()),
        }
    }

    /// The probe's samples and bins into this run's writer, live (hand it to the probe
    /// component). The run's end then does not push `probe.csv` and `probe_agg.csv` again.
    pub fn probe_stream(&mut self) -> ProbeStream {
        self.probe_live = true;
        ProbeStream::new(self.live.clone())
    }

    fn with_live(&self, f: impl FnOnce(&mut LiveWriter) -> anyhow::Result<()>) {
        if let Some(Err(e)) = self.live.with(f) {
            tracing::error!("InfluxDB: {e:#}");
        }
    }
}

impl RunObserver for InfluxComponent {
    fn on_event(&self, ev: &RunEvent) {
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
                l.writer.write(&schema::file_point(&l.tags, rec, total))?;
                Ok(())
            }),
            RunEvent::Interval(rec) => self.with_live(|l| {
                l.writer.write(&schema::interval_point(&l.tags, rec))?;
                Ok(())
            }),
            _ => {}
        }
    }
}

impl RunComponent for InfluxComponent {
    fn name(&self) -> &str {
        "influx"
    }

    fn start(
        &mut self,
        manifest: &Manifest,
        run_dir: &Path,
    ) -> anyhow::Result<Option<serde_json::Value>> {
        let mut tags = RunTags::from_manifest(manifest);
        if let Some(r) = &self.rig {
            tags.rig = r.clone();
        }
        let writer = Writer::start(WriterConfig::new(
            self.target.clone(),
            Some(run_dir.join("spool")),
        ))?;
        writer.write(&schema::run_point(manifest, &tags))?;
        let section = serde_json::json!({
            "url": self.target.url,
            "org": self.target.org,
            "bucket": self.target.bucket,
            "rig": tags.rig,
            "run": tags.run,
        });
        self.live.fill(LiveWriter { writer, tags });
        Ok(Some(section))
    }

    fn finish(
        &mut self,
        _outcome: &RunOutcome,
        summary: &mut Summary,
        _run: &mut hostd_records::RunData,
        run_dir: &Path,
    ) -> anyhow::Result<()> {
        let Some(mut live) = self.live.take() else {
            return Ok(());
        };
        // What the other components wrote into the run directory.
        let mut tags = live.tags.clone();
        // The probe's id is known once it answered: the probe component wrote it.
        match hostd_records::manifest::read(run_dir) {
            Ok(m) => tags.probe = RunTags::from_manifest(&m).probe,
            Err(e) => tracing::warn!("InfluxDB: no probe tag: {e}"),
        }
        live.tags = tags;
        let mut pushed = serde_json::Map::new();
        let mut problems = Vec::new();
        let writer = &live.writer;
        // Sent live already: not again from the files.
        let skip: &[&str] = if self.probe_live {
            pushed.insert("probe (live)".into(), self.live.probe_points().into());
            &["probe.csv", "probe_agg.csv"]
        } else {
            &[]
        };
        if let Err(e) = schema::run_dir_points(
            run_dir,
            &live.tags,
            skip,
            |pts| Ok(writer.write_all(pts)?),
            |source, n| {
                if let Some(n) = n {
                    pushed.insert(source.into(), n.into());
                }
                Ok(())
            },
        ) {
            problems.push(format!("{e:#}"));
        }
        // summary.json is written after the components finish: use the summary itself.
        if !pushed.contains_key("summary.json") {
            if let Some(p) = schema::probe_health_point(summary, &live.tags) {
                live.writer.write(&p)?;
                pushed.insert("summary.json".into(), 1.into());
            }
        }

        let report = live.writer.close(FINISH_TIMEOUT);
        let s = report.stats;
        summary.extra.insert(
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
