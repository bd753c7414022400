//! The drive's own view: `smartctl --json` before and after each phase —
//! composite temperature and the NVMe thermal-management counters (how
//! often and how long the controller throttled). Where the tool is missing,
//! the target has no block device, or a USB bridge hides SMART, the reading
//! says so and the run goes on.

use serde::Serialize;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
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
    let nvme = log.is_object().then(|| NvmeThermal {
        warning_temp_time_min: log["warning_temp_time"].as_u64(),
        critical_comp_time_min: log["critical_comp_time"].as_u64(),
        thermal_temp1_transition_count: log["thermal_temp1_transition_count"].as_u64(),
        thermal_temp2_transition_count: log["thermal_temp2_transition_count"].as_u64(),
        thermal_temp1_total_time_s: log["thermal_temp1_total_time"].as_u64(),
        thermal_temp2_total_time_s: log["thermal_temp2_total_time"].as_u64(),
    });
    let temperature = temperature.or_else(|| log["temperature"].as_f64());
    (model, temperature, nvme)
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

/// USB bridge types smartctl may need spelled out when it cannot tell.
const BRIDGE_TYPES: [&str; 4] = ["sntjmicron", "sntrealtek", "sntasmedia", "sat"];

/// Reads SMART of `device` (a mount source such as `/dev/sdb1`) with
/// `smartctl --json -a`, trying the NVMe–USB bridge types when smartctl
/// cannot tell them itself. Never fails: problems end up in `note`.
pub fn read_smart(device: Option<&str>, target: &str, phase: &str, when: &str) -> SmartReading {
    let mut reading = SmartReading {
        time_ns: hostd_probe::link::host_now_ns(),
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
        match run_with_timeout("smartctl", &args, Duration::from_secs(10)) {
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

fn run_with_timeout(program: &str, args: &[&str], timeout: Duration) -> std::io::Result<Vec<u8>> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_nvme_thermal_counters() {
        let json: Value = serde_json::from_str(
            r#"{"model_name":"Samsung Portable SSD X5","temperature":{"current":61},
                "nvme_smart_health_information_log":{"temperature":61,"warning_temp_time":3,
                "critical_comp_time":0,"thermal_temp1_transition_count":4,
                "thermal_temp2_transition_count":1,"thermal_temp1_total_time":212,
                "thermal_temp2_total_time":9}}"#,
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
    fn non_partition_paths_are_unchanged() {
        assert_eq!(
            whole_disk("/dev/definitely-not-a-disk"),
            "/dev/definitely-not-a-disk"
        );
        assert_eq!(whole_disk("overlay"), "overlay");
    }
}
