//! What a target directory lives on: free space (statvfs), filesystem type and
//! device (mountinfo), device model (/sys), whether it is mounted. On Windows
//! the volume APIs answer instead ([`crate::fsinfo_windows`]).

#[cfg(windows)]
pub use crate::fsinfo_windows::{device_in_use, fs_info, is_block_device, space, storage_key};
use serde::Serialize;
#[cfg(unix)]
use std::ffi::CString;
#[cfg(unix)]
use std::io;
#[cfg(unix)]
use std::os::unix::ffi::OsStrExt;
#[cfg(unix)]
use std::path::Path;
#[cfg(unix)]
use std::path::PathBuf;

/// Space on a filesystem.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Space {
    /// Total bytes.
    pub total: u64,
    /// Bytes available to unprivileged writers.
    pub available: u64,
}

/// statvfs of `path`.
#[cfg(unix)]
pub fn space(path: &Path) -> io::Result<Space> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: valid C string and out pointer.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let frsize = if st.f_frsize > 0 {
        st.f_frsize as u64
    } else {
        st.f_bsize as u64
    };
    Ok(Space {
        total: st.f_blocks as u64 * frsize,
        available: st.f_bavail as u64 * frsize,
    })
}

/// Filesystem facts for the manifest.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FsInfo {
    /// Mount point containing the path.
    pub mount_point: Option<String>,
    /// Filesystem type (`ext4`, `apfs`, `tmpfs`, …).
    pub fs_type: Option<String>,
    /// Mount source (`/dev/sda1`).
    pub source: Option<String>,
    /// Device model from /sys, where readable.
    pub device_model: Option<String>,
    /// Why direct I/O here cannot be shown to reach a disk (a network share
    /// or a RAM disk on Windows; tmpfs is told by `fs_type`), if so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_a_disk: Option<String>,
}

/// Filesystems whose "direct" I/O still goes to memory.
pub fn is_memory_fs(fs_type: &str) -> bool {
    matches!(fs_type, "tmpfs" | "ramfs" | "devtmpfs" | "hugetlbfs")
}

/// Looks up the mount containing `path` (Linux: /proc/self/mountinfo).
#[cfg(unix)]
pub fn fs_info(path: &Path) -> FsInfo {
    let canon = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let Ok(text) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return FsInfo::default();
    };
    let mut best: Option<(usize, FsInfo, String)> = None;
    for line in text.lines() {
        // id parent maj:min root mountpoint opts ... - fstype source superopts
        let (left, right) = match line.split_once(" - ") {
            Some(x) => x,
            None => continue,
        };
        let l: Vec<&str> = left.split(' ').collect();
        let r: Vec<&str> = right.split(' ').collect();
        if l.len() < 5 || r.len() < 2 {
            continue;
        }
        let mp = unescape(l[4]);
        if canon.starts_with(&mp) && best.as_ref().is_none_or(|(len, _, _)| mp.len() >= *len) {
            best = Some((
                mp.len(),
                FsInfo {
                    mount_point: Some(mp.clone()),
                    fs_type: Some(r[0].to_string()),
                    source: Some(r[1].to_string()),
                    device_model: None,
                    not_a_disk: None,
                },
                l[2].to_string(),
            ));
        }
    }
    match best {
        Some((_, mut info, majmin)) => {
            info.device_model = device_model(&majmin);
            info
        }
        None => FsInfo::default(),
    }
}

#[cfg(unix)]
fn unescape(s: &str) -> String {
    s.replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\134", "\\")
}

/// Model (and vendor) of the block device `MAJ:MIN`, or of its parent disk.
#[cfg(unix)]
pub fn device_model(majmin: &str) -> Option<String> {
    let dev = PathBuf::from(format!("/sys/dev/block/{majmin}"));
    let real = std::fs::canonicalize(&dev).ok()?;
    for dir in [real.clone(), real.parent()?.to_path_buf()] {
        let read = |name: &str| {
            std::fs::read_to_string(dir.join("device").join(name))
                .ok()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        };
        let model = read("model");
        let vendor = read("vendor");
        match (vendor, model) {
            (Some(v), Some(m)) => return Some(format!("{v} {m}")),
            (None, Some(m)) => return Some(m),
            _ => {}
        }
        if let Some(name) = dir.file_name() {
            let name = name.to_string_lossy();
            if name.starts_with("vd") {
                return Some(format!("virtio disk {name}"));
            }
        }
    }
    None
}

