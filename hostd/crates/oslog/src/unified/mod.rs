//! macOS: the unified log's lines about USB and storage (`log stream --style ndjson` /
//! `log show --style ndjson`, one JSON object a line: `timestamp`, `eventMessage`,
//! `senderImagePath`, …) and the words of IOUSBHost, the mass-storage drivers and the disk
//! layer for a storage path in trouble.

#[cfg(target_os = "macos")]
pub mod reader;

use crate::{word_after, Logged};
use hostd_records::os_log::OsLogKind;
use serde::Deserialize;

/// The unified log's predicate: kernel lines from the USB host stack, the mass-storage and
/// SCSI drivers and the disk layer.
pub const PREDICATE: &str = r#"process == "kernel" AND (senderImagePath CONTAINS[c] "USB" OR senderImagePath CONTAINS[c] "Storage" OR senderImagePath CONTAINS[c] "SCSI" OR eventMessage CONTAINS[c] "I/O error")"#;

/// The fields of one ndjson line this reader uses.
#[derive(Debug, Deserialize)]
struct Line {
    timestamp: String,
    #[serde(rename = "eventMessage", default)]
    event_message: String,
}

/// One ndjson line as a [`Logged`] line, when it is about the storage path; `None` for
/// other lines (and for `log`'s own `Filtering the log data…` banner).
pub fn parse_line(line: &str) -> Option<Logged> {
    let l: Line = serde_json::from_str(line).ok()?;
    let (kind, device) = classify(&l.event_message)?;
    Some(Logged {
        time_ns: parse_timestamp(&l.timestamp)?,
        kind,
        device,
        source: "unified".into(),
        line: l.event_message,
    })
}

/// What a macOS kernel message says about the storage path, and the device it names.
pub fn classify(m: &str) -> Option<(OsLogKind, Option<String>)> {
    let lower = m.to_ascii_lowercase();
    // "disk1s2: I/O error." → disk1
    let disk = || {
        m.split(|c: char| !c.is_ascii_alphanumeric())
            .find(|w| w.starts_with("disk") && w[4..].starts_with(|c: char| c.is_ascii_digit()))
            .map(|w| {
                let n: String = w[4..].chars().take_while(char::is_ascii_digit).collect();
                format!("disk{n}")
            })
    };
    if lower.contains("i/o error") {
        return Some((OsLogKind::IoError, disk()));
    }
    if lower.contains("uas") && (lower.contains("abort") || lower.contains("timeout")) {
        return Some((OsLogKind::UasError, disk()));
    }
    if (lower.contains("usb") || lower.contains("port")) && lower.contains("reset") {
        return Some((
            OsLogKind::LinkReset,
            word_after(m, "locationID").map(str::to_string),
        ));
    }
    if lower.contains("usb") && (lower.contains("disconnect") || lower.contains("terminat")) {
        return Some((OsLogKind::Disconnect, disk()));
    }
    None
}

/// `2024-05-02 10:11:12.123456-0700` (the unified log's local time with its offset) as
/// Unix ns.
pub fn parse_timestamp(ts: &str) -> Option<i64> {
    let (date, rest) = ts.split_once(' ')?;
    let mut d = date.split('-').map(|x| x.parse::<i64>().ok());
    let (y, mo, da) = (d.next()??, d.next()??, d.next()??);
    let split = rest.rfind(['+', '-'])?;
    let (time, zone) = rest.split_at(split);
    let mut t = time.split(':');
    let (h, mi): (i64, i64) = (t.next()?.parse().ok()?, t.next()?.parse().ok()?);
    let s: f64 = t.next()?.parse().ok()?;
    let sign = if zone.starts_with('-') { -1 } else { 1 };
    let z = zone[1..].replace(':', "");
    let zone_s =
        sign * (z.get(..2)?.parse::<i64>().ok()? * 3600 + z.get(2..4)?.parse::<i64>().ok()? * 60);
    let secs = days_from_civil(y, mo, da) * 86_400 + h * 3600 + mi * 60 - zone_s;
    Some(secs * 1_000_000_000 + (s * 1e9).round() as i64)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
pub(crate) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timestamp_with_its_offset_is_unix_ns() {
        assert_eq!(
            parse_timestamp("1970-01-01 01:00:00.500000+0100"),
            Some(500_000_000)
        );
        assert_eq!(
            parse_timestamp("2009-05-25 14:30:59.000000-0700"),
            Some(1_243_287_059_000_000_000)
        );
        assert_eq!(parse_timestamp("yesterday"), None);
    }
}
