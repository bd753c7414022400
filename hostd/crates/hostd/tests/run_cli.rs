//! `hostd run` and `hostd profiles` through the built binary: real files with
//! direct I/O, the run directory, and the faults a user meets.

use hostd_workload::ProfileExt;
use std::path::{Path, PathBuf};
use std::process::Output;
#[cfg(unix)]
use std::process::Stdio;
#[cfg(unix)]
use std::time::{Duration, Instant};

mod common;
use common::{
    assert_ok, csv_rows, disk_target, disk_tempdir, hostd, hostd_run, read_json, small_profile,
    text,
};

fn dir_is_empty(p: &Path) -> bool {
    std::fs::read_dir(p).unwrap().next().is_none()
}

#[test]
fn profiles_lists_every_builtin_with_parameters() {
    let o = hostd().arg("profiles").output().unwrap();
    assert!(o.status.success());
    let t = text(&o);
    for p in hostd_records::profile::Profile::builtins() {
        assert!(t.contains(&p.name), "{} missing:\n{t}", p.name);
    }
    assert!(
        t.contains("160 files of 2MB-2GB") && t.contains("qd 32"),
        "{t}"
    );
    let o = hostd().args(["profiles", "quick"]).output().unwrap();
    assert!(text(&o).contains("[files]"));
}

