//! The one parser of a `smartctl --json` answer: the drive's model, its temperature and the
//! key it came from, whether it speaks ATA, smartctl's own messages, and its thermal record
//! (the NVMe SMART/health log's warning and critical composite temperature time, thermal
//! management temperature 1 and 2 transition counts and total times, and every temperature
//! sensor; a SATA drive's SCT status: current temperature, over/under-limit counts, and SCT
//! temperature history). The poller, its detection and every reader of the drive feed read
//! smartctl through [`Answer::of`] and nothing else.
//!
//! **A missing key** is unknown (`None`), never a zero, with one exception that smartctl
//! itself defines: the four thermal management values. smartctl puts them in its JSON only
//! after release 7.5 (smartmontools commit 8d6517314, "NVMe: add missing JSON values
//! 'thermal_mgmt_temperature_*'"), and then only when one of them is nonzero, so with such
//! a smartctl (a `smartctl.version` of 7.6 or later) an absent key is a zero. An older one
//! prints them in its text output only, again only when nonzero ([`tmt_only_in_text`],
//! [`tmt_from_text`], which the poller then reads too); without that the counters are
//! unknown and [`ThermalLog::note`] says so.
//!
//! The JSON keys are smartmontools' own (src/nvmeprint.cpp `print_smart_log`,
//! src/ataprint.cpp `ataPrintSCTStatus` / `ataPrintSCTTempHist`).

use hostd_records::drive_log::DriveLogRecord;
use serde::Serialize;
use serde_json::Value;

/// What one `smartctl --json` answer says of a drive.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answer {
    /// The drive's model (`model_name`; only in an answer that asked for `-i`).
    pub model: Option<String>,
    /// The drive's temperature, °C, and the key it came from: `temperature.current`, else
    /// the NVMe health log's `temperature`, else ATA attribute 194's raw low byte.
    pub temperature: Option<(f64, &'static str)>,
    /// The drive speaks ATA (its thermal record is the SCT status, asked with `-l scttemp`).
    pub ata: bool,
    /// An NVMe answer of a smartctl whose JSON cannot hold the thermal management counters
    /// ([`tmt_only_in_text`]).
    pub tmt_only_in_text: bool,
    /// The drive's thermal record, when the answer holds one.
    pub thermal: Option<ThermalLog>,
    /// smartctl's own messages (`smartctl.messages[].string`), joined with "; ".
    pub messages: Option<String>,
    /// smartctl's version as it gives it (`7.3`); empty when it gives none.
    pub smartctl_version: String,
}

impl Answer {
    /// Reads one answer; see the module documentation for a missing key.
    pub fn of(json: &Value) -> Answer {
        Answer {
            model: json["model_name"].as_str().map(str::to_string),
            temperature: temperature_of(json),
            ata: json["device"]["protocol"].as_str() == Some("ATA")
                || json["ata_smart_attributes"].is_object(),
            tmt_only_in_text: tmt_only_in_text(json),
            thermal: thermal_log_of(json),
            messages: messages(json),
            smartctl_version: json["smartctl"]["version"]
                .as_array()
                .map(|v| {
                    v.iter()
                        .map(|x| x.to_string())
                        .collect::<Vec<_>>()
                        .join(".")
                })
                .unwrap_or_default(),
        }
    }
}

/// The drive temperature in one answer, and the key it came from (`temperature.current`,
/// the NVMe health log, or ATA attribute 194).
fn temperature_of(json: &Value) -> Option<(f64, &'static str)> {
    if let Some(t) = json["temperature"]["current"].as_f64() {
        return Some((t, "temperature.current"));
    }
    if let Some(t) = json["nvme_smart_health_information_log"]["temperature"].as_f64() {
        return Some((t, "nvme_smart_health_information_log"));
    }
    ata_temperature(json).map(|t| (t, "ata_smart_attributes 194"))
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

/// smartctl's own messages in an answer, joined; None when it gave none.
fn messages(json: &Value) -> Option<String> {
    let msgs: Vec<&str> = json["smartctl"]["messages"]
        .as_array()?
        .iter()
        .filter_map(|m| m["string"].as_str())
        .collect();
    (!msgs.is_empty()).then(|| msgs.join("; "))
}

/// The first smartctl (major, minor) whose JSON carries the thermal management counters.
const TMT_JSON_SINCE: (u64, u64) = (7, 6);

/// A SATA drive's SCT temperature history (a ring of readings at its logging interval).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SctHistory {
    /// Minutes between entries.
    pub logging_interval_min: u64,
    /// Entries, oldest first (smartctl gives the ring from index+1 on); None where empty.
    pub oldest_first: Vec<Option<i64>>,
    /// Highest entry, °C.
    pub max_c: Option<i64>,
    /// The drive's recommended maximum operating temperature, °C.
    pub op_limit_max_c: Option<i64>,
    /// The drive's temperature limit, °C.
    pub limit_max_c: Option<i64>,
}

