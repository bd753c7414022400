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
    /// Per-file records, in completion order ([`RunData::sort`]).
    pub files: Vec<FileRecord>,
    /// Probe samples, if the run had a probe (and it delivered any).
    pub probe: Option<ProbeSeries>,
    /// Each target's 100 ms byte counter, if recorded.
    pub counters: Option<Counters>,
    /// The target the probe was inline with, if known.
    pub probe_target: Option<String>,
    /// Each target's drive (SMART) temperature, (host Unix ns, °C) in time order, if polled.
    pub drive_temp: Option<crate::drive_temp::DriveTemps>,
    /// The I/O latency histograms per file and per interval (empty where nothing was timed).
    pub latency: crate::latency::RunLatency,
    /// The manifest's notes, tags and starting state (empty when it has none).
    pub conditions: crate::conditions::Conditions,
}

impl RunData {
    /// Reads `files.csv`, and where present `probe.csv`, `counters.csv`, `drive_temp.csv`,
    /// the latency logs and the manifest's probe target, through the records readers (each refusing a newer format).
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
        // The manifest names the probed target and the targets' order: one this build
        // cannot read (an old hand-made one) leaves them unknown rather than refusing the run;
        // one of a newer format is refused with the reason rather than analysed without its
        // probed target. A profile of another schema (a newer hostd's) is kept as written.
        let manifest = match crate::manifest::read(dir) {
            Ok(m) => Some(m),
            Err(e @ crate::RecordError::NewerFormat { .. }) => return Err(e),
            Err(_) => None,
        };
        let probe_target = manifest.as_ref().and_then(|m| m.probe_target());
        // files.csv has no target index (its reader numbers targets as they first appear):
        // the run's own index is the target's place in the manifest, as in `hostd run`.
        let mut files = files;
        for f in &mut files {
            if let Some(i) = manifest
                .as_ref()
                .and_then(|m| m.targets.iter().position(|t| t.label == f.target))
            {
                f.target_index = i;
            }
        }
        let drive_temp = if dir.join(crate::drive_temp::FILE_NAME).exists() {
            Some(crate::drive_temp::read(dir)?)
        } else {
            None
        };
        let mut run = RunData {
            files,
            probe,
            counters,
            probe_target,
            drive_temp,
            latency: crate::latency::RunLatency::read(dir)?,
            conditions: manifest.map(|m| m.conditions).unwrap_or_default(),
        };
        run.sort();
        Ok(run)
    }

    /// Puts the files in completion order (by end, then target, phase and index) and the
    /// latency histograms in theirs: several targets' threads finish files at once, so
    /// the order in which `hostd run` collects them and the order of `files.csv` can
    /// differ, and the analysis and the report must not depend on that.
    pub fn sort(&mut self) {
        self.files.sort_by(|a, b| {
            (a.end_ns, a.target_index, &a.phase, a.index).cmp(&(
                b.end_ns,
                b.target_index,
                &b.phase,
                b.index,
            ))
        });
        self.latency.sort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real run directory of the previous hostd (3 files written, 3 read back).
    fn fixture() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run-format1")
    }

    /// A copy of [`fixture`] to change.
    fn copy_of_fixture() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for e in std::fs::read_dir(fixture()).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), d.path().join(e.file_name())).unwrap();
        }
        d
    }

    #[test]
    fn files_are_in_completion_order_whatever_order_files_csv_has() {
        let run = RunData::read(&fixture()).unwrap();
        assert_eq!(run.files.len(), 6);
        assert!(run.files.windows(2).all(|w| w[0].end_ns <= w[1].end_ns));
        assert_eq!(run.latency.files.len(), 6);
        // The same rows in another order (as two targets' threads may log them).
        let d = copy_of_fixture();
        let text = std::fs::read_to_string(fixture().join(crate::files::FILE_NAME)).unwrap();
        let mut lines: Vec<&str> = text.lines().collect();
        lines[1..].reverse();
        std::fs::write(
            d.path().join(crate::files::FILE_NAME),
            lines.join("\n") + "\n",
        )
        .unwrap();
        let reordered = RunData::read(d.path()).unwrap();
        assert_ne!(reordered.files.first(), None);
        assert_eq!(reordered, run);
    }

    /// A real run directory of the hostd before `files-probe.csv` (a probed disk target
    /// and an unprobed simulated one, 3 files written and 3 read on each): the probe's
    /// columns are at the end of its `files.csv`.
    fn probed_fixture() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/run-probed-format1")
    }

    #[test]
    fn a_probed_run_reads_the_same_from_the_old_files_csv_and_from_files_probe_csv() {
        let old = RunData::read(&probed_fixture()).unwrap();
        let figures = |target: &str, phase: &str, index: u32| {
            let f = old
                .files
                .iter()
                .find(|f| (f.target.as_str(), f.phase.as_str(), f.index) == (target, phase, index))
                .unwrap();
            f.probe.as_deref().cloned().unwrap()
        };
        let p = figures("target", "write", 1);
        assert_eq!(p.probe, "sim-0001");
        assert_eq!((p.energy_j, p.j_per_gb), (Some(0.127010), Some(3.814060)));
        assert_eq!(figures("target", "write", 0).energy_j, None);
        let unprobed = figures("sim:steady*20", "write", 2);
        assert_eq!(unprobed.probe, crate::files::NO_PROBE);
        assert_eq!(
            unprobed,
            crate::files::FileProbe {
                probe: crate::files::NO_PROBE.into(),
                ..Default::default()
            }
        );
        assert_eq!(old.files.len(), 9);
        assert!(old.files.iter().all(|f| f.probe.is_some()));

        // The same records as `hostd run` writes them now: files.csv streamed without the
        // probe's columns, the figures in files-probe.csv.
        let d = tempfile::tempdir().unwrap();
        for name in [crate::manifest::FILE_NAME, crate::probe::FILE_NAME] {
            std::fs::copy(probed_fixture().join(name), d.path().join(name)).unwrap();
        }
        let mut w = crate::files::Writer::create(d.path()).unwrap();
        old.files.iter().for_each(|f| w.write(f).unwrap());
        drop(w);
        let header = std::fs::read_to_string(d.path().join(crate::files::FILE_NAME)).unwrap();
        assert!(!header.lines().next().unwrap().contains("energy_j"));
        let streamed_only = RunData::read(d.path()).unwrap();
        assert!(streamed_only.files.iter().all(|f| f.probe.is_none()));
        crate::files_probe::write(d.path(), &old.files).unwrap();
        let new = RunData::read(d.path()).unwrap();
        // (The probe series has NaN where a channel has no value yet: not `==` itself.)
        assert_eq!(new.files, old.files);
        assert_eq!(new.probe_target.as_deref(), Some("target"));
        assert_eq!(new.probe_target, old.probe_target);
    }

    #[test]
    fn a_run_whose_manifest_has_a_profile_of_another_schema_is_read_with_its_probed_target() {
        let d = copy_of_fixture();
        let run = RunData::read(d.path()).unwrap();
        let path = d.path().join(crate::manifest::FILE_NAME);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("\"verify\": true", "\"direct\": true")).unwrap();
        let m = crate::manifest::read(d.path()).unwrap();
        assert!(matches!(m.profile, Some(crate::RecordedProfile::Unread(_))));
        assert!(m.profile_name().is_some());
        // The manifest still orders and numbers the targets, as before the edit.
        assert_eq!(RunData::read(d.path()).unwrap(), run);
    }
}