/// Why a block device must not be written raw, or `None` when nothing uses it.
///
/// Fails closed: a device counts as in use when it, any of its partitions or
/// a device stacked on it (device mapper, md) is mounted, used as swap or held
/// by the kernel, and an error is returned when that cannot be established
/// (no mount table, e.g. on macOS), so the caller refuses rather than guesses.
#[cfg(unix)]
pub fn device_in_use(device: &Path) -> anyhow::Result<Option<String>> {
    use anyhow::Context;
    use std::os::unix::fs::MetadataExt;
    let meta =
        std::fs::metadata(device).with_context(|| format!("cannot stat {}", device.display()))?;
    let own = dev_id(meta.rdev());
    let sys = PathBuf::from(format!("/sys/dev/block/{own}"));
    let sys = std::fs::canonicalize(&sys).with_context(|| {
        format!(
            "cannot tell whether {} is in use ({} is unreadable); refusing to write it raw",
            device.display(),
            sys.display()
        )
    })?;
    // The device itself and every partition on it (sub-directories with a `partition` file).
    let mut ids = vec![(own.clone(), sys.clone())];
    for entry in std::fs::read_dir(&sys).into_iter().flatten().flatten() {
        let dir = entry.path();
        if dir.join("partition").exists() {
            if let Ok(id) = std::fs::read_to_string(dir.join("dev")) {
                ids.push((id.trim().to_string(), dir));
            }
        }
    }
    for (id, dir) in &ids {
        let holders: Vec<String> = std::fs::read_dir(dir.join("holders"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        if !holders.is_empty() {
            return Ok(Some(format!(
                "{id} is held by {} (device mapper, RAID or LVM)",
                holders.join(", ")
            )));
        }
    }
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").with_context(|| {
        format!(
            "cannot read the mount table to check {}; refusing to write it raw",
            device.display()
        )
    })?;
    for line in mounts.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        if let (Some(id), Some(at)) = (fields.get(2), fields.get(4)) {
            if ids.iter().any(|(i, _)| i == id) {
                return Ok(Some(format!("device {id} is mounted at {}", unescape(at))));
            }
        }
    }
    let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    for src in swaps
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
    {
        if let Ok(m) = std::fs::metadata(src) {
            if ids.iter().any(|(i, _)| *i == dev_id(m.rdev())) {
                return Ok(Some(format!("{src} is in use as swap")));
            }
        }
    }
    // Last word to the kernel: an exclusive open fails with EBUSY while a
    // filesystem, swap or another exclusive user holds the device.
    let exclusive = {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_EXCL)
            .open(device)
    };
    match exclusive {
        Ok(_) => Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => Ok(Some(format!(
            "{} is busy (the kernel refuses an exclusive open)",
            device.display()
        ))),
        Err(e) => Err(e).with_context(|| format!("cannot open {}", device.display())),
    }
}

/// Whether `path` (with metadata `meta`) is a block device.
#[cfg(unix)]
pub fn is_block_device(_path: &Path, meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt;
    meta.file_type().is_block_device()
}

/// What tells two targets on one storage device apart: the device number of
/// a raw device (`rdev:`) or of the filesystem holding a directory (`dev:`).
#[cfg(unix)]
pub fn storage_key(path: &Path, raw_device: bool) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| {
        if raw_device {
            format!("rdev:{}", m.rdev())
        } else {
            format!("dev:{}", m.dev())
        }
    })
}

/// `MAJ:MIN` of a Linux `dev_t` (glibc encoding), as sysfs and mountinfo write it.
#[cfg(unix)]
fn dev_id(rdev: u64) -> String {
    let major = ((rdev >> 8) & 0xfff) | ((rdev >> 32) & !0xfff);
    let minor = (rdev & 0xff) | ((rdev >> 12) & !0xff);
    format!("{major}:{minor}")
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn root_has_space_and_a_filesystem() {
        let s = space(Path::new("/")).unwrap();
        assert!(s.total > 0 && s.available <= s.total);
        let info = fs_info(Path::new("/"));
        assert_eq!(info.mount_point.as_deref(), Some("/"));
        assert!(info.fs_type.is_some());
    }

    #[test]
    fn space_of_missing_path_is_an_error() {
        assert!(space(Path::new("/nonexistent/throttlescope")).is_err());
    }
}
