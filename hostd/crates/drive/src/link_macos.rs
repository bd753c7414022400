//! The link a target's drive sits on, on macOS: `system_profiler -json SPUSBDataType` lists
//! the USB tree with each mass-storage device's media (`Media[].bsd_name`); the device whose
//! medium is the target's whole disk is its bridge. macOS reports the negotiated speed as a
//! word (`device_speed`), the ids, names and the location; it does not report the speeds a
//! device supports, so no "slower than it supports" warning can be made here (Linux reads
//! them from the BOS descriptor). A disk not in the USB tree (internal, Thunderbolt/PCIe,
//! a disk image) is said to be so. An APFS volume's disk is a synthesized container: its
//! physical store (`diskutil info`, "APFS Physical Store") is the disk looked up. macOS 26
//! lists USB under `SPUSBHostDataType` instead, which is not read yet: the link then says so.
//!
//! The parser is plain Rust built and tested on every platform, from a recorded Mac's
//! output (`fixtures/system_profiler/usb-recorded-m1pro-mudita.json`) and a hand-written
//! one for the hub and 10 Gb/s cases (`usb-storage.json`; the fixtures' README says where
//! each comes from); only [`link_for_path`] runs the tools.

use crate::link::{none, usb_text};
use hostd_records::link::{LinkInfo, UsbLink};
use serde_json::Value;

/// Mb/s of a `device_speed` word; None for one not known.
fn speed_mbps(word: &str) -> Option<f64> {
    Some(match word {
        "low_speed" => 1.5,
        "full_speed" => 12.0,
        "high_speed" => 480.0,
        "super_speed" => 5000.0,
        "super_speed_plus" => 10000.0,
        _ => return None,
    })
}

/// "0x174c  (ASMedia Technology Inc.)" → ("174c", Some("ASMedia Technology Inc.")); Apple's
/// own devices say `apple_vendor_id` (05ac).
fn id_and_name(s: &str) -> (String, Option<String>) {
    if s == "apple_vendor_id" {
        return ("05ac".into(), Some("Apple Inc.".into()));
    }
    let (id, rest) = s.split_once(char::is_whitespace).unwrap_or((s, ""));
    let id = id.trim_start_matches("0x").to_lowercase();
    let name = rest
        .trim()
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .map(str::to_string);
    (id, name)
}

fn text(item: &Value, key: &str) -> Option<String> {
    item.get(key)
        .and_then(Value::as_str)
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Whether `item` holds the medium `disk` (a whole-disk BSD name such as `disk4`).
fn holds(item: &Value, disk: &str) -> bool {
    item.get("Media")
        .and_then(Value::as_array)
        .is_some_and(|media| {
            media
                .iter()
                .any(|m| m.get("bsd_name").and_then(Value::as_str) == Some(disk))
        })
}

/// Depth-first search of `items` for the device holding `disk`; `parent` is the hub or bus
/// the items hang from.
fn find<'a>(
    items: &'a [Value],
    parent: Option<&'a Value>,
    disk: &str,
) -> Option<(&'a Value, Option<&'a Value>)> {
    for item in items {
        if holds(item, disk) {
            return Some((item, parent));
        }
        if let Some(children) = item.get("_items").and_then(Value::as_array) {
            if let Some(found) = find(children, Some(item), disk) {
                return Some(found);
            }
        }
    }
    None
}

/// The USB device (bridge) holding whole disk `disk` in `system_profiler -json
/// SPUSBDataType` output, or None when the disk is not in the USB tree. Errors name what
/// in the text is not that output.
pub fn usb_link(json: &str, disk: &str) -> Result<Option<UsbLink>, String> {
    let v: Value = serde_json::from_str(json)
        .map_err(|e| format!("system_profiler output is not JSON: {e}"))?;
    let buses = v.get("SPUSBDataType").and_then(Value::as_array).ok_or(
        "system_profiler has no SPUSBDataType list (macOS 26 and later list USB devices \
             under SPUSBHostDataType, which hostd does not read yet)",
    )?;
    let Some((dev, parent)) = find(buses, None, disk) else {
        return Ok(None);
    };
    let (vendor_id, vendor_name) = text(dev, "vendor_id").map_or((None, None), |s| {
        let (id, name) = id_and_name(&s);
        (Some(id), name)
    });
    // A bus (the top level) has a host controller and no speed: only a hub's counts.
    let upstream = parent.and_then(|p| text(p, "device_speed"));
    Ok(Some(UsbLink {
        bus_path: text(dev, "location_id")
            .map(|l| l.split_whitespace().next().unwrap_or_default().to_string())
            .unwrap_or_default(),
        speed_mbps: text(dev, "device_speed").and_then(|w| speed_mbps(&w)),
        version: None,
        vendor_id,
        product_id: text(dev, "product_id").map(|p| id_and_name(&p).0),
        manufacturer: text(dev, "manufacturer").or(vendor_name),
        product: text(dev, "_name"),
        driver: None,
        supported_mbps: None,
        upstream_speed_mbps: upstream.and_then(|w| speed_mbps(&w)),
        rx_lanes: None,
    }))
}

