//! Real block devices whose write rate the kernel changes mid-run: a file on the disk →
//! loop device → ext4 → mounted in a scratch directory, and a blkio cgroup (v1
//! `blkio.throttle.write_bps_device`, or v2 `io.max`) holding the `hostd run` process.
//! A watcher thread reads the cgroup's own per-device byte counters and changes the
//! limit (or starts and ends an outside writer, `outside`) when they cross a byte mark; the kernel's count and the time at each change
//! are the ground truth the tests compare hostd's analysis with.
//!
//! Everything created here is removed again by `Drop` (unmount, `losetup -d`, rmdir of
//! the cgroup), also when a test fails; only devices and cgroups this module created are
//! touched. When a test fails, the scratch directory (run directory, profile and
//! `kernel.json`) is kept under /var/tmp and its path printed; the disk images are not.

pub mod outside;

pub use hostd_testkit::blkio::{self, Cgroup, Controller, Count, Dir, Limit};

use outside::{Outside, OutsideWriter};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Set to `1` to fail (not skip) when the machine cannot run these tests.
pub const REQUIRE_ENV: &str = "THROTTLESCOPE_REQUIRE_REAL_DEVICE";

/// Set (to anything) to keep every run's scratch directory, not only failed ones.
pub const KEEP_ENV: &str = "THROTTLESCOPE_REALDEV_KEEP";

/// How often the watcher reads the counters. At 24 MB/s that is 120 kB between reads,
/// 0.05 % of a 250 MB mark.
const POLL: Duration = Duration::from_millis(5);

/// Host Unix time in ns (the clock of `files.csv`).
pub fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64
}

/// Says why the tests cannot run here and returns `None`, or panics when
/// [`REQUIRE_ENV`] asks for them. The message goes straight to stderr so that
/// `cargo test` shows it without `--nocapture`.
fn skip(test: &str, why: &str) -> Option<Rig> {
    if std::env::var(REQUIRE_ENV).is_ok_and(|v| v == "1") {
        panic!("{test}: {why} ({REQUIRE_ENV}=1)");
    }
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED {test}: {why} (real-device tests need root, loop devices and the blkio/io cgroup controller)"
    );
    None
}

