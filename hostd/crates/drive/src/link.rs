//! The link a target's drive sits on, from Linux sysfs: walk from the block device up the
//! device tree to the USB device (negotiated `speed`, `version`, ids, names, the BOS
//! descriptor's supported speeds, the upstream hub's speed) or to the PCIe function
//! (negotiated and maximum link speed and width), and the Thunderbolt devices present. A
//! USB drive running slower than it supports gets a warning. Nothing is invented: a path
//! without USB or PCIe ancestors says so. On macOS `system_profiler` answers instead
//! ([`crate::link_macos`]).

#[cfg(target_os = "macos")]
pub use crate::link_macos::link_for_path;
#[cfg(windows)]
pub use crate::link_windows::link_for_path;
use hostd_records::link::{LinkInfo, PcieLink, ThunderboltDevice, UsbLink};
use std::path::{Path, PathBuf};

/// A sysfs tree (the real one at `/sys`, or a fixture).
#[derive(Debug, Clone)]
pub struct Sysfs {
    root: PathBuf,
}

impl Default for Sysfs {
    fn default() -> Self {
        Sysfs::at("/sys")
    }
}

fn read(dir: &Path, name: &str) -> Option<String> {
    std::fs::read_to_string(dir.join(name))
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

fn link_name(dir: &Path, name: &str) -> Option<String> {
    std::fs::read_link(dir.join(name))
        .ok()?
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
}

/// "5000" → "5 Gb/s", "480" → "480 Mb/s".
fn speed_text(mbps: f64) -> String {
    if mbps >= 1000.0 {
        format!("{} Gb/s", mbps / 1000.0)
    } else {
        format!("{mbps} Mb/s")
    }
}

/// The fastest speed in a BOS descriptor set, Mb/s: SuperSpeed (capability 0x03: 5 Gb/s
/// when its speeds bitmap has bit 3) and SuperSpeedPlus (0x0A: each sublink speed attribute
/// is mantissa × 10^(3·exponent) b/s; a symmetric attribute counts once per lane pair).
pub fn bos_max_speed_mbps(bos: &[u8]) -> Option<f64> {
    if bos.len() < 5 || bos[1] != 0x0F {
        return None;
    }
    let total = usize::from(u16::from_le_bytes([bos[2], bos[3]])).min(bos.len());
    let mut best: Option<f64> = None;
    let mut i = usize::from(bos[0]);
    while i + 3 <= total {
        let len = usize::from(bos[i]);
        if len < 3 || i + len > total {
            break;
        }
        let d = &bos[i..i + len];
        if d[1] == 0x10 {
            match d[2] {
                0x02 => best = best.or(Some(480.0)), // USB 2.0 extension
                0x03 if len >= 10 => {
                    let speeds = u16::from_le_bytes([d[4], d[5]]);
                    let s = if speeds & 0x8 != 0 { 5000.0 } else { 480.0 };
                    best = Some(best.map_or(s, |b: f64| b.max(s)));
                }
                0x0A if len >= 12 => {
                    let attrs = u32::from_le_bytes([d[4], d[5], d[6], d[7]]);
                    let count = (attrs & 0x1F) as usize + 1;
                    for k in 0..count {
                        let o = 12 + 4 * k;
                        if o + 4 > len {
                            break;
                        }
                        let a = u32::from_le_bytes([d[o], d[o + 1], d[o + 2], d[o + 3]]);
                        let exp = (a >> 4) & 0x3;
                        let mantissa = f64::from(a >> 16);
                        let mbps = mantissa * 10f64.powi(3 * exp as i32) / 1e6;
                        best = Some(best.map_or(mbps, |b: f64| b.max(mbps)));
                    }
                }
                _ => {}
            }
        }
        i += len;
    }
    best
}

impl Sysfs {
    /// A sysfs tree rooted at `root`.
    pub fn at(root: impl Into<PathBuf>) -> Sysfs {
        let root = root.into();
        // Resolved, so the device paths symlinks lead to start with it.
        let root = std::fs::canonicalize(&root).unwrap_or(root);
        Sysfs { root }
    }

    /// The link of block device `MAJOR:MINOR` (`/sys/dev/block/M:m`).
    pub fn link_for_devnum(&self, major: u32, minor: u32) -> LinkInfo {
        let dir = self.root.join(format!("dev/block/{major}:{minor}"));
        match std::fs::canonicalize(&dir) {
            Ok(real) => self.link_for_sysfs_block(&real),
            Err(_) => none(format!(
                "no block device {major}:{minor} in sysfs (not on a block device)"
            )),
        }
    }

    /// The link of block device `name` (`sdb`, `sdb1`, `nvme0n1p2`; partitions resolve to
    /// their disk).
    pub fn link_for_block(&self, name: &str) -> LinkInfo {
        let dir = self.root.join("class/block").join(name);
        match std::fs::canonicalize(&dir) {
            Ok(real) => self.link_for_sysfs_block(&real),
            Err(_) => none(format!("no block device {name} in sysfs")),
        }
    }

    fn link_for_sysfs_block(&self, real: &Path) -> LinkInfo {
        let disk = if real.join("partition").exists() {
            real.parent().unwrap_or(real).to_path_buf()
        } else {
            real.to_path_buf()
        };
        let block = disk.file_name().map(|n| n.to_string_lossy().into_owned());
        let mut info = LinkInfo {
            block: block.clone(),
            sysfs_path: Some(disk.to_string_lossy().into_owned()),
            bus: "none".into(),
            ..Default::default()
        };
        let devices = self.root.join("devices");
        let mut usb: Option<PathBuf> = None;
        let mut pci: Option<PathBuf> = None;
        let mut virtio = false;
        for dir in disk.ancestors().take_while(|d| d.starts_with(&devices)) {
            let name = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if usb.is_none() && dir.join("idVendor").exists() && dir.join("speed").exists() {
                usb = Some(dir.to_path_buf());
            }
            if name.starts_with("virtio") {
                virtio = true;
            }
            if pci.is_none() && is_pci_address(&name) {
                pci = Some(dir.to_path_buf());
            }
        }
        if let Some(u) = usb {
            info.bus = "usb".into();
            let link = self.usb_link(&u, &disk);
            info.text = usb_text(&link);
            info.warnings = usb_warnings(&link);
            info.usb = Some(link);
            return info;
        }
        let name = block.unwrap_or_default();
        if virtio {
            info.bus = "virtio".into();
            info.text = format!(
                "{name}: virtio disk{} — no USB or Thunderbolt link (a virtual machine's disk)",
                pci.as_ref()
                    .and_then(|p| p.file_name())
                    .map_or(String::new(), |a| format!(
                        " on PCI {}",
                        a.to_string_lossy()
                    ))
            );
            return info;
        }
        if let Some(p) = pci {
            let link = pcie_link(&p);
            let tb = self.thunderbolt();
            info.bus = if tb.is_empty() {
                "pcie".into()
            } else {
                "thunderbolt/pcie".into()
            };
            info.text = pcie_text(&name, &link, &tb);
            if let (Some(c), Some(m)) = (link.current_width, link.max_width) {
                if c < m {
                    info.warnings.push(format!(
                        "{name}: PCIe link runs x{c} of the x{m} the drive supports"
                    ));
                }
            }
            if let (Some(c), Some(m)) = (&link.current_speed, &link.max_speed) {
                if gts(c) < gts(m) {
                    info.warnings.push(format!(
                        "{name}: PCIe link runs at {c} of the {m} the drive supports"
                    ));
                }
            }
            info.pcie = Some(link);
            info.thunderbolt = tb;
            return info;
        }
        info.bus = if name.starts_with("loop") {
            "loop".into()
        } else if disk.starts_with(devices.join("virtual")) {
            "virtual".into()
        } else {
            "none".into()
        };
        info.text = format!(
            "{name}: {} block device — no USB, PCIe or Thunderbolt link",
            info.bus
        );
        info
    }

    fn usb_link(&self, dev: &Path, disk: &Path) -> UsbLink {
        let parse = |s: Option<String>| s.and_then(|v| v.parse::<f64>().ok());
        // The interface directory (`2-1:1.0`) just below the device on the way to the disk.
        let driver = disk
            .ancestors()
            .find(|d| d.parent() == Some(dev))
            .and_then(|i| link_name(i, "driver"));
        let supported = std::fs::read(dev.join("bos_descriptors"))
            .ok()
            .and_then(|b| bos_max_speed_mbps(&b));
        UsbLink {
            bus_path: dev
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            speed_mbps: parse(read(dev, "speed")),
            version: read(dev, "version"),
            vendor_id: read(dev, "idVendor"),
            product_id: read(dev, "idProduct"),
            manufacturer: read(dev, "manufacturer"),
            product: read(dev, "product"),
            driver,
            supported_mbps: supported,
            upstream_speed_mbps: dev.parent().and_then(|p| parse(read(p, "speed"))),
            rx_lanes: read(dev, "rx_lanes").and_then(|v| v.parse().ok()),
        }
    }

    /// Every Thunderbolt/USB4 device other than the host routers (`N-0`).
    pub fn thunderbolt(&self) -> Vec<ThunderboltDevice> {
        let dir = self.root.join("bus/thunderbolt/devices");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Vec::new();
        };
        let mut out: Vec<ThunderboltDevice> = entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let is_router = name
                    .split_once('-')
                    .is_some_and(|(d, r)| d.chars().all(|c| c.is_ascii_digit()) && !r.is_empty());
                (is_router && !name.ends_with("-0")).then(|| {
                    let p = e.path();
                    ThunderboltDevice {
                        vendor_name: read(&p, "vendor_name"),
                        device_name: read(&p, "device_name"),
                        generation: read(&p, "generation").and_then(|v| v.parse().ok()),
                        rx_speed: read(&p, "rx_speed"),
                        rx_lanes: read(&p, "rx_lanes").and_then(|v| v.parse().ok()),
                        name,
                    }
                })
            })
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }
}

