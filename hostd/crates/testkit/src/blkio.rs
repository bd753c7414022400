//! A blkio cgroup: limits on one block device's reads or writes, and the kernel's own counts
//! of what the cgroup's tasks moved on it. cgroup v1 (`blkio.throttle.*`) and v2 (`io.max`,
//! `io.stat`) alike; root is needed.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Which cgroup interface throttles block I/O.
#[derive(Debug, Clone, PartialEq)]
pub enum Controller {
    /// cgroup v1 `blkio` hierarchy mounted at this path.
    V1(PathBuf),
    /// cgroup v2 hierarchy with the `io` controller, mounted at this path.
    V2(PathBuf),
}

impl Controller {
    /// Finds the controller: a cgroup v1 `blkio` mount with throttling, else a cgroup2 mount
    /// whose root offers `io`. Err says what is missing.
    pub fn find() -> Result<Controller, String> {
        let info = std::fs::read_to_string("/proc/self/mountinfo")
            .map_err(|e| format!("cannot read /proc/self/mountinfo: {e}"))?;
        let mut v2 = None;
        for line in info.lines() {
            // ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS
            let Some((left, right)) = line.split_once(" - ") else {
                continue;
            };
            let mount = PathBuf::from(left.split(' ').nth(4).unwrap_or(""));
            let mut r = right.split(' ');
            let (fstype, superopts) = (r.next().unwrap_or(""), r.nth(1).unwrap_or(""));
            if fstype == "cgroup"
                && superopts.split(',').any(|o| o == "blkio")
                && mount.join("blkio.throttle.write_bps_device").exists()
            {
                return Ok(Controller::V1(mount));
            }
            if fstype == "cgroup2" && v2.is_none() {
                let controllers =
                    std::fs::read_to_string(mount.join("cgroup.controllers")).unwrap_or_default();
                if controllers.split_whitespace().any(|c| c == "io") {
                    v2 = Some(mount);
                }
            }
        }
        v2.map(Controller::V2).ok_or_else(|| {
            "no blkio controller: neither a cgroup v1 `blkio` mount nor a cgroup2 mount offering `io`"
                .into()
        })
    }

    fn root(&self) -> &Path {
        match self {
            Controller::V1(p) | Controller::V2(p) => p,
        }
    }

    fn is_v2(&self) -> bool {
        matches!(self, Controller::V2(_))
    }
}

/// `MAJ:MIN` of a block device node; Err when `dev` is none.
pub fn dev_numbers(dev: &Path) -> Result<(u64, u64), String> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let meta = std::fs::metadata(dev).map_err(|e| format!("{}: {e}", dev.display()))?;
    if !meta.file_type().is_block_device() {
        return Err(format!("{} is not a block device", dev.display()));
    }
    let rdev = meta.rdev();
    Ok((libc::major(rdev).into(), libc::minor(rdev).into()))
}

/// Which way the I/O goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// Reads from the device.
    Read,
    /// Writes to the device.
    Write,
}

/// A limit on one direction of one device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Bytes per second.
    Bps(u64),
    /// I/Os per second.
    Iops(u32),
    /// No byte limit: as fast as the device goes.
    NoBps,
}

/// What the kernel counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    /// Bytes dispatched past the throttle.
    Bytes,
    /// I/Os dispatched past the throttle.
    Ios,
}

static SEQ: AtomicUsize = AtomicUsize::new(0);

/// A blkio cgroup this value created (and removes when dropped, unless it is a
/// [`handle`](Cgroup::handle)).
#[derive(Debug)]
pub struct Cgroup {
    /// Its directory.
    pub dir: PathBuf,
    ctl: Controller,
    owner: bool,
}

