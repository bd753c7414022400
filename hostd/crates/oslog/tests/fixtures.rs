//! The readers and their words on recorded lines of real USB/storage trouble
//! (`fixtures/os_log/README.md` names where each comes from).

use hostd_oslog::part::{match_targets, TargetDevice};
use hostd_oslog::{eventlog, kmsg, unified, Logged};
use hostd_records::os_log::OsLogKind;
use std::path::Path;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../fixtures/os_log")
            .join(name),
    )
    .unwrap()
}

/// The storage lines of a recorded kernel log, as (µs since boot, kind, device).
fn linux(name: &str) -> Vec<(i64, OsLogKind, Option<String>)> {
    kmsg::parse_dmesg(&fixture(name))
        .iter()
        .filter_map(|r| kmsg::logged(r, 0))
        // Enumerations count only as a target's bridge come back slower (`match_targets`).
        .filter(|l| kmsg::enumeration(&l.line).is_none())
        .map(|l| (l.time_ns / 1000, l.kind, l.device))
        .collect()
}

fn dev(s: &str) -> Option<String> {
    Some(s.to_string())
}

#[test]
fn uas_aborts_are_uas_errors_of_their_disk_and_the_cdb_lines_are_not() {
    let got = linux("asahi-uas-abort.dmesg");
    assert_eq!(got.len(), 3, "{got:?}");
    assert!(
        got.iter()
            .all(|g| g.1 == OsLogKind::UasError && g.2 == dev("sdd")),
        "{got:?}"
    );
    assert_eq!(got[0].0, 6_229_447_264);
    // The journal's form: the same, after its `kernel: ` prefix.
    let j = linux("rock64-uas-abort.journal");
    assert_eq!(j.len(), 2, "{j:?}");
    assert!(
        j.iter()
            .all(|g| g.1 == OsLogKind::UasError && g.2 == dev("sdb")),
        "{j:?}"
    );
}

#[test]
fn usb_resets_are_link_resets_of_their_bus_path() {
    let got = linux("frigate-superspeed-reset.dmesg");
    assert_eq!(
        got,
        vec![
            (104_370_517, OsLogKind::LinkReset, dev("4-1")),
            (154_747_010, OsLogKind::LinkReset, dev("4-1")),
        ]
    );
    let s = linux("synology-resets-lower-speed.dmesg");
    let kinds: Vec<_> = s.iter().map(|g| (g.1, g.2.clone())).collect();
    assert_eq!(
        kinds,
        vec![
            (OsLogKind::LowerSpeed, dev("1-2")),
            (OsLogKind::LinkReset, dev("2-1.2")),
            (OsLogKind::LinkReset, dev("2-1.2")),
        ]
    );
}

#[test]
fn a_dying_host_gives_disconnects_an_offline_disk_and_io_errors() {
    let got = linux("rpi4-host-died.syslog");
    let kinds: Vec<_> = got.iter().map(|g| (g.1, g.2.clone())).collect();
    assert_eq!(
        kinds,
        vec![
            (OsLogKind::Disconnect, dev("1-1")),
            (OsLogKind::Disconnect, dev("1-1.4")),
            (OsLogKind::Disconnect, dev("2-2")),
            (OsLogKind::Disconnect, None),
            (OsLogKind::IoError, dev("sda")),
            (OsLogKind::IoError, dev("sda")),
        ]
    );
}

#[test]
fn a_bridge_bound_to_usb_storage_is_a_uas_fallback() {
    let got = linux("rpi-jms579-usb-storage.dmesg");
    assert_eq!(got, vec![(67_945_341, OsLogKind::UasFallback, dev("2-1"))]);
}

