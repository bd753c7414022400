//! A run's records in memory: what `hostd run` hands on from the workload and the probe to
//! the analysis, the report and every sink, and what [`RunData::read`] rebuilds from a run
//! directory for `hostd analyze` — the same value either way.

use crate::counters::Counters;
use crate::error::Result;
use crate::files::FileRecord;
use crate::probe::ProbeSeries;
use std::path::Path;

/// The records the analysis and the report work on.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunData {
    /// Per-file records, in completion order.
    pub files: Vec<FileRecord>,
    /// Probe samples, if the run had a probe (and it delivered any).
    pub probe: Option<ProbeSeries>,
    /// Each target's 100 ms byte counter, if recorded.
    pub counters: Option<Counters>,
    /// The target the probe was inline with, if known.
    pub probe_target: Option<String>,
    /// Each target's drive (SMART) temperature, (host Unix ns, °C) in time order, if polled.
    pub drive_temp: Option<crate::drive_temp::DriveTemps>,
}

impl RunData {
    /// Reads `files.csv`, and where present `probe.csv`, `counters.csv`, `drive_temp.csv`
    /// and the manifest's probe target, through the records readers (each refusing a newer format).
    pub fn read(dir: &Path) -> Result<RunData> {
        let files = crate::files::read(dir)?;
        let probe = if dir.join(crate::probe::FILE_NAME).exists() {
            let p = crate::probe::read_series(dir)?;
            (!p.is_empty()).then_some(p)
        } else {
            None
        };
        let counters = if dir.join(crate::counters::FILE_NAME).exists() {
            Some(crate::counters::read(dir)?)
        } else {
            None
        };
        // The manifest only names the probed target: one this build cannot read (an old
        // hand-made one) leaves it unknown rather than refusing the run.
        let probe_target = match crate::manifest::read(dir) {
            Ok(m) => m.probe_target(),
            Err(e @ crate::RecordError::NewerFormat { .. }) => return Err(e),
            Err(_) => None,
        };
        let drive_temp = if dir.join(crate::drive_temp::FILE_NAME).exists() {
            Some(crate::drive_temp::read(dir)?)
        } else {
            None
        };
        Ok(RunData {
            files,
            probe,
            counters,
            probe_target,
            drive_temp,
        })
    }
}
