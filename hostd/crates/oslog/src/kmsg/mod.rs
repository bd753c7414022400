//! Linux: the kernel log's records (`/dev/kmsg`: `PRIORITY,SEQ,USEC,FLAGS;message`, then
//! ` KEY=value` lines) and the kernel's words for a storage path in trouble.
//!
//! Records of every facility are read: a process that writes to `/dev/kmsg` gets the
//! `user` facility, and such a line is kept with `source: "user"` (so a test can inject a
//! real kernel-worded line and the file says it did not come from the kernel). Only the
//! words decide whether a line is about the storage path.

#[cfg(target_os = "linux")]
pub mod reader;

use crate::{word_after, Logged};
use hostd_records::os_log::OsLogKind;

/// One record of `/dev/kmsg`.
#[derive(Debug, Clone, PartialEq)]
pub struct KmsgRecord {
    /// Syslog facility (0 kernel, 1 user, …).
    pub facility: u32,
    /// Level (0 emerg … 7 debug).
    pub level: u32,
    /// Sequence number.
    pub seq: u64,
    /// Time since boot, µs (the kernel's monotonic clock).
    pub usec: u64,
    /// The message, `\xNN` escapes decoded.
    pub message: String,
}

/// Parses one record as `read(2)` on `/dev/kmsg` returns it; `None` for anything else.
pub fn parse_record(raw: &str) -> Option<KmsgRecord> {
    let (head, body) = raw.split_once(';')?;
    let mut fields = head.split(',');
    let prio: u32 = fields.next()?.trim().parse().ok()?;
    let seq = fields.next()?.parse().ok()?;
    let usec = fields.next()?.parse().ok()?;
    let message = unescape(body.lines().next().unwrap_or(""));
    Some(KmsgRecord {
        facility: prio >> 3,
        level: prio & 7,
        seq,
        usec,
        message,
    })
}