/// What the link record says for whole disk `disk` given `system_profiler` output.
pub fn link_info(json: &str, disk: &str) -> LinkInfo {
    let mut link = match usb_link(json, disk) {
        Ok(Some(usb)) => LinkInfo {
            bus: "usb".into(),
            text: format!("{disk}: {}", usb_text(&usb)),
            usb: Some(usb),
            ..Default::default()
        },
        Ok(None) => none(format!(
            "{disk}: not found in system_profiler's USB tree (internal, Thunderbolt/PCIe or a \
             disk image)"
        )),
        Err(e) => none(format!("{disk}: link unknown ({e})")),
    };
    link.block = Some(disk.to_string());
    link
}

/// "/dev/disk4s2" → "disk4": the whole disk of a BSD device or slice name.
pub fn whole_disk(dev: &str) -> Option<String> {
    let name = dev.strip_prefix("/dev/").unwrap_or(dev);
    let name = name
        .strip_prefix('r')
        .filter(|n| n.starts_with("disk"))
        .unwrap_or(name);
    let digits = name.strip_prefix("disk")?;
    let n: String = digits.chars().take_while(char::is_ascii_digit).collect();
    (!n.is_empty()).then(|| format!("disk{n}"))
}

/// The physical store of an APFS volume from `diskutil info` text ("APFS Physical Store:
/// disk4s2" → "disk4"), None for other volumes.
pub fn apfs_physical_disk(diskutil_info: &str) -> Option<String> {
    diskutil_info.lines().find_map(|l| {
        let (key, value) = l.split_once(':')?;
        (key.trim() == "APFS Physical Store")
            .then(|| whole_disk(value.trim()))
            .flatten()
    })
}

