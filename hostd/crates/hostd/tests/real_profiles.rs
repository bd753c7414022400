//! Cache recovery and the paced sweep on real block devices (loop devices over files in
//! memory, so that this machine's disk and its stalls do not pace them; ext4, direct I/O)
//! whose write rate the kernel's blkio controller sets (`common::realdev`):
//!
//! - cache recovery: a watcher emulates an SLC cache on the cgroup's own byte counter —
//!   C bytes at a fast limit, then a slow one; once the device has been idle (no byte
//!   for 0.3 s), the used part refills as 1 − e^(−t/τ) from the last byte written, and the
//!   fast limit returns. The cache level when writing resumes is the kernel's truth.
//! - paced sweep: the limit drops after the unpaced step (a byte mark); the sweep must
//!   hold the steps below the new limit and miss the first one above it.
//! - diskmark mixed: the read share and the per-direction bytes against the kernel's
//!   read/write byte counters of hostd's cgroup.
//! - a `duration = "3s"` files run: stops within a cycle of 3 s, everything verified,
//!   nothing left on the device.
//!
//! Needs root, loop devices and the blkio/io controller; `THROTTLESCOPE_REQUIRE_REAL_DEVICE=1`
//! turns a skip into a failure. About 30 s, 12 s, 1 s and 4 s.
#![cfg(target_os = "linux")] // loop devices, cgroups and mount: Linux only

mod common;

use common::realdev::{hostd_in, Cgroup, Count, Dir, Limit, Rig, Step};
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One real-device test at a time: each measures rates the kernel sets, and two of them
/// sharing the disk and 2 cores skewed a paced step's first chunk (14 of 22 MB/s, when
/// their devices were on this machine's disk).
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// The `programs` result of `kind` in a run directory's summary.json.
fn result(run: &Path, kind: &str) -> Value {
    let summary: Value =
        serde_json::from_slice(&std::fs::read(run.join("summary.json")).unwrap()).unwrap();
    summary["programs"]
        .as_array()
        .expect("programs[]")
        .iter()
        .find(|r| r["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} in {}", summary["programs"]))["result"]
        .clone()
}

/// Far below what the loop device in memory sustains, so the fast stage is the limit;
/// 3× the slow one.
const FAST: u64 = 24_000_000;
const SLOW: u64 = 8_000_000;
const CACHE: f64 = 24e6;
const TAU_S: f64 = 2.0;
/// No byte for this long: the device is idle. The loop device's queue merges a chunk's
/// writes into bios of up to 4 MiB, which the slow limit releases every 0.5 s; a
/// writing device is never quiet this long.
const IDLE_AFTER: Duration = Duration::from_millis(1000);

/// The emulated cache's level each time writing resumed after an idle: (idle s, bytes).
/// The first entry is the first write (a full cache).
struct CacheTruth {
    resumed_at: Vec<(f64, f64)>,
}

/// Polls the counter every 5 ms and plays the cache until `stop`.
fn emulate_cache(cg: &Cgroup, dev: (u64, u64), stop: &AtomicBool) -> CacheTruth {
    let mut level = CACHE;
    let mut fast = true;
    let mut prev = cg.counted(dev, Dir::Write, Count::Bytes);
    let mut last_write = Instant::now();
    let mut idle = true;
    let mut truth = CacheTruth {
        resumed_at: Vec::new(),
    };
    let mut last_poll = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(5));
        let now = Instant::now();
        let w = cg.counted(dev, Dir::Write, Count::Bytes);
        let delta = w.saturating_sub(prev) as f64;
        prev = w;
        if delta > 0.0 {
            if idle {
                truth
                    .resumed_at
                    .push(((now - last_write).as_secs_f64(), level));
                idle = false;
            }
            level = (level - delta).max(0.0);
            last_write = now;
            if fast && level <= 0.0 {
                cg.limit(dev, Dir::Write, Limit::Bps(SLOW));
                fast = false;
            }
        } else if now - last_write >= IDLE_AFTER {
            // Refill from the last byte written: at the first idle poll for the whole
            // time since, then for each poll's interval.
            let dt = if idle {
                (now - last_poll).as_secs_f64()
            } else {
                (now - last_write).as_secs_f64()
            };
            idle = true;
            level = CACHE - (CACHE - level) * (-dt / TAU_S).exp();
            if !fast && level > 0.0 {
                cg.limit(dev, Dir::Write, Limit::Bps(FAST));
                fast = true;
            }
        }
        last_poll = now;
    }
    truth
}

