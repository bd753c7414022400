//! Windows: the System event log's events about disks and their links, as `wevtutil qe
//! System /f:RenderedXml` gives them: storport's reset (event 129, "Reset to device, …, was
//! issued", logged under the miniport's name: `storahci`, `stornvme`, `UASPStor`…), and the
//! `disk` provider's bad block (7), controller error (11), paging error (51), retried I/O
//! (153) and surprise removal (157).

#[cfg(windows)]
pub mod reader;

use crate::Logged;
use hostd_records::os_log::OsLogKind;

/// The kind of a System event, by provider and id; `None` for events about other things.
pub fn kind_of(provider: &str, id: u32) -> Option<OsLogKind> {
    match (provider.to_ascii_lowercase().as_str(), id) {
        (_, 129) => Some(OsLogKind::LinkReset),
        ("disk", 7 | 11 | 51 | 153) => Some(OsLogKind::IoError),
        ("disk", 157) => Some(OsLogKind::Disconnect),
        _ => None,
    }
}

/// The device a message names: `Disk 2`, `\Device\Harddisk2\DR2` → `pd2` (as smartctl
/// and the target's link name it); `\Device\RaidPort1` → `RaidPort1`.
pub fn device_of(message: &str) -> Option<String> {
    if let Some(i) = message.find("Harddisk") {
        let n: String = message[i + 8..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if !n.is_empty() {
            return Some(format!("pd{n}"));
        }
    }
    if let Some(i) = message.find("Disk ") {
        let n: String = message[i + 5..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if !n.is_empty() {
            return Some(format!("pd{n}"));
        }
    }
    let i = message.find("\\Device\\")?;
    let w: String = message[i + 8..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    (!w.is_empty()).then_some(w)
}

/// The events of `wevtutil qe … /f:RenderedXml /e:Events` output that are about disks and
/// their links.
pub fn parse_events(xml: &str) -> Vec<Logged> {
    xml.split("<Event ")
        .skip(1)
        .filter_map(|ev| {
            let provider = attr(ev, "<Provider ", "Name")?;
            let id: u32 = text(ev, "EventID")?.trim().parse().ok()?;
            let kind = kind_of(&provider, id)?;
            let time_ns = parse_system_time(&attr(ev, "<TimeCreated ", "SystemTime")?)?;
            let message = text(ev, "Message")
                .map(|m| unescape(m.trim()))
                .unwrap_or_else(|| format!("{provider} event {id}"));
            Some(Logged {
                time_ns,
                kind,
                device: device_of(&message),
                source: "system".into(),
                line: format!("{provider} {id}: {message}"),
            })
        })
        .collect()
}

/// The value of `name` in the first `tag` element (`<Provider Name="disk" …`).
fn attr(ev: &str, tag: &str, name: &str) -> Option<String> {
    let el = &ev[ev.find(tag)?..];
    let el = &el[..el.find('>')?];
    let at = &el[el.find(&format!("{name}="))? + name.len() + 1..];
    let q = at.chars().next()?;
    let v = &at[1..];
    Some(unescape(&v[..v.find(q)?]))
}

/// The text of the first `<name …>text</name>` element.
fn text<'a>(ev: &'a str, name: &str) -> Option<&'a str> {
    let open = ev.find(&format!("<{name}"))?;
    let start = open + ev[open..].find('>')? + 1;
    let end = start + ev[start..].find(&format!("</{name}>"))?;
    Some(&ev[start..end])
}

/// XML's five entities decoded.
fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// `2024-05-01T10:11:12.1234567Z` (UTC) as Unix ns.
pub fn parse_system_time(t: &str) -> Option<i64> {
    let t = t.strip_suffix('Z')?;
    let (date, time) = t.split_once('T')?;
    let mut d = date.split('-').map(|x| x.parse::<i64>().ok());
    let (y, mo, da) = (d.next()??, d.next()??, d.next()??);
    let mut p = time.split(':');
    let (h, mi): (i64, i64) = (p.next()?.parse().ok()?, p.next()?.parse().ok()?);
    let s: f64 = p.next()?.parse().ok()?;
    let secs = crate::unified::days_from_civil(y, mo, da) * 86_400 + h * 3600 + mi * 60;
    Some(secs * 1_000_000_000 + (s * 1e9).round() as i64)
}

/// Unix ns as `2024-05-01T10:11:12.123Z`, for the query's time bound.
pub fn system_time(ns: i64) -> String {
    let secs = ns.div_euclid(1_000_000_000);
    let (days, sod) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // H. Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        sod / 3600,
        sod % 3600 / 60,
        sod % 60,
        ns.rem_euclid(1_000_000_000) / 1_000_000
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_times_round_trip_to_the_millisecond() {
        let ns = parse_system_time("2024-05-01T10:11:12.1234567Z").unwrap();
        assert_eq!(system_time(ns), "2024-05-01T10:11:12.123Z");
        assert_eq!(
            parse_system_time("1970-01-01T00:00:01.5Z"),
            Some(1_500_000_000)
        );
    }
}