/// The link of the disk holding `path`: its whole disk from `statfs` (through its APFS
/// physical store), looked up in `system_profiler -json SPUSBDataType` (a second or so).
#[cfg(target_os = "macos")]
pub fn link_for_path(path: &std::path::Path) -> LinkInfo {
    use std::os::unix::ffi::OsStrExt as _;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return none(format!("{}: path holds a NUL byte", path.display()));
    };
    // SAFETY: statfs fills the struct it is given; the path is NUL-terminated.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return none(format!(
            "cannot statfs {}: {}",
            path.display(),
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: f_mntfromname is a NUL-terminated array filled by statfs.
    let from = unsafe { std::ffi::CStr::from_ptr(st.f_mntfromname.as_ptr()) }
        .to_string_lossy()
        .into_owned();
    let Some(mut disk) = whole_disk(&from) else {
        return none(format!(
            "{} is on {from}, not a disk (a network or virtual filesystem)",
            path.display()
        ));
    };
    if let Ok(out) = std::process::Command::new("diskutil")
        .args(["info", &from])
        .output()
    {
        if let Some(store) = apfs_physical_disk(&String::from_utf8_lossy(&out.stdout)) {
            disk = store;
        }
    }
    match std::process::Command::new("system_profiler")
        .args(["-json", "SPUSBDataType"])
        .output()
    {
        Ok(out) if out.status.success() => link_info(&String::from_utf8_lossy(&out.stdout), &disk),
        Ok(out) => none(format!(
            "{disk}: system_profiler failed ({})",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(e) => none(format!("{disk}: cannot run system_profiler: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_fixture(name: &str) -> String {
        let p = format!(
            "{}/../../../fixtures/system_profiler/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
    }

    /// The hand-written tree (hub, 10 Gb/s bridge).
    fn fixture() -> String {
        read_fixture("usb-storage.json")
    }

    /// Recorded on an Apple-silicon Mac (see the fixtures' README).
    fn recorded() -> String {
        read_fixture("usb-recorded-m1pro-mudita.json")
    }

    #[test]
    fn a_recorded_macs_mass_storage_device_is_found_with_what_macos_says() {
        let u = usb_link(&recorded(), "disk8").unwrap().unwrap();
        assert_eq!(u.bus_path, "0x02100000");
        assert_eq!(u.speed_mbps, Some(480.0));
        assert_eq!(u.upstream_speed_mbps, None, "on the bus, behind no hub");
        // "0x3310" has no name in parentheses: the manufacturer string stands.
        assert_eq!(
            (u.vendor_id.as_deref(), u.product_id.as_deref()),
            (Some("3310"), Some("0103"))
        );
        assert_eq!(u.manufacturer.as_deref(), Some("Mudita"));
        assert_eq!(u.product.as_deref(), Some("Mudita Harmony (MSC mode)"));
        assert_eq!((u.supported_mbps, u.version.as_deref()), (None, None));
        let l = link_info(&recorded(), "disk8");
        assert_eq!((l.bus.as_str(), l.block.as_deref()), ("usb", Some("disk8")));
        assert!(
            l.text.starts_with("disk8: ") && l.text.contains("3310:0103"),
            "{}",
            l.text
        );
    }

    #[test]
    fn a_recorded_macs_volumes_are_not_disks_and_its_hub_devices_hold_no_media() {
        // A volume's BSD name is looked up through its whole disk.
        let disk = whole_disk("/dev/disk8s3").unwrap();
        assert_eq!(
            usb_link(&recorded(), &disk)
                .unwrap()
                .unwrap()
                .product
                .as_deref(),
            Some("Mudita Harmony (MSC mode)")
        );
        // The Media list's volumes are not media: disk8s1 is not a whole disk there.
        assert_eq!(usb_link(&recorded(), "disk8s1").unwrap(), None);
        // The internal disk is not in the USB tree; the monitor's hub holds nothing.
        assert_eq!(link_info(&recorded(), "disk0").bus, "none");
        assert_eq!(usb_link(&recorded(), "disk9").unwrap(), None);
    }

    #[test]
    fn a_bridge_behind_a_hub_is_found_by_its_medium() {
        let u = usb_link(&fixture(), "disk4").unwrap().unwrap();
        assert_eq!(u.bus_path, "0x01120000");
        assert_eq!(u.speed_mbps, Some(10000.0));
        assert_eq!(u.upstream_speed_mbps, Some(10000.0));
        assert_eq!(
            (u.vendor_id.as_deref(), u.product_id.as_deref()),
            (Some("174c"), Some("2362"))
        );
        assert_eq!(u.manufacturer.as_deref(), Some("ASMedia"));
        assert_eq!(u.product.as_deref(), Some("ASM2362 NVMe bridge"));
        // macOS does not say what the device supports: nothing is made up.
        assert_eq!((u.supported_mbps, u.version.as_deref()), (None, None));
        let l = link_info(&fixture(), "disk4");
        assert_eq!(l.bus, "usb");
        assert!(
            l.text.contains("at 10 Gb/s") && l.text.contains("174c:2362"),
            "{}",
            l.text
        );
        assert!(l.warnings.is_empty());
    }

    #[test]
    fn a_device_on_the_bus_has_no_hub_speed_and_the_vendor_name_stands_in() {
        let u = usb_link(&fixture(), "disk6").unwrap().unwrap();
        assert_eq!(u.speed_mbps, Some(480.0));
        assert_eq!(u.upstream_speed_mbps, None, "a bus is not a hub");
        assert_eq!(u.manufacturer.as_deref(), Some("JMicron Technology Corp."));
    }

    #[test]
    fn a_disk_not_in_the_usb_tree_and_bad_output_are_said_so() {
        let l = link_info(&fixture(), "disk0");
        assert_eq!(l.bus, "none");
        assert!(
            l.text.contains("not found in system_profiler's USB tree"),
            "{}",
            l.text
        );
        // disk4 is not disk40.
        assert_eq!(usb_link(&fixture(), "disk40").unwrap(), None);
        let e = link_info("{}", "disk4");
        assert!(
            e.text.contains("no SPUSBDataType") && e.text.contains("SPUSBHostDataType"),
            "{}",
            e.text
        );
        assert!(link_info("Error", "disk4").text.contains("not JSON"));
    }

    #[test]
    fn whole_disks_from_device_names() {
        assert_eq!(whole_disk("/dev/disk4s2").as_deref(), Some("disk4"));
        assert_eq!(whole_disk("/dev/rdisk12").as_deref(), Some("disk12"));
        assert_eq!(whole_disk("disk3s1s1").as_deref(), Some("disk3"));
        assert_eq!(whole_disk("map auto_home"), None);
        assert_eq!(whole_disk("/dev/disk"), None);
    }

    #[test]
    fn an_apfs_volume_is_looked_up_by_its_physical_store() {
        // Hand-written in `diskutil info`'s layout: no citable recorded output was found.
        let info = "   Device Identifier:         disk5s1\n   Part of Whole:             disk5\n   APFS Physical Store:       disk4s2\n   File System Personality:   APFS\n";
        assert_eq!(apfs_physical_disk(info).as_deref(), Some("disk4"));
        let hfs = "   Device Identifier:         disk6s2\n   File System Personality:   HFS+\n";
        assert_eq!(apfs_physical_disk(hfs), None);
    }

    #[test]
    fn ids_and_names() {
        assert_eq!(
            id_and_name("0x05E3  (Genesys Logic, Inc.)"),
            ("05e3".into(), Some("Genesys Logic, Inc.".into()))
        );
        assert_eq!(id_and_name("0x0917"), ("0917".into(), None));
        assert_eq!(id_and_name("apple_vendor_id").0, "05ac");
        assert_eq!(speed_mbps("super_speed"), Some(5000.0));
        assert_eq!(speed_mbps("warp_speed"), None);
    }
}
