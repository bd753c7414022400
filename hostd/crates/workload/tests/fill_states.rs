//! The `fill-states` plan run by the real engine on a real directory: every level's fill
//! is written with the seeded pattern and read back verified, a fill byte changed on the
//! disk between its write and its read-back is found, and nothing stays after the run.
//! The capacity is given (64 MiB), not read, so the levels are small on any disk.

mod common;

use common::{options, Recorder};
use hostd_records::profile::Profile;
use hostd_records::{FileRecord, RunEvent};
use hostd_workload::backend::{BackendRegistry, TargetBackend};
use hostd_workload::engine::EngineChoice;
use hostd_workload::runner::{self, RunConfig};
use hostd_workload::step::Capacity;
use hostd_workload::{Plan, ProfileExt, TargetSpec};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const PROFILE: &str = "name = \"fs\"\nkind = \"fill-states\"\n[fill_states]\nlevels = [0, 50]\nwrite = \"8MiB\"\nfile_size = \"1MiB\"\n[io]\nblock_size = \"256KiB\"\nqueue_depth = 4\nphases = [\"write\"]\nverify = true\n";

/// Runs the fill-states plan of a 64 MiB target in `dir`; `on_file` sees each finished
/// file with the test directory. Returns the file records.
fn run(
    dir: &std::path::Path,
    on_file: impl Fn(&FileRecord, &std::path::Path) + Sync,
) -> Vec<FileRecord> {
    let profile = Profile::parse(PROFILE, "test").unwrap();
    let registry = BackendRegistry::with_builtins();
    let spec = TargetSpec::parse(dir.to_str().unwrap(), &registry.schemes()).unwrap();
    let opts = options(11, EngineChoice::Auto);
    let mut backends: Vec<Box<dyn TargetBackend>> = vec![registry.open(&spec, 0, &opts).unwrap()];
    let cap = Capacity {
        total: 64 << 20,
        available: 64 << 20,
    };
    let plan = Plan::build(&profile, &[spec], opts.seed, &[cap]);
    runner::prepare_all(&plan, &mut backends).unwrap();
    let test_dir: Mutex<Option<PathBuf>> = Mutex::new(None);
    let recorder = Recorder::default();
    let record = recorder.observer();
    let observer = |e: &RunEvent| {
        match e {
            RunEvent::RunStart { targets, .. } => {
                *test_dir.lock().unwrap() = targets[0].test_dir.as_ref().map(PathBuf::from);
            }
            RunEvent::FileEnd(rec) => {
                let d = test_dir.lock().unwrap().clone().expect("a test directory");
                on_file(rec, &d);
            }
            _ => {}
        }
        record(e);
    };
    let cfg = RunConfig {
        run_id: opts.run_id.clone(),
        keep: false,
        stop: Arc::new(AtomicBool::new(false)),
        interval: Duration::from_millis(200),
        start_state: Default::default(),
        gate: None,
        collect_records: true,
        thermometer: None,
    };
    let out = runner::execute(
        &plan,
        backends,
        &runner::progress_for(&plan),
        &cfg,
        &observer,
    );
    let d = test_dir.lock().unwrap().clone().unwrap();
    assert!(!d.exists(), "the fill data was left in {}", d.display());
    out.files
}

fn of<'a>(files: &'a [FileRecord], phase: &str) -> Vec<&'a FileRecord> {
    files.iter().filter(|f| f.phase == phase).collect()
}

#[test]
fn every_level_is_filled_with_verified_data_then_written_and_the_fill_removed() {
    let dir = common::disk_tempdir();
    let files = run(dir.path(), |_, _| {});
    assert_eq!(of(&files, "write-0%").len(), 8);
    assert!(of(&files, "fill-0%").is_empty(), "nothing to fill at 0 %");
    // 50 % of 64 MiB, less the 8 MiB written at 0 %: 24 files, each read back verified.
    let fill = of(&files, "fill-50%");
    let verify = of(&files, "verify-50%");
    assert_eq!(fill.len(), 24);
    assert_eq!(verify.len(), 24);
    assert!(
        verify
            .iter()
            .all(|f| f.verified == Some(true) && f.status == "ok"),
        "{verify:?}"
    );
    assert_eq!(of(&files, "write-50%").len(), 8);
}

#[test]
fn a_fill_byte_changed_on_the_disk_is_found_when_the_fill_is_read_back() {
    let dir = common::disk_tempdir();
    let files = run(dir.path(), |rec, test_dir| {
        // The 13th fill file, as soon as it is written: one byte in its second block.
        if rec.phase == "fill-50%" && rec.index == 20 {
            let path = test_dir.join(format!("f{:05}.dat", rec.index));
            let mut f = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(&path)
                .unwrap();
            let mut b = [0u8; 1];
            f.seek(SeekFrom::Start(5000)).unwrap();
            f.read_exact(&mut b).unwrap();
            f.seek(SeekFrom::Start(5000)).unwrap();
            f.write_all(&[b[0] ^ 0xff]).unwrap();
            f.sync_all().unwrap();
        }
    });
    let verify = of(&files, "verify-50%");
    let bad: Vec<&&FileRecord> = verify.iter().filter(|f| f.verified != Some(true)).collect();
    assert_eq!(bad.len(), 1, "{verify:?}");
    assert_eq!(bad[0].index, 20);
    assert_eq!(bad[0].verified, Some(false));
    assert_eq!(bad[0].corrupt_blocks, 1, "{:?}", bad[0]);
}
