//! `hostd bench-job`, the job `just bench-io` runs against fio: a write and
//! its verified read-back with real direct I/O, waiting asleep (the default)
//! or polling (`--poll`); and a command whose stdout reader leaves early.
#![cfg(unix)] // io_uring and a pipe(2) as stdout

mod common;

use common::{assert_ok, disk_tempdir, hostd};
use serde_json::Value;
use std::os::unix::io::FromRawFd;
use std::path::Path;
use std::process::Stdio;

/// `hostd bench-job --json` with `args` on `file`, parsed.
fn bench_job(file: &Path, args: &[&str]) -> Value {
    let o = hostd()
        .args(["bench-job", "--json", "--engine", "io_uring", "--file"])
        .arg(file)
        .args(["--size", "4M", "--bs", "4k", "--qd", "1"])
        .args(args)
        .output()
        .unwrap();
    assert_ok(&o);
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn a_job_waits_asleep_as_fio_by_default_polls_only_when_told_and_times_every_io() {
    let dir = disk_tempdir();
    let file = dir.path().join("bench.dat");
    let w = bench_job(&file, &["--rw", "write"]);
    assert_eq!(w["bytes"], 4 << 20);
    for poll in [false, true] {
        let args: &[&str] = if poll {
            &["--rw", "randread", "--poll"]
        } else {
            &["--rw", "randread"]
        };
        let r = bench_job(&file, args);
        assert_eq!(r["polling"], poll, "--poll is recorded: {r}");
        assert_eq!(r["bytes"], 4 << 20, "{poll}");
        assert_eq!(r["corrupt_blocks"], 0, "{poll}");
        assert_eq!(
            r["verified_blocks"], 1024,
            "{poll}: every 4 KiB block checked"
        );
        // QD1: one wait per I/O, each counted by how it ended.
        let waits = &r["waits"];
        let n = |k: &str| waits[k].as_u64().unwrap();
        assert_eq!(n("ready") + n("spun") + n("slept"), 1024, "{waits}");
        if !poll {
            assert_eq!(
                (n("spun"), n("polled")),
                (0, 0),
                "the default wait never spins: {waits}"
            );
        } else {
            assert!(n("polled") > 0, "--poll polled: {waits}");
        }
        let l = &r["latency"];
        assert_eq!(l["count"], 1024, "{poll}: one latency per I/O");
        let p50 = l["p50_ns"].as_u64().unwrap();
        assert!(
            p50 > 0 && p50 <= l["max_ns"].as_u64().unwrap(),
            "{poll}: {l}"
        );
    }
}

/// The write end of a pipe whose reader has already gone, as a child's
/// stdout: every write the child makes fails with a broken pipe.
fn closed_stdout() -> Stdio {
    let mut fds = [0; 2];
    // SAFETY: fds has room for the two descriptors pipe() returns.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both were just opened; each is owned once, the reader dropped now.
    unsafe {
        drop(std::fs::File::from_raw_fd(fds[0]));
        Stdio::from(std::fs::File::from_raw_fd(fds[1]))
    }
}

#[test]
fn a_reader_that_leaves_early_neither_stops_nor_crashes_a_command() {
    // `hostd … | head -1`: the job still runs to its end and exits as it
    // would have, without a panic.
    let dir = disk_tempdir();
    let file = dir.path().join("bench.dat");
    for args in [
        vec!["profiles"],
        vec!["bench-job", "--rw", "write", "--size", "1M", "--file"],
    ] {
        let mut cmd = hostd();
        cmd.args(&args);
        if args[0] == "bench-job" {
            cmd.arg(&file);
        }
        let o = cmd.stdout(closed_stdout()).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{args:?}: {:?} {err}", o.status);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    assert_eq!(
        std::fs::metadata(&file).unwrap().len(),
        1 << 20,
        "the job ran"
    );
}
