//! The drive's own view: `smartctl --json` before and after each phase —
//! composite temperature and the NVMe thermal-management counters (how
//! often and how long the controller throttled). Where the tool is missing,
//! the target has no block device, or a USB bridge hides SMART, the reading
//! says so and the run goes on.
//!
//! [`TempPoller`] polls the drive temperature about once a second while the run goes, on
//! its own thread (never on an I/O thread), and appends each reading to `drive_temp.csv`
//! and `drive_log.csv` as it comes (each row whole in the file at once, so a killed run
//! keeps them); it keeps in memory only what it decides with (per target: the count,
//! lowest and highest temperature, first and last thermal record), so its memory does not
//! grow with the run.

use crate::thermal_log::{set_tmt, thermal_log_of, tmt_from_text, tmt_only_in_text, SctHistory};
use hostd_records::drive_log::{self, DriveLogDelta, DriveLogRecord};
use hostd_records::drive_temp::{self, DriveTempRecord};
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// NVMe thermal-management counters (SMART / Health log).
#[derive(Debug, Default, Clone, PartialEq, Serialize)]
pub struct NvmeThermal {
    /// Minutes above the warning composite temperature.
    pub warning_temp_time_min: Option<u64>,
    /// Minutes above the critical composite temperature.
    pub critical_comp_time_min: Option<u64>,
    /// Transitions into thermal-management level 1 (light throttling).
    pub thermal_temp1_transition_count: Option<u64>,
    /// Transitions into thermal-management level 2 (heavy throttling).
    pub thermal_temp2_transition_count: Option<u64>,
    /// Seconds spent in level 1.
    pub thermal_temp1_total_time_s: Option<u64>,
    /// Seconds spent in level 2.
    pub thermal_temp2_total_time_s: Option<u64>,
}

/// One SMART reading of one drive.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SmartReading {
    /// Host Unix ns when read.
    pub time_ns: i64,
    /// Target label.
    pub target: String,
    /// Phase it belongs to.
    pub phase: String,
    /// `before` or `after`.
    pub when: String,
    /// Device queried, if any.
    pub device: Option<String>,
    /// True when smartctl returned SMART data.
    pub available: bool,
    /// Why not, or what smartctl warned about.
    pub note: Option<String>,
    /// Drive model.
    pub model: Option<String>,
    /// Composite / current temperature, °C.
    pub temperature_c: Option<f64>,
    /// NVMe thermal counters, for NVMe drives (also behind NVMe–USB bridges).
    pub nvme: Option<NvmeThermal>,
}

/// Extracts the fields hostd uses from `smartctl --json` output.
pub fn parse_smartctl(json: &Value) -> (Option<String>, Option<f64>, Option<NvmeThermal>) {
    let model = json["model_name"].as_str().map(str::to_string);
    let temperature = json["temperature"]["current"].as_f64();
    let log = &json["nvme_smart_health_information_log"];
    // One parser of the health log's thermal keys, with its rule for a missing one
    // (`thermal_log`: a newer smartctl leaves zero counters out).
    let nvme = crate::thermal_log::thermal_log_of(json)
        .filter(|l| l.kind == "nvme")
        .map(|l| NvmeThermal {
            warning_temp_time_min: l.record.warning_temp_time_min,
            critical_comp_time_min: l.record.critical_comp_time_min,
            thermal_temp1_transition_count: l.record.tmt1_transitions,
            thermal_temp2_transition_count: l.record.tmt2_transitions,
            thermal_temp1_total_time_s: l.record.tmt1_time_s,
            thermal_temp2_total_time_s: l.record.tmt2_time_s,
        });
    let temperature = temperature.or_else(|| log["temperature"].as_f64());
    let temperature = temperature.or_else(|| ata_temperature(json));
    (model, temperature, nvme)
}

/// ATA attribute 194 (Temperature_Celsius): the low byte of its raw value (the higher bytes
/// hold the lifetime minimum and maximum on many drives).
fn ata_temperature(json: &Value) -> Option<f64> {
    json["ata_smart_attributes"]["table"]
        .as_array()?
        .iter()
        .find(|a| a["id"].as_u64() == Some(194))
        .and_then(|a| a["raw"]["value"].as_u64())
        .map(|raw| (raw & 0xff) as f64)
}

