//! A known starting state on a real block device (loop device over a sparse file, ext4,
//! `common::realdev`): `hostd run --trim` gives the free space back to the device (the
//! loop file's allocated blocks drop: the loop driver punches a hole for each discard),
//! `--rest idle:W:T` waits until the device's sysfs counters stay unchanged for W s and
//! gives up after T s on a device kept busy; `--raw-device --destroy-data --trim`
//! discards a whole unmounted device (BLKDISCARD); each is recorded in the manifest, the
//! summary, the printed summary and the report.
//!
//! Needs root and loop devices; `THROTTLESCOPE_REQUIRE_REAL_DEVICE=1` turns a skip into a
//! failure. About 15 s.
#![cfg(target_os = "linux")] // loop devices and mount: Linux only

mod common;

use common::realdev::{files_profile, Rig};
use common::{assert_ok, hostd_run, read_json, text};
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One real-device test at a time (the idle test watches the device's counters).
static SERIAL: Mutex<()> = Mutex::new(());

/// Bytes the file system holding `image` has allocated to it.
fn allocated(image: &Path) -> u64 {
    std::fs::metadata(image).unwrap().blocks() * 512
}

/// A one-file profile in the rig's scratch directory (1 MB written, not verified).
fn tiny_profile(rig: &Rig) -> std::path::PathBuf {
    let p = rig.dir().join("tiny.toml");
    std::fs::write(&p, files_profile(1, "1MB", "1MB")).unwrap();
    p
}

#[test]
fn trim_gives_the_free_space_back_to_the_device_and_is_recorded() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(rig) = Rig::new("trim", 1, 512 << 20) else {
        return;
    };
    // 200 MB written and deleted: still allocated in the loop file until a discard.
    let junk = rig.target(0).join("junk");
    let mut f = std::fs::File::create(&junk).unwrap();
    let block = vec![0x5au8; 1 << 20];
    for _ in 0..200 {
        f.write_all(&block).unwrap();
    }
    f.sync_all().unwrap();
    drop(f);
    std::fs::remove_file(&junk).unwrap();
    nix_sync();
    let before = allocated(rig.devs[0].image());
    assert!(
        before > 200 << 20,
        "{before} bytes allocated before the trim"
    );

    let run = rig.dir().join("run");
    let out = hostd_run(tiny_profile(&rig), [rig.target(0)], &run)
        .arg("--trim")
        .output()
        .unwrap();
    assert_ok(&out);
    let after = allocated(rig.devs[0].image());
    // The run's own 1 MB file and the journal stay; the 200 MB went.
    assert!(
        after + (190 << 20) < before,
        "allocated {before} bytes before, {after} after the trim"
    );
    let trim = &read_json(&run.join("manifest.json"))["conditions"]["preparation"][0]["trim"];
    assert_eq!(trim["status"], "done", "{trim}");
    assert_eq!(trim["method"], "FITRIM", "{trim}");
    assert!(
        trim["bytes_trimmed"].as_u64().unwrap() >= 200 << 20,
        "{trim}"
    );
    let summary = read_json(&run.join("summary.json"));
    assert_eq!(summary["conditions"]["preparation"][0]["trim"], *trim);
    assert!(text(&out).contains("trimmed with FITRIM"), "{}", text(&out));
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(
        html.contains("trimmed with FITRIM"),
        "no trim in the report"
    );
}

#[test]
fn an_idle_rest_waits_for_quiet_counters_and_times_out_on_a_busy_device() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(rig) = Rig::new("rest", 1, 256 << 20) else {
        return;
    };
    // Busy: a synced 64 kB write every 50 ms, until the run is over.
    let busy = AtomicBool::new(true);
    let rest = std::thread::scope(|s| {
        let path = rig.target(0).join("busy");
        s.spawn(|| {
            let mut f = std::fs::File::create(path).unwrap();
            while busy.load(Ordering::Relaxed) {
                f.write_all(&[1u8; 65_536]).unwrap();
                f.sync_data().unwrap();
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let run = rig.dir().join("busy-run");
        let out = hostd_run(tiny_profile(&rig), [rig.target(0)], &run)
            .args(["--rest", "idle:1:3"])
            .output()
            .unwrap();
        busy.store(false, Ordering::Relaxed);
        assert_ok(&out);
        assert!(text(&out).contains("NOT idle for 1 s"), "{}", text(&out));
        read_json(&run.join("manifest.json"))["conditions"]["preparation"][0]["rest"].clone()
    });
    assert_eq!(rest["until"], "idle", "{rest}");
    assert_eq!(rest["idle"], false, "{rest}");
    let waited = rest["waited_s"].as_f64().unwrap();
    assert!((3.0..4.0).contains(&waited), "{rest}");

    // Quiet: the same device with nothing writing.
    nix_sync();
    let run = rig.dir().join("quiet-run");
    let started = Instant::now();
    let out = hostd_run(tiny_profile(&rig), [rig.target(0)], &run)
        .args(["--rest", "idle:1:20"])
        .output()
        .unwrap();
    assert_ok(&out);
    let rest = &read_json(&run.join("manifest.json"))["conditions"]["preparation"][0]["rest"];
    assert_eq!(rest["idle"], true, "{rest}");
    let waited = rest["waited_s"].as_f64().unwrap();
    assert!((1.0..10.0).contains(&waited), "{rest}");
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn trim_discards_a_whole_raw_device_only_with_destroy_data() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let Some(rig) = Rig::new("trim-raw", 1, 128 << 20) else {
        return;
    };
    assert!(std::process::Command::new("umount")
        .arg(rig.target(0))
        .status()
        .unwrap()
        .success());
    let dev = rig.devs[0].dev.clone();
    // 100 MiB written over the whole device: allocated in the loop file.
    let mut f = std::fs::OpenOptions::new().write(true).open(&dev).unwrap();
    for _ in 0..100 {
        f.write_all(&[0xa5u8; 1 << 20]).unwrap();
    }
    f.sync_all().unwrap();
    drop(f);
    let before = allocated(rig.devs[0].image());
    assert!(before >= 100 << 20, "{before}");
    let profile = rig.dir().join("fill.toml");
    std::fs::write(
        &profile,
        "name = \"fill-10\"\nkind = \"fill\"\n[fill]\nfraction = 0.1\nfile_size = \"4MiB\"\n[io]\nblock_size = \"1MiB\"\nqueue_depth = 4\nphases = [\"write\"]\n",
    )
    .unwrap();
    let run = rig.dir().join("raw-run");
    // Without --destroy-data: refused, nothing discarded.
    let out = hostd_run(&profile, [&dev], &run)
        .args(["--raw-device", "--trim"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(allocated(rig.devs[0].image()), before);
    let out = hostd_run(&profile, [&dev], &run)
        .args(["--raw-device", "--destroy-data", "--trim"])
        .output()
        .unwrap();
    assert_ok(&out);
    let after = allocated(rig.devs[0].image());
    // The discard freed the 100 MiB; the run then wrote its 10 % (12.8 MiB).
    assert!(
        after < 40 << 20,
        "allocated {before} bytes before, {after} after"
    );
    let trim = &read_json(&run.join("manifest.json"))["conditions"]["preparation"][0]["trim"];
    assert_eq!(trim["method"], "BLKDISCARD", "{trim}");
    assert_eq!(trim["bytes_trimmed"], 128u64 << 20, "{trim}");
}

/// Flushes every file system (`sync`), so that the counters and the loop file settle.
fn nix_sync() {
    // SAFETY: sync(2) takes no arguments and cannot fail.
    unsafe { libc::sync() };
}
