//! Per-I/O latency on real files with direct I/O: every I/O timed once, on
//! both engines, per file and per interval; the timings are consistent with
//! the job's own clock.

mod common;

use common::*;
use hostd_records::RunStatus;
use hostd_records::{LatencyScope, RunEvent};
#[cfg(target_os = "linux")]
use hostd_testkit::blkio::{self, Cgroup, Controller, Count, Dir, Held, Limit};
use hostd_workload::block::{BlockCodec, DataPool};
use hostd_workload::buffer::BufferPool;
use hostd_workload::direct::{self, OpenMode};
use hostd_workload::engine::{self, EngineChoice};
use hostd_workload::jobloop::JobOutcome;
use hostd_workload::step::{IoJob, Rw};
use hostd_workload::ProfileExt;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

fn engines() -> Vec<EngineChoice> {
    let mut v = vec![common::engine("threads")];
    if engine::probe_io_uring().is_ok() {
        v.push(common::engine("io_uring"));
    } else {
        eprintln!("io_uring unavailable here; threads engine only");
    }
    v
}

/// A diskmark run with sequential and 4 KiB random tests at QD8 and QD1.
fn diskmark_profile() -> hostd_records::profile::Profile {
    hostd_records::profile::Profile::parse(
        "name = \"dm\"\nkind = \"diskmark\"\n[diskmark]\nfile_size = \"8MiB\"\nrepetitions = 2\ntests = [\n { name = \"SEQ1M-QD8\", pattern = \"sequential\", block_size = \"1MiB\", queue_depth = 8 },\n { name = \"RND4K-QD1\", pattern = \"random\", block_size = \"4KiB\", queue_depth = 1, bytes = \"1MiB\" },\n]\n[io]\nblock_size = \"1MiB\"\nqueue_depth = 8\nphases = [\"write\", \"read\"]\n",
        "test",
    )
    .unwrap()
}

/// I/Os counted per file (phase, index) and in all intervals together.
fn latency_counts(events: &[RunEvent]) -> (BTreeMap<(String, u32), u64>, u64) {
    let mut files = BTreeMap::new();
    let mut intervals = 0;
    for e in events {
        if let RunEvent::Latency(l) = e {
            match &l.scope {
                LatencyScope::File { phase, index } => {
                    files.insert((phase.clone(), *index), l.histogram.count());
                }
                LatencyScope::Interval { .. } => intervals += l.histogram.count(),
            }
        }
    }
    (files, intervals)
}

#[test]
fn both_engines_time_every_io_once_per_file_and_per_interval() {
    let mut per_engine = Vec::new();
    for choice in engines() {
        let dir = disk_tempdir();
        let rec = Recorder::default();
        let (_, out) = run(
            &diskmark_profile(),
            &[dir.path().to_str().unwrap()],
            &options(21, choice),
            false,
            Arc::new(AtomicBool::new(false)),
            &rec.observer(),
        )
        .unwrap();
        assert_eq!(out.status, RunStatus::Completed);
        let events = rec.0.lock().unwrap();
        let (files, in_intervals) = latency_counts(&events);
        // One histogram per file, counting exactly the file's I/Os.
        assert_eq!(files.len(), out.files.len());
        for f in &out.files {
            assert_eq!(
                files[&(f.phase.clone(), f.index)],
                f.ios(),
                "{choice:?} {f:?}"
            );
        }
        // The intervals together hold every I/O once.
        assert_eq!(in_intervals, files.values().sum::<u64>(), "{choice:?}");
        // Each file's latency event follows its FileEnd.
        for (i, e) in events.iter().enumerate() {
            if let RunEvent::Latency(l) = e {
                if let LatencyScope::File { phase, index } = &l.scope {
                    assert!(
                        matches!(&events[i - 1], RunEvent::FileEnd(f) if &f.phase == phase && f.index == *index)
                    );
                }
            }
        }
        per_engine.push(files);
    }
    // The same I/O pattern gives the same counts on every engine.
    assert!(per_engine.windows(2).all(|w| w[0] == w[1]));
}

/// `job` run on `path` (a file, or a block device) opened in `mode` with direct I/O, on a
/// fresh engine; what it wrote is synced.
fn job_on(path: &Path, choice: EngineChoice, mode: OpenMode, job: &IoJob) -> JobOutcome {
    let codec = BlockCodec::new(DataPool::new(5), 0, 0);
    let mut buffers = BufferPool::new();
    let (mut eng, _) = engine::open(choice, job.queue_depth.max(8)).unwrap();
    let (file, status) = direct::open(path, mode, false).unwrap();
    assert!(status.is_direct());
    let out = run_job_on(
        eng.as_mut(),
        hostd_workload::engine::raw_file(&file),
        job,
        &codec,
        &mut buffers,
    )
    .unwrap();
    if mode != OpenMode::Read {
        direct::sync(&file).unwrap();
    }
    out
}