/// The thermal record of one answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ThermalLog {
    /// `nvme` (health log) or `sct` (SATA SCT status).
    pub kind: &'static str,
    /// The counters and sensors, as one `drive_log.csv` row (time and target left empty).
    pub record: DriveLogRecord,
    /// The SCT temperature history, when the drive keeps one.
    pub sct_history: Option<SctHistory>,
    /// What is missing and why (an older smartctl, no SCT history).
    pub note: Option<String>,
}

/// smartctl's (major, minor) version, from `smartctl.version`.
fn smartctl_version(json: &Value) -> Option<(u64, u64)> {
    let v = json["smartctl"]["version"].as_array()?;
    Some((v.first()?.as_u64()?, v.get(1)?.as_u64()?))
}

/// The thermal record in `json`, or None when it holds neither an NVMe health log nor an
/// SCT status. A key the answer leaves out is unknown, but for the rule on the thermal
/// management counters (module documentation).
pub fn thermal_log_of(json: &Value) -> Option<ThermalLog> {
    let log = &json["nvme_smart_health_information_log"];
    if log.is_object() {
        return Some(nvme(json, log));
    }
    let sts = &json["ata_sct_status"];
    if sts.is_object() {
        return Some(sct(json, sts));
    }
    None
}

fn nvme(json: &Value, log: &Value) -> ThermalLog {
    let version = smartctl_version(json);
    let new_json = version.is_some_and(|v| v >= TMT_JSON_SINCE);
    let has_tmt = log["thermal_mgmt_temperature_1_transition_count"].is_u64();
    // A newer smartctl leaves all four out when all are zero.
    let tmt = |key: &str| {
        log[key]
            .as_u64()
            .or_else(|| (new_json && !has_tmt).then_some(0))
    };
    let sensors = log["temperature_sensors"]
        .as_array()
        .map(|a| {
            a.iter()
                .enumerate()
                .filter_map(|(i, v)| v.as_i64().map(|c| format!("{}={c}", i + 1)))
                .collect::<Vec<_>>()
                .join(";")
        })
        .unwrap_or_default();
    let note = (!has_tmt && !new_json).then(|| {
        format!(
            "smartctl {} puts no thermal management (TMT1/TMT2) counters in its JSON (smartmontools after 7.5 does): warning/critical temperature time and sensors only",
            version.map_or("of unknown version".into(), |(a, b)| format!("{a}.{b}"))
        )
    });
    ThermalLog {
        kind: "nvme",
        record: DriveLogRecord {
            warning_temp_time_min: log["warning_temp_time"].as_u64(),
            critical_comp_time_min: log["critical_comp_time"].as_u64(),
            tmt1_transitions: tmt("thermal_mgmt_temperature_1_transition_count"),
            tmt2_transitions: tmt("thermal_mgmt_temperature_2_transition_count"),
            tmt1_time_s: tmt("thermal_mgmt_temperature_1_total_time"),
            tmt2_time_s: tmt("thermal_mgmt_temperature_2_total_time"),
            sensors,
            ..Default::default()
        },
        sct_history: None,
        note,
    }
}

