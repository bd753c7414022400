//! The drive's one poller: about once a second, on its own thread (never on an I/O
//! thread), it asks each target's drive for its temperature and thermal record, appends
//! each reading to `drive_temp.csv` and `drive_log.csv` as it comes (each row whole in the
//! file at once, so a killed run keeps them), and hands it to every drive feed of the run
//! (the steady-state thermometer, the temperature gate, the per-phase readings and the
//! live view read the drive there, never through a smartctl of their own). It keeps in
//! memory only what it decides with (per target: the count, lowest and highest
//! temperature, first and last thermal record), so its memory does not grow with the run.

use super::detect::{detect, note, why_not};
use super::parse::{set_tmt, tmt_from_text, Answer, SctHistory};
use super::smartctl::{self, smartctl_program};
use hostd_records::drive_log::{self, DriveLogDelta, DriveLogRecord};
use hostd_records::drive_temp::{self, DriveTempRecord};
use hostd_store::{DriveData, DriveFeed, DriveReading};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What a target polled without a block device says.
pub const NO_BLOCK_DEVICE: &str = "not on a block device: no drive temperature";

/// How one target's drive answered the poller.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TempSource {
    /// Target label.
    pub target: String,
    /// Whole-disk device polled, if any.
    pub device: Option<String>,
    /// `-d` type that worked (`None`: smartctl's own choice, e.g. NVMe directly).
    pub device_type: Option<String>,
    /// Field the temperature came from.
    pub field: Option<String>,
    /// True when the drive gave a temperature.
    pub answered: bool,
    /// Why not, when it did not (said once).
    pub note: Option<String>,
    /// Readings kept (in `drive_temp.csv`, unless a write failed: [`PollResult::temp`]).
    pub samples: usize,
    /// The lowest and highest temperature read, °C (not in the summary: its text says it).
    #[serde(skip)]
    pub range_c: Option<(f64, f64)>,
    /// Polls that gave no temperature after the first one did (timeouts, errors).
    pub failed_polls: u64,
    /// Readings not kept because the series was full.
    pub dropped: u64,
}

/// Settings of the poller.
#[derive(Debug, Clone)]
pub struct PollerConfig {
    /// smartctl to run.
    pub smartctl: PathBuf,
    /// Time between polls of one drive.
    pub interval: Duration,
    /// Longest a single smartctl may take.
    pub timeout: Duration,
    /// Most readings kept per target (48 h at 1 s); later ones are counted, not kept.
    pub max_samples: usize,
}

impl Default for PollerConfig {
    fn default() -> Self {
        PollerConfig {
            smartctl: smartctl_program(),
            interval: Duration::from_secs(1),
            timeout: Duration::from_secs(5),
            max_samples: 48 * 3600,
        }
    }
}

/// What the poller wrote into one file of the run directory.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Written {
    /// Rows in the file (none: no file).
    pub rows: u64,
    /// What a failed write lost, in words; None when every reading is in the file.
    pub failure: Option<String>,
}

impl Written {
    fn of<R: hostd_records::columns::Columns>(s: &hostd_records::RowStream<R>) -> Written {
        Written {
            rows: s.rows(),
            failure: s.failure(),
        }
    }
}

/// What the poller collected: its readings are in the run directory's files.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PollResult {
    /// One entry per target.
    pub sources: Vec<TempSource>,
    /// One thermal-record entry per target, in the order of `sources`.
    pub logs: Vec<LogSource>,
    /// `drive_temp.csv`: every temperature reading, in time order per target.
    pub temp: Written,
    /// `drive_log.csv`: every thermal-record reading, in time order per target.
    pub log: Written,
}

/// How one target's drive answered for its thermal record (NVMe thermal counters and
/// sensors, SATA SCT status and history), first and last reading and their change.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LogSource {
    /// Target label.
    pub target: String,
    /// `nvme` or `sct`; None when the drive gave no thermal record.
    pub kind: Option<&'static str>,
    /// Readings kept (`drive_log.csv`).
    pub readings: usize,
    /// What the drive or its bridge does not give, said once (not per poll).
    pub note: Option<String>,
    /// The first reading (before the run's I/O).
    pub before: Option<DriveLogRecord>,
    /// The last reading (after the run's I/O).
    pub after: Option<DriveLogRecord>,
    /// The counters' change from `before` to `after`.
    pub delta: Option<DriveLogDelta>,
    /// SATA: the SCT temperature history before the run.
    pub sct_history_before: Option<SctHistory>,
    /// SATA: the SCT temperature history after the run.
    pub sct_history_after: Option<SctHistory>,
}