/// The drive temperature in one `smartctl --json` answer, and where it came from
/// (`temperature.current`, the NVMe health log, or ATA attribute 194).
pub fn temperature_of(json: &Value) -> Option<(f64, &'static str)> {
    if let Some(t) = json["temperature"]["current"].as_f64() {
        return Some((t, "temperature.current"));
    }
    if let Some(t) = json["nvme_smart_health_information_log"]["temperature"].as_f64() {
        return Some((t, "nvme_smart_health_information_log"));
    }
    ata_temperature(json).map(|t| (t, "ata_smart_attributes 194"))
}

/// The whole disk behind a partition device (`/dev/sdb1` → `/dev/sdb`,
/// `/dev/nvme0n1p2` → `/dev/nvme0n1`), using sysfs; other paths unchanged.
pub fn whole_disk(device: &str) -> String {
    let Some(name) = device.strip_prefix("/dev/") else {
        return device.to_string();
    };
    let sys = Path::new("/sys/class/block").join(name);
    if sys.join("partition").exists() {
        if let Ok(real) = std::fs::canonicalize(&sys) {
            if let Some(parent) = real.parent().and_then(|p| p.file_name()) {
                return format!("/dev/{}", parent.to_string_lossy());
            }
        }
    }
    device.to_string()
}

/// What smartctl says of a disk it has no way to ask (a paravirtual disk).
const NO_DEVICE_TYPE: &str = "Unable to detect device type";
/// How a [`TempSource`] note begins its reason when the disk has no SMART by design.
pub const NO_SMART: &str = "which has no SMART";

/// What kind of virtual disk `disk` (a whole disk, `/dev/NAME`) is, when it is one: a
/// paravirtual block device (virtio-blk `vdX`, Xen `xvdX`) has no SMART to ask, so its
/// missing temperature is a fact of the machine, not something to fix.
pub fn virtual_disk(disk: &str) -> Option<&'static str> {
    let name = disk.strip_prefix("/dev/")?;
    let rest = |prefix: &str| {
        name.strip_prefix(prefix)
            .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_lowercase()))
    };
    if rest("xvd") {
        Some("a Xen virtual disk")
    } else if rest("vd") {
        Some("a virtio virtual disk")
    } else {
        None
    }
}

/// USB bridge types smartctl may need spelled out when it cannot tell (`-d TYPE`).
pub const BRIDGE_TYPES: [&str; 4] = ["sntjmicron", "sntrealtek", "sntasmedia", "sat"];

/// Reads SMART of `device` (a mount source such as `/dev/sdb1`) with
/// `smartctl --json -a`, trying the NVMe–USB bridge types when smartctl
/// cannot tell them itself. Never fails: problems end up in `note`.
pub fn read_smart(device: Option<&str>, target: &str, phase: &str, when: &str) -> SmartReading {
    let mut reading = SmartReading {
        time_ns: hostd_records::clock::now_ns(),
        target: target.to_string(),
        phase: phase.to_string(),
        when: when.to_string(),
        device: None,
        available: false,
        note: None,
        model: None,
        temperature_c: None,
        nvme: None,
    };
    let Some(device) = device.filter(|d| d.starts_with("/dev/")) else {
        reading.note = Some(format!(
            "target is not on a block device ({}); no SMART",
            device.unwrap_or("unknown")
        ));
        return reading;
    };
    let disk = whole_disk(device);
    reading.device = Some(disk.clone());
    let mut last_note = String::new();
    for bridge in std::iter::once(None).chain(BRIDGE_TYPES.iter().map(Some)) {
        let mut args = vec!["--json", "-a"];
        if let Some(b) = bridge {
            args.extend(["-d", b]);
        }
        args.push(&disk);
        match run_with_timeout(&smartctl_program(), &args, Duration::from_secs(10)) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                reading.note =
                    Some("smartctl is not installed (apt install smartmontools); no SMART".into());
                return reading;
            }
            Err(e) => {
                reading.note = Some(format!("smartctl failed: {e}"));
                return reading;
            }
            Ok(out) => {
                let Ok(json) = serde_json::from_slice::<Value>(&out) else {
                    last_note = "smartctl printed no JSON".into();
                    continue;
                };
                let (model, temp, nvme) = parse_smartctl(&json);
                if temp.is_some() || nvme.is_some() {
                    reading.available = true;
                    reading.model = model;
                    reading.temperature_c = temp;
                    reading.nvme = nvme;
                    reading.note = bridge.map(|b| format!("read through USB bridge type {b}"));
                    return reading;
                }
                last_note = smartctl_messages(&json).unwrap_or_else(|| "no SMART data".into());
            }
        }
    }
    reading.note = Some(format!("{disk}: {last_note} (a USB bridge may hide SMART)"));
    reading
}