fn sct(json: &Value, sts: &Value) -> ThermalLog {
    let t = &sts["temperature"];
    let h = &json["ata_sct_temperature_history"];
    let sct_history = h.is_object().then(|| {
        let oldest_first: Vec<Option<i64>> = h["table"]
            .as_array()
            .map(|a| a.iter().map(Value::as_i64).collect())
            .unwrap_or_default();
        SctHistory {
            logging_interval_min: h["logging_interval_minutes"].as_u64().unwrap_or(0),
            max_c: oldest_first.iter().flatten().copied().max(),
            oldest_first,
            op_limit_max_c: h["temperature"]["op_limit_max"].as_i64(),
            limit_max_c: h["temperature"]["limit_max"].as_i64(),
        }
    });
    let note = sct_history
        .is_none()
        .then(|| "no SCT temperature history in this answer".to_string());
    ThermalLog {
        kind: "sct",
        record: DriveLogRecord {
            sct_temperature_c: t["current"].as_f64(),
            sct_over_limit_count: t["over_limit_count"].as_u64(),
            sct_under_limit_count: t["under_limit_count"].as_u64(),
            ..Default::default()
        },
        sct_history,
        note,
    }
}

/// True when `json` is an NVMe answer of a smartctl whose JSON cannot hold the thermal
/// management counters (7.5 and older): they are then read from its text output
/// ([`tmt_from_text`]).
pub fn tmt_only_in_text(json: &Value) -> bool {
    json["nvme_smart_health_information_log"].is_object()
        && !json["nvme_smart_health_information_log"]["thermal_mgmt_temperature_1_transition_count"]
            .is_u64()
        && smartctl_version(json).is_some_and(|v| v < TMT_JSON_SINCE)
}

/// The thermal management counters in smartctl's text output (`smartctl -A`), as
/// (TMT1 transitions, TMT2 transitions, TMT1 s, TMT2 s). smartctl 7.0–7.5 print each line
/// only when its value is nonzero ("Thermal Temp. 1 Transition Count:   3"), so a missing
/// line is a zero — provided the health log was printed at all (else None).
pub fn tmt_from_text(text: &str) -> Option<[u64; 4]> {
    if !text.contains("SMART/Health Information (NVMe Log 0x02") {
        return None;
    }
    let mut v = [0u64; 4];
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let k = match key.trim() {
            "Thermal Temp. 1 Transition Count" => 0,
            "Thermal Temp. 2 Transition Count" => 1,
            "Thermal Temp. 1 Total Time" => 2,
            "Thermal Temp. 2 Total Time" => 3,
            _ => continue,
        };
        v[k] = value.trim().replace(',', "").parse().ok()?;
    }
    Some(v)
}

/// Puts counters read by [`tmt_from_text`] into a reading.
pub fn set_tmt(record: &mut DriveLogRecord, [c1, c2, t1, t2]: [u64; 4]) {
    record.tmt1_transitions = Some(c1);
    record.tmt2_transitions = Some(c2);
    record.tmt1_time_s = Some(t1);
    record.tmt2_time_s = Some(t2);
}

#[cfg(test)]
mod tests {
    use super::*;
    use hostd_records::drive_log::DriveLogDelta;
    use std::path::Path;

    fn fixture(name: &str) -> Value {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../fixtures/smartctl")
            .join(name);
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
    }

