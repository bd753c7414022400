//! The drive's readings have one reader and many consumers: a run with a drive temperature
//! gate, a steady-state temperature criterion read from the drive, the readings around each
//! phase and the live view (on a real pty) asks smartctl only at its one poller's cadence —
//! every call is a detection or one row of `drive_temp.csv` — while the gate, the phase
//! readings and the live view show the readings they took from the feed (the thermometer's
//! own are checked in `cmd/run/thermo.rs`: a 5 s soak of small cycles never judges a 3 s
//! window). smartctl is a script that logs its arguments and
//! replays a recorded answer (`THROTTLESCOPE_SMARTCTL`), since this machine's disk answers
//! none.
#![cfg(target_os = "linux")] // a pty from openpty, a shell script as smartctl

mod common;

use common::{disk_tempdir, read_json};
use std::io::Read as _;
use std::os::fd::{FromRawFd as _, OwnedFd};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// The recorded NVMe answer's temperature (fixtures/smartctl/nvme-direct.json), °C.
const DRIVE_C: f64 = 61.0;

/// A smartctl that logs each call's arguments, one line a call, to `smartctl.calls` beside
/// it, and answers the recorded NVMe drive.
fn logging_smartctl(dir: &Path) -> PathBuf {
    let answer =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/smartctl/nvme-direct.json");
    let script = dir.join("smartctl");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$*\" >> \"$0.calls\"\ncat '{}'\n",
            answer.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// A pseudo-terminal 200 columns wide: (master, slave).
fn pty() -> (OwnedFd, OwnedFd) {
    let (mut master, mut slave) = (-1, -1);
    let size = libc::winsize {
        ws_row: 40,
        ws_col: 200,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) }
}

#[test]
fn the_gate_the_thermometer_the_phase_readings_and_the_live_view_share_one_poller() {
    let work = disk_tempdir();
    let target = work.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let out = work.path().join("run");
    let smartctl = logging_smartctl(work.path());
    // A 5 s soak whose steady state reads the drive's temperature, each cycle's write phase
    // held until the drive is within 1 °C of its idle temperature.
    let profile = work.path().join("p.toml");
    std::fs::write(
        &profile,
        "name = \"feed\"\ndescription = \"test\"\nkind = \"files\"\n[files]\nduration = \"5s\"\ncount = 8\nmin_size = \"4MB\"\nmax_size = \"16MB\"\n[io]\nblock_size = \"1MiB\"\nqueue_depth = 4\nphases = [\"write\"]\n[steady_state]\ncriteria = [\"temp_slope:10\"]\nwindow = \"3s\"\n[temperature_gate]\nsource = \"drive\"\nmargin_c = 1\ntimeout_s = 60\nat = \"phase\"\n",
    )
    .unwrap();
    let (master, slave) = pty();
    // Not quiet: the live view draws on the terminal.
    let mut cmd = common::hostd();
    cmd.args(["run", "--seed", "1", "--profile"])
        .arg(&profile)
        .arg("--target")
        .arg(&target)
        .arg("--out")
        .arg(&out)
        .env("THROTTLESCOPE_SMARTCTL", &smartctl)
        .stdin(Stdio::null())
        .stdout(Stdio::from(slave))
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    drop(cmd); // the slave's last copy here: the master reads EOF once hostd exits
    let reader = std::thread::spawn(move || {
        let mut screen = Vec::new();
        let mut master = std::fs::File::from(master);
        // EIO once the slave side is closed: the end of what hostd drew.
        let _ = master.read_to_end(&mut screen);
        String::from_utf8_lossy(&screen).into_owned()
    });
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    let screen = reader.join().unwrap();
    assert!(status.success(), "{status:?}\n{stderr}\n{screen}");

    let summary = read_json(&out.join("summary.json"));
    let temps = common::csv_rows(&out.join("drive_temp.csv"));
    let rows: Vec<(i64, f64)> = temps[1..]
        .iter()
        .map(|r| (r[0].parse().unwrap(), r[2].parse().unwrap()))
        .collect();
    let source = &summary["extra"]["drive"]["temperature"][0];
    assert_eq!(source["answered"], true, "{source}");
    assert_eq!(source["samples"].as_u64().unwrap() as usize, rows.len());
    assert!(rows.iter().all(|r| r.1 == DRIVE_C), "{rows:?}");

    // Every smartctl call: a detection (`-i`: the gate's check, the thermometer's check,
    // the poller's own) or one poll, which is one row of drive_temp.csv or a failed poll.
    let calls = std::fs::read_to_string(smartctl.with_extension("calls")).unwrap();
    let (detections, polls): (Vec<&str>, Vec<&str>) =
        calls.lines().partition(|c| c.split(' ').any(|a| a == "-i"));
    assert_eq!(detections.len(), 3, "{calls}");
    assert!(polls.iter().all(|c| c.starts_with("--json -A ")), "{calls}");
    let failed = source["failed_polls"].as_u64().unwrap() as usize;
    assert_eq!(polls.len(), rows.len() + failed, "{calls}");

    // The consumers read that poller's readings. The gate: the idle temperature it measured
    // and the one that let the phase go.
    let waits = summary["extra"]["temperature_gate"]["waits"]
        .as_array()
        .unwrap();
    assert!(!waits.is_empty());
    for w in waits {
        assert_eq!(w["end_c"].as_f64(), Some(DRIVE_C), "{w}");
    }
    assert_eq!(waits[0]["outcome"], "idle_measured", "{waits:?}");
    // The readings around the phases: readings the poller took (each one a row of the file).
    let smart = summary["extra"]["drive"]["smart"].as_array().unwrap();
    assert!(smart.len() >= 2, "{smart:?}");
    for r in smart {
        let t = r["time_ns"].as_i64().unwrap();
        assert!(
            rows.iter().any(|row| row.0 == t),
            "{r} is no poll of {rows:?}"
        );
        assert_eq!(r["temperature_c"].as_f64(), Some(DRIVE_C), "{r}");
        assert_eq!(r["nvme"]["thermal_temp1_transition_count"], 4, "{r}");
    }
    // The live view: the drive's latest temperature on its status line.
    let line = format!("drive: {} {DRIVE_C:.0} °C", target.display());
    assert!(screen.contains(&line), "no {line:?} in:\n{screen}");
}
