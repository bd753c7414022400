//! The analysis as a `hostd run` component: at the end of the run it analyses the run
//! directory, writes events.json and report.html, and puts the summary lines into
//! `summary.extra.analysis` (the run's summary prints them).

use hostd_store::{RunComponent, Summary};
use hostd_workload::events::{RunEvent, RunObserver};
use hostd_workload::runner::RunOutcome;
use std::path::Path;

/// Add last in `cmd/run.rs::components()`, after the probe component (it reads the
/// probe.csv that one writes at its finish).
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
        run_dir: &Path,
    ) -> anyhow::Result<()> {
        let analysis = crate::analyze_and_write(run_dir)?;
        let lines = crate::run_summary_lines(&analysis);
        summary.extra.insert(
            "analysis".into(),
            serde_json::json!({ "text": lines, "headlines": analysis.headlines, "events_json": "events.json", "report": "report.html" }),
        );
        Ok(())
    }
}