#[test]
fn run_writes_a_complete_run_directory_and_removes_its_test_files() {
    let (work, target, out) = disk_target();
    let prof = small_profile(work.path(), 4, "3MB");
    let o = hostd_run(&prof, [&target], &out)
        .args(["--seed", "42"])
        .output()
        .unwrap();
    assert_ok(&o);
    let t = text(&o);
    assert!(
        t.contains("completed") && t.contains("trim20") && t.contains("theil-sen"),
        "{t}"
    );
    for f in [
        "manifest.json",
        "files.csv",
        "intervals.csv",
        "summary.json",
        "run-events.jsonl",
    ] {
        assert!(out.join(f).exists(), "{f} missing");
    }
    let rows = csv_rows(&out.join("files.csv"));
    assert_eq!(
        &rows[0][..8],
        ["target", "phase", "index", "start_ns", "end_ns", "bytes", "mbps", "verified"]
    );
    assert_eq!(rows.len(), 1 + 8);
    assert!(rows[5..].iter().all(|r| r[1] == "read" && r[7] == "true"));
    let manifest = read_json(&out.join("manifest.json"));
    assert_eq!(manifest["seed"], 42);
    assert_eq!(manifest["profile"]["files"]["count"], 4);
    assert_eq!(manifest["targets"][0]["direct_io"]["status"], "direct");
    assert!(manifest["targets"][0]["engine"].as_str().unwrap().len() > 2);
    assert!(manifest["host"]["kernel"].as_str().unwrap().len() > 2);
    assert!(manifest["targets"][0]["fs_type"].is_string());
    let summary = read_json(&out.join("summary.json"));
    assert_eq!(summary["status"], "completed");
    assert_eq!(summary["phases"].as_array().unwrap().len(), 2);
    assert!(dir_is_empty(&target), "test files left behind");
    // Same seed, same sizes.
    let out2 = work.path().join("run2");
    let o = hostd_run(&prof, [&target], &out2)
        .args(["--seed", "42"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let sizes = |p: &Path| {
        csv_rows(&p.join("files.csv"))
            .iter()
            .skip(1)
            .map(|r| r[5].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(sizes(&out), sizes(&out2));
}

#[test]
fn dry_run_prints_the_plan_and_writes_nothing() {
    let work = disk_tempdir();
    let o = hostd()
        .args([
            "run",
            "--profile",
            "stibium-160",
            "--dry-run",
            "--seed",
            "7",
            "--target",
        ])
        .arg(work.path())
        .output()
        .unwrap();
    let t = text(&o);
    assert!(
        t.contains("160 files") && t.contains("free space") && t.contains("nothing written"),
        "{t}"
    );
    assert!(dir_is_empty(work.path()));
    // The run directory's size: stibium-160's 320 file records (write and read).
    assert!(
        t.contains("run directory: about ") && t.contains("(320 file records × 512 B"),
        "{t}"
    );
    assert!(!t.contains("probe "), "no probe, no probe storage: {t}");
}

/// `--dry-run` with a probe prices its samples: 16 B each at the probe's rate, for the
/// whole of a duration profile.
#[test]
fn dry_run_prices_the_probe_samples_of_a_duration_run() {
    let work = disk_tempdir();
    let o = hostd()
        .args(["run", "--profile", "soak-8h", "--dry-run", "--probe", "sim"])
        .args(["--probe-rate", "500", "--target"])
        .arg(work.path())
        .output()
        .unwrap();
    let t = text(&o);
    // 8 h × 500 Hz × 16 B = 230.4 MB.
    assert!(t.contains("28800 s × 1 target(s)"), "{t}");
    assert!(t.contains("probe 500 Hz × 16 B = 230.4 MB"), "{t}");
    assert!(dir_is_empty(work.path()));
}

/// `--dry-run` with InfluxDB adds the spool's cap, the worst case of a server away long:
/// 1 GiB by default, `--influx-spool-max` when given; nothing without InfluxDB.
#[test]
fn dry_run_prices_the_influx_spool_at_its_cap() {
    let work = disk_tempdir();
    let dry = |extra: &[&str]| {
        let o = hostd()
            .args(["run", "--profile", "quick", "--dry-run", "--target"])
            .arg(work.path())
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        text(&o)
    };
    let url = ["--influx-url", "http://127.0.0.1:9"];
    let t = dry(&url);
    assert!(t.contains("InfluxDB spool at most 1073.7 MB"), "{t}");
    let t = dry(&[&url[..], &["--influx-spool-max", "200MB"]].concat());
    assert!(t.contains("InfluxDB spool at most 200.0 MB"), "{t}");
    let t = dry(&[]);
    assert!(
        t.contains("run directory: about ") && !t.contains("spool"),
        "{t}"
    );
    let o = hostd()
        .args([
            "run",
            "--profile",
            "quick",
            "--dry-run",
            "--influx-spool-max",
            "lots",
        ])
        .args(["--target"])
        .arg(work.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("`lots` is not a size"), "{}", text(&o));
    assert!(dir_is_empty(work.path()));
}

#[test]
fn unknown_profile_is_a_clear_error() {
    let work = disk_tempdir();
    let o = hostd()
        .args(["run", "--profile", "nonesuch", "--target"])
        .arg(work.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let t = text(&o);
    assert!(
        t.contains("unknown profile `nonesuch`") && t.contains("quick"),
        "{t}"
    );
}

#[test]
fn a_port_budget_outside_half_a_watt_to_240_w_is_refused_before_anything_is_written() {
    let work = disk_tempdir();
    let target = work.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let out = work.path().join("run");
    for bad in ["0.4", "240.5", "-5", "nan", "15W"] {
        let o = hostd_run("quick", [&target], &out)
            .args(["--probe", "sim", &format!("--port-budget={bad}")])
            .output()
            .unwrap();
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{bad}: {t}");
        assert!(t.contains("--port-budget"), "{bad}: {t}");
        assert!(dir_is_empty(&target), "{bad}: the target was written");
        assert!(!out.exists(), "{bad}: a run directory was made");
    }
    // In range, but with no probe to judge bus power by: refused too, by name.
    let o = hostd_run("quick", [&target], &out)
        .args(["--port-budget", "4.5"])
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0));
    assert!(text(&o).contains("--port-budget need"), "{}", text(&o));
    assert!(dir_is_empty(&target) && !out.exists());
}

#[test]
fn too_little_free_space_is_refused_before_writing() {
    let work = disk_tempdir();
    let p = work.path().join("huge.toml");
    std::fs::write(&p, "name = \"huge\"\nkind = \"files\"\n[files]\ncount = 50000\nmin_size = \"2GB\"\nmax_size = \"2GB\"\n[io]\nblock_size = \"1MiB\"\nqueue_depth = 4\nphases = [\"write\"]\n").unwrap();
    let target = work.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let o = hostd_run(&p, [&target], &work.path().join("run"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("too little free space"), "{}", text(&o));
    assert!(dir_is_empty(&target));
}

#[test]
fn disk_full_mid_run_keeps_the_records_and_removes_the_files() {
    let (work, target, out) = disk_target();
    let prof = small_profile(work.path(), 6, "3MB");
    let o = hostd_run(&prof, [&target], &out)
        .env("HOSTD_INJECT_ENOSPC_AFTER", "5MB")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("disk full"), "{}", text(&o));
    let rows = csv_rows(&out.join("files.csv"));
    assert!(
        rows.iter().any(|r| r[12] == "ok")
            && rows.iter().any(|r| r[12].starts_with("error: disk full"))
    );
    let summary = read_json(&out.join("summary.json"));
    assert!(summary["status"].as_str().unwrap().starts_with("failed: "));
    assert!(dir_is_empty(&target));
}

#[test]
#[cfg(unix)] // signals or mode bits
fn sigterm_stops_cleanly_keeps_results_and_removes_test_files() {
    let (work, target, out) = disk_target();
    let prof = small_profile(work.path(), 400, "8MB");
    let child = hostd_run(&prof, [&target], &out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until at least one file is recorded.
    let start = Instant::now();
    while std::fs::read_to_string(out.join("files.csv"))
        .map(|t| t.lines().count())
        .unwrap_or(0)
        < 3
    {
        assert!(start.elapsed() < Duration::from_secs(60), "no progress");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    assert!(text(&o).contains("interrupted"));
    let rows = csv_rows(&out.join("files.csv"));
    assert!(rows.len() >= 3 && rows.len() < 801, "{}", rows.len());
    let summary = read_json(&out.join("summary.json"));
    assert_eq!(summary["status"], "interrupted");
    assert!(dir_is_empty(&target), "test files left behind");
}

#[test]
fn tmpfs_target_needs_allow_cached_and_is_recorded_as_not_direct() {
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() {
        eprintln!("skipped: no /dev/shm");
        return;
    }
    let t = tempfile::tempdir_in(shm).unwrap();
    let work = disk_tempdir();
    let prof = small_profile(work.path(), 2, "2MB");
    let o = hostd_run(&prof, [t.path()], &work.path().join("r1"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("--allow-cached"), "{}", text(&o));
    let o = hostd_run(&prof, [t.path()], &work.path().join("r2"))
        .arg("--allow-cached")
        .output()
        .unwrap();
    assert_ok(&o);
    assert!(text(&o).contains("NOT in force"), "{}", text(&o));
    let m = read_json(&work.path().join("r2/manifest.json"));
    assert_ne!(m["targets"][0]["direct_io"]["status"], "direct");
    assert_eq!(m["allow_cached"], true);
}

#[test]
fn two_targets_report_the_all_active_window() {
    let work = disk_tempdir();
    let (a, b) = (work.path().join("a"), work.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    let out = work.path().join("run");
    let prof = small_profile(work.path(), 8, "6MB");
    let targets = [
        format!("{}:write", a.display()),
        format!("{}:read", b.display()),
    ];
    let o = hostd_run(&prof, targets, &out).output().unwrap();
    assert_ok(&o);
    assert!(text(&o).contains("targets active for"), "{}", text(&o));
    let s = read_json(&out.join("summary.json"));
    let w = &s["window"];
    assert!(w["seconds"].as_f64().unwrap() > 0.0);
    let per: f64 = w["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["mbps"].as_f64().unwrap())
        .sum();
    assert!((per - w["aggregate_mbps"].as_f64().unwrap()).abs() < 1e-6 * per.max(1.0));
    let targets: Vec<&str> = csv_rows(&out.join("intervals.csv"))
        .iter()
        .skip(1)
        .map(|r| if r[0].ends_with("/a") { "a" } else { "b" })
        .collect();
    assert!(targets.contains(&"a") && targets.contains(&"b"));
}

#[test]
fn existing_run_directory_is_not_overwritten() {
    let work = disk_tempdir();
    let out = work.path().join("run");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("notes.txt"), b"mine").unwrap();
    let o = hostd_run("quick", [work.path()], &out).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("not empty"), "{}", text(&o));
    assert_eq!(std::fs::read(out.join("notes.txt")).unwrap(), b"mine");
}

#[test]
#[cfg(unix)] // signals or mode bits
fn a_probe_that_fails_to_start_leaves_nothing_on_the_target() {
    use std::os::unix::fs::PermissionsExt;
    let work = disk_tempdir();
    let target = work.path().join("target");
    std::fs::create_dir(&target).unwrap();
    // A "simulator" that exits without announcing its pseudo-terminal: the
    // probe's part fails in start(), after the target was prepared.
    let fake = work.path().join("fake-probe-sim");
    std::fs::write(&fake, "#!/bin/sh\necho 'not a pty line'\nexit 3\n").unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = work.path().join("run");
    let o = hostd_run("quick", [&target], &out)
        .args(["--probe", "sim"])
        .env("THROTTLESCOPE_PROBE_SIM", &fake)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("cannot start probe"), "{}", text(&o));
    assert!(dir_is_empty(&target), "the test directory was left behind");
    assert!(
        !out.join("files.csv").exists(),
        "a refused run keeps no half-made run directory"
    );
}

#[test]
fn one_directory_can_be_a_write_and_a_read_target_at_once() {
    let work = disk_tempdir();
    let dir = work.path().join("drive");
    std::fs::create_dir(&dir).unwrap();
    let out = work.path().join("run");
    let prof = small_profile(work.path(), 4, "4MB");
    let targets = [
        format!("{}:write", dir.display()),
        format!("{}:read", dir.display()),
    ];
    let o = hostd_run(&prof, targets, &out).output().unwrap();
    assert_ok(&o);
    let rows = csv_rows(&out.join("files.csv"));
    let verified_reads = rows
        .iter()
        .skip(1)
        .filter(|r| r[1] == "read" && r[7] == "true")
        .count();
    assert_eq!(verified_reads, 4, "{rows:?}");
    assert!(dir_is_empty(&dir), "both targets' test files are removed");
}

#[test]
fn an_interval_spanning_write_and_read_is_labelled_with_both() {
    let (work, target, out) = disk_target();
    let prof = small_profile(work.path(), 4, "3MB");
    let o = hostd_run(&prof, [&target], &out).output().unwrap();
    assert_ok(&o);
    let files = csv_rows(&out.join("files.csv"));
    let ns = |r: &Vec<String>, c: usize| r[c].parse::<u64>().unwrap();
    let last_write_end = files
        .iter()
        .skip(1)
        .filter(|r| r[1] == "write")
        .map(|r| ns(r, 4))
        .max()
        .unwrap();
    let first_read_start = files
        .iter()
        .skip(1)
        .filter(|r| r[1] == "read")
        .map(|r| ns(r, 3))
        .min()
        .unwrap();
    let intervals = csv_rows(&out.join("intervals.csv"));
    // The interval in which the write phase ended and the read phase began.
    let spanning: Vec<&Vec<String>> = intervals
        .iter()
        .skip(1)
        .filter(|r| ns(r, 1) < last_write_end && first_read_start < ns(r, 2))
        .collect();
    assert!(!spanning.is_empty(), "{intervals:?}");
    for r in spanning {
        assert_eq!(r[5], "write+read", "{r:?}");
    }
    // Intervals inside one phase keep its plain name.
    assert!(intervals
        .iter()
        .skip(1)
        .all(|r| ["write", "read", "write+read"].contains(&r[5].as_str())));
}

/// A successful `hostd run` of `quick` on `sim:steady*20:write` with `extra` arguments:
/// (scratch directory, run directory, what it printed).
fn quick_on_a_simulated_target(extra: &[&str]) -> (tempfile::TempDir, PathBuf, Output) {
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("run");
    let o = hostd_run("quick", ["sim:steady*20:write"], &out)
        .args(extra)
        .output()
        .unwrap();
    assert_ok(&o);
    (work, out, o)
}

#[test]
fn a_simulated_targets_bytes_reach_the_intervals() {
    // The simulator counts a file's bytes when the file ends; the intervals
    // (and the live view, which reads the same counters) must see them.
    let (_work, out, o) = quick_on_a_simulated_target(&["--seed", "7"]);
    let files: u64 = csv_rows(&out.join("files.csv"))
        .iter()
        .skip(1)
        .map(|r| r[5].parse::<u64>().unwrap())
        .sum();
    let intervals: u64 = csv_rows(&out.join("intervals.csv"))
        .iter()
        .skip(1)
        .map(|r| r[3].parse::<u64>().unwrap())
        .sum();
    assert!(files > 0);
    assert_eq!(
        intervals, files,
        "intervals.csv must carry every byte of files.csv"
    );
    let t = text(&o);
    assert!(
        t.contains("note: sim:steady*20: simulated, played 20× faster"),
        "{t}"
    );
    assert!(!t.contains("page cache"), "{t}");
}

#[test]
#[cfg(unix)] // signals or mode bits
fn files_csv_is_readable_like_every_other_file_of_the_run() {
    use std::os::unix::fs::PermissionsExt;
    let (_work, out, _) = quick_on_a_simulated_target(&["--probe", "sim"]);
    let mode = |f: &str| std::fs::metadata(out.join(f)).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode("files.csv"), mode("intervals.csv"));
    assert_eq!(mode("files.csv"), mode("manifest.json"));
}

#[test]
fn a_quick_run_summary_fits_one_screen_and_says_what_and_where() {
    let (_work, target, out) = disk_target();
    let o = hostd_run("quick", [&target], &out)
        .args(["--probe", "sim"])
        .output()
        .unwrap();
    assert_ok(&o);
    // The simulated probe reads its port (the simulator's): no word of an unknown budget,
    // on stdout or stderr (issue 40).
    assert!(!text(&o).contains("budget unknown"), "{}", text(&o));
    let t = String::from_utf8_lossy(&o.stdout).to_string();
    let lines: Vec<&str> = t.lines().collect();
    // Physical lines are at most 160 columns: a longer event goes on over indented lines.
    let wide: Vec<&&str> = lines.iter().filter(|l| l.chars().count() > 160).collect();
    assert!(wide.is_empty(), "wider than 160 columns: {wide:#?}");
    // The logical lines: an event's continuation joined to the line it continues.
    let mut logical: Vec<String> = Vec::new();
    for l in &lines {
        match (
            l.strip_prefix(hostd_analysis::event_lines::CONTINUATION),
            logical.last_mut(),
        ) {
            (Some(rest), Some(last)) if !rest.starts_with(' ') => {
                last.push(' ');
                last.push_str(rest);
            }
            _ => logical.push(l.to_string()),
        }
    }
    let lines: Vec<&str> = logical.iter().map(String::as_str).collect();
    // One screen: 28 lines of at most 160 columns — 27 while the write phase is too short to
    // examine (one line says so), 28 when a slow disk makes it long enough (its "what
    // happened" line: no SLC-cache drop, no thermal throttle), each of the two phases with a
    // line of its bus power against the simulated probe's port — besides what happened: an
    // event and the energy around it, or a warning (bimodal per-file rates when this
    // machine's disk is loaded) add a line each, as they must.
    let happened = |l: &&str| {
        l.starts_with("warning: ")
            || l.contains("(confidence ")
            || l.contains(" energy around the ")
    };
    let framing = lines.iter().filter(|l| !happened(l)).count();
    assert!(
        framing <= 28,
        "{framing} lines besides events and warnings:\n{t}"
    );
    assert!(t.contains("measured: profile quick: "), "{t}");
    assert!(
        t.contains(&format!("report: {}", out.join("report.html").display())),
        "{t}"
    );
    // No label cut short.
    assert!(!t.contains('…'), "{t}");
    // The statistics once (the table), not again from the analysis.
    assert_eq!(t.matches("trim20").count(), 1, "{t}");
    assert!(!t.contains("20% trimmed"), "{t}");
    // The full path once where the targets are named; short labels elsewhere.
    let full = target.display().to_string();
    let named: Vec<&&str> = lines
        .iter()
        .filter(|l| l.contains(&full) && !l.starts_with("removed "))
        .collect();
    assert_eq!(named.len(), 1, "{named:#?}");
    assert!(named[0].starts_with("on: target = "), "{t}");
}

#[test]
fn a_run_records_the_latency_of_every_io_per_file_interval_and_phase() {
    use hostd_records::latency::read_latency_log;
    let work = disk_tempdir();
    let target = work.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let out = work.path().join("run");
    let prof = small_profile(work.path(), 3, "3MB");
    let o = hostd()
        .args(["run", "--profile"])
        .arg(&prof)
        .arg("--target")
        .arg(&target)
        .arg("--out")
        .arg(&out)
        .args(["--seed", "7"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("latency µs"), "{}", text(&o));
    // files.csv and intervals.csv: each file's I/Os counted with their
    // percentiles, and the intervals holding every I/O once.
    let files = csv_rows(&out.join("files.csv"));
    let col = |rows: &Vec<Vec<String>>, name: &str| rows[0].iter().position(|c| c == name).unwrap();
    let (count, p50) = (col(&files, "lat_io_count"), col(&files, "lat_p50_ns"));
    let mut total = 0u64;
    for f in &files[1..] {
        let ios = f[5].parse::<u64>().unwrap().div_ceil(1 << 20);
        assert_eq!(f[count].parse::<u64>().unwrap(), ios, "{f:?}");
        let pct: Vec<u64> = f[p50..p50 + 6].iter().map(|v| v.parse().unwrap()).collect();
        assert!(pct.windows(2).all(|w| w[0] <= w[1]) && pct[0] > 0, "{f:?}");
        total += ios;
    }
    let intervals = csv_rows(&out.join("intervals.csv"));
    let icount = col(&intervals, "lat_io_count");
    let in_intervals: u64 = intervals[1..]
        .iter()
        .map(|r| r[icount].parse::<u64>().unwrap_or(0))
        .sum();
    assert_eq!(in_intervals, total);
    // The full histograms, read back from the interval logs.
    let logged = read_latency_log(&std::fs::read(out.join("latency-files.hlog")).unwrap()).unwrap();
    assert_eq!(logged.len(), files.len() - 1);
    assert!(logged.iter().all(|l| l.tag.starts_with("file/0/")));
    assert_eq!(
        logged.iter().map(|l| l.histogram().count()).sum::<u64>(),
        total
    );
    let logged =
        read_latency_log(&std::fs::read(out.join("latency-intervals.hlog")).unwrap()).unwrap();
    assert_eq!(
        logged.iter().map(|l| l.histogram().count()).sum::<u64>(),
        total
    );
    // The report draws latency over time and the percentiles of each phase.
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(report.contains(r#"id="chart-latency-time""#));
    assert!(report.contains(r#"id="chart-latency-percentiles""#));
    // summary.json: per phase, under `latency`.
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    for p in summary["phases"].as_array().unwrap() {
        let l = &p["latency"];
        let p50 = l["p50_ns"].as_u64().unwrap();
        let p999 = l["p99_9_ns"].as_u64().unwrap();
        assert!(
            p50 > 0 && p50 <= p999 && p999 <= l["max_ns"].as_u64().unwrap(),
            "{p}"
        );
    }
}

#[test]
fn how_the_engine_waited_is_recorded_next_to_the_figures() {
    // By default the engine waits asleep, as fio does; `--poll` or the profile's
    // `io.poll` make it poll first, and the manifest, the summary and the report say so.
    let work = disk_tempdir();
    let prof = small_profile(work.path(), 1, "1MB");
    let polling = work.path().join("polling.toml");
    let text_of = std::fs::read_to_string(&prof).unwrap();
    std::fs::write(&polling, format!("{text_of}poll = true\n")).unwrap();
    for (name, profile, extra, wait) in [
        ("default", &prof, None, "sleep"),
        ("flag", &prof, Some("--poll"), "poll"),
        ("profile", &polling, None, "poll"),
    ] {
        let target = work.path().join(format!("target-{name}"));
        std::fs::create_dir(&target).unwrap();
        let out = work.path().join(format!("run-{name}"));
        let mut cmd = hostd_run(profile, [&target], &out);
        cmd.args(extra);
        let o = cmd.output().unwrap();
        assert_ok(&o);
        for file in ["manifest.json", "summary.json"] {
            let c = &read_json(&out.join(file))["conditions"];
            assert_eq!(c["wait"], wait, "{name} {file}: {c}");
        }
        let html = std::fs::read_to_string(out.join("report.html")).unwrap();
        let said = if wait == "poll" {
            "POLLED"
        } else {
            "asleep in the kernel"
        };
        assert!(
            html.contains(r#"<p id="conditions-wait">"#) && html.contains(said),
            "{name}: the report does not say how the engine waited"
        );
        assert_eq!(
            text(&o).contains("POLLED"),
            wait == "poll",
            "{name}: {}",
            text(&o)
        );
    }
}