    #[test]
    fn a_missing_key_is_unknown_and_a_present_one_is_read_but_a_newer_smartctl_omits_zero_counters()
    {
        let answer = |version: &str, log: &str| {
            Answer::of(
                &serde_json::from_str(&format!(
                    r#"{{"smartctl":{{"version":{version}}},"nvme_smart_health_information_log":{log}}}"#
                ))
                .unwrap(),
            )
            .thermal
            .unwrap()
            .record
        };
        // Present: read as given, whatever the version.
        let r = answer(
            "[7,3]",
            r#"{"warning_temp_time":3,"thermal_mgmt_temperature_1_transition_count":4,
                "thermal_mgmt_temperature_1_total_time":212}"#,
        );
        assert_eq!(r.warning_temp_time_min, Some(3));
        assert_eq!((r.tmt1_transitions, r.tmt1_time_s), (Some(4), Some(212)));
        // Missing: unknown (the other two TMT keys, the critical time)…
        assert_eq!((r.tmt2_transitions, r.tmt2_time_s), (None, None));
        assert_eq!(r.critical_comp_time_min, None);
        // … and from a smartctl that never prints the counters in JSON, unknown too.
        let r = answer("[7,3]", r#"{"warning_temp_time":0}"#);
        assert_eq!((r.tmt1_transitions, r.tmt2_time_s), (None, None));
        // A newer smartctl leaves all four out when all are zero: there, missing is 0; any
        // other missing key is still unknown.
        let r = answer("[7,6]", r#"{"warning_temp_time":0}"#);
        assert_eq!((r.tmt1_transitions, r.tmt2_time_s), (Some(0), Some(0)));
        assert_eq!(r.critical_comp_time_min, None);
    }

    #[test]
    fn an_answer_gives_the_model_the_temperature_and_the_nvme_counters() {
        let json: Value = serde_json::from_str(
            r#"{"model_name":"Samsung Portable SSD X5","temperature":{"current":61},
                "nvme_smart_health_information_log":{"temperature":61,"warning_temp_time":3,
                "critical_comp_time":0,"thermal_mgmt_temperature_1_transition_count":4,
                "thermal_mgmt_temperature_2_transition_count":1,
                "thermal_mgmt_temperature_1_total_time":212,
                "thermal_mgmt_temperature_2_total_time":9}}"#,
        )
        .unwrap();
        let a = Answer::of(&json);
        assert_eq!(a.model.as_deref(), Some("Samsung Portable SSD X5"));
        assert_eq!(a.temperature, Some((61.0, "temperature.current")));
        assert!(!a.ata && !a.tmt_only_in_text);
        let t = a.thermal.unwrap();
        assert_eq!(t.kind, "nvme");
        assert_eq!(t.record.tmt1_transitions, Some(4));
        assert_eq!(t.record.tmt1_time_s, Some(212));
        assert_eq!(t.record.warning_temp_time_min, Some(3));
    }

    #[test]
    fn a_sata_drive_has_a_temperature_but_no_nvme_log() {
        let json: Value = serde_json::from_str(r#"{"temperature":{"current":38}}"#).unwrap();
        let a = Answer::of(&json);
        assert_eq!(
            (a.temperature, a.thermal),
            (Some((38.0, "temperature.current")), None)
        );
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
            assert_eq!(Answer::of(&fixture(file)).temperature, want, "{file}");
        }
        let unknown = Answer::of(&fixture("asm2362-direct.json"))
            .messages
            .unwrap();
        assert!(unknown.contains("Unknown USB bridge"), "{unknown}");
        assert!(Answer::of(&fixture("sata-sat.json")).ata);
        assert_eq!(
            Answer::of(&fixture("recorded/nvme-toshiba-kxg6.x.json")).smartctl_version,
            "7.3"
        );
    }

    #[test]
    fn recorded_nvme_drive_gives_warning_time_critical_time_and_its_one_sensor() {
        // Toshiba KXG6 (XG6) NVMe, smartctl 7.3 -x: no TMT keys (that smartctl never prints
        // them in JSON), which is said, not read as zero.
        let l = thermal_log_of(&fixture("recorded/nvme-toshiba-kxg6.x.json")).unwrap();
        assert_eq!(l.kind, "nvme");
        assert_eq!(l.record.warning_temp_time_min, Some(0));
        assert_eq!(l.record.critical_comp_time_min, Some(0));
        assert_eq!(l.record.sensors, "1=35");
        assert_eq!(l.record.tmt1_transitions, None);
        assert!(l
            .note
            .unwrap()
            .contains("smartctl 7.3 puts no thermal management"));
    }

    #[test]
    fn recorded_sata_drives_behind_usb_bridges_give_sct_status_and_history() {
        // Samsung HD204UI behind a USB Sunplus bridge, smartctl 7.2 -x.
        let l = thermal_log_of(&fixture("recorded/usbsunplus-samsung-hd204ui.x.json")).unwrap();
        assert_eq!(l.kind, "sct");
        assert_eq!(l.record.sct_temperature_c, Some(27.0));
        assert_eq!(
            (
                l.record.sct_over_limit_count,
                l.record.sct_under_limit_count
            ),
            (Some(0), Some(0))
        );
        let h = l.sct_history.unwrap();
        assert_eq!((h.logging_interval_min, h.oldest_first.len()), (5, 128));
        assert_eq!((h.op_limit_max_c, h.limit_max_c), (Some(80), Some(85)));
        assert!(
            h.max_c.is_some_and(|m| (27..=62).contains(&m)),
            "{:?}",
            h.max_c
        );
        assert!(l.note.is_none());
        // WD2500BEVS behind a USB JMicron (ATA) bridge, smartctl 7.3 -x.
        let l = thermal_log_of(&fixture("recorded/usbjmicron-wd2500bevs.x.json")).unwrap();
        assert_eq!(l.record.sct_temperature_c, Some(26.0));
        assert_eq!(l.record.sct_over_limit_count, Some(0));
        let h = l.sct_history.unwrap();
        assert_eq!((h.logging_interval_min, h.op_limit_max_c), (1, Some(60)));
    }

