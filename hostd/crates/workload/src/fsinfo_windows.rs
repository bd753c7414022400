//! What a target directory lives on, on Windows: free space
//! (`GetDiskFreeSpaceExW`), the volume holding it (`GetVolumePathNameW`), its
//! filesystem and serial number (`GetVolumeInformationW`) and the kind of
//! drive (`GetDriveTypeW`: a network share or a RAM disk is no local disk).

use crate::fsinfo::{FsInfo, Space};
use std::ffi::OsStr;
use std::io;
use std::os::windows::ffi::OsStrExt;
use std::path::Path;
use windows_sys::Win32::Storage::FileSystem::{
    GetDiskFreeSpaceExW, GetDriveTypeW, GetVolumeInformationW, GetVolumePathNameW,
};

/// `GetDriveTypeW`: a network share.
const DRIVE_REMOTE: u32 = 4;
/// `GetDriveTypeW`: a RAM disk.
const DRIVE_RAMDISK: u32 = 6;

/// `s` as a NUL-terminated UTF-16 string.
fn wide(s: &OsStr) -> Vec<u16> {
    s.encode_wide().chain(std::iter::once(0)).collect()
}

/// The text of a NUL-terminated UTF-16 buffer.
fn text(buf: &[u16]) -> String {
    let end = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
    String::from_utf16_lossy(&buf[..end])
}

/// Free and total bytes of the volume holding `path`.
pub fn space(path: &Path) -> io::Result<Space> {
    let p = wide(path.as_os_str());
    let (mut available, mut total, mut free) = (0u64, 0u64, 0u64);
    // SAFETY: a NUL-terminated path and three out pointers.
    if unsafe { GetDiskFreeSpaceExW(p.as_ptr(), &mut available, &mut total, &mut free) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Space { total, available })
}

/// The root of the volume holding `path` (`C:\`, a mount folder, `\\server\share\`).
pub fn volume_root(path: &Path) -> Option<String> {
    let p = wide(path.as_os_str());
    let mut buf = [0u16; 1024];
    // SAFETY: a NUL-terminated path and a buffer of the length given.
    if unsafe { GetVolumePathNameW(p.as_ptr(), buf.as_mut_ptr(), buf.len() as u32) } == 0 {
        return None;
    }
    Some(text(&buf))
}

/// Filesystem name and serial number of the volume at `root`.
fn volume_info(root: &str) -> Option<(String, u32)> {
    let r = wide(OsStr::new(root));
    let mut fs = [0u16; 64];
    let mut serial = 0u32;
    // SAFETY: a NUL-terminated root, no label buffer, out pointers and a name buffer of the length given.
    let ok = unsafe {
        GetVolumeInformationW(
            r.as_ptr(),
            std::ptr::null_mut(),
            0,
            &mut serial,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            fs.as_mut_ptr(),
            fs.len() as u32,
        )
    };
    (ok != 0).then(|| (text(&fs), serial))
}

/// The volume holding `path`: its root, filesystem, and whether it is a
/// network share or RAM disk. The device model is not read (left unknown).
pub fn fs_info(path: &Path) -> FsInfo {
    let Some(root) = volume_root(path) else {
        return FsInfo::default();
    };
    let r = wide(OsStr::new(&root));
    // SAFETY: a NUL-terminated root path.
    let kind = unsafe { GetDriveTypeW(r.as_ptr()) };
    let not_a_disk = match kind {
        DRIVE_REMOTE => Some(format!("{root} is a network share")),
        DRIVE_RAMDISK => Some(format!("{root} is a RAM disk")),
        _ => None,
    };
    FsInfo {
        fs_type: volume_info(&root).map(|(fs, _)| fs),
        source: Some(root.clone()),
        mount_point: Some(root),
        device_model: None,
        not_a_disk,
    }
}

/// Whether `path` names a physical drive (`\\.\PhysicalDriveN`).
pub fn is_block_device(path: &Path, _meta: &std::fs::Metadata) -> bool {
    path.to_string_lossy()
        .to_ascii_lowercase()
        .starts_with(r"\\.\physicaldrive")
}

/// What tells two targets on one volume apart: the volume's serial number.
pub fn storage_key(path: &Path, raw_device: bool) -> Option<String> {
    if raw_device {
        return Some(format!("raw:{}", path.display()));
    }
    let root = volume_root(path)?;
    volume_info(&root).map(|(_, serial)| format!("vol:{serial:08x}"))
}

pub use crate::rawdisk_windows::device_in_use;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_temp_dir_has_space_a_volume_and_a_filesystem() {
        let dir = std::env::temp_dir();
        let s = space(&dir).unwrap();
        assert!(s.total > 0 && s.available <= s.total);
        let info = fs_info(&dir);
        let root = info.mount_point.expect("a volume root");
        assert!(
            dir.starts_with(&root),
            "{} is not under {root}",
            dir.display()
        );
        assert!(info.fs_type.is_some_and(|f| !f.is_empty()));
        assert!(storage_key(&dir, false).unwrap().starts_with("vol:"));
    }

    #[test]
    fn space_of_missing_path_is_an_error() {
        assert!(space(Path::new(r"Q:\nonexistent\throttlescope")).is_err());
    }

    #[test]
    fn physical_drives_are_block_devices_and_directories_are_not() {
        let meta = std::fs::metadata(std::env::temp_dir()).unwrap();
        assert!(is_block_device(Path::new(r"\\.\PhysicalDrive1"), &meta));
        assert!(!is_block_device(&std::env::temp_dir(), &meta));
    }
}
