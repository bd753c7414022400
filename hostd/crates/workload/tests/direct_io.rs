//! Real files with direct I/O on the machine's disk: write, read back, verify,
//! corruption found exactly, both engines, concurrent targets, clean-up.

mod common;

use common::*;
use hostd_records::DirectIo;
use hostd_records::RunEvent;
use hostd_records::RunStatus;
use hostd_workload::engine::EngineChoice;
use hostd_workload::ProfileExt;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

#[test]
fn write_then_read_verifies_every_file_with_direct_io_and_removes_the_test_files() {
    let dir = disk_tempdir();
    let profile = small_profile(5, "1MB", "6MB", 4);
    let rec = Recorder::default();
    let (plan, out) = run(
        &profile,
        &[dir.path().to_str().unwrap()],
        &options(11, EngineChoice::Auto),
        false,
        Arc::new(AtomicBool::new(false)),
        &rec.observer(),
    )
    .unwrap();
    assert_eq!(out.status, RunStatus::Completed);
    assert_eq!(out.targets[0].direct_io, DirectIo::Direct);
    assert!(["io_uring", "iocp", "threads"].contains(&out.targets[0].engine.as_str()));
    let writes: Vec<_> = out.files.iter().filter(|f| f.phase == "write").collect();
    let reads: Vec<_> = out.files.iter().filter(|f| f.phase == "read").collect();
    assert_eq!((writes.len(), reads.len()), (5, 5));
    for (w, size) in writes.iter().zip(&plan.targets[0].file_sizes) {
        assert_eq!(w.bytes, *size);
        assert!(w.direct_io && w.end_ns > w.start_ns && w.mbps > 0.0);
    }
    for r in &reads {
        assert_eq!(r.verified, Some(true), "{r:?}");
        assert_eq!(r.corrupt_blocks, 0);
    }
    // Nothing left behind, and the target directory itself is untouched.
    assert!(entries(dir.path()).is_empty(), "{:?}", entries(dir.path()));
    let events = rec.0.lock().unwrap();
    assert!(matches!(events.first(), Some(RunEvent::RunStart { .. })));
    assert!(matches!(events.last(), Some(RunEvent::RunEnd { .. })));
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, RunEvent::FileStart { .. }))
            .count(),
        10
    );
    let levels: Vec<f64> = events
        .iter()
        .filter_map(|e| {
            if let RunEvent::Activity { level, .. } = e {
                Some(*level)
            } else {
                None
            }
        })
        .collect();
    assert_eq!(levels, vec![1.0, 0.0]);
}

#[test]
fn both_engines_run_the_same_job_and_are_recorded() {
    for (choice, name) in [
        (engine("threads"), "threads"),
        (engine("io_uring"), "io_uring"),
    ] {
        if choice == engine("io_uring") && hostd_workload::engine::probe_io_uring().is_err() {
            eprintln!("io_uring unavailable here; threads engine only");
            continue;
        }
        let dir = disk_tempdir();
        let profile = small_profile(3, "2MB", "3MB", 8);
        let (_, out) = run_to_end(
            &profile,
            &[dir.path().to_str().unwrap()],
            &options(3, choice),
        )
        .unwrap();
        assert_eq!(out.status, RunStatus::Completed);
        assert_eq!(out.targets[0].engine, name);
        assert!(out
            .files
            .iter()
            .filter(|f| f.phase == "read")
            .all(|f| f.verified == Some(true)));
    }
}