    #[test]
    fn before_and_after_a_throttle_the_counters_tell_what_the_drive_logged() {
        let before =
            thermal_log_of(&fixture("derived/nvme-toshiba-kxg6.before-throttle.json")).unwrap();
        let after =
            thermal_log_of(&fixture("derived/nvme-toshiba-kxg6.after-throttle.json")).unwrap();
        let mut a = before.record.clone();
        let mut b = after.record.clone();
        a.time_ns = 0;
        b.time_ns = 60_000_000_000;
        let d = DriveLogDelta::between(&a, &b);
        assert_eq!((d.tmt1_transitions, d.tmt1_time_s), (Some(3), Some(41)));
        assert_eq!(
            (d.tmt2_transitions, d.warning_temp_time_min),
            (Some(0), Some(1))
        );
        assert!(d.logged_heat());
        let sata_before =
            thermal_log_of(&fixture("recorded/usbsunplus-samsung-hd204ui.x.json")).unwrap();
        let sata_after = thermal_log_of(&fixture(
            "derived/usbsunplus-samsung-hd204ui.after-throttle.json",
        ))
        .unwrap();
        let d = DriveLogDelta::between(&sata_before.record, &sata_after.record);
        assert_eq!(d.sct_over_limit_count, Some(2));
        assert!(d.logged_heat());
        // The same answer twice: counters known, nothing logged.
        let d = DriveLogDelta::between(&before.record, &before.record);
        assert!(d.has_counters() && !d.logged_heat());
    }

    #[test]
    fn a_newer_smartctl_that_leaves_the_counters_out_means_zero() {
        let mut j = fixture("recorded/nvme-toshiba-kxg6.x.json");
        j["smartctl"]["version"] = serde_json::json!([7, 6]);
        let l = thermal_log_of(&j).unwrap();
        assert_eq!(l.record.tmt1_transitions, Some(0));
        assert_eq!(l.record.tmt2_time_s, Some(0));
        assert!(l.note.is_none());
    }

    fn text(name: &str) -> String {
        std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../../fixtures/smartctl")
                .join(name),
        )
        .unwrap()
    }

    #[test]
    fn an_older_smartctl_gives_the_thermal_management_counters_in_its_text_only() {
        assert!(tmt_only_in_text(&fixture(
            "recorded/nvme-toshiba-kxg6.x.json"
        )));
        assert!(!tmt_only_in_text(&fixture(
            "derived/nvme-toshiba-kxg6.after-throttle.json"
        )));
        assert!(!tmt_only_in_text(&fixture(
            "recorded/usbsunplus-samsung-hd204ui.x.json"
        )));
        // Lines printed only when nonzero: TMT2 absent is 0.
        assert_eq!(
            tmt_from_text(&text("text/nvme-smartctl73-after-throttle.txt")),
            Some([12, 0, 141, 0])
        );
        assert_eq!(
            tmt_from_text(&text("text/nvme-smartctl73-before-throttle.txt")),
            Some([9, 0, 100, 0])
        );
        // No health log printed (smartctl failed): nothing, not zeros.
        assert_eq!(
            tmt_from_text("Read NVMe SMART/Health Information failed"),
            None
        );
    }

    #[test]
    fn answers_without_a_thermal_record_give_none() {
        // A bridge smartctl does not know (no health log, no SCT) and a VM disk.
        assert!(thermal_log_of(&fixture("asm2362-direct.json")).is_none());
        assert!(thermal_log_of(&fixture("vm-virtio-direct.json")).is_none());
    }
}