fn run_tool(cmd: &mut Command) -> Result<String, String> {
    let out = cmd
        .output()
        .map_err(|e| format!("{:?}: {e}", cmd.get_program()))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(format!(
            "{cmd:?} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// A loop device over a sparse file on the disk, formatted ext4 and mounted.
pub struct LoopFs {
    /// The loop device this module attached (`/dev/loopN`).
    pub dev: PathBuf,
    /// `MAJ:MIN` of `dev`.
    pub numbers: (u64, u64),
    /// Where the filesystem is mounted: the `--target` directory.
    pub mount: PathBuf,
    image: PathBuf,
    mounted: bool,
}

/// Where a loop device's image lives.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Backing {
    /// A sparse file on this machine's disk (/var/tmp): the disk sets the ceiling.
    Disk,
    /// A sparse file in memory (/dev/shm), read by the loop driver with direct I/O, and
    /// ext4 mounted with `discard` (and a 1 s journal commit): a deleted file's blocks are
    /// punched out of the image within about a second, so the memory held is the files
    /// still on the device, not the bytes written. Hundreds of MB/s to GB/s.
    Memory,
}

impl LoopFs {
    fn create(
        image_dir: &Path,
        mount_dir: &Path,
        name: &str,
        size: u64,
        backing: Backing,
    ) -> Result<LoopFs, String> {
        let image = image_dir.join(format!("{name}.img"));
        let f = std::fs::File::create(&image).map_err(|e| e.to_string())?;
        f.set_len(size).map_err(|e| e.to_string())?;
        drop(f);
        let mut losetup = Command::new("losetup");
        losetup.arg("--find").arg("--show");
        if backing == Backing::Memory {
            losetup.arg("--direct-io=on");
        }
        let dev = PathBuf::from(run_tool(losetup.arg(&image))?);
        let mount = mount_dir.join(name);
        let mut fs = LoopFs {
            numbers: blkio::dev_numbers(&dev)?,
            dev,
            mount,
            image,
            mounted: false,
        };
        // -E nodiscard, lazy_*=0: no background zeroing that would add device writes. In
        // memory: few inodes and a small journal, so that the image's metadata is small.
        let mut mkfs = Command::new("mkfs.ext4");
        mkfs.args([
            "-q",
            "-F",
            "-E",
            "nodiscard,lazy_itable_init=0,lazy_journal_init=0",
        ]);
        if backing == Backing::Memory {
            mkfs.args(["-T", "largefile4", "-J", "size=32"]);
        }
        run_tool(mkfs.arg(&fs.dev))?;
        std::fs::create_dir(&fs.mount).map_err(|e| e.to_string())?;
        let mut mount = Command::new("mount");
        if backing == Backing::Memory {
            mount.args(["-o", "discard,commit=1"]);
        }
        run_tool(mount.arg(&fs.dev).arg(&fs.mount))?;
        fs.mounted = true;
        Ok(fs)
    }
}

impl LoopFs {
    /// The disk image behind the loop device (its allocated blocks show what the device
    /// holds: a discard punches holes in it).
    pub fn image(&self) -> &Path {
        &self.image
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        if self.mounted {
            let mut ok = false;
            for _ in 0..20 {
                if run_tool(Command::new("umount").arg(&self.mount)).is_ok() {
                    ok = true;
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            if !ok {
                let _ = run_tool(Command::new("umount").arg("-l").arg(&self.mount));
            }
        }
        // Only the device this LoopFs attached, and only while it still holds our image.
        let back = std::fs::read_to_string(format!(
            "/sys/block/{}/loop/backing_file",
            self.dev.file_name().unwrap().to_string_lossy()
        ))
        .unwrap_or_default();
        if Path::new(back.trim()) == self.image {
            if let Err(e) = run_tool(Command::new("losetup").arg("-d").arg(&self.dev)) {
                eprintln!("realdev cleanup: {e}");
            }
        }
        let _ = std::fs::remove_file(&self.image);
    }
}

/// The built hostd as a command whose process is in the cgroup `cg` before it starts: the
/// shell joins the cgroup, then becomes hostd (at `nice` when given), so every thread hostd
/// starts (io_uring workers too) is in it before the first byte is written.
pub fn hostd_in(cg: &Cgroup, nice: Option<i32>) -> Command {
    let nice = nice.map_or(String::new(), |n| format!("nice -n {n} "));
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!(
            "echo $$ > '{}/cgroup.procs' && exec {nice}\"$0\" \"$@\"",
            cg.dir.display()
        ))
        .arg(env!("CARGO_BIN_EXE_hostd"));
    cmd
}

/// Change one device's write limit when its kernel byte count reaches `at_bytes`.
#[derive(Debug, Clone, Copy)]
pub struct Step {
    /// Index of the device (in the order the rig created them).
    pub dev: usize,
    /// Mark on the device's kernel write counter, bytes.
    pub at_bytes: u64,
    /// New limit, bytes/s.
    pub bps: u64,
}

/// Stalls on a timer: from the time device `dev`'s kernel byte count reaches `at_bytes`,
/// `count` times, the limit falls to `low_bps` for `low_s` seconds, then returns to
/// `high_bps` for the rest of the `period_s`.
#[derive(Debug, Clone, Copy)]
pub struct Pulses {
    /// Index of the device.
    pub dev: usize,
    /// Mark on the device's kernel write counter where the first stall begins, bytes.
    pub at_bytes: u64,
    /// Limit during a stall, bytes/s.
    pub low_bps: u64,
    /// Limit between stalls, bytes/s.
    pub high_bps: u64,
    /// Length of a stall, s.
    pub low_s: f64,
    /// From one stall's start to the next one's, s.
    pub period_s: f64,
    /// Number of stalls.
    pub count: usize,
}

/// Bursts: while device `dev`'s kernel write count is inside one of `spans` (bytes, from
/// the first mark to the second), its limit is lifted and it writes as fast as the machine
/// lets it; at the end of the span the limit in force before comes back. A span that is
/// one file of the run (its bytes known from the profile's seeded sizes) makes that file a
/// burst file: a short file the device takes at bus speed, as an SSD's DRAM or SLC buffer
/// takes one while the drive itself is throttled.
#[derive(Debug, Clone)]
pub struct Bursts {
    /// Index of the device.
    pub dev: usize,
    /// `(start, end)` marks on the device's kernel write counter, bytes, in order.
    pub spans: Vec<(u64, u64)>,
}

/// What the watcher does during a run: limit changes at byte marks, timed stalls and
/// bursts, how often it reads the counters, and whether it keeps the devices' memory
/// small by deleting the files hostd has finished.
#[derive(Debug, Clone, Default)]
pub struct Schedule {
    /// Limit changes at byte marks (in order per device).
    pub steps: Vec<Step>,
    /// Timed stalls.
    pub pulses: Vec<Pulses>,
    /// Burst spans.
    pub bursts: Vec<Bursts>,
    /// Reading interval of the counters ([`POLL`] when `None`). A burst at GB/s needs
    /// about 1 ms to end within a few MB of its mark.
    pub poll: Option<Duration>,
    /// Delete every finished test file (all `fNNNNN.dat` of a target but its newest)
    /// while hostd runs: a `write`-only run reads none of them back, and on a device in
    /// memory (`Rig::in_memory`) the memory then holds one or two files, not the run.
    pub prune: bool,
    /// An outside writer sharing the device's limit between two marks on hostd's bytes;
    /// its start and end are recorded in `Outcome::applied` (after the steps' changes of
    /// the same reading), and the device's counts are then hostd's own (see [`outside`]).
    pub outside: Option<Outside>,
    /// A limit change one device gets a while after others have written their marks (a
    /// drive on a hub that gets the link back when the others are done); recorded in
    /// `Outcome::applied` after the steps' and pulses' changes, with the device's count
    /// at the change as its mark.
    pub handoff: Option<Handoff>,
}

/// Device `dev`'s limit becomes `bps` `delay_s` seconds after every device of `after` has
/// reached its mark on its kernel write counter.
#[derive(Debug, Clone)]
pub struct Handoff {
    /// Index of the device whose limit changes.
    pub dev: usize,
    /// (device, mark on its kernel write counter, bytes): all must be reached.
    pub after: Vec<(usize, u64)>,
    /// Seconds from the last of those marks to the change.
    pub delay_s: f64,
    /// New limit, bytes/s.
    pub bps: u64,
}

/// A limit change as it happened: the ground truth.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Applied {
    /// Device index.
    pub dev: usize,
    /// The mark asked for.
    pub mark: u64,
    /// New limit, bytes/s.
    pub bps: u64,
    /// Host Unix ns right after the new limit was written.
    pub t_ns: i64,
    /// The device's kernel write count right after the new limit was written.
    pub kernel_bytes: u64,
    /// The count of the reading before the one that crossed the mark (5 ms earlier).
    /// blk-throttle releases bytes in lumps (up to the queue depth × block size at once,
    /// every slice of 100 ms), so the change lies somewhere in
    /// `kernel_bytes_prev..=kernel_bytes`.
    pub kernel_bytes_prev: u64,
    /// Not a limit change (`bps` stays): the outside writer started (`Some(true)`) or
    /// was ended (`Some(false)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outside: Option<bool>,
}

/// One reading of every device's counter.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Sample {
    /// Host Unix ns.
    pub t_ns: i64,
    /// Kernel write count per device: hostd's own bytes (the cgroup's count less the
    /// outside writer's, when one shares the device).
    pub bytes: Vec<u64>,
    /// The outside writer's bytes through the throttle (0 when there is none), by its
    /// kernel per-task counts (`outside`'s module doc: within ±2 MiB while it runs).
    #[serde(default)]
    pub outside: u64,
}

/// One written file of `files.csv`.
#[derive(Debug, Clone)]
pub struct FileRow {
    /// Target label.
    pub target: String,
    /// Phase.
    pub phase: String,
    /// Host Unix ns.
    pub start_ns: i64,
    /// Host Unix ns (after fsync).
    pub end_ns: i64,
    /// Bytes.
    pub bytes: u64,
}

/// What a run on the rig produced.
pub struct Outcome {
    /// The run directory.
    pub run: PathBuf,
    /// hostd's combined stdout and stderr.
    pub output: String,
    /// The limit changes, in order.
    pub applied: Vec<Applied>,
    /// Counter readings every 5 ms (or the schedule's `poll`).
    pub samples: Vec<Sample>,
    /// The bursts' limit changes (lifted, restored), in order.
    pub bursts: Vec<Applied>,
    /// `files.csv` rows with status ok.
    pub files: Vec<FileRow>,
    /// `events.json` as JSON.
    pub analysis: Value,
}

impl Outcome {
    /// A run [`Rig::run_schedule`] kept (scratch directory `dir`, run `name`: the run
    /// directory `dir/name` and the kernel's record `dir/name.kernel.json`), with `analysis`
    /// in place of its `events.json` (e.g. what this build's `hostd analyze --json` says).
    pub fn load(dir: &Path, name: &str, analysis: Value) -> Outcome {
        let kernel: Value = serde_json::from_slice(
            &std::fs::read(dir.join(format!("{name}.kernel.json"))).expect("kernel.json"),
        )
        .expect("kernel.json is JSON");
        fn field<T: serde::de::DeserializeOwned>(kernel: &Value, k: &str) -> T {
            serde_json::from_value(kernel[k].clone()).expect(k)
        }
        let run = dir.join(name);
        Outcome {
            files: read_files(&run.join("files.csv")),
            run,
            output: String::new(),
            applied: field(&kernel, "applied"),
            samples: field(&kernel, "samples"),
            bursts: field(&kernel, "bursts"),
            analysis,
        }
    }

    /// The events of one target (label = its mount directory).
    pub fn events_of(&self, target: &Path) -> Vec<&Value> {
        let label = target.to_string_lossy().into_owned();
        self.analysis["events"]
            .as_array()
            .expect("events.json has events[]")
            .iter()
            .filter(|e| e["target"].as_str() == Some(label.as_str()))
            .collect()
    }

    /// Stretches (host ns) in which the kernel counted no byte written to device `dev`
    /// for at least `min_s`, between its first byte and its last: the device stalled
    /// (whatever held it: the disk under the loop file, writeback, the host).
    pub fn kernel_stalls(&self, dev: usize, min_s: f64) -> Vec<(i64, i64)> {
        let s = &self.samples;
        let last = s.last().map_or(0, |x| x.bytes[dev]);
        let mut out = Vec::new();
        let mut i = 0;
        while i < s.len() {
            let mut j = i;
            while j + 1 < s.len() && s[j + 1].bytes[dev] == s[i].bytes[dev] {
                j += 1;
            }
            let b = s[i].bytes[dev];
            // From the reading before the flat stretch to the first one after it.
            let (from, to) = (
                s[i.saturating_sub(1)].t_ns,
                s[(j + 1).min(s.len() - 1)].t_ns,
            );
            if b > 0 && b < last && (to - from) as f64 / 1e9 >= min_s {
                out.push((from, to));
            }
            i = j + 1;
        }
        out
    }

    /// The drop and recovery events of the target on device `dev`, after checking that
    /// every `stall` event of it is a stall the kernel's counters saw too (≥ 0.4 s without
    /// a byte, within 0.2 s of the reported onset interval): such a stall really happened
    /// and is not a false event.
    pub fn changes_of(&self, target: &Path, dev: usize) -> Vec<&Value> {
        let (stall_events, changes): (Vec<&Value>, Vec<&Value>) = self
            .events_of(target)
            .into_iter()
            .partition(|e| e["kind"] == "stall");
        for e in stall_events {
            assert!(
                self.kernel_shows_stall(e, dev),
                "stall event the kernel's counters do not show (kernel stalls {:?}):\n{}",
                self.kernel_stalls(dev, 0.4),
                describe(&[e])
            );
        }
        changes
    }

    /// Whether the kernel's counters show a stall of device `dev` (≥ 0.4 s without a byte)
    /// within 0.2 s of `stall_event`'s onset interval: the stall really happened.
    pub fn kernel_shows_stall(&self, stall_event: &Value, dev: usize) -> bool {
        let (lo, hi) = (
            stall_event["onset_ns_low"].as_i64().unwrap_or(i64::MAX) - 200_000_000,
            stall_event["onset_ns_high"].as_i64().unwrap_or(i64::MIN) + 200_000_000,
        );
        self.kernel_stalls(dev, 0.4)
            .iter()
            .any(|&(a, b)| a <= hi && lo <= b)
    }

    /// Device `dev`'s mean rate between host ns `a` and `b` by the kernel's count (linear
    /// between readings), B/s; None outside the readings or for an empty stretch.
    pub fn kernel_rate(&self, dev: usize, a: i64, b: i64) -> Option<f64> {
        let s = &self.samples;
        let at = |t: i64| {
            let i = s.partition_point(|x| x.t_ns <= t);
            let (p, q) = (s.get(i.checked_sub(1)?)?, s.get(i)?);
            let f = (t - p.t_ns) as f64 / (q.t_ns - p.t_ns).max(1) as f64;
            Some(p.bytes[dev] as f64 + f * (q.bytes[dev] as f64 - p.bytes[dev] as f64))
        };
        (b > a).then_some(())?;
        Some((at(b)? - at(a)?) / ((b - a) as f64 * 1e-9))
    }

    /// Written files of one target, in start order.
    pub fn files_of(&self, target: &Path) -> Vec<&FileRow> {
        let label = target.to_string_lossy().into_owned();
        let mut v: Vec<&FileRow> = self
            .files
            .iter()
            .filter(|f| f.target == label && f.phase == "write")
            .collect();
        v.sort_by_key(|f| f.start_ns);
        v
    }

    /// Maps the kernel's count at change `step` to bytes of the target's write phase on
    /// that device: the midpoint and half-width of the range the change lies in.
    ///
    /// The cgroup's count is what hostd's own tasks wrote to the device (less an outside
    /// writer's bytes when one shares it: `outside`): ext4's journal and
    /// metadata are written by the jbd2 thread, outside the cgroup, so the final count
    /// equals the bytes of `files.csv` to the byte on these runs (any difference is added
    /// to the half-width). hostd writes one file after another, so the count *is* the
    /// target's bytes. What blurs the change is the throttle itself: it dispatches in
    /// lumps, and the mark is crossed by one; the change lies between the count before
    /// that lump and the count right after the new limit was written.
    pub fn truth(&self, step: usize, target: &Path) -> (f64, f64) {
        let a = &self.applied[step];
        let written: u64 = self.files_of(target).iter().map(|f| f.bytes).sum();
        let last = self.samples.last().expect("counter samples").bytes[a.dev];
        let unexplained = written as f64 - last as f64;
        let (lo, hi) = (a.kernel_bytes_prev as f64, a.kernel_bytes as f64);
        (
            (lo + hi) / 2.0 + unexplained,
            (hi - lo) / 2.0 + unexplained.abs(),
        )
    }
}

/// Scratch directory, loop filesystems and the cgroup of one test.
pub struct Rig {
    /// Name of the test (for messages).
    pub test: String,
    /// The throttling cgroup (dropped before the filesystems).
    pub cgroup: Option<Cgroup>,
    /// The mounted loop filesystems.
    pub devs: Vec<LoopFs>,
    /// A line the watcher writes into the kernel log (`/dev/kmsg`, as root: the `user`
    /// facility) right after each pulse's stall begins, when set.
    pub kmsg_at_stalls: Option<String>,
    work: Option<tempfile::TempDir>,
    /// The directory in /dev/shm holding the images of an in-memory rig.
    images: Option<tempfile::TempDir>,
}

impl Rig {
    /// `n` loop filesystems of `size` bytes each and a cgroup, or `None` (with a message
    /// saying why) where the machine cannot run real-device tests.
    pub fn new(test: &str, n: usize, size: u64) -> Option<Rig> {
        Rig::with_backing(test, n, size, Backing::Disk)
    }

    /// One loop filesystem whose image is a sparse file of `size` bytes in memory
    /// (/dev/shm; see `Backing::Memory`), and a cgroup; or `None` as [`Rig::new`]. With
    /// [`Schedule::prune`], the memory it holds is about the files on it at a time.
    pub fn in_memory(test: &str, size: u64) -> Option<Rig> {
        Rig::with_backing(test, 1, size, Backing::Memory)
    }

    /// [`Rig::in_memory`] with `n` loop filesystems (a hub of drives).
    pub fn in_memory_many(test: &str, n: usize, size: u64) -> Option<Rig> {
        Rig::with_backing(test, n, size, Backing::Memory)
    }

    fn with_backing(test: &str, n: usize, size: u64, backing: Backing) -> Option<Rig> {
        if unsafe { libc::geteuid() } != 0 {
            return skip(test, "not root");
        }
        if !Path::new("/dev/loop-control").exists() {
            return skip(test, "no loop devices (/dev/loop-control missing)");
        }
        let ctl = match Controller::find() {
            Ok(c) => c,
            Err(why) => return skip(test, &why),
        };
        for tool in ["losetup", "mkfs.ext4", "mount", "umount"] {
            if run_tool(Command::new("sh").args(["-c", &format!("command -v {tool}")])).is_err() {
                panic!("{tool} not found; run `just setup` (scripts/setup.sh installs it)");
            }
        }
        let base = std::env::var("THROTTLESCOPE_TEST_DIR").unwrap_or_else(|_| "/var/tmp".into());
        let work = tempfile::Builder::new()
            .prefix("throttlescope-realdev-")
            .tempdir_in(base)
            .expect("scratch directory on disk");
        let mut rig = Rig {
            test: test.into(),
            cgroup: None,
            devs: Vec::new(),
            kmsg_at_stalls: None,
            work: Some(work),
            images: None,
        };
        if backing == Backing::Memory {
            match tempfile::Builder::new()
                .prefix("throttlescope-realdev-")
                .tempdir_in("/dev/shm")
            {
                Ok(d) => rig.images = Some(d),
                Err(e) => return skip(test, &format!("no /dev/shm for a device in memory: {e}")),
            }
        }
        for i in 0..n {
            let image_dir = rig.images.as_ref().map_or(rig.dir(), |d| d.path());
            match LoopFs::create(image_dir, rig.dir(), &format!("dev{i}"), size, backing) {
                Ok(fs) => rig.devs.push(fs),
                Err(e) if e.contains("losetup") => {
                    return skip(test, &format!("cannot attach a loop device: {e}"))
                }
                Err(e) => panic!("{test}: {e}"),
            }
        }
        match Cgroup::create(&ctl, "throttlescope-realdev") {
            Ok(cg) => rig.cgroup = Some(cg),
            // e.g. a container whose cgroup file system is mounted read-only
            Err(why) => return skip(test, &format!("cannot create a cgroup: {why}")),
        }
        Some(rig)
    }

    /// Replaces the rig's cgroup by a new one, whose byte counters start at zero: the
    /// watcher's marks count from zero, so each run of a rig that makes several needs its own.
    pub fn renew_cgroup(&mut self) {
        self.cgroup.take();
        let ctl = Controller::find().expect("the controller Rig::new found");
        self.cgroup = Some(Cgroup::create(&ctl, "throttlescope-realdev").expect("a new cgroup"));
    }

    /// The built hostd as a command inside the rig's cgroup, every device's writes held to
    /// `bps` from the start (for a test that drives hostd itself, e.g. kills it).
    pub fn hostd_limited(&self, bps: u64) -> Command {
        let cg = self.cgroup.as_ref().unwrap();
        for d in &self.devs {
            cg.limit(d.numbers, Dir::Write, Limit::Bps(bps));
        }
        hostd_in(cg, None)
    }

    /// The scratch directory.
    pub fn dir(&self) -> &Path {
        self.work.as_ref().unwrap().path()
    }

    /// The mounted directory of device `i`.
    pub fn target(&self, i: usize) -> &Path {
        &self.devs[i].mount
    }

    /// Runs `hostd run -q --profile PROFILE --seed SEED` with `targets` (`--target`
    /// values) inside the cgroup, the devices limited to `initial_bps` from the start,
    /// and the watcher applying `steps` (in order per device) as the kernel counts
    /// cross their marks. Asserts that hostd succeeded and that every step fired.
    pub fn run(
        &self,
        profile: &str,
        seed: u64,
        targets: &[String],
        initial_bps: &[u64],
        steps: &[Step],
    ) -> Outcome {
        self.run_with(profile, seed, targets, initial_bps, steps, &[])
    }

    /// [`Rig::run`] with timed stalls as well: each of `pulses` applies its low and high
    /// limits (every change recorded in `Outcome::applied`, after the steps' changes of
    /// the same reading) once its mark is crossed.
    pub fn run_with(
        &self,
        profile: &str,
        seed: u64,
        targets: &[String],
        initial_bps: &[u64],
        steps: &[Step],
        pulses: &[Pulses],
    ) -> Outcome {
        let schedule = Schedule {
            steps: steps.to_vec(),
            pulses: pulses.to_vec(),
            ..Schedule::default()
        };
        self.run_schedule("run", profile, seed, targets, initial_bps, &schedule)
    }

    /// [`Rig::run_with`] for any [`Schedule`], into the run directory `name` of the
    /// scratch directory (one rig can hold several runs under different names). Asserts
    /// that hostd succeeded and that every step, pulse and burst fired.
    pub fn run_schedule(
        &self,
        name: &str,
        profile: &str,
        seed: u64,
        targets: &[String],
        initial_bps: &[u64],
        schedule: &Schedule,
    ) -> Outcome {
        let cg = self.cgroup.as_ref().unwrap();
        for (d, &bps) in self.devs.iter().zip(initial_bps) {
            cg.limit(d.numbers, Dir::Write, Limit::Bps(bps));
        }
        let profile_path = self.dir().join(format!("{name}.toml"));
        std::fs::write(&profile_path, profile).unwrap();
        let run = self.dir().join(name);
        // hostd runs at nice -10: what is measured is the device the kernel throttles,
        // not how long hostd waits for a CPU on a machine busy compiling (CI, shared VMs).
        let mut cmd = hostd_in(cg, Some(-10));
        cmd.args(["run", "-q", "--profile"])
            .arg(&profile_path)
            .args(["--seed", &seed.to_string(), "--out"])
            .arg(&run);
        for t in targets {
            cmd.arg("--target").arg(t);
        }
        let devs: Vec<(u64, u64)> = self.devs.iter().map(|d| d.numbers).collect();
        let stop = Arc::new(AtomicBool::new(false));
        let watcher = {
            let (stop, schedule, cg, kmsg) = (
                stop.clone(),
                schedule.clone(),
                cg.handle(),
                self.kmsg_at_stalls.clone(),
            );
            let limits = initial_bps.to_vec();
            let mounts: Vec<PathBuf> = self.devs.iter().map(|d| d.mount.clone()).collect();
            std::thread::spawn(move || {
                watch(
                    &cg,
                    &devs,
                    &mounts,
                    limits,
                    &schedule,
                    &stop,
                    kmsg.as_deref(),
                )
            })
        };
        let child = ChildGuard(Some(
            cmd.stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn hostd"),
        ));
        let out = child.wait();
        stop.store(true, Ordering::Relaxed);
        let Watched {
            applied,
            samples,
            bursts,
        } = watcher.join().expect("watcher");
        let kernel = if name == "run" {
            "kernel.json".to_string()
        } else {
            format!("{name}.kernel.json")
        };
        let _ = std::fs::write(
            self.dir().join(kernel),
            serde_json::to_vec(
                &serde_json::json!({ "applied": applied, "bursts": bursts, "samples": samples }),
            )
            .unwrap(),
        );
        let output = super::text(&out);
        assert!(
            out.status.success(),
            "{}: hostd run failed:\n{output}",
            self.test
        );
        let pulse_changes: usize = schedule.pulses.iter().map(|p| 2 * p.count).sum();
        let outside_changes = 2 * schedule.outside.iter().count();
        let handoffs = schedule.handoff.iter().count();
        assert_eq!(
            applied.len(),
            schedule.steps.len() + pulse_changes + outside_changes + handoffs,
            "{}: not every byte mark was reached: {applied:?} of {:?}",
            self.test,
            schedule.steps
        );
        let burst_changes: usize = schedule.bursts.iter().map(|b| 2 * b.spans.len()).sum();
        assert_eq!(
            bursts.len(),
            burst_changes,
            "{}: not every burst began and ended: {bursts:?} of {:?}",
            self.test,
            schedule.bursts
        );
        let analysis: Value =
            serde_json::from_slice(&std::fs::read(run.join("events.json")).expect("events.json"))
                .expect("events.json is JSON");
        // Direct I/O on ext4 on the loop device, through whichever engine hostd chose (the
        // throttle holds io_uring's workers too: they are threads of the cgroup's process).
        let manifest: Value = serde_json::from_slice(
            &std::fs::read(run.join("manifest.json")).expect("manifest.json"),
        )
        .expect("manifest.json is JSON");
        for t in manifest["targets"].as_array().expect("targets") {
            assert_eq!(t["direct_io"]["status"], "direct", "{}: {t}", self.test);
            assert_eq!(t["fs_type"], "ext4", "{}: {t}", self.test);
        }
        eprintln!("{}: engine {}", self.test, manifest["targets"][0]["engine"]);
        Outcome {
            files: read_files(&run.join("files.csv")),
            run,
            output,
            applied,
            samples,
            bursts,
            analysis,
        }
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        // Cgroup first (hostd has exited), then unmount and detach.
        self.cgroup.take();
        self.devs.clear();
        self.images.take();
        if std::thread::panicking() || std::env::var_os(KEEP_ENV).is_some() {
            if let Some(w) = self.work.take() {
                let kept = w.keep();
                let _ = writeln!(
                    std::io::stderr(),
                    "{}: run directory and kernel.json kept in {}",
                    self.test,
                    kept.display()
                );
            }
        }
    }
}

/// Kills the child (ours, by PID) if the test panics before it ended.
struct ChildGuard(Option<Child>);

impl ChildGuard {
    fn wait(mut self) -> std::process::Output {
        self.0
            .take()
            .unwrap()
            .wait_with_output()
            .expect("wait hostd")
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Some(c) = self.0.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// What the watcher saw and did.
struct Watched {
    applied: Vec<Applied>,
    samples: Vec<Sample>,
    bursts: Vec<Applied>,
}

/// How often (in readings) the watcher looks for finished files to delete.
const PRUNE_EVERY: usize = 20;

/// Deletes every `fNNNNN.dat` in the test directories under `mount` but the newest one of
/// each (the file hostd is writing; it opens the next only after the last one's fsync).
fn prune(mount: &Path) {
    let Ok(dirs) = std::fs::read_dir(mount) else {
        return;
    };
    for dir in dirs.flatten().map(|d| d.path()).filter(|p| p.is_dir()) {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<(u32, PathBuf)> = entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let n = name.strip_prefix('f')?.strip_suffix(".dat")?.parse().ok()?;
                Some((n, e.path()))
            })
            .collect();
        files.sort();
        files.pop();
        for (_, f) in files {
            let _ = std::fs::remove_file(f);
        }
    }
}

/// Every device's count of hostd's own bytes, and the outside writer's bytes: the cgroup's
/// count, less on the outsider's device (`outsider`) the outsider's bytes through the
/// throttle (the midpoint of what completed, read before the cgroup's count, and what it
/// submitted, read after: `outside`'s module doc), never below `floor` (the last reading:
/// the estimate's ±2 MiB must not make the count go back).
fn own_counts(
    cg: &Cgroup,
    devs: &[(u64, u64)],
    outsider: Option<(usize, &OutsideWriter)>,
    floor: &[u64],
) -> (Vec<u64>, u64) {
    let mut theirs = 0;
    let bytes = devs
        .iter()
        .enumerate()
        .map(|(i, &d)| {
            let own = match outsider {
                Some((dev, w)) if dev == i => {
                    let completed = w.completed();
                    let all = cg.counted(d, Dir::Write, Count::Bytes);
                    theirs = (completed + w.submitted()) / 2;
                    all.saturating_sub(theirs)
                }
                _ => cg.counted(d, Dir::Write, Count::Bytes),
            };
            own.max(floor.get(i).copied().unwrap_or(0))
        })
        .collect();
    (bytes, theirs)
}

fn watch(
    cg: &Cgroup,
    devs: &[(u64, u64)],
    mounts: &[PathBuf],
    mut limits: Vec<u64>,
    schedule: &Schedule,
    stop: &AtomicBool,
    kmsg: Option<&str>,
) -> Watched {
    let (steps, pulses) = (&schedule.steps, &schedule.pulses);
    let poll = schedule.poll.unwrap_or(POLL);
    let mut pending: Vec<Step> = steps.to_vec();
    // Per burst list: the next span and whether it is under way.
    let mut burst_at: Vec<(usize, bool)> = vec![(0, false); schedule.bursts.len()];
    let mut burst_log = Vec::new();
    // Per pulse train: when its first stall began (host ns) and how many changes it made.
    let mut trains: Vec<(Option<i64>, usize)> = vec![(None, 0); pulses.len()];
    // The handoff: when it is due (host ns, once every mark is reached), and whether done.
    let (mut handoff_due, mut handoff_done): (Option<i64>, bool) = (None, false);
    let (mut applied, mut samples) = (Vec::new(), Vec::new());
    // The outside writer once started (kept after its end: its bytes stay subtracted).
    let mut outsider: Option<OutsideWriter> = None;
    let out_dev = schedule.outside.map(|o| o.dev);
    let started = Instant::now();
    while !stop.load(Ordering::Relaxed) && started.elapsed() < Duration::from_secs(600) {
        if schedule.prune && samples.len() % PRUNE_EVERY == 0 {
            mounts.iter().for_each(|m| prune(m));
        }
        let t_ns = now_ns();
        let prev = samples
            .last()
            .map_or(vec![0; devs.len()], |p: &Sample| p.bytes.clone());
        let (bytes, outside) = own_counts(cg, devs, out_dev.zip(outsider.as_ref()), &prev);
        samples.push(Sample {
            t_ns,
            bytes: bytes.clone(),
            outside,
        });
        // The first pending step of each device, when its mark is crossed.
        let mut i = 0;
        while i < pending.len() {
            let s = pending[i];
            let first_of_dev = pending[..i].iter().all(|p| p.dev != s.dev);
            if first_of_dev && bytes[s.dev] >= s.at_bytes {
                cg.limit(devs[s.dev], Dir::Write, Limit::Bps(s.bps));
                limits[s.dev] = s.bps;
                let t_ns = now_ns();
                let kernel_bytes =
                    own_counts(cg, devs, out_dev.zip(outsider.as_ref()), &bytes).0[s.dev];
                applied.push(Applied {
                    dev: s.dev,
                    mark: s.at_bytes,
                    bps: s.bps,
                    t_ns,
                    kernel_bytes,
                    kernel_bytes_prev: prev[s.dev],
                    outside: None,
                });
                pending.remove(i);
            } else {
                i += 1;
            }
        }
        for (p, (t0, done)) in pulses.iter().zip(trains.iter_mut()) {
            if *done == 2 * p.count {
                continue;
            }
            // Change k: stall k/2 begins (even k) or ends (odd k).
            let due = |t0: i64| {
                let k = *done;
                t0 + (((k / 2) as f64 * p.period_s + (k % 2) as f64 * p.low_s) * 1e9) as i64
            };
            let fire = match *t0 {
                None => bytes[p.dev] >= p.at_bytes,
                Some(t0) => now_ns() >= due(t0),
            };
            if fire {
                let bps = if *done % 2 == 0 {
                    p.low_bps
                } else {
                    p.high_bps
                };
                cg.limit(devs[p.dev], Dir::Write, Limit::Bps(bps));
                limits[p.dev] = bps;
                let t_ns = now_ns();
                if let (Some(line), 0) = (kmsg, *done % 2) {
                    // With its newline: the kernel holds a record without one open for
                    // continuation, and readers see it only once the next one comes.
                    std::fs::write("/dev/kmsg", format!("{line}\n"))
                        .expect("write the kernel log (/dev/kmsg)");
                }
                t0.get_or_insert(t_ns);
                applied.push(Applied {
                    dev: p.dev,
                    mark: p.at_bytes,
                    bps,
                    t_ns,
                    kernel_bytes: own_counts(cg, devs, out_dev.zip(outsider.as_ref()), &bytes).0
                        [p.dev],
                    kernel_bytes_prev: prev[p.dev],
                    outside: None,
                });
                *done += 1;
            }
        }
        if let (Some(h), false) = (&schedule.handoff, handoff_done) {
            if handoff_due.is_none() && h.after.iter().all(|&(d, m)| bytes[d] >= m) {
                handoff_due = Some(t_ns + (h.delay_s * 1e9) as i64);
            }
            if handoff_due.is_some_and(|due| now_ns() >= due) {
                cg.limit(devs[h.dev], Dir::Write, Limit::Bps(h.bps));
                limits[h.dev] = h.bps;
                applied.push(Applied {
                    dev: h.dev,
                    mark: bytes[h.dev],
                    bps: h.bps,
                    t_ns: now_ns(),
                    kernel_bytes: own_counts(cg, devs, out_dev.zip(outsider.as_ref()), &bytes).0
                        [h.dev],
                    kernel_bytes_prev: prev[h.dev],
                    outside: None,
                });
                handoff_done = true;
            }
        }
        for (b, (next, inside)) in schedule.bursts.iter().zip(burst_at.iter_mut()) {
            // Both marks may be crossed in one reading: lift, then restore at once.
            while let Some(&(from, to)) = b.spans.get(*next) {
                let crossed = if *inside { to } else { from };
                if bytes[b.dev] < crossed {
                    break;
                }
                if *inside {
                    cg.limit(devs[b.dev], Dir::Write, Limit::Bps(limits[b.dev]));
                    *next += 1;
                } else {
                    cg.limit(devs[b.dev], Dir::Write, Limit::NoBps);
                }
                *inside = !*inside;
                burst_log.push(Applied {
                    dev: b.dev,
                    mark: crossed,
                    bps: if *inside { 0 } else { limits[b.dev] },
                    t_ns: now_ns(),
                    kernel_bytes: own_counts(cg, devs, out_dev.zip(outsider.as_ref()), &bytes).0
                        [b.dev],
                    kernel_bytes_prev: prev[b.dev],
                    outside: None,
                });
            }
        }
        if let Some(o) = schedule.outside {
            // Started at its first mark, ended (by PID) at its second.
            let (running, ended) = (
                outsider.is_some(),
                outsider.as_ref().is_some_and(|w| w.ended()),
            );
            let start = !running && bytes[o.dev] >= o.from_bytes;
            let end = running && !ended && bytes[o.dev] >= o.to_bytes;
            if start {
                outsider = Some(OutsideWriter::start(&cg.dir, &mounts[o.dev]));
            } else if end {
                outsider.as_mut().expect("running").stop();
            }
            if start || end {
                applied.push(Applied {
                    dev: o.dev,
                    mark: if start { o.from_bytes } else { o.to_bytes },
                    bps: limits[o.dev],
                    t_ns: now_ns(),
                    kernel_bytes: own_counts(cg, devs, out_dev.zip(outsider.as_ref()), &bytes).0
                        [o.dev],
                    kernel_bytes_prev: prev[o.dev],
                    outside: Some(start),
                });
            }
        }
        std::thread::sleep(poll);
    }
    Watched {
        applied,
        samples,
        bursts: burst_log,
    }
}

fn read_files(path: &Path) -> Vec<FileRow> {
    let mut r = csv::Reader::from_path(path).expect("files.csv");
    let h = r.headers().unwrap().clone();
    let col = |n: &str| {
        h.iter()
            .position(|c| c == n)
            .unwrap_or_else(|| panic!("no {n}"))
    };
    let (t, p, s, e, b, st) = (
        col("target"),
        col("phase"),
        col("start_ns"),
        col("end_ns"),
        col("bytes"),
        col("status"),
    );
    r.records()
        .map(|rec| rec.unwrap())
        .filter(|rec| &rec[st] == "ok")
        .map(|rec| FileRow {
            target: rec[t].to_string(),
            phase: rec[p].to_string(),
            start_ns: rec[s].parse().unwrap(),
            end_ns: rec[e].parse().unwrap(),
            bytes: rec[b].parse().unwrap(),
        })
        .collect()
}

/// A `files` profile of `count` write-only files of `min`–`max` (QD4, 1 MiB blocks, no
/// read-back: the kernel throttles writes only).
pub fn files_profile(count: usize, min: &str, max: &str) -> String {
    format!(
        "name = \"realdev\"\ndescription = \"real-device test\"\nkind = \"files\"\n[files]\ncount = {count}\nmin_size = \"{min}\"\nmax_size = \"{max}\"\n[io]\nblock_size = \"1MiB\"\nqueue_depth = 4\nphases = [\"write\"]\nverify = false\n"
    )
}

/// One line per event for messages: kind, onset, rates, cause.
pub fn describe(events: &[&Value]) -> String {
    events
        .iter()
        .map(|e| {
            format!(
                "{} {} at {:.1} MB ({}), {:.1} → {:.1} MB/s, {} {:.2}; {}",
                e["target"].as_str().unwrap_or("?"),
                e["kind"].as_str().unwrap_or("?"),
                e["onset_bytes"].as_f64().unwrap_or(f64::NAN) / 1e6,
                e["onset_ns"],
                e["rate_before_bps"].as_f64().unwrap_or(f64::NAN) / 1e6,
                e["rate_after_bps"].as_f64().unwrap_or(f64::NAN) / 1e6,
                e["cause"].as_str().unwrap_or("?"),
                e["confidence"].as_f64().unwrap_or(f64::NAN),
                e["evidence"]["text"].as_str().unwrap_or("")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}
