//! The drive component through `hostd run` on a real disk: the link of the target's drive
//! in the manifest, and the drive's temperature polled through the run — with a smartctl
//! that replays recorded answers (`THROTTLESCOPE_SMARTCTL`), since this machine's disk
//! answers none.
#![cfg(unix)] // the recorded smartctl is a shell script

mod common;

use common::{disk_tempdir, hostd_run, read_json};
use std::path::{Path, PathBuf};

/// A smartctl that prints the recorded answer `fixture` for any device and type.
fn replay(dir: &Path, fixture: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let answer = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../fixtures/smartctl")
        .join(fixture);
    let script = dir.join("smartctl");
    std::fs::write(&script, format!("#!/bin/sh\ncat '{}'\n", answer.display())).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

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