/// One target the poller asks about.
#[derive(Debug, Clone, PartialEq)]
pub struct PolledDrive {
    /// The target's index in the manifest's targets (what the feeds' readings carry).
    pub index: usize,
    /// The target's label.
    pub label: String,
    /// Its whole disk (`/dev/sdb`); None when it is on no block device.
    pub disk: Option<String>,
}

/// Polls each target's drive on a background thread until stopped.
pub struct DrivePoller {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<PollResult>>,
}

impl DrivePoller {
    /// Starts polling `drives`, appending the readings to `drive_temp.csv` and
    /// `drive_log.csv` in the run directory `dir` as they come and handing each to every
    /// one of `feeds`. Detection runs on the poller's thread too, so starting never waits
    /// for smartctl.
    pub fn start(
        config: PollerConfig,
        drives: Vec<PolledDrive>,
        dir: &Path,
        feeds: Vec<DriveFeed>,
    ) -> DrivePoller {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let mut out = Out {
            temp: drive_temp::stream(dir),
            log: drive_log::stream(dir),
            feeds,
        };
        let handle = std::thread::Builder::new()
            .name("drive-poller".into())
            .spawn(move || {
                let mut r = poll(&config, &drives, &flag, &mut out);
                (r.temp, r.log) = (Written::of(&out.temp), Written::of(&out.log));
                r
            })
            .ok();
        DrivePoller { stop, handle }
    }

    /// Stops the poller (after its last reading) and returns what it collected.
    pub fn stop(mut self) -> PollResult {
        self.stop.store(true, Ordering::Relaxed);
        self.handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for DrivePoller {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Where the readings go as they come: the run directory's two files and the feeds.
struct Out {
    temp: drive_temp::Stream,
    log: drive_log::Stream,
    feeds: Vec<DriveFeed>,
}

impl Out {
    /// Hands `data` to every feed; a feed that fails is said once and hears no more.
    fn feed(&mut self, data: DriveData<'_>) {
        self.feeds.retain_mut(|f| match f(data) {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!("a reader of the drive's readings failed: {e:#}");
                false
            }
        });
    }
}

/// One drive being polled: where its temperature and thermal record go.
struct Active {
    /// Its place in the poll result.
    source: usize,
    index: usize,
    disk: String,
    device_type: Option<String>,
    model: Option<String>,
    ata: bool,
    tmt_text: bool,
}

/// The thermal management counters from smartctl's text output (`smartctl -A`), for a
/// smartctl whose JSON lacks them.
fn tmt_text(config: &PollerConfig, a: &Active) -> Option<[u64; 4]> {
    let text = smartctl::text(
        &config.smartctl,
        a.device_type.as_deref(),
        &a.disk,
        config.timeout,
    )?;
    tmt_from_text(&text)
}

/// Asks one drive once: its temperature into `drive_temp.csv`, its thermal record into
/// `drive_log.csv` (both bounded by `max_samples` per target), and both to the feeds.
fn poll_once(config: &PollerConfig, a: &Active, result: &mut PollResult, out: &mut Out) {
    let sct: &[&str] = if a.ata {
        // A SATA drive's SCT status and temperature history (its thermal record).
        &["-l", "scttemp"]
    } else {
        &[]
    };
    let json = smartctl::json(
        &config.smartctl,
        sct,
        a.device_type.as_deref(),
        &a.disk,
        config.timeout,
    )
    .ok();
    let now = hostd_records::clock::now_ns();
    let Some(json) = json else {
        result.sources[a.source].failed_polls += 1;
        return;
    };
    let answer = Answer::of(&json);
    let temp = answer.temperature.map(|(v, _)| v);
    let source = &mut result.sources[a.source];
    match temp {
        None => source.failed_polls += 1,
        Some(_) if source.samples >= config.max_samples => source.dropped += 1,
        Some(v) => {
            source.samples += 1;
            source.range_c = Some(
                source
                    .range_c
                    .map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))),
            );
            out.temp.append(&[DriveTempRecord {
                time_ns: now,
                target: source.target.clone(),
                temperature_c: v,
            }]);
        }
    }
    let log = &mut result.logs[a.source];
    let thermal = match answer.thermal {
        None => {
            if log.kind.is_none() && log.note.is_none() {
                log.note =
                    Some(format!(
                    "{}: the drive{} gives no thermal record (no NVMe health log, no SCT status){}",
                    a.disk,
                    a.device_type
                        .as_ref()
                        .map_or(String::new(), |t| format!(" through -d {t}")),
                    answer.messages.as_ref().map_or(String::new(), |m| format!(": {m}"))
                ));
            }
            None
        }
        Some(l) => {
            let mut r = l.record;
            let from_text = a.tmt_text && l.kind == "nvme";
            let counters = from_text.then(|| tmt_text(config, a)).flatten();
            if let Some(c) = counters {
                set_tmt(&mut r, c);
            }
            if log.kind.is_none() {
                log.kind = Some(l.kind);
                log.note = if counters.is_some() {
                    Some(format!(
                        "TMT counters from smartctl {}'s text output (its JSON has them only after 7.5)",
                        answer.smartctl_version
                    ))
                } else {
                    l.note.clone()
                };
                log.sct_history_before = l.sct_history.clone();
            }
            r.time_ns = now;
            r.target = log.target.clone();
            if log.before.is_none() {
                log.before = Some(r.clone());
            }
            log.after = Some(r.clone());
            if l.sct_history.is_some() {
                log.sct_history_after = l.sct_history;
            }
            if log.readings < config.max_samples {
                log.readings += 1;
                out.log.append(std::slice::from_ref(&r));
            }
            Some((l.kind, r))
        }
    };
    if temp.is_none() && thermal.is_none() {
        return;
    }
    let (thermal_kind, thermal) = thermal.map_or((None, None), |(k, r)| (Some(k), Some(r)));
    out.feed(DriveData::Reading(&DriveReading {
        target_index: a.index,
        target: result.sources[a.source].target.clone(),
        time_ns: now,
        device: a.disk.clone(),
        device_type: a.device_type.clone(),
        model: a.model.clone(),
        temperature_c: temp,
        thermal_kind,
        thermal,
    }));
}

