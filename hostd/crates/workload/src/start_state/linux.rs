//! Linux: `FITRIM` on a mounted filesystem (what `fstrim` does), `BLKDISCARD` on a raw
//! device (what `blkdiscard` does), and the device's counters from sysfs
//! (`/sys/class/block/NAME/stat`).

use super::{TrimError, Trimmed};
use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// `struct fstrim_range` of `<linux/fs.h>`.
#[repr(C)]
struct FstrimRange {
    start: u64,
    len: u64,
    minlen: u64,
}

/// `FITRIM = _IOWR('X', 121, struct fstrim_range)`.
const FITRIM: libc::c_ulong = 0xC018_5879;
/// `BLKDISCARD = _IO(0x12, 119)`.
const BLKDISCARD: libc::c_ulong = 0x1277;
/// `BLKGETSIZE64 = _IOR(0x12, 114, size_t)`.
const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;

/// Trims the free space of the filesystem `path` lies on.
pub(crate) fn trim_free_space(path: &Path) -> Result<Trimmed, TrimError> {
    let f = File::open(path)
        .map_err(|e| TrimError::Failed("FITRIM", format!("cannot open {}: {e}", path.display())))?;
    let mut range = FstrimRange {
        start: 0,
        len: u64::MAX,
        minlen: 0,
    };
    // SAFETY: FITRIM reads and writes one fstrim_range, which lives across the call.
    if unsafe { libc::ioctl(f.as_raw_fd(), FITRIM as _, &mut range) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(libc::EOPNOTSUPP) | Some(libc::ENOTTY) => TrimError::NotAvailable(format!(
                "the filesystem of {} or its device does not support discard (FITRIM: {e})",
                path.display()
            )),
            Some(libc::EPERM) | Some(libc::EACCES) => TrimError::Failed(
                "FITRIM",
                format!("{e}: trimming needs root (CAP_SYS_ADMIN)"),
            ),
            _ => TrimError::Failed("FITRIM", format!("{}: {e}", path.display())),
        });
    }
    Ok(Trimmed {
        method: "FITRIM",
        bytes: Some(range.len),
    })
}

/// Discards every block of the raw device `path` (its data is gone).
pub(crate) fn discard_device(path: &Path) -> Result<Trimmed, TrimError> {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| {
            TrimError::Failed("BLKDISCARD", format!("cannot open {}: {e}", path.display()))
        })?;
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64, which lives across the call.
    if unsafe { libc::ioctl(f.as_raw_fd(), BLKGETSIZE64 as _, &mut size) } != 0 {
        return Err(TrimError::NotAvailable(format!(
            "{} is not a block device ({})",
            path.display(),
            std::io::Error::last_os_error()
        )));
    }
    let range: [u64; 2] = [0, size];
    // SAFETY: BLKDISCARD reads two u64 (start, length), which live across the call.
    if unsafe { libc::ioctl(f.as_raw_fd(), BLKDISCARD as _, &range) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(libc::EOPNOTSUPP) | Some(libc::ENOTTY) => TrimError::NotAvailable(format!(
                "{} does not support discard (BLKDISCARD: {e})",
                path.display()
            )),
            _ => TrimError::Failed("BLKDISCARD", format!("{}: {e}", path.display())),
        });
    }
    Ok(Trimmed {
        method: "BLKDISCARD",
        bytes: Some(size),
    })
}

/// The device's I/O counters (`/sys/class/block/NAME/stat`: reads, writes, sectors,
/// in-flight…), as one line to compare.
pub(crate) fn io_counters(device: &Path) -> Result<String, String> {
    let real = std::fs::canonicalize(device)
        .map_err(|e| format!("cannot resolve the device {}: {e}", device.display()))?;
    let name = real
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let stat = Path::new("/sys/class/block").join(&name).join("stat");
    std::fs::read_to_string(&stat)
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .map_err(|e| {
            format!(
                "no I/O counters for {} ({}: {e})",
                device.display(),
                stat.display()
            )
        })
}
