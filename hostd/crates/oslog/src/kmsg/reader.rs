//! Reads `/dev/kmsg` from the end (what the kernel logs from the run's start on) on a
//! thread until stopped; each record's monotonic µs become host Unix ns through the offset
//! between `CLOCK_REALTIME` and `CLOCK_MONOTONIC` taken at the start.

use super::{logged, parse_record};
use crate::{Collected, LogReader};
use std::io::{ErrorKind, Read as _, Seek as _, SeekFrom};
use std::os::unix::fs::OpenOptionsExt as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The kernel log being read.
pub struct KmsgReader {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Collected>,
}

/// `clock` now, ns.
// time_t and c_long are i32 on 32-bit targets: the conversions are not useless there.
#[allow(clippy::useless_conversion)]
fn clock_ns(clock: libc::clockid_t) -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime fills the timespec it is given.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    i64::from(ts.tv_sec) * 1_000_000_000 + i64::from(ts.tv_nsec)
}

/// Opens `/dev/kmsg` at its end and starts the reading thread; `Err` says why it cannot.
pub fn start() -> Result<Box<dyn LogReader>, String> {
    let path = "/dev/kmsg";
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.kind() {
            ErrorKind::PermissionDenied => format!(
                "cannot read the kernel log ({path}: permission denied; run as root or set kernel.dmesg_restrict=0)"
            ),
            _ => format!("cannot read the kernel log ({path}: {e})"),
        })?;
    file.seek(SeekFrom::End(0))
        .map_err(|e| format!("cannot read the kernel log ({path}: seek to its end: {e})"))?;
    let boot_to_unix_ns = clock_ns(libc::CLOCK_REALTIME) - clock_ns(libc::CLOCK_MONOTONIC);
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let thread = std::thread::Builder::new()
        .name("os-log".into())
        .spawn(move || {
            let mut out = Collected::default();
            // One record per read; a record is at most about 8 KiB.
            let mut buf = vec![0u8; 16 * 1024];
            loop {
                match file.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        let raw = String::from_utf8_lossy(&buf[..n]);
                        if let Some(l) =
                            parse_record(&raw).and_then(|r| logged(&r, boot_to_unix_ns))
                        {
                            out.lines.push(l);
                        }
                    }
                    // Overwritten before we read them: the next read goes on after them.
                    Err(e) if e.kind() == ErrorKind::BrokenPipe => {}
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {
                        if flag.load(Ordering::Relaxed) {
                            break;
                        }
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(e) => {
                        out.note = Some(format!("the kernel log stopped being read ({path}: {e})"));
                        break;
                    }
                }
            }
            out
        })
        .map_err(|e| format!("cannot start the kernel log reader: {e}"))?;
    Ok(Box::new(KmsgReader { stop, thread }))
}

impl LogReader for KmsgReader {
    fn stop(self: Box<Self>) -> Collected {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap_or_else(|_| Collected {
            lines: Vec::new(),
            note: Some("the kernel log reader panicked".into()),
        })
    }
}