/// Runs `hostd run` on the rig's device 0 inside its cgroup (the way `Rig::run` does)
/// while `watch` runs; returns the run directory and hostd's output.
fn run_in_cgroup(rig: &Rig, profile: &str, watch: impl FnOnce(&AtomicBool) + Send) -> String {
    let cg = rig.cgroup.as_ref().unwrap();
    let profile_path = rig.dir().join("profile.toml");
    std::fs::write(&profile_path, profile).unwrap();
    let run = rig.dir().join("run");
    let stop = AtomicBool::new(false);
    let output = Mutex::new(String::new());
    std::thread::scope(|s| {
        s.spawn(|| watch(&stop));
        let out = hostd_in(cg, Some(-10))
            .args(["run", "-q", "--seed", "3", "--profile"])
            .arg(&profile_path)
            .arg("--out")
            .arg(&run)
            .arg("--target")
            .arg(rig.target(0))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .expect("hostd runs");
        stop.store(true, Ordering::Relaxed);
        let text = common::text(&out);
        assert!(out.status.success(), "hostd run failed:\n{text}");
        *output.lock().unwrap() = text;
    });
    output.into_inner().unwrap()
}

#[test]
fn cache_recovery_on_a_real_device_measures_the_kernel_cache_refill() {
    let _serial = serial();
    let Some(rig) = Rig::in_memory("cache_recovery_real", 1 << 30) else {
        return;
    };
    let cg = rig.cgroup.as_ref().unwrap();
    let dev = rig.devs[0].numbers;
    cg.limit(dev, Dir::Write, Limit::Bps(FAST));
    // Slow = below half the fast rate: a 4 MiB chunk at 24 MB/s spans about two of
    // blk-throttle's 100 ms slices, so single chunks read 30 % fast or slow.
    let profile = "name = \"cr-real\"\ndescription = \"cache recovery on blkio\"\nkind = \"cache-recovery\"\n[cache_recovery]\nchunk = \"4MiB\"\nlimit = \"96MiB\"\npauses = [\"1500ms\", \"2500ms\", \"4s\", \"6s\"]\ndrop_fraction = 0.5\n[io]\nblock_size = \"1MiB\"\nqueue_depth = 4\nphases = [\"write\"]\nverify = false\n";
    let truth = Mutex::new(None);
    let output = run_in_cgroup(&rig, profile, |stop| {
        *truth.lock().unwrap() = Some(emulate_cache(cg, dev, stop));
    });
    eprintln!("{output}");
    let truth = truth.into_inner().unwrap().unwrap();
    let r = result(&rig.dir().join("run"), "cache-recovery");
    let bursts = r["bursts"].as_array().unwrap();
    assert_eq!(bursts.len(), 5, "{r}");
    // The first write, then the resumes after the pauses.
    let levels: Vec<f64> = truth
        .resumed_at
        .iter()
        .enumerate()
        .filter(|(i, (idle, _))| *i == 0 || *idle >= 1.4)
        .map(|(_, (_, level))| *level)
        .collect();
    assert_eq!(
        levels.len(),
        5,
        "resumes the kernel saw: {:?}",
        truth.resumed_at
    );
    assert_eq!(levels[0], CACHE);
    let chunk = r["chunk_bytes"].as_f64().unwrap();
    for (b, &level) in bursts.iter().zip(&levels) {
        let est = b["fast_bytes"].as_f64().unwrap();
        eprintln!(
            "realdev cache_recovery: idle {:?} s: {:.1} MB at the fast rate [{:.1}, {:.1}], kernel cache {:.1} MB",
            b["idle_s"],
            est / 1e6,
            b["fast_bytes_low"].as_f64().unwrap() / 1e6,
            b["fast_bytes_high"].as_f64().unwrap() / 1e6,
            level / 1e6
        );
        assert_eq!(b["dropped"], true, "{b}");
        // blk-throttle releases 100 ms lumps: a chunk's time, and so the split of the
        // chunk the cache ran out in, is that coarse; one chunk either way.
        assert!((est - level).abs() <= chunk, "{b} vs kernel {level}");
    }
    // The fit either carries (and then brackets τ within its lumpy data) or says why not.
    match r["fit"].as_object() {
        Some(fit) => {
            let (lo, hi) = (
                fit["tau_low_s"].as_f64().unwrap(),
                fit["tau_high_s"].as_f64().unwrap(),
            );
            eprintln!("realdev cache_recovery: τ in [{lo:.2}, {hi:.2}] s, truth {TAU_S} s");
            assert!(lo <= TAU_S * 1.5 && TAU_S / 1.5 <= hi, "{r}");
        }
        None => assert!(r["fit_error"].is_string(), "{r}"),
    }
}

