//! The pipeline of a run: every part that takes part in `hostd run` besides the workload
//! itself — the run directory, the probe, the drive poller, the analysis, InfluxDB —
//! implements one trait, [`RunPart`], and the [`Pipeline`] calls them in the order of their
//! [`Stage`]: record → enrich → analyse → export → archive (hyperfine's `src/export/` and
//! tokio-console are the models: one small trait, one file per part, a list that owns them).
//!
//! A run's records flow through it in memory, never from one part back through the run
//! directory to another (what the run streams to its files as it goes — the workload's
//! rows and counters, the drive's readings, the probe's samples — is read back once at its
//! end, so that memory does not grow with the run's length):
//! - while the run goes, every part sees every [`RunEvent`] ([`RunPart::on_event`]); the
//!   part that records the probe hands its samples to the others' [`RunPart::probe_feed`]s,
//!   and the part that polls the drive hands each reading to their [`RunPart::drive_feed`]s
//!   (one reader per sensor, however many parts read it);
//! - at the end, [`Pipeline::finish`] hands every part, stage by stage, the same
//!   [`RunRecords`] — the manifest, the outcome, the file records, the probe's series and
//!   link records, the analysis, the summary — each part adding what it knows for the
//!   stages after it.

use hostd_records::drive_log::DriveLogRecord;
use hostd_records::probe_link::LinkRecord;
use hostd_records::{
    AggRow, Analysis, Manifest, ProbeSample, RunData, RunEvent, RunOutcome, Summary,
};
use serde_json::Value;
use std::ops::RangeBounds;
use std::path::Path;
use std::sync::Mutex;

/// When a part finishes, relative to the others. Parts of one stage finish in the order
/// they were added; the stages in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// Records what happens while the run goes (the drive's temperature) and hands it on
    /// in [`RunRecords::data`].
    Record,
    /// Adds to the records of others (the probe's figures on every file record), in memory;
    /// what it adds it writes to its own file (`files-probe.csv`), since every earlier file
    /// was written as the run went.
    Enrich,
    /// Works out what the records mean ([`RunRecords::analysis`], `events.json`, the report).
    Analyse,
    /// Sends the finished records elsewhere (InfluxDB).
    Export,
    /// Closes the run directory: the files that record what every earlier part did
    /// (`summary.json`, the final `manifest.json`).
    Archive,
}