/// Decodes the kernel's `\xNN` escapes of unprintable bytes.
fn unescape(s: &str) -> String {
    let mut out = Vec::with_capacity(s.len());
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() && b[i + 1] == b'x' {
            if let Some(v) = s
                .get(i + 2..i + 4)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// What a kernel message says about the storage path, and the device it names: `None`
/// for a message about something else.
pub fn classify(message: &str) -> Option<(OsLogKind, Option<String>)> {
    let m = message;
    let usb_dev = || {
        // "usb 2-1.4: …"
        m.strip_prefix("usb ")
            .and_then(|r| r.split(':').next())
            .map(str::to_string)
    };
    let scsi_disk = || {
        // "sd 3:0:0:0: [sdd] …"
        m.find('[')
            .and_then(|a| m[a + 1..].split(']').next())
            .map(str::to_string)
    };
    let dev_word = || word_after(m, "dev ").map(str::to_string);
    if m.contains("uas_eh_device_reset_handler") || m.contains("uas_eh_bus_reset_handler") {
        return Some((OsLogKind::LinkReset, scsi_disk()));
    }
    if m.contains("uas_eh_abort_handler") || m.contains("uas_zap_pending") {
        return Some((OsLogKind::UasError, scsi_disk()));
    }
    if m.contains("using usb-storage instead") {
        return Some((OsLogKind::UasFallback, usb_dev()));
    }
    if m.contains("not running at top speed") {
        return Some((OsLogKind::LowerSpeed, usb_dev()));
    }
    if enumeration(m).is_some() {
        // A device (re-)enumerated: slower than the target's link only if the part finds
        // it on the target's port at a lower speed (`part::match_targets`); else dropped.
        return Some((OsLogKind::LowerSpeed, usb_dev()));
    }
    if m.starts_with("usb ") && m.contains(" USB device number ") && m.contains("reset ") {
        return Some((OsLogKind::LinkReset, usb_dev()));
    }
    if m.contains("USB disconnect, device number") {
        return Some((OsLogKind::Disconnect, usb_dev()));
    }
    if m.contains("Device offlined") || m.contains("rejecting I/O to offline device") {
        return Some((OsLogKind::Disconnect, scsi_disk()));
    }
    if m.contains("hard resetting link") || m.contains("resetting controller") {
        // "ata3: hard resetting link", "nvme nvme0: resetting controller"
        let dev = m
            .split(':')
            .next()
            .map(|d| d.rsplit(' ').next().unwrap_or(d).to_string());
        return Some((OsLogKind::LinkReset, dev));
    }
    if m.contains("Buffer I/O error on dev") {
        return Some((
            OsLogKind::IoError,
            word_after(m, "on dev").map(str::to_string),
        ));
    }
    if m.contains("I/O error, dev") || m.contains("critical medium error, dev") {
        return Some((OsLogKind::IoError, dev_word()));
    }
    None
}

/// A USB device enumerated (`usb 1-2: new high-speed USB device number 12 using
/// xhci_hcd`): its bus path and the speed it came up at, Mb/s.
pub fn enumeration(message: &str) -> Option<(String, f64)> {
    let rest = message.strip_prefix("usb ")?;
    let (path, rest) = rest.split_once(": new ")?;
    let (speed, _) = rest.split_once(" USB device number ")?;
    let mbps = match speed {
        "low-speed" => 1.5,
        "full-speed" => 12.0,
        "high-speed" => 480.0,
        s if s.starts_with("SuperSpeed Plus Gen 2x2") => 20_000.0,
        s if s.starts_with("SuperSpeed Plus") => 10_000.0,
        s if s.starts_with("SuperSpeed") => 5_000.0,
        _ => return None,
    };
    Some((path.to_string(), mbps))
}

/// A record as a [`Logged`] line, when it is about the storage path; `boot_to_unix_ns` is
/// the host's Unix time at boot (µs since boot + it = host Unix ns).
pub fn logged(record: &KmsgRecord, boot_to_unix_ns: i64) -> Option<Logged> {
    let (kind, device) = classify(&record.message)?;
    Some(Logged {
        time_ns: record.usec as i64 * 1000 + boot_to_unix_ns,
        kind,
        device,
        source: if record.facility == 0 {
            "kernel"
        } else {
            "user"
        }
        .into(),
        line: record.message.clone(),
    })
}

/// Parses `dmesg`-style text (`[  123.456789] message`, optionally after a journal or
/// syslog prefix ending in `kernel: `) into records of the kernel facility: how the recorded
/// excerpts of real kernel logs are read in tests.
pub fn parse_dmesg(text: &str) -> Vec<KmsgRecord> {
    text.lines()
        .filter_map(|l| {
            let l = l.split_once("kernel: ").map_or(l, |(_, r)| r);
            let (ts, msg) = l.trim_start().strip_prefix('[')?.split_once(']')?;
            let secs: f64 = ts.trim().parse().ok()?;
            Some(KmsgRecord {
                facility: 0,
                level: 6,
                seq: 0,
                usec: (secs * 1e6).round() as u64,
                message: msg.trim_start().trim_end().to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kmsg_record_gives_its_facility_level_time_and_message() {
        let r = parse_record(
            "3,1234,6229447264,-;sd 3:0:0:0: [sdd] tag#29 uas_eh_abort_handler 0 uas-tag 30 inflight: CMD IN \n SUBSYSTEM=scsi\n DEVICE=+scsi:3:0:0:0\n",
        )
        .unwrap();
        assert_eq!(
            (r.facility, r.level, r.seq, r.usec),
            (0, 3, 1234, 6_229_447_264)
        );
        assert!(r.message.ends_with("inflight: CMD IN "), "{r:?}");
        // Written by a process: the user facility (8 + level).
        let u =
            parse_record("12,7,99,-;usb 2-1: reset SuperSpeed USB device number 3 using xhci_hcd")
                .unwrap();
        assert_eq!((u.facility, u.level), (1, 4));
        let l = logged(&u, 1_000).unwrap();
        assert_eq!(
            (l.kind, l.device.as_deref(), l.source.as_str(), l.time_ns),
            (OsLogKind::LinkReset, Some("2-1"), "user", 99_000 + 1_000)
        );
        assert_eq!(parse_record("not a record"), None);
        assert_eq!(parse_record("6,1,2,-;a\\x0ab").unwrap().message, "a\nb");
        assert_eq!(
            enumeration("usb 1-2: new high-speed USB device number 12 using xhci_hcd"),
            Some(("1-2".into(), 480.0))
        );
        assert_eq!(
            enumeration("usb 2-1: new SuperSpeed Gen 1 USB device number 3 using xhci_hcd"),
            Some(("2-1".into(), 5000.0))
        );
        assert_eq!(
            enumeration("usb 2-1: reset SuperSpeed USB device number 3 using xhci_hcd"),
            None
        );
    }
}
