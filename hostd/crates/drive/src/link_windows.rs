//! The bus a target's drive sits on, on Windows: `IOCTL_STORAGE_QUERY_PROPERTY`
//! (`StorageDeviceProperty`) on the volume holding the path gives the storage
//! bus type (USB, NVMe, SATA, …) and the vendor and product strings. The
//! bridge's chip and the negotiated USB speed are not read on Windows, and
//! where Windows does not answer the bus is "unknown" — said, not guessed.
//! (The Linux answer comes from sysfs, [`crate::link`].)

use crate::link::none;
use hostd_records::link::LinkInfo;
use std::ffi::OsStr;
use std::os::windows::ffi::OsStrExt;
use std::path::Path;
use windows_sys::Win32::Foundation::{CloseHandle, INVALID_HANDLE_VALUE};
use windows_sys::Win32::Storage::FileSystem::{
    CreateFileW, FILE_SHARE_READ, FILE_SHARE_WRITE, OPEN_EXISTING,
};
use windows_sys::Win32::System::Ioctl::{
    PropertyStandardQuery, StorageDeviceProperty, IOCTL_STORAGE_QUERY_PROPERTY,
    STORAGE_PROPERTY_QUERY,
};
use windows_sys::Win32::System::IO::DeviceIoControl;

/// A `STORAGE_BUS_TYPE` in words, as the Linux side names buses.
pub fn bus_name(bus_type: i32) -> Option<&'static str> {
    Some(match bus_type {
        1 => "scsi",
        2 => "atapi",
        3 => "ata",
        4 => "ieee1394",
        6 => "fibre channel",
        7 => "usb",
        8 => "raid",
        9 => "iscsi",
        10 => "sas",
        11 => "sata",
        12 => "sd",
        13 => "mmc",
        14 => "virtual",
        15 => "file-backed virtual",
        16 => "storage spaces",
        17 => "nvme",
        18 => "scm",
        19 => "ufs",
        _ => return None, // 0 is BusTypeUnknown
    })
}

/// What a `STORAGE_DEVICE_DESCRIPTOR` says: bus type, vendor, product.
#[derive(Debug, PartialEq, Eq)]
pub struct Descriptor {
    /// `STORAGE_BUS_TYPE`.
    pub bus_type: i32,
    /// Vendor string, trimmed, if any.
    pub vendor: Option<String>,
    /// Product string, trimmed, if any.
    pub product: Option<String>,
}

/// Parses the bytes `IOCTL_STORAGE_QUERY_PROPERTY` returned: the fixed
/// descriptor, then NUL-terminated strings at the offsets it gives (0: none).
pub fn parse_descriptor(buf: &[u8]) -> Option<Descriptor> {
    let u32_at = |at: usize| -> Option<u32> {
        Some(u32::from_le_bytes(buf.get(at..at + 4)?.try_into().ok()?))
    };
    // Version, Size, 4 bytes of flags, then the offsets and the bus type.
    let (vendor, product) = (u32_at(12)? as usize, u32_at(16)? as usize);
    let bus_type = u32_at(28)? as i32;
    let text = |at: usize| -> Option<String> {
        if at == 0 || at >= buf.len() {
            return None;
        }
        let end = buf[at..]
            .iter()
            .position(|&b| b == 0)
            .map_or(buf.len(), |n| at + n);
        let s = String::from_utf8_lossy(&buf[at..end]).trim().to_string();
        (!s.is_empty()).then_some(s)
    };
    Some(Descriptor {
        bus_type,
        vendor: text(vendor),
        product: text(product),
    })
}

/// Asks the volume whose root is `root` (`C:\`) for its storage descriptor.
fn query(root: &str) -> Result<Descriptor, String> {
    let letter = root.trim_end_matches('\\');
    if !(letter.len() == 2 && letter.ends_with(':')) {
        return Err(format!("{root} is not a drive letter"));
    }
    let device = format!(r"\\.\{letter}");
    let wide: Vec<u16> = OsStr::new(&device)
        .encode_wide()
        .chain(std::iter::once(0))
        .collect();
    // SAFETY: a NUL-terminated name; no access rights are needed for this query.
    let h = unsafe {
        CreateFileW(
            wide.as_ptr(),
            0,
            FILE_SHARE_READ | FILE_SHARE_WRITE,
            std::ptr::null(),
            OPEN_EXISTING,
            0,
            std::ptr::null_mut(),
        )
    };
    if h == INVALID_HANDLE_VALUE {
        return Err(format!(
            "cannot open {device}: {}",
            std::io::Error::last_os_error()
        ));
    }
    let query = STORAGE_PROPERTY_QUERY {
        PropertyId: StorageDeviceProperty,
        QueryType: PropertyStandardQuery,
        AdditionalParameters: [0],
    };
    let mut buf = vec![0u8; 1024];
    let mut got = 0u32;
    // SAFETY: our handle, the query and an output buffer of the sizes given.
    let ok = unsafe {
        DeviceIoControl(
            h,
            IOCTL_STORAGE_QUERY_PROPERTY,
            (&query as *const STORAGE_PROPERTY_QUERY).cast(),
            std::mem::size_of::<STORAGE_PROPERTY_QUERY>() as u32,
            buf.as_mut_ptr().cast(),
            buf.len() as u32,
            &mut got,
            std::ptr::null_mut(),
        )
    };
    let err = std::io::Error::last_os_error();
    // SAFETY: closed once.
    unsafe { CloseHandle(h) };
    if ok == 0 {
        return Err(format!(
            "{device} does not say (IOCTL_STORAGE_QUERY_PROPERTY: {err})"
        ));
    }
    buf.truncate(got as usize);
    parse_descriptor(&buf)
        .ok_or_else(|| format!("{device}: a storage descriptor too short to read"))
}

