//! `--raw-device` on Windows: `\\.\PhysicalDriveN`. A disk that holds a
//! volume is refused, naming the volume: every volume Windows knows
//! (`FindFirstVolumeW`/`FindNextVolumeW`) is asked which disks it spans
//! (`IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS`) and where it is mounted
//! (`GetVolumePathNamesForVolumeNameW`). Fails closed: a volume that cannot
//! be asked is an error, not a pass. The size comes from
//! `IOCTL_DISK_GET_LENGTH_INFO`.

use anyhow::{bail, Context};
use std::ffi::OsStr;
use std::fs::File;
use std::os::windows::ffi::OsStrExt;
use std::os::windows::io::AsRawHandle;
use std::path::Path;
use windows_sys::Win32::Foundation::{
    CloseHandle, ERROR_INVALID_FUNCTION, ERROR_NOT_READY, ERROR_NO_MORE_FILES, HANDLE,
    INVALID_HANDLE_VALUE,
};
use windows_sys::Win32::Storage::FileSystem::{
    CreateFileW, FindFirstVolumeW, FindNextVolumeW, FindVolumeClose,
    GetVolumePathNamesForVolumeNameW, FILE_SHARE_READ, FILE_SHARE_WRITE,
    IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS, OPEN_EXISTING,
};
use windows_sys::Win32::System::Ioctl::{GET_LENGTH_INFORMATION, IOCTL_DISK_GET_LENGTH_INFO};
use windows_sys::Win32::System::IO::DeviceIoControl;

/// N of `\\.\PhysicalDriveN` (any case), or `None` for any other path.
pub fn disk_number(path: &Path) -> Option<u32> {
    let s = path.to_string_lossy().to_ascii_lowercase();
    s.strip_prefix(r"\\.\physicaldrive")?.parse().ok()
}

fn wide(s: &str) -> Vec<u16> {
    OsStr::new(s)
        .encode_wide()
        .chain(std::iter::once(0))
        .collect()
}

fn text(buf: &[u16]) -> String {
    let end = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
    String::from_utf16_lossy(&buf[..end])
}

/// The disks `volume` (`\\?\Volume{…}\`, or a drive letter's `\\.\E:`) lies on; `None`
/// when it is no disk volume (a CD drive without a disc, a virtual one that says so).
pub fn disks_of(volume: &str) -> anyhow::Result<Option<Vec<u32>>> {
    let name = wide(volume.trim_end_matches('\\'));
    // SAFETY: a NUL-terminated name; no access rights are needed for the query.
    let h: HANDLE = unsafe {
        CreateFileW(
            name.as_ptr(),
            0,
            FILE_SHARE_READ | FILE_SHARE_WRITE,
            std::ptr::null(),
            OPEN_EXISTING,
            0,
            std::ptr::null_mut(),
        )
    };
    if h == INVALID_HANDLE_VALUE {
        return Err(std::io::Error::last_os_error())
            .with_context(|| format!("cannot open {volume}"));
    }
    // Room for 32 extents: (u32 count + padding) then 24 bytes each.
    let mut buf = vec![0u64; (8 + 32 * 24) / 8];
    let mut got = 0u32;
    // SAFETY: our handle and an output buffer of the size given.
    let ok = unsafe {
        DeviceIoControl(
            h,
            IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS,
            std::ptr::null(),
            0,
            buf.as_mut_ptr().cast(),
            (buf.len() * 8) as u32,
            &mut got,
            std::ptr::null_mut(),
        )
    };
    let err = std::io::Error::last_os_error();
    // SAFETY: closed once.
    unsafe { CloseHandle(h) };
    if ok == 0 {
        return match err.raw_os_error().map(|c| c as u32) {
            Some(ERROR_INVALID_FUNCTION | ERROR_NOT_READY) => Ok(None),
            _ => Err(err).with_context(|| format!("cannot ask {volume} which disks it is on")),
        };
    }
    let bytes: Vec<u8> = buf.iter().flat_map(|w| w.to_le_bytes()).collect();
    let count = u32::from_le_bytes(bytes[0..4].try_into().expect("4 bytes")) as usize;
    // VOLUME_DISK_EXTENTS: the count, padding to 8, then DISK_EXTENT { DiskNumber u32, pad, i64, i64 }.
    Ok(Some(
        (0..count.min(32))
            .map(|i| {
                u32::from_le_bytes(bytes[8 + i * 24..12 + i * 24].try_into().expect("4 bytes"))
            })
            .collect(),
    ))
}

