//! Record sinks: one small trait, one file per destination (hyperfine's
//! exporters). The runner's events reach every sink through [`SinkSet`].

use crate::manifest::Manifest;
use crate::summary::Summary;
use hostd_workload::events::{FileRecord, IntervalRecord, RunEvent, RunObserver};
use std::sync::Mutex;

/// A destination for a run's records. Methods other than `name` default to
/// doing nothing, so a sink implements only what it stores and new record
/// kinds can be added without touching existing sinks.
pub trait RecordSink: Send {
    /// Short name for messages (`run-dir`, `influx`).
    fn name(&self) -> &str;
    /// The run starts (manifest known).
    fn begin(&mut self, _manifest: &Manifest) -> anyhow::Result<()> {
        Ok(())
    }
    /// One file operation finished.
    fn file(&mut self, _rec: &FileRecord) -> anyhow::Result<()> {
        Ok(())
    }
    /// One interval of one target.
    fn interval(&mut self, _rec: &IntervalRecord) -> anyhow::Result<()> {
        Ok(())
    }
    /// Any other run event (phase and file start, active targets, warnings).
    fn event(&mut self, _ev: &RunEvent) -> anyhow::Result<()> {
        Ok(())
    }
    /// The run ended; `summary` is final. Flush and close.
    fn finish(&mut self, _manifest: &Manifest, _summary: &Summary) -> anyhow::Result<()> {
        Ok(())
    }
}

/// A sink and its first failure, if any.
type SinkEntry = (Box<dyn RecordSink>, Option<String>);

/// All sinks of a run. As a [`RunObserver`] it forwards the runner's events;
/// a sink that fails is logged once (`tracing::warn!`) and then skipped (others go on).
#[derive(Default)]
pub struct SinkSet {
    sinks: Mutex<Vec<SinkEntry>>,
}

impl SinkSet {
    /// Empty set.
    pub fn new() -> SinkSet {
        SinkSet::default()
    }

    /// Adds a sink.
    pub fn add(&self, sink: Box<dyn RecordSink>) {
        self.sinks.lock().unwrap().push((sink, None));
    }

    fn each(&self, mut f: impl FnMut(&mut dyn RecordSink) -> anyhow::Result<()>) {
        for (sink, err) in self.sinks.lock().unwrap().iter_mut() {
            if err.is_some() {
                continue;
            }
            if let Err(e) = f(sink.as_mut()) {
                let msg = format!("sink {} failed: {e:#}", sink.name());
                // Said once, as it happens; the binary's subscriber renders it.
                tracing::warn!("{msg}");
                *err = Some(msg);
            }
        }
    }

    /// Calls `begin` on every sink.
    pub fn begin(&self, manifest: &Manifest) {
        self.each(|s| s.begin(manifest));
    }

    /// Calls `finish` on every sink; returns the failures of the run.
    pub fn finish(&self, manifest: &Manifest, summary: &Summary) -> Vec<String> {
        self.each(|s| s.finish(manifest, summary));
        self.sinks
            .lock()
            .unwrap()
            .iter()
            .filter_map(|(_, e)| e.clone())
            .collect()
    }
}

impl RunObserver for SinkSet {
    fn on_event(&self, ev: &RunEvent) {
        match ev {
            RunEvent::FileEnd(rec) => self.each(|s| s.file(rec)),
            RunEvent::Interval(rec) => self.each(|s| s.interval(rec)),
            other => self.each(|s| s.event(other)),
        }
    }
}