#[test]
fn lines_are_the_target_s_only_where_they_name_its_disk_or_usb_path() {
    let lines: Vec<Logged> = kmsg::parse_dmesg(&fixture("rpi4-host-died.syslog"))
        .iter()
        .chain(kmsg::parse_dmesg(&fixture("synology-resets-lower-speed.dmesg")).iter())
        .filter_map(|r| kmsg::logged(r, 0))
        .collect();
    let targets = [TargetDevice {
        label: "/mnt/usb".into(),
        block: Some("sda".into()),
        usb_path: Some("2-1.2".into()),
        usb_speed_mbps: Some(5000.0),
    }];
    let got = match_targets(lines, &targets);
    let ours: Vec<&str> = got
        .iter()
        .filter(|r| r.target.as_deref() == Some("/mnt/usb"))
        .map(|r| r.device.as_deref().unwrap())
        .collect();
    assert_eq!(ours, ["sda", "sda", "2-1.2", "2-1.2"]);
    // The rest are context: other USB devices, the offlined disk the line does not name.
    assert_eq!(got.iter().filter(|r| r.target.is_none()).count(), 5);
    assert!(got.iter().all(|r| r.source == "kernel"));
}

#[test]
fn macos_unified_log_io_errors_are_read_with_their_disk_and_time() {
    let got: Vec<Logged> = fixture("macos-unified.ndjson")
        .lines()
        .filter_map(unified::parse_line)
        .collect();
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got
        .iter()
        .all(|l| l.kind == OsLogKind::IoError && l.device.as_deref() == Some("disk1")));
    assert_eq!(got[0].line, "disk1s2: I/O error.");
    assert_eq!(got[0].source, "unified");
    // 2009-05-25 14:30:59 +0200 = 12:30:59 UTC; the second 32 s later.
    assert_eq!(got[0].time_ns, 1_243_254_659_000_000_000);
    assert_eq!(got[1].time_ns - got[0].time_ns, 32_000_000_000);
}

#[test]
fn windows_storport_resets_and_retried_disk_io_are_read_and_other_events_are_not() {
    let got = eventlog::parse_events(&fixture("windows-system.xml"));
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[0].kind, OsLogKind::LinkReset);
    assert_eq!(got[0].device.as_deref(), Some("RaidPort1"));
    assert_eq!(
        got[0].line,
        r"storahci 129: Reset to device, \Device\RaidPort1, was issued."
    );
    assert_eq!(got[1].kind, OsLogKind::IoError);
    // Disk 2 is what the target's link names `pd2` (as smartctl does).
    assert_eq!(got[1].device.as_deref(), Some("pd2"));
    assert_eq!(got[1].time_ns - got[0].time_ns, 1_500_000_000);
    assert_eq!(
        eventlog::system_time(got[0].time_ns),
        "2009-04-09T01:15:45.000Z"
    );
}

#[test]
fn a_device_enumerated_at_high_speed_on_a_superspeed_target_s_port_is_a_lower_speed() {
    let lines: Vec<Logged> = kmsg::parse_dmesg(&fixture("synology-resets-lower-speed.dmesg"))
        .iter()
        .filter_map(|r| kmsg::logged(r, 0))
        .collect();
    // A SuperSpeed bridge on port 2 of bus 2: `usb 1-2: new high-speed …` is it on the
    // USB 2 bus of the same port.
    let target = |path: &str, mbps: f64| TargetDevice {
        label: "t".into(),
        block: None,
        usb_path: Some(path.into()),
        usb_speed_mbps: Some(mbps),
    };
    let slower: Vec<_> = match_targets(lines.clone(), &[target("2-2", 5000.0)])
        .into_iter()
        .filter(|r| r.target.is_some())
        .map(|r| (r.kind, r.line))
        .collect();
    assert_eq!(
        slower,
        [(
            OsLogKind::LowerSpeed,
            "usb 1-2: new high-speed USB device number 12 using xhci_hcd".to_string()
        )]
    );
    // On another port, or a target that was at high speed already: not kept at all.
    for t in [target("2-3", 5000.0), target("1-2", 480.0)] {
        let got = match_targets(lines.clone(), &[t]);
        assert!(got.iter().all(|r| !r.line.contains(": new ")), "{got:?}");
    }
}
