//! The link a target's drive sits on (manifest `targets[].link`): USB bridge, PCIe function,
//! Thunderbolt devices, read from Linux sysfs by `hostd_drive::link`
//! (docs/run-directory.md "Drive").

use serde::{Deserialize, Serialize};

/// The USB device a drive sits behind (its bridge).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UsbLink {
    /// Bus path (`2-1.4`: bus 2, port 1, hub port 4).
    pub bus_path: String,
    /// Negotiated speed, Mb/s (`speed`: 1.5, 12, 480, 5000, 10000, 20000).
    pub speed_mbps: Option<f64>,
    /// USB version the device declares (`version`, bcdUSB), e.g. "3.20".
    pub version: Option<String>,
    /// Vendor id, hex (`idVendor`).
    pub vendor_id: Option<String>,
    /// Product id, hex (`idProduct`).
    pub product_id: Option<String>,
    /// Manufacturer string.
    pub manufacturer: Option<String>,
    /// Product string.
    pub product: Option<String>,
    /// Driver of its storage interface (`uas` or `usb-storage`).
    pub driver: Option<String>,
    /// Fastest speed the device says it supports, Mb/s (BOS descriptor), if readable.
    pub supported_mbps: Option<f64>,
    /// Speed of the hub or root port above it, Mb/s.
    pub upstream_speed_mbps: Option<f64>,
    /// Lanes in use (`rx_lanes`, USB 3.2 x2 links use 2).
    pub rx_lanes: Option<u32>,
}

/// The PCIe function of a drive (NVMe, or the PCIe tunnel of a Thunderbolt enclosure).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PcieLink {
    /// PCI address (`0000:05:00.0`).
    pub address: String,
    /// Negotiated speed (`current_link_speed`, e.g. "8.0 GT/s PCIe").
    pub current_speed: Option<String>,
    /// Negotiated width (`current_link_width`).
    pub current_width: Option<u32>,
    /// Maximum speed of the function (`max_link_speed`).
    pub max_speed: Option<String>,
    /// Maximum width (`max_link_width`).
    pub max_width: Option<u32>,
}

/// A Thunderbolt/USB4 device from /sys/bus/thunderbolt.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ThunderboltDevice {
    /// Device name in sysfs (`0-1`).
    pub name: String,
    /// `vendor_name`.
    pub vendor_name: Option<String>,
    /// `device_name`.
    pub device_name: Option<String>,
    /// `generation` (3 = Thunderbolt 3, 4 = USB4/Thunderbolt 4).
    pub generation: Option<u32>,
    /// `rx_speed` (e.g. "20.0 Gb/s") per lane.
    pub rx_speed: Option<String>,
    /// `rx_lanes`.
    pub rx_lanes: Option<u32>,
}

/// What sysfs says about the link of one target's drive.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkInfo {
    /// Whole-disk block device name (`sda`, `nvme0n1`, `vda`).
    pub block: Option<String>,
    /// The device's path in the sysfs device tree.
    pub sysfs_path: Option<String>,
    /// Bus in words: `usb`, `thunderbolt/pcie`, `pcie`, `virtio`, `loop`, … or `none`.
    pub bus: String,
    /// The USB device (bridge), when the drive is behind one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usb: Option<UsbLink>,
    /// The PCIe function, when the drive is on PCIe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie: Option<PcieLink>,
    /// Thunderbolt devices attached to this host (sysfs does not say which one tunnels
    /// which PCIe function, so all are listed for a PCIe drive).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thunderbolt: Vec<ThunderboltDevice>,
    /// One line for the summary, e.g. "usb 2-1 ASMedia ASM2362 (174c:2362, uas) at 10 Gb/s".
    pub text: String,
    /// A link slower than the device supports, and similar.
    pub warnings: Vec<String>,
}