/// The bus of the drive holding `path`, or "unknown" with the reason.
pub fn link_for_path(path: &Path) -> LinkInfo {
    let Some(root) = hostd_workload::fsinfo_windows::volume_root(path) else {
        return none(format!(
            "bus unknown: no volume found for {}",
            path.display()
        ));
    };
    match query(&root) {
        Ok(d) => match bus_name(d.bus_type) {
            Some(bus) => {
                let letter = root.trim_end_matches('\\');
                let disks = hostd_workload::rawdisk_windows::disks_of(&format!(r"\\.\{letter}"));
                let name = [d.vendor.as_deref(), d.product.as_deref()]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join(" ");
                LinkInfo {
                    block: smartctl_disk(disks.ok().flatten().as_deref().unwrap_or(&[])),
                    bus: bus.into(),
                    text: format!(
                        "{bus} {name} (volume {root}; the bridge and the negotiated link speed are not read on Windows)"
                    ),
                    ..Default::default()
                }
            }
            None => none(format!(
                "bus unknown: Windows gives bus type {} for {root}",
                d.bus_type
            )),
        },
        Err(why) => none(format!("bus unknown: {why}")),
    }
}

/// The drive's name for `smartctl` (`pdN`: smartctl's `/dev/pdN` is `\\.\PhysicalDriveN`)
/// when the volume lies on exactly one disk; a volume spanning disks names none.
fn smartctl_disk(disks: &[u32]) -> Option<String> {
    match disks {
        [n] => Some(format!("pd{n}")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smartctl_names_the_one_disk_a_volume_lies_on_and_no_disk_of_a_spanned_one() {
        assert_eq!(smartctl_disk(&[2]).as_deref(), Some("pd2"));
        assert_eq!(smartctl_disk(&[1, 2]), None);
        assert_eq!(smartctl_disk(&[]), None);
    }

    /// A descriptor as Windows lays it out: USB, "Samsung" / "PSSD T7".
    fn usb_descriptor() -> Vec<u8> {
        let mut b = vec![0u8; 64];
        b[0..4].copy_from_slice(&1u32.to_le_bytes()); // Version
        b[4..8].copy_from_slice(&64u32.to_le_bytes()); // Size
        b[12..16].copy_from_slice(&40u32.to_le_bytes()); // VendorIdOffset
        b[16..20].copy_from_slice(&48u32.to_le_bytes()); // ProductIdOffset
        b[28..32].copy_from_slice(&7u32.to_le_bytes()); // BusType: USB
        b[40..48].copy_from_slice(b"Samsung\0");
        b[48..56].copy_from_slice(b"PSSD T7 ");
        b
    }

    #[test]
    fn a_usb_descriptor_reads_as_usb_with_its_names() {
        let d = parse_descriptor(&usb_descriptor()).unwrap();
        assert_eq!(bus_name(d.bus_type), Some("usb"));
        assert_eq!(d.vendor.as_deref(), Some("Samsung"));
        assert_eq!(d.product.as_deref(), Some("PSSD T7"));
        assert_eq!(bus_name(17), Some("nvme"));
        assert_eq!(bus_name(0), None);
    }

    #[test]
    fn a_short_descriptor_is_no_answer() {
        assert_eq!(parse_descriptor(&usb_descriptor()[..20]), None);
    }

    #[test]
    fn the_temp_dir_gets_a_bus_or_says_unknown() {
        let l = link_for_path(&std::env::temp_dir());
        assert!(
            l.bus != "none" || l.text.starts_with("bus unknown: "),
            "{l:?}"
        );
    }
}
