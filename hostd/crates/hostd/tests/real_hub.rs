//! A hub of three drives on real block devices (issue 44): three loop devices in memory
//! written together by one `hostd run` with the `quick`-like 2–16 MB files. Drive A is held
//! by the kernel to a third of what B and C get while they write (the hub's shared link),
//! and gets the link back 1.5 s after both have written their last file (the watcher's
//! `Handoff`, on the kernel's own byte counters). hostd must find A's recovery once, where
//! the kernel's count shows it (within 2 % of A's bytes), in the view over time: the
//! counters are kept for a target that shared the link, and searched in the stretch it had
//! the link alone.
//!
//! Needs root, loop devices, the blkio/io controller and /dev/shm
//! (`THROTTLESCOPE_REQUIRE_REAL_DEVICE=1` turns a skip into a failure). About 20 s.
#![cfg(target_os = "linux")] // loop devices, cgroups and mount: Linux only

mod common;

use common::realdev::{describe, Handoff, Rig, Schedule};
use hostd_workload::sizes::SizeGenerator;

const MB: u64 = 1_000_000;
/// Bytes each drive writes.
const TOTAL: u64 = 2_000 * MB;
/// A's limit while B and C write, and after they end, bytes/s.
const HELD: u64 = 120 * MB;
const FREE: u64 = 480 * MB;
/// B's and C's limit, bytes/s.
const OTHERS: u64 = 360 * MB;
/// An onset must be within this share of A's bytes of the kernel's mark.
const TOLERANCE: f64 = 0.02;

#[test]
fn a_hub_drive_that_gets_the_link_back_is_found_over_time_where_the_kernel_counts_it() {
    let Some(rig) = Rig::in_memory_many("real_hub", 3, 4 << 30) else {
        return;
    };
    let seed = 1;
    // The bytes `hostd run` writes to B and C (targets 1 and 2: streams 1 and 2 of the
    // seed), less the last 16 MB: both have started their last file.
    let written = |stream| {
        SizeGenerator::new(seed, stream, 2 * MB, 16 * MB)
            .until_total(TOTAL)
            .iter()
            .sum::<u64>()
    };
    let after = vec![(1, written(1) - 16 * MB), (2, written(2) - 16 * MB)];
    let profile = format!(
        "name = \"hub\"\ndescription = \"real-device hub\"\nkind = \"files\"\n[files]\ntotal = \"{}MB\"\nmin_size = \"2MB\"\nmax_size = \"16MB\"\n[io]\nblock_size = \"1MiB\"\nqueue_depth = 4\nphases = [\"write\"]\nverify = false\n",
        TOTAL / MB
    );
    let schedule = Schedule {
        handoff: Some(Handoff {
            dev: 0,
            after,
            delay_s: 1.5,
            bps: FREE,
        }),
        prune: true,
        ..Schedule::default()
    };
    let targets: Vec<String> = (0..3)
        .map(|i| rig.target(i).to_string_lossy().into_owned())
        .collect();
    let out = rig.run_schedule(
        "run",
        &profile,
        seed,
        &targets,
        &[HELD, OTHERS, OTHERS],
        &schedule,
    );
    let a = rig.target(0);
    let a_total: u64 = out.files_of(a).iter().map(|f| f.bytes).sum();
    let (truth, blur) = out.truth(0, a);
    let others_end = [1, 2]
        .iter()
        .map(|&i| out.files_of(rig.target(i)).last().map_or(0, |f| f.end_ns))
        .max()
        .unwrap_or(0);
    let handoff = &out.applied[0];
    let changes = out.changes_of(a, 0);
    let report = format!(
        "A: {:.2} GB written, the kernel's change at {:.3} GB (±{:.3}), {:.2} s after B and C \
         ended; A's rate by the kernel {:.0} → {:.0} MB/s; events of A:\n{}",
        a_total as f64 / 1e9,
        truth / 1e9,
        blur / 1e9,
        (handoff.t_ns - others_end) as f64 / 1e9,
        out.kernel_rate(0, handoff.t_ns - 1_000_000_000, handoff.t_ns)
            .unwrap_or(f64::NAN)
            / 1e6,
        out.kernel_rate(0, handoff.t_ns, handoff.t_ns + 1_000_000_000)
            .unwrap_or(f64::NAN)
            / 1e6,
        describe(&changes)
    );
    let report = format!(
        "{report}\nfound by: {}",
        changes
            .iter()
            .map(|e| e["found_by"].to_string())
            .collect::<Vec<_>>()
            .join("; ")
    );
    eprintln!("{report}");
    // The change is A's to find: it came after the others ended, with A still writing.
    assert!(handoff.t_ns > others_end, "{report}");
    assert!(
        truth + 0.1 * a_total as f64 <= a_total as f64,
        "A had finished: {report}"
    );
    assert_eq!(changes.len(), 1, "{report}");
    let e = changes[0];
    assert_eq!(e["kind"], "recovery", "{report}");
    let onset = e["onset_bytes"].as_f64().unwrap_or(f64::NAN);
    assert!(
        (onset - truth).abs() <= TOLERANCE * a_total as f64 + blur,
        "onset {:.3} GB: {report}",
        onset / 1e9
    );
    assert_ne!(e["found_by"]["view"], "per_file", "{report}");
}