impl Cgroup {
    /// A new cgroup under `ctl`'s root, named `{prefix}-{pid}-{n}`.
    pub fn create(ctl: &Controller, prefix: &str) -> Result<Cgroup, String> {
        let root = ctl.root();
        if ctl.is_v2() {
            let sub = root.join("cgroup.subtree_control");
            let have = std::fs::read_to_string(&sub).unwrap_or_default();
            if !have.split_whitespace().any(|c| c == "io") {
                std::fs::write(&sub, "+io")
                    .map_err(|e| format!("cannot enable io in {}: {e}", sub.display()))?;
            }
        }
        let name = format!(
            "{prefix}-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let dir = root.join(name);
        std::fs::create_dir(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
        Ok(Cgroup {
            dir,
            ctl: ctl.clone(),
            owner: true,
        })
    }

    /// A handle on the same cgroup that leaves the directory in place when dropped.
    pub fn handle(&self) -> Cgroup {
        Cgroup {
            dir: self.dir.clone(),
            ctl: self.ctl.clone(),
            owner: false,
        }
    }

    /// Sets the limit on `dir` I/O of the device `(maj, min)`; Err names the file refused.
    pub fn try_limit(&self, (maj, min): (u64, u64), dir: Dir, limit: Limit) -> Result<(), String> {
        let (file, line) = if self.ctl.is_v2() {
            let (key, value) = match (dir, limit) {
                (Dir::Read, Limit::Bps(b)) => ("rbps", b.to_string()),
                (Dir::Write, Limit::Bps(b)) => ("wbps", b.to_string()),
                (Dir::Read, Limit::Iops(n)) => ("riops", n.to_string()),
                (Dir::Write, Limit::Iops(n)) => ("wiops", n.to_string()),
                (Dir::Read, Limit::NoBps) => ("rbps", "max".into()),
                (Dir::Write, Limit::NoBps) => ("wbps", "max".into()),
            };
            ("io.max".to_string(), format!("{maj}:{min} {key}={value}"))
        } else {
            let way = match dir {
                Dir::Read => "read",
                Dir::Write => "write",
            };
            // v1: 0 removes the rule.
            let (unit, value) = match limit {
                Limit::Bps(b) => ("bps", b),
                Limit::Iops(n) => ("iops", n.into()),
                Limit::NoBps => ("bps", 0),
            };
            (
                format!("blkio.throttle.{way}_{unit}_device"),
                format!("{maj}:{min} {value}"),
            )
        };
        std::fs::write(self.dir.join(&file), line).map_err(|e| format!("{file}: {e}"))
    }

    /// [`try_limit`](Self::try_limit), panicking when the kernel refuses.
    pub fn limit(&self, dev: (u64, u64), dir: Dir, limit: Limit) {
        self.try_limit(dev, dir, limit)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// What the cgroup's tasks have moved `dir` on the device `(maj, min)` so far, by the
    /// kernel's own count (`io.stat` rbytes/wbytes/rios/wios, or v1's
    /// `blkio.throttle.io_service_bytes` and `io_serviced`); 0 before the first I/O.
    pub fn counted(&self, (maj, min): (u64, u64), dir: Dir, what: Count) -> u64 {
        let key = format!("{maj}:{min}");
        if self.ctl.is_v2() {
            let stat = std::fs::read_to_string(self.dir.join("io.stat")).unwrap();
            let field = match (dir, what) {
                (Dir::Read, Count::Bytes) => "rbytes=",
                (Dir::Write, Count::Bytes) => "wbytes=",
                (Dir::Read, Count::Ios) => "rios=",
                (Dir::Write, Count::Ios) => "wios=",
            };
            stat.lines()
                .find(|l| l.split_whitespace().next() == Some(key.as_str()))
                .and_then(|l| {
                    l.split_whitespace()
                        .find_map(|kv| kv.strip_prefix(field))
                        .and_then(|v| v.parse().ok())
                })
                .unwrap_or(0)
        } else {
            let file = match what {
                Count::Bytes => "blkio.throttle.io_service_bytes",
                Count::Ios => "blkio.throttle.io_serviced",
            };
            let op = match dir {
                Dir::Read => "Read",
                Dir::Write => "Write",
            };
            let stat = std::fs::read_to_string(self.dir.join(file)).unwrap();
            stat.lines()
                .find_map(|l| {
                    let mut w = l.split_whitespace();
                    (w.next() == Some(key.as_str()) && w.next() == Some(op))
                        .then(|| w.next().and_then(|v| v.parse().ok()))
                        .flatten()
                })
                .unwrap_or(0)
        }
    }

    /// Moves this whole process (every thread) into the cgroup until the returned value is
    /// dropped, when it goes back to the cgroup it came from. Err says why it cannot.
    pub fn hold_this_process(&self) -> Result<Held, String> {
        let own = std::fs::read_to_string("/proc/self/cgroup").map_err(|e| e.to_string())?;
        let home = if self.ctl.is_v2() {
            own.lines()
                .find_map(|l| l.strip_prefix("0::").map(String::from))
        } else {
            // "ID:CONTROLLERS:PATH", the line whose controllers include blkio.
            own.lines().find_map(|l| {
                let f: Vec<&str> = l.splitn(3, ':').collect();
                (f.len() == 3 && f[1].split(',').any(|c| c == "blkio")).then(|| f[2].to_string())
            })
        };
        let home = self.ctl.root().join(
            home.ok_or("this process's cgroup is not in /proc/self/cgroup")?
                .trim_start_matches('/'),
        );
        join(&self.dir)?;
        Ok(Held { home })
    }
}

/// Writes this process's id into the cgroup `dir`: all its threads move there.
fn join(dir: &Path) -> Result<(), String> {
    std::fs::write(dir.join("cgroup.procs"), std::process::id().to_string())
        .map_err(|e| format!("joining {}: {e}", dir.display()))
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        if !self.owner {
            return;
        }
        // A task that just left may take a moment to be gone from it.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        eprintln!("blkio cleanup: could not remove {}", self.dir.display());
    }
}

/// This process held in a cgroup; dropped, it goes back to the cgroup it came from.
#[derive(Debug)]
pub struct Held {
    home: PathBuf,
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Err(e) = join(&self.home) {
            eprintln!("blkio cleanup: could not return: {e}");
        }
    }
}
