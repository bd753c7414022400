//! One `hostd run --profile quick --probe sim` writing to a private influxd, its drive
//! answering SMART through a smartctl that replays a recorded answer, traced with
//! `strace`: every file of the run directory is written by exactly one open (an atomic
//! temporary-and-rename counts as one; `manifest.json` is written twice, at the start and
//! with the final status). What the run streams as it goes is read back once at its end,
//! as `hostd analyze` reads it, so that the run's memory does not grow with its length
//! (issue 24): `files.csv`, `files-probe.csv`, `intervals.csv`, `counters.csv`,
//! `drive_temp.csv`, `drive_log.csv`, `probe-link.jsonl` and the latency logs (exactly
//! once), and the probe record in `probe/` (a segment's sample count, then its samples; a
//! levels file's 10 ms bins). The run opens no other file of its directory for reading:
//! from there its records flow in memory from the part that made them to the parts after
//! it (issue 25).
//!
//! `spool/` is left out: it is InfluxDB's outage queue, written and read back by design
//! while the server is away.
#![cfg(unix)] // strace, and the recorded smartctl is a shell script

use hostd_influx::testing::InfluxServer;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

mod common;
use common::{assert_ok, disk_target, hostd_run, replay_smartctl, to_influx};

/// How often the run opened one file of its directory.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Opens {
    /// Opens for writing, and renames onto the name (atomic writes).
    writes: usize,
    /// Opens for reading only.
    reads: usize,
}

/// The first two quoted strings of a traced call (its path arguments).
fn quoted(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while out.len() < 2 {
        let Some(a) = rest.find('"') else { break };
        let Some(b) = rest[a + 1..].find('"') else {
            break;
        };
        out.push(rest[a + 1..a + 1 + b].to_string());
        rest = &rest[a + 2 + b..];
    }
    out
}

/// Tallies the opens and renames of `strace -f` output `trace` under `dir`, by file name
/// relative to `dir` (temporary `.NAME.tmp` files of atomic writes are counted as their
/// rename onto `NAME`; directories and failed calls are not counted).
fn tally(trace: &str, dir: &Path) -> BTreeMap<String, Opens> {
    let dir = format!("{}/", dir.display());
    let mut files: BTreeMap<String, Opens> = BTreeMap::new();
    for line in trace.lines() {
        // `<... openat resumed>) = 3` lines carry no path; their call line did.
        let failed = line.contains("= -1 ");
        if failed || line.contains("resumed>") {
            continue;
        }
        let paths = quoted(line);
        let rel = |p: &str| p.strip_prefix(&dir).map(str::to_owned);
        let is_tmp = |r: &str| {
            r.rsplit('/')
                .next()
                .is_some_and(|n| n.starts_with('.') && n.ends_with(".tmp"))
        };
        if line.contains("rename") {
            if let Some(to) = paths.get(1).and_then(|p| rel(p)) {
                files.entry(to).or_default().writes += 1;
            }
            continue;
        }
        if !(line.contains("open(") || line.contains("openat(") || line.contains("creat(")) {
            continue;
        }
        let Some(r) = paths.first().and_then(|p| rel(p)) else {
            continue;
        };
        if r.is_empty() || is_tmp(&r) || line.contains("O_DIRECTORY") || r.starts_with("spool") {
            continue;
        }
        let e = files.entry(r).or_default();
        if line.contains("creat(")
            || line.contains("O_WRONLY")
            || line.contains("O_RDWR")
            || line.contains("O_CREAT")
        {
            e.writes += 1;
        } else {
            e.reads += 1;
        }
    }
    files
}

