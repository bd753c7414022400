//! Helpers shared by the workload integration tests.
#![allow(dead_code)]

use hostd_records::profile::Profile;
use hostd_records::{RunEvent, RunOutcome};
use hostd_workload::backend::{BackendOptions, BackendRegistry, TargetBackend};
use hostd_workload::block::{BlockCodec, DataPool};
use hostd_workload::buffer::BufferPool;
use hostd_workload::engine::EngineChoice;
use hostd_workload::engine::IoEngine;
use hostd_workload::engine::RawFile;
use hostd_workload::events::OnEvent;
use hostd_workload::fault::FaultPlan;
use hostd_workload::jobloop::{run_job, JobError, JobIo, JobOutcome};
use hostd_workload::runner::{self, RunConfig};
use hostd_workload::step::IoJob;
use hostd_workload::{Plan, ProfileExt, TargetSpec};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A temporary directory on a real disk (not tmpfs), for direct-I/O tests.
pub fn disk_tempdir() -> tempfile::TempDir {
    for base in [
        std::env::var("THROTTLESCOPE_TEST_DIR").ok(),
        Some("/var/tmp".into()),
        Some("/tmp".into()),
        Some(std::env::temp_dir().display().to_string()),
    ]
    .into_iter()
    .flatten()
    {
        let p = Path::new(&base);
        let fs = hostd_workload::fsinfo::fs_info(p)
            .fs_type
            .unwrap_or_default();
        if p.is_dir() && !hostd_workload::fsinfo::is_memory_fs(&fs) {
            return tempfile::tempdir_in(p).expect("tempdir");
        }
    }
    panic!("no disk-backed temporary directory (set THROTTLESCOPE_TEST_DIR)");
}

/// Runs `job` with `engine` on the open file `fd` from offset 0 as a whole run does, every
/// I/O timed, never stopped, no 1 s interval latencies.
pub fn run_job_on(
    engine: &mut dyn IoEngine,
    fd: RawFile,
    job: &IoJob,
    codec: &BlockCodec,
    buffers: &mut BufferPool,
) -> Result<JobOutcome, JobError> {
    run_job(
        engine,
        JobIo {
            fd,
            base_offset: 0,
            job,
            codec,
            progress: &AtomicU64::new(0),
            stop: &AtomicBool::new(false),
            buffers,
            interval_latency: None,
            record_latency: true,
        },
    )
}

/// A small files profile: `count` files of `min`..`max`.
pub fn small_profile(count: u32, min: &str, max: &str, qd: usize) -> Profile {
    Profile::parse(
        &format!(
            "name = \"small\"\nkind = \"files\"\n[files]\ncount = {count}\nmin_size = \"{min}\"\nmax_size = \"{max}\"\n[io]\nblock_size = \"1MiB\"\nqueue_depth = {qd}\nphases = [\"write\", \"read\"]\n"
        ),
        "test",
    )
    .unwrap()
}

/// The engine `--engine NAME` chooses.
pub fn engine(name: &str) -> EngineChoice {
    name.parse().unwrap()
}

/// Backend options for tests.
pub fn options(seed: u64, engine: EngineChoice) -> BackendOptions {
    BackendOptions {
        run_id: format!("test-{seed}-{}", std::process::id()),
        seed,
        engine,
        poll: false,
        allow_cached: false,
        raw_device: false,
        destroy_data: false,
        fault: FaultPlan::default(),
        pool: DataPool::new(seed),
        resume: false,
    }
}

/// Records every event.
#[derive(Default)]
pub struct Recorder(pub Mutex<Vec<RunEvent>>);

impl Recorder {
    /// The callback that records into this.
    pub fn observer(&self) -> impl Fn(&RunEvent) + Sync + '_ {
        |e| self.0.lock().unwrap().push(e.clone())
    }
}

/// Plans, prepares and runs `profile` on `targets`.
/// [`run`] without keeping the files, without a stop request and with a recorder
/// nobody reads: what most tests need.
pub fn run_to_end(
    profile: &Profile,
    targets: &[&str],
    opts: &BackendOptions,
) -> anyhow::Result<(Plan, RunOutcome)> {
    run(
        profile,
        targets,
        opts,
        false,
        Arc::new(AtomicBool::new(false)),
        &Recorder::default().observer(),
    )
}

