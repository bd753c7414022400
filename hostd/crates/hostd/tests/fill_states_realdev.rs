//! The `fill-states` profile on a real block device (loop device, ext4, direct I/O,
//! `common::realdev`) whose write rate the kernel's blkio controller sets: an SLC cache
//! that shrinks as the drive fills is emulated on the cgroup's own byte counter — each
//! level's measured write runs at a fast limit for the level's cache size, then at a
//! slow one; the fill between levels runs fast. The per-level cache size and post-cache
//! rate hostd reports must match what the kernel was told, the fill data must be read
//! back verified, and nothing of the run may stay on the device.
//!
//! Needs root, loop devices and the blkio/io controller; `THROTTLESCOPE_REQUIRE_REAL_DEVICE=1`
//! turns a skip into a failure. About 80 s.
#![cfg(target_os = "linux")] // loop devices, cgroups and mount: Linux only

mod common;

use common::realdev::{Rig, Step};
use common::{assert_ok, hostd, read_json};

const MIB: u64 = 1 << 20;
/// The emulated cache's fast and slow write rates, bytes/s.
const FAST: u64 = 24_000_000;
const SLOW: u64 = 8_000_000;
/// Bytes of the measured write at each level.
const WRITE: u64 = 200 * MIB;
/// Size of each file: 0.35 s at the fast rate, long against the throttle's time slice.
const FILE: u64 = 8 * MIB;

fn profile() -> String {
    format!(
        "name = \"fill-states-test\"\ndescription = \"real-device test\"\nkind = \"fill-states\"\n[fill_states]\nlevels = [0, 25, 50, 75]\nwrite = \"{}MiB\"\nfile_size = \"{}MiB\"\n[io]\nblock_size = \"1MiB\"\nqueue_depth = 4\nphases = [\"write\"]\nverify = true\n",
        WRITE / MIB,
        FILE / MIB
    )
}

/// From `hostd run --dry-run`: the bytes written before each measured-write phase starts,
/// (phase, bytes), in order.
fn write_marks(rig: &Rig, profile: &std::path::Path) -> Vec<(String, u64)> {
    let out = hostd()
        .args(["run", "--dry-run", "--profile"])
        .arg(profile)
        .arg("--target")
        .arg(rig.target(0))
        .output()
        .unwrap();
    assert_ok(&out);
    let plan = String::from_utf8_lossy(&out.stdout).to_string();
    let mut written = 0u64;
    let mut marks: Vec<(String, u64)> = Vec::new();
    for line in plan.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        // "  write-25%  #12  f00012.dat  8388608 bytes  Write bs … qd …"
        if words.len() < 6 || words[4] != "bytes" {
            continue;
        }
        let (phase, bytes) = (words[0], words[3].parse::<u64>().unwrap());
        if phase.starts_with("write-") && marks.last().is_none_or(|m| m.0 != phase) {
            marks.push((phase.to_string(), written));
        }
        if words[5] == "Write" {
            written += bytes;
        }
    }
    assert_eq!(marks.len(), 4, "{plan}");
    marks
}