#[test]
fn tally_counts_writes_reads_and_renames() {
    let dir = Path::new("/r");
    let trace = r#"12 openat(AT_FDCWD, "/r/files.csv", O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0666) = 3
12 openat(AT_FDCWD, "/r/.summary.json.tmp", O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC, 0666) = 4
12 rename("/r/.summary.json.tmp", "/r/summary.json") = 0
13 openat(AT_FDCWD, "/r/files.csv", O_RDONLY|O_CLOEXEC <unfinished ...>
13 <... openat resumed>) = 5
13 openat(AT_FDCWD, "/r/nothing.csv", O_RDONLY|O_CLOEXEC) = -1 ENOENT (No such file or directory)
13 openat(AT_FDCWD, "/r", O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_DIRECTORY) = 6
13 openat(AT_FDCWD, "/etc/hosts", O_RDONLY|O_CLOEXEC) = 7
"#;
    let t = tally(trace, dir);
    assert_eq!(
        t["files.csv"],
        Opens {
            writes: 1,
            reads: 1
        }
    );
    assert_eq!(
        t["summary.json"],
        Opens {
            writes: 1,
            reads: 0
        }
    );
    assert_eq!(t.len(), 2, "{t:?}");
}

#[test]
fn a_probed_run_to_influxdb_writes_each_run_file_once_and_reads_none() {
    let server = InfluxServer::start().expect("private influxd (run `just influx-build` first)");
    let (work, target, run) = disk_target();
    let trace_path = work.path().join("run.strace");
    let mut run_cmd = hostd_run("quick", [&target], &run);
    run_cmd.args(["--probe", "sim"]);
    #[cfg(unix)]
    run_cmd.env(
        "THROTTLESCOPE_SMARTCTL",
        replay_smartctl(work.path(), "nvme-direct.json"),
    );
    to_influx(&mut run_cmd, &server);
    let mut cmd = Command::new("strace");
    cmd.args([
        "-f",
        "-qq",
        "-e",
        "trace=openat,open,creat,rename,renameat2",
        "-o",
    ])
    .arg(&trace_path)
    .arg(run_cmd.get_program())
    .args(run_cmd.get_args());
    for (k, v) in run_cmd.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let out = cmd.output().expect("strace (scripts/setup.sh installs it)");
    assert_ok(&out);
    let trace = std::fs::read_to_string(&trace_path).unwrap();
    let files = tally(&trace, &run);

    for name in [
        "manifest.json",
        "files.csv",
        "files-probe.csv",
        "intervals.csv",
        "summary.json",
        "events.json",
        "report.html",
        "probe/segment-000000.parquet",
        "probe/levels-000000.parquet",
        "probe-link.jsonl",
        "counters.csv",
        "drive_temp.csv",
        "drive_log.csv",
    ] {
        assert!(files.contains_key(name), "{name} not written: {files:#?}");
    }
    // Streamed during the run, read back once at its end (issue 24's bounded memory).
    let read_once = [
        "files.csv",
        "intervals.csv",
        // Appended by the probe part as each file's figures settle, and its link events.
        "files-probe.csv",
        "probe-link.jsonl",
        "counters.csv",
        "drive_temp.csv",
        "drive_log.csv",
        hostd_records::latency::FILES_LOG,
        hostd_records::latency::INTERVALS_LOG,
    ];
    let mut wrong = Vec::new();
    for (name, o) in &files {
        let allowed = if name == "manifest.json" { 2 } else { 1 };
        // Exactly once for the streamed records; at most twice for a probe segment (its
        // sample count, then its samples), once for a levels file (its 10 ms bins).
        let (reads, at_most) = match name {
            n if read_once.contains(&n.as_str()) => (1, false),
            n if n.starts_with("probe/segment-") => (2, true),
            n if n.starts_with("probe/levels-") => (1, true),
            _ => (0, false),
        };
        let bad_reads = if at_most {
            o.reads > reads
        } else {
            o.reads != reads
        };
        if o.writes != allowed || bad_reads {
            let want = if at_most { "at most " } else { "" };
            wrong.push(format!(
                "{name}: {} write(s) (want {allowed}), {} read(s) (want {want}{reads})",
                o.writes, o.reads
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "run directory files written more than once or read back:\n{}",
        wrong.join("\n")
    );
}
