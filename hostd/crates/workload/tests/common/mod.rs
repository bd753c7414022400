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

/// A blkio cgroup that holds this whole test process and limits one block device to a
/// number of I/Os per second, so that each I/O waits in the kernel's block layer (after its
/// submission returned) for a time the test knows. The kernel's own per-device I/O counts
/// are the truth the test checks against. When dropped, the process goes back to the cgroup
/// it came from and the cgroup is removed. Other tests of the binary move with the process;
/// the limit touches only the one device.
#[cfg(target_os = "linux")]
pub struct IopsLimit {
    dir: PathBuf,
    home: PathBuf,
    v2: bool,
    dev: String,
}

#[cfg(target_os = "linux")]
impl IopsLimit {
    /// Limits `device` to `iops` reads and writes per second and moves this process into
    /// the limiting cgroup; Err says why that is not possible here (cgroup v1 `blkio` at
    /// /sys/fs/cgroup/blkio, or cgroup v2 with `io` at /sys/fs/cgroup, and root, needed).
    pub fn hold_this_process(device: &Path, iops: u32) -> Result<IopsLimit, String> {
        use std::os::unix::fs::FileTypeExt;
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(device).map_err(|e| format!("{}: {e}", device.display()))?;
        if !meta.file_type().is_block_device() {
            return Err(format!("{} is not a block device", device.display()));
        }
        let rdev = meta.rdev();
        let dev = format!("{}:{}", libc::major(rdev), libc::minor(rdev));
        let own = std::fs::read_to_string("/proc/self/cgroup").map_err(|e| e.to_string())?;
        let v1 = Path::new("/sys/fs/cgroup/blkio");
        let (root, v2, home) = if v1.join("blkio.throttle.read_iops_device").exists() {
            // "ID:CONTROLLERS:PATH", the line whose controllers include blkio.
            let home = own.lines().find_map(|l| {
                let f: Vec<&str> = l.splitn(3, ':').collect();
                (f.len() == 3 && f[1].split(',').any(|c| c == "blkio")).then(|| f[2].to_string())
            });
            (v1.to_path_buf(), false, home)
        } else {
            let v2root = Path::new("/sys/fs/cgroup");
            let ctls = std::fs::read_to_string(v2root.join("cgroup.controllers"))
                .map_err(|_| "no blkio controller (cgroup v1 blkio or v2 io)".to_string())?;
            if !ctls.split_whitespace().any(|c| c == "io") {
                return Err("cgroup v2 without the io controller".into());
            }
            let sub = v2root.join("cgroup.subtree_control");
            std::fs::write(&sub, "+io").map_err(|e| format!("{}: {e}", sub.display()))?;
            let home = own
                .lines()
                .find_map(|l| l.strip_prefix("0::").map(String::from));
            (v2root.to_path_buf(), true, home)
        };
        let home = root.join(
            home.ok_or("this process's cgroup is not in /proc/self/cgroup")?
                .trim_start_matches('/'),
        );
        let dir = root.join(format!("throttlescope-latency-{}", std::process::id()));
        std::fs::create_dir(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
        let limit = IopsLimit { dir, home, v2, dev };
        let lines: Vec<(&str, String)> = if v2 {
            vec![("io.max", format!("{} riops={iops} wiops={iops}", limit.dev))]
        } else {
            vec![
                (
                    "blkio.throttle.read_iops_device",
                    format!("{} {iops}", limit.dev),
                ),
                (
                    "blkio.throttle.write_iops_device",
                    format!("{} {iops}", limit.dev),
                ),
            ]
        };
        for (file, line) in lines {
            std::fs::write(limit.dir.join(file), line).map_err(|e| format!("{file}: {e}"))?;
        }
        std::fs::write(
            limit.dir.join("cgroup.procs"),
            std::process::id().to_string(),
        )
        .map_err(|e| format!("joining {}: {e}", limit.dir.display()))?;
        Ok(limit)
    }

    /// The reads (`read`) or writes this cgroup's tasks have issued to the device so far,
    /// by the kernel's count (`io.stat` rios/wios, or v1 `blkio.throttle.io_serviced`).
    pub fn ios(&self, read: bool) -> u64 {
        if self.v2 {
            let stat = std::fs::read_to_string(self.dir.join("io.stat")).unwrap();
            let key = if read { "rios=" } else { "wios=" };
            stat.lines()
                .filter(|l| l.split_whitespace().next() == Some(self.dev.as_str()))
                .flat_map(|l| l.split_whitespace().filter_map(|kv| kv.strip_prefix(key)))
                .find_map(|v| v.parse().ok())
                .unwrap_or(0)
        } else {
            let stat =
                std::fs::read_to_string(self.dir.join("blkio.throttle.io_serviced")).unwrap();
            let op = if read { "Read" } else { "Write" };
            stat.lines()
                .find_map(|l| {
                    let w: Vec<&str> = l.split_whitespace().collect();
                    (w.len() == 3 && w[0] == self.dev && w[1] == op)
                        .then(|| w[2].parse().ok())
                        .flatten()
                })
                .unwrap_or(0)
        }
    }
}

#[cfg(target_os = "linux")]
impl Drop for IopsLimit {
    fn drop(&mut self) {
        let back = std::fs::write(
            self.home.join("cgroup.procs"),
            std::process::id().to_string(),
        );
        if let Err(e) = back {
            eprintln!("could not return to {}: {e}", self.home.display());
        }
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        eprintln!("could not remove {}", self.dir.display());
    }
}
