//! The drive as a part of `hostd run`, with or without a probe. Before any I/O it reads
//! each local target's link ([`crate::link`]) into the manifest's `targets[].link` (the
//! part that reads the OS log starts after it and uses them), which decides which disk to
//! ask. While the run goes, one poller ([`DrivePoller`]) reads each drive's temperature and
//! thermal record (NVMe thermal counters and sensors, SATA SCT status) about once a second
//! into `drive_temp.csv` and `drive_log.csv`, each reading appended as it comes, and hands
//! every reading to the run's drive feeds: the other parts' ([`RunPart::drive_feed`]: the
//! steady-state thermometer, the temperature gate) and this part's own, which takes the
//! readings before and after each measured phase from it ([`PhaseReadings`]) and shows the
//! latest in the live view. After it, those two files read back once for the analysis, the
//! `summary.json` `drive` section (`temperature`, `thermal_log` with each drive's first and
//! last reading and their change, `smart` with the readings around the phases) and a
//! warning for a link slower than the drive supports or a drive that answers no
//! temperature or no thermal record (said once).

use crate::link::link_for_path;
use crate::phase_smart::{PhaseReadings, PhaseTarget};
use crate::smart::detect::{not_polled, polled_disk};
use crate::smart::poll::{LogSource, PolledDrive};
use crate::smart::{DrivePoller, PollResult, PollerConfig};
use hostd_records::drive_log::{self, DriveLogDelta};
use hostd_records::drive_temp;
use hostd_records::link::LinkInfo;
use hostd_records::RunEvent;
use hostd_store::{DriveData, DriveFeed, RunPart, RunRecords, RunStart, Stage};
use serde_json::{json, Value};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The drive part of a run ([`Stage::Record`]); see the module documentation.
pub struct DrivePart {
    poll: Option<PollerConfig>,
    poller: Option<DrivePoller>,
    /// Each target's label and link, as in the manifest (None: no physical link).
    links: Vec<(String, Option<LinkInfo>)>,
    /// The readings around the phases, and each drive's latest reading.
    phases: Arc<Mutex<PhaseReadings>>,
}

impl DrivePart {
    /// A part; `poll` None leaves the drive unpolled (links are still read; the
    /// readings around the phases then say that the drive was not asked).
    pub fn new(poll: Option<PollerConfig>) -> Self {
        DrivePart {
            poll,
            poller: None,
            links: Vec::new(),
            phases: Arc::new(Mutex::new(PhaseReadings::default())),
        }
    }

    fn phases(&self) -> std::sync::MutexGuard<'_, PhaseReadings> {
        self.phases.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The link of one manifest target: read for local paths (`dir`, `raw`); other schemes
/// (simulated drives) have none.
pub(crate) fn target_link(scheme: &str, path: &str) -> Option<LinkInfo> {
    (scheme == "dir" || scheme == "raw").then(|| link_for_path(Path::new(path)))
}

impl RunPart for DrivePart {
    fn name(&self) -> &str {
        "drive"
    }

    fn stage(&self) -> Stage {
        Stage::Record
    }

    fn on_event(&self, event: &RunEvent) -> anyhow::Result<()> {
        match event {
            RunEvent::PhaseStart {
                target_index,
                phase,
                measured: true,
                ..
            } => self.phases().phase(
                *target_index,
                phase,
                "before",
                hostd_records::clock::now_ns(),
            ),
            RunEvent::PhaseEnd {
                target_index,
                phase,
                ..
            } => self.phases().phase(
                *target_index,
                phase,
                "after",
                hostd_records::clock::now_ns(),
            ),
            _ => {}
        }
        Ok(())
    }

    /// The drive's latest temperature, per target whose drive gives one.
    fn live_status(&self) -> Option<String> {
        let temps: Vec<String> = self
            .phases()
            .latest()
            .filter_map(|r| Some(format!("{} {:.0} °C", r.target, r.temperature_c?)))
            .collect();
        (!temps.is_empty()).then(|| format!("drive: {}", temps.join(", ")))
    }

    fn start(&mut self, run: &mut RunStart<'_>) -> anyhow::Result<Option<Value>> {
        self.links.clear();
        for t in run.manifest.targets.iter_mut() {
            if t.link.is_none() {
                t.link = target_link(&t.scheme, &t.path);
            }
            self.links.push((t.label.clone(), t.link.clone()));
        }
        let polled: Vec<Option<Option<String>>> = match self.poll {
            Some(_) => self
                .links
                .iter()
                .map(|(_, l)| polled_disk(l.as_ref()))
                .collect(),
            None => vec![None; self.links.len()],
        };
        *self.phases() = PhaseReadings::new(
            run.manifest
                .targets
                .iter()
                .zip(&polled)
                .map(|(t, p)| PhaseTarget {
                    label: t.label.clone(),
                    polled: p.clone(),
                    not_polled: match self.poll {
                        Some(_) => not_polled(t.device.as_deref()),
                        None => "the drive is not polled in this run".into(),
                    },
                })
                .collect(),
        );
        let drives: Vec<PolledDrive> = self
            .links
            .iter()
            .zip(polled)
            .enumerate()
            .filter_map(|(index, ((label, _), disk))| {
                Some(PolledDrive {
                    index,
                    label: label.clone(),
                    disk: disk?,
                })
            })
            .collect();
        if let (Some(config), false) = (self.poll.clone(), drives.is_empty()) {
            // This part's own reader first: the phase readings and the live view.
            let phases = Arc::clone(&self.phases);
            let mine: DriveFeed = Box::new(move |data: DriveData<'_>| {
                phases.lock().unwrap_or_else(|e| e.into_inner()).feed(data);
                Ok(())
            });
            let mut feeds = vec![mine];
            feeds.append(run.drive_feeds);
            self.poller = Some(DrivePoller::start(config, drives, run.dir, feeds));
        }
        // The links are in the manifest's targets (`targets[].link`).
        Ok(None)
    }