/// The paced sweep's device: 40 MB/s for the unpaced step, then 22 MB/s from a byte
/// mark the unpaced step (2 s, ~80 MB) does not reach but the 50 % step crosses.
const UNPACED: u64 = 40_000_000;
const CEILING: u64 = 22_000_000;

#[test]
fn paced_sweep_on_a_throttled_real_device_finds_the_ceiling() {
    let _serial = serial();
    let Some(rig) = Rig::in_memory("paced_sweep_real", 1 << 30) else {
        return;
    };
    let profile = "name = \"ps-real\"\ndescription = \"paced sweep on blkio\"\nkind = \"paced-sweep\"\n[paced_sweep]\nchunk = \"8MiB\"\nstep_time = \"2s\"\npercents = [25, 50, 75, 100]\n[io]\nblock_size = \"1MiB\"\nqueue_depth = 4\nphases = [\"write\"]\nverify = false\n";
    let target = rig.target(0).to_string_lossy().into_owned();
    let o = rig.run(
        profile,
        3,
        &[target],
        &[UNPACED],
        &[Step {
            dev: 0,
            at_bytes: 120_000_000,
            bps: CEILING,
        }],
    );
    let r = result(&o.run, "paced-sweep");
    eprintln!("{}", o.output);
    let unthrottled = r["unthrottled_bps"].as_f64().unwrap();
    assert!(
        (unthrottled / UNPACED as f64 - 1.0).abs() < 0.15,
        "unpaced {unthrottled} vs the kernel's {UNPACED}"
    );
    let steps = r["steps"].as_array().unwrap();
    let held = r["highest_held_bps"].as_f64().expect("a step held");
    let miss = steps
        .iter()
        .find(|s| s["held"] == false)
        .expect("a step above the ceiling is not held");
    let missed = miss["target_bps"].as_f64().unwrap();
    eprintln!(
        "realdev paced_sweep: held {:.1} MB/s, missed {:.1} MB/s (achieved {:.1}), kernel ceiling {:.1} MB/s",
        held / 1e6,
        missed / 1e6,
        miss["achieved_bps"].as_f64().unwrap() / 1e6,
        CEILING as f64 / 1e6
    );
    assert_eq!(r["highest_held_percent"], 50.0, "{r}");
    assert!(held <= CEILING as f64 && (CEILING as f64) < missed, "{r}");
    // What the missed step achieved is the ceiling.
    let achieved = miss["achieved_bps"].as_f64().unwrap();
    assert!((achieved / CEILING as f64 - 1.0).abs() < 0.1, "{miss}");
}

