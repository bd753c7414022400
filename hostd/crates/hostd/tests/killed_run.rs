//! A `hostd run` killed with SIGKILL on a real device (a loop device, ext4, direct I/O):
//! `hostd analyze` reads what it left (its 100 ms counters included, streamed as they
//! came), and `hostd clean` removes its test files and nothing else, however often it is
//! run. Needs root and loop devices (`common::realdev`;
//! skipped with the reason elsewhere).
#![cfg(target_os = "linux")] // loop devices and mount: Linux only

mod common;

use common::realdev::{files_profile, Rig};
use common::{assert_ok, hostd, text};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Rows of `files.csv` (0 while it is missing).
fn rows(run: &Path) -> usize {
    std::fs::read_to_string(run.join("files.csv"))
        .map(|s| s.lines().count().saturating_sub(1))
        .unwrap_or(0)
}

/// The test files (`f*.dat`) of the test directories in `target`.
fn test_dirs(target: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(target)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("throttlescope-")
        })
        .collect()
}

#[test]
fn a_killed_run_analyses_and_hostd_clean_removes_only_its_test_files() {
    let Some(rig) = Rig::new("killed_run", 1, 700 << 20) else {
        return;
    };
    let target = rig.target(0).to_path_buf();
    let run = rig.dir().join("run");
    let profile = rig.dir().join("profile.toml");
    // More files than the device holds time to write before the kill.
    std::fs::write(&profile, files_profile(400, "1MB", "1MB")).unwrap();
    let outside = target.join("user-notes.txt");
    std::fs::write(&outside, "the user's, beside the run's test directory").unwrap();

    // Held to 40 MB/s by the kernel, so that the 100 ms counters have rows before the kill
    // however fast the machine's disk (unlimited, 20 files took under 0.1 s in CI).
    let mut child = rig
        .hostd_limited(40 << 20)
        .args(["run", "-q", "--profile"])
        .arg(&profile)
        .arg("--target")
        .arg(&target)
        .arg("--out")
        .arg(&run)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let counted = |run: &Path| {
        hostd_records::counters::read(run)
            .ok()
            .and_then(|c| c.values().next().and_then(|v| v.last().map(|r| r.bytes)))
            .unwrap_or(0)
    };
    while rows(&run) < 20 || counted(&run) < 10 << 20 {
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "no 20 files and 10 MB counted in 120 s"
        );
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    // A run still going is not cleaned.
    let busy = hostd().arg("clean").arg(&run).output().unwrap();
    assert!(!busy.status.success(), "{}", text(&busy));
    assert!(text(&busy).contains("still going"), "{}", text(&busy));

    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let done = rows(&run);
    assert!((20..400).contains(&done), "{done} files before the kill");

    // The 100 ms counters were in their file as they came: whole lines, in time order, never
    // going down, counting the bytes of the files finished well before the kill.
    let csv = std::fs::read_to_string(run.join("counters.csv")).unwrap();
    assert!(csv.ends_with('\n'), "{csv}");
    let counters = hostd_records::counters::read(&run).unwrap();
    let label = target.to_string_lossy();
    let mine = &counters[label.as_ref()];
    assert!(mine.len() >= 2, "{counters:?}");
    assert!(mine.windows(2).all(|w| w[0].time_ns < w[1].time_ns));
    assert!(
        mine.last().unwrap().bytes >= 10 << 20,
        "{:?} after {done} files of 1 MB",
        mine.last()
    );

    // The run directory analyses, every finished file included.
    let analyze = hostd().arg("analyze").arg(&run).output().unwrap();
    assert_ok(&analyze);
    assert!(run.join("report.html").exists());
    let events = common::read_json(&run.join("events.json"));
    let files: u64 = events["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["files"].as_u64().unwrap())
        .sum();
    assert_eq!(files as usize, done, "{events}");

    // The killed run left its test directory full of test files.
    let dirs = test_dirs(&target);
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let test_dir = dirs[0].clone();
    let left = std::fs::read_dir(&test_dir).unwrap().count();
    assert!(left >= done, "{left} test files for {done} finished files");
    let beside = test_dir.join("keep-me.txt");
    std::fs::write(&beside, "the user's, beside the test files").unwrap();

    // First clean: the test files go, the user's file and so the directory stay (exit 1).
    let clean = hostd().arg("clean").arg(&run).output().unwrap();
    assert_eq!(clean.status.code(), Some(1), "{}", text(&clean));
    let said = text(&clean);
    assert!(
        said.contains(&format!("removed {left} test file(s)")),
        "{said}"
    );
    assert!(said.contains("keep-me.txt"), "{said}");
    let now: Vec<String> = std::fs::read_dir(&test_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(now, vec!["keep-me.txt".to_string()]);

    // Once the user's file is moved away the directory goes too; then nothing is left to do.
    std::fs::rename(&beside, target.join("keep-me.txt")).unwrap();
    let clean = hostd().arg("clean").arg(&run).output().unwrap();
    assert_ok(&clean);
    assert!(
        text(&clean).contains("removed 0 test file(s) and"),
        "{}",
        text(&clean)
    );
    assert!(!test_dir.exists());
    let again = hostd().arg("clean").arg(&run).output().unwrap();
    assert_ok(&again);
    assert!(text(&again).contains("already gone"), "{}", text(&again));

    // Nothing else on the target was touched.
    assert_eq!(
        std::fs::read_to_string(&outside).unwrap(),
        "the user's, beside the run's test directory"
    );
    assert!(target.join("keep-me.txt").exists());
}
