//! The directory backend: test files in a fresh subdirectory
//! `TARGET/throttlescope-<run-id>[-N]/` (refused if it exists), direct I/O, fsync
//! at file end. Only files it created are ever removed. With `--raw-device`
//! the target is a block device written from offset 0 (fill only).

use super::{BackendOptions, StepContext, StepError, StepOutput, TargetBackend};
use crate::block::BlockCodec;
use crate::buffer::BufferPool;
use crate::direct;
use crate::direct::OpenMode;
use crate::engine::{self, IoEngine};
use crate::fault::FaultyEngine;
use crate::fsinfo::{self, FsInfo};
use crate::jobloop::{run_job, slots_for, JobIo};
use crate::plan::TargetPlan;
use crate::step::{Capacity, Step};
use crate::target::TargetSpec;
use anyhow::{bail, Context};
use hostd_records::DirectIo;
use hostd_records::TargetInfo;
use std::collections::{BTreeSet, HashMap};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

/// The name of the test directory a run makes in a target directory: `throttlescope-<run
/// id>`, and `throttlescope-<run id>-<target index>` for further targets.
pub fn test_dir_name(run_id: &str, target_index: usize) -> String {
    match target_index {
        0 => format!("throttlescope-{run_id}"),
        i => format!("throttlescope-{run_id}-{i}"),
    }
}

/// The file a test directory briefly holds to learn whether direct I/O works there.
pub const DIRECT_PROBE_FILE: &str = ".direct-io-probe";

/// Whether `name` is one a run gives the files of its test directory: `fNNNNN.dat` (five or
/// more digits: the file number) or [`DIRECT_PROBE_FILE`].
pub fn is_test_file_name(name: &str) -> bool {
    name == DIRECT_PROBE_FILE
        || name
            .strip_prefix('f')
            .and_then(|n| n.strip_suffix(".dat"))
            .is_some_and(|d| d.len() >= 5 && d.bytes().all(|b| b.is_ascii_digit()))
}

/// A directory (or raw device) target.
pub struct DirBackend {
    spec: TargetSpec,
    index: usize,
    opts: BackendOptions,
    root: PathBuf,
    test_dir: Option<PathBuf>,
    created_dir: bool,
    created: BTreeSet<u32>,
    fs: FsInfo,
    direct: DirectIo,
    engine_name: String,
    engine_note: Option<String>,
    engines: HashMap<usize, Box<dyn IoEngine>>,
    buffers: BufferPool,
    capacity: Option<Capacity>,
    free_before: Option<u64>,
    injected_written: Arc<AtomicU64>,
    raw_offsets: Vec<u64>,
}

impl DirBackend {
    /// Checks the target exists and is the right kind of thing.
    pub fn new(
        spec: &TargetSpec,
        index: usize,
        opts: &BackendOptions,
    ) -> anyhow::Result<DirBackend> {
        let root = spec.path();
        let meta = std::fs::metadata(&root)
            .with_context(|| format!("target {}: cannot use it", root.display()))?;
        let capacity = if opts.raw_device {
            if !fsinfo::is_block_device(&root, &meta) {
                bail!(
                    "target {}: --raw-device given but it is not a block device",
                    root.display()
                );
            }
            if !opts.destroy_data {
                bail!("target {}: writing a raw device destroys everything on it; add --destroy-data if that is what you want", root.display());
            }
            if let Some(why) = fsinfo::device_in_use(&root)
                .with_context(|| format!("target {}", root.display()))?
            {
                bail!("target {}: {why}; unmount it first (refusing to write a device that is mounted or in use)", root.display());
            }
            let f = File::open(&root)
                .with_context(|| format!("target {}: cannot open device", root.display()))?;
            let size = device_size(&f)
                .with_context(|| format!("target {}: cannot read device size", root.display()))?;
            Some(Capacity {
                total: size,
                available: size,
            })
        } else {
            if fsinfo::is_block_device(&root, &meta) {
                bail!(
                    "target {} is a block device; to write it raw use --raw-device --destroy-data",
                    root.display()
                );
            }
            if !meta.is_dir() {
                bail!("target {} is not a directory", root.display());
            }
            let s = fsinfo::space(&root)
                .with_context(|| format!("target {}: statvfs failed", root.display()))?;
            Some(Capacity {
                total: s.total,
                available: s.available,
            })
        };
        Ok(DirBackend {
            spec: spec.clone(),
            index,
            opts: opts.clone(),
            fs: if opts.raw_device {
                FsInfo {
                    source: Some(root.display().to_string()),
                    ..FsInfo::default()
                }
            } else {
                fsinfo::fs_info(&root)
            },
            root,
            test_dir: None,
            created_dir: false,
            created: BTreeSet::new(),
            direct: DirectIo::Direct,
            engine_name: String::new(),
            engine_note: None,
            engines: HashMap::new(),
            buffers: BufferPool::new(),
            free_before: capacity.map(|c| c.available),
            capacity,
            injected_written: Arc::new(AtomicU64::new(0)),
            raw_offsets: Vec::new(),
        })
    }

