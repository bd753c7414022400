//! The OS log part of a run, as `hostd run` drives it: started with the manifest, finished
//! after the run. On Linux as root it reads this machine's real kernel log.

use hostd_oslog::OsLogPart;
use hostd_records::link::LinkInfo;
use hostd_records::manifest::{DirectIo, Manifest, TargetInfo};
use hostd_records::outcome::{RunOutcome, RunStatus};
use hostd_records::RunData;
use hostd_store::{RunPart, RunRecords, RunStart, SummaryExt};
use std::path::Path;

/// A target on block device `block` (bus `loop`).
fn target(label: &str, block: &str) -> TargetInfo {
    TargetInfo {
        label: label.into(),
        scheme: "dir".into(),
        mode: "rw".into(),
        path: label.into(),
        test_dir: None,
        fs_type: None,
        mount_point: None,
        device: None,
        device_model: None,
        capacity_bytes: None,
        free_bytes: None,
        direct_io: DirectIo::Direct,
        engine: "threads".into(),
        engine_note: None,
        link: Some(LinkInfo {
            block: Some(block.into()),
            bus: "loop".into(),
            ..Default::default()
        }),
    }
}

/// Runs the part from start to finish around `during`; the summary and records after.
fn run(
    part: &mut OsLogPart,
    dir: &Path,
    during: impl FnOnce(),
) -> (hostd_records::Summary, RunData) {
    let mut manifest = Manifest::new(
        "r",
        0,
        vec![target("/mnt/a", "loop97"), target("/mnt/b", "loop98")],
    );
    let section = part
        .start(&mut RunStart {
            manifest: &mut manifest,
            dir,
            probe_feeds: &mut Vec::new(),
            drive_feeds: &mut Vec::new(),
        })
        .unwrap();
    assert_eq!(section, None);
    during();
    let outcome = RunOutcome {
        status: RunStatus::Completed,
        start_ns: 0,
        end_ns: 1,
        targets: Vec::new(),
        files: Vec::new(),
        intervals: Vec::new(),
        samples: Vec::new(),
        warnings: Vec::new(),
        cleanup: Vec::new(),
        programs: Vec::new(),
        preparation: Vec::new(),
    };
    let summary = hostd_records::Summary::compute("r", &outcome);
    let mut records = RunRecords {
        dir,
        manifest,
        outcome: &outcome,
        summary,
        data: RunData::default(),
        probe_link: Vec::new(),
        analysis: None,
    };
    part.finish(&mut records).unwrap();
    (records.summary, records.data)
}

#[test]
fn a_log_that_cannot_be_read_is_said_once_and_no_file_is_written() {
    let d = tempfile::tempdir().unwrap();
    let mut part = OsLogPart::with_reader(|| {
        Err("cannot read the kernel log (/dev/kmsg: permission denied)".into())
    });
    let (summary, data) = run(&mut part, d.path(), || {});
    let said: Vec<&String> = summary
        .warnings
        .iter()
        .filter(|w| w.contains("kernel log"))
        .collect();
    assert_eq!(
        said,
        ["os log: cannot read the kernel log (/dev/kmsg: permission denied)"]
    );
    assert_eq!(summary.extra["os_log"]["read"], false);
    assert_eq!(data.os_log, None);
    assert!(!d.path().join(hostd_records::os_log::FILE_NAME).exists());
}

#[cfg(target_os = "linux")]
#[test]
fn lines_written_into_the_kernel_log_during_the_run_are_the_targets_they_name() {
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: writing the kernel log needs root");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let mut part = OsLogPart::new();
    let write = |line: &str| std::fs::write("/dev/kmsg", format!("<3>{line}\n")).unwrap();
    let (summary, data) = run(&mut part, d.path(), || {
        write("blk_update_request: I/O error, dev loop97, sector 8 op 0x1:(WRITE) flags 0x800 phys_seg 1 prio class 0");
        write("Buffer I/O error on dev loop98p1, logical block 1, lost async page write");
        write("usb 9-9: reset SuperSpeed USB device number 9 using xhci_hcd");
        write("hostd-oslog test: a line about nothing");
        std::thread::sleep(std::time::Duration::from_millis(200));
    });
    let log = data.os_log.expect("the records in memory");
    let ours: Vec<(Option<&str>, &str)> = log
        .iter()
        .filter(|r| {
            r.line.contains("loop97") || r.line.contains("loop98") || r.line.contains("usb 9-9")
        })
        .map(|r| (r.target.as_deref(), r.kind.as_str()))
        .collect();
    assert_eq!(
        ours,
        [
            (Some("/mnt/a"), "io_error"),
            (Some("/mnt/b"), "io_error"),
            (None, "link_reset")
        ]
    );
    assert!(log.iter().all(|r| !r.line.contains("a line about nothing")));
    assert!(log
        .iter()
        .filter(|r| r.line.contains("loop9"))
        .all(|r| r.source == "user"));
    // The same records in os-log.jsonl, and counted in the summary.
    assert_eq!(hostd_records::os_log::read(d.path()).unwrap(), log);
    assert_eq!(summary.extra["os_log"]["read"], true);
    assert_eq!(summary.extra["os_log"]["counts"]["/mnt/a"]["io_error"], 1);
}
