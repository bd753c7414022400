//! Real files with direct I/O on the machine's disk: write, read back, verify,
//! corruption found exactly, both engines, concurrent targets, clean-up.

mod common;

use common::*;
use hostd_workload::direct::DirectIo;
use hostd_workload::engine::EngineChoice;
use hostd_workload::events::RunEvent;
use hostd_workload::runner::RunStatus;
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
        &rec,
    )
    .unwrap();
    assert_eq!(out.status, RunStatus::Completed);
    assert_eq!(out.targets[0].direct_io, DirectIo::Direct);
    assert!(["io_uring", "threads"].contains(&out.targets[0].engine.as_str()));
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
        (EngineChoice::Threads, "threads"),
        (EngineChoice::IoUring, "io_uring"),
    ] {
        if choice == EngineChoice::IoUring && hostd_workload::engine::probe_io_uring().is_err() {
            eprintln!("io_uring unavailable here; threads engine only");
            continue;
        }
        let dir = disk_tempdir();
        let profile = small_profile(3, "2MB", "3MB", 8);
        let (_, out) = run(
            &profile,
            &[dir.path().to_str().unwrap()],
            &options(3, choice),
            false,
            Arc::new(AtomicBool::new(false)),
            &Recorder::default(),
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
    let hook = Hook(move |e: &RunEvent| match e {
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
    });
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
        &rec,
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
