//! An outside writer: a process the test starts and ends (by its PID) that writes to a file
//! of its own on the target's filesystem with direct I/O while hostd runs, hostd knowing
//! nothing of it — another program sharing the drive.
//!
//! It runs in hostd's own cgroup, so the controller's one limit caps the two together: the
//! device's rate stays what it was and hostd's share of it falls while the outsider writes
//! (a drive's sustained rate shared by everyone writing to it). Why the same cgroup: the
//! limit of a parent cgroup caps its children only on cgroup v2; on v1 (this VM) every
//! cgroup's limit stands alone, so two cgroups would be two devices' worth of rate.
//!
//! The cost is that the cgroup's count then holds both writers, and hostd's own bytes (the
//! truth the analysis is scored against) are that count less the outsider's, which the
//! kernel gives per task: `write_bytes` of `/proc/PID/io` counts what the outsider submitted
//! (before the throttle), its file's size what completed. The bytes the throttle let through
//! lie between, so the outsider's count is taken as their midpoint: within half of what it
//! has in flight (one 1 MiB write, ±0.5 MiB: 0.03 % of a 2 GB run) of the truth while it
//! runs, and exact once it has ended (every submitted byte completes, also on SIGKILL: a
//! direct write in flight is waited for). On the matrix's runs the count at the end equals
//! the bytes of hostd's `files.csv` to the byte.
//!
//! One `dd` with 1 MiB blocks, one write at a time: beside hostd's QD4 × 1 MiB under one
//! 250 MB/s limit it takes about half (2–64 MB files: hostd 255 → 122 MB/s, the outsider
//! 126 MB/s, the 600 → 285); with 4 MiB blocks it took three quarters (255 → 61).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// An outside writer on one device, from the time the target's count (hostd's bytes)
/// reaches `from_bytes` until it reaches `to_bytes`.
#[derive(Debug, Clone, Copy)]
pub struct Outside {
    /// Index of the device.
    pub dev: usize,
    /// Mark on hostd's bytes where the outsider starts.
    pub from_bytes: u64,
    /// Mark on hostd's bytes where it is ended.
    pub to_bytes: u64,
}

/// Most bytes the outsider writes (`dd`'s count of 1 MiB blocks): room for any cell's window
/// on the 16 GB device in memory; it ends at its mark long before.
const MAX_BLOCKS: u64 = 4096;

/// A running outside writer (killed by PID and its file removed when dropped). Its file
/// stays until then: removed at its end mark, ext4's discard of its ~1 GB at the next
/// journal commit held the loop device for 0.2–0.3 s (hostd's own count: 253 → 73 MB/s,
/// then a catch-up at 277–482) right after the recovery, and put it 2.6 % of the bytes late.
pub struct OutsideWriter {
    child: Option<Child>,
    file: PathBuf,
    /// Its bytes once it has ended (the file's size).
    ended: Option<u64>,
}

impl OutsideWriter {
    /// Starts `dd` writing `mount/outside.dat` (direct I/O, 1 MiB blocks), its process in
    /// the cgroup `cgroup_dir` before its first byte: the shell joins it, then becomes `dd`
    /// (same PID, whose `/proc/PID/io` then counts `dd`'s writes).
    pub fn start(cgroup_dir: &Path, mount: &Path) -> OutsideWriter {
        let file = mount.join("outside.dat");
        let child = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "echo $$ > '{}/cgroup.procs' && exec dd if=/dev/zero of='{}' bs=1M count={MAX_BLOCKS} oflag=direct status=none",
                cgroup_dir.display(),
                file.display()
            ))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the outside writer (sh, dd)");
        OutsideWriter {
            child: Some(child),
            file,
            ended: None,
        }
    }

    /// Whether it has been ended ([`OutsideWriter::stop`]).
    pub fn ended(&self) -> bool {
        self.ended.is_some()
    }

    /// What it has completed (its file's size; after its end, its bytes). With
    /// [`OutsideWriter::submitted`], read after the cgroup's count, it bounds the bytes
    /// the throttle let through at that reading (see the module doc).
    pub fn completed(&self) -> u64 {
        self.ended.unwrap_or_else(|| file_size(&self.file))
    }

    /// What it has submitted (`write_bytes` of `/proc/PID/io`); after its end, its bytes.
    pub fn submitted(&self) -> u64 {
        if let Some(b) = self.ended {
            return b;
        }
        let pid = self.child.as_ref().expect("running").id();
        std::fs::read_to_string(format!("/proc/{pid}/io"))
            .ok()
            .and_then(|io| {
                io.lines()
                    .find_map(|l| l.strip_prefix("write_bytes:"))
                    .and_then(|v| v.trim().parse().ok())
            })
            // Between exec and its first write, or gone: what completed.
            .unwrap_or_else(|| self.completed())
    }

    /// Ends it (SIGKILL to its PID, then waits: a direct write in flight completes first)
    /// and returns its bytes: its file's size (the file stays until this is dropped). Panics when it had ended before (out of
    /// room, or its count of blocks): the window would not be what was asked.
    pub fn stop(&mut self) -> u64 {
        let mut child = self.child.take().expect("running");
        if let Ok(Some(status)) = child.try_wait() {
            let out = child
                .wait_with_output()
                .map(|o| o.stderr)
                .unwrap_or_default();
            panic!(
                "the outside writer ended before its mark ({status}): {}",
                String::from_utf8_lossy(&out)
            );
        }
        let _ = child.kill();
        let _ = child.wait();
        let bytes = file_size(&self.file);
        self.ended = Some(bytes);
        bytes
    }
}

impl Drop for OutsideWriter {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_file(&self.file);
    }
}

fn file_size(f: &Path) -> u64 {
    std::fs::metadata(f).map_or(0, |m| m.len())
}