pub fn run(
    profile: &Profile,
    targets: &[&str],
    opts: &BackendOptions,
    keep: bool,
    stop: Arc<AtomicBool>,
    observer: &OnEvent<'_>,
) -> anyhow::Result<(Plan, RunOutcome)> {
    run_collecting(profile, targets, opts, keep, stop, true, observer)
}

/// [`run`], the outcome collecting the file records and intervals or not
/// (`RunConfig::collect_records`).
pub fn run_collecting(
    profile: &Profile,
    targets: &[&str],
    opts: &BackendOptions,
    keep: bool,
    stop: Arc<AtomicBool>,
    collect_records: bool,
    observer: &OnEvent<'_>,
) -> anyhow::Result<(Plan, RunOutcome)> {
    let registry = BackendRegistry::with_builtins();
    let specs: Vec<TargetSpec> = targets
        .iter()
        .map(|t| TargetSpec::parse(t, &registry.schemes()).unwrap())
        .collect();
    let mut backends: Vec<Box<dyn TargetBackend>> = specs
        .iter()
        .enumerate()
        .map(|(i, s)| registry.open(s, i, opts))
        .collect::<anyhow::Result<_>>()?;
    let caps: Vec<_> = backends.iter().map(|b| b.capacity().unwrap()).collect();
    let plan = Plan::build(profile, &specs, opts.seed, &caps);
    runner::check_space(&plan, &backends).map_err(anyhow::Error::msg)?;
    runner::prepare_all(&plan, &mut backends)?;
    let progress = runner::progress_for(&plan);
    let cfg = RunConfig {
        run_id: opts.run_id.clone(),
        keep,
        stop,
        interval: Duration::from_millis(200),
        start_state: Default::default(),
        gate: None,
        collect_records,
        thermometer: None,
    };
    let out = runner::execute(&plan, backends, &progress, &cfg, observer);
    Ok((plan, out))
}

/// Entries of a directory.
pub fn entries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default()
}

/// A loop device over an image file, detached when dropped.
pub struct LoopDevice(pub String);

impl LoopDevice {
    /// Attaches `img` to the first free loop device (`losetup -f --show`, with `extra` such
    /// as `-P` to scan its partitions); None where that is not possible here.
    pub fn attach(img: &Path, extra: &[&str]) -> Option<LoopDevice> {
        let out = std::process::Command::new("losetup")
            .args(["-f", "--show"])
            .args(extra)
            .arg(img)
            .output()
            .unwrap();
        out.status
            .success()
            .then(|| LoopDevice(String::from_utf8_lossy(&out.stdout).trim().to_string()))
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = std::process::Command::new("losetup")
            .args(["-d", &self.0])
            .status();
    }
}

/// Unmounts a mount point when dropped.
pub struct Unmount(pub PathBuf);

impl Drop for Unmount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// Says why a real-device test cannot run here, or panics where CI asks for every one to run
/// (`THROTTLESCOPE_REQUIRE_REAL_DEVICE=1`, as the hostd crate's real-device tests do). The
/// real devices are Linux's loop devices: elsewhere (the Windows build under Wine inherits
/// the variable) a skip stays a skip.
pub fn skipped(test: &str, why: &str) {
    const REQUIRE_ENV: &str = "THROTTLESCOPE_REQUIRE_REAL_DEVICE";
    if cfg!(target_os = "linux") && std::env::var(REQUIRE_ENV).is_ok_and(|v| v == "1") {
        panic!("{test}: {why} ({REQUIRE_ENV}=1)");
    }
    eprintln!("SKIPPED {test}: {why}");
}

/// True when running as root and `mount` works here.
pub fn can_mount() -> bool {
    #[cfg(windows)]
    let root = false;
    // SAFETY: geteuid has no preconditions.
    #[cfg(unix)]
    let root = unsafe { libc::geteuid() } == 0;
    root && std::process::Command::new("mount")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}