/// Where `volume` is mounted (drive letters, folders); empty if nowhere.
fn mount_points(volume: &str) -> Vec<String> {
    let name = wide(volume);
    let mut buf = vec![0u16; 4096];
    let mut len = 0u32;
    // SAFETY: a NUL-terminated name and a buffer of the length given.
    let ok = unsafe {
        GetVolumePathNamesForVolumeNameW(
            name.as_ptr(),
            buf.as_mut_ptr(),
            buf.len() as u32,
            &mut len,
        )
    };
    if ok == 0 {
        return Vec::new();
    }
    buf.split(|&c| c == 0)
        .map(String::from_utf16_lossy)
        .filter(|s| !s.is_empty())
        .collect()
}

/// Why the physical drive `device` must not be written raw (a volume on it,
/// named), `None` when no volume lies on it; an error when that cannot be told.
pub fn device_in_use(device: &Path) -> anyhow::Result<Option<String>> {
    let Some(n) = disk_number(device) else {
        bail!(
            r"{} is not a physical drive (\\.\PhysicalDriveN)",
            device.display()
        );
    };
    let mut buf = [0u16; 260];
    // SAFETY: a buffer of the length given.
    let find = unsafe { FindFirstVolumeW(buf.as_mut_ptr(), buf.len() as u32) };
    if find == INVALID_HANDLE_VALUE {
        return Err(std::io::Error::last_os_error())
            .context("cannot list the volumes; refusing to write the drive raw");
    }
    let mut found = None;
    let mut failure = None;
    loop {
        let volume = text(&buf);
        match disks_of(&volume) {
            Ok(Some(disks)) if disks.contains(&n) => {
                let at = mount_points(&volume);
                found = Some(if at.is_empty() {
                    format!("volume {volume} (no drive letter) is on PhysicalDrive{n}")
                } else {
                    format!("volume {} ({volume}) is on PhysicalDrive{n}", at.join(", "))
                });
                break;
            }
            Ok(_) => {}
            Err(e) => failure = Some(e),
        }
        // SAFETY: our search handle and a buffer of the length given.
        if unsafe { FindNextVolumeW(find, buf.as_mut_ptr(), buf.len() as u32) } == 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(ERROR_NO_MORE_FILES as i32) && failure.is_none() {
                failure = Some(anyhow::Error::new(e).context("cannot list the volumes"));
            }
            break;
        }
    }
    // SAFETY: closed once.
    unsafe { FindVolumeClose(find) };
    match (found, failure) {
        (Some(why), _) => Ok(Some(why)),
        (None, Some(e)) => Err(e.context(format!(
            "cannot tell whether PhysicalDrive{n} holds a volume; refusing to write it raw"
        ))),
        (None, None) => Ok(None),
    }
}

/// Bytes on the physical drive open as `f`.
pub fn device_size(f: &File) -> std::io::Result<u64> {
    let mut info = GET_LENGTH_INFORMATION { Length: 0 };
    let mut got = 0u32;
    // SAFETY: an open handle and an output struct of the size given.
    let ok = unsafe {
        DeviceIoControl(
            f.as_raw_handle(),
            IOCTL_DISK_GET_LENGTH_INFO,
            std::ptr::null(),
            0,
            (&mut info as *mut GET_LENGTH_INFORMATION).cast(),
            std::mem::size_of::<GET_LENGTH_INFORMATION>() as u32,
            &mut got,
            std::ptr::null_mut(),
        )
    };
    if ok == 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(info.Length as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn physical_drive_numbers_are_read_and_other_paths_have_none() {
        assert_eq!(disk_number(Path::new(r"\\.\PhysicalDrive3")), Some(3));
        assert_eq!(disk_number(Path::new(r"\\.\physicaldrive12")), Some(12));
        assert_eq!(disk_number(Path::new(r"C:\")), None);
        assert_eq!(disk_number(Path::new(r"\\.\PhysicalDriveX")), None);
    }

    #[test]
    fn a_path_that_is_no_physical_drive_is_refused() {
        let e = device_in_use(Path::new(r"C:\data")).unwrap_err();
        assert!(e.to_string().contains("not a physical drive"), "{e:#}");
    }
}
