//! The drive as a part of `hostd run`, with or without a probe. Before any I/O it reads
//! each local target's link ([`crate::link`]) into the manifest's `targets[].link` (the
//! part that reads the OS log starts after it and uses them), which decides which disk to
//! ask; while the run goes, the drive's own temperature is polled about once a second
//! ([`TempPoller`]) into `drive_temp.csv` and `drive_log.csv` (the drive's thermal record:
//! NVMe thermal counters and sensors, SATA SCT status), each reading appended as it comes,
//! and `smartctl` is read before and after each measured phase ([`PhaseSmart`]); after it,
//! those two files read back once for the analysis, the `summary.json` `drive` section
//! (`temperature`, `thermal_log` with each drive's first and last reading and their
//! change, `smart` with the readings around the phases) and a warning for a link slower
//! than the drive supports or a drive that answers no temperature or no thermal record
//! (said once).

use crate::link::link_for_path;
use crate::phase_smart::PhaseSmart;
use crate::smart::{read_smart, LogSource, PollResult, PollerConfig, TempPoller};
use hostd_records::drive_log::{self, DriveLogDelta};
use hostd_records::drive_temp;
use hostd_records::link::LinkInfo;
use hostd_records::RunEvent;
use hostd_store::{RunPart, RunRecords, RunStart, Stage};
use serde_json::{json, Value};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// The drive part of a run ([`Stage::Record`]); see the module documentation.
pub struct DriveComponent {
    poll: Option<PollerConfig>,
    poller: Option<TempPoller>,
    /// Each target's label and link, as in the manifest (None: no physical link).
    links: Vec<(String, Option<LinkInfo>)>,
    /// Each target's label and device (`targets[].device`), which `smartctl` is asked about
    /// around the phases.
    devices: Vec<(String, Option<String>)>,
    smart: Arc<Mutex<PhaseSmart>>,
    smart_threads: Mutex<Vec<JoinHandle<()>>>,
}

impl DriveComponent {
    /// A component; `poll` None leaves the temperature unpolled (links are still read, and
    /// SMART around each phase).
    pub fn new(poll: Option<PollerConfig>) -> Self {
        DriveComponent {
            poll,
            poller: None,
            links: Vec::new(),
            devices: Vec::new(),
            smart: Arc::new(Mutex::new(PhaseSmart::default())),
            smart_threads: Mutex::new(Vec::new()),
        }
    }

    /// Reads SMART of `target` on a thread of its own, so that the workload does not wait.
    fn read_smart_later(&self, target: usize, phase: &str, when: &str) {
        let Some((label, device)) = self.devices.get(target).cloned() else {
            return;
        };
        let (phase, when, out) = (phase.to_string(), when.to_string(), Arc::clone(&self.smart));
        let handle = std::thread::spawn(move || {
            let reading = read_smart(device.as_deref(), &label, &phase, &when);
            out.lock().unwrap_or_else(|e| e.into_inner()).add(reading);
        });
        let mut threads = self.smart_threads.lock().unwrap_or_else(|e| e.into_inner());
        // A finished thread keeps its stack until joined: join those done, so that a long
        // run of many phases holds only the readings.
        let (done, running): (Vec<_>, Vec<_>) =
            threads.drain(..).partition(JoinHandle::is_finished);
        *threads = running;
        for t in done {
            let _ = t.join();
        }
        threads.push(handle);
    }
}

/// The link of one manifest target: read for local paths (`dir`, `raw`); other schemes
/// (simulated drives) have none.
fn target_link(scheme: &str, path: &str) -> Option<LinkInfo> {
    (scheme == "dir" || scheme == "raw").then(|| link_for_path(Path::new(path)))
}

impl RunPart for DriveComponent {
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
            } => self.read_smart_later(*target_index, phase, "before"),
            RunEvent::PhaseEnd {
                target_index,
                phase,
                ..
            } => self.read_smart_later(*target_index, phase, "after"),
            _ => {}
        }
        Ok(())
    }

    fn start(&mut self, run: &mut RunStart<'_>) -> anyhow::Result<Option<Value>> {
        self.devices = run
            .manifest
            .targets
            .iter()
            .map(|t| (t.label.clone(), t.device.clone()))
            .collect();
        self.links.clear();
        for t in run.manifest.targets.iter_mut() {
            if t.link.is_none() {
                t.link = target_link(&t.scheme, &t.path);
            }
            self.links.push((t.label.clone(), t.link.clone()));
        }
        if let Some(config) = self.poll.clone() {
            let devices = self
                .links
                .iter()
                .filter_map(|(label, l)| l.as_ref().map(|l| (label, l)))
                .filter(|(_, l)| l.bus != "none")
                .map(|(label, l)| (label.clone(), l.block.as_ref().map(|b| format!("/dev/{b}"))))
                .collect::<Vec<_>>();
            if !devices.is_empty() {
                self.poller = Some(TempPoller::start(config, devices, run.dir));
            }
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
        let polled: PollResult = self.poller.take().map(TempPoller::stop).unwrap_or_default();
        for t in std::mem::take(&mut *self.smart_threads.lock().unwrap_or_else(|e| e.into_inner()))
        {
            let _ = t.join();
        }
        let smart = self
            .smart
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .readings();
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
                if why.contains(crate::smart::NO_SMART) {
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