    fn file_path(&self, file: u32) -> PathBuf {
        match &self.test_dir {
            Some(d) => d.join(format!("f{file:05}.dat")),
            None => self.root.clone(),
        }
    }

    fn engine(&mut self, qd: usize) -> std::io::Result<&mut Box<dyn IoEngine>> {
        if !self.engines.contains_key(&qd) {
            let (e, note) = engine::open(self.opts.engine, qd)?;
            if note.is_some() {
                self.engine_note = note;
            }
            self.engine_name = e.name().to_string();
            let e: Box<dyn IoEngine> = match self.opts.fault.enospc_after_bytes {
                Some(b) => Box::new(FaultyEngine::new(e, b, self.injected_written.clone())),
                None => e,
            };
            self.engines.insert(qd, e);
        }
        Ok(self.engines.get_mut(&qd).expect("inserted"))
    }

    /// Takes over the test directory of the run being resumed, with the
    /// `fNNNNN.dat` files it holds (created by that run, so ours to rewrite
    /// and remove).
    fn adopt(&mut self, dir: PathBuf) -> anyhow::Result<()> {
        if !dir.is_dir() {
            bail!(
                "target {}: cannot resume: {} does not exist (another target, or the test files were removed)",
                self.root.display(),
                dir.display()
            );
        }
        for entry in
            std::fs::read_dir(&dir).with_context(|| format!("cannot list {}", dir.display()))?
        {
            let name = entry?.file_name();
            let name = name.to_string_lossy();
            if let Some(n) = name
                .strip_prefix('f')
                .and_then(|n| n.strip_suffix(".dat"))
                .and_then(|n| n.parse::<u32>().ok())
            {
                self.created.insert(n);
            }
        }
        self.created_dir = true;
        self.test_dir = Some(dir.clone());
        self.probe_direct(&dir)?;
        if !self.direct.is_direct() && !self.opts.allow_cached {
            bail!(
                "DIRECT I/O NOT AVAILABLE on target {}; rerun with --allow-cached to accept that",
                self.root.display()
            );
        }
        Ok(())
    }

    fn probe_direct(&mut self, dir: &Path) -> anyhow::Result<()> {
        let probe = dir.join(DIRECT_PROBE_FILE);
        let result = direct::open(&probe, OpenMode::CreateNew, true);
        let _ = std::fs::remove_file(&probe);
        let (_, status) =
            result.with_context(|| format!("cannot create a file in {}", dir.display()))?;
        if let (DirectIo::Direct, Some(why)) = (&status, &self.fs.not_a_disk) {
            self.direct = DirectIo::Ineffective {
                reason: format!("{why}; direct I/O there cannot be proven to reach a disk"),
            };
            return Ok(());
        }
        self.direct = match (status, self.fs.fs_type.as_deref()) {
            (DirectIo::Direct, Some(fs)) if fsinfo::is_memory_fs(fs) => DirectIo::Ineffective {
                reason: format!(
                    "{fs} keeps file data in memory; direct I/O there measures RAM, not a disk"
                ),
            },
            (s, _) => s,
        };
        Ok(())
    }
}

impl TargetBackend for DirBackend {
    fn info(&self) -> TargetInfo {
        TargetInfo {
            label: self.spec.label.clone(),
            scheme: if self.opts.raw_device {
                "raw".into()
            } else {
                "dir".into()
            },
            mode: self.spec.mode.as_str().into(),
            path: self.root.display().to_string(),
            test_dir: self.test_dir.as_ref().map(|d| d.display().to_string()),
            fs_type: self.fs.fs_type.clone(),
            mount_point: self.fs.mount_point.clone(),
            device: self.fs.source.clone(),
            device_model: self.fs.device_model.clone(),
            capacity_bytes: self.capacity.map(|c| c.total),
            free_bytes: self.free_before,
            direct_io: self.direct.clone(),
            engine: self.engine_name.clone(),
            engine_note: self.engine_note.clone(),
            // The drive's part reads the link (`hostd_drive::link`).
            link: None,
        }
    }

