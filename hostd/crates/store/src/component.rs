//! Optional run components (probe link, InfluxDB, analysis): the `hostd run`
//! command composes them without knowing their internals. A component sees
//! every run event (it is a [`RunObserver`]), may add a section to the
//! manifest before the run, and may add files to the run directory and
//! sections/warnings to the summary after it.

use crate::manifest::Manifest;
use crate::summary::Summary;
use hostd_records::RunData;
use hostd_workload::events::RunObserver;
use hostd_workload::runner::RunOutcome;
use std::path::Path;

/// A part of a run that is not the workload itself.
pub trait RunComponent: RunObserver {
    /// Name; also the key of its manifest and summary sections.
    fn name(&self) -> &str;
    /// Before any I/O. The returned value becomes `manifest.extra[name]`.
    fn start(
        &mut self,
        _manifest: &Manifest,
        _run_dir: &Path,
    ) -> anyhow::Result<Option<serde_json::Value>> {
        Ok(None)
    }
    /// After the run, before `summary.json` is written. `run` holds the run's records in
    /// memory (files, counters; the probe component adds its samples and figures) for the
    /// components after it: read them there, not back from the files. May write its own
    /// files into `run_dir` and add to `summary` (`extra`, `warnings`).
    fn finish(
        &mut self,
        _outcome: &RunOutcome,
        _summary: &mut Summary,
        _run: &mut RunData,
        _run_dir: &Path,
    ) -> anyhow::Result<()> {
        Ok(())
    }
    /// One line for the live view while the run goes on (e.g. the probe's
    /// bus power and temperatures); `None` shows nothing.
    fn live_status(&self) -> Option<String> {
        None
    }
}