/// `bytes` of 4 KiB I/Os of `rw` at `qd` within the first 4 MiB of an existing file or device.
fn small_ios(
    path: &Path,
    choice: EngineChoice,
    rw: Rw,
    qd: usize,
    verify: bool,
    bytes: u64,
) -> JobOutcome {
    let mode = if rw.is_write() {
        OpenMode::Write
    } else {
        OpenMode::Read
    };
    let job = IoJob {
        rw,
        file_size: 4 << 20,
        bytes,
        block_size: 4096,
        queue_depth: qd,
        verify,
        pace_ns: None,
        seed: 1,
    };
    job_on(path, choice, mode, &job)
}

/// A 4 MiB file written, then a 1 MiB job of 4 KiB I/Os at `qd` on it.
fn job_on_a_real_file(choice: EngineChoice, rw: Rw, qd: usize, verify: bool) -> JobOutcome {
    let dir = disk_tempdir();
    let path = dir.path().join("f.dat");
    let fill = IoJob {
        rw: Rw::Write,
        file_size: 4 << 20,
        bytes: 4 << 20,
        block_size: 1 << 20,
        queue_depth: 8,
        verify: false,
        pace_ns: None,
        seed: 1,
    };
    job_on(&path, choice, OpenMode::CreateNew, &fill);
    small_ios(&path, choice, rw, qd, verify, 1 << 20)
}

#[test]
fn at_qd1_the_latencies_fit_inside_the_job_time() {
    // One I/O at a time: the I/Os' latencies cannot overlap, so together
    // they take no longer than the job, and most of it.
    for choice in engines() {
        for rw in [Rw::RandRead, Rw::RandWrite] {
            let out = job_on_a_real_file(choice, rw, 1, false);
            let l = &out.latency;
            assert_eq!(l.count(), 256, "{choice:?} {rw:?}");
            let s = l.stats();
            let sum_s = s.mean_ns * s.count as f64 / 1e9;
            assert!(
                sum_s <= out.io_seconds * 1.001,
                "{choice:?} {rw:?}: latencies add to {sum_s} s in a {} s job",
                out.io_seconds
            );
            // No lower bound here: a latency is fio's `clat`, from the submission's
            // return to the completion, and a kernel that does the write inside
            // io_uring_enter leaves it a few µs (one CI machine: 1.4 ms of a 31 ms job).
            // The test below holds each I/O in the block layer to bound it from below.
            assert!(s.min_ns > 0 && s.min_ns <= s.p50_ns && s.p50_ns <= s.max_ns);
        }
    }
}