#[test]
fn fill_states_finds_each_levels_cache_and_post_cache_rate_on_verified_fill() {
    let Some(rig) = Rig::new("fill-states", 1, 5 << 28) else {
        return;
    };
    let path = rig.dir().join("fill-states.toml");
    std::fs::write(&path, profile()).unwrap();
    let marks = write_marks(&rig, &path);
    // The cache shrinks as the drive fills: 128, 104, 88, 72 MiB (at least 9 files on each
    // side of the drop: the analysis needs 8 clean ones, and the file the limit changes in
    // is neither fast nor slow).
    let caches = [128 * MIB, 104 * MIB, 88 * MIB, 72 * MIB];
    let mut steps = Vec::new();
    for ((_, at), cache) in marks.iter().zip(caches) {
        steps.push(Step {
            dev: 0,
            at_bytes: at + cache,
            bps: SLOW,
        });
        steps.push(Step {
            dev: 0,
            at_bytes: at + WRITE,
            bps: FAST,
        });
    }
    // The last "fast again" is never reached: the run ends there.
    steps.pop();
    let target = rig.target(0).to_string_lossy().to_string();
    let out = rig.run(&profile(), 3, &[target], &[FAST], &steps);

    let summary = read_json(&out.run.join("summary.json"));
    let sweep = summary["programs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["kind"] == "fill-states")
        .unwrap_or_else(|| panic!("no fill-states result: {}", out.output));
    let levels = sweep["result"]["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 4, "{sweep}");
    let mut table = Vec::new();
    for (l, cache) in levels.iter().zip(caches) {
        let found = l["cache_bytes"].as_u64().unwrap_or_else(|| panic!("{l}"));
        let (lo, hi) = (
            l["cache_bytes_low"].as_u64().unwrap(),
            l["cache_bytes_high"].as_u64().unwrap(),
        );
        let post = l["post_cache_bps"]
            .as_f64()
            .unwrap_or_else(|| panic!("{l}"));
        table.push(format!(
            "{:>3} % (actual {:.1} %): cache {:.1} MiB [{:.1}–{:.1}] (kernel {} MiB), post-cache {:.1} MB/s [{:.1}–{:.1}] (kernel {:.1})",
            l["level_pct"],
            l["actual_pct"].as_f64().unwrap_or(f64::NAN),
            found as f64 / MIB as f64,
            lo as f64 / MIB as f64,
            hi as f64 / MIB as f64,
            cache / MIB,
            post / 1e6,
            l["post_cache_bps_low"].as_f64().unwrap() / 1e6,
            l["post_cache_bps_high"].as_f64().unwrap() / 1e6,
            SLOW as f64 / 1e6
        ));
        // Within one file and 10 %.
        let err = found.abs_diff(cache) as f64;
        assert!(err <= (FILE as f64) + 0.1 * cache as f64, "{l}");
        // Per-file rates run a little below the limit (each file's open and first
        // I/O wait in the throttle's queue): 6.5 to 7.6 MB/s were seen against 8.
        assert!((post / SLOW as f64 - 1.0).abs() < 0.3, "{l}");
    }
    eprintln!("fill-states table:\n{}", table.join("\n"));
    // Falling with the fill, as the kernel was told.
    let found: Vec<u64> = levels
        .iter()
        .map(|l| l["cache_bytes"].as_u64().unwrap())
        .collect();
    assert!(found.windows(2).all(|w| w[0] > w[1]), "{found:?}");

    // Every fill file read back and verified; every measured write whole.
    let files = common::csv_rows(&out.run.join("files.csv"));
    let header = &files[0];
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (phase, verified, status) = (col("phase"), col("verified"), col("status"));
    let verifies: Vec<&Vec<String>> = files[1..]
        .iter()
        .filter(|r| r[phase].starts_with("verify-"))
        .collect();
    let fills = files[1..]
        .iter()
        .filter(|r| r[phase].starts_with("fill-"))
        .count();
    assert!(
        fills > 0 && verifies.len() == fills,
        "{fills} fill files, {} verify reads",
        verifies.len()
    );
    assert!(
        verifies
            .iter()
            .all(|r| r[verified] == "true" && r[status] == "ok"),
        "a fill file did not verify"
    );
    // The run's test directory is gone: only lost+found is left on the device.
    let left: Vec<_> = std::fs::read_dir(rig.target(0))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["lost+found"], "{left:?}");
    let text = std::fs::read_to_string(out.run.join("report.html")).unwrap();
    assert!(
        text.contains(r#"id="fill-states-table""#)
            && text.contains(r#"id="chart-fill-states-cache""#)
    );
    // `hostd analyze` prints what the run printed, the fill-state table made again from the
    // files: the same lines.
    let printed: Vec<&str> = out
        .output
        .lines()
        .skip_while(|l| !l.starts_with("fill states (SLC cache"))
        .take(1 + levels.len())
        .collect();
    assert_eq!(printed.len(), 1 + levels.len(), "{}", out.output);
    let again = hostd().arg("analyze").arg(&out.run).output().unwrap();
    assert_ok(&again);
    let again = String::from_utf8_lossy(&again.stdout);
    for line in printed {
        assert!(again.contains(line), "`{line}` not printed again:\n{again}");
    }
}
