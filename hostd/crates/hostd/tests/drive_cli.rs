//! The drive's part through `hostd run` on a real disk: the link of the target's drive
//! in the manifest, and the drive's temperature polled through the run — with a smartctl
//! that replays recorded answers (`THROTTLESCOPE_SMARTCTL`), since this machine's disk
//! answers none.
#![cfg(unix)] // the recorded smartctl is a shell script

mod common;

use common::{disk_tempdir, hostd_run, read_json, replay_smartctl as replay};
use std::path::Path;

fn run(work: &Path, smartctl: &Path) -> (serde_json::Value, serde_json::Value, String) {
    let target = work.join("target");
    std::fs::create_dir_all(&target).unwrap();
    let out = work.join("run");
    // Enough files for a few seconds of polling.
    let profile = work.join("p.toml");
    std::fs::write(&profile, "name = \"p\"\ndescription = \"test\"\nkind = \"files\"\n[files]\ncount = 40\nmin_size = \"8MB\"\nmax_size = \"64MB\"\n[io]\nblock_size = \"1MiB\"\nqueue_depth = 4\nphases = [\"write\", \"read\"]\n").unwrap();
    let o = hostd_run(&profile, [&target], &out)
        .env("THROTTLESCOPE_SMARTCTL", smartctl)
        .output()
        .unwrap();
    let text = common::text(&o);
    assert!(o.status.success(), "{text}");
    (
        read_json(&out.join("manifest.json")),
        read_json(&out.join("summary.json")),
        text,
    )
}

#[test]
fn a_drive_that_answers_gets_a_temperature_series_beside_the_run() {
    let work = disk_tempdir();
    let smartctl = replay(work.path(), "nvme-direct.json");
    let (manifest, summary, _) = run(work.path(), &smartctl);
    let link = &manifest["targets"][0]["link"];
    assert!(
        link["bus"].as_str().is_some_and(|b| !b.is_empty()),
        "{link}"
    );
    let t = &summary["extra"]["drive"]["temperature"][0];
    assert_eq!(t["answered"], true, "{t}");
    assert_eq!(t["field"], "temperature.current");
    let csv = std::fs::read_to_string(work.path().join("run/drive_temp.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(csv.lines().next(), Some("time_ns,target,temperature_c"));
    assert!(!rows.is_empty() && rows.len() as u64 == t["samples"].as_u64().unwrap());
    assert!(rows.iter().all(|r| r.ends_with(",61")), "{csv}");
    // Inside the run: between the manifest's start and the last file's end (+ one poll).
    let start = manifest["start_ns"].as_i64().unwrap();
    let first: i64 = rows[0].split(',').next().unwrap().parse().unwrap();
    assert!(first >= start, "{first} < {start}");
    // The drive's thermal record beside it: one row a poll and one after the run, the
    // counters of the answer, and a summary line saying it logged nothing new.
    let log = &summary["extra"]["drive"]["thermal_log"][0];
    assert_eq!(log["kind"], "nvme", "{log}");
    let csv = std::fs::read_to_string(work.path().join("run/drive_log.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len() as u64, log["readings"].as_u64().unwrap());
    assert!(
        rows.len() as u64 > t["samples"].as_u64().unwrap() - 1,
        "{csv}"
    );
    assert_eq!(log["after"]["tmt1_transitions"], 4, "{log}");
    assert_eq!(log["after"]["sensors"], "1=61;2=70", "{log}");
    assert_eq!(log["delta"]["tmt1_transitions"], 0, "{log}");
    let line = summary["extra"]["drive"]["text"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l.as_str())
        .find(|l| l.contains("drive thermal record"))
        .unwrap()
        .to_string();
    assert!(
        line.contains("(NVMe health log,")
            && line.contains("logged no throttling (0 TMT1 transition(s)"),
        "{line}"
    );
}

#[test]
fn a_sata_drive_behind_a_usb_bridge_gives_its_sct_record_and_one_without_is_said_once() {
    let work = disk_tempdir();
    let smartctl = replay(work.path(), "recorded/usbsunplus-samsung-hd204ui.x.json");
    let (_, summary, text) = run(work.path(), &smartctl);
    let log = &summary["extra"]["drive"]["thermal_log"][0];
    assert_eq!(log["kind"], "sct", "{log}");
    assert_eq!(log["after"]["sct_temperature_c"], 27.0, "{log}");
    assert_eq!(log["sct_history_after"]["logging_interval_min"], 5, "{log}");
    assert_eq!(log["delta"]["sct_over_limit_count"], 0, "{log}");
    assert!(text.contains("drive thermal record (SCT status,"), "{text}");
    assert!(text.contains("SCT history max"), "{text}");
    // A SATA drive that answers its temperature but keeps no SCT record.
    let work = disk_tempdir();
    let smartctl = replay(work.path(), "sata-sat.json");
    let (summary, text) = {
        let (_, s, t) = run(work.path(), &smartctl);
        (s, t)
    };
    assert!(!work.path().join("run/drive_log.csv").exists());
    let warnings: Vec<&str> = summary["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .filter(|w| w.contains("gives no thermal record"))
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(text.matches("gives no thermal record").count(), 1, "{text}");
}

#[test]
fn a_drive_behind_an_unknown_bridge_is_said_once_and_the_run_goes_on() {
    let work = disk_tempdir();
    let smartctl = replay(work.path(), "asm2362-direct.json");
    let (_, summary, text) = run(work.path(), &smartctl);
    assert!(!work.path().join("run/drive_temp.csv").exists());
    let warnings: Vec<&str> = summary["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .filter(|w| w.contains("no drive temperature"))
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("Unknown USB bridge"),
        "{}",
        warnings[0]
    );
    assert_eq!(
        text.matches("Unknown USB bridge").count(),
        2,
        "once logged, once summarised:\n{text}"
    );
}