/// On a device the kernel's blkio controller holds to 100 IOPS, each I/O waits in the block
/// layer after its submission has returned: at QD1 the completion latencies are then nearly
/// all of the job, on both engines, and there are as many as the kernel counted I/Os.
#[cfg(target_os = "linux")]
#[test]
fn at_qd1_on_a_throttled_device_the_latencies_are_most_of_the_job() {
    const T: &str = "at_qd1_on_a_throttled_device_the_latencies_are_most_of_the_job";
    // 10 ms an I/O: a late resubmission (a busy machine) costs a small share of it.
    const IOPS: u32 = 100;
    const IOS: u64 = 64;
    if !can_mount() {
        skipped(T, "needs root and loop devices");
        return;
    }
    let dir = disk_tempdir();
    let img = dir.path().join("dev.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(8 << 20)
        .unwrap();
    let Some(lo) = LoopDevice::attach(&img, &[]) else {
        skipped(T, "no free loop device");
        return;
    };
    let dev = Path::new(&lo.0);
    // Declared in this order, the process leaves the cgroup before it is removed.
    let (cg, held) = match hold_at_iops(dev, IOPS) {
        Ok(l) => l,
        Err(why) => {
            skipped(T, &why);
            return;
        }
    };
    let numbers = blkio::dev_numbers(dev).unwrap();
    let ios = |rw: Rw| {
        let dir = if rw.is_write() { Dir::Write } else { Dir::Read };
        cg.counted(numbers, dir, Count::Ios)
    };
    for choice in engines() {
        for rw in [Rw::RandRead, Rw::RandWrite] {
            let before = ios(rw);
            let out = small_ios(dev, choice, rw, 1, false, IOS * 4096);
            let kernel = ios(rw) - before;
            let l = &out.latency;
            assert_eq!(l.count(), IOS, "{choice:?} {rw:?}");
            // A write job ends with an fsync, whose cache flush the kernel counts as a
            // write where the device has a write cache.
            let flush = u64::from(rw.is_write());
            assert!(
                (IOS..=IOS + flush).contains(&kernel),
                "{choice:?} {rw:?}: {kernel} I/Os by the kernel's count"
            );
            // The limit applied: past the controller's first slice (up to a tenth of a
            // second's worth passes at once), the I/Os are paced at 1/IOPS.
            let paced = (IOS - u64::from(IOPS) / 10) as f64 / f64::from(IOPS);
            assert!(
                out.io_seconds >= 0.8 * paced,
                "{choice:?} {rw:?}: {} s for {IOS} I/Os at {IOPS} IOPS",
                out.io_seconds
            );
            let s = l.stats();
            let sum_s = s.mean_ns * s.count as f64 / 1e9;
            assert!(
                sum_s <= out.io_seconds * 1.001 && sum_s >= 0.6 * out.io_seconds,
                "{choice:?} {rw:?}: latencies add to {sum_s} s of a {} s job",
                out.io_seconds
            );
        }
    }
    drop(held);
}

/// A blkio cgroup that holds this whole test process, with the block device `dev` limited
/// to `iops` reads and writes per second: each I/O then waits in the kernel's block layer,
/// after its submission returned, for a time the test knows, and the kernel counts the
/// I/Os. Other tests of the binary move with the process; the limit touches only `dev`.
/// Err says why it is not possible here (root and a blkio controller are needed).
#[cfg(target_os = "linux")]
fn hold_at_iops(dev: &Path, iops: u32) -> Result<(Cgroup, Held), String> {
    let numbers = blkio::dev_numbers(dev)?;
    let cg = Cgroup::create(&Controller::find()?, "throttlescope-latency")?;
    for dir in [Dir::Read, Dir::Write] {
        cg.try_limit(numbers, dir, Limit::Iops(iops))?;
    }
    let held = cg.hold_this_process()?;
    Ok((cg, held))
}

#[test]
fn verified_4k_reads_are_timed_and_checked_on_both_engines() {
    for choice in engines() {
        let out = job_on_a_real_file(choice, Rw::RandRead, 4, true);
        let v = out.verify.unwrap();
        assert_eq!(v.blocks, 256);
        assert_eq!(v.corrupt_blocks, 0);
        assert_eq!(out.latency.count(), 256);
    }
}

/// Without `collect_records` (what `hostd run` does) the outcome keeps no file record, no
/// interval and no counter sample, and the observer still hears every one of them, with its
/// latency: a long run's memory does not grow with its files or its length.
#[test]
fn a_run_not_collecting_records_hands_each_only_to_the_observer() {
    let dir = disk_tempdir();
    let rec = Recorder::default();
    let (plan, out) = run_collecting(
        &small_profile(6, "1MiB", "2MiB", 4),
        &[dir.path().to_str().unwrap()],
        &options(22, common::engine("threads")),
        false,
        Arc::new(AtomicBool::new(false)),
        false,
        &rec.observer(),
    )
    .unwrap();
    assert_eq!(out.status, RunStatus::Completed);
    assert!(out.files.is_empty(), "{:?}", out.files);
    assert!(out.intervals.is_empty(), "{:?}", out.intervals);
    let events = rec.0.lock().unwrap();
    let ends = events
        .iter()
        .filter(|e| matches!(e, RunEvent::FileEnd(_)))
        .count();
    assert_eq!(ends, plan.targets[0].measured.len());
    assert!(events.iter().any(|e| matches!(e, RunEvent::Interval(_))));
    let (files, _) = latency_counts(&events);
    assert_eq!(files.len(), ends);
    // The 100 ms counters: none kept, each heard, in time order, never going down, up to
    // every byte the target moved.
    assert!(out.samples.is_empty(), "{:?}", out.samples);
    let counters: Vec<(u64, u64)> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Counters { time_ns, bytes } => Some((*time_ns, bytes[0])),
            _ => None,
        })
        .collect();
    assert!(counters.len() >= 2, "{counters:?}");
    assert!(counters
        .windows(2)
        .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1));
    assert_eq!(counters[0].1, 0);
    let moved: u64 = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::FileEnd(f) => Some(f.bytes),
            _ => None,
        })
        .sum();
    assert!(
        counters.last().unwrap().1 >= moved,
        "{counters:?} < {moved}"
    );
}