/// A link record for a disk with no USB or PCIe link found, saying why.
pub(crate) fn none(text: String) -> LinkInfo {
    LinkInfo {
        bus: "none".into(),
        text,
        ..Default::default()
    }
}

fn is_pci_address(name: &str) -> bool {
    // dddd:bb:dd.f
    let b = name.as_bytes();
    b.len() == 12 && b[4] == b':' && b[7] == b':' && b[10] == b'.'
}

fn pcie_link(dir: &Path) -> PcieLink {
    let num = |n: &str| read(dir, n).and_then(|v| v.parse().ok());
    PcieLink {
        address: dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        current_speed: read(dir, "current_link_speed"),
        current_width: num("current_link_width"),
        max_speed: read(dir, "max_link_speed"),
        max_width: num("max_link_width"),
    }
}

/// "8.0 GT/s PCIe" → 8.0.
fn gts(s: &str) -> f64 {
    s.split_whitespace()
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}

/// One line for a USB link (the summary's `text`).
pub(crate) fn usb_text(u: &UsbLink) -> String {
    let name = [u.manufacturer.as_deref(), u.product.as_deref()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    format!(
        "usb {} {} ({}:{}{}) at {}{}",
        u.bus_path,
        if name.is_empty() { "(no name)" } else { &name },
        u.vendor_id.as_deref().unwrap_or("?"),
        u.product_id.as_deref().unwrap_or("?"),
        u.driver
            .as_ref()
            .map_or(String::new(), |d| format!(", {d}")),
        u.speed_mbps.map_or("unknown speed".into(), speed_text),
        u.version
            .as_ref()
            .map_or(String::new(), |v| format!(", USB {v} device")),
    )
}

fn usb_warnings(u: &UsbLink) -> Vec<String> {
    let mut w = Vec::new();
    let Some(speed) = u.speed_mbps else {
        return w;
    };
    let who = format!(
        "USB device {} ({}:{})",
        u.bus_path,
        u.vendor_id.as_deref().unwrap_or("?"),
        u.product_id.as_deref().unwrap_or("?")
    );
    let version: f64 = u
        .version
        .as_deref()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    match u.supported_mbps {
        Some(sup) if sup > speed => w.push(format!(
            "{who} runs at {} but supports {}{}: check the port and the cable",
            speed_text(speed),
            speed_text(sup),
            u.upstream_speed_mbps
                .filter(|&p| p < sup)
                .map_or(String::new(), |p| format!(
                    " (the hub or port above it runs at {})",
                    speed_text(p)
                )),
        )),
        None if version >= 3.0 && speed < 5000.0 => w.push(format!(
            "{who} is a USB {} device running at {}: a USB 2 port, hub or cable is in the way",
            u.version.as_deref().unwrap_or("3"),
            speed_text(speed)
        )),
        _ => {}
    }
    w
}

fn pcie_text(name: &str, p: &PcieLink, tb: &[ThunderboltDevice]) -> String {
    let mut s = format!(
        "{name}: PCIe {} at {} x{} (max {} x{})",
        p.address,
        p.current_speed.as_deref().unwrap_or("?"),
        p.current_width.map_or("?".into(), |w| w.to_string()),
        p.max_speed.as_deref().unwrap_or("?"),
        p.max_width.map_or("?".into(), |w| w.to_string()),
    );
    if !tb.is_empty() {
        let list: Vec<String> = tb
            .iter()
            .map(|t| {
                format!(
                    "{} {} {} (gen {}, {} × {} lanes)",
                    t.name,
                    t.vendor_name.as_deref().unwrap_or("?"),
                    t.device_name.as_deref().unwrap_or("?"),
                    t.generation.map_or("?".into(), |g| g.to_string()),
                    t.rx_speed.as_deref().unwrap_or("?"),
                    t.rx_lanes.map_or("?".into(), |l| l.to_string()),
                )
            })
            .collect();
        s.push_str(&format!(
            "; Thunderbolt devices attached: {}",
            list.join(", ")
        ));
    }
    s
}

/// The link of the block device holding `path` (its `st_dev`), from the real /sys.
#[cfg(all(unix, not(target_os = "macos")))]
pub fn link_for_path(path: &Path) -> LinkInfo {
    use std::os::unix::fs::MetadataExt as _;
    let Ok(meta) = std::fs::metadata(path) else {
        return none(format!("cannot stat {}", path.display()));
    };
    // A block device file names its device in st_rdev; anything else lives on st_dev.
    use std::os::unix::fs::FileTypeExt as _;
    let dev = if meta.file_type().is_block_device() {
        meta.rdev()
    } else {
        meta.dev()
    };
    // glibc's encoding of dev_t.
    let major = (((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff)) as u32;
    let minor = ((dev & 0xff) | ((dev >> 12) & !0xff)) as u32;
    if major == 0 {
        return none(format!(
            "{} is not on a block device (device {major}:{minor}: tmpfs, overlay or similar)",
            path.display()
        ));
    }
    Sysfs::default().link_for_devnum(major, minor)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// Writes `files` (path → content) under `root`, creating directories.
    fn tree(root: &Path, files: &[(&str, &[u8])]) {
        for (p, c) in files {
            let p = root.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, c).unwrap();
        }
    }

    fn link(root: &Path, at: &str, to: &str) {
        let at = root.join(at);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        symlink(to, at).unwrap();
    }

    /// BOS with a USB 2.0 extension, SuperSpeed (5 Gb/s) and SuperSpeedPlus 10 Gb/s
    /// (Gen 2x1: one symmetric RX/TX pair, LSE = 3 (Gb/s), LSM = 10).
    fn bos_10g() -> Vec<u8> {
        let mut v = vec![0x05, 0x0F, 0, 0, 3];
        v.extend([0x07, 0x10, 0x02, 0x02, 0, 0, 0]);
        v.extend([0x0A, 0x10, 0x03, 0x00, 0x0E, 0x00, 0x01, 0x0A, 0xFF, 0x07]);
        let ssp = |lse_lp: u32, mantissa: u32| (mantissa << 16) | lse_lp;
        let mut cap = vec![0x14, 0x10, 0x0A, 0x00];
        cap.extend(1u32.to_le_bytes()); // attribute count 2 (one pair), SSID count 1
        cap.extend(0u32.to_le_bytes()); // functionality support, reserved
        cap.extend(ssp(0x4030, 10).to_le_bytes()); // SSID 0, Gb/s, RX, SSP
        cap.extend(ssp(0x40B0, 10).to_le_bytes()); // SSID 0, Gb/s, TX, SSP
        v.extend(cap);
        let total = v.len() as u16;
        v[2..4].copy_from_slice(&total.to_le_bytes());
        v
    }

    /// A USB 3.2 Gen 2 NVMe bridge (ASMedia ASM2362) with `speed` as given, on a root hub
    /// of `hub` Mb/s, with disk sdb and partition sdb1, the way Linux lays it out.
    fn usb_fixture(root: &Path, speed: &str, hub: &str, bos: Option<&[u8]>) {
        let usb = "devices/pci0000:00/0000:00:14.0/usb2";
        let dev = format!("{usb}/2-1");
        let iface = format!("{dev}/2-1:1.0");
        let disk = format!("{iface}/host3/target3:0:0/3:0:0:0/block/sdb");
        tree(
            root,
            &[
                (&format!("{usb}/speed"), hub.as_bytes()),
                (&format!("{usb}/idVendor"), b"1d6b\n"),
                (&format!("{dev}/speed"), speed.as_bytes()),
                (&format!("{dev}/version"), b" 3.20\n"),
                (&format!("{dev}/idVendor"), b"174c\n"),
                (&format!("{dev}/idProduct"), b"2362\n"),
                (&format!("{dev}/manufacturer"), b"ASMedia\n"),
                (&format!("{dev}/product"), b"ASM2362\n"),
                (&format!("{dev}/rx_lanes"), b"1\n"),
                (&format!("{iface}/bInterfaceClass"), b"08\n"),
                (&format!("{disk}/size"), b"1953525168\n"),
                (&format!("{disk}/sdb1/partition"), b"1\n"),
                ("bus/usb/drivers/uas/module", b""),
            ],
        );
        if let Some(b) = bos {
            tree(root, &[(&format!("{dev}/bos_descriptors"), b)]);
        }
        link(
            root,
            &format!("{iface}/driver"),
            "../../../../../bus/usb/drivers/uas",
        );
        let up = "../../devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host3/target3:0:0/3:0:0:0/block/sdb";
        link(root, "class/block/sdb", up);
        link(root, "class/block/sdb1", &format!("{up}/sdb1"));
        link(root, "dev/block/8:17", &format!("{up}/sdb1"));
    }

    #[test]
    fn bos_descriptor_gives_the_fastest_supported_speed() {
        assert_eq!(bos_max_speed_mbps(&bos_10g()), Some(10_000.0));
        let ss_only = [
            5u8, 0x0F, 15, 0, 1, 0x0A, 0x10, 0x03, 0, 0x0E, 0, 1, 0x0A, 0xFF, 0x07,
        ];
        assert_eq!(bos_max_speed_mbps(&ss_only), Some(5000.0));
        assert_eq!(bos_max_speed_mbps(&[1, 2, 3]), None);
    }

    #[test]
    fn usb_bridge_at_full_speed_is_described_without_warning() {
        let d = tempfile::tempdir().unwrap();
        usb_fixture(d.path(), "10000\n", "10000\n", Some(&bos_10g()));
        let l = Sysfs::at(d.path()).link_for_block("sdb1");
        assert_eq!(l.bus, "usb");
        assert_eq!(l.block.as_deref(), Some("sdb"));
        let u = l.usb.as_ref().unwrap();
        assert_eq!(u.bus_path, "2-1");
        assert_eq!(u.speed_mbps, Some(10_000.0));
        assert_eq!(u.supported_mbps, Some(10_000.0));
        assert_eq!(u.vendor_id.as_deref(), Some("174c"));
        assert_eq!(u.product_id.as_deref(), Some("2362"));
        assert_eq!(u.driver.as_deref(), Some("uas"));
        assert_eq!(u.version.as_deref(), Some("3.20"));
        assert!(l.warnings.is_empty(), "{:?}", l.warnings);
        assert_eq!(
            l.text,
            "usb 2-1 ASMedia ASM2362 (174c:2362, uas) at 10 Gb/s, USB 3.20 device"
        );
        // The same through the device number, as a mount gives it.
        assert_eq!(Sysfs::at(d.path()).link_for_devnum(8, 17), l);
    }

    #[test]
    fn a_10_gbps_bridge_on_a_5_gbps_port_is_warned_about() {
        let d = tempfile::tempdir().unwrap();
        usb_fixture(d.path(), "5000\n", "5000\n", Some(&bos_10g()));
        let l = Sysfs::at(d.path()).link_for_block("sdb");
        assert_eq!(l.warnings.len(), 1, "{:?}", l.warnings);
        let w = &l.warnings[0];
        assert!(w.contains("runs at 5 Gb/s but supports 10 Gb/s"), "{w}");
        assert!(w.contains("port above it runs at 5 Gb/s"), "{w}");
    }

    #[test]
    fn a_usb3_bridge_on_a_usb2_port_is_warned_about_without_bos() {
        let d = tempfile::tempdir().unwrap();
        usb_fixture(d.path(), "480\n", "480\n", None);
        let l = Sysfs::at(d.path()).link_for_block("sdb");
        assert_eq!(l.usb.as_ref().unwrap().supported_mbps, None);
        assert_eq!(l.warnings.len(), 1, "{:?}", l.warnings);
        assert!(l.warnings[0].contains("USB 3.20 device running at 480 Mb/s"));
    }

    #[test]
    fn nvme_behind_thunderbolt_lists_the_pcie_link_and_the_thunderbolt_devices() {
        let d = tempfile::tempdir().unwrap();
        let pci = "devices/pci0000:00/0000:00:07.0/0000:05:00.0/0000:06:01.0/0000:07:00.0";
        let disk = format!("{pci}/nvme/nvme0/nvme0n1");
        tree(
            d.path(),
            &[
                (&format!("{pci}/current_link_speed"), b"8.0 GT/s PCIe\n"),
                (&format!("{pci}/current_link_width"), b"2\n"),
                (&format!("{pci}/max_link_speed"), b"8.0 GT/s PCIe\n"),
                (&format!("{pci}/max_link_width"), b"4\n"),
                (&format!("{disk}/size"), b"1000\n"),
                (
                    "devices/pci0000:00/0000:00:0d.2/domain0/0-0/0-1/vendor_name",
                    b"Samsung\n",
                ),
                (
                    "devices/pci0000:00/0000:00:0d.2/domain0/0-0/0-1/device_name",
                    b"Portable SSD X5\n",
                ),
                (
                    "devices/pci0000:00/0000:00:0d.2/domain0/0-0/0-1/generation",
                    b"3\n",
                ),
                (
                    "devices/pci0000:00/0000:00:0d.2/domain0/0-0/0-1/rx_speed",
                    b"20.0 Gb/s\n",
                ),
                (
                    "devices/pci0000:00/0000:00:0d.2/domain0/0-0/0-1/rx_lanes",
                    b"2\n",
                ),
            ],
        );
        link(d.path(), "class/block/nvme0n1", &format!("../../{disk}"));
        link(
            d.path(),
            "bus/thunderbolt/devices/0-0",
            "../../../devices/pci0000:00/0000:00:0d.2/domain0/0-0",
        );
        link(
            d.path(),
            "bus/thunderbolt/devices/0-1",
            "../../../devices/pci0000:00/0000:00:0d.2/domain0/0-0/0-1",
        );
        link(
            d.path(),
            "bus/thunderbolt/devices/domain0",
            "../../../devices/pci0000:00/0000:00:0d.2/domain0",
        );
        let l = Sysfs::at(d.path()).link_for_block("nvme0n1");
        assert_eq!(l.bus, "thunderbolt/pcie");
        assert_eq!(l.pcie.as_ref().unwrap().address, "0000:07:00.0");
        assert_eq!(l.thunderbolt.len(), 1);
        assert_eq!(
            l.thunderbolt[0].device_name.as_deref(),
            Some("Portable SSD X5")
        );
        assert_eq!(l.thunderbolt[0].generation, Some(3));
        assert_eq!(
            l.warnings,
            ["nvme0n1: PCIe link runs x2 of the x4 the drive supports"]
        );
    }

    #[test]
    fn a_missing_block_device_says_so() {
        let d = tempfile::tempdir().unwrap();
        let l = Sysfs::at(d.path()).link_for_devnum(259, 3);
        assert_eq!(l.bus, "none");
        assert!(l.text.contains("259:3"), "{}", l.text);
        assert!(l.usb.is_none() && l.pcie.is_none());
    }

    #[test]
    fn this_machines_own_disk_is_described_as_it_is() {
        // Whatever this host's disk is, the answer must be consistent with sysfs: a USB
        // link only where a USB ancestor exists, and a bus always named.
        let l = link_for_path(Path::new(env!("CARGO_MANIFEST_DIR")));
        eprintln!("this machine: {} ({:?})", l.text, l.warnings);
        assert!(!l.bus.is_empty() && !l.text.is_empty());
        let real = l.sysfs_path.as_deref().unwrap_or("");
        assert_eq!(l.usb.is_some(), real.contains("/usb"), "{l:?}");
        if real.contains("/virtio") {
            assert_eq!(l.bus, "virtio");
            assert!(l.text.contains("no USB or Thunderbolt link"), "{}", l.text);
        }
    }
}