fn smartctl_messages(json: &Value) -> Option<String> {
    let msgs: Vec<&str> = json["smartctl"]["messages"]
        .as_array()?
        .iter()
        .filter_map(|m| m["string"].as_str())
        .collect();
    (!msgs.is_empty()).then(|| msgs.join("; "))
}

fn run_with_timeout(program: &Path, args: &[&str], timeout: Duration) -> std::io::Result<Vec<u8>> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut buf);
        buf
    });
    let deadline = Instant::now() + timeout;
    loop {
        if child.try_wait()?.is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "smartctl timed out",
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(reader.join().unwrap_or_default())
}

/// The smartctl to run: `THROTTLESCOPE_SMARTCTL` if set (another build, or a script that
/// replays recorded answers), else `smartctl` from PATH.
pub fn smartctl_program() -> PathBuf {
    std::env::var_os("THROTTLESCOPE_SMARTCTL")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("smartctl"))
}

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

/// Polls the temperature of each target's drive on a background thread until stopped.
pub struct TempPoller {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<PollResult>>,
}

/// One smartctl call; the parsed JSON, or why there is none.
fn smartctl_json(
    config: &PollerConfig,
    device_type: Option<&str>,
    disk: &str,
    sct: bool,
) -> Result<Value, String> {
    let mut args = vec!["--json", "-A"];
    if sct {
        // A SATA drive's SCT status and temperature history (its thermal record).
        args.extend(["-l", "scttemp"]);
    }
    if let Some(t) = device_type {
        args.extend(["-d", t]);
    }
    args.push(disk);
    match run_with_timeout(&config.smartctl, &args, config.timeout) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!(
            "{} is not installed (apt install smartmontools)",
            config.smartctl.display()
        )),
        Err(e) => Err(format!("smartctl failed: {e}")),
        Ok(out) => serde_json::from_slice::<Value>(&out)
            .map_err(|_| "smartctl printed no JSON".to_string()),
    }
}

/// How a drive answered detection.
#[derive(Debug, Clone, PartialEq)]
pub struct Detected {
    /// `-d` type that worked (None: smartctl's own choice).
    pub device_type: Option<String>,
    /// Field the temperature came from.
    pub field: String,
    /// The drive speaks ATA (its thermal record is the SCT status, asked with `-l scttemp`).
    pub ata: bool,
    /// An NVMe drive read by a smartctl whose JSON has no thermal management counters: they
    /// are read from its text output as well.
    pub tmt_text: bool,
}