#[test]
fn one_byte_flipped_outside_hostd_is_reported_as_exactly_that_block() {
    let dir = disk_tempdir();
    let profile = small_profile(4, "2MB", "3MB", 4);
    let test_dir: Arc<Mutex<Option<String>>> = Arc::default();
    let td = test_dir.clone();
    const FLIP_AT: u64 = 1_234_567; // in file 2, block 301
    let hook = move |e: &RunEvent| match e {
        RunEvent::RunStart { targets, .. } => *td.lock().unwrap() = targets[0].test_dir.clone(),
        // After the last write, before any read: corrupt file 2 with plain std::fs.
        RunEvent::PhaseEnd { phase, .. } if phase == "write" => {
            use std::io::{Read, Seek, SeekFrom, Write};
            let path = format!("{}/f00002.dat", td.lock().unwrap().as_ref().unwrap());
            let mut f = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(path)
                .unwrap();
            let mut b = [0u8; 1];
            f.seek(SeekFrom::Start(FLIP_AT)).unwrap();
            f.read_exact(&mut b).unwrap();
            b[0] ^= 0x01;
            f.seek(SeekFrom::Start(FLIP_AT)).unwrap();
            f.write_all(&b).unwrap();
            f.sync_all().unwrap();
        }
        _ => {}
    };
    let (_, out) = run(
        &profile,
        &[dir.path().to_str().unwrap()],
        &options(21, EngineChoice::Auto),
        true,
        Arc::new(AtomicBool::new(false)),
        &hook,
    )
    .unwrap();
    let reads: Vec<_> = out.files.iter().filter(|f| f.phase == "read").collect();
    for r in &reads {
        if r.index == 2 {
            assert_eq!(r.verified, Some(false));
            assert_eq!((r.corrupt_blocks, r.corrupt_bytes), (1, 1));
            assert_eq!(r.corrupt[0].offset, FLIP_AT / 4096 * 4096);
            assert_eq!(r.corrupt[0].first_bad_byte, FLIP_AT);
        } else {
            assert_eq!(r.verified, Some(true), "file {}", r.index);
        }
    }
    // --keep: the files are still there (and ours to remove).
    let kept = test_dir.lock().unwrap().clone().unwrap();
    assert_eq!(entries(std::path::Path::new(&kept)).len(), 4);
    std::fs::remove_dir_all(kept).unwrap();
}

#[test]
fn two_targets_run_concurrently_and_overlap() {
    let a = disk_tempdir();
    let b = disk_tempdir();
    let profile = small_profile(6, "4MB", "8MB", 4);
    let rec = Recorder::default();
    let ta = format!("{}:write", a.path().display());
    let tb = format!("{}:read", b.path().display());
    let (plan, out) = run(
        &profile,
        &[&ta, &tb],
        &options(5, EngineChoice::Auto),
        false,
        Arc::new(AtomicBool::new(false)),
        &rec.observer(),
    )
    .unwrap();
    assert_eq!(out.status, RunStatus::Completed);
    assert_eq!(
        plan.targets[1].prepare.len(),
        6,
        "read target writes its files first, unmeasured"
    );
    let measured = |t: usize| {
        out.files
            .iter()
            .filter(|f| f.target_index == t && f.phase != "prepare")
            .collect::<Vec<_>>()
    };
    let (ma, mb) = (measured(0), measured(1));
    assert!(ma.iter().all(|f| f.phase == "write") && mb.iter().all(|f| f.phase == "read"));
    // The measured parts overlap in time: both started before either ended.
    let start = ma[0].start_ns.max(mb[0].start_ns);
    let end = ma.last().unwrap().end_ns.min(mb.last().unwrap().end_ns);
    assert!(start < end, "no overlap");
    // Both targets were reported active together at some point.
    let events = rec.0.lock().unwrap();
    assert!(events
        .iter()
        .any(|e| matches!(e, RunEvent::ActiveTargets { active, .. } if active == &vec![0, 1])));
    assert!(entries(a.path()).is_empty() && entries(b.path()).is_empty());
}

/// Runs the profile `toml` (seed `seed`) in a fresh directory on a real disk; asserts that
/// it completed.
fn completed_in_a_disk_dir(toml: &str, seed: u64) -> hostd_records::RunOutcome {
    let dir = disk_tempdir();
    let profile = hostd_records::profile::Profile::parse(toml, "test").unwrap();
    let (_, out) = run_to_end(
        &profile,
        &[dir.path().to_str().unwrap()],
        &options(seed, EngineChoice::Auto),
    )
    .unwrap();
    assert_eq!(out.status, RunStatus::Completed);
    out
}

