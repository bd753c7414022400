//! The analysis as a part of `hostd run` ([`Stage::Analyse`]): at the end of the run it
//! analyses the run's records in memory (the same [`hostd_records::RunData`] `hostd analyze`
//! reads from the files, with the probe's figures and series the [`Stage::Enrich`] part
//! added), writes events.json and report.html, hands the analysis on to the exports
//! ([`RunRecords::analysis`]), gives the summary its per-phase figures and all-active
//! window (`hostd_analysis::run_summary`: the analysis' own, computed once) and puts what it
//! found into `summary.extra.analysis` (the run's summary prints them).

use hostd_analysis::run_summary;
use hostd_store::{RunPart, RunRecords, Stage, SummaryExt as _};

/// The analysis part of a run; see the module documentation.
#[derive(Debug, Default)]
pub struct AnalysisPart;

impl RunPart for AnalysisPart {
    fn name(&self) -> &str {
        "analysis"
    }

    fn stage(&self) -> Stage {
        Stage::Analyse
    }

    fn finish(&mut self, run: &mut RunRecords<'_>) -> anyhow::Result<()> {
        let analysis = crate::analyze_and_write_records(run.dir, &run.data)?;
        let phases = run_summary::phases(&run.outcome.files, &run.data.latency, &analysis);
        run.summary
            .set_figures(phases, run_summary::window(&analysis), &run.outcome.targets);
        let lines = crate::run_summary_lines(&analysis);
        run.summary.extra.insert(
            "analysis".into(),
            serde_json::json!({ "text": lines, "headlines": analysis.headlines, "events_json": "events.json", "report": "report.html" }),
        );
        run.analysis = Some(analysis);
        Ok(())
    }
}