/// What the probe delivers while the run goes, as a part's [`RunPart::probe_feed`] gets it.
#[derive(Debug, Clone, Copy)]
pub enum ProbeData<'a> {
    /// Aligned samples, in order.
    Samples(&'a [ProbeSample]),
    /// A completed 10 ms bin.
    Bin(&'a AggRow),
    /// The probe said who it is.
    Identity(&'a str),
    /// The stream ended (the run is over): flush.
    End,
}

/// Where a part takes the probe stream (a closure over its writer); an error stops the feed.
pub type ProbeFeed = Box<dyn FnMut(ProbeData<'_>) -> anyhow::Result<()> + Send>;

/// One poll of one target's drive: what the drive's poller hands every
/// [`RunPart::drive_feed`].
#[derive(Debug, Clone, PartialEq)]
pub struct DriveReading {
    /// The target's index in the manifest's targets.
    pub target_index: usize,
    /// The target's label.
    pub target: String,
    /// When the drive answered, record time (`hostd_records::clock`), Unix ns.
    pub time_ns: i64,
    /// The whole disk asked (`/dev/nvme0n1`).
    pub device: String,
    /// The `-d` type smartctl needs for this drive (None: smartctl's own choice).
    pub device_type: Option<String>,
    /// The drive's model, as smartctl named it when the drive was first asked.
    pub model: Option<String>,
    /// The drive's temperature, °C; None when this answer gave none.
    pub temperature_c: Option<f64>,
    /// The kind of the drive's thermal record, `nvme` (health log) or `sct` (SATA SCT
    /// status); None when the answer holds none.
    pub thermal_kind: Option<&'static str>,
    /// The thermal record, as its `drive_log.csv` row.
    pub thermal: Option<DriveLogRecord>,
}

/// What the drive's poller delivers while the run goes, as a part's
/// [`RunPart::drive_feed`] gets it.
#[derive(Debug, Clone, Copy)]
pub enum DriveData<'a> {
    /// One poll of one target's drive, as it was read.
    Reading(&'a DriveReading),
    /// A target's drive gives no temperature (found when first asked): no reading will come
    /// for it.
    Unanswered {
        /// The target's index in the manifest's targets.
        target_index: usize,
        /// Why, in words.
        why: &'a str,
    },
}

/// Where a part takes the drive's readings (a closure over its state); an error stops the
/// feed.
pub type DriveFeed = Box<dyn FnMut(DriveData<'_>) -> anyhow::Result<()> + Send>;

/// What every part gets when the run starts.
pub struct RunStart<'a> {
    /// The manifest so far (with the sections of the parts started before); a part may add
    /// its facts to the targets (the drive's part, their links).
    pub manifest: &'a mut Manifest,
    /// The run directory (exists).
    pub dir: &'a Path,
    /// The probe feeds of every part: the part that records the probe takes them.
    pub probe_feeds: &'a mut Vec<ProbeFeed>,
    /// The drive feeds of every part: the part that polls the drive takes them.
    pub drive_feeds: &'a mut Vec<DriveFeed>,
}

/// A run's records in memory at its end, handed from part to part by
/// [`Pipeline::finish`]: each reads what the parts before it added and adds its own.
pub struct RunRecords<'a> {
    /// The run directory.
    pub dir: &'a Path,
    /// The manifest, with every part's section; its targets final.
    pub manifest: Manifest,
    /// What the workload did.
    pub outcome: &'a RunOutcome,
    /// The summary being made (`summary.json` once archived).
    pub summary: Summary,
    /// The records the analysis and the exports work on: files (the probe's figures added
    /// by [`Stage::Enrich`]), counters, latency, the probe's series, the drive temperature.
    pub data: RunData,
    /// The probe link's records (`probe-link.jsonl`), if a probe was recorded.
    pub probe_link: Vec<LinkRecord>,
    /// The analysis, once [`Stage::Analyse`] made it.
    pub analysis: Option<Analysis>,
}

/// Whatever takes part in a run. Every method but `name` and `stage` defaults to doing
/// nothing, so a part implements only what it does.
///
/// Adding a sink is one file and one line: write a type implementing `RunPart` in its own
/// file (say `mysink.rs`, with [`Stage::Export`], reading [`RunRecords`] in `finish` and
/// perhaps [`RunEvent`]s as they come), and add it to the list in `hostd run`
/// (`cmd/run.rs::parts`): `list.push(Box::new(MySink::new(..)))`. Its stage, not its place
/// in the list, says what it sees.
pub trait RunPart: Send + Sync {
    /// Name; also the key of its manifest and summary sections.
    fn name(&self) -> &str;
    /// When it finishes.
    fn stage(&self) -> Stage;
    /// Before any I/O, in stage order. The returned value becomes `manifest.extra[name]`.
    fn start(&mut self, _run: &mut RunStart<'_>) -> anyhow::Result<Option<Value>> {
        Ok(None)
    }
    /// Where this part takes the probe stream, if it wants it (asked once, before `start`).
    fn probe_feed(&mut self) -> Option<ProbeFeed> {
        None
    }
    /// Where this part takes the drive's readings, if it wants them (asked once, before
    /// `start`).
    fn drive_feed(&mut self) -> Option<DriveFeed> {
        None
    }
    /// Every event of the run, from the runner's threads: must be quick. An error is
    /// reported once and the part hears no more events.
    fn on_event(&self, _event: &RunEvent) -> anyhow::Result<()> {
        Ok(())
    }
    /// One line for the live view while the run goes; `None` shows nothing.
    fn live_status(&self) -> Option<String> {
        None
    }
    /// The run is over: read the records of the stages before, add this part's own. An
    /// error becomes a warning of the run.
    fn finish(&mut self, _run: &mut RunRecords<'_>) -> anyhow::Result<()> {
        Ok(())
    }
}

/// The parts of one run, in stage order (see the module documentation).
pub struct Pipeline {
    parts: Vec<Box<dyn RunPart>>,
    /// Whether a part's `on_event` failed (logged once; it hears nothing after).
    failed: Mutex<Vec<bool>>,
}

impl Pipeline {
    /// The pipeline of `parts`, ordered by stage (in the given order within one).
    pub fn new(mut parts: Vec<Box<dyn RunPart>>) -> Pipeline {
        parts.sort_by_key(|p| p.stage());
        let failed = Mutex::new(vec![false; parts.len()]);
        Pipeline { parts, failed }
    }

    /// The parts' names in the order they finish.
    pub fn names(&self) -> Vec<&str> {
        self.parts.iter().map(|p| p.name()).collect()
    }

    /// Starts every part in stage order, each one's section added to the manifest before
    /// the next starts; the probe feeds go to the part that records the probe, the drive
    /// feeds to the part that polls the drive.
    pub fn start(&mut self, manifest: &mut Manifest, dir: &Path) -> anyhow::Result<()> {
        use anyhow::Context as _;
        let mut feeds: Vec<ProbeFeed> = self
            .parts
            .iter_mut()
            .filter_map(|p| p.probe_feed())
            .collect();
        let mut drive_feeds: Vec<DriveFeed> = self
            .parts
            .iter_mut()
            .filter_map(|p| p.drive_feed())
            .collect();
        for p in self.parts.iter_mut() {
            let mut run = RunStart {
                manifest: &mut *manifest,
                dir,
                probe_feeds: &mut feeds,
                drive_feeds: &mut drive_feeds,
            };
            if let Some(section) = p
                .start(&mut run)
                .with_context(|| format!("cannot start {}", p.name()))?
            {
                manifest.extra.insert(p.name().to_string(), section);
            }
        }
        Ok(())
    }

    /// Hands `event` to every part that has not failed.
    pub fn on_event(&self, event: &RunEvent) {
        for (i, p) in self.parts.iter().enumerate() {
            if self.failed.lock().unwrap_or_else(|e| e.into_inner())[i] {
                continue;
            }
            if let Err(e) = p.on_event(event) {
                // Said once, as it happens; the binary's subscriber renders it.
                tracing::warn!("{} failed: {e:#}", p.name());
                self.failed.lock().unwrap_or_else(|e| e.into_inner())[i] = true;
            }
        }
    }

    /// The parts' live-view lines.
    pub fn live_status(&self) -> Vec<String> {
        self.parts.iter().filter_map(|p| p.live_status()).collect()
    }

    /// Finishes the parts of `stages`, in order, on `run` (a part whose `on_event` failed
    /// too: that failure was logged when it happened). A part's failure becomes a warning
    /// in the summary (logged too once the summary is being archived).
    pub fn finish(&mut self, stages: impl RangeBounds<Stage>, run: &mut RunRecords<'_>) {
        for p in self.parts.iter_mut() {
            if !stages.contains(&p.stage()) {
                continue;
            }
            if let Err(e) = p.finish(run) {
                let msg = format!("{}: {e:#}", p.name());
                if p.stage() == Stage::Archive {
                    tracing::warn!("{msg}");
                }
                run.summary.warnings.push(msg);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Logs what it is called with into a shared list.
    struct Part {
        name: &'static str,
        stage: Stage,
        log: std::sync::Arc<Mutex<Vec<String>>>,
        fail_events: bool,
    }

    impl RunPart for Part {
        fn name(&self) -> &str {
            self.name
        }
        fn stage(&self) -> Stage {
            self.stage
        }
        fn start(&mut self, run: &mut RunStart<'_>) -> anyhow::Result<Option<Value>> {
            let seen: Vec<&String> = run.manifest.extra.keys().collect();
            self.log
                .lock()
                .unwrap()
                .push(format!("start {} after {seen:?}", self.name));
            Ok(Some(serde_json::json!(self.name)))
        }
        fn on_event(&self, _event: &RunEvent) -> anyhow::Result<()> {
            self.log
                .lock()
                .unwrap()
                .push(format!("event {}", self.name));
            anyhow::ensure!(!self.fail_events, "broken");
            Ok(())
        }
        fn finish(&mut self, run: &mut RunRecords<'_>) -> anyhow::Result<()> {
            run.summary.warnings.push(format!("finished {}", self.name));
            Ok(())
        }
    }

    #[test]
    fn parts_start_and_finish_in_stage_order_and_a_part_whose_events_fail_hears_no_more() {
        let log = std::sync::Arc::new(Mutex::new(Vec::new()));
        let part = |name, stage, fail_events| -> Box<dyn RunPart> {
            Box::new(Part {
                name,
                stage,
                log: log.clone(),
                fail_events,
            })
        };
        let mut p = Pipeline::new(vec![
            part("influx", Stage::Export, false),
            part("dir", Stage::Archive, true),
            part("analysis", Stage::Analyse, false),
            part("probe", Stage::Record, false),
            part("drive", Stage::Record, false),
        ]);
        assert_eq!(p.names(), ["probe", "drive", "analysis", "influx", "dir"]);
        let dir = tempfile::tempdir().unwrap();
        let mut manifest = Manifest::new("r", 0, Vec::new());
        p.start(&mut manifest, dir.path()).unwrap();
        assert_eq!(manifest.extra.len(), 5);
        let end = RunEvent::RunEnd {
            time_ns: 1,
            status: "completed".into(),
        };
        p.on_event(&end);
        p.on_event(&end);
        let log = log.lock().unwrap().clone();
        assert_eq!(log[0], "start probe after []");
        assert_eq!(
            log[4],
            r#"start dir after ["analysis", "drive", "influx", "probe"]"#
        );
        let dir_events = log.iter().filter(|l| *l == "event dir").count();
        assert_eq!(dir_events, 1, "a failed part hears no more: {log:?}");
        assert_eq!(log.iter().filter(|l| *l == "event influx").count(), 2);

        let outcome = RunOutcome {
            status: hostd_records::RunStatus::Completed,
            start_ns: 0,
            end_ns: 1,
            targets: Vec::new(),
            files: Vec::new(),
            intervals: Vec::new(),
            samples: Vec::new(),
            warnings: Vec::new(),
            cleanup: Vec::new(),
            programs: Vec::new(),
            preparation: Vec::new(),
        };
        let mut run = RunRecords {
            dir: dir.path(),
            manifest,
            outcome: &outcome,
            summary: <Summary as crate::SummaryExt>::compute("r", &outcome),
            data: RunData::default(),
            probe_link: Vec::new(),
            analysis: None,
        };
        p.finish(..Stage::Archive, &mut run);
        assert_eq!(
            run.summary.warnings,
            [
                "finished probe",
                "finished drive",
                "finished analysis",
                "finished influx"
            ]
        );
        p.finish(Stage::Archive.., &mut run);
        assert_eq!(run.summary.warnings[4], "finished dir");
        assert_eq!(run.summary.warnings.len(), 5);
    }

    /// Reads the drive (takes the feeds at its start and hands them one reading) or, with
    /// `log`, listens to it (logs what its feed hears).
    struct DrivePart {
        name: &'static str,
        stage: Stage,
        log: Option<std::sync::Arc<Mutex<Vec<String>>>>,
    }

    impl RunPart for DrivePart {
        fn name(&self) -> &str {
            self.name
        }
        fn stage(&self) -> Stage {
            self.stage
        }
        fn drive_feed(&mut self) -> Option<DriveFeed> {
            let (log, name) = (self.log.clone()?, self.name);
            Some(Box::new(move |data: DriveData<'_>| {
                if let DriveData::Reading(r) = data {
                    let heard = format!("{name} heard {} {:?}", r.target, r.temperature_c);
                    log.lock().unwrap().push(heard);
                }
                Ok(())
            }))
        }
        fn start(&mut self, run: &mut RunStart<'_>) -> anyhow::Result<Option<Value>> {
            if self.log.is_none() {
                let reading = DriveReading {
                    target_index: 0,
                    target: "t0".into(),
                    time_ns: 1,
                    device: "/dev/sdb".into(),
                    device_type: None,
                    model: None,
                    temperature_c: Some(47.0),
                    thermal_kind: None,
                    thermal: None,
                };
                for feed in std::mem::take(run.drive_feeds).iter_mut() {
                    feed(DriveData::Reading(&reading))?;
                }
            }
            Ok(None)
        }
    }

    #[test]
    fn the_part_that_reads_the_drive_gets_every_other_parts_drive_feed() {
        let log = std::sync::Arc::new(Mutex::new(Vec::new()));
        let part = |name, stage, listens: bool| -> Box<dyn RunPart> {
            Box::new(DrivePart {
                name,
                stage,
                log: listens.then(|| log.clone()),
            })
        };
        let mut p = Pipeline::new(vec![
            part("gate", Stage::Enrich, true),
            part("drive", Stage::Record, false),
            part("thermometer", Stage::Enrich, true),
            part("dir", Stage::Archive, false),
        ]);
        let dir = tempfile::tempdir().unwrap();
        p.start(&mut Manifest::new("r", 0, Vec::new()), dir.path())
            .unwrap();
        assert_eq!(
            *log.lock().unwrap(),
            [
                "gate heard t0 Some(47.0)",
                "thermometer heard t0 Some(47.0)"
            ]
        );
    }
}