#[test]
fn diskmark_runs_every_test_and_verifies_random_reads() {
    let out = completed_in_a_disk_dir(
        "name = \"dm\"\nkind = \"diskmark\"\n[diskmark]\nfile_size = \"16MiB\"\nrepetitions = 2\ntests = [\n { name = \"SEQ1M-QD8\", pattern = \"sequential\", block_size = \"1MiB\", queue_depth = 8 },\n { name = \"RND4K-QD64\", pattern = \"random\", block_size = \"4KiB\", queue_depth = 64, bytes = \"2MiB\" },\n]\n[io]\nblock_size = \"1MiB\"\nqueue_depth = 8\nphases = [\"read\", \"write\"]\n",
        8,
    );
    let phases: Vec<(String, u32)> = out
        .files
        .iter()
        .map(|f| (f.phase.clone(), f.index))
        .collect();
    let expect: Vec<(String, u32)> = ["prepare"]
        .iter()
        .map(|p| (p.to_string(), 0))
        .chain(
            [
                "SEQ1M-QD8-read",
                "SEQ1M-QD8-write",
                "RND4K-QD64-read",
                "RND4K-QD64-write",
            ]
            .iter()
            .flat_map(|p| [(p.to_string(), 0), (p.to_string(), 1)]),
        )
        .collect();
    assert_eq!(phases, expect);
    for f in &out.files {
        if f.phase.ends_with("-read") {
            assert_eq!(f.verified, Some(true), "{f:?}");
        }
        let want = if f.phase.starts_with("RND4K") {
            2 << 20
        } else {
            16 << 20
        };
        assert_eq!(f.bytes, want, "{}", f.phase);
    }
}

#[test]
fn video_writes_frames_on_the_frame_clock() {
    let out = completed_in_a_disk_dir(
        "name = \"v\"\nkind = \"video\"\n[video]\nframe_size = \"256KiB\"\nfps = 50.0\nseconds = 0.5\nclips = 2\n[io]\nblock_size = \"1MiB\"\nqueue_depth = 1\nphases = [\"write\"]\n",
        9,
    );
    assert_eq!(out.files.len(), 2);
    for f in &out.files {
        assert_eq!(f.bytes, 25 * (256 << 10));
        // 25 frames at 50 fps: the last starts at 0.48 s, so a clip takes at least that.
        assert!(
            f.seconds() >= 0.47,
            "{} s: frames were not paced",
            f.seconds()
        );
    }
}

/// After a job the file is closed for real: io_uring's registered file table
/// must not keep a reference once the job is over (a held file keeps space
/// allocated after deletion and a filesystem busy). A write lease is granted
/// only when nobody else — the ring included — has the file open. Kernels
/// 5.10–6.3 drop a replaced table entry up to a second later, hence the wait.
/// Linux only: io_uring and `F_SETLEASE` are Linux's.
#[cfg(target_os = "linux")]
#[test]
#[cfg(target_os = "linux")] // io_uring and file leases are Linux's
fn io_uring_releases_the_registered_file_after_each_job() {
    use hostd_workload::block::{BlockCodec, DataPool};
    use hostd_workload::direct::{self, OpenMode};
    use hostd_workload::step::{IoJob, Rw};
    use std::os::unix::io::AsRawFd;

    if hostd_workload::engine::probe_io_uring().is_err() {
        eprintln!("io_uring unavailable here; nothing to release");
        return;
    }
    let dir = disk_tempdir();
    let (mut engine, _) = hostd_workload::engine::open(engine("io_uring"), 4).unwrap();
    let codec = BlockCodec::new(DataPool::new(1), 0, 0);
    let mut buffers = hostd_workload::buffer::BufferPool::new();
    for (i, rw) in [Rw::Write, Rw::Read].into_iter().enumerate() {
        let path = dir.path().join("f.dat");
        let mode = if i == 0 {
            OpenMode::CreateNew
        } else {
            OpenMode::Read
        };
        let (file, status) = direct::open(&path, mode, false).unwrap();
        assert!(status.is_direct());
        let job = IoJob {
            rw,
            file_size: 1 << 20,
            bytes: 1 << 20,
            block_size: 256 << 10,
            queue_depth: 4,
            verify: true,
            pace_ns: None,
            seed: 1,
        };
        let out = run_job_on(
            engine.as_mut(),
            file.as_raw_fd(),
            &job,
            &codec,
            &mut buffers,
        )
        .unwrap();
        assert_eq!(out.bytes, 1 << 20);
        if rw == Rw::Read {
            assert_eq!(out.verify.unwrap().corrupt_blocks, 0);
        }
        drop(file);
        let probe = std::fs::File::open(&path).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
        loop {
            // SAFETY: plain fcntl calls on a descriptor we own.
            let rc = unsafe { libc::fcntl(probe.as_raw_fd(), libc::F_SETLEASE, libc::F_WRLCK) };
            let err = std::io::Error::last_os_error();
            if rc == 0 {
                unsafe { libc::fcntl(probe.as_raw_fd(), libc::F_SETLEASE, libc::F_UNLCK) };
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "3 s after the {rw:?} job the file is still open elsewhere: {err}"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}