    fn finish(&mut self, records: &mut RunRecords<'_>) -> anyhow::Result<()> {
        // The manifest's targets are the workload's final ones: the links go back on them.
        for t in records
            .manifest
            .targets
            .iter_mut()
            .filter(|t| t.link.is_none())
        {
            if let Some((_, link)) = self.links.iter().find(|(label, _)| *label == t.label) {
                t.link = link.clone();
            }
        }
        let (run_dir, summary, run) = (records.dir, &mut records.summary, &mut records.data);
        let polled: PollResult = self
            .poller
            .take()
            .map(DrivePoller::stop)
            .unwrap_or_default();
        let smart = self.phases().finish();
        // The readings went to their files as they came; the analysis gets them read back
        // once, as `RunData::read` gives them. A write that failed (a full disk) lost the
        // readings after it, file and analysis alike: the warning says how many.
        for (name, written) in [
            (drive_temp::FILE_NAME, &polled.temp),
            (drive_log::FILE_NAME, &polled.log),
        ] {
            if let Some(f) = &written.failure {
                summary.warnings.push(format!("{name}: {f}"));
            }
        }
        if polled.temp.rows > 0 {
            match drive_temp::read_streamed(run_dir) {
                Ok(t) => run.drive_temp = Some(t),
                Err(e) => summary
                    .warnings
                    .push(format!("{}: reading back: {e:#}", drive_temp::FILE_NAME)),
            }
        }
        if polled.log.rows > 0 {
            match drive_log::read_streamed(run_dir) {
                Ok(l) => run.drive_log = Some(l),
                Err(e) => summary
                    .warnings
                    .push(format!("{}: reading back: {e:#}", drive_log::FILE_NAME)),
            }
        }
        for (label, link) in self
            .links
            .iter()
            .filter_map(|(l, k)| Some((l, k.as_ref()?)))
        {
            for w in &link.warnings {
                summary.warnings.push(format!("{label}: {w}"));
            }
        }
        let mut text = Vec::new();
        for s in &polled.sources {
            if s.answered {
                let (lo, hi) = s.range_c.unwrap_or((f64::INFINITY, f64::NEG_INFINITY));
                text.push(format!(
                    "{} drive temperature (SMART{}): {} readings, {lo:.0}–{hi:.0} °C",
                    s.target,
                    s.device_type
                        .as_ref()
                        .map_or(String::new(), |t| format!(" via -d {t}")),
                    s.samples
                ));
            } else {
                let why = s.note.clone().unwrap_or_default();
                let line = format!("{}: no drive temperature ({why})", s.target);
                // A virtual disk has no SMART by design: said, not warned about.
                if why.contains(crate::smart::smartctl::NO_SMART) {
                    summary.notes.push(line);
                } else {
                    summary.warnings.push(line);
                }
            }
        }
        for (log, source) in polled.logs.iter().zip(&polled.sources) {
            match (&log.delta, log.kind) {
                (Some(d), Some(kind)) => text.push(thermal_log_line(log, kind, d)),
                // A drive that answered no temperature is said once above already.
                _ if source.answered => summary.warnings.push(format!(
                    "{}: {}",
                    log.target,
                    log.note.as_deref().unwrap_or("no drive thermal record")
                )),
                _ => {}
            }
        }
        summary.extra.insert(
            "drive".into(),
            json!({
                "temperature": polled.sources,
                "thermal_log": polled.logs,
                "smart": smart,
                "text": text,
            }),
        );
        Ok(())
    }
}

/// The summary line of one drive's thermal record: what it logged during the run, from its
/// first and last reading.
fn thermal_log_line(log: &LogSource, kind: &str, d: &DriveLogDelta) -> String {
    let what = if kind == "nvme" {
        "NVMe health log"
    } else {
        "SCT status"
    };
    let logged = if !d.has_counters() {
        "no thermal counters".to_string()
    } else if d.logged_heat() {
        format!("logged {}", d.words())
    } else {
        format!("logged no throttling ({})", d.words())
    };
    let sensors = log
        .after
        .as_ref()
        .filter(|a| !a.sensors.is_empty())
        .map_or(String::new(), |a| format!("; sensors {} °C", a.sensors));
    let history = log
        .sct_history_after
        .as_ref()
        .and_then(|h| {
            h.max_c.map(|m| {
                format!(
                    "; SCT history max {m} °C over {} entries at {} min",
                    h.oldest_first.len(),
                    h.logging_interval_min
                )
            })
        })
        .unwrap_or_default();
    let note = log
        .note
        .as_ref()
        .map_or(String::new(), |n| format!(" ({n})"));
    format!(
        "{} drive thermal record ({what}, {} readings over {:.0} s): {logged}{sensors}{history}{note}",
        log.target, log.readings, d.seconds
    )
}