/// Finds how `disk` answers: directly (NVMe, SATA, bridges smartctl knows), then each
/// bridge type. Ok(how), or what smartctl said when asked directly.
pub fn detect(config: &PollerConfig, disk: &str) -> Result<Detected, String> {
    let mut first: Option<String> = None;
    for t in std::iter::once(None).chain(BRIDGE_TYPES.iter().map(|t| Some(*t))) {
        let why = match smartctl_json(config, t, disk, false) {
            Err(e) if e.contains("not installed") => return Err(e),
            Err(e) => e,
            Ok(json) => match temperature_of(&json) {
                Some((_, field)) => {
                    return Ok(Detected {
                        device_type: t.map(str::to_string),
                        field: field.to_string(),
                        ata: json["device"]["protocol"].as_str() == Some("ATA")
                            || json["ata_smart_attributes"].is_object(),
                        tmt_text: tmt_only_in_text(&json),
                    })
                }
                None => smartctl_messages(&json).unwrap_or_else(|| {
                    format!(
                        "no temperature (smartctl exit status {})",
                        json["smartctl"]["exit_status"].as_i64().unwrap_or(-1)
                    )
                }),
            },
        };
        first.get_or_insert(why);
    }
    Err(format!(
        "{}; no -d bridge type answered",
        first.unwrap_or_default()
    ))
}

impl TempPoller {
    /// Starts polling `targets` (label, whole-disk device or None), appending the readings
    /// to `drive_temp.csv` and `drive_log.csv` in the run directory `dir` as they come.
    /// Detection runs on the poller's thread too, so starting never waits for smartctl.
    pub fn start(
        config: PollerConfig,
        targets: Vec<(String, Option<String>)>,
        dir: &Path,
    ) -> TempPoller {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let mut files = Files {
            temp: drive_temp::stream(dir),
            log: drive_log::stream(dir),
        };
        let handle = std::thread::Builder::new()
            .name("drive-temp".into())
            .spawn(move || {
                let mut r = poll(&config, &targets, &flag, &mut files);
                (r.temp, r.log) = (Written::of(&files.temp), Written::of(&files.log));
                r
            })
            .ok();
        TempPoller { stop, handle }
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

impl Drop for TempPoller {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
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

/// Where the readings go as they come.
struct Files {
    temp: drive_temp::Stream,
    log: drive_log::Stream,
}

/// One drive being polled: where its temperature and thermal record go.
struct Active {
    source: usize,
    disk: String,
    device_type: Option<String>,
    ata: bool,
    tmt_text: bool,
}

/// The thermal management counters from smartctl's text output (`smartctl -A`), for a
/// smartctl whose JSON lacks them.
fn tmt_text(config: &PollerConfig, a: &Active) -> Option<[u64; 4]> {
    let mut args = vec!["-A"];
    if let Some(t) = a.device_type.as_deref() {
        args.extend(["-d", t]);
    }
    args.push(&a.disk);
    let out = run_with_timeout(&config.smartctl, &args, config.timeout).ok()?;
    tmt_from_text(&String::from_utf8_lossy(&out))
}

/// Asks one drive once: its temperature into `drive_temp.csv`, its thermal record into
/// `drive_log.csv` (both bounded by `max_samples` per target).
fn poll_once(config: &PollerConfig, a: &Active, result: &mut PollResult, files: &mut Files) {
    let json = smartctl_json(config, a.device_type.as_deref(), &a.disk, a.ata).ok();
    let now = hostd_records::clock::now_ns();
    let temp = json
        .as_ref()
        .and_then(|j| temperature_of(j).map(|(v, _)| v));
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
            files.temp.append(&[DriveTempRecord {
                time_ns: now,
                target: source.target.clone(),
                temperature_c: v,
            }]);
        }
    }
    let Some(json) = json else { return };
    let log = &mut result.logs[a.source];
    match thermal_log_of(&json) {
        None => {
            if log.kind.is_none() && log.note.is_none() {
                log.note = Some(format!(
                    "{}: the drive{} gives no thermal record (no NVMe health log, no SCT status){}",
                    a.disk,
                    a.device_type
                        .as_ref()
                        .map_or(String::new(), |t| format!(" through -d {t}")),
                    smartctl_messages(&json).map_or(String::new(), |m| format!(": {m}"))
                ));
            }
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
                        json["smartctl"]["version"]
                            .as_array()
                            .map(|v| v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("."))
                            .unwrap_or_default()
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
                files.log.append(&[r]);
            }
        }
    }
}

