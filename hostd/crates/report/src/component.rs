//! The analysis as a `hostd run` component: at the end of the run it analyses the run's
//! records in memory (the same [`RunData`] `hostd analyze` reads from the files), writes
//! events.json and report.html, and puts the summary lines into `summary.extra.analysis`
//! (the run's summary prints them).

use hostd_analysis::RunData;
use hostd_store::{RunComponent, Summary};
use hostd_workload::events::{RunEvent, RunObserver};
use hostd_workload::runner::RunOutcome;
use std::path::Path;

/// Add after the probe component in `cmd/run.rs::components()` (that one adds the probe
/// samples to the records at its finish).
#[derive(Debug, Default)]
pub struct AnalysisComponent;

impl RunObserver for AnalysisComponent {
    fn on_event(&self, _event: &RunEvent) {}
}

impl RunComponent for AnalysisComponent {
    fn name(&self) -> &str {
        "analysis"
    }

    fn finish(
        &mut self,
        _outcome: &RunOutcome,
        summary: &mut Summary,
        run: &mut RunData,
        run_dir: &Path,
    ) -> anyhow::Result<()> {
        let analysis = crate::analyze_and_write_records(run_dir, run)?;
        let lines = crate::run_summary_lines(&analysis);
        summary.extra.insert(
            "analysis".into(),
            serde_json::json!({ "text": lines, "headlines": analysis.headlines, "events_json": "events.json", "report": "report.html" }),
        );
        Ok(())
    }
}
