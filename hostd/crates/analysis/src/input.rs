//! The analysis input: a run's records in memory ([`RunData`], from `hostd-records`), built
//! by `hostd run` from the records it holds or read from a run directory through the
//! records readers (which name the file, line and column of anything malformed).

use std::path::Path;

use hostd_records::{RecordError as InputError, RunData};

/// Reads a run directory's `files.csv`, and where present `probe.csv`, `counters.csv` and
/// the manifest's probe target.
pub fn read_run_dir(dir: &Path) -> Result<RunData, InputError> {
    RunData::read(dir)
}

/// A target's 100 ms byte counter as (host Unix ns, cumulative bytes), the form the stall
/// finder works on.
pub fn counter_points(run: &RunData, target: &str) -> Option<Vec<(i64, u64)>> {
    let c = run.counters.as_ref()?.get(target)?;
    Some(c.iter().map(|c| (c.time_ns as i64, c.bytes)).collect())
}