fn poll(
    config: &PollerConfig,
    drives: &[PolledDrive],
    stop: &AtomicBool,
    out: &mut Out,
) -> PollResult {
    let mut result = PollResult::default();
    let mut active: Vec<Active> = Vec::new();
    for drive in drives {
        let label = &drive.label;
        let mut source = TempSource {
            target: label.clone(),
            device: drive.disk.clone(),
            device_type: None,
            field: None,
            answered: false,
            note: None,
            samples: 0,
            range_c: None,
            failed_polls: 0,
            dropped: 0,
        };
        let mut log = LogSource {
            target: label.clone(),
            ..Default::default()
        };
        match &drive.disk {
            None => source.note = Some(NO_BLOCK_DEVICE.into()),
            Some(disk) => match detect(config, disk) {
                Ok(d) => {
                    source.answered = true;
                    source.device_type = d.device_type.clone();
                    source.field = Some(d.field);
                    active.push(Active {
                        source: result.sources.len(),
                        index: drive.index,
                        disk: disk.clone(),
                        device_type: d.device_type,
                        model: d.model,
                        ata: d.ata,
                        tmt_text: d.tmt_text,
                    });
                }
                Err(why) => {
                    let (why, by_design) = why_not(disk, why);
                    match by_design {
                        // Nothing to fix: the hypervisor's disk has no SMART to ask.
                        Some(kind) => {
                            tracing::info!(target = %label, device = %disk, "{kind}: no SMART, no drive temperature ({why})");
                        }
                        None => {
                            tracing::warn!(target = %label, device = %disk, "the drive answers no temperature to smartctl ({why}); the run goes on without a drive temperature series");
                        }
                    }
                    source.note = Some(note((why, by_design)));
                }
            },
        }
        if !source.answered {
            let why = source.note.as_deref().unwrap_or("the drive did not answer");
            log.note = Some(format!("no thermal record: {why}"));
            out.feed(DriveData::Unanswered {
                target_index: drive.index,
                why,
            });
        }
        result.sources.push(source);
        result.logs.push(log);
    }
    let mut next = Instant::now();
    while !stop.load(Ordering::Relaxed) && !active.is_empty() {
        for a in &active {
            poll_once(config, a, &mut result, out);
        }
        next += config.interval;
        while !stop.load(Ordering::Relaxed) && Instant::now() < next {
            std::thread::sleep(Duration::from_millis(20).min(config.interval));
        }
        if Instant::now() > next + config.interval {
            next = Instant::now(); // a slow smartctl: skip, do not catch up in a burst
        }
    }
    // One more reading once the run's I/O is over: the thermal record "after".
    for a in &active {
        poll_once(config, a, &mut result, out);
    }
    for log in &mut result.logs {
        if let (Some(b), Some(a)) = (&log.before, &log.after) {
            log.delta = Some(DriveLogDelta::between(b, a));
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// What a drive feed heard: every reading, and every target said to give none.
    #[derive(Default)]
    struct Heard {
        readings: Vec<DriveReading>,
        unanswered: Vec<(usize, String)>,
    }

    /// The targets as the drive's part hands them over: each one's index is its place.
    fn drives(targets: Vec<(String, Option<String>)>) -> Vec<PolledDrive> {
        targets
            .into_iter()
            .enumerate()
            .map(|(index, (label, disk))| PolledDrive { index, label, disk })
            .collect()
    }

    /// A drive feed that keeps what it hears.
    fn listener() -> (DriveFeed, Arc<Mutex<Heard>>) {
        let heard = Arc::new(Mutex::new(Heard::default()));
        let keep = Arc::clone(&heard);
        let feed: DriveFeed = Box::new(move |data: DriveData<'_>| {
            let mut h = keep.lock().unwrap();
            match data {
                DriveData::Reading(r) => h.readings.push(r.clone()),
                DriveData::Unanswered { target_index, why } => {
                    h.unanswered.push((target_index, why.to_string()))
                }
            }
            Ok(())
        });
        (feed, heard)
    }

    /// A smartctl stand-in that replays recorded answers: `DISK.TYPE.json` for a `--json`
    /// call, `DISK.TYPE.txt` for a text one (TYPE `direct` without `-d`), from the directory
    /// next to it, else `default.json` / `default.txt`. It logs each call's disk to
    /// `smartctl.calls` ([`wait_for_calls`]).
    #[cfg(unix)]
    fn replay_smartctl(dir: &Path, answers: &[(&str, &str)]) -> PathBuf {
        use std::os::unix::fs::PermissionsExt as _;
        let data = dir.join("smartctl.d");
        std::fs::create_dir_all(&data).unwrap();
        for (name, file) in answers {
            let text = std::fs::read_to_string(
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../../../fixtures/smartctl")
                    .join(file),
            )
            .unwrap();
            std::fs::write(data.join(name), text).unwrap();
        }
        let script = dir.join("smartctl");
        std::fs::write(
            &script,
            "#!/bin/sh\nt=direct; d=; x=txt\nwhile [ $# -gt 0 ]; do case \"$1\" in -d) t=$2; shift;; --json) x=json;; /*) d=$1;; esac; shift; done\nf=\"$0.d/$(basename \"$d\").$t.$x\"\n[ -f \"$f\" ] || f=\"$0.d/default.$x\"\necho \"$d\" >> \"$0.calls\"\ncat \"$f\"\n",
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        script
    }

    /// A poller over `smartctl` every 100 ms, appending into `run` (which must exist), with
    /// one feed that keeps what it hears.
    #[cfg(unix)] // for the tests with a recorded smartctl, a shell script
    fn fast_poller(
        smartctl: &Path,
        targets: Vec<(String, Option<String>)>,
        run: &Path,
    ) -> (DrivePoller, Arc<Mutex<Heard>>) {
        let config = PollerConfig {
            smartctl: smartctl.to_path_buf(),
            interval: Duration::from_millis(100),
            ..Default::default()
        };
        let (feed, heard) = listener();
        let poller = DrivePoller::start(config, drives(targets), run, vec![feed]);
        (poller, heard)
    }

    /// Waits until the replayed `smartctl` has been asked about each of `disks` at least `n`
    /// more times than `since` counted (at most 60 s), and returns the counts: the poller's
    /// own pace, not the machine's load, decides how many readings a test sees.
    #[cfg(unix)]
    fn wait_for_calls(
        smartctl: &Path,
        disks: &[&str],
        since: &std::collections::HashMap<String, usize>,
        n: usize,
    ) -> std::collections::HashMap<String, usize> {
        let log = smartctl.with_extension("calls");
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let mut counts = std::collections::HashMap::new();
            for line in std::fs::read_to_string(&log).unwrap_or_default().lines() {
                *counts.entry(line.to_string()).or_insert(0) += 1;
            }
            let done = disks.iter().all(|d| {
                counts.get(*d).copied().unwrap_or(0) >= since.get(*d).copied().unwrap_or(0) + n
            });
            if done {
                return counts;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "smartctl asked {counts:?} in 60 s, want {n} more calls for each of {disks:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    #[cfg(unix)] // the recorded smartctl is a shell script
    fn poller_finds_each_bridge_type_polls_every_interval_and_says_once_when_a_drive_answers_nothing(
    ) {
        let d = tempfile::tempdir().unwrap();
        let smartctl = replay_smartctl(
            d.path(),
            &[
                ("sdb.direct.json", "asm2362-direct.json"),
                ("sdb.sntasmedia.json", "asm2362-sntasmedia.json"),
                ("sdc.sntjmicron.json", "jms583-sntjmicron.json"),
                ("sde.sat.json", "sata-sat.json"),
                ("nvme0n1.direct.json", "nvme-direct.json"),
                ("vda.direct.json", "vm-virtio-direct.json"),
                ("default.json", "vm-virtio-sat.json"),
            ],
        );
        let targets = [
            ("usb-asmedia", Some("/dev/sdb")),
            ("usb-jmicron", Some("/dev/sdc")),
            ("usb-sata", Some("/dev/sde")),
            ("nvme", Some("/dev/nvme0n1")),
            ("vm", Some("/dev/vda")),
            ("tmpfs", None),
        ]
        .iter()
        .map(|(l, dev)| (l.to_string(), dev.map(str::to_string)))
        .collect();
        let run = d.path().join("run");
        std::fs::create_dir(&run).unwrap();
        let (poller, heard) = fast_poller(&smartctl, targets, &run);
        // Past detection (a few calls), each poll is one call: 12 calls leave several readings.
        let drives = ["/dev/sdb", "/dev/sdc", "/dev/sde", "/dev/nvme0n1"];
        wait_for_calls(&smartctl, &drives, &Default::default(), 12);
        let r = poller.stop();
        let temps = drive_temp::read_streamed(&run).unwrap();
        assert_eq!(
            r.temp.rows,
            temps.values().map(|v| v.len() as u64).sum::<u64>()
        );
        let src = |t: &str| r.sources.iter().find(|s| s.target == t).unwrap();
        for (t, ty, temp) in [
            ("usb-asmedia", Some("sntasmedia"), 49.0),
            ("usb-jmicron", Some("sntjmicron"), 57.0),
            ("usb-sata", Some("sat"), 38.0),
            ("nvme", None, 61.0),
        ] {
            let s = src(t);
            assert!(s.answered, "{s:?}");
            assert_eq!(s.device_type.as_deref(), ty, "{t}");
            // ~1.5 s at 100 ms, minus detection: several readings, in time order.
            assert!(s.samples >= 4, "{t}: {} readings", s.samples);
            let mine = &temps[t];
            assert_eq!(mine.len(), s.samples, "{t}");
            assert_eq!(s.range_c, Some((temp, temp)), "{t}");
            assert!(mine.iter().all(|x| x.1 == temp));
            assert!(mine.windows(2).all(|w| w[0].0 < w[1].0));
        }
        let vm = src("vm");
        assert!(!vm.answered && vm.samples == 0 && !temps.contains_key("vm"));
        let note = vm.note.as_deref().unwrap();
        assert!(note.contains("Unable to detect device type"), "{note}");
        assert!(note.contains("no -d bridge type answered"), "{note}");
        assert!(note.starts_with("a virtio virtual disk"), "{note}");
        assert!(src("tmpfs")
            .note
            .as_deref()
            .unwrap()
            .contains("not on a block device"));
        // The feed heard each drive's readings as they were kept, with how it was asked, and
        // each target that gives none once, by its index, with the same note.
        let heard = heard.lock().unwrap();
        for (i, (t, ty)) in [
            ("usb-asmedia", Some("sntasmedia")),
            ("usb-jmicron", Some("sntjmicron")),
            ("usb-sata", Some("sat")),
            ("nvme", None),
        ]
        .into_iter()
        .enumerate()
        {
            let mine: Vec<(i64, f64)> = heard
                .readings
                .iter()
                .filter(|r| r.target_index == i)
                .inspect(|r| assert_eq!((r.target.as_str(), r.device_type.as_deref()), (t, ty)))
                .map(|r| (r.time_ns, r.temperature_c.unwrap()))
                .collect();
            assert_eq!(mine, temps[t], "{t}");
        }
        assert_eq!(
            heard.unanswered,
            vec![(4, vm.note.clone().unwrap()), (5, NO_BLOCK_DEVICE.into())]
        );
    }

    #[test]
    #[cfg(unix)] // the recorded smartctl is a shell script
    fn poller_reads_the_thermal_record_before_during_and_after_and_says_once_when_there_is_none() {
        let d = tempfile::tempdir().unwrap();
        let smartctl = replay_smartctl(
            d.path(),
            &[
                (
                    "nvme0n1.direct.json",
                    "derived/nvme-toshiba-kxg6.before-throttle.json",
                ),
                (
                    "sdb.direct.json",
                    "recorded/usbsunplus-samsung-hd204ui.x.json",
                ),
                ("sde.sat.json", "sata-sat.json"),
                // smartctl 7.3: no TMT counters in its JSON, so from its text output.
                ("nvme1n1.direct.json", "recorded/nvme-toshiba-kxg6.x.json"),
                (
                    "nvme1n1.direct.txt",
                    "text/nvme-smartctl73-before-throttle.txt",
                ),
                ("default.json", "vm-virtio-sat.json"),
            ],
        );
        let targets = [
            ("nvme-smartctl73", "/dev/nvme1n1"),
            ("nvme", "/dev/nvme0n1"),
            ("usb-sata", "/dev/sdb"),
            ("sata-no-sct", "/dev/sde"),
        ]
        .iter()
        .map(|(l, dev)| (l.to_string(), Some(dev.to_string())))
        .collect();
        let run = d.path().join("run");
        std::fs::create_dir(&run).unwrap();
        let (poller, heard) = fast_poller(&smartctl, targets, &run);
        let drives = ["/dev/nvme1n1", "/dev/nvme0n1", "/dev/sdb", "/dev/sde"];
        let before = wait_for_calls(&smartctl, &drives, &Default::default(), 8);
        // The drives throttle: their next answers carry the grown counters.
        let data = d.path().join("smartctl.d");
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/smartctl");
        for (name, file) in [
            (
                "nvme0n1.direct.json",
                "derived/nvme-toshiba-kxg6.after-throttle.json",
            ),
            (
                "sdb.direct.json",
                "derived/usbsunplus-samsung-hd204ui.after-throttle.json",
            ),
            (
                "nvme1n1.direct.txt",
                "text/nvme-smartctl73-after-throttle.txt",
            ),
        ] {
            let tmp = data.join("next");
            std::fs::copy(fixtures.join(file), &tmp).unwrap();
            std::fs::rename(&tmp, data.join(name)).unwrap();
        }
        wait_for_calls(&smartctl, &drives, &before, 8);
        let r = poller.stop();
        let log = |t: &str| r.logs.iter().find(|l| l.target == t).unwrap();
        let nvme = log("nvme");
        assert_eq!(nvme.kind, Some("nvme"));
        let dl = nvme.delta.as_ref().unwrap();
        assert_eq!((dl.tmt1_transitions, dl.tmt1_time_s), (Some(3), Some(41)));
        assert_eq!(dl.warning_temp_time_min, Some(1));
        assert_eq!(nvme.after.as_ref().unwrap().sensors, "1=35");
        // Before, during (one a poll) and the last reading after the stop.
        assert!(nvme.readings >= 8, "{} readings", nvme.readings);
        let logs = drive_log::read_streamed(&run).unwrap();
        let rows = &logs["nvme"];
        assert_eq!(rows.len(), nvme.readings);
        assert!(rows.windows(2).all(|w| w[0].time_ns < w[1].time_ns));
        assert_eq!(rows[0].tmt1_transitions, Some(9));
        assert_eq!(rows.last().unwrap().tmt1_transitions, Some(12));
        let old = log("nvme-smartctl73");
        let dl = old.delta.as_ref().unwrap();
        assert_eq!((dl.tmt1_transitions, dl.tmt1_time_s), (Some(3), Some(41)));
        assert_eq!((dl.tmt2_transitions, dl.tmt2_time_s), (Some(0), Some(0)));
        let note = old.note.as_deref().unwrap();
        assert!(
            note.contains("TMT counters from smartctl 7.3's text output"),
            "{note}"
        );
        let sata = log("usb-sata");
        assert_eq!(sata.kind, Some("sct"));
        assert_eq!(sata.delta.as_ref().unwrap().sct_over_limit_count, Some(2));
        assert_eq!(
            sata.sct_history_after.as_ref().unwrap().oldest_first.len(),
            128
        );
        // The SATA drive was asked for its SCT record; the temperature still came through.
        assert!(
            r.sources
                .iter()
                .find(|s| s.target == "usb-sata")
                .unwrap()
                .samples
                >= 8
        );
        let none = log("sata-no-sct");
        assert_eq!((none.kind, none.readings), (None, 0));
        assert!(!logs.contains_key("sata-no-sct"));
        let note = none.note.as_deref().unwrap();
        assert!(
            note.contains("gives no thermal record") && note.contains("-d sat"),
            "{note}"
        );
        // The feed heard each thermal record as it went to drive_log.csv (the old smartctl's
        // with its counters from the text output), and a drive without one by its
        // temperature alone.
        let heard = heard.lock().unwrap();
        let records = |i: usize| -> Vec<(Option<&str>, Option<DriveLogRecord>)> {
            heard
                .readings
                .iter()
                .filter(|r| r.target_index == i)
                .map(|r| (r.thermal_kind, r.thermal.clone()))
                .collect()
        };
        for (i, t, kind) in [
            (0, "nvme-smartctl73", "nvme"),
            (1, "nvme", "nvme"),
            (2, "usb-sata", "sct"),
        ] {
            let want: Vec<_> = logs[t]
                .iter()
                .map(|l| (Some(kind), Some(l.clone())))
                .collect();
            assert_eq!(records(i), want, "{t}");
        }
        let sata = records(3);
        assert!(sata.len() >= 8 && sata.iter().all(|r| *r == (None, None)));
        assert!(heard.unanswered.is_empty());
    }

    #[test]
    #[cfg(unix)] // the recorded smartctl is a shell script
    fn readings_are_in_the_files_while_the_poller_runs_and_read_back_as_polled() {
        use std::os::unix::fs::PermissionsExt as _;
        let d = tempfile::tempdir().unwrap();
        // The recorded NVMe answer after a throttle, each call with its own temperature
        // (30 + call number) and TMT1 transition count (the call number); every answer is
        // logged as "DISK TEMPERATURE COUNT" to smartctl.answers.
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../fixtures/smartctl/derived/nvme-toshiba-kxg6.after-throttle.json");
        let smartctl = d.path().join("smartctl");
        std::fs::write(
            &smartctl,
            format!(
                "#!/bin/sh\nd=\nfor a in \"$@\"; do case \"$a\" in /*) d=$a;; esac; done\n\
                 n=$(cat \"$0.n\" 2>/dev/null || echo 0); n=$((n+1)); echo $n > \"$0.n\"\n\
                 echo \"$d $((30+n)) $n\" >> \"$0.answers\"\necho \"$d\" >> \"$0.calls\"\n\
                 sed -e \"s/\\\"current\\\": 35/\\\"current\\\": $((30+n))/\" \
                 -e \"s/\\\"thermal_mgmt_temperature_1_transition_count\\\": 12/\\\"thermal_mgmt_temperature_1_transition_count\\\": $n/\" '{}'\n",
                fixture.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&smartctl, std::fs::Permissions::from_mode(0o755)).unwrap();
        let run = d.path().join("run");
        std::fs::create_dir(&run).unwrap();
        let targets = vec![
            ("a".to_string(), Some("/dev/nvme0n1".to_string())),
            ("b,2".to_string(), Some("/dev/nvme1n1".to_string())),
        ];
        let (poller, heard) = fast_poller(&smartctl, targets, &run);
        let drives = ["/dev/nvme0n1", "/dev/nvme1n1"];
        // Detection, then at least three polls of each drive.
        let seen = wait_for_calls(&smartctl, &drives, &Default::default(), 4);
        // While the poller runs: both files hold whole lines, each target's first readings.
        let temps_running = drive_temp::read_streamed(&run).unwrap();
        let logs_running = drive_log::read_streamed(&run).unwrap();
        for name in [drive_temp::FILE_NAME, drive_log::FILE_NAME] {
            let text = std::fs::read_to_string(run.join(name)).unwrap();
            assert!(text.ends_with('\n'), "{name}: {text}");
        }
        for t in ["a", "b,2"] {
            assert!(temps_running[t].len() >= 2, "{t}: {temps_running:?}");
            assert!(logs_running[t].len() >= 2, "{t}: {logs_running:?}");
        }
        // It goes on polling after that read.
        wait_for_calls(&smartctl, &drives, &seen, 3);
        let r = poller.stop();
        // What smartctl answered, per drive in call order; its first answer was detection.
        let answers = std::fs::read_to_string(smartctl.with_extension("answers")).unwrap();
        let polled = |disk: &str| -> Vec<(f64, u64)> {
            answers
                .lines()
                .filter_map(|l| {
                    let v: Vec<&str> = l.split(' ').collect();
                    (v[0] == disk).then(|| (v[1].parse().unwrap(), v[2].parse().unwrap()))
                })
                .skip(1)
                .collect()
        };
        let temps = drive_temp::read_streamed(&run).unwrap();
        let logs = drive_log::read_streamed(&run).unwrap();
        for (t, disk) in [("a", "/dev/nvme0n1"), ("b,2", "/dev/nvme1n1")] {
            let want = polled(disk);
            let got: Vec<(f64, u64)> = temps[t]
                .iter()
                .zip(&logs[t])
                .map(|(x, l)| (x.1, l.tmt1_transitions.unwrap()))
                .collect();
            assert_eq!(got, want, "{t}");
            assert_eq!((temps[t].len(), logs[t].len()), (want.len(), want.len()));
            // What was read while the poller ran is the start of what it ended with.
            assert_eq!(
                temps[t][..temps_running[t].len()],
                temps_running[t][..],
                "{t}"
            );
            assert_eq!(logs[t][..logs_running[t].len()], logs_running[t][..], "{t}");
            let s = r.sources.iter().find(|s| s.target == t).unwrap();
            assert_eq!(s.samples, want.len(), "{t}");
            let lo = want.iter().map(|w| w.0).fold(f64::INFINITY, f64::min);
            let hi = want.iter().map(|w| w.0).fold(f64::NEG_INFINITY, f64::max);
            assert_eq!(s.range_c, Some((lo, hi)), "{t}");
            let l = r.logs.iter().find(|l| l.target == t).unwrap();
            assert_eq!(l.after.as_ref(), logs[t].last(), "{t}");
            // Each answer reached the feed once, in call order, at the time it was written.
            let heard: Vec<(i64, f64, u64)> = heard
                .lock()
                .unwrap()
                .readings
                .iter()
                .filter(|r| r.target == t)
                .map(|r| {
                    let tmt1 = r.thermal.as_ref().and_then(|l| l.tmt1_transitions);
                    (r.time_ns, r.temperature_c.unwrap(), tmt1.unwrap())
                })
                .collect();
            let written: Vec<(i64, f64, u64)> = temps[t]
                .iter()
                .zip(&logs[t])
                .map(|(x, l)| (x.0, x.1, l.tmt1_transitions.unwrap()))
                .collect();
            assert_eq!(heard, written, "{t}");
        }
        assert_eq!(
            (r.temp.rows, r.log.rows),
            (
                temps.values().map(|v| v.len() as u64).sum(),
                logs.values().map(|v| v.len() as u64).sum()
            )
        );
        assert_eq!(
            (r.temp.failure.as_ref(), r.log.failure.as_ref()),
            (None, None)
        );
    }

    #[test]
    #[cfg(target_os = "linux")] // /dev/full; the recorded smartctl is a shell script
    fn a_full_disk_loses_the_readings_not_the_poller_and_says_how_many() {
        let d = tempfile::tempdir().unwrap();
        let smartctl = replay_smartctl(
            d.path(),
            &[(
                "default.json",
                "derived/nvme-toshiba-kxg6.after-throttle.json",
            )],
        );
        let run = d.path().join("run");
        std::fs::create_dir(&run).unwrap();
        // Every write to drive_temp.csv fails with ENOSPC, as on a full disk.
        std::os::unix::fs::symlink("/dev/full", run.join(drive_temp::FILE_NAME)).unwrap();
        let (poller, heard) = fast_poller(
            &smartctl,
            vec![("t".into(), Some("/dev/nvme0n1".into()))],
            &run,
        );
        wait_for_calls(&smartctl, &["/dev/nvme0n1"], &Default::default(), 4);
        let r = poller.stop();
        let s = &r.sources[0];
        assert!(s.answered && s.samples >= 3, "{s:?}");
        assert_eq!(r.temp.rows, 0);
        let said = r.temp.failure.as_deref().unwrap();
        assert!(
            said.contains("No space left on device")
                && said.contains(&format!(
                    "{} readings from then on were not written",
                    s.samples
                )),
            "{said}"
        );
        // The other file is written all the same.
        assert_eq!(r.log.failure, None);
        let logs = drive_log::read_streamed(&run).unwrap();
        assert_eq!(logs["t"].len() as u64, r.log.rows);
        assert_eq!(r.logs[0].readings, logs["t"].len());
        // And the readings that could not be written still reached the feed.
        assert_eq!(heard.lock().unwrap().readings.len(), s.samples);
    }

    #[test]
    fn missing_smartctl_is_said_and_the_poller_ends() {
        let config = PollerConfig {
            smartctl: PathBuf::from("/nonexistent/smartctl"),
            ..Default::default()
        };
        let run = tempfile::tempdir().unwrap();
        let (feed, heard) = listener();
        let r = DrivePoller::start(
            config,
            drives(vec![("t".into(), Some("/dev/sdb".into()))]),
            run.path(),
            vec![feed],
        )
        .stop();
        // The feed was told once that no reading will come, and why.
        let heard = heard.lock().unwrap();
        assert!(heard.readings.is_empty());
        assert_eq!(
            heard.unanswered,
            vec![(0, r.sources[0].note.clone().unwrap())]
        );
        assert!(!r.sources[0].answered);
        // No reading, no file.
        assert_eq!(r.temp, Written::default());
        assert_eq!(std::fs::read_dir(run.path()).unwrap().count(), 0);
        assert!(r.sources[0]
            .note
            .as_deref()
            .unwrap()
            .contains("not installed"));
    }
}