/// A small mixed diskmark on a real device: both directions measured, the read share
/// near the asked one, and the kernel's per-direction byte counters of hostd's cgroup
/// agree with what hostd says it read and wrote.
#[test]
fn diskmark_mixed_on_a_real_device_agrees_with_the_kernel_counters() {
    let _serial = serial();
    let Some(rig) = Rig::in_memory("diskmark_mixed_real", 256 << 20) else {
        return;
    };
    let cg = rig.cgroup.as_ref().unwrap();
    let dev = rig.devs[0].numbers;
    let profile = "name = \"mix-real\"\ndescription = \"mixed on a loop device\"\nkind = \"diskmark\"\n[diskmark]\nfile_size = \"32MiB\"\nrepetitions = 2\ntests = [\n{ name = \"RND4K-QD32-70R\", pattern = \"random\", block_size = \"4KiB\", queue_depth = 32, bytes = \"8MiB\", read_percent = 70 },\n{ name = \"SEQ1M-QD8-50R\", pattern = \"sequential\", block_size = \"1MiB\", queue_depth = 8, read_percent = 50 },\n]\n[io]\nblock_size = \"1MiB\"\nqueue_depth = 8\nphases = [\"read\", \"write\"]\nverify = true\n";
    let (r0, w0) = (
        cg.counted(dev, Dir::Read, Count::Bytes),
        cg.counted(dev, Dir::Write, Count::Bytes),
    );
    let output = run_in_cgroup(&rig, profile, |_| {});
    let (kr, kw) = (
        cg.counted(dev, Dir::Read, Count::Bytes) - r0,
        cg.counted(dev, Dir::Write, Count::Bytes) - w0,
    );
    let run = rig.dir().join("run");
    let r = result(&run, "mixed");
    let tests = r["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 2, "{r}\n{output}");
    let (mut hr, mut hw) = (0u64, 0u64);
    for (t, share, ios) in [(&tests[0], 0.70f64, 2048.0f64), (&tests[1], 0.50, 32.0)] {
        let sigma = (share * (1.0 - share) / (2.0 * ios)).sqrt();
        let got = t["read_share"].as_f64().unwrap();
        assert!((got - share).abs() < 4.0 * sigma, "{t}");
        assert!(t["read_bps"].as_f64().unwrap() > 0.0 && t["write_bps"].as_f64().unwrap() > 0.0);
        for job in t["jobs"].as_array().unwrap() {
            hr += job["read_bytes"].as_u64().unwrap();
            hw += job["write_bytes"].as_u64().unwrap();
        }
    }
    // Everything else hostd moved in the run (the test file's `prepare` fill) is in
    // files.csv; the mixed jobs' own rows (`…-mix`) are counted above.
    let rows = common::csv_rows(&run.join("files.csv"));
    let col = |name: &str| rows[0].iter().position(|h| h == name).unwrap();
    let (phase, bytes) = (col("phase"), col("bytes"));
    let (mut fr, mut fw) = (0u64, 0u64);
    for row in &rows[1..] {
        if row[phase].ends_with("-mix") {
            continue;
        }
        let b: u64 = row[bytes].parse().unwrap();
        if row[phase].starts_with("read") {
            fr += b;
        } else {
            fw += b;
        }
    }
    eprintln!(
        "realdev diskmark_mixed: read share {:.3}/{:.3}; kernel read {kr} B, write {kw} B; hostd mixed read {hr} B, write {hw} B, other read {fr} B, write {fw} B",
        tests[0]["read_share"].as_f64().unwrap(),
        tests[1]["read_share"].as_f64().unwrap()
    );
    // Direct I/O: every byte hostd moved is a bio of its cgroup. The kernel's extra is
    // ext4's own metadata I/O charged to the writer; allow 1 MiB of it.
    let slack = 1 << 20;
    assert!(
        kr >= hr + fr && kr <= hr + fr + slack,
        "kernel read {kr}, hostd {}",
        hr + fr
    );
    assert!(
        kw >= hw + fw && kw <= hw + fw + slack,
        "kernel write {kw}, hostd {}",
        hw + fw
    );
}

/// A `duration = "3s"` files run on a real device stops within a bound of its
/// duration, reads back and verifies every file it wrote, and leaves nothing behind.
#[test]
fn a_duration_run_on_a_real_device_stops_in_time_verifies_and_cleans_up() {
    let _serial = serial();
    let Some(rig) = Rig::in_memory("duration_real", 256 << 20) else {
        return;
    };
    let profile = "name = \"soak-real\"\ndescription = \"short soak on a loop device\"\nkind = \"files\"\n[files]\nduration = \"3s\"\ntotal = \"24MB\"\nmin_size = \"4MB\"\nmax_size = \"8MB\"\n[io]\nblock_size = \"1MiB\"\nqueue_depth = 4\nphases = [\"write\", \"read\"]\nverify = true\n";
    let t0 = Instant::now();
    let output = run_in_cgroup(&rig, profile, |_| {});
    let took = t0.elapsed().as_secs_f64();
    let run = rig.dir().join("run");
    let r = result(&run, "duration");
    let elapsed = r["elapsed_s"].as_f64().unwrap();
    let cycles = r["full_cycles"].as_u64().unwrap();
    eprintln!(
        "realdev duration: {cycles} full cycles, elapsed {elapsed:.2} s (hostd wall {took:.2} s), {} B written, {} B read",
        r["bytes_written"], r["bytes_read"]
    );
    assert!(cycles >= 1, "{r}\n{output}");
    // It runs at least the duration, and stops within one cycle (24 MB, well under 2 s
    // on this device) of it.
    assert!((3.0..5.0).contains(&elapsed), "{r}");
    assert_eq!(r["corrupt_bytes"], 0, "{r}");
    assert_eq!(r["bytes_read"], r["bytes_written"], "{r}");
    let rows = common::csv_rows(&run.join("files.csv"));
    let col = |name: &str| rows[0].iter().position(|h| h == name).unwrap();
    let (phase, index) = (col("phase"), col("index"));
    let idx = |p: &str| -> Vec<String> {
        let mut v: Vec<String> = rows[1..]
            .iter()
            .filter(|row| row[phase] == p)
            .map(|row| row[index].clone())
            .collect();
        v.sort();
        v
    };
    let (w, rd) = (idx("write"), idx("read"));
    assert!(!w.is_empty());
    assert_eq!(w, rd, "every file written was read back");
    let left: Vec<_> = std::fs::read_dir(rig.target(0))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n != "lost+found")
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
