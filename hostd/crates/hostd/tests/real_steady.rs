//! Steady-state ends (`[steady_state]`, fio's `ss=`) on a real block device (a loop device
//! over a file in memory, so that this machine's disk and its stalls do not pace it; ext4,
//! direct I/O) whose write rate the kernel's blkio controller sets
//! (`common::realdev`): a `fill` that may end at steady state writes while the limit
//! alternates between 5 and 30 MB/s (1 s low in every 3 s, three times), then stays at
//! 30 MB/s from a moment the watcher records. The fill must not end while the rate still
//! changes, and must end within a window (plus one sample of alignment and a file) after
//! the rate settled — long before the fill itself would be done.
//!
//! Needs root, loop devices and the blkio/io controller; `THROTTLESCOPE_REQUIRE_REAL_DEVICE=1`
//! turns a skip into a failure. About 20 s.
#![cfg(target_os = "linux")] // loop devices, cgroups and mount: Linux only

mod common;

use common::realdev::{Pulses, Rig};
use serde_json::Value;

/// The settled limit, and the low one of the pulses before it.
const HIGH: u64 = 30_000_000;
const LOW: u64 = 5_000_000;
/// The steady-state window, s.
const WINDOW_S: f64 = 4.0;

#[test]
fn a_fill_ends_at_steady_state_after_the_kernel_settles_the_rate_and_not_before() {
    let Some(rig) = Rig::in_memory("steady_state_fill", 768 << 20) else {
        return;
    };
    let t = rig.target(0);
    let profile = format!(
        "name = \"fill-steady\"\nkind = \"fill\"\n[fill]\nfraction = 0.9\nfile_size = \"4MiB\"\n[io]\nblock_size = \"1MiB\"\nqueue_depth = 4\nphases = [\"write\"]\n[steady_state]\ncriteria = [\"bw:15%\"]\nwindow = \"{WINDOW_S}s\"\n"
    );
    // From 8 MB on: 1 s at 5 MB/s in every 3 s, three times; 30 MB/s before and after.
    let pulses = [Pulses {
        dev: 0,
        at_bytes: 8_000_000,
        low_bps: LOW,
        high_bps: HIGH,
        low_s: 1.0,
        period_s: 3.0,
        count: 3,
    }];
    let o = rig.run_with(
        &profile,
        1,
        &[t.to_string_lossy().into_owned()],
        &[HIGH],
        &[],
        &pulses,
    );
    // The moment the rate settled: the last change, back to 30 MB/s.
    let settled = o.applied.last().expect("the pulses were applied");
    assert_eq!(settled.bps, HIGH);
    let settled_ns = settled.t_ns;
    let summary: Value =
        serde_json::from_slice(&std::fs::read(o.run.join("summary.json")).unwrap()).unwrap();
    let ss = summary["programs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["kind"] == "steady-state")
        .unwrap_or_else(|| panic!("no steady-state result: {}", summary["programs"]))["result"]
        .clone();
    let last_file_end = o.files.iter().map(|f| f.end_ns).max().unwrap();
    let after = (last_file_end - settled_ns) as f64 / 1e9;
    eprintln!(
        "realdev steady_state: settled at {settled_ns}, the fill ended {after:.2} s later ({} files, {:.0} MB); {ss}",
        o.files.len(),
        o.files.iter().map(|f| f.bytes).sum::<u64>() as f64 / 1e6
    );
    assert_eq!(ss["ended_by"], "bw:15%", "{ss}\n{}", o.output);
    assert_eq!(ss["end_ns"].as_i64().unwrap(), last_file_end, "{ss}");
    // Not while the rate was changing: the window's samples must all be past the change
    // (one of them may hold a sliver of the last low second and still be within 15 %).
    assert!(
        after >= WINDOW_S - 1.0,
        "ended {after:.2} s after the rate settled; the window is {WINDOW_S} s"
    );
    // Soon after: the window, one 1 s sample of alignment, the file in flight, slack.
    assert!(
        after <= WINDOW_S + 2.0,
        "ended {after:.2} s after the rate settled; the window is {WINDOW_S} s"
    );
    // Long before the fill was done: it wrote less than half the 90 % it would have.
    let written: u64 = o.files.iter().map(|f| f.bytes).sum();
    assert!(written < 340_000_000, "{written} B written");
    assert!(
        o.output.contains("steady state after") && o.output.contains("by bw:15%"),
        "{}",
        o.output
    );
}