fn poll(
    config: &PollerConfig,
    targets: &[(String, Option<String>)],
    stop: &AtomicBool,
    files: &mut Files,
) -> PollResult {
    let mut result = PollResult::default();
    let mut active: Vec<Active> = Vec::new();
    for (label, device) in targets {
        let mut source = TempSource {
            target: label.clone(),
            device: device.clone(),
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
        match device {
            None => source.note = Some("not on a block device: no drive temperature".into()),
            Some(disk) => match detect(config, disk) {
                Ok(d) => {
                    source.answered = true;
                    source.device_type = d.device_type.clone();
                    source.field = Some(d.field);
                    active.push(Active {
                        source: result.sources.len(),
                        disk: disk.clone(),
                        device_type: d.device_type,
                        ata: d.ata,
                        tmt_text: d.tmt_text,
                    });
                }
                Err(why) => {
                    let why = if why.starts_with(disk.as_str()) {
                        why
                    } else {
                        format!("{disk}: {why}")
                    };
                    // smartctl finds no device type at all: the disk has no SMART interface.
                    match virtual_disk(disk).filter(|_| why.contains(NO_DEVICE_TYPE)) {
                        // Nothing to fix: the hypervisor's disk has no SMART to ask.
                        Some(kind) => {
                            tracing::info!(target = %label, device = %disk, "{kind}: no SMART, no drive temperature ({why})");
                            source.note = Some(format!("{kind}, {NO_SMART}: {why}"));
                        }
                        None => {
                            tracing::warn!(target = %label, device = %disk, "the drive answers no temperature to smartctl ({why}); the run goes on without a drive temperature series");
                            source.note = Some(why);
                        }
                    }
                }
            },
        }
        if !source.answered {
            log.note = Some(format!(
                "no thermal record: {}",
                source.note.as_deref().unwrap_or("the drive did not answer")
            ));
        }
        result.sources.push(source);
        result.logs.push(log);
    }
    let mut next = Instant::now();
    while !stop.load(Ordering::Relaxed) && !active.is_empty() {
        for a in &active {
            poll_once(config, a, &mut result, files);
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
        poll_once(config, a, &mut result, files);
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

    #[test]
    fn the_phase_readings_and_the_thermal_log_read_a_missing_counter_alike() {
        // smartctl 7.6 leaves the four TMT counters out when they are zero.
        let json: Value = serde_json::from_str(
            r#"{"smartctl":{"version":[7,6]},"nvme_smart_health_information_log":
                {"temperature":48,"warning_temp_time":0,"critical_comp_time":0}}"#,
        )
        .unwrap();
        let (_, t, nvme) = parse_smartctl(&json);
        assert_eq!(t, Some(48.0));
        let nvme = nvme.unwrap();
        let log = crate::thermal_log::thermal_log_of(&json).unwrap().record;
        assert_eq!(nvme.thermal_temp1_transition_count, Some(0));
        assert_eq!(nvme.thermal_temp1_transition_count, log.tmt1_transitions);
        assert_eq!(nvme.thermal_temp2_total_time_s, log.tmt2_time_s);
        // An older one that never printed them: unknown in both.
        let old: Value = serde_json::from_str(
            r#"{"smartctl":{"version":[7,3]},"nvme_smart_health_information_log":
                {"temperature":48,"warning_temp_time":0,"critical_comp_time":0}}"#,
        )
        .unwrap();
        assert_eq!(
            parse_smartctl(&old)
                .2
                .unwrap()
                .thermal_temp1_transition_count,
            None
        );
    }

    #[test]
    fn parses_nvme_thermal_counters() {
        let json: Value = serde_json::from_str(
            r#"{"model_name":"Samsung Portable SSD X5","temperature":{"current":61},
                "nvme_smart_health_information_log":{"temperature":61,"warning_temp_time":3,
                "critical_comp_time":0,"thermal_mgmt_temperature_1_transition_count":4,
                "thermal_mgmt_temperature_2_transition_count":1,
                "thermal_mgmt_temperature_1_total_time":212,
                "thermal_mgmt_temperature_2_total_time":9}}"#,
        )
        .unwrap();
        let (model, temp, nvme) = parse_smartctl(&json);
        assert_eq!(model.as_deref(), Some("Samsung Portable SSD X5"));
        assert_eq!(temp, Some(61.0));
        let n = nvme.unwrap();
        assert_eq!(n.thermal_temp1_transition_count, Some(4));
        assert_eq!(n.thermal_temp1_total_time_s, Some(212));
        assert_eq!(n.warning_temp_time_min, Some(3));
    }

    #[test]
    fn sata_drive_has_temperature_but_no_nvme_log() {
        let json: Value = serde_json::from_str(r#"{"temperature":{"current":38}}"#).unwrap();
        let (_, temp, nvme) = parse_smartctl(&json);
        assert_eq!((temp, nvme), (Some(38.0), None));
    }

    #[test]
    fn a_target_without_block_device_is_noted_not_fatal() {
        let r = read_smart(Some("tmpfs"), "t0", "write", "before");
        assert!(!r.available);
        assert!(r.note.unwrap().contains("not on a block device"));
    }

    #[test]
    fn paravirtual_disks_are_told_from_real_ones_by_name() {
        assert_eq!(virtual_disk("/dev/vda"), Some("a virtio virtual disk"));
        assert_eq!(virtual_disk("/dev/xvdb"), Some("a Xen virtual disk"));
        for real in [
            "/dev/sda",
            "/dev/nvme0n1",
            "/dev/vd",
            "/dev/vda1",
            "vda",
            "/dev/loop0",
        ] {
            assert_eq!(virtual_disk(real), None, "{real}");
        }
    }

    #[test]
    fn non_partition_paths_are_unchanged() {
        assert_eq!(
            whole_disk("/dev/definitely-not-a-disk"),
            "/dev/definitely-not-a-disk"
        );
        assert_eq!(whole_disk("overlay"), "overlay");
    }

    fn fixture(name: &str) -> Value {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../fixtures/smartctl")
            .join(name);
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
    }

    #[test]
    fn recorded_answers_give_the_drive_temperature_and_its_field() {
        for (file, want) in [
            ("nvme-direct.json", Some((61.0, "temperature.current"))),
            (
                "asm2362-sntasmedia.json",
                Some((49.0, "temperature.current")),
            ),
            (
                "jms583-sntjmicron.json",
                Some((57.0, "nvme_smart_health_information_log")),
            ),
            (
                "rtl9210-sntrealtek.json",
                Some((44.0, "temperature.current")),
            ),
            ("sata-sat.json", Some((38.0, "ata_smart_attributes 194"))),
            ("asm2362-direct.json", None),
            ("vm-virtio-direct.json", None),
            ("vm-virtio-sat.json", None),
        ] {
            assert_eq!(temperature_of(&fixture(file)), want, "{file}");
        }
        let unknown = smartctl_messages(&fixture("asm2362-direct.json")).unwrap();
        assert!(unknown.contains("Unknown USB bridge"), "{unknown}");
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

    /// A poller over `smartctl` every 100 ms, appending into `run` (which must exist).
    #[cfg(unix)] // for the tests with a recorded smartctl, a shell script
    fn fast_poller(
        smartctl: &Path,
        targets: Vec<(String, Option<String>)>,
        run: &Path,
    ) -> TempPoller {
        let config = PollerConfig {
            smartctl: smartctl.to_path_buf(),
            interval: Duration::from_millis(100),
            ..Default::default()
        };
        TempPoller::start(config, targets, run)
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
        let poller = fast_poller(&smartctl, targets, &run);
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
        let poller = fast_poller(&smartctl, targets, &run);
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
        let poller = fast_poller(&smartctl, targets, &run);
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
        let poller = fast_poller(
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
    }

    #[test]
    fn missing_smartctl_is_said_and_the_poller_ends() {
        let config = PollerConfig {
            smartctl: PathBuf::from("/nonexistent/smartctl"),
            ..Default::default()
        };
        let run = tempfile::tempdir().unwrap();
        let r = TempPoller::start(
            config,
            vec![("t".into(), Some("/dev/sdb".into()))],
            run.path(),
        )
        .stop();
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
