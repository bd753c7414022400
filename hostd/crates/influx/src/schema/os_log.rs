//! `os_log` points: what the operating system logged about the storage path
//! (`os-log.jsonl`), one point at each line's time, for the run dashboard's annotations.

use super::{m, RunTags};
use crate::Point;
use hostd_records::os_log::OsLogRecord;

/// `os_log` points of `os-log.jsonl` records: tags `rig`, `run`, `kind` and the `target`
/// the line names (absent for another device's); fields `line`, `source`, `device`.
pub fn os_log_points(records: &[OsLogRecord], tags: &RunTags) -> Vec<Point> {
    records
        .iter()
        .map(|r| {
            let mut p = tags
                .apply(Point::new(m::OS_LOG))
                .tag("kind", r.kind.as_str())
                .timestamp_ns(r.time_ns);
            if let Some(t) = &r.target {
                p = p.tag("target", t);
            }
            p = p
                .field("line", r.line.as_str())
                .field("source", r.source.as_str());
            if let Some(d) = &r.device {
                p = p.field("device", d.as_str());
            }
            p
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hostd_records::os_log::OsLogKind;

    #[test]
    fn each_line_is_a_point_at_its_time_tagged_with_its_kind_and_target() {
        let tags = RunTags {
            rig: "bench".into(),
            run: "r1".into(),
            probe: Some("p7".into()),
            user: Default::default(),
        };
        let r = |target: Option<&str>| OsLogRecord {
            time_ns: 7,
            kind: OsLogKind::LinkReset,
            target: target.map(str::to_string),
            device: Some("2-1".into()),
            source: "kernel".into(),
            line: "usb 2-1: reset SuperSpeed USB device number 3 using xhci_hcd".into(),
        };
        let lines: Vec<String> = os_log_points(&[r(Some("/mnt/x")), r(None)], &tags)
            .iter()
            .map(|p| p.to_line().unwrap())
            .collect();
        assert_eq!(
            lines,
            [
                "os_log,kind=link_reset,rig=bench,run=r1,target=/mnt/x line=\"usb 2-1: reset SuperSpeed USB device number 3 using xhci_hcd\",source=\"kernel\",device=\"2-1\" 7",
                "os_log,kind=link_reset,rig=bench,run=r1 line=\"usb 2-1: reset SuperSpeed USB device number 3 using xhci_hcd\",source=\"kernel\",device=\"2-1\" 7",
            ]
        );
    }
}