    fn capacity(&self) -> Option<Capacity> {
        self.capacity
    }

    fn storage_key(&self) -> Option<String> {
        fsinfo::storage_key(&self.root, self.opts.raw_device)
    }

    fn prepare(&mut self, plan: &TargetPlan) -> anyhow::Result<()> {
        // Decide the engine now so the manifest is right even for dry runs.
        let max_qd = plan
            .prepare
            .iter()
            .chain(&plan.measured)
            .map(|s| s.job.queue_depth)
            .max()
            .unwrap_or(1);
        self.engine(max_qd)
            .map_err(|e| anyhow::anyhow!("cannot start an I/O engine: {e}"))?;
        // Every buffer the plan will need, allocated and touched now rather
        // than inside some file's measured time.
        let mut need: HashMap<usize, usize> = HashMap::new();
        for s in plan.prepare.iter().chain(&plan.measured) {
            let n = need.entry(s.job.block_size).or_default();
            *n = (*n).max(slots_for(&s.job));
        }
        for (bs, n) in need {
            self.buffers.reserve(n, bs);
        }
        if self.opts.raw_device {
            let mut off = 0;
            for s in &plan.file_sizes {
                self.raw_offsets.push(off);
                off += s;
            }
            let f = direct::open(&self.root, OpenMode::Write, false);
            match f {
                Ok((_, d)) => self.direct = d,
                Err(e) => bail!(
                    "target {}: cannot open the device for direct I/O: {e}",
                    self.root.display()
                ),
            }
            return Ok(());
        }
        // Further targets get their index, so one directory can serve as two
        // targets (write and read on the same drive) without colliding.
        let dir = self.root.join(test_dir_name(&self.opts.run_id, self.index));
        if self.opts.resume {
            return self.adopt(dir);
        }
        if dir.exists() {
            bail!(
                "target {}: {} already exists; refusing to touch files this run did not create",
                self.root.display(),
                dir.display()
            );
        }
        std::fs::create_dir(&dir).with_context(|| {
            format!(
                "target {} is not writable: cannot create {}",
                self.root.display(),
                dir.display()
            )
        })?;
        self.created_dir = true;
        self.test_dir = Some(dir.clone());
        self.probe_direct(&dir)?;
        if !self.direct.is_direct() && !self.opts.allow_cached {
            let why = match &self.direct {
                DirectIo::Refused { reason } | DirectIo::Ineffective { reason } => reason.clone(),
                DirectIo::Direct => unreachable!(),
            };
            bail!("DIRECT I/O NOT AVAILABLE on target {}: {why}. The results would measure the page cache, not the disk. Rerun with --allow-cached to accept that (it is recorded in the manifest).", self.root.display());
        }
        Ok(())
    }

    fn run_step(&mut self, step: &Step, ctx: &StepContext<'_>) -> Result<StepOutput, StepError> {
        let path = self.file_path(step.file);
        let pstr = path.display().to_string();
        // A mixed job writes too: opened for both, synced at the end.
        let write = step.job.rw.is_write() || step.job.rw.read_percent().is_some();
        let mode = if self.opts.raw_device {
            if write {
                OpenMode::Write
            } else {
                OpenMode::Read
            }
        } else if write && !self.created.contains(&step.file) {
            OpenMode::CreateNew
        } else if write {
            OpenMode::Write
        } else {
            OpenMode::Read
        };
        let (file, status) = direct::open(&path, mode, self.opts.allow_cached).map_err(|e| {
            match &self.test_dir {
                // The directory this run created is gone: the filesystem went away under it.
                Some(d) if !d.exists() => StepError::Other(anyhow::anyhow!(
                    "cannot open {pstr}: {e}; the test directory {} is gone — was the target unmounted or unplugged?",
                    d.display()
                )),
                _ => StepError::Other(anyhow::anyhow!("cannot open {pstr}: {e}")),
            }
        })?;
        if mode == OpenMode::CreateNew {
            self.created.insert(step.file);
        }
        let is_direct = status.is_direct() && self.direct.is_direct();
        let base = self
            .raw_offsets
            .get(step.file as usize)
            .copied()
            .unwrap_or(0);
        let codec = BlockCodec::new(self.opts.pool.clone(), self.index as u32, step.file);
        let qd = step.job.queue_depth;
        self.engine(qd)
            .map_err(|e| StepError::Other(anyhow::anyhow!("cannot start an I/O engine: {e}")))?;
        let engine = self.engines.get_mut(&qd).expect("opened above");
        let fd = engine::raw_file(&file);
        let result = run_job(
            engine.as_mut(),
            JobIo {
                fd,
                base_offset: base,
                job: &step.job,
                codec: &codec,
                progress: ctx.progress,
                stop: ctx.stop,
                buffers: &mut self.buffers,
                interval_latency: Some(ctx.interval_latency),
                record_latency: true,
            },
        );
        if matches!(&result, Err(e) if e.engine_failed) {
            // A broken ring may still hold requests: never reuse it (a
            // later step opens a fresh one).
            self.engines.remove(&qd);
        }
        let outcome = match result {
            Ok(o) => o,
            Err(e) if direct::is_disk_full(&e.source) => {
                return Err(StepError::DiskFull {
                    path: pstr,
                    bytes_done: e.bytes_done,
                })
            }
            Err(e) => {
                return Err(StepError::Io {
                    path: pstr,
                    source: e,
                })
            }
        };
        if write {
            direct::sync(&file).map_err(|e| {
                if direct::is_disk_full(&e) {
                    StepError::DiskFull {
                        path: pstr.clone(),
                        bytes_done: outcome.bytes,
                    }
                } else {
                    StepError::Other(anyhow::anyhow!("fsync {pstr}: {e}"))
                }
            })?;
        }
        Ok(StepOutput {
            outcome,
            timing: None,
            direct_io: is_direct,
        })
    }

    fn delete_file(&mut self, file: u32) -> anyhow::Result<()> {
        // Only a file this run created, never one it did not.
        if self.opts.raw_device || !self.created.contains(&file) {
            return Ok(());
        }
        let p = self.file_path(file);
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(e).with_context(|| format!("cannot remove test file {}", p.display()))
            }
        }
        self.created.remove(&file);
        Ok(())
    }

    fn cleanup(&mut self, keep: bool) -> anyhow::Result<String> {
        let Some(dir) = self.test_dir.clone() else {
            return Ok(String::new());
        };
        if keep {
            return Ok(format!(
                "kept {} test files in {}",
                self.created.len(),
                dir.display()
            ));
        }
        let mut removed = 0;
        for f in self.created.clone() {
            let p = self.file_path(f);
            match std::fs::remove_file(&p) {
                Ok(()) => removed += 1,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(e)
                        .with_context(|| format!("cannot remove test file {}", p.display()))
                }
            }
        }
        self.created.clear();
        if self.created_dir {
            // remove_dir (not remove_dir_all): anything someone else put there stays.
            std::fs::remove_dir(&dir)
                .with_context(|| format!("cannot remove {} (not empty?)", dir.display()))?;
            self.created_dir = false;
        }
        Ok(format!(
            "removed {removed} test files and {}",
            dir.display()
        ))
    }
}

#[cfg(target_os = "linux")]
fn device_size(f: &File) -> std::io::Result<u64> {
    use std::os::unix::io::AsRawFd;
    let mut size: u64 = 0;
    // BLKGETSIZE64 = _IOR(0x12, 114, size_t)
    const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
    // SAFETY: ioctl with a valid out pointer.
    if unsafe { libc::ioctl(f.as_raw_fd(), BLKGETSIZE64 as _, &mut size) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(size)
}

#[cfg(windows)]
use crate::rawdisk_windows::device_size;

#[cfg(all(unix, not(target_os = "linux")))]
fn device_size(f: &File) -> std::io::Result<u64> {
    use std::io::{Seek, SeekFrom};
    let mut f = f.try_clone()?;
    f.seek(SeekFrom::End(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names a test directory's files get are recognised, and nothing else: what
    /// `hostd clean` may remove.
    #[test]
    fn test_file_names_are_the_ones_runs_give() {
        for name in ["f00000.dat", "f00042.dat", "f123456.dat", DIRECT_PROBE_FILE] {
            assert!(is_test_file_name(name), "{name}");
        }
        for name in [
            "f0042.dat",
            "f00042.dat.bak",
            "F00042.dat",
            "f0004x.dat",
            "notes.txt",
            "f.dat",
            "",
        ] {
            assert!(!is_test_file_name(name), "{name}");
        }
        assert_eq!(test_dir_name("R", 0), "throttlescope-R");
        assert_eq!(test_dir_name("R", 2), "throttlescope-R-2");
    }
}
